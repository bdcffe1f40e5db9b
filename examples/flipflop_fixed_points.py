"""Train a 3-bit flip-flop RNN and analyse its fixed points (Sussillo & Barak 2013).

Usage: python examples/flipflop_fixed_points.py [--tiny] [--out-dir runs/example_flipflop]

The example's one source is the gallery page docs/gallery/flipflop_fixed_points.py, which the
documentation site executes. This script runs that page at full size (the sizes of `make demo`), or at
the site's small size with --tiny, and writes its fixed points (fixedpoints.nc) and figure
(fixedpoints.png) into --out-dir. Uses only the public API.
"""

from __future__ import annotations

import argparse
import os
import runpy
from pathlib import Path
from unittest import mock

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

PAGE = Path(__file__).resolve().parents[1] / "docs" / "gallery" / "flipflop_fixed_points.py"


def main(tiny: bool = False, out_dir: str = "runs/example_flipflop") -> dict:
    with mock.patch.dict(os.environ, {"NEURODYN_FULL": "0" if tiny else "1"}):
        page = runpy.run_path(str(PAGE), run_name="__gallery__")  # the page's variables
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ds = page["fps"].to_xarray()
    ds.to_netcdf(out / "fixedpoints.nc", engine="h5netcdf")
    fig = page["axes"][0].figure
    fig.savefig(out / "fixedpoints.png", dpi=120)
    plt.close(fig)
    stable = int(np.sum((ds.stability.values == "stable") & ds.converged.values))
    return {"accuracy": page["metrics"]["accuracy"], "n_stable": stable}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="the documentation site's small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_flipflop")
    args = parser.parse_args()
    main(args.tiny, args.out_dir)
