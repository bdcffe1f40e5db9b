"""A noise-driven RNN trained with the Sinkhorn divergence reproduces a 2-state linear-chain
HMM's emission frequencies and dwell times (Torre et al. 2025)."""

import numpy as np
import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import HMMEmulation, compute_dwell_times, compute_emission_frequencies
from neurodyn.training.distribution import sample_emissions, train_distribution


@pytest.mark.slow
def test_rnn_emulates_two_state_linear_chain():
    torch.set_num_threads(1)
    task = HMMEmulation(n_states=2, topology="linear", stay_prob=0.95, n_steps=20, n_noise=8)
    model = LeakyRNN(task.n_inputs, 64, task.n_outputs, alpha=0.1, gain=1.5, seed=0)
    result = train_distribution(model, task, n_iterations=400, batch_size=128, lr=1e-2,
                                epsilon=0.02, n_sinkhorn_iter=30, seed=0, eval_every=0,
                                progress=False)
    emitted, batch = sample_emissions(result.model, task, 4000, seed=7)
    model_y, hmm_y = emitted.argmax(-1), batch.trial_params["symbols"]
    freq_rnn, freq_hmm = compute_emission_frequencies(model_y, 3), compute_emission_frequencies(hmm_y, 3)
    assert np.abs(freq_rnn - freq_hmm).max() < 0.05
    dominant = int(np.argmax(freq_hmm))
    dwell_rnn, dwell_hmm = compute_dwell_times(model_y, 3), compute_dwell_times(hmm_y, 3)
    assert abs(dwell_rnn[dominant] - dwell_hmm[dominant]) / dwell_hmm[dominant] < 0.2
    # an i.i.d. emitter with the same frequencies would have dwell times near 2 steps
    assert dwell_rnn[dominant] > 5
    metrics = task.evaluate(emitted, batch)
    assert metrics["emission_error"] < 0.05 and metrics["dwell_error"] < 0.2
