"""``neurodyn train TASK``: train a network on a registered task and save a checkpoint.

Train a network on a task and save a checkpoint. Each TASK has its own task options, and all take the
model and training options: see them with `neurodyn train TASK --help` (e.g. `neurodyn train flipflop
--help`); `neurodyn tasks` lists the tasks with their defaults.

Task options are generated from each task dataclass's fields (``FlipFlop.n_bits`` becomes
``--n-bits``), so every registered task is trainable from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

from neurodyn.cli import _deflation
from neurodyn.cli._common import (
    add_checkpoint_file,
    add_command,
    add_training_run,
    check_bounds,
    check_outputs,
    save_trained,
    train_quietly,
)
from neurodyn.cli._flags import task_summary, to_flag

__all__ = ["run"]

HELP = "train a network on a task and save a checkpoint"

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
#: held-out accuracy at which ``train`` stops by default (the task counts as solved); per task if listed
SOLVED_ACCURACY = 0.99
SOLVED_BY_TASK = {"flipflop": 1.0}
#: the leaky (and low-rank) Euler step ``--alpha`` of a task when it is not given: the tasks that hold
#: information over delays or unfold slowly train with leaky units (the settings of docs/tasks.md's
#: table; at ``--alpha 1`` the CLI defaults left romo at 0.69 accuracy and dms at 0.56 after 1000
#: iterations), the others with alpha 1 (the model's own default)
ALPHA_BY_TASK = {"romo": 0.2, "dms": 0.2, "continuous_report": 0.2, "sine_wave": 0.1, "hmm": 0.1}
#: every model option (``None`` when not given, so the model's own default applies)
MODEL_OPTIONS = sorted({o for _, opts in MODEL_CHOICES.values() for o in opts})


def _task_option(parser: argparse.ArgumentParser, field: dataclasses.Field) -> None:
    flag = to_flag(field.name)
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
    """Register ``neurodyn train TASK`` (one sub-command per registered task, with its options)."""
    from neurodyn.tasks import TASKS

    p = add_command(sub, __name__)
    tasks = p.add_subparsers(dest="task", required=True, metavar="TASK", parser_class=_TaskParser,
                             help="options: neurodyn train TASK --help")
    for name in sorted(TASKS):
        cls = TASKS[name]
        doc = task_summary(cls, name)
        tp = tasks.add_parser(name, help=doc, description=doc, formatter_class=p.formatter_class, task=cls)
        tp.set_defaults(func=run, task_name=name)


class _TaskParser(argparse.ArgumentParser):
    """The parser of ``train TASK``, whose options are added when it is first used (to parse or to show
    help), so a command line builds the options of the one task it names."""

    def __init__(self, *args: Any, task: type, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._task: type | None = task

    def _add_options(self) -> None:
        if self._task is not None:
            task, self._task = self._task, None
            g = self.add_argument_group("task options")
            for f in dataclasses.fields(task):
                _task_option(g, f)
            _common_options(self)

    def parse_known_args(self, args=None, namespace=None):
        self._add_options()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_options()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_options()
        return super().format_help()


def _common_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("model options (given only when they apply to --model)")
    m.add_argument("--model", choices=sorted(MODEL_CHOICES), default="leaky")
    m.add_argument("--n-units", type=int, default=64)
    m.add_argument("--activation", help="leaky/lowrank nonlinearity: tanh (default), relu, softplus, …")
    m.add_argument("--alpha", type=float,
                   help="leaky/lowrank Euler step dt/tau in (0, 1] (default: "
                        f"{', '.join(f'{v} for {k}' for k, v in ALPHA_BY_TASK.items())}; 1 for other tasks)")
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
    t.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate (docs/tasks.md)")
    t.add_argument("--weight-decay", type=float, default=0.0)
    t.add_argument("--clip-grad-norm", type=float, default=1.0, help="gradient-norm clipping (0: none)")
    for name, what in (("l1-weight", "L1 on weights"), ("l2-weight", "L2 on weights"),
                       ("l1-rate", "L1 on firing rates"), ("l2-rate", "L2 on firing rates")):
        t.add_argument(f"--{name}", type=float, default=0.0, help=f"strength of the {what} penalty")
    t.add_argument("--eval-every", type=int, default=100, help="evaluation period in iterations")
    t.add_argument("--target-accuracy", type=float, default=None,
                   help="stop once the held-out accuracy reaches this value (default: the task is solved, "
                        f"{SOLVED_ACCURACY}; {', '.join(f'{v} for {k}' for k, v in SOLVED_BY_TASK.items())})")
    t.add_argument("--no-target", action="store_true",
                   help="train all --n-iterations instead of stopping when the held-out batch is solved")
    t.add_argument("--early-stopping", type=_pair(int), metavar="METRIC:PATIENCE",
                   help="stop after PATIENCE evaluations without improvement of METRIC (e.g. loss:5)")
    t.add_argument("--curriculum", metavar="PARAM=V1,V2,…",
                   help="schedule a task option over stages (needs --advance-when)")
    t.add_argument("--advance-when", type=_pair(float), metavar="METRIC:THRESHOLD",
                   help="move to the next curriculum stage when METRIC reaches THRESHOLD")
    t.add_argument("--forcing", choices=("error", "teacher"),
                   help="nudge training states towards the targets: error forcing (Sağtekin et al. 2025) or "
                        "generalised teacher forcing; absent at evaluation (docs/error_forcing.md)")
    t.add_argument("--forcing-strength", type=float, metavar="C",
                   help="forcing strength in [0, 1] (default 0.5; needs --forcing)")
    t.add_argument("--forcing-anneal", choices=("none", "linear", "cosine"),
                   help="lower the forcing strength to 0 over training (default none; needs --forcing)")
    t.add_argument("--learning-rule", choices=("bptt", "rflo"), default="bptt",
                   help="backpropagation through time, or random feedback local online learning (RFLO, "
                        "Murray 2019; --model leaky only)")
    t.add_argument("--seed", type=int, default=0, help="seed of the initialisation and batches")
    t.add_argument("--device", default="cpu")
    add_training_run(t, result="weights", fused="a leaky RNN", rollout="training")
    _deflation.add_options(p)
    add_checkpoint_file(p.add_argument_group("output"), default="model.pt")


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
    if "alpha" in options and "alpha" not in given and task.name in ALPHA_BY_TASK:
        given["alpha"] = ALPHA_BY_TASK[task.name]
    wrong = sorted(set(given) - set(options))
    if wrong:
        flags = ", ".join(to_flag(k) for k in wrong)
        verb = "does" if len(wrong) == 1 else "do"
        raise ValueError(f"{flags} {verb} not apply to --model {args.model}; it takes "
                         f"{', '.join(to_flag(o) for o in options) or 'no model options'}")
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
        raise ValueError(f"--curriculum: {task.name} has no option {param.replace('_', '-')!r}; "
                         f"options: {', '.join(f.replace('_', '-') for f in fields)}")
    kind = type(getattr(task, param))
    return Curriculum(param, tuple(kind(v) for v in values.split(",")), args.advance_when)


#: task losses that compare whole sequence distributions (trained by ``train_distribution``)
_DISTRIBUTION_LOSSES = ("sinkhorn", "mmd")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options that every training entry point (:func:`neurodyn.train`, ``train_distribution``,
    ``train_deflated``) takes, as given on the command line."""
    return {"n_iterations": args.n_iterations, "batch_size": args.batch_size, "lr": args.lr,
            "clip_grad_norm": args.clip_grad_norm, "seed": args.seed, "eval_every": args.eval_every,
            "progress": not args.no_progress, "device": args.device}


def _train_distribution(args: argparse.Namespace, model, task):
    """Train a noise-driven network to match the task's sequence distribution (HMM emulation)."""
    from neurodyn.training.distribution import sample_emissions, train_distribution

    if args.deflate_against or args.curriculum or args.early_stopping:
        raise ValueError(
            f"task {task.name!r} is trained on a sequence divergence; --deflate-against, --curriculum "
            "and --early-stopping apply to per-step losses only"
        )
    result = train_quietly(train_distribution, model, task, divergence=task.loss,
                           deterministic=args.deterministic, **engine_options(args))
    if result.status in ("diverged", "interrupted"):
        return result, {}
    emitted, batch = sample_emissions(result.model.cpu(), task, 512, seed=args.seed + 1)
    return result, task.evaluate(emitted, batch)


def _forcing_options(args: argparse.Namespace, task: Any) -> dict[str, Any]:
    """The forcing keywords of :func:`neurodyn.train` from the command line; one-line errors for
    forcing options without ``--forcing`` or with a training mode that has no per-step rollout."""
    options = (("--forcing-strength", args.forcing_strength), ("--forcing-anneal", args.forcing_anneal))
    given = [flag for flag, value in options if value is not None]
    if args.forcing is None and given:
        verb = "needs" if len(given) == 1 else "need"
        raise ValueError(f"{' and '.join(given)} {verb} --forcing error or --forcing teacher")
    if args.forcing is None and args.learning_rule == "bptt":
        return {}
    if args.deflate_against or task.loss in _DISTRIBUTION_LOSSES:
        raise ValueError("--forcing and --learning-rule rflo apply to per-step task training only, not to "
                         "--deflate-against or sequence-distribution tasks")
    out = {"forcing": args.forcing, "learning_rule": args.learning_rule}
    if args.forcing_strength is not None:
        out["forcing_strength"] = args.forcing_strength
    if args.forcing_anneal is not None:
        out["forcing_anneal"] = args.forcing_anneal
    return out


def stopping_target(args: argparse.Namespace, task: Any) -> tuple[str, float] | None:
    """``("accuracy", threshold)`` at which training stops, or None (``--no-target``, ``--eval-every
    0``, deflation, sequence-distribution tasks, which have no per-trial accuracy to stop on)."""
    if args.no_target or args.eval_every == 0 or args.deflate_against or task.loss in _DISTRIBUTION_LOSSES:
        return None
    if args.target_accuracy is not None:
        return "accuracy", args.target_accuracy
    return "accuracy", SOLVED_BY_TASK.get(task.name, SOLVED_ACCURACY)


def stopping_report(args: argparse.Namespace, task: Any, target: tuple[str, float] | None, result) -> str:
    """One line: why training stopped, and the flag that changes it."""
    n_run, n_max = result.config["iterations_run"], args.n_iterations
    if target is None:
        why = ("--no-target" if args.no_target
               else "--eval-every 0: no held-out evaluation to stop on" if args.eval_every == 0
               else "--deflate-against has no stopping rule" if args.deflate_against
               else f"{task.name} is trained on a sequence distribution, with no accuracy to stop on")
        return f"ran all {n_run} iterations ({why})"
    reached = result.history.get("eval_accuracy") or [float("nan")]
    if result.status == "target_reached":
        return (f"stopped at iteration {n_run} of {n_max}: held-out accuracy {reached[-1]:.4f} reached the "
                f"target {target[1]} (solved; --no-target trains all iterations)")
    if result.status == "stopped_early":
        return f"stopped early at iteration {n_run} of {n_max} (--early-stopping), before the target"
    alpha = getattr(result.model, "alpha", None)
    leaky = f", or leakier units (--alpha, now {alpha:g})" if alpha is not None and alpha > 0.5 else ""
    return (f"held-out accuracy {reached[-1]:.4f} after {n_run} iterations did not reach the target "
            f"{target[1]}; train longer (--n-iterations) or change --lr (now {args.lr}){leaky}")


def run(args: argparse.Namespace) -> int:
    """Train a network on the chosen task and save its checkpoint; returns the exit status
    (0, or 1 when training diverged: the good checkpoint already on disk is kept).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from neurodyn.cli.main import build_parser
    >>> from neurodyn.cli.train import run
    >>> from neurodyn.io import load_checkpoint
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = Path(tmp) / "flipflop.pt"
    ...     args = build_parser().parse_args([
    ...         "train", "flipflop", "--n-bits", "1", "--n-steps", "6", "--n-units", "4",
    ...         "--n-iterations", "2", "--batch-size", "2", "--eval-every", "0", "--no-progress",
    ...         "--out", str(out)])
    ...     status = run(args)
    ...     checkpoint = load_checkpoint(out)
    trained leaky (4 units) on flipflop for 2 iterations (completed); on a fresh batch: ...
    saved ...flipflop.pt
    >>> status, type(checkpoint.model).__name__, checkpoint.model.n_units, checkpoint.task.n_bits
    (0, 'LeakyRNN', 4, 1)
    """
    import neurodyn
    from neurodyn.tasks import make_task

    check_outputs(args.out, overwrite=args.overwrite)
    check_bounds(args, (("--n-iterations", "n_iterations", 1, True), ("--seed", "seed", 0, True)))
    if not args.clip_grad_norm >= 0 or math.isinf(args.clip_grad_norm):
        raise ValueError(f"--clip-grad-norm must be >= 0 (0: no clipping), got {args.clip_grad_norm}")
    if args.target_accuracy is not None and not 0.0 < args.target_accuracy <= 1.0:
        raise ValueError(f"--target-accuracy must be in (0, 1], got {args.target_accuracy}")
    if args.target_accuracy is not None and args.no_target:
        raise ValueError("--target-accuracy and --no-target exclude each other; drop one")
    config = {k[len("task__"):]: v for k, v in vars(args).items() if k.startswith("task__")}
    task = make_task(args.task_name, **config)
    model = build_model(args, task)
    curriculum = _curriculum(args, task)
    target = stopping_target(args, task)
    strengths = {k: getattr(args, k) for k in ("l1_weight", "l2_weight", "l1_rate", "l2_rate")}
    forcing = _forcing_options(args, task)
    if task.loss in _DISTRIBUTION_LOSSES:
        result, metrics = _train_distribution(args, model, task)
    else:
        if args.deflate_against:
            result = train_quietly(_deflation.train, args, model, task,  # deflation: no target
                                   deterministic=args.deterministic)
        else:
            result = train_quietly(
                neurodyn.train, model, task, weight_decay=args.weight_decay, target_metric=target,
                regularizers=strengths, early_stopping=args.early_stopping, curriculum=curriculum,
                deterministic=args.deterministic, backend=args.backend, **engine_options(args), **forcing,
            )
        if curriculum is not None:
            task = curriculum.task_at(task, result.config["curriculum"]["final_stage"])
        metrics = {} if result.status in ("diverged", "interrupted") else neurodyn.training.evaluate(
            result.model.cpu(), task, seed=args.seed + 1)
    if result.status not in ("diverged", "interrupted"):
        shown = ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
        print(f"trained {args.model} ({args.n_units} units) on {task.name} for "
              f"{result.config['iterations_run']} iterations ({result.status}); on a fresh batch: {shown}")
        print(stopping_report(args, task, target, result))
    return save_trained("train", args.out, result, overwrite=args.overwrite, task=task,
                        extra={"final_metrics": metrics})
