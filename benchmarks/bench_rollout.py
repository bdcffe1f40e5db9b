"""Rollout throughput: state-steps per second of every backend, and the ratio to the torch reference.

Cases: one network (batch 4096, 128 units) and an ensemble (1024 networks x 4 trials, 64 units),
leaky tanh RNNs (alpha 0.1) with no input, final state only. On CPU: the torch reference and Numba;
with CUDA also torch eager, a CUDA graph of the torch loop, Triton, and ``torch.nn.RNN`` (cuDNN,
single network; a vanilla tanh RNN, i.e. alpha = 1, so only indicative).

Usage::

    python benchmarks/bench_rollout.py [--n-steps 1000] [--threads 1] [--repeats 3] [--out FILE]

Prints a table and writes JSON (default ``benchmarks/bench_rollout.json``). Numba is warmed up first
(its compile time is reported separately, not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from neurodyn.kernels import rollout
from neurodyn.kernels._families import FAMILIES, lift
from neurodyn.models import LeakyRNN, LeakyRNNParams

CASES = {"single B=4096 N=128": (None, 4096, 128), "ensemble E=1024x4 N=64": (1024, 4, 64)}


def make_case(n_net, n_batch, n_unit, device):
    gen = torch.Generator().manual_seed(0)
    if n_net is None:
        params = LeakyRNN(0, n_unit, 1, alpha=0.1, gain=0.9, seed=0).params()
        h0 = torch.randn(n_batch, n_unit, generator=gen)
    else:
        w = torch.randn(n_net, n_unit, n_unit, generator=gen) * 0.9 / n_unit**0.5
        params = LeakyRNNParams(torch.zeros(n_net, n_unit, 0), w, torch.zeros(n_net, n_unit),
                                torch.zeros(n_net, 1, n_unit), torch.zeros(n_net, 1), 0.1, "tanh", 0.0)
        h0 = torch.randn(n_net, n_batch, n_unit, generator=gen)
    params = type(params)(*(v.detach().to(device) if isinstance(v, torch.Tensor) else v for v in params))
    return params, h0.to(device)


def timed(fn, repeats, sync):
    best = float("inf")
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


def cuda_graph_runner(params, h0, n_steps):
    """Capture the torch step loop once as a CUDA graph; replaying it removes launch overhead."""
    fam = FAMILIES[LeakyRNNParams]
    p = lift(params, fam)
    static = h0.clone()
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fam.step(p, static, None)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            h = static
            for _ in range(n_steps):
                h = fam.step(p, h, None)
    return graph.replay


def cudnn_runner(params, h0, n_steps):
    rnn = torch.nn.RNN(1, h0.shape[-1], nonlinearity="tanh", batch_first=True).to(h0.device)
    with torch.no_grad():
        rnn.weight_hh_l0.copy_(params.w_rec)
        rnn.weight_ih_l0.zero_()
        rnn.bias_ih_l0.zero_()
        rnn.bias_hh_l0.copy_(params.b)
    x = torch.zeros(h0.shape[0], n_steps, 1, device=h0.device)
    return lambda: rnn(x, h0[None])


def run(args):
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    torch.set_num_threads(args.threads)
    rows = []
    for case, (n_net, n_batch, n_unit) in CASES.items():
        n_states = (n_net or 1) * n_batch
        for device in devices:
            params, h0 = make_case(n_net, n_batch, n_unit, device)
            sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
            runners = {"torch": lambda p=params, h=h0, d=device: rollout(
                p, h0=h, n_steps=args.n_steps, backend="torch", return_trajectory=False)}
            extra = {}
            if device == "cpu":
                import numba

                numba.set_num_threads(args.threads)
                t = time.perf_counter()
                rollout(params, h0=h0, n_steps=2, backend="numba", return_trajectory=False)
                extra["numba"] = {"first_call_s": time.perf_counter() - t}
                runners["numba"] = lambda p=params, h=h0: rollout(
                    p, h0=h, n_steps=args.n_steps, backend="numba", return_trajectory=False)
            else:
                runners["cuda_graph"] = cuda_graph_runner(params, h0, args.n_steps)
                runners["triton"] = lambda p=params, h=h0: rollout(
                    p, h0=h, n_steps=args.n_steps, backend="triton", return_trajectory=False)
                runners["triton"]()  # autotune outside the timing
                if n_net is None:
                    runners["cudnn_rnn"] = cudnn_runner(params, h0, args.n_steps)
            base = None
            for name, fn in runners.items():
                with torch.no_grad():
                    sec = timed(fn, args.repeats, sync)
                rate = n_states * args.n_steps / sec
                base = rate if name == "torch" else base
                rows.append({"case": case, "device": device, "backend": name, "seconds": sec,
                             "state_steps_per_s": rate, "ratio_to_torch": rate / base,
                             **extra.get(name, {})})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-steps", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=1, help="CPU threads for torch and Numba")
    ap.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".json"))
    args = ap.parse_args(argv)
    rows = run(args)
    head = ("case", "device", "backend", "seconds", "state-steps/s", "x torch")
    print("{:26s} {:6s} {:10s} {:>9s} {:>14s} {:>8s}".format(*head))
    for r in rows:
        print(f"{r['case']:26s} {r['device']:6s} {r['backend']:10s} {r['seconds']:9.3f} "
              f"{r['state_steps_per_s']:14.3e} {r['ratio_to_torch']:8.2f}")
    meta = {"n_steps": args.n_steps, "threads": args.threads, "repeats": args.repeats,
            "torch": torch.__version__, "machine": platform.processor() or platform.machine(),
            "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
            "cpu_count": os.cpu_count(), "load_average_1min": os.getloadavg()[0]}
    args.out.write_text(json.dumps({"meta": meta, "results": rows}, indent=1))
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
