import pickle

import pytest
import torch

from neurodyn.io import ModelFileError, load_checkpoint, load_model, save_checkpoint
from neurodyn.models import GRU, LSTM, LeakyRNN
from neurodyn.tasks import FlipFlop


def test_roundtrip_keeps_model_task_and_seed(tmp_path):
    m = LeakyRNN(3, 8, 3, alpha=0.2, noise_std=0.05, seed=4)
    task = FlipFlop(n_bits=3, n_steps=20)
    path = save_checkpoint(tmp_path / "m.pt", m, task=task, training={"seed": 11, "lr": 0.01})
    raw = torch.load(path, weights_only=True)
    assert raw["format"] == "neurodyn-checkpoint" and raw["version"] == 1
    assert {"neurodyn", "torch", "numpy"} <= set(raw["versions"])
    ck = load_checkpoint(path)
    assert ck.task == task and ck.seed == 11 and ck.training["lr"] == 0.01
    assert ck.model.config() == m.config()
    for (k, a), b in zip(m.state_dict().items(), ck.model.state_dict().values()):
        assert torch.equal(a, b), k


def test_save_refuses_to_overwrite(tmp_path):
    p = tmp_path / "m.pt"
    save_checkpoint(p, LeakyRNN(1, 2, 1))
    before = p.read_bytes()
    with pytest.raises(FileExistsError, match="overwrite"):
        save_checkpoint(p, LeakyRNN(1, 3, 1))
    assert p.read_bytes() == before
    save_checkpoint(p, LeakyRNN(1, 3, 1), overwrite=True)
    assert load_checkpoint(p).model.n_units == 3


class _Net(torch.nn.Module):
    def __init__(self, cls, n_in=3, n=6, n_out=2, **kw):
        super().__init__()
        self.rnn = cls(n_in, n, batch_first=True, **kw)
        self.readout = torch.nn.Linear(n, n_out)


@pytest.mark.parametrize(
    "cls,kw,arch",
    [
        (torch.nn.RNN, {"nonlinearity": "tanh"}, "rnn_tanh"),
        (torch.nn.RNN, {"nonlinearity": "relu"}, "rnn_relu"),
        (torch.nn.GRU, {}, None),
        (torch.nn.LSTM, {}, None),
    ],
)
def test_foreign_state_dict_matches_torch(tmp_path, cls, kw, arch):
    torch.manual_seed(0)
    net = _Net(cls, **kw)
    torch.save(net.state_dict(), tmp_path / "sd.pt")
    loaded = load_model(tmp_path / "sd.pt", arch=arch)
    assert loaded.source == "state_dict" and loaded.model.n_outputs == 2
    x = torch.randn(2, 9, 3)
    ref, _ = net.rnn(x)
    assert loaded.model.w_out.dtype == torch.float32  # loaded models are float32, as checkpoints
    states = loaded.model(x).states[..., :6]
    torch.testing.assert_close(states, ref, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(loaded.model.readout(states[..., :6] if cls is not torch.nn.LSTM
                                                     else torch.cat([states, states], -1)),
                               net.readout(ref), atol=1e-6, rtol=1e-6)


def test_plain_rnn_needs_arch(tmp_path):
    torch.save(torch.nn.RNN(2, 4).state_dict(), tmp_path / "r.pt")
    with pytest.raises(ModelFileError, match="--arch rnn_tanh or --arch rnn_relu"):
        load_model(tmp_path / "r.pt")
    with pytest.raises(ModelFileError, match="GRU"):
        torch.save(torch.nn.GRU(2, 4).state_dict(), tmp_path / "g.pt")
        load_model(tmp_path / "g.pt", arch="lstm")


def test_no_input_weights_and_no_readout(tmp_path):
    sd = {k: v for k, v in torch.nn.GRU(1, 5).state_dict().items() if "ih" not in k}
    torch.save(sd, tmp_path / "g.pt")
    m = load_model(tmp_path / "g.pt").model
    assert m.n_inputs == 0 and m.n_outputs == 0 and m.n_units == 5


@pytest.mark.parametrize("kind", ["missing", "text", "pickle", "raw_pickle", "nan", "multilayer", "tensor"])
def test_bad_files_give_one_line_errors(tmp_path, kind, recwarn):
    p = tmp_path / "bad.pt"
    if kind == "text":
        p.write_text("not a model\n")
    elif kind == "pickle":
        torch.save({"obj": _Net(torch.nn.GRU)}, p)
    elif kind == "raw_pickle":  # pickle.dump, not torch.save: no zip container
        with open(p, "wb") as f:
            pickle.dump({"obj": _Net(torch.nn.GRU)}, f, protocol=4)
    elif kind == "nan":
        sd = torch.nn.GRU(2, 3).state_dict()
        sd["weight_hh_l0"][0, 0] = float("nan")
        torch.save(sd, p)
    elif kind == "multilayer":
        torch.save(torch.nn.GRU(2, 3, num_layers=2).state_dict(), p)
    elif kind == "tensor":
        torch.save(torch.zeros(3), p)
    err = FileNotFoundError if kind == "missing" else ModelFileError
    with pytest.raises(err) as info:
        load_model(p)
    msg = str(info.value)
    assert "\n" not in msg and str(p.name) in msg
    expected = {"missing": "no such file", "text": "not a PyTorch file", "pickle": "pickled Python objects",
                "raw_pickle": "pickled Python objects", "nan": "NaN", "multilayer": "multi-layer",
                "tensor": "single tensor"}[kind]
    assert expected in msg
    assert not [w for w in recwarn if "pickle protocol" in str(w.message)]  # the error alone, no torch note


def test_checkpoint_of_every_core_model(tmp_path):
    for cls in (LeakyRNN, GRU, LSTM):
        m = cls(2, 3, 1, seed=1)
        save_checkpoint(tmp_path / f"{cls.__name__}.pt", m)
        back = load_model(tmp_path / f"{cls.__name__}.pt")
        assert back.source == "checkpoint" and type(back.model) is cls
        x = torch.randn(1, 4, 2)
        torch.testing.assert_close(back.model(x).outputs, m.eval()(x).outputs)


def test_save_names_a_task_of_the_wrong_type(tmp_path):
    with pytest.raises(TypeError, match=r"^task must be a Task .*make_task\('flipflop'\).*got str"):
        save_checkpoint(tmp_path / "m.pt", LeakyRNN(1, 2, 1), task="flipflop")
    assert not list(tmp_path.iterdir())


def test_save_refuses_nan_weights_that_load_would_refuse(tmp_path):
    m = LeakyRNN(1, 3, 1, seed=0)
    with torch.no_grad():
        m.w_rec[0, 1] = float("inf")
    with pytest.raises(ValueError, match=r"^the model's weights contain NaN/Inf \(in w_rec\)"):
        save_checkpoint(tmp_path / "m.pt", m)
    assert not list(tmp_path.iterdir())


def test_save_names_the_callers_path_when_it_cannot_write(tmp_path):
    (tmp_path / "f").write_text("x")
    target = tmp_path / "f" / "m.pt"
    with pytest.raises(NotADirectoryError, match=f"^cannot write {target}: {tmp_path / 'f'} is a file"):
        save_checkpoint(target, LeakyRNN(1, 2, 1))
    if __import__("os").path.isdir("/proc/self"):
        with pytest.raises(OSError, match=r"^cannot write /proc/x\.pt \(.*\); choose a path in a writable"):
            save_checkpoint("/proc/x.pt", LeakyRNN(1, 2, 1))


def test_save_checkpoint_with_swapped_arguments_names_the_order(tmp_path):
    with pytest.raises(TypeError, match=r"swapped: call save_checkpoint\(path, model\)") as err:
        save_checkpoint(LeakyRNN(1, 4, 1), tmp_path / "m1fit.pt")
    assert "\n" not in str(err.value) and not (tmp_path / "m1fit.pt").exists()
    with pytest.raises(TypeError, match=r"save_checkpoint\(path, model\)"):
        save_checkpoint(LeakyRNN(1, 4, 1), 3)
