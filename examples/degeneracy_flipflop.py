"""Solution degeneracy of an ensemble of 2-bit flip-flop RNNs varying seed and size (Huang et al. 2025).

Usage: python examples/degeneracy_flipflop.py [--tiny] [--out-dir runs/example_degeneracy]

The example's one source is the gallery page docs/gallery/degeneracy.py, which the documentation site
executes: one ensemble per network size (train_ensemble), then degeneracy at three levels (behaviour in
and out of distribution, DSA distance of the dynamics, permutation-invariant weight distance). This
script runs that page at full size, or at the site's small size with --tiny, and writes the result
(degeneracy.nc), the figure (degeneracy.png) and summary.json into --out-dir. Uses only the public API.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_degeneracy") -> dict:
    page = run_page("degeneracy", tiny=tiny)  # the page's variables
    result = page["result"]
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    result.to_xarray().to_netcdf(Path(out_dir) / "degeneracy.nc", engine="h5netcdf")
    summary = {
        "n_networks": len(page["models"]),
        "mean_accuracy": float(np.mean(page["accuracy"])),
        "behaviour_degeneracy_ood": result.behaviour_degeneracy_ood,
        "dynamics_degeneracy": result.dynamics_degeneracy,
        "weight_degeneracy": result.weight_degeneracy,
    }
    print(summary)
    return write_outputs(out_dir, summary, {"degeneracy.png": page["fig"]}, dpi=110)


if __name__ == "__main__":
    args = page_parser(__doc__, "runs/example_degeneracy").parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir)
