"""The progress bar says that the first step may compile the Numba kernels, so it does not look hung."""

import pytest

from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train
from neurodyn.training._engine import FIRST_EPOCH_NOTE


@pytest.mark.parametrize("backend, shown", [("auto", True), ("torch", False)])
def test_the_first_step_note_shows_only_on_the_numba_kernels(capsys, backend, shown):
    task = FlipFlop(n_bits=1, n_steps=5)
    train(LeakyRNN(1, 4, 1, seed=0), task, n_iterations=2, batch_size=4, eval_every=0, progress=True,
          backend=backend)
    err = capsys.readouterr().err
    assert (FIRST_EPOCH_NOTE in err) == shown
    assert "2/2" in err  # the bar itself still runs to the end


def test_a_run_that_stops_on_its_target_says_so_on_the_bar(capsys):
    task = FlipFlop(n_bits=1, n_steps=5)
    result = train(LeakyRNN(1, 4, 1, seed=0), task, n_iterations=50, batch_size=4, eval_every=1,
                   progress=True, target_metric=("accuracy", 0.0))
    assert result.status == "target_reached"
    assert "stopped=target_reached" in capsys.readouterr().err
