"""A fitted Lorenz-63 model analysed with exact PLRNN tools: Lyapunov exponent, saddles, homoclinic points.

Usage: python examples/plrnn_lorenz.py [--tiny] [--out-dir runs/example_plrnn_lorenz]

The example's one source is the gallery page docs/gallery/plrnn_lorenz.py, which the documentation site
executes. An almost-linear RNN (ALRNN) is fitted by generalized teacher forcing to a simulated Lorenz-63
series and scored on held-out data against the linear and mean baselines; its Lyapunov spectrum is
compared with the true largest exponent (0.906 per unit time), its fixed points and 2-cycles are found by
exhaustive search and its saddles compared with the three equilibria of Lorenz-63, and the stable and
unstable manifolds of the saddles are intersected in search of a transversal homoclinic point (a proof of
chaos). This script runs the page at full size, or at the site's small size with --tiny, and writes
summary.json (scores, exponents, fixed points, homoclinic points) and plrnn_lorenz.png into --out-dir.
Uses only the public API.
"""

from __future__ import annotations

import json

import numpy as np
from _gallery import page_parser, run_page, write_outputs


def main(tiny: bool = False, out_dir: str = "runs/example_plrnn_lorenz") -> dict:
    page = run_page("plrnn_lorenz", tiny=tiny)  # the page's variables
    scores, cycles, homoclinic = page["scores"], page["cycles"], page["homoclinic"]
    fixed = cycles.order == 1
    is_h = np.zeros(0, bool) if homoclinic is None else homoclinic.kind == "homoclinic"
    near = page["manifolds_near"]
    summary = {
        "dt": page["dt"], "sizes": page["sizes"], "fit": page["settings"], "status": page["fit"].status,
        "scores": {model: {"d_stsp": float(scores.d_stsp[i]), "d_h": float(scores.d_h[i]),
                           "pe": float(scores.pe[i]), "status": scores.status[i]}
                   for i, model in enumerate(scores.models)},
        "d_stsp_max": float(scores.settings["d_stsp_max"]),
        "lyapunov_per_step": page["lyap"].tolist(),
        "max_lyapunov_per_time": float(page["lyap"][0] / page["dt"]),
        "fixed_points": {"states": cycles.states[fixed].tolist(),
                         "stability": cycles.stability[fixed].tolist()},
        "true_fixed_points": page["true_points"].tolist(),
        "n_cycles_by_order": {int(k): int(len(set(cycles.cycle_id[cycles.order == k].tolist())))
                              for k in range(1, page["max_order"] + 1)},
        "max_depth": page["max_depth"],
        "manifolds": {} if page.get("manifolds") is None else {
            f"saddle {i} {kind}": {"pieces": len(page["manifolds"].select(kind, saddle=i)),
                                   "depth": max((p.depth for p in page["manifolds"].select(kind, saddle=i)),
                                                default=0),
                                   "truncated": bool(cut)}
            for (i, kind), cut in page["manifolds"].truncated.items()},
        "homoclinic": {"n_points": int(is_h.sum()),
                       "n_heteroclinic": 0 if homoclinic is None else int((~is_h).sum()),
                       "transversal": 0 if homoclinic is None else int(homoclinic.transversal[is_h].sum()),
                       "invertible": 0 if homoclinic is None else int(homoclinic.invertible[is_h].sum()),
                       "proves_chaos": bool(homoclinic is not None and homoclinic.proves_chaos)},
        "nearest_saddle": None if near is None else {
            "state": page["nearest_saddle"].tolist(),
            "manifolds": {kind: {"pieces": len(near.select(kind)),
                                 "depth": max((p.depth for p in near.select(kind)), default=0),
                                 "truncated": bool(near.truncated.get((0, kind), False))}
                          for kind in ("stable", "unstable")},
            "homoclinic": page["near_counts"]},
    }
    return write_outputs(out_dir, summary, {"plrnn_lorenz.png": page["fig"]})


if __name__ == "__main__":
    args = page_parser(__doc__, "runs/example_plrnn_lorenz").parse_args()
    print(json.dumps(main(args.tiny, args.out_dir), indent=1))
