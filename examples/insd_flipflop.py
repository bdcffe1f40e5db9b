"""Iterated similarity deflation on the 2-bit flip-flop (Qian & Pehlevan 2025, INSD).

Usage: python examples/insd_flipflop.py [--tiny] [--n-networks 3] [--lam 1.0] [--out-dir runs/example_insd]

The example's one source is the gallery page docs/gallery/deflation.py, which the documentation site
executes. Network 0 is trained normally; network k >= 1 is trained with the task loss plus lambda times
the ridge predictivity of its hidden states from those of networks 0..k-1 (and an activity-norm penalty
against inflating task-irrelevant variance). Standard networks k >= 1 (other seeds, no deflation) are the
control. For every network, on held-out trials: predictivity, CKA and Procrustes distance from the
earlier networks of the chain, cross-validated decodability of the two bits from its states, the task
error in distribution and on the out-of-distribution variant (4 x longer trials, twice the pulse rate),
and its stable fixed points. The task-error cost of deflation is the deflated networks' MSE over the
standard ones'. This script runs that page at full size, or at the site's small size with --tiny, and
writes all numbers (insd.json) and the figure of the fixed points of networks 0 and 1 (insd.png) into
--out-dir. Uses only the public API.
"""

from __future__ import annotations

import json

from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_insd", lam: float = 1.0,
         n_networks: int = 3) -> dict:
    page = run_page("deflation", tiny=tiny, deflation_networks=int(n_networks),
                    deflation_lam=repr(float(lam)))  # the page's variables
    print(json.dumps(page["report"], indent=1))
    return write_outputs(out_dir, page["report"], {"insd.png": page["fig"]}, dpi=110,
                         summary_name="insd.json")


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_insd")
    parser.add_argument("--lam", type=float, default=1.0, help="weight of the predictivity penalty")
    parser.add_argument("--n-networks", type=int, default=3, help="networks in the deflation chain (>= 2)")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, lam=args.lam, n_networks=args.n_networks)
