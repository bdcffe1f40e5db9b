"""Benchmark of the command line's start-up: how long ``neurodyn --help`` and a mistyped option take.

Each call runs in a fresh interpreter (``python -c "from neurodyn.cli.main import main; ..."``, what the
``neurodyn`` entry point runs), so nothing is cached between calls; the wall time of each is the median
of ``--repeats`` runs. Measured:

* ``python -c pass`` — the interpreter alone, the floor;
* ``neurodyn --help``, ``neurodyn train --help`` (builds the parsers of every task);
* a bad argument: ``neurodyn fixedpoints model.pt --n-inits many`` and ``neurodyn train flipflop
  --n-units many`` (argparse's error, exit status 2, before any work).

The target is well under a second for each (under 0.5 s on a quiet machine): the sub-commands import
torch, NumPy and the rest of neurodyn only when they run, and the tasks import NumPy on first use.

Each call is timed in two modes: ``bytecode`` (a private ``PYTHONPYCACHEPREFIX``, warmed once, as an
installed package has its compiled ``.pyc`` files) and ``source`` (``PYTHONDONTWRITEBYTECODE=1``, every
module compiled at each start, as in a checkout where bytecode writing is off). With ``--reference DIR``
(another copy of neurodyn, e.g. ``git archive <commit> | tar -x -C /tmp/ref``) the same calls run with that
tree on ``PYTHONPATH``, interleaved with this tree's runs, and each row gets the ratio reference / this
tree: on a loaded machine the ratio is the number to read. Run from the repository root:

    .venv/bin/python benchmarks/bench_cli_startup.py [--quick] [--reference DIR]

Writes a JSON file (``--out``, default ``benchmarks/results/cli_startup.json``).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import bench_parser, write_json

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


def command(argv: list[str] | None) -> list[str]:
    """The interpreter's command line for one call."""
    return [sys.executable, "-c", "pass"] if argv is None else [sys.executable, "-c", ENTRY, *argv]


def environment(tree: Path, mode: str, cache: Path) -> dict[str, str]:
    """Environment of a fresh interpreter importing neurodyn from ``tree`` in ``mode``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])
    if mode == "source":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(cache / tree.name)
    return env


def time_once(argv: list[str] | None, status: int, env: dict[str, str], tree: Path) -> float:
    """Wall time (s) of one fresh interpreter running the call in ``tree`` (``python -c`` puts the working
    folder first on ``sys.path``); raises if it exits with another status."""
    t0 = time.perf_counter()
    out = subprocess.run(command(argv), capture_output=True, text=True, env=env, cwd=tree)
    elapsed = time.perf_counter() - t0
    if out.returncode != status:
        raise RuntimeError(f"{argv} exited {out.returncode}, not {status}: {out.stderr[-300:]}")
    return elapsed


def main() -> int:
    parser = bench_parser(__doc__, quick="3 runs per call, bytecode mode only",
                          repeats=(5, "runs per call; the median is reported"), out="cli_startup.json")
    parser.add_argument("--reference", type=Path, default=None,
                        help="another neurodyn checkout to time side by side (its root folder)")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    modes = ("bytecode",) if args.quick else ("bytecode", "source")
    trees = {"this": REPO}
    if args.reference is not None:
        trees["reference"] = args.reference.resolve()
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for tree in trees.values():  # warm the bytecode caches once
            time_once(["--help"], 0, environment(tree, "bytecode", Path(cache)), tree)
            time_once(["train", "--help"], 0, environment(tree, "bytecode", Path(cache)), tree)
        print(f"{'call':<40} {'mode':<9} {'median s':>9} {'ref s':>7} {'ref/this':>8}")
        for mode in modes:
            for name, (argv, status) in CALLS.items():
                times: dict[str, list[float]] = {key: [] for key in trees}
                for _ in range(repeats):  # interleaved, so both trees see the same load
                    for key, tree in trees.items():
                        times[key].append(time_once(argv, status, environment(tree, mode, Path(cache)), tree))
                row = {"call": name, "argv": argv, "mode": mode, "median_s": statistics.median(times["this"]),
                       "times_s": times["this"]}
                ref = ""
                if "reference" in times:
                    row["reference_median_s"] = statistics.median(times["reference"])
                    row["reference_times_s"] = times["reference"]
                    row["ratio_reference_over_this"] = row["reference_median_s"] / row["median_s"]
                    ref = f"{row['reference_median_s']:>7.3f} {row['ratio_reference_over_this']:>8.2f}"
                rows.append(row)
                print(f"{name:<40} {mode:<9} {row['median_s']:>9.3f} {ref}")
    meta = {"python": platform.python_version(), "machine": platform.machine(), "repeats": repeats,
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "cpu_count": os.cpu_count(), "reference": None if args.reference is None else str(args.reference),
            "reference_commit": _commit(args.reference), "commit": _commit(REPO)}
    write_json({"meta": meta, "rows": rows}, args.out, indent=2)
    return 0


def _commit(tree: Path | None) -> str | None:
    """The checked-out commit of ``tree`` (None if it is not a git checkout)."""
    if tree is None:
        return None
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or None


if __name__ == "__main__":
    raise SystemExit(main())
