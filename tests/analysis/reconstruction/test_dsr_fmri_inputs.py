"""Slow: an shPLRNN driven by the task inputs of an fMRI study, fitted and scored with those inputs.

Koppe et al. (2014) n-back data as prepared by Kramer et al. (2022): 20 BOLD ROIs, 5 blocks of 72
scans, 5 binary stimulus inputs. The MATLAB file has no stated licence, so it is read in tests only.
"""

import numpy as np
import pytest

from neurodyn.analysis import prediction_error
from neurodyn.analysis.reconstruction import evaluate_reconstruction
from neurodyn.io import TimeSeries
from neurodyn.models import ShallowPLRNN
from neurodyn.training import fit_teacher_forcing

pytestmark = pytest.mark.slow


def test_input_driven_fit_beats_the_baselines_on_a_held_out_block(shared_data):
    from scipy.io import loadmat

    subject = loadmat(shared_data / "fmri_koppe_nback" / "NBKO_PLRNN_dataset.mat", squeeze_me=True)["Data"][6]
    bold = np.stack([b.T for b in subject["X"].item()]).astype(float)  # (block, scan, roi)
    stim = np.stack([b.T for b in subject["Inp"].item()]).astype(float)  # (block, scan, input)
    assert bold.shape == (5, 72, 20) and stim.shape == (5, 72, 5)
    train = TimeSeries.from_arrays(bold[:4], inputs=stim[:4]).standardize()
    mean, std = train.preprocessing[-1]["mean"], train.preprocessing[-1]["std"]
    x_test = (bold[4] - mean) / std
    model = ShallowPLRNN(5, 20, 20, n_hidden=64, clipped=True, seed=0)
    fit = fit_teacher_forcing(model, train, observation="identity", alpha=0.2, n_epochs=60,
                              batches_per_epoch=20, batch_size=32, seq_len=30, lr=5e-3, lr_end=1e-4,
                              progress=False, seed=0)
    res = evaluate_reconstruction(fit.model, train.data.reshape(-1, 20), x_test, observation="identity",
                                  inputs_train=train.inputs.reshape(-1, 5), inputs_test=stim[4],
                                  n_transient=5, pe_steps=3, smoothing=1.0, method="gmm")
    d_stsp, d_h, pe = (dict(zip(res.models, v)) for v in (res.d_stsp, res.d_h, res.pe))
    assert d_stsp["fitted"] < 0.8 * d_stsp["linear"] and d_stsp["fitted"] < 0.5 * d_stsp["mean"]
    assert pe["fitted"] < pe["linear"] < pe["mean"]
    assert d_h["fitted"] < 0.5 * d_h["mean"]
    # the scored series is the driven run: feeding other inputs changes the prediction error
    shifted = np.roll(stim[4], 20, axis=0)
    other = prediction_error(fit.model, x_test, 3, observation="identity", inputs=shifted)
    assert other != pytest.approx(pe["fitted"], rel=1e-3)
