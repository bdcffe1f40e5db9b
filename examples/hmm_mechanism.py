"""Train vanilla RNNs (alpha = 1) to emulate HMMs and take their mechanism apart (Torre et al. 2025).

Usage: python examples/hmm_mechanism.py [--tiny | --scale large] [--hmms linear:3,cyclic:3] [--seed 0]
       [--out runs/hmm_mechanism/mechanism.json]

The example's one source is the gallery page docs/gallery/hmm_mechanism.py, which the documentation site
executes. For each HMM (2- and 3-state linear chains, a 3-state cycle, a 3-state fully connected HMM) a
vanilla tanh RNN driven only by Gaussian noise inputs is trained with the Sinkhorn divergence,
then analysed with :func:`neurodyn.analysis.compute_hmm_mechanism`: the emission statistics,
where the network goes with its noise off (fixed points), the speed along noisy trajectories
(slow regions and fast transitions), the orbit in the top-two PC plane and where the emissions
change along it, and the kick neurons. This script runs the page at full size, or at the site's small
size with --tiny (the four HMMs either way), or at the page's large scale with --scale large (the 3-state
chain and cycle, analysed at four checkpoints during training too; --hmms chooses others), and writes one
JSON record per HMM into --out and the page's figure beside it (mechanism.png). Uses only the public API.
"""

from __future__ import annotations

import json
from pathlib import Path

from _gallery import page_parser, run_page, write_outputs

HMMS = (("linear", 2), ("linear", 3), ("cyclic", 3), ("fully_connected", 3))


def main(tiny: bool = False, out: str = "runs/hmm_mechanism/mechanism.json", hmms=None,
         scale: str | None = None, seed: int | None = None) -> list[dict]:
    """Run the page and write its records; ``hmms`` ((topology, n_states), ...) defaults to the four
    HMMs, or to the page's choice at ``scale="large"``; ``seed=None`` keeps the page's seed (0)."""
    if hmms is None and scale != "large":
        hmms = HMMS
    chosen = None if hmms is None else ",".join(f"{topology}:{n_states}" for topology, n_states in hmms)
    page = run_page("hmm_mechanism", tiny=tiny, hmms=chosen, hmm_scale=scale, seed=seed)  # its variables
    records = page["records"]
    for rec in records:
        print(json.dumps(rec), flush=True)
    path = Path(out)
    write_outputs(path.parent, records, {"mechanism.png": page["fig"]}, summary_name=path.name)
    return records


if __name__ == "__main__":
    parser = page_parser(__doc__, None)  # one output file, --out, instead of a folder
    parser.add_argument("--out", default="runs/hmm_mechanism/mechanism.json", help="the JSON records")
    parser.add_argument("--scale", choices=("full", "large"), default=None,
                        help="the page's full size (default) or its large scale (NEURODYN_HMM_SCALE)")
    parser.add_argument("--hmms", default=None, help="topology:states, comma-separated (e.g. cyclic:3)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the networks and their training")
    args = parser.parse_args()
    hmms = None if args.hmms is None else [(t, int(n)) for t, n in
                                           (item.split(":") for item in args.hmms.split(","))]
    main(tiny=args.tiny, out=args.out, hmms=hmms, scale=None if args.tiny else args.scale, seed=args.seed)
