"""``neurodyn train TASK``: train a network on a registered task and save a checkpoint.

Task options are generated from each task dataclass's fields (``FlipFlop.n_bits`` becomes
``--n-bits``), so every registered task is trainable from the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from neurodyn.cli._common import check_outputs
from neurodyn.tasks import TASKS

#: --model choices → (model class name in the registry, which model options it takes)
MODEL_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "leaky": ("LeakyRNN", ("activation", "alpha", "noise_std", "gain")),
    "gru": ("GRU", ()),
    "lstm": ("LSTM", ()),
}


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
        doc = (cls.__doc__ or name).strip().splitlines()[0]
        tp = tasks.add_parser(name, help=doc, description=doc)
        g = tp.add_argument_group("task options")
        for f in dataclasses.fields(cls):
            _task_option(g, f)
        _common_options(tp)
        tp.set_defaults(func=run, task_name=name)


def _common_options(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("model options")
    m.add_argument("--model", choices=sorted(MODEL_CHOICES), default="leaky")
    m.add_argument("--n-units", type=int, default=64)
    m.add_argument("--activation", default="tanh", help="leaky RNN nonlinearity: tanh, relu, softplus")
    m.add_argument("--alpha", type=float, default=1.0, help="leaky RNN Euler step dt/tau in (0, 1]")
    m.add_argument("--noise-std", type=float, default=0.0, help="recurrent noise sigma")
    m.add_argument("--gain", type=float, default=1.0, help="recurrent weight init gain")
    t = p.add_argument_group("training options")
    t.add_argument("--n-iterations", type=int, default=1000)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=1e-2)
    t.add_argument("--clip-grad-norm", type=float, default=1.0)
    t.add_argument("--target-accuracy", type=float, default=None,
                   help="stop early once the held-out accuracy reaches this value")
    t.add_argument("--seed", type=int, default=0, help="seed of the initialisation and batches")
    t.add_argument("--device", default="cpu")
    t.add_argument("--no-progress", action="store_true")
    o = p.add_argument_group("output")
    o.add_argument("--out", default="model.pt", help="checkpoint to write (default model.pt)")
    o.add_argument("--overwrite", action="store_true", help="replace an existing --out")


def build_model(args: argparse.Namespace, task: Any):
    from neurodyn.models import make_model

    cls_name, options = MODEL_CHOICES[args.model]
    kwargs = {k: getattr(args, k) for k in options}
    return make_model(cls_name, n_inputs=task.n_inputs, n_units=args.n_units,
                      n_outputs=task.n_outputs, seed=args.seed, **kwargs)


def run(args: argparse.Namespace) -> int:
    import neurodyn
    from neurodyn.io import save_checkpoint
    from neurodyn.tasks import make_task

    check_outputs(args.out, overwrite=args.overwrite)
    config = {k[len("task__"):]: v for k, v in vars(args).items() if k.startswith("task__")}
    task = make_task(args.task_name, **config)
    model = build_model(args, task)
    target = ("accuracy", args.target_accuracy) if args.target_accuracy is not None else None
    result = neurodyn.train(
        model, task, n_iterations=args.n_iterations, batch_size=args.batch_size, lr=args.lr,
        clip_grad_norm=args.clip_grad_norm, seed=args.seed, target_metric=target,
        progress=not args.no_progress, device=args.device,
    )
    metrics = neurodyn.training.evaluate(result.model.cpu(), task, seed=args.seed + 1)
    save_checkpoint(args.out, result.model, task=task, training=result.config,
                    extra={"final_metrics": metrics}, overwrite=args.overwrite)
    shown = ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
    print(f"trained {args.model} ({args.n_units} units) on {task.name} for "
          f"{result.config['iterations_run']} iterations: {shown}")
    print(f"saved {args.out}")
    return 0
