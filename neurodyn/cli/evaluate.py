"""``neurodyn evaluate FIT [DATA]``: score a fitted model's free dynamics on held-out data.

Prints ``D_stsp``, ``D_H`` and ``PE(n)`` of the fitted model and of two baselines (a linear model
fitted by least squares and the training mean). Without DATA (or with the training file) the
held-out tail kept by ``neurodyn fit --holdout`` is used; another DATA file is treated as entirely
held out and preprocessed with the stored steps (training statistics).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

from neurodyn.cli._common import (
    add_command,
    check_bounds,
    check_outputs,
    check_result_suffix,
    load_for_analysis,
    load_recording,
    write_netcdf,
)

__all__ = ["run"]

HELP = "score a fitted model (D_stsp, D_H, PE) against baselines"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn evaluate FIT [DATA]`` and its scoring options."""
    p = add_command(sub, __name__)
    p.add_argument("fit", help="checkpoint written by neurodyn fit")
    p.add_argument("data", nargs="?", default=None,
                   help="held-out recording (default: the held-out part of the training file)")
    p.add_argument("--key", default=None, help="array name in DATA (default: as when fitting)")
    p.add_argument("--n-transient", type=int, default=None,
                   help="steps discarded before scoring (default 1000; for an input-driven fit, held-out "
                        "steps: a tenth of them, at most 1000)")
    p.add_argument("--max-steps", type=int, default=None, help="score at most this many held-out steps")
    p.add_argument("--pe-steps", type=int, default=20, help="horizon n of PE(n) (default 20)")
    p.add_argument("--method", choices=("auto", "binned", "gmm"), default="auto",
                   help="D_stsp estimator (auto: binned up to 5 channels)")
    p.add_argument("--n-bins", type=int, default=30)
    p.add_argument("--smoothing", type=float, default=20.0, help="D_H Gaussian smoothing in frequency bins")
    p.add_argument("--no-baselines", action="store_true")
    p.add_argument("--lyapunov", action="store_true", help="also the largest Lyapunov exponent")
    p.add_argument("--score-rates", action="store_true",
                   help="Poisson fits: score the generated rates, not Poisson counts drawn from them")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="netCDF file for the scores and generated trajectory")
    p.add_argument("--overwrite", action="store_true")


def training_file(extra: dict, fit_path: str | Path | None) -> Path:
    """The training recording named in a fit checkpoint's ``extra``.

    A relative path is taken relative to the checkpoint's folder (``neurodyn fit`` stores it so),
    never to the current directory; checkpoints written before that stored the path as given on
    the command line, which is used only when no such file lies beside the checkpoint.
    """
    path = Path(extra["data"])
    if path.is_absolute() or fit_path is None:
        return path
    beside = Path(fit_path).parent / path
    if extra.get("data_relative_to") == "checkpoint" or beside.exists():
        return beside
    return path


def held_out_data(extra: dict, data: str | None, key: str | None, fit_path: str | Path | None = None):
    """(train, test) rebuilt from a fit checkpoint's ``extra``, each ``(x, u)``: data (time, channel)
    and external inputs (time, input) or ``None``; ``train`` is ``None`` if the training file moved.
    ``fit_path`` is the checkpoint, whose folder a relative training path is resolved against.
    Another ``data`` file gets one warning line on stderr when the replayed training z-score leaves
    some channel's std outside [0.5, 2] (other units or gain; see
    :func:`~neurodyn.io.apply_preprocessing`).

    Raises
    ------
    ValueError
        If the checkpoint was not written by ``neurodyn fit`` or there is no held-out data.
    """
    from neurodyn.cli.fit import prepare_data
    from neurodyn.io import apply_preprocessing

    if extra.get("kind") != "dsr_fit":
        raise ValueError(f"{fit_path} was not written by 'neurodyn fit' (it has no data record); evaluate "
                         "takes the .pt file that `neurodyn fit` saved")
    extra = {**extra, "data": str(training_file(extra, fit_path))}
    opts = dict(extra["load_options"])
    prep = {"channels": extra.get("channels"), "delay_lags": extra.get("delay_lags"),
            "standardize": extra.get("standardize", True), "holdout": extra.get("holdout", 0.0),
            "lowpass": extra.get("lowpass"), "downsample": extra.get("downsample")}
    same = data is None or Path(data).resolve() == Path(extra["data"]).resolve()
    if same and key is not None and key != opts.get("key"):
        raise ValueError(f"--key {key} applies to another DATA file; the training file is read as when "
                         f"fitting (key {opts.get('key')!r}), so drop --key or give another DATA")
    train = test = None
    if Path(extra["data"]).exists():
        raw_train = _load_as_fitted(extra["data"], opts, extra.get("dt"))
        _warn_changed(raw_train, extra)
        train, test = prepare_data(raw_train, **prep)
    if data is not None and Path(data).resolve() != Path(extra["data"]).resolve():
        if key is not None:
            opts["key"] = key
        steps = [s for s in extra["preprocessing"] if s.get("step") != "time_slice"]
        raw = _load_as_fitted(data, opts, extra.get("dt"))
        _warn_overlap(raw, extra, data)
        n_fit = extra.get("n_channels_raw")
        if n_fit is None and train is not None:
            n_fit = _load_as_fitted(extra["data"], dict(extra["load_options"]), extra.get("dt")).n_channels
        _check_channel_count(raw.n_channels, n_fit, extra.get("channels"), data)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            test = apply_preprocessing(raw, steps)
        for w in caught:  # the replayed z-score's scale check as one line naming DATA; others as they were
            msg = str(w.message)
            if msg.startswith("apply_preprocessing: after the training standardisation"):
                print(f"neurodyn evaluate: warning: {data}: {msg.removeprefix('apply_preprocessing: ')}",
                      file=sys.stderr)
            else:
                warnings.warn(w.message, w.category, stacklevel=2)
    if test is None:
        raise ValueError("no held-out data: the fit used --holdout 0 (or the file moved); give DATA")
    return _flat(train), _flat(test)


def _load_as_fitted(path: str | Path, options: dict, fit_dt: float | None):
    """:func:`load_recording` with the fit's load options; a file that records no sampling interval
    takes the dt of the fit (``fit_dt``, which ``neurodyn fit`` reported when it assumed one) without
    warning again. Other warnings pass through."""
    if options.get("dt") is not None or fit_dt is None:
        return load_recording(path, **options)
    import dataclasses

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ts = load_recording(path, **options)
    assumed = False
    for w in caught:
        if "records no sampling interval" in str(w.message):
            assumed = True
        else:
            warnings.warn(w.message, w.category, stacklevel=2)
    return dataclasses.replace(ts, dt=float(fit_dt)) if assumed else ts


def _warn_changed(raw, extra: dict) -> None:
    """One line on stderr if the training file no longer holds the data the model was fitted on."""
    from neurodyn.io.timeseries import content_hashes

    if extra.get("data_sha256") and content_hashes(raw)["sha256"] != extra["data_sha256"]:
        print(f"neurodyn evaluate: warning: {extra['data']} has changed since the fit (its content hash "
              f"differs); the held-out part may not be the data the model was not fitted on",
              file=sys.stderr)


def _warn_overlap(raw, extra: dict, data: str) -> None:
    """One line on stderr if DATA is the training data (same content) or shares trials with it."""
    from neurodyn.io.timeseries import content_hashes

    if not extra.get("data_sha256"):
        return
    h = content_hashes(raw)
    fix = "give a recording that was not used for fitting, or omit DATA to score the held-out tail"
    if h["sha256"] == extra["data_sha256"]:
        print(f"neurodyn evaluate: warning: {data} holds the same data as the training file "
              f"{extra['data']} (same content hash); the model was fitted on it, so these are not held-out "
              f"scores: {fix}", file=sys.stderr)
        return
    seen = set(extra.get("data_trial_sha256") or ())
    shared = sum(t in seen for t in h["trial_sha256"])
    if shared:
        print(f"neurodyn evaluate: warning: {shared} of the {len(h['trial_sha256'])} trials of {data} are "
              f"trials of the training file {extra['data']}; the model was fitted on them, so the scores "
              f"are not fully held-out: {fix}", file=sys.stderr)


def _check_channel_count(n_data: int, n_fit: int | None, channels: list[int] | None, data: str) -> None:
    """Raise ``ValueError`` if DATA cannot supply the channels the model was fitted on."""
    if channels is not None:
        need = max(channels) + 1
        if n_data < need:
            raise ValueError(f"{data} has {n_data} channels but the fit used channel {need - 1} "
                             f"(--channels {','.join(map(str, channels))}); give a recording with at least "
                             f"{need} channels in the same order")
    elif n_fit is not None and n_data != n_fit:
        raise ValueError(f"{data} has {n_data} channels but the model was fitted on {n_fit}; "
                         f"give a recording with the same {n_fit} channels in the same order "
                         f"(or --key for another array)")


def check_args(args: argparse.Namespace) -> None:
    """Refuse out-of-range option values before any work starts (ValueError naming the flag)."""
    if args.n_transient is not None and args.n_transient < 0:
        raise ValueError(f"--n-transient must be >= 0 (generated steps to discard), got {args.n_transient}")
    check_bounds(args, (("--max-steps", "max_steps", 1, True), ("--pe-steps", "pe_steps", 1, True),
                        ("--n-bins", "n_bins", 1, True), ("--seed", "seed", 0, True)))
    if not math.isfinite(args.smoothing) or args.smoothing < 0:
        raise ValueError(f"--smoothing must be a finite number >= 0, got {args.smoothing}")


def _flat(ts):
    """Trials concatenated along time: ``(x (time, channel), u (time, input) or None)``."""
    if ts is None:
        return None
    u = None if ts.inputs is None else ts.inputs.reshape(-1, ts.inputs.shape[-1])
    return ts.data.reshape(-1, ts.n_channels), u


def data_floor(train, test, u_test, settings: dict) -> tuple[float, float] | None:
    """``(D_stsp, D_H)`` of the training data scored against the held-out data as if generated.

    Two stretches of one recording differ by sampling noise and non-stationarity; a model cannot be
    expected to score below this floor. None when the training file is gone.
    """
    from neurodyn.analysis.reconstruction import power_spectrum_distance, state_space_divergence

    if train is None:
        return None
    x_ref = test if u_test is None else test[1 + settings["n_transient"]:]  # what the fit is scored on
    d_stsp = state_space_divergence(x_ref, train, method=settings["method"], n_bins=settings["n_bins"],
                                    seed=settings["seed"])
    return float(d_stsp), float(power_spectrum_distance(x_ref, train, smoothing=settings["smoothing"]))


#: a binned D_stsp floor at this fraction of the saturation value or above cannot rank fits: the reading
#: guide says so (5 channels, 3,000 time points, 30 bins: the floor was 88 % of it)
SATURATED_FLOOR = 0.5


def reading_guide(result, floor: tuple[float, float] | None, have_train: bool) -> str:
    """How to read the table: the direction of each measure, the floor, what the baselines are."""
    n = result.settings["pe_steps"]
    lines = [f"lower is better: D_stsp (state-space divergence, 0: the held-out distribution), D_H "
             f"(Hellinger distance of power spectra, 0 to 1), PE({n}) (mean squared {n}-step prediction "
             "error)"]
    if floor is not None:
        lines.append(f"{'floor':<8} {floor[0]:>10.4f} {floor[1]:>8.4f} {'-':>10}  the training data scored "
                     "against the held-out data: no model can be expected to score lower")
        d_max = result.settings.get("d_stsp_max")
        if d_max is not None and d_max > 0 and floor[0] >= SATURATED_FLOOR * d_max:
            lines.append(f"caution: the floor is {100 * floor[0] / d_max:.0f} % of D_stsp's saturation "
                         f"({d_max:.4f}): with {result.settings['n_bins']} bins per channel the held-out "
                         "data fill too few cells for the binned D_stsp to rank fits; rerun with --method "
                         "gmm (or fewer --n-bins)")
    else:
        lines.append("no floor: the training file is not at its recorded path")
    if "linear" in result.models:
        lines.append("baselines: 'linear' is a linear model fitted by least squares, 'mean' the training "
                     "mean; a useful fit scores below both")
    else:
        why = "--no-baselines" if have_train else "the training file is not at its recorded path"
        lines.append(f"no baselines ({why})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Score a model written by ``neurodyn fit`` on held-out data (its own split by default) and print
    the table of :class:`~neurodyn.analysis.reconstruction.ReconstructionResult`; returns the exit status.

    Examples
    --------
    >>> import contextlib
    >>> import io
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.cli.evaluate import run
    >>> from neurodyn.cli.main import build_parser
    >>> t = np.arange(300) * 0.1
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     np.save(Path(tmp) / "sine.npy", np.c_[np.sin(t), np.cos(t)])
    ...     fit = build_parser().parse_args([
    ...         "fit", str(Path(tmp) / "sine.npy"), "--model", "plrnn", "--latent", "3", "--epochs", "1",
    ...         "--batches-per-epoch", "2", "--batch-size", "2", "--seq-len", "10", "--no-progress",
    ...         "--out", str(Path(tmp) / "fit.pt")])
    ...     with contextlib.redirect_stdout(io.StringIO()):  # the fit's own report
    ...         _ = fit.func(fit)
    ...     with contextlib.redirect_stdout(io.StringIO()) as report:
    ...         status = run(build_parser().parse_args([
    ...             "evaluate", str(Path(tmp) / "fit.pt"), "--n-transient", "10", "--smoothing", "1",
    ...             "--no-baselines"]))
    >>> print(report.getvalue().replace(tmp, "TMP"))
    TMP/fit.pt: PLRNN, 2 channels, 60 held-out steps, D_stsp by binned
    model        D_stsp      D_H     PE(20)  status
    fitted ...  ok
    D_stsp saturates at ... (any run that misses every cell the data visit)
    lower is better: D_stsp (state-space divergence, 0: the held-out distribution), ...
    floor ...  the training data scored against the held-out data: no model can be expected to score lower
    no baselines (--no-baselines)
    <BLANKLINE>
    >>> status
    0
    """
    from neurodyn.analysis.reconstruction import evaluate_reconstruction
    check_args(args)
    check_outputs(args.out, overwrite=args.overwrite, inputs=[args.fit, args.data])
    loaded = load_for_analysis("evaluate", args.fit)
    if loaded.checkpoint is None:
        raise ValueError(f"{args.fit} is not a neurodyn checkpoint")
    extra = loaded.checkpoint.extra or {}
    if args.out is not None and extra.get("data") is not None:
        if Path(args.out).resolve() == training_file(extra, args.fit).resolve():
            raise FileExistsError(f"--out {args.out} is the training data of {args.fit}; "
                                  f"choose another output name")
    check_result_suffix("--out", args.out)
    train, (test, u_test) = held_out_data(extra, args.data, args.key, args.fit)
    train, u_train = (None, None) if train is None else train
    if args.max_steps is not None:
        test = test[: args.max_steps]
        u_test = None if u_test is None else u_test[: args.max_steps]
    n_in = int(loaded.model.n_inputs)
    if n_in and u_test is None:
        raise ValueError(f"the model takes {n_in} external inputs but the held-out data have none; give a "
                         f"DATA file with inputs (--input-key as when fitting)")
    if len(test) < args.pe_steps + 1:
        raise ValueError(f"PE({args.pe_steps}) needs at least {args.pe_steps + 1} held-out steps, there are "
                         f"{len(test)}; lower --pe-steps or raise --max-steps (or the fit's --holdout)")
    n_transient = args.n_transient
    if n_transient is None:
        n_transient = min(1000, (len(test) - 1) // 10) if n_in else 1000
    elif n_in and n_transient > len(test) - 11:
        raise ValueError(f"with inputs the transient is taken from the {len(test)} held-out steps; "
                         f"--n-transient {n_transient} leaves too few to score: give at most "
                         f"{max(0, len(test) - 11)}")
    baselines = not args.no_baselines and train is not None
    result = evaluate_reconstruction(
        loaded.model, train if train is not None else test, test, observation=extra["observation"],
        n_transient=n_transient, pe_steps=args.pe_steps, method=args.method, n_bins=args.n_bins,
        smoothing=args.smoothing, baselines=baselines, lyapunov=args.lyapunov, seed=args.seed,
        inputs_train=u_train if baselines and n_in else None, inputs_test=u_test if n_in else None,
        sample_counts=not args.score_rates,
    )
    print(f"{args.fit}: {type(loaded.model).__name__}, {test.shape[1]} channels, "
          f"{len(test)} held-out steps, D_stsp by {result.settings['method']}")
    floor = data_floor(train, test, u_test, result.settings)
    print(result.summary())
    print(reading_guide(result, floor, train is not None))
    if args.out:
        ds = result.to_xarray()
        ds.attrs["fit_file"] = str(args.fit)
        if floor is not None:
            ds.attrs["floor_d_stsp"], ds.attrs["floor_d_h"] = floor
        write_netcdf(ds, args.out)
        print(f"wrote {args.out}")
    return 0 if all(math.isfinite(v) for v in result.d_stsp[:1]) else 1
