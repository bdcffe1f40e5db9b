"""Figures of task performance: network output against target per trial, psychometric curves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neurodyn.plotting._style import axes_or_new

__all__ = ["plot_outputs", "plot_psychometric"]

#: names of the three output classes of the decision tasks (``romo``, ``dms``)
DECISION_CLASSES = ("fixate", "choice 1", "choice 2")
#: what choice 1 means in each decision task, found by its trial parameters
CHOICE_1 = {("f1", "f2"): '"f1 > f2"', ("sample", "test"): '"match"'}


def plot_outputs(batch: Any, outputs: Any, *, trials: Sequence[int] | int = 3, ax: Any = None,
                 channels: Sequence[int] | None = None, channel_names: Sequence[str] | None = None,
                 probabilities: bool | None = None):
    """Network output against target for a few trials of any task, with the loss mask.

    The trials are drawn side by side along the time axis (time in ms from each trial's start,
    ``batch.dt`` ms per step), the output channels stacked from top to bottom. Each channel shows
    the target (black dashed) and the output (coloured); grey bands mark the steps where the loss
    mask is 0 (not trained: grace periods, padding). For a cross-entropy task (class-index
    targets of shape (trial, time, 1) with several output logits) each class is one channel:
    the softmax probability of the class against the one-hot target.

    Parameters
    ----------
    batch : TaskBatch
        Any task's batch (``targets``, ``mask``, ``dt``).
    outputs : array-like, shape (trial, time, output)
        The network's outputs on ``batch.inputs`` (logits for cross-entropy tasks).
    trials : int or sequence of int
        The trials to draw, or how many of the first trials (default 3).
    ax : matplotlib Axes, optional
        A new 9 x (1 + 0.9 per channel) inch figure by default.
    channels : sequence of int, optional
        Output channels (classes) to draw; default all.
    channel_names : sequence of str, optional
        One name per drawn channel; default "output i", "class i" for cross-entropy tasks, and
        "fixate", "choice 1", "choice 2" for the decision tasks.
    probabilities : bool, optional
        Draw ``softmax(outputs)`` instead of the raw outputs; default True exactly for class-index
        targets (pass True for a soft-cross-entropy task such as place-cell path integration).

    Returns
    -------
    matplotlib.axes.Axes
        Lines labelled "target" and "output" (one of each per trial and channel, the first of each
        in the legend), grey bands labelled "mask 0 (not in the loss)".

    Raises
    ------
    ValueError
        If ``outputs`` does not match the batch's trials and steps, the targets are neither
        class indices nor of the outputs' shape, or a trial or channel is out of range.

    Examples
    --------
    >>> from neurodyn.tasks import FlipFlop
    >>> batch = FlipFlop(n_bits=2, n_steps=20).sample(4, seed=0)
    >>> ax = plot_outputs(batch, 0.9 * batch.targets, trials=2)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['output 0', 'output 1']
    """
    from matplotlib.ticker import MaxNLocator

    out = np.asarray(outputs, dtype=float)
    targets, mask = np.asarray(batch.targets, dtype=float), np.asarray(batch.mask, dtype=float)
    if out.ndim != 3 or out.shape[:2] != targets.shape[:2]:
        raise ValueError(f"outputs must have shape ({targets.shape[0]}, {targets.shape[1]}, output) "
                         f"(trial, time, output) like the batch, got {out.shape}")
    classes = targets.shape[-1] == 1 and out.shape[-1] > 1
    if not classes and targets.shape != out.shape:
        raise ValueError(f"targets {targets.shape} are neither class indices (trial, time, 1) nor of the "
                         f"outputs' shape {out.shape}")
    if classes:
        targets = (targets[..., 0, None] == np.arange(out.shape[-1])).astype(float)
    probs = classes if probabilities is None else bool(probabilities)
    if probs:
        out = np.exp(out - out.max(-1, keepdims=True))
        out /= out.sum(-1, keepdims=True)
    n_trials, n_steps, n_out = out.shape
    rows = np.arange(min(int(trials), n_trials)) if np.ndim(trials) == 0 else np.asarray(trials, dtype=int)
    chans = np.arange(n_out) if channels is None else np.asarray(channels, dtype=int)
    if rows.size == 0 or rows.min() < 0 or rows.max() >= n_trials:
        raise ValueError(f"trials must be indices in [0, {n_trials}), got {rows.tolist()}")
    if chans.size == 0 or chans.min() < 0 or chans.max() >= n_out:
        raise ValueError(f"channels must be indices in [0, {n_out}), got {chans.tolist()}")
    if channel_names is None:
        decision = classes and n_out == 3 and "label" in batch.trial_params
        channel_names = [DECISION_CLASSES[c] if decision else f"{'class' if classes else 'output'} {c}"
                         for c in chans]
    if len(channel_names) != len(chans):
        raise ValueError(f"channel_names needs one name per drawn channel ({len(chans)})")
    ax = axes_or_new(ax, figsize=(9, 1 + 0.9 * len(chans)), layout="constrained")

    shown = np.concatenate([out[rows][..., chans].ravel(), targets[rows][..., chans].ravel()])
    shown = shown[np.isfinite(shown)]
    lo, hi = (float(shown.min()), float(shown.max())) if shown.size else (0.0, 1.0)
    height = max(hi - lo, 1e-9)
    spacing = 1.25 * height
    dt = float(batch.dt)
    width = n_steps * dt
    gap = 0.08 * width
    t = np.arange(n_steps) * dt
    mask_of = (lambda c: mask[..., c]) if mask.shape[-1] == n_out else (lambda c: mask[..., 0])
    labels = {"target": "target", "output": "probability" if probs else "output"}
    if any(np.any(mask_of(c)[rows] == 0) for c in chans):
        labels["mask"] = "mask 0 (not in the loss)"
    for j, trial in enumerate(rows):
        x0 = j * (width + gap)
        for i, c in enumerate(chans):
            base = -i * spacing  # channel i's band is [base + lo, base + hi]
            m = mask_of(c)[trial]
            ax.fill_between(x0 + t, base + lo, base + hi, where=m == 0, step="mid", color="0.88", lw=0,
                            zorder=0, label=labels.pop("mask", None))
            ax.plot(x0 + t, base + targets[trial, :, c], color="black", ls="--", lw=1, zorder=2,
                    label=labels.pop("target", None))
            ax.plot(x0 + t, base + out[trial, :, c], color=f"C{i % 10}", lw=1.3, zorder=3,
                    label=labels.pop("output", None))
        ax.text(x0 + 0.5 * width, hi + 0.12 * height, f"trial {trial}", ha="center", va="bottom",
                fontsize="small")
    ax.set_yticks([-i * spacing + 0.5 * (lo + hi) for i in range(len(chans))], list(channel_names))
    ax.set_ylabel(f"each band: {lo:.3g} to {hi:.3g}", fontsize="small")
    starts = np.arange(rows.size) * (width + gap)
    ticks = MaxNLocator(nbins=3, steps=[1, 2, 2.5, 5, 10]).tick_values(0, width - dt)
    ticks = ticks[(ticks >= 0) & (ticks <= width - dt)]
    ax.set_xticks((starts[:, None] + ticks[None, :]).ravel(), [f"{v:g}" for v in ticks] * rows.size)
    ax.set_xlabel("time in trial (ms)")
    ax.set_xlim(-0.02 * width, starts[-1] + width + 0.02 * width)
    ax.set_ylim(-(len(chans) - 1) * spacing + lo - 0.1 * height, hi + 0.4 * height)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return ax


def plot_psychometric(batch: Any, outputs: Any, *, stimulus: Any = None, ax: Any = None,
                      label: str | None = None, xlabel: str | None = None, color: Any = None):
    """Psychometric curve of a decision task: fraction of "choice 1" against the stimulus difference.

    A trial's choice is the larger of the mean choice logits (classes 1 and 2) over the masked
    part of its decision period, the rule of the decision tasks' ``evaluate`` (``accuracy``).
    Trials are grouped by stimulus value; each group is one point (with its binomial standard
    error ``sqrt(p (1 - p) / n)`` as an error bar). Trials with non-finite logits in the
    decision period make no choice and are left out.

    Parameters
    ----------
    batch : TaskBatch or sequence of TaskBatch
        Batches of a decision task (``romo``, ``dms``): class-index targets, a mask and
        ``trial_params``. Several batches (e.g. of the task with different ``delta_f``) are pooled.
    outputs : array-like (trial, time, 3), or one per batch
        The network's logits on each batch.
    stimulus : None, str or array-like (trial,)
        The x value of each trial. Default: ``f1 - f2`` in Hz for ``romo``, ``test - sample``
        (stimulus index) for ``dms``. A string names a per-trial entry of ``trial_params``; an
        array gives the values of the pooled trials.
    ax : matplotlib Axes, optional
    label : str, optional
        Legend label of the curve (to compare several networks on one axes).
    xlabel : str, optional
        Default: the stimulus expression with its unit.
    color : matplotlib colour, optional

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines[-1]`` is the curve: x the sorted stimulus values, y the fraction of choice 1.

    Raises
    ------
    ValueError
        If a batch has no ``label`` trial parameter (not a decision task), outputs are not
        (trial, time, 3), batches and outputs differ in number, the default stimulus is unknown
        for the task, or ``stimulus`` has the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import DelayedDiscrimination
    >>> batch = DelayedDiscrimination().sample(20, seed=0)
    >>> logits = np.zeros((*batch.targets.shape[:2], 3))
    >>> logits[..., 1] = np.where(batch.trial_params["f1"] > batch.trial_params["f2"], 1, -1)[:, None]
    >>> ax = plot_psychometric(batch, logits)  # a perfect observer
    >>> ax.lines[-1].get_xydata().tolist()
    [[-8.0, 0.0], [8.0, 1.0]]
    """

    batches = [batch] if hasattr(batch, "targets") else list(batch)
    outs = [outputs] if hasattr(batch, "targets") else list(outputs)
    if len(batches) != len(outs):
        raise ValueError(f"{len(batches)} batches but {len(outs)} outputs; pass one outputs array per batch")
    choice, x_parts = [], []
    for b, o in zip(batches, outs):
        if "label" not in b.trial_params:
            raise ValueError("the batch has no 'label' trial parameter; plot_psychometric needs a decision "
                             "task (romo, dms) with choices 1 and 2")
        choice.append(_choices(b, o))
        if stimulus is None or isinstance(stimulus, str):
            x_parts.append(_stimulus(b, stimulus))
    choice = np.concatenate(choice)
    if stimulus is None or isinstance(stimulus, str):
        x = np.concatenate(x_parts)
    else:
        x = np.asarray(stimulus, dtype=float).ravel()
        if x.shape != choice.shape:
            raise ValueError(f"stimulus needs one value per trial ({choice.size}), got {x.size}")
    keys = tuple(sorted(k for k in batches[0].trial_params if k in ("f1", "f2", "sample", "test")))
    meaning = next((m for pair, m in CHOICE_1.items() if set(pair) <= set(keys)), None)
    valid = choice > 0
    xs = np.unique(x[valid])
    n = np.array([np.sum(valid & (x == v)) for v in xs])
    p = np.array([np.mean(choice[valid & (x == v)] == 1) for v in xs])
    ax = axes_or_new(ax, figsize=(4, 3.2), layout="constrained")
    ax.axhline(0.5, color="0.8", lw=0.8, ls=":", zorder=0)
    if xs.size and xs.min() < 0 < xs.max():
        ax.axvline(0.0, color="0.8", lw=0.8, ls=":", zorder=0)
    (curve,) = ax.plot(xs, p, "o-", color=color, ms=5, lw=1.2, label=label, zorder=3)
    ax.errorbar(xs, p, yerr=np.sqrt(p * (1 - p) / np.maximum(n, 1)), fmt="none", capsize=0, lw=1,
                color=curve.get_color(), zorder=2)  # a LineCollection: the curve stays ax.lines[-1]
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("fraction choice 1" + (f" ({meaning})" if meaning else ""))
    if xlabel is None:
        xlabel = {None: "stimulus", "f1": "f1 (Hz)", "f2": "f2 (Hz)"}.get(stimulus, str(stimulus))
        if stimulus is None:
            xlabel = "f1 − f2 (Hz)" if "f1" in keys else "test − sample (stimulus index)"
    ax.set_xlabel(xlabel)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if label is not None:
        ax.legend(fontsize="small", frameon=False)
    return ax


def _choices(batch: Any, outputs: Any) -> np.ndarray:
    """Choice per trial (1 or 2; 0 when a decision-period logit is not finite), shape (trial,).

    The rule of ``neurodyn.tasks._decision.evaluate_decision``: the larger mean choice logit over
    the masked decision steps (mask 1, target class > 0).
    """
    out = np.asarray(outputs, dtype=np.float64)
    if out.shape != (*batch.targets.shape[:2], 3):
        raise ValueError(f"outputs must have shape {(*batch.targets.shape[:2], 3)} (trial, time, 3 logits), "
                         f"got {out.shape}")
    choose = (batch.mask[..., 0] > 0) & (batch.targets[..., 0] > 0)
    logits = np.where(choose[..., None], out[..., 1:], 0.0)
    mean_logit = logits.sum(1) / np.maximum(choose.sum(1), 1)[:, None]
    finite = np.all(np.isfinite(out).all(-1) | ~choose, axis=1)
    return np.where(finite, 1 + np.argmax(mean_logit, axis=1), 0)


def _stimulus(batch: Any, key: str | None) -> np.ndarray:
    params = batch.trial_params
    if key is not None:
        if key not in params:
            raise ValueError(f"no trial parameter {key!r}; the batch has {sorted(params)}")
        return np.asarray(params[key], dtype=float).ravel()
    if "f1" in params and "f2" in params:
        return np.asarray(params["f1"], dtype=float) - np.asarray(params["f2"], dtype=float)
    if "sample" in params and "test" in params:
        return np.asarray(params["test"], dtype=float) - np.asarray(params["sample"], dtype=float)
    raise ValueError(f"no default stimulus for trial parameters {sorted(params)}; pass stimulus= "
                     "(a trial_params key or one value per trial)")
