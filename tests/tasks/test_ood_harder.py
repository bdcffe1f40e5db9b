"""Every task of the degeneracy study has an out-of-distribution variant that is harder than training by
the measure the behaviour level of solution degeneracy uses (the masked mean loss of
``degeneracy_features``), for a network part-way through training (fixation learnt, choices still near
chance, as in a short study) and after more training: otherwise the spread of OOD losses across seeds
cannot separate networks. Delayed discrimination failed this with its earlier variant (longer delays
only) at the first stage, as the flip-flop did before."""

import pytest
import torch

import neurodyn
from neurodyn.analysis import degeneracy_features
from neurodyn.models import LeakyRNN
from neurodyn.tasks import make_task

#: task -> (short-trial options, alpha), the study's tasks at test size
CASES = {
    "flipflop": ({"n_bits": 2, "n_steps": 16}, 1.0),
    "sine_wave": ({"duration_ms": 120.0}, 0.5),
    "romo": ({"fixation_ms": 40.0, "stimulus_ms": 40.0, "delay_min_ms": 40.0, "delay_max_ms": 80.0,
              "decision_ms": 40.0, "grace_ms": 20.0}, 0.5),
    "path_integration": ({"duration_ms": 200.0}, 0.5),
}


def _losses(model, task):
    f = degeneracy_features(model, task, n_trials=32, seed=12345, dynamics_metric="procrustes")
    return f.behaviour_id, f.behaviour_ood


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_ood_loss_exceeds_in_distribution_loss_during_training(name):
    torch.set_num_threads(1)
    options, alpha = CASES[name]
    task = make_task(name, **options)
    model = LeakyRNN(task.n_inputs, 16, task.n_outputs, alpha=alpha, seed=1)
    untrained, _ = _losses(model, task)
    # 40 iterations (near chance on delayed discrimination's choices), then 120 in all; harder by a
    # margin once trained
    for stage, (n_iterations, margin) in enumerate(((40, 1.0), (80, 1.5))):
        model = neurodyn.train(model, task, n_iterations=n_iterations, lr=1e-2, batch_size=32,
                               eval_every=0, seed=stage, progress=False).model
        id_loss, ood_loss = _losses(model, task)
        assert id_loss < 0.25 * untrained, (stage, id_loss, untrained)  # it has learnt something
        assert ood_loss > margin * id_loss, (stage, id_loss, ood_loss)
