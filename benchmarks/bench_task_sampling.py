"""Benchmark of the per-trial uniforms tasks sample from: NumPy generators per trial vs one compiled kernel.

Measured in one process, the two interleaved repeat by repeat so both see the same load; the time of
each is the median of ``--repeats`` calls, after a warm-up call (the kernel's compilation, or loading
it from Numba's cache, is not counted):

* ``uniforms`` (trial, 2, 64, 3): ``np.stack([rng.random(shape) for rng in generators])``, the generators
  built as ``trial_rngs`` built them before (the ``SeedSequence`` hash of all trials in one vectorised
  NumPy pass, reproduced here), against :func:`neurodyn._seed.trial_uniforms`, for 64 and 2048 trials;
* ``FlipFlop(n_bits=3, n_steps=64).sample(64, seed=0)``: the whole batch, with its uniforms drawn the old
  way (the generator loop put in place of ``trial_uniforms`` in ``neurodyn.tasks.flipflop``) and the new.

Every pair is checked to be equal bit for bit before it is timed. Run from the repository root:

    .venv/bin/python benchmarks/bench_task_sampling.py [--quick]

Writes a JSON file (``--out``, default ``benchmarks/results/task_sampling.json``).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _record import bench_parser, write_json

import neurodyn.tasks.flipflop as flipflop_module
from neurodyn._seed import _hashed_seed_type, trial_uniforms
from neurodyn.tasks import FlipFlop

REPO = Path(__file__).resolve().parents[1]
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _POOL, _M32 = 0xCA01F9DD, 0x4973F715, 4, 0xFFFFFFFF


def numpy_trial_states(seed: int, first_trial: int, n_trials: int) -> np.ndarray:
    """The ``SeedSequence`` states of all trials, (trial, 4) uint64, by the vectorised NumPy hash that
    ``neurodyn._seed._trial_states`` used before the compiled one (trial indices below 2**32)."""
    words = [(seed >> (32 * k)) & _M32 for k in range(max(1, (seed.bit_length() + 31) // 32))]
    words += [0] * (_POOL - len(words))
    index = np.arange(first_trial, first_trial + n_trials, dtype=np.uint64).astype(np.uint32)
    columns = [np.full(n_trials, w, np.uint32) for w in words] + [np.zeros(n_trials, np.uint32), index]
    const = [_INIT_A]

    def hashmix(v: np.ndarray) -> np.ndarray:
        v = v ^ np.uint32(const[0])
        const[0] = (const[0] * _MULT_A) & _M32
        v = v * np.uint32(const[0])
        return v ^ (v >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
        return r ^ (r >> np.uint32(16))

    with np.errstate(over="ignore"):
        pool = [hashmix(columns[i]) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    pool[dst] = mix(pool[dst], hashmix(pool[src]))
        for col in columns[_POOL:]:
            for dst in range(_POOL):
                pool[dst] = mix(pool[dst], hashmix(col))
        out, const_b = np.empty((n_trials, 8), np.uint32), _INIT_B
        for i in range(8):
            v = pool[i % _POOL] ^ np.uint32(const_b)
            const_b = (const_b * _MULT_B) & _M32
            v = v * np.uint32(const_b)
            out[:, i] = v ^ (v >> np.uint32(16))
    return out.view("<u8")


def generator_uniforms(seed: int, n_trials: int, first_trial: int, shape: tuple[int, ...]) -> np.ndarray:
    """The uniforms as drawn before: one ``Generator(PCG64)`` per trial, ``rng.random(shape)`` each."""
    hashed = _hashed_seed_type()
    states = numpy_trial_states(seed, first_trial, n_trials)
    rngs = [np.random.Generator(np.random.PCG64(hashed(s))) for s in states]
    return np.stack([rng.random(shape) for rng in rngs])


def median_ms(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median wall time (ms) of each call, the calls interleaved repeat by repeat."""
    times: dict[str, list[float]] = {key: [] for key in calls}
    for _ in range(repeats):
        for key, call in calls.items():
            t0 = time.perf_counter()
            call()
            times[key].append(1e3 * (time.perf_counter() - t0))
    return {key: statistics.median(t) for key, t in times.items()}


def main() -> int:
    parser = bench_parser(__doc__, quick="20 repeats", out="task_sampling.json",
                          repeats=(200, "calls per case; the median is reported"))
    args = parser.parse_args()
    repeats = 20 if args.quick else args.repeats
    rows = []
    print(f"{'case':<44} {'generators ms':>13} {'compiled ms':>11} {'ratio':>6}")
    cases = [(f"uniforms {n} x (2, 64, 3)", n) for n in (64, 2048)]
    for name, n in cases:
        old = lambda n=n: generator_uniforms(0, n, 0, (2, 64, 3))  # noqa: E731
        new = lambda n=n: trial_uniforms(0, n, 0, (2, 64, 3))  # noqa: E731
        assert np.array_equal(old().view(np.uint64), new().view(np.uint64))
        rows.append({"case": name, **median_ms({"generators_ms": old, "compiled_ms": new}, repeats)})
    task = FlipFlop(n_bits=3, n_steps=64)

    def sample_with(draw):
        flipflop_module.trial_uniforms = draw
        try:
            return task.sample(64, seed=0)
        finally:
            flipflop_module.trial_uniforms = trial_uniforms

    a, b = sample_with(generator_uniforms), sample_with(trial_uniforms)
    assert np.array_equal(a.inputs, b.inputs) and np.array_equal(a.targets, b.targets)
    calls = {"generators_ms": lambda: sample_with(generator_uniforms),
             "compiled_ms": lambda: sample_with(trial_uniforms)}
    rows.append({"case": "FlipFlop(n_bits=3, n_steps=64).sample(64)", **median_ms(calls, repeats)})
    for row in rows:
        row["ratio"] = row["generators_ms"] / row["compiled_ms"]
        old, new = row["generators_ms"], row["compiled_ms"]
        print(f"{row['case']:<44} {old:>13.3f} {new:>11.3f} {row['ratio']:>6.1f}")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    meta = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "repeats": repeats, "cpu_count": os.cpu_count(),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "commit": commit.stdout.strip() or None}
    write_json({"meta": meta, "rows": rows}, args.out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
