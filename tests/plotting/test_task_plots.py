"""Output-vs-target traces and psychometric curves draw exactly the batch's targets, outputs, masks
and choices."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurodyn.plotting import plot_outputs, plot_psychometric  # noqa: E402
from neurodyn.tasks import DelayedDiscrimination, DelayedMatchToSample, FlipFlop  # noqa: E402

SHORT = dict(fixation_ms=100, stimulus_ms=100, delay_min_ms=100, delay_max_ms=300, decision_ms=100,
             grace_ms=40)


def lines(ax, color=None, ls=None):
    return [ln for ln in ax.lines if (ls is None or ln.get_linestyle() == ls)
            and (color is None or ln.get_color() == color)]


def test_outputs_of_an_mse_task_are_drawn_as_given():
    batch = FlipFlop(n_bits=2, n_steps=30).sample(5, seed=0)
    outputs = 0.8 * batch.targets + np.random.default_rng(0).normal(0, 0.05, batch.targets.shape)
    ax = plot_outputs(batch, outputs, trials=[3, 1])
    targets = lines(ax, color="black", ls="--")
    drawn = [ln for ln in ax.lines if ln not in targets]
    assert len(targets) == len(drawn) == 2 * 2  # trials x channels
    # each channel is shifted by a constant: trial 3, channel 1 is the second line of the first trial
    y, want = drawn[1].get_ydata(), outputs[3, :, 1]
    np.testing.assert_allclose(y - want, (y - want)[0], atol=1e-12)
    np.testing.assert_allclose(targets[1].get_ydata() - batch.targets[3, :, 1], (y - want)[0], atol=1e-6)
    x = drawn[0].get_xdata()
    np.testing.assert_allclose(np.diff(x), batch.dt)  # time in ms
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["target", "output"]  # no mask-0 key: the flip-flop's mask is all ones
    assert [t.get_text() for t in ax.texts] == ["trial 3", "trial 1"]
    plt.close(ax.figure)


def test_class_targets_show_probabilities_and_masked_steps():
    batch = DelayedDiscrimination(**SHORT).sample(4, seed=0)
    target = batch.targets[..., 0].astype(int)
    logits = np.where(np.arange(3) == target[..., None], 5.0, 0.0)  # confident and right
    ax = plot_outputs(batch, logits, trials=2)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fixate", "choice 1", "choice 2"]
    assert ax.get_legend_handles_labels()[1] == ["mask 0 (not in the loss)", "target", "probability"]
    p_right = np.exp(5.0) / (np.exp(5.0) + 2)
    drawn = [ln for ln in ax.lines if ln.get_linestyle() != "--"]
    offset = drawn[0].get_ydata()[0] - p_right  # trial 0 starts in fixation: P(fixate) = p_right
    np.testing.assert_allclose(drawn[0].get_ydata() - offset,
                               np.where(target[0] == 0, p_right, 1 / (np.exp(5.0) + 2)), atol=1e-12)
    # the grey bands cover exactly the steps with mask 0 (grace period and padding)
    band = next(c for c in ax.collections if c.get_label() == "mask 0 (not in the loss)")
    xs = np.unique(np.concatenate([p.vertices[:, 0] for p in band.get_paths()]))
    masked = np.flatnonzero(batch.mask[0, :, 0] == 0) * batch.dt
    assert xs.min() >= masked.min() - batch.dt and xs.max() <= masked.max() + batch.dt
    plt.close(ax.figure)


def test_outputs_errors():
    batch = FlipFlop(n_bits=2, n_steps=10).sample(3, seed=0)
    with pytest.raises(ValueError, match="outputs must have shape"):
        plot_outputs(batch, np.zeros((3, 9, 2)))
    with pytest.raises(ValueError, match="trials"):
        plot_outputs(batch, batch.targets, trials=[0, 3])
    with pytest.raises(ValueError, match="channel_names"):
        plot_outputs(batch, batch.targets, channel_names=["a"])
    plt.close("all")


def logits_choosing(batch, choice):
    """Logits (trial, time, 3) whose decision-period choice is ``choice`` (trial,) in {1, 2}."""
    out = np.zeros((*batch.targets.shape[:2], 3))
    out[..., 0] = 1.0
    out[np.arange(len(choice)), :, choice] = 2.0
    return out


def test_psychometric_points_match_a_hand_count():
    task = DelayedDiscrimination(**SHORT)
    batches = [task.sample(7, seed=0), task.replace(delta_f=4.0).sample(9, seed=1)]
    rng = np.random.default_rng(3)
    choices = [rng.integers(1, 3, size=b.n_trials) for b in batches]
    ax = plot_psychometric(batches, [logits_choosing(b, c) for b, c in zip(batches, choices)])
    counts: dict[float, list[int]] = {}
    for b, c in zip(batches, choices):
        for i in range(b.n_trials):
            d = float(b.trial_params["f1"][i] - b.trial_params["f2"][i])
            counts.setdefault(d, []).append(int(c[i] == 1))
    want = [[d, sum(v) / len(v)] for d, v in sorted(counts.items())]
    np.testing.assert_allclose(ax.lines[-1].get_xydata(), want)
    assert ax.get_xlabel() == "f1 − f2 (Hz)" and '"f1 > f2"' in ax.get_ylabel()
    plt.close(ax.figure)


def test_psychometric_choice_rule_is_the_tasks_accuracy_rule():
    task = DelayedMatchToSample(n_stimuli=3, sample_ms=100, test_ms=100, **{k: v for k, v in SHORT.items()
                                                                            if k != "stimulus_ms"})
    batch = task.sample(40, seed=0)
    logits = np.random.default_rng(1).normal(size=(*batch.targets.shape[:2], 3))
    decide = np.flatnonzero((batch.mask[5, :, 0] > 0) & (batch.targets[5, :, 0] > 0))
    logits[5, decide[0], 1] = np.nan  # a trial whose logits are not finite makes no choice
    ax = plot_psychometric(batch, logits, stimulus="test")
    from neurodyn.plotting.tasks import _choices

    choice = _choices(batch, logits)
    assert choice[5] == 0 and np.all(choice[np.arange(40) != 5] > 0)
    label = batch.trial_params["label"]
    assert np.mean(choice == label) == pytest.approx(task.evaluate(logits, batch)["accuracy"])
    x = batch.trial_params["test"]
    xy = ax.lines[-1].get_xydata()
    for v, p in xy:
        sel = (x == v) & (choice > 0)
        assert p == pytest.approx(np.mean(choice[sel] == 1))
    assert ax.get_xlabel() == "test" and '"match"' in ax.get_ylabel()
    plt.close(ax.figure)
    ax = plot_psychometric(batch, logits)  # default: test − sample
    assert ax.get_xlabel().startswith("test − sample")
    plt.close(ax.figure)


def test_psychometric_errors():
    batch = DelayedDiscrimination(**SHORT).sample(3, seed=0)
    ok = np.zeros((*batch.targets.shape[:2], 3))
    with pytest.raises(ValueError, match="decision task"):
        plot_psychometric(FlipFlop(n_steps=5).sample(2, seed=0), np.zeros((2, 5, 3)))
    with pytest.raises(ValueError, match="3 logits"):
        plot_psychometric(batch, ok[..., :2])
    with pytest.raises(ValueError, match="one outputs array per batch"):
        plot_psychometric([batch, batch], [ok])
    with pytest.raises(ValueError, match="one value per trial"):
        plot_psychometric(batch, ok, stimulus=[1.0, 2.0])
    plt.close("all")
