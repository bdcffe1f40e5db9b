import pytest
import torch

from neurodyn._threads import one_thread


def test_one_thread_restores_the_count_also_on_error():
    before = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="inside"), one_thread():
        raise ValueError("inside")
    assert torch.get_num_threads() == before


def test_numba_launches_keep_torch_at_one_thread_under_omp_num_threads_1():
    """Numba's OpenMP layer resets the process's OpenMP thread count, which torch reads as its own:
    a free run and a fused training step must leave a one-thread process at one torch thread."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import torch\n"
        "from neurodyn.kernels import rollout\n"
        "from neurodyn.models import LeakyRNN\n"
        "m = LeakyRNN(2, 16, 1, seed=0)\n"
        "rollout(m, inputs=torch.zeros(4, 10, 2), backend='numba')\n"
        "a = torch.get_num_threads()\n"
        "m(torch.zeros(4, 10, 2)).outputs.sum().backward()\n"
        "from neurodyn.kernels import fused_states\n"
        "fused_states(m.params(), m.initial_state(4), torch.zeros(4, 10, 2)).sum().backward()\n"
        "print(a, torch.get_num_threads())\n"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"]
