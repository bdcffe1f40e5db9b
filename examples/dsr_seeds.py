"""Reconstruction scores over seeds, with 95 % confidence intervals: ECG and Lorenz-63 (Hess et al. 2023).

Usage: python examples/dsr_seeds.py [--tiny] [--seeds 5] [--epochs 300] [--only ECG|Lorenz-63] [--out-dir DIR]

The example's one source is the gallery page docs/gallery/fit_seeds.py, which the documentation site
executes. A clipped shallow PLRNN is fitted by generalized teacher forcing with --seeds seeds per data set
(the ECG recording and a simulated Lorenz-63 series) and every fit is scored on held-out data against the
linear and mean baselines; the page reports the mean and a 95 % Student-t interval over seeds of
D_stsp, D_H and PE(n), the saturation value of D_stsp and the fitted models' largest Lyapunov exponent.
This script runs the page at full size (--epochs epochs of 20 batches of 64 windows), or at the site's
small size with --tiny (or NEURODYN_TINY=1), one fit at a time so that each finished fit is stored in
DIR/fits at once and reused on a rerun (so a rerun resumes, and data sets run in separate processes with
--only are tabulated together by a last run without it). It writes the scores (dsr_seeds.nc, dims
data, seed, model), the table (dsr_seeds.md) and the figure (dsr_seeds.png) into --out-dir (or
NEURODYN_OUT; default runs/dsr_seeds in the repository). Without the ECG recording (see
neurodyn.io.find_recordings) it fits Lorenz-63 only, as the page does. NEURODYN_SEEDS, NEURODYN_EPOCHS and
NEURODYN_ONLY set the defaults of --seeds, --epochs and --only. Uses only the public API.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import xarray as xr
from _gallery import page_parser, run_page, write_outputs

from neurodyn.io import find_recordings

REPO = Path(__file__).resolve().parents[1]
DATA_SETS = ("ECG", "Lorenz-63")


def data_sets(only: str | None = None) -> list[str]:
    """The data sets to fit: ``only`` (one of :data:`DATA_SETS`) or all of them, less ECG when its recording
    is absent (then ``only="ECG"`` exits with what to set)."""
    names = [only] if only else list(DATA_SETS)
    if "ECG" in names and find_recordings("ecg_pecuzal5d") is None:
        if only:
            raise SystemExit("the ECG recording was not found; set NEURODYN_DATA to the shared data folder")
        names.remove("ECG")
    return names


def main(tiny: bool = False, out_dir: str | os.PathLike | None = None, seeds: int = 5, epochs: int = 300,
         only: str | None = None) -> xr.Dataset:
    """Fit and score ``seeds`` seeds per data set (``only`` one of :data:`DATA_SETS`); return the scores."""
    out = Path(out_dir or REPO / "runs" / "dsr_seeds")
    fits = out / "fits"
    fits.mkdir(parents=True, exist_ok=True)
    settings = {"epochs": int(epochs), "fits": fits}
    for name in data_sets(only):
        for seed in range(int(seeds)):  # seeds below `seed` are stored by now: the page fits `seed` only
            page = run_page("fit_seeds", tiny=tiny, seeds=seed + 1, only=name, **settings)
            for file_name, row in page["new_fits"].items():
                (fits / file_name).write_text(json.dumps(row))
    page = run_page("fit_seeds", tiny=tiny, seeds=int(seeds), only=only or "", **settings)  # all stored
    page["ds"].to_netcdf(out / "dsr_seeds.nc")
    (out / "dsr_seeds.md").write_text(page["table"] + "\n")
    write_outputs(out, None, {"dsr_seeds.png": page["fig"]})
    return page["ds"]


if __name__ == "__main__":
    parser = page_parser(__doc__, str(REPO / "runs" / "dsr_seeds"), from_env=True)
    parser.add_argument("--seeds", type=int, default=int(os.environ.get("NEURODYN_SEEDS", "5")),
                        help="seeds per data set (default: NEURODYN_SEEDS or 5)")
    parser.add_argument("--epochs", type=int, default=int(os.environ.get("NEURODYN_EPOCHS", "300")),
                        help="training length at full size (default: NEURODYN_EPOCHS or 300)")
    parser.add_argument("--only", choices=DATA_SETS, default=os.environ.get("NEURODYN_ONLY") or None,
                        help="one data set (default: NEURODYN_ONLY or both)")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, seeds=args.seeds, epochs=args.epochs, only=args.only)
