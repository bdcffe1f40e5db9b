"""Fit RNNs to the example recordings (ECG, EEG, macaque M1/S1 spike counts, fMRI, LFP) and score them.

Usage: python examples/fit_recordings.py [--tiny] [--out-dir DIR]

The example's one source is the five gallery pages docs/gallery/fit_{ecg,eeg,spikes,fmri,lfp}.py, which the
documentation site executes. This script runs them at full size (the sizes of the scores in
docs/fitting.md), or at the site's small sizes with --tiny (or NEURODYN_TINY=1), prints every page's
output, and writes the ECG figure with its attractor (ecg_attractor.png) and the table of scores of all
recordings (scores.md) into --out-dir (or NEURODYN_OUT; default runs/fit_recordings in the repository,
which git ignores). The recordings are read from NEURODYN_DATA or the first shared/data folder found
(see neurodyn.io.find_recordings); a page whose recording is absent fits its documented synthetic
stand-in and says so in a NOTE line. NEURODYN_FMRI_INPUTS adds the fMRI fit with the study's task inputs.
Uses only the public API.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
from _gallery import page_parser, run_page, write_outputs

REPO = Path(__file__).resolve().parents[1]
#: recording → its gallery page (docs/gallery/<page>.py)
PAGES = {"ECG": "fit_ecg", "EEG": "fit_eeg", "spikes": "fit_spikes", "fMRI": "fit_fmri", "LFP": "fit_lfp"}


def page_scores(name: str, page: dict) -> dict:
    """The ``ReconstructionResult`` objects a page computed, keyed by the row name of the score table."""
    if name == "spikes":
        return {f"{area} spikes": result for area, result in page["scores"].items()}
    found = {name: page["scores"]}
    if page.get("scores_inputs") is not None:
        found[f"{name} + inputs"] = page["scores_inputs"]
    return found


def score_table(scores: dict) -> str:
    """A Markdown table with one row per recording and model (fitted and baselines)."""
    lines = ["| data | model | D_stsp | D_H | PE(n) |", "|---|---|---|---|---|"]
    for name, res in scores.items():
        for i, model in enumerate(res.models):
            lines.append(f"| {name} | {model} | {res.d_stsp[i]:.3f} | {res.d_h[i]:.3f} | {res.pe[i]:.3f} |")
    return "\n".join(lines)


def main(*, tiny: bool = False, out_dir: str | os.PathLike | None = None, pages=tuple(PAGES)) -> dict:
    """Run the ``pages`` (keys of :data:`PAGES`), write the ECG figure and scores.md, return the scores."""
    out = Path(out_dir or REPO / "runs" / "fit_recordings")
    scores = {}
    for name in pages:
        page = run_page(PAGES[name], tiny=tiny)  # the page's variables
        scores.update(page_scores(name, page))
        if name == "ECG":
            write_outputs(out, None, {"ecg_attractor.png": page["axes"][0].figure})
            print(f"wrote {out / 'ecg_attractor.png'}")
        plt.close("all")
    table = score_table(scores)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scores.md").write_text(table + "\n")
    print(table)
    print(f"wrote {out / 'scores.md'}")
    return scores


if __name__ == "__main__":
    parser = page_parser(__doc__, str(REPO / "runs" / "fit_recordings"), from_env=True)
    parser.add_argument("--only", nargs="+", choices=list(PAGES), default=list(PAGES),
                        help="run only these recordings' pages")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, pages=args.only)
