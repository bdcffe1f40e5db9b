"""Bad inputs of save_ensemble: one-line errors naming the argument, before anything is written."""

import os

import pytest
import torch

from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import save_ensemble, train_ensemble


@pytest.fixture(scope="module")
def ensemble():
    task = FlipFlop(n_bits=1, n_steps=10)
    return task, train_ensemble(lambda seed: LeakyRNN(1, 4, 1, seed=seed), task, n_networks=2, n_iterations=1,
                                batch_size=2, eval_every=0, progress=False)


def test_save_ensemble_names_wrong_objects(ensemble, tmp_path):
    task, result = ensemble
    with pytest.raises(TypeError, match="^result must be the EnsembleResult.*got list; save single models"):
        save_ensemble([LeakyRNN(1, 4, 1)], tmp_path / "a")
    with pytest.raises(TypeError, match=r"^task must be a Task .*make_task\('flipflop'\).*got str"):
        save_ensemble(result, tmp_path / "b", task="flipflop")
    assert not list(tmp_path.iterdir())


def test_save_ensemble_names_an_unusable_folder(ensemble, tmp_path):
    task, result = ensemble
    existing = tmp_path / "existing_file.json"
    existing.write_text("{}")
    with pytest.raises(NotADirectoryError, match=f"^cannot save the ensemble in {existing}: it is a file"):
        save_ensemble(result, existing)
    with pytest.raises(NotADirectoryError, match=f"^cannot write {existing / 'sub'}: {existing} is a file"):
        save_ensemble(result, existing / "sub")
    assert existing.read_text() == "{}"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_save_ensemble_names_a_folder_it_cannot_create(ensemble):
    with pytest.raises(OSError, match="^cannot write /proc/nope .*choose a folder that can be created"):
        save_ensemble(ensemble[1], "/proc/nope")


def test_save_ensemble_refuses_nan_weights_before_writing(ensemble, tmp_path):
    task, result = ensemble
    bad = result.models[1]
    keep = bad.w_rec.detach().clone()
    try:
        with torch.no_grad():
            bad.w_rec[0, 0] = float("nan")
        with pytest.raises(ValueError, match="^the network 1's weights contain NaN/Inf"):
            save_ensemble(result, tmp_path / "e", task=task)
    finally:
        with torch.no_grad():
            bad.w_rec.copy_(keep)
    assert not (tmp_path / "e").exists()
