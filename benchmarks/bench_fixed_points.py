"""Benchmark of the fixed-point search: the default damped Newton against FixedPointFinder's joint
scheme, the other per-candidate methods, and a minimal batched Newton written here.

Cases (float64, constant input u* = 0, ``--n-inits`` initial states, 1,024 by default):

* ``flipflop16`` and ``flipflop128`` — ``LeakyRNN(3, n, 3)`` (tanh, alpha 1) trained on the 3-bit
  flip-flop (``neurodyn.train``, lr 1e-2, batch 64, stopped at held-out accuracy 1.0); initial
  states from noise-free task rollouts plus N(0, 0.05²) noise;
* ``chaotic128`` — an untrained ``LeakyRNN(0, 128, 1, gain=1.5)``; initial states from free rollouts.

Two timings per method, each the median of ``--repeats`` interleaved runs, as wall time and as
process CPU time (``*_cpu_seconds``: one thread, so near the wall time of a quiet machine and less
sensitive to other jobs on a shared one):

* ``search`` — the minimisation alone (``METHODS[name]``, with the closed-form Jacobians that
  ``find_fixed_points`` gives the Newton-class methods), from which the candidates converged to
  q < 1e-10 are counted;
* ``call`` — the whole ``find_fixed_points`` call (search, outliers, de-duplication, Newton
  polish, Jacobians and spectra of the unique points), from which the unique converged points and
  their stability are taken; the points found by each method are matched against ``joint``'s
  (within 1e-6 in every unit).

``reference`` is a minimal batched Newton solver (closed-form Jacobian, undamped steps on every
candidate until all converge or 50 iterations) written below; the goals are ``joint / newton ≥ 10``
(call) and ``newton / reference ≤ 2`` (search). Slow points (not converged) are listed apart with
their q. Last, for the 128-unit network (process CPU time): the stability labels of 4,096 states by
``compute_stability(..., labels_only=True)`` (goal ≤ 2 CPU s), checked label for label against the
full-spectrum path timed beside it, the LAPACK floor of any dense eigenvalue method on the same
Jacobians (their Hessenberg reduction), the previous path (eigenvalues with eigenvectors), and the
Jacobians and spectra of the unique points of its search.

FixedPointFinder itself (Golub & Sussillo 2018, its PyTorch version ``FixedPointFinderTorch``) joins
the interleaved runs with ``--fixedpointfinder DIR``, a checkout of
https://github.com/mattgolub/fixed-point-finder (nothing of it is part of neurodyn). It runs on a
``torch.nn.RNN`` holding the network's weights (the same map, checked to round-off before timing;
tanh networks with ``alpha = 1`` only), from the same initial states, with its own defaults (joint
Adam, outlier and duplicate removal, autograd Jacobians and ``np.linalg.eig`` of the unique points),
once in its default float32 (``fixedpointfinder``) and once in float64 (``fixedpointfinder_float64``,
the precision of the other contenders). Its unique points are matched against newton's.

Run from the repository root (one thread keeps runs comparable on a shared machine):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_fixed_points.py [--quick] [--fixedpointfinder DIR]

Writes a JSON file (``--out``, default ``benchmarks/results/fixed_points.json``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from _record import bench_parser

from neurodyn import __version__, train
from neurodyn.analysis import compute_stability, find_fixed_points, jacobians
from neurodyn.analysis.fixed_points import _find
from neurodyn.analysis.fixed_points import _init as fp_init
from neurodyn.analysis.fixed_points._newton import METHODS
from neurodyn.analysis.fixed_points._search import SearchSettings
from neurodyn.analysis.fixed_points._stability import MAX_SQUARINGS, certify_stable, power_jacobian, spectra
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop

SETTINGS = dict(tol_q=1e-12, tol_dq=1e-20, max_iters=5000, lr_init=1.0)
CONVERGED_Q = 1e-10
MATCH_TOL = 1e-6


def flipflop_network(n_units: int, seed: int, max_iters: int):
    task = FlipFlop(n_bits=3, n_steps=64, p_pulse=0.1)
    result = train(LeakyRNN(3, n_units, 3, alpha=1.0, seed=seed), task, n_iterations=max_iters,
                   batch_size=64, lr=1e-2, eval_every=25, target_metric=("accuracy", 1.0),
                   progress=False, seed=seed)
    shell = result.model.double().eval().requires_grad_(False)
    pool = fp_init.task_states(shell, task, seed, "cpu", torch.float64).reshape(-1, n_units)
    return shell, pool, result.config["iterations_run"]


def chaotic_network(n_units: int, seed: int, n_inits: int):
    shell = LeakyRNN(0, n_units, 1, gain=1.5, seed=seed).double().eval().requires_grad_(False)
    pool = fp_init.free_rollout_states(shell.step, n_units, None, n_inits, seed, "cpu", torch.float64)
    return shell, pool, 0


def reference_newton(model, x0: torch.Tensor, tol_q: float = 1e-12, max_iters: int = 50) -> torch.Tensor:
    """Undamped batched Newton on F(h) = (1 - a) h + a tanh(W h + b), every candidate at once."""
    p = model.params()
    w, b, a = p.w_rec.double(), p.b.double(), float(p.alpha)
    eye = torch.eye(w.shape[0], dtype=torch.float64)
    x = x0.clone()
    for _ in range(max_iters):
        t = torch.tanh(x @ w.T + b)
        r = (1 - a) * x + a * t - x
        if bool((0.5 * (r * r).sum(-1) < tol_q).all()):
            break
        jac = (1 - a) * eye + a * (1 - t * t)[:, :, None] * w
        x = x - torch.linalg.solve(jac - eye, r.unsqueeze(-1)).squeeze(-1)
    return x


FPF_DTYPES = {"fixedpointfinder": "float32", "fixedpointfinder_float64": "float64"}


def fixedpointfinder_runner(model, folder: str | None):
    """A function ``(contender, x0) -> (seconds, unique states (point, state), stable mask)`` running
    FixedPointFinder's ``find_fixed_points`` on ``model``'s map, or None without ``folder``.

    The network becomes a one-layer ``torch.nn.RNN`` (``weight_hh = W_rec``, ``weight_ih = W_in``,
    ``bias_ih = b``, ``bias_hh = 0``; one zero input column for a network without inputs), which
    steps ``h ← tanh(W_rec h + W_in u + b)``: the map of a tanh ``LeakyRNN`` with ``alpha = 1``.
    Raises ValueError for any other network and when the two maps differ by more than 1e-12."""
    if folder is None:
        return None
    p = model.params()
    if p.activation != "tanh" or float(p.alpha) != 1.0:
        raise ValueError("--fixedpointfinder compares tanh LeakyRNNs with alpha = 1 only")
    sys.path.insert(0, str(Path(folder).resolve()))
    try:
        from FixedPointFinderTorch import FixedPointFinderTorch
    except ImportError as err:
        raise SystemExit(f"--fixedpointfinder {folder}: no FixedPointFinderTorch.py there ({err}); clone "
                         "https://github.com/mattgolub/fixed-point-finder and pass its folder") from None
    n_in = max(1, model.n_inputs)
    rnns = {}
    for name, dtype in FPF_DTYPES.items():
        rnn = torch.nn.RNN(n_in, p.w_rec.shape[0], batch_first=True, nonlinearity="tanh")
        rnn = rnn.to(getattr(torch, dtype)).requires_grad_(False)
        rnn.weight_hh_l0.copy_(p.w_rec)
        rnn.weight_ih_l0.zero_()
        rnn.weight_ih_l0[:, :model.n_inputs] = p.w_in
        rnn.bias_ih_l0.copy_(p.b)
        rnn.bias_hh_l0.zero_()
        rnns[name] = rnn
    h = torch.randn(8, p.w_rec.shape[0], dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _, h_next = rnns["fixedpointfinder_float64"](torch.zeros(8, 1, n_in, dtype=torch.float64), h[None])
    u = None if model.n_inputs == 0 else h.new_zeros(8, model.n_inputs)
    gap = float((h_next[0] - model.step(h, u)).abs().max())
    if gap > 1e-12:
        raise ValueError(f"the nn.RNN built for FixedPointFinder differs from the network's map by {gap:.3g}")

    def run(name: str, x0: np.ndarray):
        dtype = FPF_DTYPES[name]
        fpf = FixedPointFinderTorch(rnns[name], dtype=dtype, verbose=False)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            t0, c0 = time.perf_counter(), time.process_time()
            unique, _ = fpf.find_fixed_points(x0.astype(dtype), np.zeros((1, n_in), dtype=dtype))
            seconds = (time.perf_counter() - t0, time.process_time() - c0)
        stable = np.asarray(unique.is_stable, dtype=bool) if unique.n else np.zeros(0, dtype=bool)
        states, q = (np.asarray(a, dtype=np.float64) for a in (unique.xstar, unique.qstar))
        return seconds, states, q, stable

    return run


def speed(model, x: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return (0.5 * (model.step(x, None if model.n_inputs == 0 else x.new_zeros(x.shape[0], model.n_inputs))
                       - x).pow(2).sum(-1)).numpy()


def run_case(name: str, model, x0: torch.Tensor, methods: list[str], repeats: int, fpf=None) -> dict:
    n_state = x0.shape[1]
    u = None if model.n_inputs == 0 else torch.zeros(1, model.n_inputs, dtype=torch.float64)

    def G(h):
        return model.step(h, None if u is None else u.expand(h.shape[0], -1))

    jac1 = _find._step_jacobian(model, G, None if u is None else u[0])
    chunk = _find._plan("newton", x0.shape[0], n_state, 1, _find.MAX_MEMORY)
    extra = {"newton": dict(jacobian=power_jacobian(G, 1, jac1), tol_unique=1e-3, chunk_size=chunk),
             "levenberg_marquardt": dict(jacobian=power_jacobian(G, 1, jac1))}
    search = {m: [] for m in [*methods, "reference"]}
    call = {m: [] for m in methods}
    search_cpu = {m: [] for m in search}
    call_cpu = {m: [] for m in call}
    found, results = {}, {}
    peers = list(FPF_DTYPES) if fpf is not None else []
    peer_times = {m: [] for m in peers}
    peer_cpu = {m: [] for m in peers}
    peer_out = {}
    for _ in range(repeats):  # interleaved
        for m in [*methods, "reference"]:
            t0, c0 = time.perf_counter(), time.process_time()
            if m == "reference":
                xs = reference_newton(model, x0)
                found[m] = speed(model, xs)
            else:
                out = METHODS[m](G, x0, SearchSettings(**SETTINGS), **extra.get(m, {}))
                found[m] = out.q.numpy()
            search[m].append(time.perf_counter() - t0)
            search_cpu[m].append(time.process_time() - c0)
        for m in methods:
            t0, c0 = time.perf_counter(), time.process_time()
            results[m] = find_fixed_points(model, initial_states=x0.numpy(), n_inits=x0.shape[0], method=m)
            call[m].append(time.perf_counter() - t0)
            call_cpu[m].append(time.process_time() - c0)
        for m in peers:
            (wall, cpu), states, q, stable = fpf(m, x0.numpy())
            peer_times[m].append(wall)
            peer_cpu[m].append(cpu)
            peer_out[m] = (states, q, stable)
    rows = []
    ref_points = results["joint"].fixed_points().states if "joint" in results else None
    for m in [*methods, "reference"]:
        row = {"method": m, "search_seconds": float(np.median(search[m])),
               "search_cpu_seconds": float(np.median(search_cpu[m])),
               "converged_candidates": int((found[m] < CONVERGED_Q).sum())}
        if m in results:
            good = results[m].fixed_points()
            row["call_seconds"] = float(np.median(call[m]))
            row["call_cpu_seconds"] = float(np.median(call_cpu[m]))
            row["unique_points"] = int(good.n_points)
            row["stability"] = {s: int((good.stability == s).sum()) for s in ("stable", "saddle", "unstable",
                                                                             "marginal")}
            row["slow_points"] = int((~results[m].converged).sum())
            row["slow_point_q"] = sorted(float(q) for q in results[m].q[~results[m].converged])
            if ref_points is not None:
                row["matches_joint"] = _match(good.states, ref_points)
        rows.append(row)
    newton_points = results["newton"].fixed_points().states if "newton" in results else None
    for m in peers:
        states, q, stable = peer_out[m]
        converged = q < CONVERGED_Q
        row = {"method": m, "call_seconds": float(np.median(peer_times[m])),
               "call_cpu_seconds": float(np.median(peer_cpu[m])), "dtype": FPF_DTYPES[m],
               "unique_points": int(len(states)), "unique_points_q_below_1e-10": int(converged.sum()),
               "stability": {"stable": int(stable.sum()), "not_stable": int((~stable).sum())},
               "q": sorted(float(v) for v in q)}
        if ref_points is not None:
            row["matches_joint"] = _match(states, ref_points)
        if newton_points is not None:  # of its points with q < 1e-10, how many newton's contain
            hit = _match(newton_points, states[converged])
            row["found_by_newton"] = {"found": hit["found_of_joint"], "of": hit["joint"],
                                      "newton_extra": hit["extra"]}
        rows.append(row)
    return {"case": name, "n_units": n_state, "n_inits": int(x0.shape[0]), "results": rows}


def _match(points: np.ndarray, reference: np.ndarray) -> dict:
    """How many of ``reference``'s points this set contains, and how many it adds."""
    if len(points) == 0 or len(reference) == 0:
        return {"found_of_joint": 0, "joint": len(reference), "extra": len(points)}
    d = np.abs(points[:, None] - reference[None]).max(-1)
    return {"found_of_joint": int((d.min(0) < MATCH_TOL).sum()), "joint": len(reference),
            "extra": int((d.min(1) >= MATCH_TOL).sum())}


def stability_cost(model, pool: torch.Tensor, n_states: int, seed: int, n_sub: int = 512) -> dict:
    """Process CPU seconds for the stability labels of ``n_states`` distinct states.

    ``compute_stability(..., labels_only=True)`` (closed-form Jacobians, squarings that prove most
    states stable, eigenvalues without eigenvectors for the rest) in float64 and float32 is the
    claim (``labels_only_*``), checked label for label against the full-spectrum path timed beside
    it (``compute_stability_*``, eigenvalues of every state); ``jacobian`` is the Jacobian part
    alone. ``certified`` gives, for k = 0..6 squarings, how many states ``certify_stable`` proves
    stable and its CPU seconds. Against these: the LAPACK floor of any dense eigenvalue method, the
    Hessenberg reduction (``?gehrd``) of the same Jacobians, and the previous path (``geev`` with
    eigenvectors, as ``find_fixed_points`` does for its few unique points), timed on ``n_sub``
    states and scaled to ``n_states``.
    """
    from scipy.linalg import lapack
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(seed)
    x = pool[rng.choice(pool.shape[0], n_states, replace=pool.shape[0] < n_states)]
    u0 = torch.zeros(model.n_inputs, dtype=torch.float64)
    out = {"n_states": n_states, "goal_cpu_seconds": 2.0}
    t0 = time.process_time()
    jac = jacobians(model, x, u0)
    out["jacobian_cpu_seconds"] = time.process_time() - t0
    compute_stability(model, x[:2], u0, labels_only=True)  # imports and first calls, not timed
    for name, xs in (("float64", x), ("float32", x.float())):
        t0 = time.process_time()
        fast = compute_stability(model, xs, u0, labels_only=True)
        out[f"labels_only_{name}_cpu_seconds"] = time.process_time() - t0
        out[f"labels_only_{name}_eigvals_states"] = int(np.isfinite(fast.spectral_radius.values).sum())
        t0 = time.process_time()
        ds = compute_stability(model, xs, u0)
        out[f"compute_stability_{name}_cpu_seconds"] = time.process_time() - t0
        out[f"stable_{name}"] = int((ds.stability == "stable").sum())
        out[f"labels_agree_{name}"] = bool((fast.stability.values == ds.stability.values).all()
                                           and (fast.n_unstable.values == ds.n_unstable.values).all())
    out["certified"] = []
    for k in range(MAX_SQUARINGS + 1):
        row = {"squarings": k}
        for name, j in (("float64", jac), ("float32", jac.float())):
            t0 = time.process_time()
            ok, _ = certify_stable(j, 1e-3, max_squarings=k)
            row[f"{name}_cpu_seconds"] = time.process_time() - t0
            row[name] = int(ok.sum())
        out["certified"].append(row)
    jn = jac.numpy()
    with threadpool_limits(limits=1, user_api="blas"):
        for name, arr, fn in (("float64", jn, lapack.dgehrd),
                              ("float32", jn.astype(np.float32), lapack.sgehrd)):
            t0 = time.process_time()
            for a in arr:
                fn(a)
            out[f"hessenberg_floor_{name}_cpu_seconds"] = time.process_time() - t0
    t0 = time.process_time()
    spectra(jn[:n_sub])
    out["eig_with_vectors_cpu_seconds_scaled"] = (time.process_time() - t0) * n_states / n_sub
    out["goal_met"] = out["labels_only_float32_cpu_seconds"] <= 2.0
    out["goal_met_float64"] = out["labels_only_float64_cpu_seconds"] <= 2.0
    out["goal_possible"] = out["hessenberg_floor_float32_cpu_seconds"] <= 2.0  # by a dense eigensolver
    return out


def run(args) -> dict:
    torch.manual_seed(0)
    load_start = os.getloadavg()
    cases = []
    for name in args.cases:
        t0 = time.perf_counter()
        if name.startswith("flipflop"):
            n = int(name[len("flipflop"):])
            model, pool, iters = flipflop_network(n, args.seed, args.train_iters)
        else:
            n = int(name[len("chaotic"):])
            model, pool, iters = chaotic_network(n, args.seed, args.n_inits)
        x0 = torch.as_tensor(fp_init.sample_states(pool.numpy() if isinstance(pool, torch.Tensor) else pool,
                                                   args.n_inits, 0.05 if name.startswith("flipflop") else 0.0,
                                                   args.seed))
        print(f"{name}: {n} units, trained {iters} iterations ({time.perf_counter() - t0:.0f} s)", flush=True)
        fpf = fixedpointfinder_runner(model, args.fixedpointfinder)
        case = run_case(name, model, x0, args.methods, args.repeats, fpf)
        case["train_iterations"] = iters
        if n >= 128 and name.startswith("flipflop") and not args.no_stability:
            pool_t = torch.as_tensor(np.asarray(pool))
            case["stability_4096"] = stability_cost(model, pool_t, 4096, args.seed)
            res = find_fixed_points(model, initial_states=x0.numpy(), n_inits=x0.shape[0])
            t0 = time.process_time()
            u0 = torch.zeros(model.n_inputs, dtype=torch.float64)
            jac = jacobians(model, torch.as_tensor(res.states), u0)
            spectra(jac.numpy())
            case["stability_unique_points"] = {"n_points": int(len(res.states)),
                                               "cpu_seconds": time.process_time() - t0}
        print_case(case)
        cases.append(case)
    return {"benchmark": "fixed_points", "settings": SETTINGS, "cases": cases, "repeats": args.repeats,
            "neurodyn_version": __version__, "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
            "load_average_at_start": load_start, "load_average_at_end": os.getloadavg()}


def print_case(case: dict) -> None:
    rows = {r["method"]: r for r in case["results"]}
    print(f"\n{case['case']}: {case['n_units']} units, {case['n_inits']} initial states")
    print(f"{'method':<26}{'search s':>10}{'call s':>9}{'conv. cand.':>13}{'unique':>8}{'stable':>8}"
          f"{'saddle':>8}{'slow':>6}{'joint pts found':>17}")
    for m, r in rows.items():
        st = r.get("stability", {})
        match = r.get("matches_joint")
        found = f"{match['found_of_joint']}/{match['joint']} +{match['extra']}" if match else "-"
        call = f"{r['call_seconds']:9.2f}" if "call_seconds" in r else f"{'-':>9}"
        search = f"{r['search_seconds']:10.2f}" if "search_seconds" in r else f"{'-':>10}"
        saddle = st.get("saddle", st.get("not_stable", "-"))  # FixedPointFinder: stable or not
        print(f"{m:<26}{search}{call}{r.get('converged_candidates', '-'):>13}"
              f"{r.get('unique_points', '-'):>8}{st.get('stable', '-'):>8}{saddle:>8}"
              f"{r.get('slow_points', '-'):>6}{found:>17}")
    if "newton" in rows and "joint" in rows:
        j, n = rows["joint"], rows["newton"]
        print(f"joint / newton, whole call: {j['call_seconds'] / n['call_seconds']:.1f}x"
              f"  (search only: {j['search_seconds'] / n['search_seconds']:.1f}x)")
    for m in FPF_DTYPES:
        if m in rows and "newton" in rows:
            f, n = rows[m], rows["newton"]
            hit = f["found_by_newton"]
            print(f"{m} / newton, whole call: {f['call_seconds'] / n['call_seconds']:.1f}x "
                  f"(CPU {f['call_cpu_seconds'] / n['call_cpu_seconds']:.1f}x); newton finds "
                  f"{hit['found']} of its {hit['of']} points with q < 1e-10 (+{hit['newton_extra']})")
    if "newton" in rows:
        ratio = rows["newton"]["search_seconds"] / rows["reference"]["search_seconds"]
        print(f"newton / reference, search: {ratio:.2f}x")
    if "search_cpu_seconds" in rows.get("newton", {}):
        n = rows["newton"]
        ref_cpu = rows["reference"]["search_cpu_seconds"]
        cpu = [f"newton / reference, search: {n['search_cpu_seconds'] / ref_cpu:.2f}x"]
        if "joint" in rows and "call_cpu_seconds" in n:
            j = rows["joint"]
            cpu.append(f"joint / newton, whole call: {j['call_cpu_seconds'] / n['call_cpu_seconds']:.1f}x, "
                       f"search: {j['search_cpu_seconds'] / n['search_cpu_seconds']:.1f}x")
        print("process CPU time: " + "; ".join(cpu))
    if "stability_4096" in case:
        s = case["stability_4096"]
        f64, f32 = (f"{s[f'labels_only_{n}_cpu_seconds']:.2f} ({n}, eigenvalues of "
                    f"{s[f'labels_only_{n}_eigvals_states']} states)" for n in ("float64", "float32"))
        print(f"Stability labels of {s['n_states']} states (CPU s), labels_only=True: {f64}, {f32}; full "
              f"spectrum {s['compute_stability_float64_cpu_seconds']:.2f} / "
              f"{s['compute_stability_float32_cpu_seconds']:.2f}, of which Jacobians "
              f"{s['jacobian_cpu_seconds']:.2f}; Hessenberg floor "
              f"{s['hessenberg_floor_float64_cpu_seconds']:.2f} / "
              f"{s['hessenberg_floor_float32_cpu_seconds']:.2f}; "
              f"same labels: {s['labels_agree_float64']} / "
              f"{s['labels_agree_float32']}; goal 2 s met: {s['goal_met_float64']} / {s['goal_met']}")
        print("certified stable after k squarings (float64 / float32 Jacobians, CPU s): " + ", ".join(
            f"k={r['squarings']}: {r['float64']} ({r['float64_cpu_seconds']:.2f}) / {r['float32']} "
            f"({r['float32_cpu_seconds']:.2f})" for r in s["certified"]))
        u = case["stability_unique_points"]
        print(f"Jacobians and spectra of the search's {u['n_points']} unique points: "
              f"{u['cpu_seconds']:.3f} CPU s")


def main() -> None:
    parser = bench_parser(__doc__, quick="flipflop16 only, 256 states, one repeat",
                          repeats=(3, "interleaved runs per method (median)"))
    parser.add_argument("--cases", nargs="+", default=["flipflop16", "flipflop128", "chaotic128"])
    parser.add_argument("--n-inits", type=int, default=1024)
    parser.add_argument("--train-iters", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+",
                        default=["newton", "joint", "levenberg_marquardt", "gradient"])
    parser.add_argument("--no-stability", action="store_true",
                        help="skip the stability timings of the 128-unit flip-flop case")
    parser.add_argument("--fixedpointfinder", metavar="DIR", default=None,
                        help="a checkout of github.com/mattgolub/fixed-point-finder: time "
                             "FixedPointFinderTorch beside the other methods")
    parser.add_argument("--out", default="benchmarks/results/fixed_points.json")
    parser.add_argument("--table", default=None, help="only print the tables of a saved JSON file")
    args = parser.parse_args()
    if args.table:
        for case in json.loads(Path(args.table).read_text())["cases"]:
            print_case(case)
        return
    if args.quick:
        args.cases, args.n_inits, args.repeats = ["flipflop16"], 256, 1
    report = run(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
