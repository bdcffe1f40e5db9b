"""Slow: a shPLRNN fitted to the ECG beats with the heartbeat period, and its attractor is classified
consistently by two independent analyses.

The 700 Hz lead is low-passed at 15 Hz (zero phase), delay-embedded with the PECUZAL lags and
subsampled 16x (43.75 Hz; one beat ≈ 43 steps) so that 60-step training windows span a whole beat.
Ten latent units for five observed coordinates give the model memory beyond the embedding. The free
run must keep beating with the data's dominant period. Whether the fitted attractor is an exact
stable cycle or a chaotic/quasi-periodic band depends on the seed and, through float rounding, on
the processor (docs/fitting.md): so the test asks for consistency. Either the orbit from the
data-inferred state settles on a periodic orbit whose region sequence is solved in closed form
(find_attracting_cycles), all of whose monodromy eigenvalues lie inside the unit circle and whose
waveform repeats with the data's period, and then the largest Lyapunov exponent is negative; or no
orbit closes, and then the largest Lyapunov exponent is not negative (no stable cycle was missed).
Training runs on one thread so that the result does not depend on the core count.
"""

import numpy as np
import pytest
import torch

from neurodyn.analysis import find_attracting_cycles, lyapunov_spectrum
from neurodyn.io import TimeSeries, apply_preprocessing
from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing, generate

pytestmark = pytest.mark.slow
LAGS = [0, 10, 20, 55, 68]


def dominant_period(x: np.ndarray, lo: int = 20, hi: int = 80) -> int:
    """Lag (time steps) of the highest autocorrelation peak in [lo, hi)."""
    x = x - x.mean()
    ac = np.correlate(x, x, "full")[len(x) - 1:] / np.arange(len(x), 0, -1)
    return lo + int(np.argmax(ac[lo:hi]))


def test_ecg_fit_beats_with_the_heartbeat_period_and_its_attractor_is_classified_consistently(shared_data):
    folder = shared_data / "ecg_pecuzal5d"
    raw = TimeSeries.from_arrays(np.load(folder / "ECG_pecuzal_5d_train.npy")[:, :1], dt=1 / 700)
    train = raw.lowpass(15.0).delay_embed(LAGS).downsample(16).standardize()
    test = apply_preprocessing(TimeSeries.from_arrays(np.load(folder / "ECG_pecuzal_5d_test.npy")[:, :1],
                                                      dt=1 / 700), train.preprocessing).values
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = ShallowPLRNN(0, 10, 5, n_hidden=50, clipped=True, seed=0)
        fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.15, n_epochs=200,
                                  batches_per_epoch=20, batch_size=64, seq_len=60, lr=1e-2, lr_end=1e-4,
                                  progress=False, seed=0)
    finally:
        torch.set_num_threads(threads)
    run = generate(fit.model, test[0], 4000, observation="identity")
    p_data = dominant_period(test[:, 0])
    assert 40 <= p_data <= 48  # ~1 s heartbeat at 43.75 Hz
    assert run.observations[-1000:, 0].std() > 0.5 * test[:, 0].std()  # still beating after 3000 steps
    assert abs(dominant_period(run.observations[1000:, 0]) - p_data) <= 0.1 * p_data
    cycles = find_attracting_cycles(fit.model, run.states[1000], n_transient=3000, max_order=300)
    lam1 = lyapunov_spectrum(fit.model, h0=run.states[1000], n_steps=4000, n_transient=1000,
                             n_exponents=1).exponents[0, 0]
    if cycles.attrs["n_closed"] == 0:  # not periodic: then no stable cycle may have been missed
        assert cycles.n_cycles == 0
        assert lam1 > -2e-3, (lam1, cycles.summary())
        return
    assert cycles.attrs["n_closed"] == 1 and cycles.n_cycles == 1, cycles.summary()
    assert set(cycles.stability) == {"stable"} and np.abs(cycles.eigenvalues).max() < 1
    assert cycles.converged.all()
    assert lam1 < 0  # an exact stable cycle contracts
    # the exact cycle, read out and repeated, beats with the data's period (one or more beats per cycle)
    wave = np.tile(cycles.states[:, 0], 4000 // len(cycles.states) + 1)  # identity readout: unit 0
    assert abs(dominant_period(wave) - p_data) <= 0.1 * p_data
