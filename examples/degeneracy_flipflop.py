"""Solution degeneracy of an ensemble of 2-bit flip-flop RNNs varying seed and size (Huang et al. 2025).

Usage: python examples/degeneracy_flipflop.py [--tiny] [--out-dir runs/example_degeneracy]

The example's one source is the gallery page docs/gallery/degeneracy.py, which the documentation site
executes: one ensemble per network size (train_ensemble), then degeneracy at three levels (behaviour in
and out of distribution, DSA distance of the dynamics, permutation-invariant weight distance). This
script runs that page at full size, or at the site's small size with --tiny, and writes the result
(degeneracy.nc) and the figure (degeneracy.png) into --out-dir. Uses only the public API.
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

PAGE = Path(__file__).resolve().parents[1] / "docs" / "gallery" / "degeneracy.py"


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy") -> dict:
    with mock.patch.dict(os.environ, {"NEURODYN_FULL": "0" if tiny else "1"}):
        page = runpy.run_path(str(PAGE), run_name="__gallery__")  # the page's variables
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = page["result"]
    result.to_xarray().to_netcdf(out / "degeneracy.nc", engine="h5netcdf")
    page["fig"].savefig(out / "degeneracy.png", dpi=110)
    plt.close(page["fig"])
    summary = {
        "n_networks": len(page["models"]),
        "mean_accuracy": float(np.mean(page["accuracy"])),
        "behaviour_degeneracy_ood": result.behaviour_degeneracy_ood,
        "dynamics_degeneracy": result.dynamics_degeneracy,
        "weight_degeneracy": result.weight_degeneracy,
    }
    print(summary)
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="the documentation site's small sizes (for CI)")
    parser.add_argument("--out-dir", default="runs/example_degeneracy")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir)
