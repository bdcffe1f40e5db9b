"""``neurodyn train TASK`` through the entry point: model options, checkpoints, overwrite guard."""

import pytest
import torch

from neurodyn.cli.main import main
from neurodyn.io import load_checkpoint
from neurodyn.models import LeakyRNN, LowRankRNN

TINY = ["--n-bits", "2", "--n-steps", "6", "--n-units", "8", "--n-iterations", "3",
        "--batch-size", "4", "--eval-every", "2", "--no-progress"]


def run_train(*args):
    return main(["train", "flipflop", *TINY, *map(str, args)])


def test_writes_checkpoint_that_loads_and_refuses_overwrite(tmp_path, capsys):
    out = tmp_path / "m.pt"
    assert run_train("--dale", "--dale-output", "--no-autapse", "--spectral-radius", "0.9",
                     "--l2-rate", "0.01", "--out", out) == 0
    assert "saved" in capsys.readouterr().out
    ckpt = load_checkpoint(out)
    m = ckpt.model
    assert isinstance(m, LeakyRNN) and m.dale and m.dale_output and m.no_autapse
    p = m.params()
    assert torch.all(p.w_out[:, m.excitatory().logical_not()] == 0)
    assert torch.all(torch.diagonal(p.w_rec) == 0)
    assert ckpt.task.config() == {"n_bits": 2, "n_steps": 6, "p_pulse": 0.1, "dt": 10.0}
    assert ckpt.training["regularizers"] == [{"name": "l2_rate", "strength": 0.01}]
    assert ckpt.training["iterations_run"] == 3 and ckpt.seed == 0
    before = out.read_bytes()
    assert run_train("--out", out) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert run_train("--out", out, "--overwrite", "--seed", "1") == 0
    assert load_checkpoint(out).seed == 1


def test_same_command_same_weights(tmp_path):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    assert run_train("--noise-std", "0.1", "--alpha", "0.5", "--out", a) == 0
    assert run_train("--noise-std", "0.1", "--alpha", "0.5", "--out", b) == 0
    sa, sb = load_checkpoint(a).model.state_dict(), load_checkpoint(b).model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_backend_option_is_recorded(tmp_path):
    out = tmp_path / "b.pt"
    assert run_train("--backend", "torch", "--out", out) == 0
    assert load_checkpoint(out).training["backend"] == "torch"


def test_training_options_reach_the_checkpoint(tmp_path):
    out = tmp_path / "t.pt"
    assert run_train("--clip-grad-norm", "0", "--weight-decay", "0.01", "--l1-weight", "0.001",
                     "--lr", "0.003", "--out", out) == 0
    training = load_checkpoint(out).training
    assert training["clip_grad_norm"] is None and training["weight_decay"] == 0.01
    assert training["lr"] == 0.003
    assert training["regularizers"] == [{"name": "l1_weight", "strength": 0.001}]


def test_lowrank_model(tmp_path):
    out = tmp_path / "lr.pt"
    assert run_train("--model", "lowrank", "--rank", "2", "--output-scale", "lazy", "--out", out) == 0
    m = load_checkpoint(out).model
    assert isinstance(m, LowRankRNN) and m.rank == 2
    assert m.output_scale == pytest.approx(8 ** -0.5)
    assert int(torch.linalg.matrix_rank(m.double().params().w_rec.detach())) == 2


def test_sparse_recurrent_mask_is_checkpointed(tmp_path):
    out = tmp_path / "sparse.pt"
    assert run_train("--rec-density", "0.25", "--out", out) == 0
    m = load_checkpoint(out).model
    assert torch.all(m.params().w_rec[m.w_rec_mask == 0] == 0)
    assert 0 < int(m.w_rec_mask.sum()) < 64


def test_curriculum_and_early_stopping_options(tmp_path):
    out = tmp_path / "cur.pt"
    assert run_train("--curriculum", "n-steps=3,6", "--advance-when", "loss:100",
                     "--early-stopping", "loss:5", "--out", out) == 0
    ckpt = load_checkpoint(out)
    assert ckpt.training["curriculum"]["final_value"] == 6
    assert ckpt.task.n_steps == 6
    assert ckpt.training["early_stopping"]["metric"] == "loss"


@pytest.mark.parametrize("args, message", [
    (["--model", "gru", "--dale"], "--dale does not apply to --model gru"),
    (["--model", "lstm", "--rank", "2"], "--rank does not apply to --model lstm"),
    (["--curriculum", "n-steps=3,6"], "--curriculum needs --advance-when"),
    (["--curriculum", "delay=3", "--advance-when", "loss:1"], "flipflop has no option 'delay'"),
    (["--dale-output"], "--dale-output needs --dale"),
])
def test_bad_options_are_one_line_errors(tmp_path, capsys, args, message):
    out = tmp_path / "x.pt"
    assert run_train(*args, "--out", out) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
