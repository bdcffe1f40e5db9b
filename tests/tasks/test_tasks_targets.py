"""Each task's targets against an independent computation on small cases."""

import numpy as np
import pytest

from neurodyn.tasks import (
    ContinuousReport,
    DelayedDiscrimination,
    DelayedMatchToSample,
    PathIntegration,
    SineWave,
)
from neurodyn.tasks._trajectory import place_cell_code

ROMO_1999_PAIRS = {(10, 18), (14, 22), (18, 26), (22, 30), (26, 34),
                   (18, 10), (22, 14), (26, 18), (30, 22), (34, 26)}


def test_sine_targets_and_input_levels():
    task = SineWave(n_frequencies=3, f_min_hz=1.0, f_max_hz=3.0, duration_ms=300, dt=10)
    batch = task.sample(9, seed=0)
    for i in range(9):
        f = batch.trial_params["frequency_hz"][i, 0]
        assert f in (1.0, 2.0, 3.0)
        for k in (0, 7, 29):
            assert batch.targets[i, k, 0] == pytest.approx(np.sin(2 * np.pi * f * k * 0.010), abs=1e-6)
        assert np.all(batch.inputs[i, :, 0] == np.float32(0.25 + (f - 1.0) / 2.0))
    ood = task.ood()
    assert set(ood.frequency_set()) == {0.5, 1.5, 2.5, 3.5}


def test_romo_pairs_labels_and_timing():
    task = DelayedDiscrimination(input_noise=0.0)
    assert {tuple(p) for p in task.pairs.astype(int)} == ROMO_1999_PAIRS
    batch = task.sample(64, seed=1)
    f1, f2 = batch.trial_params["f1"], batch.trial_params["f2"]
    np.testing.assert_array_equal(batch.trial_params["label"], np.where(f1 > f2, 1, 2))
    for i in range(64):
        p = {k: v[i] for k, v in batch.periods.items()}
        assert p["delay"][1] - p["delay"][0] == round(batch.trial_params["delay_ms"][i] / task.dt)
        assert 500 <= batch.trial_params["delay_ms"][i] <= 1500
        np.testing.assert_allclose(batch.inputs[i, p["f1"][0]:p["f1"][1], 1], (f1[i] - 10) / 24)
        np.testing.assert_allclose(batch.inputs[i, p["f2"][0]:p["f2"][1], 2], (34 - f2[i]) / 24)
        assert np.all(batch.inputs[i, p["delay"][0]:p["delay"][1], 1:] == 0)
        assert np.all(batch.inputs[i, : p["decision"][0], 0] == 1)
        decision = batch.targets[i, p["decision"][0]:p["decision"][1], 0]
        assert np.all(decision == batch.trial_params["label"][i])
        assert np.all(batch.mask[i, p["decision"][1]:] == 0)
    ood = task.replace(input_noise=0.05).ood()  # pairs 4 Hz apart, noise x4, the same delays
    p = ood.sample(64, seed=0).trial_params
    assert np.all(abs(p["f1"] - p["f2"]) == 4.0) and ood.input_noise == pytest.approx(0.2)
    assert 500 <= p["delay_ms"].min() and p["delay_ms"].max() <= 1500


def test_dms_labels_follow_sample_and_test():
    task = DelayedMatchToSample(n_stimuli=4, input_noise=0.0)
    batch = task.sample(200, seed=2)
    s, t = batch.trial_params["sample"], batch.trial_params["test"]
    np.testing.assert_array_equal(batch.trial_params["label"], np.where(s == t, 1, 2))
    assert 0.35 < np.mean(s == t) < 0.65
    for i in range(5):
        p = batch.periods
        np.testing.assert_array_equal(batch.inputs[i, p["sample"][i, 0], 1:], np.eye(4)[s[i]])
        np.testing.assert_array_equal(batch.inputs[i, p["test"][i, 0], 1:], np.eye(4)[t[i]])


def test_continuous_report_targets_are_the_cued_angle():
    task = ContinuousReport(n_items=2, input_noise=0.0, min_separation_deg=60)
    batch = task.sample(50, seed=3)
    ang, cue = batch.trial_params["angles"], batch.trial_params["cue"]
    sep = np.abs((ang[:, 0] - ang[:, 1] + np.pi) % (2 * np.pi) - np.pi)
    assert np.all(sep >= np.deg2rad(60) - 1e-12)
    for i in range(50):
        r = batch.periods["response"][i]
        target = ang[i, cue[i]]
        expected = np.tile([np.cos(target), np.sin(target)], (r[1] - r[0], 1))
        np.testing.assert_allclose(batch.targets[i, r[0]:r[1]], expected, atol=1e-6)
        # the ring unit with the largest input has the preferred angle closest to the item
        s = batch.periods["stimulus"][i, 0]
        k = np.argmax(batch.inputs[i, s, 1:17])
        assert abs((2 * np.pi * k / 16 - ang[i, 0] + np.pi) % (2 * np.pi) - np.pi) <= np.pi / 16 + 1e-9
        c = batch.periods["cue"][i, 0]
        np.testing.assert_array_equal(batch.inputs[i, c, -2:], np.eye(2)[cue[i]])
    perfect = batch.targets.copy()
    swapped = batch.targets.copy()
    for i in range(50):
        other = ang[i, 1 - cue[i]]
        r = batch.periods["response"][i]
        swapped[i, r[0]:r[1]] = [np.cos(other), np.sin(other)]
    assert task.evaluate(perfect, batch)["swap_rate"] == 0.0
    assert task.evaluate(swapped, batch)["swap_rate"] == 1.0


@pytest.mark.parametrize("n_dims", [1, 2])
@pytest.mark.parametrize("boundary", ["avoid", "reflect"])
def test_path_integration_target_is_clipped_cumsum_of_velocity(n_dims, boundary):
    task = PathIntegration(n_dims=n_dims, boundary=boundary, duration_ms=4000, box_size_m=1.0)
    batch = task.sample(20, seed=4)
    v = batch.inputs[..., :n_dims].astype(np.float64)
    x0 = batch.inputs[:, 0, n_dims:].astype(np.float64)
    oracle = np.clip(x0[:, None] + np.cumsum(v * task.dt / 1000, axis=1), -0.5, 0.5)
    np.testing.assert_allclose(batch.targets, oracle, atol=1e-5)
    assert np.all(batch.inputs[:, 1:, n_dims:] == 0)  # the start cue is on for one step
    assert np.abs(batch.trial_params["position"]).max() <= 0.5 + 1e-12
    # 200 steps in a 1 m box: the walls are reached
    assert np.abs(batch.trial_params["position"]).max() > 0.45


def test_path_integration_speed_follows_the_rayleigh_model_away_from_walls():
    task = PathIntegration(n_dims=2, box_size_m=1000.0, duration_ms=2000)
    batch = task.sample(100, seed=5)
    speed = np.linalg.norm(batch.inputs[..., :2], axis=-1).ravel()
    b = task.speed_scale
    expected, sd = b * np.sqrt(np.pi / 2), b * np.sqrt((4 - np.pi) / 2)
    assert abs(speed.mean() - expected) < 3 * sd / np.sqrt(speed.size)
    heading = np.unwrap(np.arctan2(batch.inputs[..., 1], batch.inputs[..., 0]), axis=1)
    turn = np.diff(heading, axis=1).ravel() / (task.dt / 1000)
    assert turn.std() == pytest.approx(task.turn_std, rel=0.05)


def test_place_cell_targets_are_softmax_of_distances():
    task = PathIntegration(n_dims=2, targets="place_cells", n_place_cells=20, duration_ms=200)
    batch = task.sample(4, seed=6)
    pos = batch.trial_params["position"][:, 1:]
    c = task.place_cell_centers
    d2 = ((pos[..., None, :] - c) ** 2).sum(-1)
    ref = np.exp(-d2 / (2 * 0.12**2))
    ref /= ref.sum(-1, keepdims=True)
    np.testing.assert_allclose(batch.targets, ref, rtol=1e-4, atol=1e-7)
    start_code = place_cell_code(batch.trial_params["x0"], c, 0.12)
    np.testing.assert_allclose(batch.inputs[:, 0, 2:], start_code, rtol=1e-5, atol=1e-30)
    assert task.loss == "soft_cross_entropy"


def test_soft_cross_entropy_matches_torch_with_probability_targets():
    import torch

    from neurodyn.training.losses import LOSSES

    logits = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0))
    p = torch.softmax(torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(1)), -1)
    mask = torch.ones(3, 4, 1)
    mask[0, :2] = 0
    ref = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), p.reshape(-1, 5), reduction="none")
    ref = (ref.reshape(3, 4) * mask[..., 0]).sum() / mask.sum()
    assert LOSSES["soft_cross_entropy"](logits, p, mask).item() == pytest.approx(ref.item(), rel=1e-6)


def test_ring_coded_reports_hold_the_von_mises_code_of_the_cued_angle_and_decode_back():
    from neurodyn.tasks._timeline import decode_ring, ring_code

    angles = np.random.default_rng(0).uniform(-np.pi, np.pi, 50)
    for kappa in (0.5, 2.0, 8.0):
        np.testing.assert_allclose(decode_ring(ring_code(angles, 12, kappa)), angles, atol=1e-3)
    task = ContinuousReport(n_items=2, output_ring=12, input_noise=0.0)
    batch = task.sample(6, seed=1)
    assert task.n_outputs == 12 and batch.targets.shape == (6, task.n_steps, 12)
    resp = batch.periods["response"]
    for i in range(6):
        inside = batch.targets[i, resp[i, 0]:resp[i, 1]]
        code = ring_code(batch.trial_params["target_angle"][i:i + 1], 12, task.kappa)
        np.testing.assert_allclose(inside, np.repeat(code, len(inside), 0), atol=1e-6)
        assert not batch.targets[i, :resp[i, 0]].any()
    swapped = batch.targets.copy()
    other = batch.trial_params["angles"][np.arange(6), 1 - batch.trial_params["cue"]]
    for i in range(6):  # a network that reports the uncued item scores swaps, not hits
        swapped[i, resp[i, 0]:resp[i, 1]] = ring_code(other[i:i + 1], 12, task.kappa)
    metrics = task.evaluate(swapped, batch)
    assert metrics["swap_rate"] == 1.0 and metrics["accuracy"] == 0.0
