"""``neurodyn manifolds MODEL``: stable/unstable manifolds of the saddles of a PL network.

Find the fixed points and k-cycles of a PLRNN / shallow PLRNN / ALRNN exactly, then build the stable
and unstable manifolds of its saddles piece by piece per linear region (Eisenmann et al., ICLR 2026)
and look for homoclinic points. MODEL is a neurodyn checkpoint or (with --arch) a .npz/.mat file of
PLRNN arrays.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neurodyn.cli._common import (
    add_command,
    add_model_file,
    add_result_files,
    check_bounds,
    check_outputs,
    load_for_analysis,
    parse_vector,
    write_analysis,
)

__all__ = ["run"]

HELP = "stable/unstable manifolds of saddle fixed points and cycles of a PLRNN-family model"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn manifolds MODEL`` and its cycle, manifold and output options."""
    p = add_command(sub, __name__)
    add_model_file(p, state_dicts=False)
    p.add_argument("--max-order", type=int, default=1, help="search cycles up to this order (default 1)")
    p.add_argument("--exhaustive", action="store_true",
                   help="enumerate all linear regions in the cycle search (small systems only)")
    p.add_argument("--kind", choices=("both", "stable", "unstable"), default="both")
    p.add_argument("--max-depth", type=int, default=20,
                   help="map applications from each saddle's local piece (default 20)")
    p.add_argument("--max-pieces", type=int, default=2000,
                   help="cap on the pieces of one manifold of one saddle (default 2000)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="cap on the CPU seconds spent growing one manifold of one saddle; the pieces "
                        "found so far are kept and the manifold is reported truncated (default: none)")
    p.add_argument("--box", type=float, default=None,
                   help="half-width of the bounding box (default 10 + 2 max|z| over the cycles)")
    p.add_argument("--input", default=None, help="constant input, comma-separated (default zeros)")
    p.add_argument("--dims", default="0,1",
                   help="state dimensions to plot with --plot, 2 or 3 (default 0,1)")
    p.add_argument("--seed", type=int, default=0)
    add_result_files(p, what="manifolds", stem="manifolds")


def run(args: argparse.Namespace) -> int:
    """Find the cycles of a PLRNN-family model, build the manifolds of its saddles, look for homoclinic
    points, print a summary and write the requested files; returns the exit status.

    Examples
    --------
    The Lozi map ``x' = 1 + y - 1.7|x|, y' = 0.5 x`` as a PLRNN has two saddle fixed points:

    >>> import contextlib
    >>> import io
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.cli.manifolds import run
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     model = Path(tmp) / "lozi.npz"
    ...     np.savez(model, A=[[1.7, 1.0], [0.5, 0.0]], W=[[-3.4, 0.0], [0.0, 0.0]], h=[1.0, 0.0])
    ...     args = build_parser().parse_args(["manifolds", str(model), "--arch", "plrnn", "--max-depth", "1"])
    ...     with contextlib.redirect_stdout(io.StringIO()) as report:
    ...         status = run(args)
    >>> print(report.getvalue().replace(tmp, "TMP"))
    TMP/lozi.npz: PLRNN with 2 latent dims
    order  stable  saddle  unstable  marginal  complete
        1       0       2         0         0        no
    (method exact; 'complete' = proven by enumeration)
    saddle 0 (period 1): ok; 3 stable and 3 unstable pieces
    saddle 1 (period 1): ok; 3 stable and 3 unstable pieces
    ...
    >>> status
    0
    """
    from neurodyn.analysis.plrnn import find_cycles
    from neurodyn.analysis.plrnn.homoclinic import find_homoclinic_points
    from neurodyn.analysis.plrnn.manifolds import find_manifolds
    from neurodyn.models.piecewise import is_piecewise_linear

    check_outputs(args.out, args.plot, overwrite=args.overwrite, inputs=[args.model], figures=[args.plot],
                  netcdf=[("--out", args.out)])
    if args.max_order < 1 or args.max_depth < 0 or args.max_pieces < 1:
        raise ValueError("need --max-order >= 1, --max-depth >= 0 and --max-pieces >= 1")
    check_bounds(args, (("--seed", "seed", 0, True),))
    if args.max_seconds is not None and not 0 < args.max_seconds < float("inf"):
        raise ValueError(f"--max-seconds must be a positive number of CPU seconds, got {args.max_seconds}; "
                         "leave it out for no time cap")
    try:
        dims = tuple(int(d) for d in args.dims.split(","))
    except ValueError:
        raise ValueError(f"--dims must be 2 or 3 comma-separated state dimensions, got {args.dims!r}"
                         ) from None
    if args.plot and len(set(dims)) != len(dims):
        raise ValueError(f"--dims {args.dims} names a dimension twice; give 2 or 3 different state "
                         "dimensions")
    model = load_for_analysis("manifolds", args.model, arch=args.arch).model
    if not is_piecewise_linear(model):
        raise ValueError(f"{args.model} holds a {type(model).__name__}; manifolds need a PLRNN, "
                         "ShallowPLRNN or ALRNN (use `neurodyn fixedpoints` for smooth models)")
    u = parse_vector(args.input, model.n_inputs) if args.input is not None else None
    if args.plot and (len(dims) not in (2, 3) or max(dims) >= model.state_size or min(dims) < 0):
        raise ValueError(f"--dims must name 2 or 3 of the {model.state_size} state dimensions")
    cycles = find_cycles(model, max_order=args.max_order, exhaustive=args.exhaustive, u=u,
                         seed=args.seed)
    result = find_manifolds(model, cycles, kind=args.kind, max_depth=args.max_depth,
                            box=args.box, max_pieces=args.max_pieces, max_seconds=args.max_seconds,
                            u=u, seed=args.seed)
    print(f"{args.model}: {type(model).__name__} with {model.state_size} latent dims")
    print(cycles.summary())
    for i, s in enumerate(result.saddles):
        if s.status == "not_saddle":
            continue
        n_s, n_u = len(result.select("stable", i)), len(result.select("unstable", i))
        cut = [k for k in ("stable", "unstable") if result.truncated.get((i, k))]
        print(f"saddle {i} (period {len(s.points)}): {s.status}; {n_s} stable and {n_u} unstable "
              f"pieces{' (truncated: ' + ', '.join(cut) + ')' if cut else ''}")
    for w in result.warnings:
        print(f"warning: {w}")
    if result.select("stable") and result.select("unstable"):
        print(find_homoclinic_points(model, result, u=u).report())
    write_analysis(args, result, lambda: _figure(model, cycles, result, dims, u, source=args.model))
    return 0


def _figure(model, cycles, result, dims, u, source: str = "model"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from neurodyn.models.piecewise import pl_system
    from neurodyn.plotting._style import state_axis_label
    from neurodyn.plotting.phase_portrait import plot_phase_portrait

    fig = plt.figure(figsize=(6, 5))
    ax = fig.add_subplot(projection="3d" if len(dims) == 3 else None)
    system = pl_system(model, u)
    base = np.zeros(system.n_latent)
    plot_phase_portrait(system, cycles=cycles, manifolds=result, ax=ax, dims=dims, base=base)
    kinds = sorted({p.kind for p in result.pieces})
    shown = " and ".join(kinds) + " manifolds" if kinds else "no manifold pieces"
    where = ("in " if len(dims) == system.n_latent else "projected onto ") + ", ".join(
        state_axis_label(d) for d in dims)
    ax.set_title(f"{Path(str(source)).name}: saddles and their {shown}\n{where}", fontsize=10)
    fig.tight_layout()
    return fig
