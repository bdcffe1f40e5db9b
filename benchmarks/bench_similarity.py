"""Wall times of pairwise similarity matrices against per-pair computation and peers; DSA search quality.

Usage: python benchmarks/bench_similarity.py [--small] [--device cpu|cuda] [--reference-pairs 3]
       [--only rsa,dsa_search,dsa,shape] [--out benchmarks/results/similarity.json]

* Pairwise RSA (Spearman on Euclidean RDMs) over 50 networks of 500 conditions x 64 units:
  ``pairwise_distances(metric="rsa")`` against per-pair ``compare_rdms(rdm(X), rdm(Y))`` calls (measured
  on a few pairs, extrapolated) and, when ``rsatoolbox`` is importable (it is not a neurodyn dependency),
  its ``calc_rdm`` + ``compare`` over the same networks; CPU seconds of this process and ratios.
* DSA alignment search: on the 24 pairs of 20-dimensional operators stored in
  ``tests/reference/dsa_alignment_reference.npz``, the angular distance found by ``operator_distance``
  (one round of 8 random starts, and the default search) above the best known value per pair: the
  minimum over those, a long search (64 starts a round, up to 6 rounds) and dsa-metric's stored value.

* Pairwise DSA over 50 networks (rank 10, 5 delays): ``pairwise_distances(metric="dsa")``, which fits
  each network's operator once and aligns all pairs batched, against per-pair ``dsa_distance`` calls
  (refitting both operators each time) and, when the ``dsa-metric`` package is importable, against its
  per-pair ``SimilarityTransformDist`` (Adam over SO(n), 1500 iterations); per-pair times are measured
  on a few pairs and extrapolated to all pairs.
* Pairwise Procrustes (angular) and linear CKA over 500 networks, against per-pair calls (measured on
  a subset, extrapolated).

Trajectories are of random tanh RNNs (seeded), sizes 16 to 48 units.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from _record import write_json

HERE = Path(__file__).resolve().parent


def networks(n_networks: int, *, n_trials: int = 16, n_steps: int = 50, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_networks):
        n = int(rng.integers(16, 49))
        W = rng.standard_normal((n, n)) * 1.3 / np.sqrt(n)
        x = rng.standard_normal((n_trials, n))
        traj = []
        for _ in range(n_steps):
            traj.append(x)
            x = np.tanh(x @ W.T) + 0.05 * rng.standard_normal(x.shape)
        out.append(np.stack(traj, axis=1))
    return out


def _time(fn):
    """``(wall seconds, CPU seconds of this process, value)`` of ``fn()``."""
    t, c = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - t, time.process_time() - c, value


def bench_dsa(n_networks: int, n_ref_pairs: int, device: str) -> dict:
    from neurodyn.analysis import dsa_distance, fit_havok, pairwise_distances

    nets = networks(n_networks)
    kw = {"n_delays": 5, "rank": 10}
    n_pairs = n_networks * (n_networks - 1) // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_pair, c_pair, D = _time(
            lambda: pairwise_distances(nets, metric="dsa", progress=False, device=device, **kw))
        pairs = [(i, i + 1) for i in range(n_ref_pairs)]
        t_loop, c_loop, vals = _time(lambda: [dsa_distance(nets[i], nets[j], device=device, **kw)
                                              for i, j in pairs])
    agree = max(abs(v - D.values[i, j]) for v, (i, j) in zip(vals, pairs))
    out = {"n_networks": n_networks, "n_pairs": n_pairs, "pairwise_s": t_pair, "pairwise_cpu_s": c_pair,
           "per_pair_neurodyn_s_extrapolated": t_loop / len(pairs) * n_pairs,
           "per_pair_neurodyn_cpu_s_extrapolated": c_loop / len(pairs) * n_pairs,
           "max_abs_difference_on_checked_pairs": agree}
    try:
        import torch
        from DSA.simdist import SimilarityTransformDist
    except ImportError:
        out["per_pair_dsa_metric_s_extrapolated"] = None
        return out
    ops = {k: torch.as_tensor(fit_havok(nets[k], warn=False, **kw).operator, dtype=torch.float32)
           for p in pairs for k in p}
    ref = []

    def run_reference():
        for i, j in pairs:
            sim = SimilarityTransformDist(iters=1500, lr=5e-3, score_method="angular")
            ref.append(float(sim.fit_score(ops[i].clone(), ops[j].clone())))

    t_ref, c_ref, _ = _time(run_reference)
    out["per_pair_dsa_metric_s_extrapolated"] = t_ref / len(pairs) * n_pairs
    out["per_pair_dsa_metric_cpu_s_extrapolated"] = c_ref / len(pairs) * n_pairs
    out["dsa_metric_minus_neurodyn_on_checked_pairs"] = [r - v for r, v in zip(ref, vals)]
    return out


def bench_shape(n_networks: int, n_check: int, device: str) -> dict:
    from neurodyn.analysis import cka, pairwise_distances, procrustes_distance

    rng = np.random.default_rng(1)
    mats = [rng.standard_normal((200, int(rng.integers(10, 31)))) for _ in range(n_networks)]
    n_pairs = n_networks * (n_networks - 1) // 2
    out = {"n_networks": n_networks, "n_pairs": n_pairs, "n_samples": 200}
    for name, fn in (("procrustes", procrustes_distance), ("cka", cka)):
        pairs = [(i, i + 1) for i in range(min(n_check, n_networks - 1))]
        t_pair, c_pair, D = _time(lambda m=name: pairwise_distances(mats, metric=m, progress=False,
                                                                    device=device))
        t_loop, c_loop, vals = _time(lambda f=fn, ps=pairs: [f(mats[i], mats[j]) for i, j in ps])
        out[name] = {"pairwise_s": t_pair, "pairwise_cpu_s": c_pair,
                     "per_pair_s_extrapolated": t_loop / len(pairs) * n_pairs,
                     "per_pair_cpu_s_extrapolated": c_loop / len(pairs) * n_pairs,
                     "max_abs_difference_on_checked_pairs": max(abs(v - D.values[i, j])
                                                                for v, (i, j) in zip(vals, pairs))}
    return out


def bench_rsa(n_networks: int, n_conditions: int, n_units: int, n_check: int, device: str) -> dict:
    """Pairwise RSA (Spearman on Euclidean RDMs): neurodyn pairwise, a per-pair loop, rsatoolbox."""
    import scipy.stats  # noqa: F401  (imports are not part of the timings)
    import tqdm.auto  # noqa: F401

    from neurodyn.analysis import compare_rdms, pairwise_distances, rdm

    rng = np.random.default_rng(2)
    mats = [rng.standard_normal((n_conditions, n_units)) for _ in range(n_networks)]
    n_pairs = n_networks * (n_networks - 1) // 2
    pairwise_distances(mats[:3], metric="rsa", progress=False, device=device)  # warm-up (lazy imports)
    t_pair, c_pair, D = _time(lambda: pairwise_distances(mats, metric="rsa", progress=False, device=device))
    pairs = [(i, i + 1) for i in range(min(n_check, n_networks - 1))]
    t_loop, c_loop, vals = _time(lambda: [compare_rdms(rdm(mats[i]), rdm(mats[j])) for i, j in pairs])
    out = {"n_networks": n_networks, "n_conditions": n_conditions, "n_units": n_units, "n_pairs": n_pairs,
           "pairwise_s": t_pair, "pairwise_cpu_s": c_pair,
           "per_pair_loop_s_extrapolated": t_loop / len(pairs) * n_pairs,
           "per_pair_loop_cpu_s_extrapolated": c_loop / len(pairs) * n_pairs,
           "max_abs_difference_per_pair": max(abs(v - D.values[i, j]) for v, (i, j) in zip(vals, pairs))}
    try:
        import rsatoolbox
    except ImportError:
        out["rsatoolbox"] = "skipped: rsatoolbox is not importable (pip install rsatoolbox to compare)"
        return out

    def run_rsatoolbox():
        rdms = rsatoolbox.rdm.concat([rsatoolbox.rdm.calc_rdm(rsatoolbox.data.Dataset(m), method="euclidean")
                                      for m in mats])
        return rsatoolbox.rdm.compare(rdms, rdms, method="spearman")

    run_rsatoolbox()  # warm-up (imports, caches)
    t_ref, c_ref, S = _time(run_rsatoolbox)
    out.update({"rsatoolbox_s": t_ref, "rsatoolbox_cpu_s": c_ref,
                "max_abs_difference_rsatoolbox": float(np.max(np.abs(S - D.values)))})
    return out


def _excess_stats(found: np.ndarray, best: np.ndarray, peer: np.ndarray) -> dict:
    excess = found - best
    return {"median_excess_rad": float(np.median(excess)), "p90_excess_rad": float(np.quantile(excess, 0.9)),
            "max_excess_rad": float(np.max(excess)),
            "fraction_at_most_dsa_metric": float(np.mean(found <= peer + 1e-12))}


def bench_dsa_search(n_pairs: int | None, device: str) -> dict:
    """Angular DSA found per pair above the best known value, on the stored 20-dimensional operators."""
    from neurodyn.analysis import operator_distance

    ref = np.load(HERE.parent / "tests" / "reference" / "dsa_alignment_reference.npz")
    ops, pairs, peer = ref["operators"], ref["pairs"][:n_pairs], ref["dsa_metric_angular"][:n_pairs]
    settings = {"one_round_8_restarts": {"n_restarts": 8, "max_rounds": 1},
                "default": {},
                "long_search": {"n_restarts": 64, "max_rounds": 6}}
    found, seconds = {}, {}
    for name, kw in settings.items():
        t, c, vals = _time(lambda k=kw: [operator_distance(ops[i], ops[j], device=device, **k)
                                         for i, j in pairs])
        found[name], seconds[name] = np.array(vals), c / len(pairs)
    best = np.minimum.reduce([*found.values(), peer])
    out = {"n_pairs": len(pairs), "dim": int(ops.shape[1]), "best_known_rad": best.tolist(),
           "dsa_metric": {**_excess_stats(peer, best, peer), "values_rad": peer.tolist()}}
    for name in settings:
        out[name] = {**_excess_stats(found[name], best, peer), "cpu_s_per_pair": seconds[name],
                     "settings": settings[name], "values_rad": found[name].tolist()}
    return out


def _print_tables(results: dict) -> None:
    if "rsa" in results:
        r = results["rsa"]
        print(f"\nRSA (Spearman, Euclidean RDMs), {r['n_networks']} networks x {r['n_conditions']} "
              f"conditions x {r['n_units']} units, {r['n_pairs']} pairs; CPU s (ratio to neurodyn pairwise)")
        rows = [("neurodyn pairwise_distances", r["pairwise_cpu_s"]),
                ("neurodyn per-pair loop", r["per_pair_loop_cpu_s_extrapolated"])]
        if "rsatoolbox_cpu_s" in r:
            rows.append(("rsatoolbox calc_rdm + compare", r["rsatoolbox_cpu_s"]))
        for name, sec in rows:
            print(f"  {name:32s} {sec:9.2f} s  {sec / r['pairwise_cpu_s']:7.1f}x")
        if "rsatoolbox_cpu_s" not in r:
            print(f"  rsatoolbox: {r['rsatoolbox']}")
    if "dsa_search" in results:
        r = results["dsa_search"]
        print(f"\nAngular DSA above the best known value, {r['n_pairs']} pairs of {r['dim']}-dim operators "
              "(rad)")
        head = ("search", "median", "p90", "max", "<= dsa-metric", "CPU s/pair")
        print("  {:22s} {:>8s} {:>8s} {:>8s} {:>14s} {:>11s}".format(*head))
        for name in ("dsa_metric", "one_round_8_restarts", "default", "long_search"):
            x = r[name]
            cost = f"{x['cpu_s_per_pair']:11.2f}" if "cpu_s_per_pair" in x else f"{'(stored)':>11s}"
            print(f"  {name:22s} {x['median_excess_rad']:8.4f} {x['p90_excess_rad']:8.4f} "
                  f"{x['max_excess_rad']:8.4f} {x['fraction_at_most_dsa_metric']:14.2f} {cost}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true",
                        help="10 / 50 networks instead of 50 / 500, 20 RSA networks, 8 DSA search pairs")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--reference-pairs", type=int, default=3)
    parser.add_argument("--only", default="rsa,dsa_search,dsa,shape")
    parser.add_argument("--out", default=str(HERE / "results" / "similarity.json"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    jobs = {
        "rsa": lambda: bench_rsa(20 if args.small else 50, 500, 64, 5, args.device),
        "dsa_search": lambda: bench_dsa_search(8 if args.small else None, args.device),
        "dsa": lambda: bench_dsa(10 if args.small else 50, args.reference_pairs, args.device),
        "shape": lambda: bench_shape(50 if args.small else 500, 200, args.device),
    }
    results = {name: jobs[name]() for name in args.only.split(",")}
    results["device"] = args.device
    print(json.dumps(results, indent=1))
    _print_tables(results)
    write_json(results, args.out)


if __name__ == "__main__":
    main()
