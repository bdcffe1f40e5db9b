"""``neurodyn fixedpoints MODEL``: find fixed points (and k-cycles) of a saved network.

Find the fixed points of a network's one-step map at a constant input (Sussillo & Barak 2013). MODEL
is a neurodyn checkpoint, a state_dict of a torch.nn.RNN/GRU/LSTM, or (with --arch) a .npz/.mat file
of PLRNN arrays. Initial states come from --states, else from rollouts of the checkpoint's task, else
from free rollouts under noise input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from neurodyn.cli._common import (
    add_command,
    add_model_file,
    add_result_files,
    check_bounds,
    check_netcdf_writer,
    check_outputs,
    load_for_analysis,
    parse_vector,
    progress_enabled,
    write_analysis,
)
from neurodyn.cli._flags import to_flag

if TYPE_CHECKING:
    import numpy as np

__all__ = ["run"]

HELP = "find fixed points / slow points of a saved network and their stability"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn fixedpoints MODEL`` and its search options."""
    p = add_command(sub, __name__)
    add_model_file(p, state_dicts=True)
    p.add_argument("--n-inits", type=int, default=1024, help="number of initial states (default 1024)")
    p.add_argument("--input", default=None,
                   help="constant input u*, comma-separated (default: the mean input of the task's delay "
                        "period, where the checkpoint or --task names a task with one; else zeros)")
    p.add_argument("--task", default=None, metavar="NAME",
                   help="a registered task (default options) whose trajectories start the search and whose "
                        "delay period gives u*; for state_dicts, which name none (default: the checkpoint's)")
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
    f = p.add_argument_group("search of smooth models (FixedPointFinder's settings; PLRNNs: exact)")
    f.add_argument("--method", default=None,
                   help="auto, newton, levenberg_marquardt, gradient, joint (default auto: damped Newton "
                        "on closed-form Jacobians)")
    f.add_argument("--tol-q", type=float, default=None, help="converged once q < TOL_Q (default 1e-12)")
    f.add_argument("--max-iters", type=int, default=None, help="iterations per candidate (default 5000)")
    f.add_argument("--tol-unique", type=float, default=None,
                   help="points closer than this in every unit are one point (default 1e-3)")
    add_result_files(p, what="results", stem="fixedpoints")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (one shows while searching when stderr is a terminal)")


def load_states(path: str, state_size: int, hint: str = "") -> np.ndarray:
    """Read initial states from ``.npy``: (n, unit) or (trial, time, unit).

    ``hint`` is appended to the shape error (e.g. how an LSTM's state is laid out).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        For a file that is not a numeric ``.npy`` array, complex values, a wrong trailing size, other
        ranks, or NaN/Inf.
    """
    import numpy as np

    from neurodyn._checks import check_finite

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.is_dir():
        raise ValueError(f"--states {p} is a directory; give a .npy file")
    try:
        arr = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        arr = None
    if not isinstance(arr, np.ndarray) or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"--states {p} is not a numeric .npy array; save one with numpy.save(path, states)"
        )
    if np.iscomplexobj(arr):
        raise ValueError(f"--states {p} holds complex values; save real states (numpy.save(path, x.real))")
    if arr.ndim not in (2, 3) or arr.shape[-1] != state_size:
        raise ValueError(
            f"--states must have shape (n, {state_size}) or (trial, time, {state_size}); "
            f"got {arr.shape}{hint}"
        )
    check_finite(arr, str(p))
    return arr.astype(np.float64)


def run(args: argparse.Namespace) -> int:
    """Find the fixed and slow points of a saved model, print a summary and write the requested files;
    returns the exit status.

    Examples
    --------
    >>> import contextlib
    >>> import io
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.cli.fixedpoints import run
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.io import load
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     model = Path(tmp) / "plrnn.npz"
    ...     np.savez(model, A=[0.5], W=[[0.0]], h=[1.0])  # z' = z / 2 + 1: one stable point, z* = 2
    ...     args = build_parser().parse_args(["fixedpoints", str(model), "--arch", "plrnn", "--n-inits", "4",
    ...                                       "--out", str(Path(tmp) / "fp.nc")])
    ...     with contextlib.redirect_stdout(io.StringIO()) as report:
    ...         status = run(args)
    ...     result = load(Path(tmp) / "fp.nc")
    >>> print(report.getvalue().replace(tmp, "TMP").rstrip())  # a PL model: the exact cycle search
    TMP/plrnn.npz: PLRNN, 1 latent dims, no input
    order  stable  saddle  unstable  marginal  complete
        1       1       0         0         0        no
    (method exact; 'complete' = proven by enumeration)
    wrote TMP/fp.nc
    >>> status, np.round(result.fixed_points().states, 6).tolist()
    (0, [[2.0]])
    """
    check_outputs(args.out, args.plot, overwrite=args.overwrite, inputs=[args.model, args.states],
                  figures=[args.plot], netcdf=[("--out", args.out)])
    if args.out:
        check_netcdf_writer()
    check_bounds(args, (("--n-inits", "n_inits", 1, True), ("--max-order", "max_order", 1, True),
                        ("--n-transient", "n_transient", 0, True), ("--seed", "seed", 0, True)))
    if not args.noise_scale >= 0:  # also catches NaN
        raise ValueError(f"--noise-scale must be >= 0, got {args.noise_scale}")
    loaded = load_for_analysis("fixedpoints", args.model, arch=args.arch)
    model = loaded.model
    task = _task(args.task, model) if args.task is not None else loaded.task
    if args.input is not None:
        u, condition = parse_vector(args.input, model.n_inputs), "--input"
    else:
        u, condition = delay_input(task, model.n_inputs)
    hint = ""
    if type(model).__name__ == "LSTM":
        hint = f" (an LSTM's state is h and c joined: 2 x {model.state_size // 2} units)"
    states = load_states(args.states, model.state_size, hint) if args.states else None
    result, trajectories = _search(model, task, u, states, args)
    shown = f"input u* = {_rounded(u)} ({condition})" if u.size else "no input"
    print(f"{args.model}: {loaded.description}, {shown}")
    print(result.summary())
    write_analysis(args, result, lambda: _figure(result, trajectories, f"{loaded.description}: {shown}"))
    return 0


def _task(name: str, model):
    """The registered task ``name`` (default options), checked against the model's sizes."""
    from neurodyn.tasks import TASKS, make_task

    if name not in TASKS:
        raise ValueError(f"--task {name!r} is not a registered task; choose one of "
                         f"{', '.join(sorted(TASKS))}")
    task = make_task(name)
    if (task.n_inputs, task.n_outputs) != (model.n_inputs, model.n_outputs):
        raise ValueError(f"--task {name} has {task.n_inputs} inputs / {task.n_outputs} outputs but the model "
                         f"has {model.n_inputs} / {model.n_outputs}; give the task it was trained on "
                         "(or --states)")
    return task


def delay_input(task, n_inputs: int):
    """``(u*, what it is)``: the mean noise-free input of ``task``'s delay period, else zeros.

    The mean runs over 128 trials (seed 0) and the steps of each trial's ``"delay"`` period, with the
    task's ``input_noise`` set to 0 (Romo's delay: fixation 1, stimulus 0).
    """
    import dataclasses

    import numpy as np

    if task is None or task.n_inputs != n_inputs:
        return np.zeros(n_inputs), "zeros"
    if any(f.name == "input_noise" for f in dataclasses.fields(task)):
        task = dataclasses.replace(task, input_noise=0.0)
    batch = task.sample(128, seed=0)
    if "delay" not in batch.periods:
        return np.zeros(n_inputs), f"zeros: {task.name} has no delay period"
    steps = [batch.inputs[i, s:e] for i, (s, e) in enumerate(batch.periods["delay"]) if e > s]
    if not steps:
        return np.zeros(n_inputs), f"zeros: {task.name}'s delay periods are empty"
    return np.concatenate(steps).mean(0), f"{task.name}'s delay period"


def _rounded(u) -> list[float]:
    return [round(float(v), 4) + 0.0 for v in u]


def _search(model, task, u, states, args):
    """Run the search; return the result and trajectories for the figure (or None)."""
    from neurodyn.analysis import find_cycles, find_fixed_points
    from neurodyn.models.piecewise import is_piecewise_linear

    if is_piecewise_linear(model) and search_settings(args):
        flags = ", ".join(to_flag(k) for k in search_settings(args))
        raise ValueError(f"{flags} tune the search of smooth models; a {type(model).__name__} is solved "
                         "exactly by linear region, so drop them")
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
            max_order=args.max_order, progress=progress_enabled(args.quiet), **search_settings(args),
        )
    trajectories = states if states is not None and states.ndim == 3 else None
    if trajectories is None and task is not None:
        import torch

        batch = task.sample(32, seed=args.seed)
        dtype = next(model.parameters()).dtype
        with torch.no_grad():
            trajectories = model(torch.as_tensor(batch.inputs, dtype=dtype), noise=False).states.numpy()
    return result, trajectories


def search_settings(args: argparse.Namespace) -> dict:
    """The FixedPointFinder-style options that were given, as :func:`find_fixed_points` arguments
    (it validates them: an unknown ``--method`` lists the known ones)."""
    given = {k: getattr(args, k) for k in ("method", "tol_q", "max_iters", "tol_unique")}
    return {k: v for k, v in given.items() if v is not None}


def _figure(result, trajectories, title: str):
    """The paper figure (:func:`neurodyn.plotting.plot_fixed_point_figure`): lettered panels, one legend."""
    import matplotlib

    matplotlib.use("Agg")
    from neurodyn.plotting import plot_fixed_point_figure

    return plot_fixed_point_figure(result, trajectories=trajectories, title=title)[0].figure
