"""Benchmark of the command line's start-up: how long ``neurodyn --help`` and a mistyped option take.

Each call runs in a fresh interpreter (``python -c "from neurodyn.cli.main import main; ..."``, what the
``neurodyn`` entry point runs), so nothing is cached between calls; the wall time of each is the median
of ``--repeats`` runs. Measured:

* ``python -c pass`` — the interpreter alone, the floor;
* ``neurodyn --help``, ``neurodyn train --help`` (builds the parsers of every task);
* a bad argument: ``neurodyn fixedpoints model.pt --n-inits many`` and ``neurodyn train flipflop
  --n-units many`` (argparse's error, exit status 2, before any work).

The target is well under a second for each (under 0.5 s on a quiet machine): the sub-commands import
torch, NumPy and the rest of neurodyn only when they run. Run from the repository root:

    .venv/bin/python benchmarks/bench_cli_startup.py [--quick]

Writes a JSON file (``--out``, default ``benchmarks/results/cli_startup.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENTRY = "import sys; from neurodyn.cli.main import main; sys.exit(main())"

#: name → (arguments of ``neurodyn``, or None for ``python -c pass``; expected exit status)
CALLS: dict[str, tuple[list[str] | None, int]] = {
    "python -c pass": (None, 0),
    "neurodyn --help": (["--help"], 0),
    "neurodyn train --help": (["train", "--help"], 0),
    "neurodyn fixedpoints (bad argument)": (["fixedpoints", "model.pt", "--n-inits", "many"], 2),
    "neurodyn train flipflop (bad argument)": (["train", "flipflop", "--n-units", "many"], 2),
}


def time_call(argv: list[str] | None, status: int, repeats: int, env: dict[str, str]) -> list[float]:
    """Wall times (s) of ``repeats`` fresh interpreters running the call."""
    cmd = [sys.executable, "-c", "pass"] if argv is None else [sys.executable, "-c", ENTRY, *argv]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
        times.append(time.perf_counter() - t0)
        if out.returncode != status:
            call = " ".join(cmd[3:]) or "pass"
            raise RuntimeError(f"{call} exited {out.returncode}, not {status}: {out.stderr[-300:]}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per call; the median is reported")
    parser.add_argument("--quick", action="store_true", help="3 runs per call")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "cli_startup.json"))
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    rows = []
    print(f"{'call':<40} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, (argv, status) in CALLS.items():
        times = time_call(argv, status, repeats, env)
        rows.append({"call": name, "argv": argv, "median_s": statistics.median(times), "times_s": times})
        print(f"{name:<40} {statistics.median(times):>9.3f} {min(times):>7.3f} {max(times):>7.3f}")
    meta = {"python": platform.python_version(), "machine": platform.machine(), "repeats": repeats,
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "cpu_count": os.cpu_count()}
    if args.out != "/dev/null":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
