"""Run every benchmark in turn and print their tables.

Usage: python benchmarks/run_all.py [--quick]

Each script prints its own table of wall times and ratios (against the torch reference, a
per-candidate loop, exhaustive enumeration or a peer approach, measured side by side in one
process) and can be run on its own with more options; see the docstring at the top of each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: script → extra arguments for --quick
BENCHMARKS = {
    "bench_rollout.py": ["--n-steps", "100", "--repeats", "1", "--out", "/dev/null"],
    "bench_fixed_points.py": ["--quick"],
    "bench_cycles.py": ["--dims", "2,4,6,10", "--max-order", "2", "--time-budget", "10"],
    "bench_manifolds.py": ["--quick"],
    "bench_similarity.py": ["--small"],
    "bench_fit.py": ["--quick"],
    "bench_training.py": ["--steps", "5", "--repeats", "1", "--out", "/dev/null"],
    "bench_training_fit.py": ["--quick", "--out", "/dev/null"],
    "bench_training_ensemble.py": ["--steps", "2", "--repeats", "1", "--n-networks", "4",
                                   "--out", "/dev/null"],
    "bench_lyapunov.py": ["--quick"],
    "bench_cli_startup.py": ["--quick", "--out", "/dev/null"],
    "bench_sweep.py": ["--quick", "--out", "/dev/null"],
    "bench_task_sampling.py": ["--quick", "--out", "/dev/null"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (minutes, not hours)")
    args = parser.parse_args()
    failed = []
    for script, quick_args in BENCHMARKS.items():
        print(f"\n=== {script}", flush=True)
        cmd = [sys.executable, str(HERE / script), *(quick_args if args.quick else [])]
        if subprocess.run(cmd).returncode != 0:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
