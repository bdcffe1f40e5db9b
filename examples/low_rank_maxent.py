"""Maximum-entropy loadings on three ground-truth low-rank networks: bistable, limit cycle, ring.

Usage: python examples/low_rank_maxent.py [--tiny] [--out-dir runs/example_low_rank_maxent]
                                          [--cases bistable,cycle,ring] [--n-units N] [--n-epochs E]
                                          [--plain-epochs P] [--seeds 0,1,2]

The example's one source is the gallery page docs/gallery/low_rank.py, which the documentation site
executes. For each ground-truth network (tanh, alpha = 0.2), the maximum-entropy loading distribution that
keeps its latent dynamics is fitted (neurodyn.analysis.fit_maxent_loadings), networks are sampled from it,
and their dynamics are compared with the ground truth:

* bistable (rank 1, heavy-tailed m ~ Student t with 6 degrees of freedom, n = 2.2 m + 0.5 noise): the
  stable fixed points found by find_fixed_points (count and latent position kappa*), and the excess
  kurtosis of m (6 / (6 - 4) = 3 in the population);
* limit cycle (rank 2, overlap [[2, -1], [1, 2]]): the period of the latent oscillation, in time steps;
* ring attractor (rank 2, overlap 2 I): the radius of the fixed points found and its spread.

A plain LowRankRNN is also fitted to each ground truth's trajectories by generalized teacher forcing
(neurodyn.training.fit_teacher_forcing, identity observation: one unit per ground-truth neuron), brought
to the ground truth's gauge (its m regressed on the truth's, unit by unit), and its loadings compared
with the ground truth's by neurodyn.analysis.compute_loading_structure: correlations between loading
components the ground truth does not have (family-wise permutation threshold at level 0.05), skew and
excess kurtosis; a sample of the max-ent law gets the same comparison.

With --seeds, each case also gets the comparison at equal dynamics error: for each fit seed (the ground
truth's is fixed), a plain fit and a max-ent law whose tolerance is the plain fit's own dynamics error,
and the entropy of both loading distributions (m, n) in nats per neuron from the same estimator (a flow
fitted to the loadings), written to equal_error.json.

Writes results.json and low_rank_maxent.png (the first case's loadings) under --out-dir and prints a
table. Uses only the public API. ``--tiny`` is 200 units, 30 flow epochs, 3 sampled networks per case and
40 plain-fit epochs (the site runs the page smaller still: the bistable case at 100 units); the default
is 500 units, 100 epochs, 5 and 100.
"""

from __future__ import annotations

from _gallery import page_parser, run_page, write_outputs


def main(*, tiny: bool = False, out_dir: str = "runs/example_low_rank_maxent",
         cases: tuple[str, ...] = ("bistable", "cycle", "ring"), n_units: int | None = None,
         n_epochs: int | None = None, plain_epochs: int | None = None,
         seeds: tuple[int, ...] = ()) -> list[dict]:
    if tiny:  # the sizes the guide quotes for --tiny (the site's own are smaller still)
        n_units = 200 if n_units is None else n_units
        n_epochs = 30 if n_epochs is None else n_epochs
        plain_epochs = 40 if plain_epochs is None else plain_epochs
    page = run_page("low_rank", tiny=tiny, cases=",".join(cases), n_units=n_units, n_epochs=n_epochs,
                    n_samples=3 if tiny else None, plain_epochs=plain_epochs,
                    seeds=",".join(map(str, seeds)) or None)
    if seeds:
        write_outputs(out_dir, page["equal_error"], summary_name="equal_error.json")
    return write_outputs(out_dir, page["results"], {"low_rank_maxent.png": page["fig"]},
                         summary_name="results.json")


if __name__ == "__main__":
    parser = page_parser(__doc__, "runs/example_low_rank_maxent")
    parser.add_argument("--cases", default="bistable,cycle,ring", help="comma-separated cases to run")
    parser.add_argument("--n-units", type=int, default=None, help="override the network size")
    parser.add_argument("--n-epochs", type=int, default=None, help="override the flow's training epochs")
    parser.add_argument("--plain-epochs", type=int, default=None,
                        help="epochs of the plain teacher-forcing fit (0: skip it)")
    parser.add_argument("--seeds", default="", help="comma-separated fit seeds of the equal-error comparison")
    args = parser.parse_args()
    main(tiny=args.tiny, out_dir=args.out_dir, cases=tuple(args.cases.split(",")), n_units=args.n_units,
         n_epochs=args.n_epochs, plain_epochs=args.plain_epochs,
         seeds=tuple(int(k) for k in args.seeds.split(",") if k.strip()))
