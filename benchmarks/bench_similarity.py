"""Wall times of pairwise similarity matrices against per-pair computation.

Usage: python benchmarks/bench_similarity.py [--small] [--device cpu|cuda] [--reference-pairs 3]

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

import numpy as np


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="10 / 50 networks instead of 50 / 500")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--reference-pairs", type=int, default=3)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    results = {
        "dsa": bench_dsa(10 if args.small else 50, args.reference_pairs, args.device),
        "shape": bench_shape(50 if args.small else 500, 200, args.device),
        "device": args.device,
    }
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
