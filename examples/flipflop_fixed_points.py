"""Train a 3-bit flip-flop RNN and analyse its fixed points (Sussillo & Barak 2013).

Usage: python examples/flipflop_fixed_points.py [--tiny] [--out-dir runs/example_flipflop]

The example's one source is the gallery page docs/gallery/flipflop_fixed_points.py, which the
documentation site executes. This script runs that page at full size (the sizes of `make demo`), or at
the site's small size with --tiny, and writes its fixed points (fixedpoints.nc), figure
(fixedpoints.png) and summary.json (accuracy, stable fixed points) into --out-dir. Uses only the public API.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_flipflop") -> dict:
    page = run_page("flipflop_fixed_points", tiny=tiny)  # the page's variables
    ds = page["fps"].to_xarray()
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(Path(out_dir) / "fixedpoints.nc", engine="h5netcdf")
    stable = int(np.sum((ds.stability.values == "stable") & ds.converged.values))
    summary = {"accuracy": page["metrics"]["accuracy"], "n_stable": stable}
    return write_outputs(out_dir, summary, {"fixedpoints.png": page["axes"][0].figure})


if __name__ == "__main__":
    args = page_parser(__doc__, "runs/example_flipflop").parse_args()
    main(args.tiny, args.out_dir)
