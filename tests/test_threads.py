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
