"""``neurodyn fit DATA``: fit a latent RNN to a recording by teacher forcing and save a checkpoint.

Dynamical systems reconstruction by generalized teacher forcing (Hess et al. 2023) or sparse teacher
forcing (Mikhaeil et al. 2022). DATA: .npy/.npz/.csv/.mat/.nc/.nwb, (time, channel) or (trial, time,
channel).

The checkpoint loads with :func:`neurodyn.io.load_model` (so ``neurodyn fixedpoints fit.pt`` works);
its ``extra`` holds the data file, load options, preprocessing steps, the held-out split and the
training history, which ``neurodyn evaluate`` uses to rebuild the held-out data.
"""

from __future__ import annotations

import argparse
from typing import Any

from neurodyn.cli._common import (
    add_checkpoint_file,
    add_command,
    add_training_run,
    check_bounds,
    check_outputs,
    load_recording,
    save_trained,
    train_quietly,
)

__all__ = ["run"]

HELP = "fit a latent RNN (shPLRNN, PLRNN, ALRNN, leaky) to a recording"

#: --model choices → (registered class, extra constructor arguments)
DSR_MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "shplrnn": ("ShallowPLRNN", {"clipped": False}),
    "clipped-shplrnn": ("ShallowPLRNN", {"clipped": True}),
    "plrnn": ("PLRNN", {}),
    "alrnn": ("ALRNN", {}),
    "leaky": ("LeakyRNN", {"activation": "tanh"}),
    "lowrank": ("LowRankRNN", {"activation": "tanh"}),
}


def add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data options")
    g.add_argument("--key", default=None, help="array name in .npz/.mat/.nc, NWB series name or 'units'")
    g.add_argument("--input-key", default=None, help="array of external inputs in the same file")
    g.add_argument("--dt", type=float, default=None, help="sampling interval in seconds")
    g.add_argument("--transpose", action="store_true", help="the file stores (channel, time)")
    g.add_argument("--drop-constant", action="store_true", help="drop constant channels (silent units)")
    g.add_argument("--bin-size", type=float, default=None, help="NWB units: bin width in seconds")


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"key": args.key, "input_key": args.input_key, "dt": args.dt, "transpose": args.transpose,
            "drop_constant": args.drop_constant, "bin_size": args.bin_size}


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``neurodyn fit DATA`` with the data, model, preprocessing and training options."""
    p = add_command(sub, __name__)
    p.add_argument("data", help="recording file")
    add_data_options(p)
    g = p.add_argument_group("preprocessing")
    g.add_argument("--channels", default=None, help="comma-separated channel indices to keep")
    g.add_argument("--lowpass", type=float, default=None,
                   help="zero-phase Butterworth low-pass cutoff in Hz before embedding (needs --dt)")
    g.add_argument("--delay-lags", default=None, help="delay embedding lags in steps, e.g. 0,20,68")
    g.add_argument("--downsample", type=int, default=None,
                   help="keep every k-th time point after embedding (low-pass first to avoid aliasing)")
    g.add_argument("--no-standardize", action="store_true", help="skip z-scoring (default for poisson)")
    g.add_argument("--holdout", type=float, default=0.2,
                   help="fraction of time held out at the end for evaluation (default 0.2; 0 for none)")
    m = p.add_argument_group("model options")
    m.add_argument("--model", choices=sorted(DSR_MODELS), default="clipped-shplrnn")
    m.add_argument("--latent", type=int, default=None, help="latent dimension M (default: channels)")
    m.add_argument("--hidden", type=int, default=None,
                   help="hidden width L of the shallow PLRNN (default 50; shplrnn models only)")
    m.add_argument("--n-relu", type=int, default=None, help="ALRNN: number of ReLU units P")
    m.add_argument("--observation", choices=("identity", "affine", "poisson"), default="identity")
    m.add_argument("--rank", type=int, default=None,
                   help="rank R of the connectivity (--model lowrank; default 1)")
    m.add_argument("--maxent", action="store_true",
                   help="--model lowrank: also fit the maximum-entropy loading law that keeps the fitted "
                        "latent dynamics and write it to --maxent-out")
    m.add_argument("--maxent-out", default=None, help="max-ent law file (default: <out stem>.maxent.pt)")
    t = p.add_argument_group("training options")
    t.add_argument("--method", choices=("gtf", "sparse"), default="gtf")
    t.add_argument("--alpha", type=float, default=0.1, help="GTF forcing strength (initial if adaptive)")
    t.add_argument("--adaptive-alpha", action="store_true", help="estimate and anneal α (product bound)")
    t.add_argument("--tau", type=int, default=16, help="sparse TF forcing interval in steps")
    t.add_argument("--epochs", type=int, default=100)
    t.add_argument("--batches-per-epoch", type=int, default=50)
    t.add_argument("--batch-size", type=int, default=16)
    t.add_argument("--seq-len", type=int, default=200)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--lr-end", type=float, default=1e-6, help="learning rate reached by exponential decay")
    t.add_argument("--lambda-latent", type=float, default=0.0)
    t.add_argument("--lambda-obs", type=float, default=0.0)
    t.add_argument("--clip-grad-norm", type=float, default=None, help="gradient-norm clipping (0: none)")
    t.add_argument("--noise-level", type=float, default=0.0)
    t.add_argument("--seed", type=int, default=0)
    add_training_run(t, result="fit", fused="a shallow PLRNN, PLRNN or ALRNN", rollout="forced")
    add_checkpoint_file(p.add_argument_group("output"), default="fit.pt")


def _ints(text: str | None, what: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{what} must be comma-separated integers, got {text!r}") from None


def check_channels(channels: list[int] | None, n_channels: int, source: str) -> None:
    """Raise ``ValueError`` unless every ``--channels`` index exists in a recording of ``n_channels``."""
    if channels is None:
        return
    bad = [c for c in channels if not 0 <= c < n_channels]
    if bad:
        raise ValueError(f"--channels {bad[0]} does not exist: {source} has {n_channels} channels; "
                         f"give indices 0 to {n_channels - 1}")
    twice = sorted({c for c in channels if channels.count(c) > 1})
    if twice:
        raise ValueError(f"--channels lists channel {twice[0]} more than once; give each index once")


def check_delay_lags(lags: list[int] | None) -> None:
    """Raise ``ValueError`` unless the ``--delay-lags`` are distinct and >= 0."""
    if lags is not None and (min(lags) < 0 or len(set(lags)) != len(lags)):
        raise ValueError(f"--delay-lags must be distinct integers >= 0 (steps into the past), "
                         f"got {','.join(map(str, lags))}")


def prepare_data(ts, *, channels=None, delay_lags=None, standardize=True, holdout=0.2, lowpass=None,
                 downsample=None):
    """Select, low-pass, embed, downsample, split and standardise (training statistics).

    Returns ``(train, test or None)``.
    """
    if channels is not None:
        check_channels(channels, ts.n_channels, ts.source or "the recording")
        ts = ts.select_channels(channels)
    if lowpass is not None:
        ts = ts.lowpass(lowpass)
    if delay_lags is not None:
        ts = ts.delay_embed(delay_lags)
    if downsample is not None:
        ts = ts.downsample(downsample)
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"--holdout must be in [0, 1), got {holdout}")
    if holdout > 0:
        cut = int(round(ts.n_steps * (1.0 - holdout)))
        if min(cut, ts.n_steps - cut) < 2:
            raise ValueError(f"--holdout {holdout} splits the {ts.n_steps} time points (after preprocessing) "
                             f"into {cut} for training and {ts.n_steps - cut} held out; each part needs at "
                             "least 2: use longer data or change --holdout (0 holds none out)")
    train, test = ts.split(1.0 - holdout) if holdout > 0 else (ts, None)
    if standardize:
        train = train.standardize()
        if test is not None:
            rec = train.preprocessing[-1]
            test = test.standardize(rec["mean"], rec["std"])
    return train, test


#: (flag, attribute, smallest allowed value, whether the bound itself is allowed)
_BOUNDS = (
    ("--latent", "latent", 1, True), ("--hidden", "hidden", 1, True), ("--rank", "rank", 1, True),
    ("--n-relu", "n_relu", 0, True),
    ("--tau", "tau", 1, True), ("--epochs", "epochs", 1, True),
    ("--batches-per-epoch", "batches_per_epoch", 1, True), ("--batch-size", "batch_size", 1, True),
    ("--seq-len", "seq_len", 1, True), ("--lr", "lr", 0.0, False), ("--lr-end", "lr_end", 0.0, False),
    ("--lambda-latent", "lambda_latent", 0.0, True), ("--lambda-obs", "lambda_obs", 0.0, True),
    ("--clip-grad-norm", "clip_grad_norm", 0.0, True), ("--noise-level", "noise_level", 0.0, True),
    ("--lowpass", "lowpass", 0.0, False), ("--downsample", "downsample", 1, True),
    ("--seed", "seed", 0, True),
)


def check_args(args: argparse.Namespace) -> None:
    """Refuse out-of-range or meaningless option values before any data are read.

    Raises
    ------
    ValueError
        Naming the flag, the value given and the allowed range.
    """
    check_bounds(args, _BOUNDS)
    if not 0.0 <= args.alpha <= 1.0:
        raise ValueError(f"--alpha must be in [0, 1], got {args.alpha}")
    if args.lowpass is not None and args.dt is None:
        raise ValueError("--lowpass is a cutoff in Hz and needs the sampling interval: give --dt in seconds")
    if args.lowpass is not None and args.observation == "poisson":
        raise ValueError("--lowpass would turn spike counts into non-integer (even negative) values; drop it "
                         "for --observation poisson (bin the counts coarser instead)")
    cls_name = DSR_MODELS[args.model][0]
    if args.hidden is not None and cls_name != "ShallowPLRNN":
        raise ValueError(f"--hidden applies to --model shplrnn/clipped-shplrnn only; "
                         f"drop it for --model {args.model}")
    if args.n_relu is not None and cls_name != "ALRNN":
        raise ValueError(f"--n-relu applies to --model alrnn only; drop it for --model {args.model}")
    for flag, given in (("--rank", args.rank is not None), ("--maxent", args.maxent),
                        ("--maxent-out", args.maxent_out is not None)):
        if given and cls_name != "LowRankRNN":
            raise ValueError(f"{flag} applies to --model lowrank only; drop it for --model {args.model}")
    if args.maxent_out is not None and not args.maxent:
        raise ValueError("--maxent-out names the file of --maxent; add --maxent or drop it")


def check_model_size(args: argparse.Namespace, n_channels: int, n_inputs: int = 0) -> None:
    """Refuse a ``--latent`` too small for ``--observation identity`` (or for ``--maxent``), or an
    ``--n-relu`` or ``--rank`` above it."""
    latent = args.latent or n_channels
    if args.observation == "identity" and latent < n_channels:
        raise ValueError(f"--latent {latent} is below the {n_channels} data channels, but "
                         f"--observation identity needs one latent unit per channel; "
                         f"raise --latent or use --observation affine")
    if args.n_relu is not None and args.n_relu > latent:
        raise ValueError(f"--n-relu {args.n_relu} exceeds the latent dimension {latent}; lower --n-relu")
    if args.rank is not None and args.rank > latent:
        raise ValueError(f"--rank {args.rank} exceeds the {latent} units of the network (--latent, default "
                         f"the channels); lower --rank to at most {latent} or raise --latent")
    if args.maxent:  # the flow over each unit's drive loadings (m, I, b) needs 2 * dim + 2 units
        dim = (args.rank or 1) + n_inputs + 1
        if latent < 2 * dim + 2:
            raise ValueError(f"--maxent fits a flow over {dim} loadings per unit and needs at least "
                             f"{2 * dim + 2} units, but the network has {latent}; raise --latent or lower "
                             "--rank")


def build_model(args: argparse.Namespace, n_channels: int, n_inputs: int):
    from neurodyn.models import make_model

    cls_name, extra = DSR_MODELS[args.model]
    latent = args.latent or n_channels
    kwargs: dict[str, Any] = dict(extra)
    if cls_name == "ShallowPLRNN":
        kwargs["n_hidden"] = args.hidden if args.hidden is not None else 50
    if cls_name == "ALRNN" and args.n_relu is not None:
        kwargs["n_relu"] = args.n_relu
    if cls_name == "LowRankRNN":
        kwargs["rank"] = args.rank or 1
    if cls_name in ("LeakyRNN", "LowRankRNN"):
        return make_model(cls_name, n_inputs=n_inputs, n_units=latent, n_outputs=n_channels,
                          seed=args.seed, **kwargs)
    return make_model(cls_name, n_inputs=n_inputs, n_latent=latent, n_outputs=n_channels,
                      seed=args.seed, **kwargs)


def run(args: argparse.Namespace) -> int:
    """Load and preprocess a recording, fit a latent model by teacher forcing and save its checkpoint
    (with the preprocessing, so ``neurodyn evaluate`` can replay it); returns the exit status.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.cli.fit import run
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.io import load_checkpoint
    >>> t = np.arange(300) * 0.1
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     np.save(Path(tmp) / "sine.npy", np.c_[np.sin(t), np.cos(t)])  # (time, channel)
    ...     args = build_parser().parse_args([
    ...         "fit", str(Path(tmp) / "sine.npy"), "--model", "plrnn", "--latent", "3", "--epochs", "1",
    ...         "--batches-per-epoch", "2", "--batch-size", "2", "--seq-len", "10", "--no-progress",
    ...         "--out", str(Path(tmp) / "fit.pt")])
    ...     status = run(args)
    ...     model = load_checkpoint(Path(tmp) / "fit.pt").model
    fitted plrnn (latent 3) to 2 channels x 240 steps: 1 epochs, final loss ...
    saved ...fit.pt
    >>> status, type(model).__name__, model.n_latent, model.n_outputs
    (0, 'PLRNN', 3, 2)
    """

    check_args(args)
    check_delay_lags(_ints(args.delay_lags, "--delay-lags"))
    maxent_out = maxent_path(args)
    check_outputs(args.out, maxent_out, overwrite=args.overwrite, inputs=[args.data])
    ts = load_recording(args.data, **load_options(args))
    check_orientation(ts, args.transpose)
    standardize = not args.no_standardize and args.observation != "poisson"
    train, test = prepare_data(ts, channels=_ints(args.channels, "--channels"),
                               delay_lags=_ints(args.delay_lags, "--delay-lags"),
                               standardize=standardize, holdout=args.holdout, lowpass=args.lowpass,
                               downsample=args.downsample)
    train.check_length(args.seq_len)
    check_model_size(args, train.n_channels, train.n_inputs)
    model = build_model(args, train.n_channels, train.n_inputs)
    result = _fit(args, model, train)  # main names flags for Python arguments (observation='affine')
    extra = {
        "kind": "dsr_fit", "data": _relative_to(args.data, args.out), "data_relative_to": "checkpoint",
        "load_options": load_options(args),
        "n_channels_raw": ts.n_channels, **_hashes(ts),
        "preprocessing": list(train.preprocessing), "holdout": args.holdout,
        "channels": _ints(args.channels, "--channels"), "delay_lags": _ints(args.delay_lags, "--delay-lags"),
        "lowpass": args.lowpass, "downsample": args.downsample,
        "standardize": standardize, "observation": args.observation, "dt": train.dt,
        "channel_names": list(train.channel_names), "history": result.history, "status": result.status,
    }
    if result.status not in ("diverged", "interrupted"):
        print(f"fitted {args.model} (latent {model.state_size}) to {train.n_channels} channels x "
              f"{train.n_steps} steps: {result.config['epochs_run']} epochs, final loss "
              f"{result.history['loss'][-1]:.5f}")
    law = _fit_maxent(args, result) if maxent_out is not None and result.status == "completed" else None
    if law is not None:
        extra["maxent"] = {"file": _relative_to(maxent_out, args.out), "status": law.status}
    training = {**result.config, "model_choice": args.model}
    if law is None:
        return save_trained("fit", args.out, result, overwrite=args.overwrite, training=training, extra=extra)
    _save_with_law(args.out, maxent_out, result.model, law, overwrite=args.overwrite, training=training,
                   extra=extra)
    return 0


def _save_with_law(out: str, law_out: str, model, law, *, overwrite: bool, training: dict,
                   extra: dict) -> None:
    """Write the checkpoint ``out`` and its max-ent law ``law_out`` as a pair: both are replaced or,
    if either write fails (or the process is killed), neither, and existing files stay as they were.
    ``FileExistsError`` (nothing written) if either exists and not ``overwrite``."""
    from pathlib import Path

    from neurodyn._result import write_atomically_together
    from neurodyn.io import save_checkpoint

    for path in (out, law_out):
        if not overwrite and Path(path).exists():  # created while the model was trained
            raise FileExistsError(f"{path} exists; pass --overwrite to replace it")

    write_atomically_together({
        out: lambda tmp: save_checkpoint(tmp, model, training=training, extra=extra, overwrite=True),
        law_out: lambda tmp: law.save(tmp, overwrite=True),
    })
    print(f"saved {out}\nsaved {law_out}")


def maxent_path(args: argparse.Namespace) -> str | None:
    """The file of ``--maxent`` (``--maxent-out``, default ``<out stem>.maxent.pt``), or None."""
    if not getattr(args, "maxent", False):
        return None
    from pathlib import Path

    out = Path(args.out)
    return args.maxent_out or str(out.with_name(f"{out.stem}.maxent.pt"))


def _fit_maxent(args: argparse.Namespace, result):
    """The maximum-entropy loading law of the fitted low-rank network; a status other than
    ``completed`` (flow not converged, tolerance too tight) is printed on stderr, not hidden."""
    import copy
    import sys
    import warnings

    from neurodyn.analysis.low_rank import fit_maxent_loadings

    with warnings.catch_warnings():  # the status below says it in one line
        warnings.simplefilter("ignore", RuntimeWarning)
        law = fit_maxent_loadings(copy.deepcopy(result.model).double(), seed=args.seed)
    line = (f"max-ent loadings: {law.status}, latent-map error {law.dynamics_error:.3f} "
            f"(tolerance {law.tolerance:.3f}), residual sd of n {law.residual_scale.round(3).tolist()}")
    if law.status == "completed":
        print(line)
    else:
        print(f"warning: {line}; the law is saved with this status (fit the network longer, or call "
              "neurodyn.analysis.fit_maxent_loadings with more n_epochs)", file=sys.stderr)
    return law


def _hashes(ts) -> dict[str, Any]:
    """The training recording's content hashes, stored as ``data_sha256`` and ``data_trial_sha256``."""
    from neurodyn.io.timeseries import content_hashes

    h = content_hashes(ts)
    return {"data_sha256": h["sha256"], "data_trial_sha256": h["trial_sha256"]}


def _relative_to(data: str, out: str) -> str:
    """``data`` as a path relative to the folder of the checkpoint ``out`` (absolute if impossible)."""
    import os
    from pathlib import Path

    target = Path(data).resolve()
    try:
        return os.path.relpath(target, Path(out).resolve().parent)
    except ValueError:  # another drive (Windows)
        return str(target)


def check_orientation(ts, transpose: bool) -> None:
    """Refuse a recording with more channels than time points: almost surely stored (channel, time)
    (the loader's check, :func:`neurodyn.io.timeseries.check_orientation`, with the flag as the fix)."""
    from neurodyn.io.timeseries import check_orientation as check

    check(ts.data.shape, ts.source or "the recording", "it was read with --transpose; drop it" if transpose
          else "if the file stores (channel, time), add --transpose")


def _fit(args: argparse.Namespace, model, train):
    from neurodyn.training import fit_teacher_forcing

    return train_quietly(
        fit_teacher_forcing, model, train, observation=args.observation, method=args.method, alpha=args.alpha,
        adaptive_alpha=args.adaptive_alpha, tau=args.tau, n_epochs=args.epochs,
        batches_per_epoch=args.batches_per_epoch, batch_size=args.batch_size, seq_len=args.seq_len,
        lr=args.lr, lr_end=args.lr_end, lambda_latent=args.lambda_latent, lambda_obs=args.lambda_obs,
        clip_grad_norm=args.clip_grad_norm, noise_level=args.noise_level, seed=args.seed,
        progress=not args.no_progress, deterministic=args.deterministic, backend=args.backend,
    )
