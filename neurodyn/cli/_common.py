"""Helpers shared by the sub-commands: output guards, safe writes, shared options and argument parsing."""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy and the rest load inside the functions: `neurodyn --help` stays fast
    import numpy as np


def check_outputs(
    *paths: str | Path | None,
    overwrite: bool = False,
    inputs: Iterable[str | Path | None] = (),
    figures: Iterable[str | Path | None] = (),
    netcdf: Iterable[tuple[str, str | Path | None]] = (),
) -> None:
    """Refuse unusable outputs; called before any work starts, so nothing is computed in vain.

    Hidden temporary files that a killed earlier run left beside the outputs are removed.

    Parameters
    ----------
    *paths : path-like or None
        Output files (None entries are skipped).
    overwrite : bool
        Allow replacing existing files (never directories, never an input file).
    inputs : iterable of path-like
        Files the command reads; an output may not be one of them, even with ``overwrite``.
    figures : iterable of path-like
        Outputs that are figures; their suffix must be a format matplotlib writes.
    netcdf : iterable of (flag, path-like)
        Outputs written as netCDF, each with the flag that names it; their suffix must be ``.nc``
        (so that a result never lands in, or replaces, a file of another format).

    Raises
    ------
    FileExistsError
        An output is an existing file (without ``overwrite``), a directory, an input file, the
        same file as another output, or its folder is a file.
    PermissionError
        An output's folder cannot be written.
    ValueError
        A figure's suffix is not an image format, or a netCDF output's is not ``.nc``.
    """
    given = [Path(p) for p in paths if p is not None]
    for p in [*given, *(Path(f) for f in figures if f is not None)]:
        from neurodyn._result import remove_stale_temporaries

        remove_stale_temporaries(p)  # left by a killed earlier run
    read = {Path(p).resolve() for p in inputs if p is not None}
    seen: dict[Path, Path] = {}
    for p in given:
        if p.is_dir():
            raise FileExistsError(f"{p} is a directory; give a file name inside it")
        if p.resolve() in read:
            raise FileExistsError(f"{p} is an input file of this command; choose another output name")
        if p.resolve() in seen:
            raise FileExistsError(f"{seen[p.resolve()]} and {p} are the same file; give two names")
        seen[p.resolve()] = p
        if p.exists() and not overwrite:
            raise FileExistsError(f"{p} exists; pass --overwrite to replace it")
        _check_folder(p)
    for flag, p in netcdf:
        check_result_suffix(flag, p)
    for f in figures:
        if f is not None:
            check_figure_suffix(f)


def _check_folder(path: Path) -> None:
    """The nearest existing ancestor of ``path`` must be a writable directory."""
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise FileExistsError(f"cannot write {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write {path}: no write permission in {folder}")


#: API names in training messages and the flags that set them
_FLAGS = {"lr (now": "--lr (now", "clip_grad_norm": "--clip-grad-norm", "lower lam": "lower --lambda",
          "(gain, spectral_radius)": "(--gain, --spectral-radius)"}


#: Python argument names in recording-loader messages and the flags that set them
_LOADER_FLAGS = {"drop them with .select_channels(...) or the loader's drop_constant=True":
                 "drop them with --drop-constant (or keep others with --channels)",
                 "choose one with key=": "choose one with --key",
                 "inputs were asked for (input_key / --input-key": "inputs were asked for (--input-key",
                 "a key (key= / --key": "a key (--key",
                 "a bin size (bin_size= / --bin-size": "a bin size (--bin-size",
                 "add transpose=True": "add --transpose",
                 "pass dt= (seconds) to load_timeseries": "pass --dt (seconds)",
                 "pass dt= (seconds)": "pass --dt (seconds)",
                 "read with transpose=True": "read with --transpose"}


def _loader_flags(message: str) -> str:
    """A recording loader's message with command-line flags for the Python arguments it names."""
    for name, flag in _LOADER_FLAGS.items():
        message = message.replace(name, flag)
    return message


def load_recording(path: str | Path, **options: Any) -> Any:
    """:func:`neurodyn.io.load_timeseries` whose error and warning messages name command-line flags,
    not arguments."""
    from neurodyn.io import load_timeseries

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ts = load_timeseries(path, **options)
    except ValueError as err:
        raise ValueError(_loader_flags(str(err))) from None
    for w in caught:
        warnings.warn(_loader_flags(str(w.message)), w.category, stacklevel=2)
    return ts


def train_quietly(fit: Any, *args: Any, deterministic: bool = False, **kwargs: Any) -> Any:
    """``fit(*args, **kwargs)`` without the divergence warning, which :func:`save_trained` reports;
    with ``deterministic`` (``--deterministic``): one thread, deterministic algorithms (restored after)."""
    from neurodyn.training._config import deterministic_mode

    with warnings.catch_warnings(), deterministic_mode(deterministic):
        warnings.filterwarnings("ignore", message=".*training diverged", category=RuntimeWarning)
        return fit(*args, **kwargs)


def save_trained(command: str, path: str | Path, result: Any, *, overwrite: bool, **checkpoint: Any) -> int:
    """Save ``result.model`` to ``path`` unless training diverged; return the exit status (0 or 1).

    A diverged model never replaces a file at ``path``: its last finite weights go to the side file
    ``<stem>.diverged<suffix>`` (if an iteration finished, and unless that file exists without
    ``overwrite``), and one line on stderr says where training diverged and what to change.
    ``checkpoint`` holds the other arguments of :func:`neurodyn.io.save_checkpoint`. An interrupted
    training (Ctrl-C) saves its weights, marked ``status: "interrupted"``, and returns 130.
    """
    from neurodyn.io import save_checkpoint

    training = checkpoint.pop("training", result.config)
    if result.status == "interrupted":
        return _save_interrupted(command, path, result, training, checkpoint)
    if result.status != "diverged":
        save_checkpoint(path, result.model, training=training, overwrite=overwrite, **checkpoint)
        print(f"saved {path}")
        return 0
    path = Path(path)
    side = path.with_name(f"{path.stem}.diverged{path.suffix}")
    name = "iteration" if "iterations_run" in training else "epoch"
    if not training.get(f"{name}s_run"):
        kept = f"no {name} finished, nothing was saved"
    elif side.exists() and not overwrite:
        kept = f"{side} exists (pass --overwrite to replace it)"
    else:
        save_checkpoint(side, result.model, training=training, overwrite=True, **checkpoint)
        kept = f"its last finite weights are in {side}"
    message = result.divergence["message"]
    for name, flag in _FLAGS.items():
        message = message.replace(name, flag)
    print(f"neurodyn {command}: error: {message}; {path} was not written, {kept}", file=sys.stderr)
    return 1


def _save_interrupted(command: str, path: str | Path, result: Any, training: dict, checkpoint: dict) -> int:
    """Save the weights kept when Ctrl-C ended training (status "interrupted"); one line on stderr; 130."""
    from neurodyn.io import save_checkpoint

    name = "iteration" if "iterations_run" in training else "epoch"
    n_run = training.get(f"{name}s_run") or 0
    if not n_run:
        print(f"neurodyn {command}: interrupted before the first {name} finished; nothing was saved",
              file=sys.stderr)
        return 130
    save_checkpoint(path, result.model, training=training, overwrite=True, **checkpoint)
    kept = "the best weights so far" if (training.get("early_stopping") or {}).get("restored_best") \
        else f"the weights after {n_run} {name}s"
    print(f"neurodyn {command}: interrupted; saved {kept} to {path} (marked interrupted)", file=sys.stderr)
    return 130


def load_for_analysis(command: str, path: str | Path, *, arch: str | None = None) -> Any:
    """:func:`neurodyn.io.load_model` of ``path``, with :func:`warn_training_status`'s line on stderr for a
    diverged, interrupted or untrained model."""
    from neurodyn.io import ModelFileError, load_model
    from neurodyn.io.foreign import PlainRNNNeedsArch

    try:
        loaded = load_model(path, arch=arch)
    except PlainRNNNeedsArch:
        if command == "fixedpoints":  # the only command whose --arch takes rnn_tanh / rnn_relu
            raise
        needs = ("the .pt file that `neurodyn fit` saved" if command == "evaluate" else
                 "a PLRNN, ShallowPLRNN or ALRNN (a neurodyn checkpoint, or .npz/.mat with --arch)")
        raise ModelFileError(f"{path} holds a plain torch.nn.RNN state_dict; `neurodyn {command}` needs "
                             f"{needs}") from None
    warn_training_status(command, path, loaded.checkpoint)
    return loaded


def warn_training_status(command: str, path: str | Path, checkpoint: Any) -> None:
    """One line on stderr if ``checkpoint`` (or None) holds a diverged, interrupted or untrained model."""
    from neurodyn.io.checkpoint import training_status

    status = None if checkpoint is None else training_status(checkpoint.training)
    if status == "diverged":
        where = (checkpoint.training.get("divergence") or {}).get("message", "training diverged")
        print(f"neurodyn {command}: warning: {path} holds a diverged model ({where.split(';')[0]}); "
              "the results describe its last finite weights", file=sys.stderr)
    elif status == "interrupted":
        name = "iteration" if "iterations_run" in checkpoint.training else "epoch"
        n_run = checkpoint.training.get(f"{name}s_run")
        print(f"neurodyn {command}: warning: {path} holds a model whose training was interrupted (Ctrl-C) "
              f"after {n_run} {name}s; the results describe those weights", file=sys.stderr)
    elif status == "untrained":
        print(f"neurodyn {command}: warning: {path} holds an untrained model (no iteration finished); "
              "the results describe its initial weights", file=sys.stderr)


def check_result_suffix(flag: str, path: str | Path | None) -> None:
    """Raise ``ValueError`` unless the netCDF output ``path`` (given with ``flag``; None: none) ends in
    ``.nc``, so that a result never lands in, or replaces, a file of another format."""
    if path is not None and Path(path).suffix.lower() != ".nc":
        raise ValueError(f"{flag} {path}: results are written as netCDF; end the name in .nc")


def progress_enabled(quiet: bool = False) -> bool:
    """Whether to show a progress bar: on a terminal (stderr is a TTY) unless ``--quiet``."""
    return not quiet and sys.stderr.isatty()


def check_figure_suffix(path: str | Path) -> None:
    """Raise ``ValueError`` unless ``path`` ends in a format matplotlib writes (png, pdf, svg, ...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in formats:
        raise ValueError(
            f"--plot {path}: {'no suffix' if not suffix else repr('.' + suffix)} is not an image format; "
            f"end the name in one of {', '.join('.' + f for f in sorted(formats))}"
        )


def check_netcdf_writer() -> None:
    """Raise ``ImportError`` (naming the package to install) if netCDF files cannot be written."""
    import importlib.util

    for name in ("h5netcdf", "h5py"):
        if importlib.util.find_spec(name) is None:
            raise ImportError(
                f"writing netCDF (--out) needs the package {name}, which is not installed; "
                f"run: pip install {name}"
            )


def write_netcdf(ds, path: str | Path) -> None:
    """Write an ``xarray.Dataset`` (engine h5netcdf); an existing file is replaced only on success."""
    write_result_and_figure(ds, path, None, None)


def parse_vector(text: str, n: int, what: str = "--input") -> np.ndarray:
    """Parse ``"0,0.5,-1"`` into a float array of length ``n``.

    Raises
    ------
    ValueError
        If the text is not comma-separated numbers or has the wrong length.
    """
    import numpy as np

    from neurodyn._checks import check_finite

    try:
        values = np.array([float(v) for v in text.split(",")], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{what} must be comma-separated numbers, got {text!r}") from None
    if n == 0:
        raise ValueError(f"the model has no inputs; drop {what}")
    if values.shape != (n,):
        raise ValueError(
            f"{what} has {values.size} values but the model has {n} inputs; give {n} comma-separated numbers"
        )
    check_finite(values, what)
    return values


def write_result_and_figure(ds, out: str | Path | None, fig, plot: str | Path | None) -> None:
    """Write a dataset (netCDF, to ``out``) and a figure (to ``plot``) as a pair: both are replaced or,
    after a failure or a kill, neither. Either may be None. The figure is closed."""
    from neurodyn._result import write_atomically_together, write_result_file

    writes = {}
    if out is not None:
        writes[out] = lambda tmp: write_result_file(ds, tmp)
    if plot is not None:
        fmt = Path(plot).suffix.lower().lstrip(".") or None
        writes[plot] = lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight", format=fmt)
    try:
        write_atomically_together(writes)
    finally:
        if fig is not None:
            import matplotlib.pyplot as plt

            plt.close(fig)


def write_analysis(args: Any, result: Any, figure: Callable[[], Any]) -> None:
    """Write the files an analysis command was asked for, as a pair (:func:`write_result_and_figure`), and
    print a ``wrote`` line for each: ``--out`` gets ``result.to_xarray()`` with the attribute ``model_file``
    (``args.model``), ``--plot`` the figure that ``figure()`` draws (called only then)."""
    ds = fig = None
    if args.out:
        ds = result.to_xarray()
        ds.attrs["model_file"] = str(args.model)
    if args.plot:
        fig = figure()
    if args.out or args.plot:  # both files or, on failure, neither
        write_result_and_figure(ds, args.out, fig, args.plot)
        print("\n".join(f"wrote {p}" for p in (args.out, args.plot) if p))


def add_command(sub: argparse._SubParsersAction, module: str) -> argparse.ArgumentParser:
    """Register the sub-command that the module ``module`` (``neurodyn.cli.<name>``, its ``__name__``)
    defines and return its parser: named ``<name>``, with the module's ``HELP`` as its help and the second
    paragraph of the module's docstring (the first names the command) as its description, double
    backquotes removed."""
    from_module = sys.modules[module]
    paragraphs = (from_module.__doc__ or "").split("\n\n")
    description = paragraphs[1].replace("``", "") if len(paragraphs) > 1 else None
    return sub.add_parser(module.rpartition(".")[2], help=from_module.HELP, description=description)


#: a numeric option's bound: (flag, attribute, smallest allowed value, whether the bound itself is allowed)
Bound = tuple[str, str, float, bool]


def add_result_files(p: argparse.ArgumentParser, *, what: str, stem: str) -> None:
    """``--out`` (netCDF file for the ``what``), ``--plot`` (figure file) and ``--overwrite`` of an analysis
    command; ``stem`` names the example files in the help (``fixedpoints.nc``, ``fixedpoints.png``)."""
    p.add_argument("--out", default=None, help=f"netCDF file for the {what} (e.g. {stem}.nc)")
    p.add_argument("--plot", default=None, help=f"figure file (e.g. {stem}.png)")
    p.add_argument("--overwrite", action="store_true", help="replace existing --out/--plot files")


#: architectures a PLRNN-family array file (.npz/.mat) may hold
PL_ARCHS = ("plrnn", "shplrnn", "clipped-shplrnn", "alrnn")


def add_model_file(p: argparse.ArgumentParser, *, state_dicts: bool) -> None:
    """``MODEL`` (the file an analysis command reads) and ``--arch`` (its architecture, for a file that does
    not name one); with ``state_dicts``, plain ``torch.nn.RNN/GRU/LSTM`` state_dicts are accepted too."""
    kinds, archs = ("checkpoint or state_dict", "a plain state_dict or array file") if state_dicts \
        else ("checkpoint", "an array file")
    names = ("rnn_tanh", "rnn_relu", "gru", "lstm", *PL_ARCHS) if state_dicts else PL_ARCHS
    p.add_argument("model", help=f"model file (.pt {kinds}; .npz/.mat with --arch)")
    p.add_argument("--arch", default=None, help=f"architecture of {archs}: {', '.join(names)}")


def add_training_run(g: argparse._ActionsContainer, *, result: str, fused: str, rollout: str) -> None:
    """``--no-progress``, ``--deterministic`` and ``--backend`` of a training command; ``result`` names what
    ``--deterministic`` reproduces (``"fit"``), ``fused`` the model the fused Numba path trains, ``rollout``
    the rollout that ``--backend`` chooses."""
    g.add_argument("--no-progress", action="store_true")
    g.add_argument("--deterministic", action="store_true",
                   help=f"one thread and deterministic algorithms: the same {result} at any thread count")
    g.add_argument("--backend", choices=("auto", "torch", "numba"), default="auto",
                   help=f"{rollout} rollout: auto = fused Numba forward + backward for {fused} on the CPU, "
                        "torch otherwise (recorded in the checkpoint)")


def add_checkpoint_file(g: argparse._ActionsContainer, *, default: str) -> None:
    """``--out`` (the checkpoint a training command writes, ``default`` if not given) and ``--overwrite``."""
    g.add_argument("--out", default=default, help=f"checkpoint to write (default {default})")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --out")


def check_bounds(args: argparse.Namespace, bounds: Iterable[Bound]) -> None:
    """Refuse a numeric option that is not finite or lies below its bound; options not given (None) pass.

    Raises
    ------
    ValueError
        ``"<flag> must be >= <low>, got <value>"`` (``>`` where the bound itself is not allowed).
    """
    for flag, name, low, closed in bounds:
        v = getattr(args, name)
        if v is None:
            continue
        if not math.isfinite(v) or v < low or (v == low and not closed):
            rel = ">=" if closed else ">"
            raise ValueError(f"{flag} must be {rel} {low}, got {v}")
