"""A network trained on surrogate behaviour with swap errors vs a task-optimal one (Radmard, Bays & Lengyel,
"Setting up for failure", arXiv:2512.04808).

Usage: python examples/swap_errors.py [--tiny] [--seed 0] [--out-dir runs/example_swap_errors]

The example's one source is the gallery page docs/gallery/swap_errors.py, which the documentation site
executes. Surrogate reports of a two-item continuous-report task are drawn from the swap model of Bays et
al. (2009) with a 20 % swap rate (kappa 8, 70 % target, 10 % guesses). One network is trained on them with
the diffusion objective (its response-period dynamics denoise a ring-coded report); another, task-optimal,
is trained by plain BPTT to report the cued item. The swap model is fitted to the data and to each
network's own reports on held-out trials, and the cued and the uncued items are decoded from each
network's states at every step. This script runs the page at full size (minutes), or at the site's small
size with --tiny, with the networks' seed --seed, and writes summary.json (the three fits, the
decodability over time), the fits as .nc files and swap_errors.png (response-error histograms of data and
networks, decodability over the trial) into --out-dir. Uses only the public API.
"""

from __future__ import annotations

from pathlib import Path

from _gallery import page_parser, run_page, write_outputs

PARAMS = ("kappa", "p_target", "p_swap", "p_guess")


def main(tiny: bool = False, out_dir: str = "runs/example_swap_errors", seed: int = 0) -> dict:
    page = run_page("swap_errors", tiny=tiny, seed=int(seed))  # the page's variables
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, fit in page["fits"].items():
        fit.save(out / f"fit_{name}.nc", overwrite=True)  # a rerun refreshes the example
    summary = {"behaviour": page["swaps"], "settings": page["settings"], "periods_steps": page["periods"],
               "fits": {k: {p: float(getattr(f, p)) for p in PARAMS} for k, f in page["fits"].items()},
               "decodability_r2": page["decoded"]}
    return write_outputs(out, summary, {"swap_errors.png": page["fig"]}, dpi=110)


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_swap_errors")
    parser.add_argument("--seed", type=int, default=0, help="seed of both networks' weights and training")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, seed=args.seed)
