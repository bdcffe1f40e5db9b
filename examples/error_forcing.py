"""Error forcing vs teacher forcing vs plain training on delayed XOR, across delays (Sağtekin et al. 2025).

Usage: python examples/error_forcing.py [--tiny] [--out-dir runs/example_error_forcing] [--workers N]

The example's one source is the gallery page docs/gallery/error_forcing.py, which the documentation site
executes. Two sweeps (neurodyn.sweep, resumable, on a local Dask cluster with --workers) train several
seeds per method and delay: BPTT, TF-BPTT and EF-BPTT (forcing none / teacher / error, learning by
backpropagation through time), and RFLO and EF-RFLO (random feedback local online learning, without and
with error forcing). Each network is then evaluated without forcing on a held-out batch. This script runs
the page at full size, or at the site's small size with --tiny, and writes summary.json (per method and
delay: how many of the networks have a held-out accuracy reaching the page's `learned`, that fraction
with its Wilson 95 % interval, and the median held-out MSE), error_forcing.png (both against the delay)
and the sweeps' datasets under bptt/ and rflo/ into --out-dir. Uses only the public API.
"""

from __future__ import annotations

import json
from pathlib import Path

from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_error_forcing", workers: int = 0) -> dict:
    page = run_page("error_forcing", tiny=tiny, out=Path(out_dir), workers=workers)  # the page's variables
    cfg = page["settings"]
    summary = {"delays_ms": cfg["delays"], "n_seeds": cfg["seeds"], "learned_accuracy": page["learned"],
               "n_units": cfg["n_units"], "training": cfg["training"], "methods": page["summary"]}
    return write_outputs(out_dir, summary, {"error_forcing.png": page["fig"]})


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_error_forcing")
    parser.add_argument("--workers", type=int, default=0,
                        help="workers of a local Dask cluster (default 0: one by one, in this process)")
    args = parser.parse_args()
    print(json.dumps(main(args.tiny, args.out_dir, args.workers)["methods"], indent=1))
