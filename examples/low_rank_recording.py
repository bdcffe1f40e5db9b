"""Maximum-entropy loadings of a low-rank RNN fitted to macaque M1 spike counts.

Usage: python examples/low_rank_recording.py [--tiny] [--data-dir ../shared/data] [--rank 2]
                                             [--out-dir runs/example_low_rank_recording]

The example's one source is the gallery page docs/gallery/low_rank_recording.py, which the documentation
site executes. Data: ``reaching_m1_s1_spykesml/m1_stevenson_2011.mat`` from the shared recordings (171
units, 50 ms bins, centre-out reaching; Stevenson et al. 2011, J Neurophysiol 106:764, via
KordingLab/spykesML, MIT). The folder is found from ``--data-dir``, ``NEURODYN_DATA`` or the first
``shared/data`` above the working directory; without it the script stops with a message.

Steps, public API only:

1. bin and smooth: the most active units, counts summed into 100 ms bins, square root, Gaussian
   smoothing (sd 1.5 bins), z-scored with the training part's statistics and scaled by 1/4 so the
   rates sit inside tanh's range; the last 20 % of the time is held out;
2. fit a rank-R tanh ``LowRankRNN`` (one unit per recorded unit, identity observation, alpha = 0.2)
   by generalized teacher forcing (``fit_teacher_forcing``);
3. the identifiable statistics of its loadings (``compute_low_rank_statistics``) and the
   maximum-entropy loading law that keeps its latent dynamics (``fit_maxent_loadings``);
4. networks sampled from the law against the fitted one: stable points of the latent map
   (``find_fixed_points`` on ``latent_map``) and k-step prediction of the held-out latent trajectory
   ``kappa = n^T x / N`` (R^2); as controls, the same network with ``n`` shuffled across units
   (breaks the identified ``E[n | m, b]``, keeps every marginal) and persistence (``kappa[t+k] = kappa[t]``);
5. a figure (``low_rank_recording.png``), ``results.json`` and the law (``maxent.pt``) under ``--out-dir``.

``--tiny`` (the site's size): 30 units, 1500 bins, 2 x 3 training batches, 20 flow epochs, 8 check
networks, 2 samples. The default: every unit with spikes in both parts (up to 171), 60 x 20 batches of
32 windows of 30 bins, 100 flow epochs, 32 check networks, 5 samples.
"""

from __future__ import annotations

from pathlib import Path

from _gallery import page_parser, run_page, write_outputs

from neurodyn.io import find_recordings

FILE = Path("reaching_m1_s1_spykesml") / "m1_stevenson_2011.mat"


def main(*, tiny: bool = False, data_dir: str | None = None, rank: int = 2,
         out_dir: str = "runs/example_low_rank_recording", seed: int = 0) -> dict:
    folder = Path(data_dir) if data_dir else find_recordings()
    if folder is None or not (folder / FILE).is_file():
        raise SystemExit(f"recording not found at {Path(folder or 'shared/data') / FILE}; pass --data-dir or "
                         "set NEURODYN_DATA to the shared data folder")
    page = run_page("low_rank_recording", tiny=tiny, data=folder.resolve(), rank=rank, seed=seed)
    write_outputs(out_dir, page["results"], {"low_rank_recording.png": page["fig"]},
                  summary_name="results.json")
    page["law"].save(Path(out_dir) / "maxent.pt", overwrite=True)  # a rerun refreshes the example
    return page["results"]


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_low_rank_recording")
    parser.add_argument("--data-dir", default=None, help="shared data folder (holds reaching_m1_s1_spykesml)")
    parser.add_argument("--rank", type=int, default=2)
    args = parser.parse_args()
    main(tiny=args.tiny, data_dir=args.data_dir, rank=args.rank, out_dir=args.out_dir)
