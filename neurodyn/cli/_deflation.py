"""``neurodyn train ... --deflate-against a.pt b.pt --lambda L``: similarity-deflated training."""

from __future__ import annotations

import argparse
from typing import Any

from neurodyn.cli._flags import to_flag


def add_options(p: argparse.ArgumentParser) -> None:
    d = p.add_argument_group("similarity deflation (Qian & Pehlevan 2025)")
    d.add_argument("--deflate-against", nargs="+", metavar="CHECKPOINT",
                   help="penalise how well these trained networks linearly predict this one's states")
    d.add_argument("--lambda", dest="deflate_lambda", type=float, default=1.0,
                   help="weight of the predictivity penalty (default 1)")
    d.add_argument("--deflate-ridge", type=float, default=0.1,
                   help="ridge penalty relative to the mean reference variance (default 0.1)")
    d.add_argument("--activity-penalty", type=float, default=1e-2,
                   help="weight of the mean squared state, against inflated unpredictable variance")


def train(args: argparse.Namespace, model: Any, task: Any):
    """Run :func:`neurodyn.training.train_deflated` with the command's options.

    Raises
    ------
    ValueError
        If a reference is trained on another task or sized for another one, ``--lambda``,
        ``--deflate-ridge`` or ``--activity-penalty`` is negative or not finite, or an option that
        deflated training does not take was given (curriculum, early stopping, target accuracy,
        weight penalties, weight decay).
    """
    from neurodyn._checks import check_setting
    from neurodyn.cli._common import warn_training_status
    from neurodyn.cli.train import engine_options
    from neurodyn.io import load_checkpoint
    from neurodyn.training import train_deflated

    unsupported = [flag for flag, given in (
        ("--curriculum", args.curriculum), ("--early-stopping", args.early_stopping),
        ("--target-accuracy", args.target_accuracy), ("--weight-decay", args.weight_decay),
        *((to_flag(k), getattr(args, k)) for k in ("l1_weight", "l2_weight", "l1_rate", "l2_rate")),
    ) if given]
    if unsupported:
        raise ValueError(f"{', '.join(unsupported)} cannot be combined with --deflate-against")
    for flag, value in (("--lambda", args.deflate_lambda), ("--deflate-ridge", args.deflate_ridge),
                        ("--activity-penalty", args.activity_penalty)):
        check_setting(flag, value, 0)
    refs = []
    for path in args.deflate_against:
        ckpt = load_checkpoint(path)
        warn_training_status("train", path, ckpt)
        if ckpt.task is not None and ckpt.task.name != task.name:
            raise ValueError(f"--deflate-against {path} was trained on {ckpt.task.name!r}, not {task.name!r}")
        sizes = (int(ckpt.model.n_inputs), int(ckpt.model.n_outputs))
        if sizes != (task.n_inputs, task.n_outputs):
            raise ValueError(f"--deflate-against {path} holds a {type(ckpt.model).__name__} with {sizes[0]} "
                             f"inputs / {sizes[1]} outputs, not a network for {task.name!r} "
                             f"({task.n_inputs} / {task.n_outputs}); give checkpoints trained on this task")
        refs.append(ckpt.model)
    result = train_deflated(
        model, task, reference_models=refs, lam=args.deflate_lambda, ridge=args.deflate_ridge,
        activity_penalty=args.activity_penalty, **engine_options(args),
    )
    result.config["deflation"]["references"] = [str(p) for p in args.deflate_against]
    return result
