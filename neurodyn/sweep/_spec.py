"""A sweep's specification: read from TOML or a dict, validated up front, expanded to keyed items."""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import numbers
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

__all__ = ["SpecError", "SweepItem", "SweepSpec", "load_spec"]

SECTIONS = ("task", "model", "training", "analysis")
GRID_SECTIONS = ("task", "model", "training")
#: training options of a sweep and their defaults (those of :func:`neurodyn.training.train`)
TRAINING_DEFAULTS: dict[str, Any] = {
    "n_iterations": 1000, "batch_size": 64, "lr": 1e-3, "weight_decay": 0.0, "clip_grad_norm": 1.0,
    "loss": None, "eval_every": 100, "l1_weight": 0.0, "l2_weight": 0.0, "l1_rate": 0.0, "l2_rate": 0.0,
    "ensemble": False,
}
REGULARIZER_KEYS = ("l1_weight", "l2_weight", "l1_rate", "l2_rate")
#: optional training options (forcing and learning rule of :func:`~neurodyn.training.train`; ``"none"``:
#: no forcing, as TOML has no null); kept out of an item's configuration unless given, so the keys of
#: sweeps without them do not change
FORCING_DEFAULTS: dict[str, Any] = {"forcing": "none", "forcing_strength": 0.5, "forcing_anneal": "none",
                                    "learning_rule": "bptt"}
#: per-network and per-cell analysis options and their defaults
ANALYSIS_DEFAULTS: dict[str, Any] = {
    "n_trials": 64, "seed": 12345, "n_inits": 128, "max_iters": 5000, "dynamics_metric": "dsa",
    "weight_kind": "euclidean", "graph": True,
}
_SIZE_ARGS = ("n_inputs", "n_outputs")
#: the metrics of :func:`~neurodyn.analysis.pairwise_distances`
DYNAMICS_METRICS = ("dsa", "procrustes", "cka", "rsa", "cca", "svcca", "pwcca")


class SpecError(ValueError):
    """A sweep specification that cannot run (one line naming the problem and the fix).

    Examples
    --------
    >>> from neurodyn.sweep import SpecError, load_spec
    >>> try:
    ...     load_spec({"task": {"name": "flipflop", "n_bitz": 2}, "model": {"n_units": 8},
    ...                "grid": {"model.gain": [1.0]}, "seeds": 1})
    ... except SpecError as err:
    ...     print(isinstance(err, ValueError), str(err).startswith("spec: "))
    True True
    """


def config_key(config: Any) -> str:
    """16 hex digits of the SHA-256 of ``config`` as canonical JSON (sorted keys)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SweepItem:
    """One network of a sweep: its grid cell, seed, resolved configuration and key.

    ``config`` is plain data (task name and options, model class and options, training and analysis
    options, seed) that :func:`~neurodyn.sweep.run_item` rebuilds the network from; ``key`` is its hash.

    Examples
    --------
    >>> from neurodyn.sweep import load_spec
    >>> spec = load_spec({"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8},
    ...         "model": {"n_units": 4}, "grid": {"model.gain": [0.5, 1.0]}, "seeds": [0, 1]})
    >>> item = spec.items()[3]                   # cells in grid order, seeds innermost
    >>> item.cell, item.seed, len(item.key), item.config["model"]["options"]["gain"]
    ((1.0,), 1, 16, 1.0)
    """

    key: str
    cell: tuple[Any, ...]
    seed: int
    config: dict[str, Any]


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: base options per section, a grid over ``"section.name"`` keys, seeds.

    Build it with :func:`load_spec`. ``dims`` names the dataset's dimension of each grid key (the
    option's name, or ``section_name`` where two sections share it).

    Examples
    --------
    >>> from neurodyn.sweep import load_spec
    >>> spec = load_spec({"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8},
    ...         "model": {"n_units": 4}, "grid": {"model.gain": [0.5, 1.0]}, "seeds": [0, 1]})
    >>> spec.dims, spec.cells, spec.seeds
    (('gain',), [(0.5,), (1.0,)], (0, 1))
    >>> spec.cell_options((0.5,))["model"]["gain"]
    0.5
    """

    task: dict[str, Any]
    model: dict[str, Any]
    training: dict[str, Any]
    analysis: dict[str, Any]
    grid: dict[str, list[Any]]
    seeds: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain data (what ``OUT/spec.json`` holds and what a rerun compares)."""
        return {"task": dict(self.task), "model": dict(self.model), "training": dict(self.training),
                "analysis": dict(self.analysis), "grid": {k: list(v) for k, v in self.grid.items()},
                "seeds": list(self.seeds)}

    @property
    def dims(self) -> tuple[str, ...]:
        names = [k.split(".", 1)[1] for k in self.grid]
        return tuple(n if names.count(n) == 1 else k.replace(".", "_") for n, k in zip(names, self.grid))

    @property
    def cells(self) -> list[tuple[Any, ...]]:
        """Every combination of grid values, in grid order (the last key varies fastest)."""
        return list(itertools.product(*self.grid.values()))

    def cell_options(self, cell: tuple[Any, ...]) -> dict[str, dict[str, Any]]:
        """``{"task": ..., "model": ..., "training": ...}`` options of one grid cell."""
        opts = {s: dict(getattr(self, s)) for s in GRID_SECTIONS}
        for key, value in zip(self.grid, cell):
            section, name = key.split(".", 1)
            opts[section][name] = value
        return opts

    def items(self) -> list[SweepItem]:
        """One :class:`SweepItem` per (cell, seed), cells in grid order, seeds innermost."""
        from neurodyn.models import MODELS

        out = []
        for cell in self.cells:
            opts = self.cell_options(cell)
            task = _build_task(opts["task"])
            model_opts = {k: v for k, v in opts["model"].items() if k != "name"}
            training = {**TRAINING_DEFAULTS, **opts["training"]}
            for seed in self.seeds:
                model = _build_model(MODELS[self.model["name"]], model_opts, task, seed)
                config = {
                    "task": {"name": task.name, "config": task.config()},
                    "model": {"class": self.model["name"], "options": model_opts, "config": model.config()},
                    "training": training, "analysis": dict(self.analysis), "seed": int(seed),
                }
                out.append(SweepItem(config_key(config), cell, int(seed), config))
        return out


def load_spec(source: str | Path | Mapping[str, Any] | SweepSpec) -> SweepSpec:
    """Read and validate a sweep specification (a TOML file, or the same content as a dict).

    The spec has tables ``[task]`` (``name`` of a registered task and its options), ``[model]``
    (``name`` of a registered model class, default ``"LeakyRNN"``, and its options; the input and output
    sizes come from the task), ``[training]`` (options of :func:`neurodyn.training.train`: ``n_iterations``,
    ``batch_size``, ``lr``, ``weight_decay``, ``clip_grad_norm``, ``loss``, ``eval_every``, the
    regularisation strengths ``l1_weight``, ``l2_weight``, ``l1_rate``, ``l2_rate``, and ``forcing``
    (``"none"``, ``"error"``, ``"teacher"``), ``forcing_strength``, ``forcing_anneal``, ``learning_rule``;
    ``ensemble = true``
    trains the networks of a grid cell as one :func:`~neurodyn.training.train_ensemble` call, each equal
    to float rounding to the one trained alone), ``[analysis]``
    (``n_trials``, ``seed`` of the evaluation batches, ``n_inits`` and ``max_iters`` of the fixed-point
    search,
    ``dynamics_metric`` and ``weight_kind`` of :func:`~neurodyn.analysis.compute_solution_degeneracy`,
    ``graph``), ``[grid]`` (``"section.name" = [values]`` for sections task, model, training) and the
    top-level ``seeds`` (a list of distinct integers >= 0, or a count ``n`` meaning ``0 .. n-1``).
    Every grid cell's task and model are built once here, so a bad value fails before any work.

    Parameters
    ----------
    source : path of a TOML file, mapping or SweepSpec

    Returns
    -------
    SweepSpec

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        (:class:`SpecError`) one line naming the problem: malformed TOML, an unknown section, task,
        model or option, an empty grid or grid list, repeated grid values or seeds, a grid key that
        is also a fixed option, or a value the task, model or trainer rejects.

    Examples
    --------
    >>> spec = load_spec({"task": {"name": "flipflop", "n_bits": 2}, "model": {"n_units": 8},
    ...                   "grid": {"training.l2_rate": [0.0, 0.01]}, "seeds": 2})
    >>> spec.dims, len(spec.items())
    (('l2_rate',), 4)
    >>> load_spec({"task": {"name": "flipflop"}, "model": {"n_units": 8}, "grid": {}, "seeds": 1})
    Traceback (most recent call last):
    ...
    neurodyn.sweep._spec.SpecError: spec: the grid is empty; give at least one "section.name" = [values]
    """
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            raise SpecError(f"{path} is a directory, not a sweep spec; give the .toml file")
        if not path.is_file():
            raise FileNotFoundError(f"no such sweep spec: {path}")
        try:
            raw = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise SpecError(f"spec {path} is not valid TOML ({err}); fix the file") from None
    elif isinstance(source, Mapping):
        raw = _plain(source)
    else:
        raise TypeError(f"spec must be a TOML path, a dict or a SweepSpec, got {type(source).__name__}")
    return _validate(raw)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value


def _validate(raw: dict[str, Any]) -> SweepSpec:
    from neurodyn.models import MODELS
    from neurodyn.tasks import TASKS

    unknown = set(raw) - {*SECTIONS, "grid", "seeds"}
    if unknown:
        raise SpecError(f"spec: unknown section(s) {sorted(unknown)}; known: {', '.join(SECTIONS)}, grid, "
                        "seeds")
    for s in (*SECTIONS, "grid"):
        if not isinstance(raw.get(s, {}), Mapping):
            raise SpecError(f"spec: [{s}] must be a table of options, got {type(raw[s]).__name__}")
    task = dict(raw.get("task", {}))
    if task.get("name") not in TASKS:
        raise SpecError(f"spec: task name {task.get('name')!r} is not a task; choose one of "
                        f"{', '.join(sorted(TASKS))}")
    model = {"name": "LeakyRNN", **raw.get("model", {})}
    names = {k.lower(): k for k in MODELS}
    if str(model["name"]).lower() not in names:
        raise SpecError(f"spec: model name {model['name']!r} is not a model; choose one of "
                        f"{', '.join(sorted(MODELS))}")
    model["name"] = names[str(model["name"]).lower()]
    training, analysis = dict(raw.get("training", {})), {**ANALYSIS_DEFAULTS, **raw.get("analysis", {})}
    allowed = {
        "task": _task_options(TASKS[task["name"]]),
        "model": _model_options(MODELS[model["name"]]),
        "training": (*TRAINING_DEFAULTS, *FORCING_DEFAULTS),
    }
    for section, opts in (("task", task), ("model", model), ("training", training)):
        for name in opts:
            _check_option(section, name, allowed[section], opts)
    for name in analysis:
        if name not in ANALYSIS_DEFAULTS:
            raise SpecError(f"spec: unknown option analysis.{name}; known: {', '.join(ANALYSIS_DEFAULTS)}")
    grid = _validate_grid(raw.get("grid", {}), allowed, {"task": task, "model": model, "training": training})
    spec = SweepSpec(task, model, training, analysis, grid, _validate_seeds(raw.get("seeds")))
    _check_values(spec)
    return spec


def _task_options(cls) -> tuple[str, ...]:
    if not is_dataclass(cls):
        return ()
    return tuple(f.name for f in fields(cls) if f.name not in ("name", "loss"))  # ClassVars excluded


def _model_options(cls) -> tuple[str, ...]:
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    return tuple(p for p in params if p not in (*_SIZE_ARGS, "seed"))


def _check_option(section: str, name: str, allowed: tuple[str, ...], opts: dict[str, Any]) -> None:
    if name == "name" and section in ("task", "model"):
        return
    if name == "seed":
        raise SpecError(f"spec: {section}.seed is not an option; seeds come from the top-level 'seeds' list")
    if section == "model" and name in _SIZE_ARGS:
        raise SpecError(f"spec: model.{name} is set by the task; remove it")
    if name not in allowed:
        raise SpecError(f"spec: unknown option {section}.{name}; known: {', '.join(allowed)}")


def _validate_grid(grid: Mapping[str, Any], allowed: dict[str, tuple[str, ...]],
                   fixed: dict[str, dict[str, Any]]) -> dict[str, list[Any]]:
    if not grid:
        raise SpecError('spec: the grid is empty; give at least one "section.name" = [values]')
    out = {}
    for key, values in grid.items():
        section, _, name = key.partition(".")
        if section not in GRID_SECTIONS or not name:
            raise SpecError(f"spec: grid key {key!r} must be 'section.name' with section one of "
                            f"{', '.join(GRID_SECTIONS)} (e.g. 'model.n_units')")
        if name == "name":
            raise SpecError(f"spec: grid over {key} is not supported; run one sweep per {section}")
        _check_option(section, name, allowed[section], fixed[section])
        if name in fixed[section]:
            raise SpecError(f"spec: {key} is both a fixed option and a grid key; remove one of them")
        if not isinstance(values, list) or not values:
            raise SpecError(f"spec: grid {key} must be a non-empty list of values, got {values!r}")
        if not (all(isinstance(v, str) for v in values) or all(_is_number(v) for v in values)):
            raise SpecError(f"spec: grid {key} must hold only numbers or only strings, got {values!r}")
        if any(isinstance(v, float) for v in values):
            values = [float(v) for v in values]
        if len(set(values)) != len(values):
            raise SpecError(f"spec: grid {key} repeats a value in {values!r}; give each value once")
        out[key] = list(values)
    return out


def forcing_options(training: dict[str, Any]) -> dict[str, Any]:
    """The forcing keywords of :func:`~neurodyn.training.train` from a sweep's training options."""
    out = {k: training.get(k, v) for k, v in FORCING_DEFAULTS.items()}
    out["forcing"] = None if out["forcing"] == "none" else out["forcing"]
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _validate_seeds(seeds: Any) -> tuple[int, ...]:
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise SpecError(f"spec: seeds = {seeds}; give a count >= 1 or a list of seeds")
        return tuple(range(seeds))
    if not isinstance(seeds, list) or not seeds:
        raise SpecError(f"spec: seeds must be a count or a non-empty list of integers >= 0, got {seeds!r}")
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise SpecError(f"spec: seeds must be integers >= 0, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise SpecError(f"spec: seeds repeat a value in {seeds!r}; give each seed once")
    return tuple(int(s) for s in seeds)


def _build_task(opts: dict[str, Any]):
    from neurodyn.tasks import make_task

    return make_task(opts["name"], **{k: v for k, v in opts.items() if k != "name"})


def _build_model(cls, opts: dict[str, Any], task, seed: int):
    return cls(n_inputs=task.n_inputs, n_outputs=task.n_outputs, seed=seed, **opts)


def _check_ensemble(model) -> None:
    from neurodyn.kernels._families import family_of
    from neurodyn.training.ensemble_params import MASKED

    family = family_of(model.params())
    if family is None or family.name not in MASKED:
        raise ValueError(f"ensemble = true cannot train {type(model).__name__}; set ensemble = false")


def _check_values(spec: SweepSpec) -> None:
    """Build every cell's task, model and training settings once (seed 0): bad values fail here."""
    from neurodyn.models import MODELS
    from neurodyn.training import TrainConfig
    from neurodyn.training.forcing import FORCINGS, Forcing, check_forcing
    from neurodyn.training.losses import LOSSES
    from neurodyn.training.regularizers import make_regularizers

    for cell in spec.cells:
        opts = spec.cell_options(cell)
        where = ", ".join(f"{k}={v!r}" for k, v in zip(spec.grid, cell))
        stage = "task"
        try:
            task = _build_task(opts["task"])
            stage = "model"
            model = _build_model(MODELS[spec.model["name"]],
                                 {k: v for k, v in opts["model"].items() if k != "name"}, task, 0)
            stage = "training"
            tr = {**TRAINING_DEFAULTS, **opts["training"]}
            TrainConfig(n_epochs=tr["n_iterations"], batch_size=tr["batch_size"], lr=tr["lr"],
                        weight_decay=tr["weight_decay"], clip_grad_norm=tr["clip_grad_norm"],
                        eval_every=tr["eval_every"], progress=False)
            make_regularizers({k: tr[k] for k in REGULARIZER_KEYS})
            f = forcing_options(tr)
            if f["forcing"] is not None and f["forcing"] not in FORCINGS:  # TOML spells no forcing "none"
                raise ValueError(f"unknown forcing {f['forcing']!r}; choose one of none, "
                                 f"{', '.join(FORCINGS)}")
            check_forcing(model, task, Forcing(f["forcing"], strength=f["forcing_strength"],
                                               anneal=f["forcing_anneal"], rule=f["learning_rule"]))
            if tr["ensemble"] and any(k in tr for k in FORCING_DEFAULTS):
                raise ValueError("ensemble = true trains by plain BPTT; drop the forcing options or set "
                                 "ensemble = false")
            if not isinstance(tr["ensemble"], bool):
                raise ValueError(f"ensemble must be true or false, got {tr['ensemble']!r}")
            if tr["ensemble"]:
                _check_ensemble(model)
            if (tr["loss"] or task.loss) not in LOSSES:
                raise ValueError(f"unknown loss {tr['loss']!r}; choose one of {', '.join(LOSSES)}")
        except (ValueError, TypeError, KeyError) as err:
            msg = " ".join(str(err.args[0] if isinstance(err, KeyError) and err.args else err).split())
            raise SpecError(f"spec: {stage} options at grid cell ({where}): {msg}") from None
    a = spec.analysis
    for name in ("n_trials", "n_inits", "max_iters"):
        if not (isinstance(a[name], int) and not isinstance(a[name], bool) and a[name] >= 1):
            raise SpecError(f"spec: analysis.{name} must be an integer >= 1, got {a[name]!r}")
    if a["dynamics_metric"] not in DYNAMICS_METRICS:
        raise SpecError(f"spec: analysis.dynamics_metric {a['dynamics_metric']!r} is unknown; choose one of "
                        f"{', '.join(DYNAMICS_METRICS)}")
    if a["weight_kind"] not in ("euclidean", "angular"):
        raise SpecError("spec: analysis.weight_kind must be 'euclidean' or 'angular', got "
                        f"{a['weight_kind']!r}")
