"""``neurodyn train TASK``: train a network on a registered task and save a checkpoint.

Task options are generated from each task dataclass's fields (``FlipFlop.n_bits`` becomes
``--n-bits``), so every registered task is trainable from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

from neurodyn.cli import _deflation
from neurodyn.cli._common import check_outputs, save_trained, train_quietly
from neurodyn.tasks import TASKS

__all__ = ["add_parser", "run"]

#: --model choices → (model class name in the registry, which model options it takes)
MODEL_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "leaky": ("LeakyRNN", ("activation", "alpha", "noise_std", "gain", "spectral_radius", "train_h0",
                           "dale", "frac_excitatory", "dale_output", "no_autapse", "output_scale",
                           "rec_density")),
    "lowrank": ("LowRankRNN", ("activation", "alpha", "noise_std", "rank", "random_gain", "train_h0",
                               "output_scale")),
    "gru": ("GRU", ("train_h0",)),
    "lstm": ("LSTM", ()),
}
#: every model option (``None`` when not given, so the model's own default applies)
MODEL_OPTIONS = sorted({o for _, opts in MODEL_CHOICES.values() for o in opts})


def _task_option(parser: argparse.ArgumentParser, field: dataclasses.Field) -> None:
    flag = "--" + field.name.replace("_", "-")
    default = field.default
    if default is dataclasses.MISSING:
        return
    if isinstance(default, bool):
        parser.add_argument(flag, dest=f"task__{field.name}", action=argparse.BooleanOptionalAction,
                            default=default)
    elif isinstance(default, tuple):
        kind = type(default[0]) if default else float
        parser.add_argument(
            flag, dest=f"task__{field.name}", default=default, metavar="V1,V2,…",
            type=lambda s, k=kind: tuple(k(v) for v in s.split(",")),
            help=f"comma-separated (default {','.join(map(str, default))})",
        )
    else:
        parser.add_argument(flag, dest=f"task__{field.name}", type=type(default), default=default,
                            metavar=field.name.upper(), help=f"(default {default})")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a network on a task and save a checkpoint")
    tasks = p.add_subparsers(dest="task", required=True, metavar="TASK")
    for name in sorted(TASKS):
        cls = TASKS[name]
        doc = (cls.__doc__ or name).strip().splitlines()[0].replace("``", "")
        tp = tasks.add_parser(name, help=doc, description=doc)
        g = tp.add_argument_group("task options")
        for f in dataclasses.fields(cls):
            _task_option(g, f)
        _common_options(tp)
        tp.set_defaults(func=run, task_name=name)


def _common_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("model options (given only when they apply to --model)")
    m.add_argument("--model", choices=sorted(MODEL_CHOICES), default="leaky")
    m.add_argument("--n-units", type=int, default=64)
    m.add_argument("--activation", help="leaky/lowrank nonlinearity: tanh (default), relu, softplus, …")
    m.add_argument("--alpha", type=float, help="leaky/lowrank Euler step dt/tau in (0, 1] (default 1)")
    m.add_argument("--noise-std", type=float, help="recurrent noise sigma, scaled by sqrt(2 alpha)")
    m.add_argument("--gain", type=float, help="recurrent weight init gain (default 1)")
    m.add_argument("--spectral-radius", type=float, help="rescale the initial W_rec to this spectral radius")
    m.add_argument("--train-h0", action="store_true", default=None, help="learn the initial state")
    m.add_argument("--dale", action="store_true", default=None,
                   help="Dale's law: one fixed sign per presynaptic unit")
    m.add_argument("--frac-excitatory", type=float, help="fraction of excitatory units (default 0.8)")
    m.add_argument("--dale-output", action="store_true", default=None,
                   help="read out from excitatory units only (needs --dale)")
    m.add_argument("--no-autapse", action="store_true", default=None, help="no self-connections")
    m.add_argument("--rec-density", type=float,
                   help="random sparse recurrent connectivity with this density (fixed mask, seeded)")
    m.add_argument("--output-scale", type=_output_scale,
                   help="readout multiplier: a number, 'rich' (1/N) or 'lazy' (1/sqrt N)")
    m.add_argument("--rank", type=int, help="rank of the low-rank connectivity (lowrank; default 1)")
    m.add_argument("--random-gain", type=float, help="fixed random full-rank part g chi (lowrank)")
    t = p.add_argument_group("training options")
    t.add_argument("--n-iterations", type=int, default=1000)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=1e-2)
    t.add_argument("--weight-decay", type=float, default=0.0)
    t.add_argument("--clip-grad-norm", type=float, default=1.0, help="gradient-norm clipping (0: none)")
    for name, what in (("l1-weight", "L1 on weights"), ("l2-weight", "L2 on weights"),
                       ("l1-rate", "L1 on firing rates"), ("l2-rate", "L2 on firing rates")):
        t.add_argument(f"--{name}", type=float, default=0.0, help=f"strength of the {what} penalty")
    t.add_argument("--eval-every", type=int, default=100, help="evaluation period in iterations")
    t.add_argument("--target-accuracy", type=float, default=None,
                   help="stop early once the held-out accuracy reaches this value")
    t.add_argument("--early-stopping", type=_pair(int), metavar="METRIC:PATIENCE",
                   help="stop after PATIENCE evaluations without improvement of METRIC (e.g. loss:5)")
    t.add_argument("--curriculum", metavar="PARAM=V1,V2,…",
                   help="schedule a task option over stages (needs --advance-when)")
    t.add_argument("--advance-when", type=_pair(float), metavar="METRIC:THRESHOLD",
                   help="move to the next curriculum stage when METRIC reaches THRESHOLD")
    t.add_argument("--seed", type=int, default=0, help="seed of the initialisation and batches")
    t.add_argument("--device", default="cpu")
    t.add_argument("--no-progress", action="store_true")
    t.add_argument("--deterministic", action="store_true",
                   help="one thread and deterministic algorithms: the same weights at any thread count")
    _deflation.add_options(p)
    o = p.add_argument_group("output")
    o.add_argument("--out", default="model.pt", help="checkpoint to write (default model.pt)")
    o.add_argument("--overwrite", action="store_true", help="replace an existing --out")


def _output_scale(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def _pair(kind: type):
    def parse(text: str) -> tuple[str, Any]:
        name, sep, value = text.rpartition(":")
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"expected METRIC:VALUE, got {text!r}")
        return name, kind(value)
    return parse


def build_model(args: argparse.Namespace, task: Any):
    """The model of ``--model`` with the model options that were given.

    Raises
    ------
    ValueError
        If an option was given that the chosen ``--model`` does not take.
    """
    from neurodyn.models import make_model
    from neurodyn.models.constraints import make_sparse_mask

    cls_name, options = MODEL_CHOICES[args.model]
    given = {k: getattr(args, k) for k in MODEL_OPTIONS if getattr(args, k, None) is not None}
    wrong = sorted(set(given) - set(options))
    if wrong:
        flags = ", ".join("--" + k.replace("_", "-") for k in wrong)
        verb = "does" if len(wrong) == 1 else "do"
        raise ValueError(f"{flags} {verb} not apply to --model {args.model}; it takes "
                         f"{', '.join('--' + o.replace('_', '-') for o in options) or 'no model options'}")
    density = given.pop("rec_density", None)
    if density is not None:
        given["rec_mask"] = make_sparse_mask((args.n_units, args.n_units), density, seed=args.seed)
    return make_model(cls_name, n_inputs=task.n_inputs, n_units=args.n_units,
                      n_outputs=task.n_outputs, seed=args.seed, **given)


def _curriculum(args: argparse.Namespace, task: Any):
    from neurodyn.training.curriculum import Curriculum

    if args.curriculum is None:
        if args.advance_when is not None:
            raise ValueError("--advance-when needs --curriculum PARAM=V1,V2,…")
        return None
    param, sep, values = args.curriculum.partition("=")
    param = param.replace("-", "_")
    if not sep or not values:
        raise ValueError(f"--curriculum must look like PARAM=V1,V2,…, got {args.curriculum!r}")
    if args.advance_when is None:
        raise ValueError("--curriculum needs --advance-when METRIC:THRESHOLD")
    fields = {f.name: f for f in dataclasses.fields(task)}
    if param not in fields:
        raise ValueError(f"--curriculum: {task.name} has no option {param!r}; "
                         f"options: {', '.join(fields)}")
    kind = type(getattr(task, param))
    return Curriculum(param, tuple(kind(v) for v in values.split(",")), args.advance_when)


#: task losses that compare whole sequence distributions (trained by ``train_distribution``)
_DISTRIBUTION_LOSSES = ("sinkhorn", "mmd")


def _train_distribution(args: argparse.Namespace, model, task):
    """Train a noise-driven network to match the task's sequence distribution (HMM emulation)."""
    from neurodyn.training.distribution import sample_emissions, train_distribution

    if args.deflate_against or args.curriculum or args.early_stopping:
        raise ValueError(
            f"task {task.name!r} is trained on a sequence divergence; --deflate-against, --curriculum "
            "and --early-stopping apply to per-step losses only"
        )
    result = train_quietly(
        train_distribution, model, task, n_iterations=args.n_iterations, batch_size=args.batch_size,
        lr=args.lr, divergence=task.loss, clip_grad_norm=args.clip_grad_norm, seed=args.seed,
        progress=not args.no_progress, device=args.device, eval_every=args.eval_every,
        deterministic=args.deterministic,
    )
    if result.status == "diverged":
        return result, {}
    emitted, batch = sample_emissions(result.model.cpu(), task, 512, seed=args.seed + 1)
    return result, task.evaluate(emitted, batch)


def run(args: argparse.Namespace) -> int:
    import neurodyn
    from neurodyn.tasks import make_task

    check_outputs(args.out, overwrite=args.overwrite)
    if args.n_iterations < 1:
        raise ValueError(f"--n-iterations must be >= 1, got {args.n_iterations}")
    if not args.clip_grad_norm >= 0 or math.isinf(args.clip_grad_norm):
        raise ValueError(f"--clip-grad-norm must be >= 0 (0: no clipping), got {args.clip_grad_norm}")
    if args.target_accuracy is not None and not 0.0 < args.target_accuracy <= 1.0:
        raise ValueError(f"--target-accuracy must be in (0, 1], got {args.target_accuracy}")
    config = {k[len("task__"):]: v for k, v in vars(args).items() if k.startswith("task__")}
    task = make_task(args.task_name, **config)
    model = build_model(args, task)
    curriculum = _curriculum(args, task)
    target = ("accuracy", args.target_accuracy) if args.target_accuracy is not None else None
    strengths = {k: getattr(args, k) for k in ("l1_weight", "l2_weight", "l1_rate", "l2_rate")}
    if task.loss in _DISTRIBUTION_LOSSES:
        result, metrics = _train_distribution(args, model, task)
    else:
        if args.deflate_against:
            result = train_quietly(_deflation.train, args, model, task, deterministic=args.deterministic)
        else:
            result = train_quietly(
                neurodyn.train, model, task, n_iterations=args.n_iterations, batch_size=args.batch_size,
                lr=args.lr, weight_decay=args.weight_decay, clip_grad_norm=args.clip_grad_norm,
                seed=args.seed, target_metric=target, progress=not args.no_progress, device=args.device,
                eval_every=args.eval_every, regularizers=strengths, early_stopping=args.early_stopping,
                curriculum=curriculum, deterministic=args.deterministic,
            )
        if curriculum is not None:
            task = curriculum.task_at(task, result.config["curriculum"]["final_stage"])
        metrics = {} if result.status == "diverged" else neurodyn.training.evaluate(
            result.model.cpu(), task, seed=args.seed + 1)
    if result.status != "diverged":
        shown = ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
        print(f"trained {args.model} ({args.n_units} units) on {task.name} for "
              f"{result.config['iterations_run']} iterations ({result.status}): {shown}")
    return save_trained("train", args.out, result, overwrite=args.overwrite, task=task,
                        extra={"final_metrics": metrics})
