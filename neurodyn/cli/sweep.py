"""``neurodyn sweep SPEC.toml --out DIR``: train and analyse a population of networks on Dask.

Run the sweep described by SPEC (TOML: [task], [model], [training], [analysis], [grid], seeds; see
docs/sweeps.md). Every network is stored under DIR/items/<key>/ and the results are gathered into
DIR/sweep.nc. A rerun skips finished networks. By default the networks run on a local Dask cluster of
one process per CPU (extra 'dist').
"""

from __future__ import annotations

import argparse
import os

from neurodyn.cli._common import add_command

__all__ = ["run"]

HELP = "train and analyse a grid of networks × seeds on Dask; degeneracy per grid cell"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn sweep SPEC --out DIR`` and its execution options."""
    p = add_command(sub, __name__)
    p.add_argument("spec", metavar="SPEC", help="sweep specification (.toml)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created; remembers its spec)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes of the local cluster (default: CPU count; 0: serial, no Dask); "
                        "with --cluster slurm: workers to ask for")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDR", help="address of a running Dask scheduler (tcp://host:8786)")
    where.add_argument("--cluster", choices=["local", "slurm"], default=None,
                       help="slurm: a dask-jobqueue SLURMCluster from your Dask configuration")
    p.add_argument("--dry-run", action="store_true",
                   help="print the number of networks and a cost estimate from a short calibration run")
    p.add_argument("--force", action="store_true",
                   help="reuse an --out made with a different spec (finished networks still in it are kept)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Run (or, with ``--dry-run``, estimate) the sweep; exit status 0, or 1 if a network failed.

    Raises
    ------
    ValueError
        Before any work, and with ``--dry-run`` too: a bad spec or flag, ``--workers 0`` with
        ``--scheduler`` or ``--cluster``, ``--cluster slurm`` without SLURM's ``sbatch`` on PATH or
        without a ``jobqueue.slurm`` Dask configuration, or an ``--out`` that holds a sweep of a
        different spec (its ``spec.json``, else the spec in its ``sweep.nc``) unless ``--force``.
    OSError
        If the ``--scheduler`` cannot be reached; nothing is written to ``--out`` then.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.cli.sweep import run
    >>> spec = '''
    ... seeds = 1
    ... [task]
    ... name = "flipflop"
    ... n_bits = 1
    ... n_steps = 8
    ... [model]
    ... n_units = 4
    ... [training]
    ... n_iterations = 2
    ... batch_size = 4
    ... eval_every = 0
    ... [analysis]
    ... n_trials = 8
    ... n_inits = 8
    ... [grid]
    ... "model.gain" = [1.0]
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "spec.toml").write_text(spec)
    ...     args = build_parser().parse_args(["sweep", f"{tmp}/spec.toml", "--out", f"{tmp}/out",
    ...                                       "--workers", "0", "--no-progress"])
    ...     status = run(args)
    sweep of 1 networks: 1 computed, 0 skipped (finished before), 0 failed; results in .../out/sweep.nc
    >>> status
    0
    """
    from neurodyn.sweep import load_spec, run_sweep

    spec = load_spec(args.spec)
    if args.workers is not None and args.workers < 0:
        raise ValueError(f"--workers must be >= 0 (0: serial), got {args.workers}")
    if args.dry_run:
        return _dry_run(spec, args)
    result = run_sweep(spec, args.out, workers=args.workers, scheduler=args.scheduler, cluster=args.cluster,
                       force=args.force, progress=not args.no_progress)
    print(f"{result}; results in {os.path.join(args.out, 'sweep.nc')}")
    return 0 if result.n_failed == 0 else 1


def _dry_run(spec, args: argparse.Namespace) -> int:
    from neurodyn.sweep._estimate import estimate_sweep
    from neurodyn.sweep._item import read_metrics
    from neurodyn.sweep._run import check_run, n_workers

    # the real run's checks of the options and of --out (nothing is connected to or written)
    mode = check_run(spec, args.out, workers=args.workers, scheduler=args.scheduler, cluster=args.cluster,
                     force=args.force)
    items = spec.items()
    finished = sum(read_metrics(args.out, it.key) is not None for it in items)
    workers = n_workers(mode, args.workers)
    est = estimate_sweep(spec, workers=workers)
    todo = len(items) - finished
    print(f"{len(items)} networks in {est['n_cells']} grid cells × {len(spec.seeds)} seeds; "
          f"{finished} finished in {args.out}, {todo} to compute")
    per = est["seconds_per_item"]
    print(f"estimate (calibrated on {est['calibrated_cells']} cell(s)): {per:.1f} s per network on one core "
          f"(train {est['train_seconds_per_item']:.1f} s, analyses {est['analysis_seconds_per_item']:.1f} s);"
          " "
          f"{per * todo / 3600:.2f} core-hours, about {per * -(-todo // workers) / 3600:.2f} h on {workers} "
          "worker(s)")
    return 0
