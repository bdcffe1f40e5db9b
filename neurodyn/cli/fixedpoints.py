"""``neurodyn fixedpoints MODEL``: find fixed points (and k-cycles) of a saved network."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from neurodyn._checks import check_finite
from neurodyn.cli._common import (
    check_netcdf_writer,
    check_outputs,
    parse_vector,
    warn_training_status,
    write_result_and_figure,
)

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fixedpoints",
        help="find fixed points / slow points of a saved network and their stability",
        description=(
            "Find the fixed points of a network's one-step map at a constant input (Sussillo & "
            "Barak 2013). MODEL is a neurodyn checkpoint, a state_dict of a torch.nn.RNN/GRU/LSTM, "
            "or (with --arch) a .npz/.mat file of PLRNN arrays. Initial states come from --states, "
            "else from rollouts of the checkpoint's task, else from free rollouts under noise input."
        ),
    )
    p.add_argument("model", help="model file (.pt checkpoint or state_dict; .npz/.mat with --arch)")
    p.add_argument("--arch", default=None,
                   help="architecture of a plain state_dict or array file: rnn_tanh, rnn_relu, gru, lstm, "
                        "plrnn, shplrnn, clipped-shplrnn, alrnn")
    p.add_argument("--n-inits", type=int, default=1024, help="number of initial states (default 1024)")
    p.add_argument("--input", default=None, help="constant input u*, comma-separated (default zeros)")
    p.add_argument("--states", default=None,
                   help=".npy of initial states (n, unit) or trajectories (trial, time, unit)")
    p.add_argument("--noise-scale", type=float, default=0.0,
                   help="std of Gaussian noise added to initial states")
    p.add_argument("--max-order", type=int, default=1, help="also search k-cycles up to this order")
    p.add_argument("--exhaustive", action="store_true",
                   help="PLRNN family: enumerate all linear regions (small systems only)")
    p.add_argument("--attractors", action="store_true",
                   help="PLRNN family: only the cycles that --n-inits orbits (or --states) settle on, solved "
                        "exactly; reaches long periods (set --max-order above the period)")
    p.add_argument("--n-transient", type=int, default=5000,
                   help="--attractors: steps each orbit runs before its return is checked (default 5000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the initial states and noise (default 0)")
    p.add_argument("--out", default=None, help="netCDF file for the results (e.g. fixedpoints.nc)")
    p.add_argument("--plot", default=None, help="figure file (e.g. fixedpoints.png)")
    p.add_argument("--overwrite", action="store_true", help="replace existing --out/--plot files")
    p.set_defaults(func=run)


def load_states(path: str, state_size: int, hint: str = "") -> np.ndarray:
    """Read initial states from ``.npy``: (n, unit) or (trial, time, unit).

    ``hint`` is appended to the shape error (e.g. how an LSTM's state is laid out).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For a file that is not a numeric ``.npy`` array, a wrong trailing size, other ranks, or NaN/Inf.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.is_dir():
        raise ValueError(f"--states {p} is a directory; give a .npy file")
    try:
        arr = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise ValueError(
            f"--states {p} is not a numeric .npy array; save one with numpy.save(path, states)"
        ) from None
    if not isinstance(arr, np.ndarray) or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"--states {p} is not a numeric .npy array; save one with numpy.save(path, states)"
        )
    if arr.ndim not in (2, 3) or arr.shape[-1] != state_size:
        raise ValueError(
            f"--states must have shape (n, {state_size}) or (trial, time, {state_size}); "
            f"got {arr.shape}{hint}"
        )
    check_finite(arr, str(p))
    return arr.astype(np.float64)


def run(args: argparse.Namespace) -> int:
    from neurodyn.io import load_model

    check_outputs(args.out, args.plot, overwrite=args.overwrite, inputs=[args.model, args.states],
                  figures=[args.plot])
    if args.out:
        check_netcdf_writer()
    if args.n_inits < 1:
        raise ValueError(f"--n-inits must be >= 1, got {args.n_inits}")
    if args.max_order < 1:
        raise ValueError(f"--max-order must be >= 1, got {args.max_order}")
    if args.n_transient < 0:
        raise ValueError(f"--n-transient must be >= 0, got {args.n_transient}")
    if not args.noise_scale >= 0:  # also catches NaN
        raise ValueError(f"--noise-scale must be >= 0, got {args.noise_scale}")
    loaded = load_model(args.model, arch=args.arch)
    warn_training_status("fixedpoints", args.model, loaded.checkpoint)
    model = loaded.model
    u = (
        parse_vector(args.input, model.n_inputs)
        if args.input is not None
        else np.zeros(model.n_inputs)
    )
    hint = ""
    if type(model).__name__ == "LSTM":
        hint = f" (an LSTM's state is h and c joined: 2 x {model.state_size // 2} units)"
    states = load_states(args.states, model.state_size, hint) if args.states else None
    result, trajectories = _search(model, loaded.task, u, states, args)
    print(f"{args.model}: {type(model).__name__} with {model.state_size} state dims, input {u.tolist()}")
    print(result.summary())
    ds = fig = None
    if args.out:
        ds = result.to_xarray()
        ds.attrs["model_file"] = str(args.model)
    if args.plot:
        title = f"{Path(args.model).name}: {type(model).__name__}, {model.state_size} state dims"
        title += f", input u* = {u.tolist()}" if u.size else ", no input"
        fig = _figure(result, trajectories, title)
    if args.out or args.plot:  # both files or, on failure, neither
        write_result_and_figure(ds, args.out, fig, args.plot)
        print("\n".join(f"wrote {p}" for p in (args.out, args.plot) if p))
    return 0


def _search(model, task, u, states, args):
    """Run the search; return the result and trajectories for the figure (or None)."""
    from neurodyn.analysis import find_cycles, find_fixed_points
    from neurodyn.models.piecewise import is_piecewise_linear

    if args.attractors:
        if not is_piecewise_linear(model):
            raise ValueError("--attractors needs a PLRNN, ShallowPLRNN or ALRNN model")
        if args.exhaustive:
            raise ValueError("--attractors and --exhaustive exclude each other; choose one")
        if args.noise_scale > 0:
            raise ValueError("--noise-scale has no effect with --attractors (orbits start from --states or "
                             "random states scaled to the map); drop it")
        from neurodyn.analysis import find_attracting_cycles

        starts = None if states is None else states.reshape(-1, states.shape[-1])
        result = find_attracting_cycles(model, starts, n_inits=args.n_inits, n_transient=args.n_transient,
                                        max_order=args.max_order, u=u, seed=args.seed)
    elif is_piecewise_linear(model):  # exact search: fixed points and k-cycles by region (SCYFI)
        result = find_cycles(model, max_order=args.max_order, exhaustive=args.exhaustive,
                             seed=args.seed, u=u)
    elif args.exhaustive:
        raise ValueError("--exhaustive needs a PLRNN, ShallowPLRNN or ALRNN model")
    else:
        result = find_fixed_points(
            model, inputs=u, initial_states=states, task=task if states is None else None,
            n_inits=args.n_inits, noise_scale=args.noise_scale, seed=args.seed,
            max_order=args.max_order,
        )
    trajectories = states if states is not None and states.ndim == 3 else None
    if trajectories is None and task is not None:
        import torch

        batch = task.sample(32, seed=args.seed)
        dtype = next(model.parameters()).dtype
        with torch.no_grad():
            trajectories = model(torch.as_tensor(batch.inputs, dtype=dtype), noise=False).states.numpy()
    return result, trajectories


def _figure(result, trajectories, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from neurodyn.plotting import plot_eigenvalues, plot_fixed_points

    fig = plt.figure(figsize=(11, 5))
    three_d = result.states.shape[1] >= 3
    ax1 = fig.add_subplot(1, 2, 1, projection="3d" if three_d else None)
    plot_fixed_points(result, trajectories=trajectories, ax=ax1)
    orders = np.asarray(getattr(result, "order", np.ones(0)))
    what = "Fixed points and cycles" if np.any(orders > 1) else "Fixed points"
    if result.states.shape[1] <= 3:
        ax1.set_title(f"{what} in the state coordinates", fontsize=10)
    else:
        basis = "network trajectories (grey)" if trajectories is not None else "the points"
        ax1.set_title(f"{what}, top principal components of {basis}", fontsize=10)
    ax2 = fig.add_subplot(1, 2, 2)
    plot_eigenvalues(result, ax=ax2)
    jac = "Jacobian (cycles: monodromy)" if np.any(orders > 1) else "Jacobian"
    ax2.set_title(f"{jac} eigenvalues of each point (dashed: unit circle)", fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
