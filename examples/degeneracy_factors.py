"""Solution degeneracy across task complexity, feature learning, size and regularisation (Huang et al. 2025).

Usage: python examples/degeneracy_factors.py [--tiny] [--out-dir runs/example_degeneracy_factors]
                                             [--workers N] [--seeds S] [--n-iterations I]
                                             [--dynamics-metric M] [--summarise-only]

The example's one source is the gallery page docs/gallery/degeneracy_factors.py, which the documentation
site executes. Four tasks (flip-flop, sine generation, delayed discrimination, path integration) × four
factors (the task's complexity knob, feature learning through the readout scale ``output_scale`` lazy →
rich, ``n_units``, L1 weight regularisation) × two levels of each factor × seeds: one sweep
(neurodyn.sweep) per task and factor, on one local Dask cluster shared by all sweeps (``--workers 0``:
serially, in this process). Degeneracy is measured per grid cell at three levels of description:
behaviour (standard deviation across seeds of the out-of-distribution task loss, ``task.ood()``), dynamics
(mean pairwise distance of the hidden-state trajectories, ``--dynamics-metric``; Procrustes with
``--tiny``) and weights (mean permutation-invariant distance of the recurrent weights), each beside the
same measure for the same networks untrained (their initial weights).

This script runs the page at full size, or at the site's small size with --tiny (two sweeps, flip-flop ×
complexity and delayed discrimination × size, 2 levels × 2 seeds of 4-8-unit networks trained for 10
iterations: it checks the plumbing, its directions say nothing about the paper's claims). It writes,
under --out-dir: one sweep folder per task and factor (with its sweep.nc), factors.nc, factors.png (one
panel per level of description, the factor on the x-axis, one line per task, y = log(degeneracy at the
factor's high level / at its low level)), table.md (the paper's direction beside neurodyn's for each
factor and level, raw and relative to the untrained baseline, and per task whether the OOD batch is
harder than the training distribution) and summary.json (the run's scale); ``--summarise-only`` rewrites
those from the sweeps finished so far (the others left out; with none finished it exits with status 2
and a line saying so, writing nothing). Uses only the public API.
"""

from __future__ import annotations

from pathlib import Path

from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy_factors", workers: int | None = None,
         seeds: int | None = None, n_iterations: int | None = None, dynamics_metric: str = "dsa",
         summarise_only: bool = False) -> dict:
    page = run_page("degeneracy_factors", tiny=tiny, out_dir=out_dir, workers=workers, seeds=seeds,
                    n_iterations=n_iterations, dynamics_metric=dynamics_metric,
                    summarise_only=int(summarise_only))
    write_outputs(out_dir, page["scale"], {"factors.png": page["fig"]})
    page["summary"].to_netcdf(Path(out_dir) / "factors.nc", engine="h5netcdf")
    (Path(out_dir) / "table.md").write_text(page["table"])
    return {"tasks": page["tasks"], "factors": page["factors"], "log_ratio": page["change"],
            "log_ratio_vs_untrained": page["relative"], "loss": page["loss"], "seconds": page["seconds"]}


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_degeneracy_factors")
    parser.add_argument("--workers", type=int, default=None,
                        help="Dask workers (default: the CPU count; with --tiny 0, serial)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 4; --tiny 2)")
    parser.add_argument("--n-iterations", type=int, default=None, help="default 400; --tiny 10")
    parser.add_argument("--dynamics-metric", default="dsa",
                        help="pairwise dynamics distance (--tiny: procrustes)")
    parser.add_argument("--summarise-only", action="store_true",
                        help="table and figure from the sweeps finished under --out-dir; train nothing")
    args = parser.parse_args()
    try:
        main(tiny=args.tiny, out_dir=args.out_dir, workers=args.workers, seeds=args.seeds,
             n_iterations=args.n_iterations, dynamics_metric=args.dynamics_metric,
             summarise_only=args.summarise_only)
    except FileNotFoundError as err:  # --summarise-only with no finished sweep: one line, status 2
        parser.exit(2, f"{parser.prog}: error: {err}\n")
