"""How fine is the dynamics level? Between-seed DSA distances against the measure's own noise floor.

Usage: python examples/dsa_resolution.py SWEEP_DIR [SWEEP_DIR ...] [--out-dir runs/example_dsa_resolution]
                                         [--n-trials 32] [--n-restarts 32] [--tiny]

The example's one source is the gallery page docs/gallery/dsa_resolution.py, which the documentation site
executes. For every grid cell of the given sweeps (folders written by ``neurodyn sweep`` / ``run_sweep``,
with their checkpoints), the DSA distance (``neurodyn.analysis.compute_solution_degeneracy``'s default: 5
delays, rank 10) is computed between

* different seeds on the same batch of trials (what the dynamics level of degeneracy averages), and
* each network with itself on two independent batches of the same task (seeds 1 and 2): the noise floor,
  the distance the measure reports for identical dynamics seen through different trial samples.

A difference between two cells' dynamics degeneracy means something only if it exceeds both the noise
floor and the spread of the between-seed distances. Writes ``resolution.json`` (one row per cell) and
``dsa_resolution.png`` under --out-dir and prints a table. ``--tiny`` runs the page at the site's small
size: 8 trials and 4 random starts, and without SWEEP_DIR a 1-cell × 3-seed sweep of 4-unit networks
made under --out-dir (without either, the page's full-size sweep: 16 and 32 units × 4 seeds).
"""

from __future__ import annotations

import os
from pathlib import Path

from _gallery import page_parser, run_page, write_outputs


def main(sweeps: list[str], out_dir: str = "runs/example_dsa_resolution", n_trials: int | None = None,
         n_restarts: int | None = None, tiny: bool = False) -> list[dict]:
    folders = os.pathsep.join(str(Path(s).resolve()) for s in sweeps)
    page = run_page("dsa_resolution", tiny=tiny, out_dir=out_dir, sweeps=folders, n_trials=n_trials,
                    n_restarts=n_restarts)
    figures = {"dsa_resolution.png": page["fig"]}
    return write_outputs(out_dir, page["rows"], figures, summary_name="resolution.json")


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_dsa_resolution")
    parser.add_argument("sweeps", nargs="*", help="sweep output folders")
    parser.add_argument("--n-trials", type=int, default=None, help="trials per batch (default 32; --tiny 8)")
    parser.add_argument("--n-restarts", type=int, default=None,
                        help="DSA alignment starts per round (default 32; --tiny 4)")
    args = parser.parse_args()
    main(args.sweeps, out_dir=args.out_dir, n_trials=args.n_trials, n_restarts=args.n_restarts,
         tiny=args.tiny)
