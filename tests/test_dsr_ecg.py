"""Slow: a shPLRNN fitted to the ECG generates a sustained oscillation with the heartbeat period.

The 700 Hz recording is subsampled 16x (43.75 Hz; one beat ≈ 44 steps) so that 60-step training
windows span a whole beat; the period is compared on the held-out test file.
"""

import numpy as np
import pytest

from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing, generate

pytestmark = pytest.mark.slow


def dominant_period(x: np.ndarray, lo: int = 20, hi: int = 80) -> int:
    """Lag (time steps) of the highest autocorrelation peak in [lo, hi)."""
    x = x - x.mean()
    ac = np.correlate(x, x, "full")[len(x) - 1:] / np.arange(len(x), 0, -1)
    return lo + int(np.argmax(ac[lo:hi]))


def test_ecg_fit_generates_an_oscillation_with_the_heartbeat_period(shared_data):
    folder = shared_data / "ecg_pecuzal5d"
    x = np.load(folder / "ECG_pecuzal_5d_train.npy")[::16]
    mean, std = x.mean(0), x.std(0)
    x = (x - mean) / std
    test = (np.load(folder / "ECG_pecuzal_5d_test.npy")[::16] - mean) / std
    model = ShallowPLRNN(0, 5, 5, n_hidden=50, clipped=True, seed=0)
    fit = fit_teacher_forcing(model, x, observation="identity", alpha=0.15, n_epochs=40, batches_per_epoch=20,
                              batch_size=64, seq_len=60, lr=1e-2, lr_end=1e-4, progress=False, seed=0)
    gen = generate(fit.model, test[0], 4000, observation="identity").observations[1000:]
    assert gen[-1000:, 0].std() > 0.2 * test[:, 0].std()  # still oscillating after 3000 steps
    p_data, p_gen = dominant_period(test[:, 0]), dominant_period(gen[:, 0])
    assert 40 <= p_data <= 48  # ~1 s heartbeat at 43.75 Hz
    assert abs(p_gen - p_data) <= 0.1 * p_data, (p_gen, p_data)
