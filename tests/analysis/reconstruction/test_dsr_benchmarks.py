"""Slow reconstruction benchmark on shared data: Lorenz-63, GTF versus an untrained and a linear model.

The series is subsampled (every 5th point) so that a short CPU fit sees whole loops of the attractor
in windows of 60 steps; the measures use the equally subsampled, noise-free test file.
"""

import numpy as np
import pytest

from neurodyn.analysis.reconstruction import evaluate_reconstruction
from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

pytestmark = pytest.mark.slow


def test_lorenz63_gtf_beats_untrained_and_linear(shared_data):
    folder = shared_data / "lorenz63_gtf_benchmark"
    train = np.load(folder / "lorenz63_on0.05_train.npy")[:50_000:5].astype(np.float64)
    test = np.load(folder / "lorenz63_test.npy")[:50_000:5].astype(np.float64)
    model = ShallowPLRNN(0, 3, 3, n_hidden=100, clipped=True, seed=0)
    # adaptive GTF from alpha = 1 (product upper bound, annealed), as the GTF reference defaults
    fit = fit_teacher_forcing(model, train, observation="identity", alpha=1.0, adaptive_alpha=True,
                              n_epochs=60, batches_per_epoch=20, batch_size=64, seq_len=60, lr=1e-2,
                              lr_end=1e-4, progress=False, seed=0)
    kw = dict(observation="identity", n_transient=500, n_bins=20, smoothing=2.0)
    fitted = evaluate_reconstruction(fit.model, train, test, **kw)
    untrained = evaluate_reconstruction(model, train, test, baselines=False, **kw)
    d_fit, d_lin = fitted.d_stsp[0], fitted.d_stsp[1]
    h_fit, h_lin = fitted.d_h[0], fitted.d_h[1]
    assert d_fit < 0.5 * min(d_lin, untrained.d_stsp[0]), fitted.summary()
    assert h_fit < 0.7 * min(h_lin, untrained.d_h[0]), fitted.summary()
