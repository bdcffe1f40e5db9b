"""Connectivity constraints of LeakyRNN: Dale's law, masks, autapses, fixed entries, spectral radius."""

import numpy as np
import pytest
import torch

from neurodyn.io import load_checkpoint, save_checkpoint
from neurodyn.models import LeakyRNN
from neurodyn.models.constraints import apply_dale, dale_signs, make_sparse_mask, spectral_radius


def test_dale_signs_counts():
    s = dale_signs(10, 0.8)
    assert s.tolist() == [1.0] * 8 + [-1.0] * 2
    with pytest.raises(ValueError, match="frac_excitatory"):
        dale_signs(10, 1.5)


def test_apply_dale_column_signs_for_any_weights():
    w = torch.randn(6, 6, generator=torch.Generator().manual_seed(1))
    eff = apply_dale(w, dale_signs(6, 0.5))
    assert torch.all(eff[:, :3] >= 0) and torch.all(eff[:, 3:] <= 0)
    assert torch.equal(eff.abs(), w.abs())


def test_dale_effective_weights_and_balance():
    m = LeakyRNN(2, 50, 1, dale=True, frac_excitatory=0.8, seed=3)
    w = m.params().w_rec.detach()
    assert torch.all(w[:, :40] >= 0) and torch.all(w[:, 40:] <= 0)
    # balanced initialisation: the expected row sum is zero (|N| means equal, I scaled by 40/10)
    assert abs(float(w.sum(1).mean())) < 0.5 * float(w.abs().sum(1).mean())
    assert m.excitatory().sum() == 40


def test_step_uses_effective_weights():
    m = LeakyRNN(2, 8, 1, dale=True, no_autapse=True, alpha=0.5, seed=0)
    p = m.params()
    h = torch.randn(3, 8, generator=torch.Generator().manual_seed(0))
    u = torch.randn(3, 2, generator=torch.Generator().manual_seed(1))
    expected = 0.5 * h + 0.5 * torch.tanh(h @ p.w_rec.T + u @ p.w_in.T + p.b)
    torch.testing.assert_close(m.step(h, u), expected)
    assert not torch.equal(p.w_rec, m.w_rec)  # raw parameters differ from the effective ones


def test_masks_zero_and_no_autapse():
    rec = make_sparse_mask((12, 12), 0.3, seed=2)
    inp = torch.ones(12, 3)
    inp[6:] = 0
    out = torch.zeros(2, 12)
    out[:, :4] = 1
    m = LeakyRNN(3, 12, 2, rec_mask=rec, input_mask=inp, output_mask=out, no_autapse=True, seed=1)
    p = m.params()
    assert torch.all(p.w_rec[rec == 0] == 0) and torch.all(torch.diagonal(p.w_rec) == 0)
    assert torch.all(p.w_in[6:] == 0) and torch.all(p.w_out[:, 4:] == 0)
    h = torch.randn(5, 12)
    torch.testing.assert_close(m.readout(h), h @ p.w_out.T + p.b_out)


def test_bad_mask_shape_and_values():
    with pytest.raises(ValueError, match=r"w_rec mask must have shape \(4, 4\)"):
        LeakyRNN(1, 4, 1, rec_mask=np.ones((3, 4)))
    with pytest.raises(ValueError, match="only 0/1"):
        LeakyRNN(1, 4, 1, rec_mask=np.full((4, 4), 0.5))
    with pytest.raises(ValueError, match="dale_output=True needs dale=True"):
        LeakyRNN(1, 4, 1, dale_output=True)
    with pytest.raises(ValueError, match="fixed accepts keys"):
        LeakyRNN(1, 4, 1, fixed={"w_foo": True})


def test_dale_output_reads_excitatory_only():
    m = LeakyRNN(1, 10, 3, dale=True, dale_output=True, seed=0)
    w_out = m.params().w_out
    assert torch.all(w_out[:, 8:] == 0) and torch.all(w_out[:, :8] >= 0)


@pytest.mark.parametrize("dale", [False, True])
def test_spectral_radius_init(dale):
    m = LeakyRNN(1, 30, 1, spectral_radius=0.9, dale=dale, no_autapse=True, seed=5)
    assert spectral_radius(m.params().w_rec) == pytest.approx(0.9, rel=1e-5)


def test_fixed_entries_keep_initial_values_under_gradient():
    fixed = torch.zeros(6, 6)
    fixed[0] = 1
    m = LeakyRNN(2, 6, 1, fixed={"w_rec": fixed, "w_in": True}, seed=0)
    before = m.params()
    opt = torch.optim.SGD(m.parameters(), lr=1.0, weight_decay=0.1)
    out = m(torch.randn(4, 5, 2)).outputs
    out.pow(2).sum().backward()
    opt.step()
    after = m.params()
    assert torch.equal(after.w_rec[0], before.w_rec[0].detach())
    assert not torch.equal(after.w_rec[1:], before.w_rec[1:].detach())
    assert torch.equal(after.w_in, before.w_in.detach())


@pytest.mark.parametrize("output_scale, expected", [("rich", 1 / 16), ("lazy", 1 / 4), (0.5, 0.5)])
def test_output_scale_multiplies_readout(output_scale, expected):
    m = LeakyRNN(1, 16, 2, output_scale=output_scale, seed=0)
    assert m.output_scale == pytest.approx(expected)
    torch.testing.assert_close(m.params().w_out, expected * m.w_out)
    assert float(m.w_out.detach().std()) > 0.5  # raw readout weights are O(1) once a scale is given


def test_default_init_unchanged_by_options():
    """Without constraints, raw and effective weights are the same tensors (old checkpoints load)."""
    m = LeakyRNN(2, 5, 1, seed=0)
    p = m.params()
    assert p.w_rec is m.w_rec and p.w_in is m.w_in and p.w_out is m.w_out
    assert list(m.state_dict()) == ["w_in", "w_rec", "w_out", "b", "b_out"]


def test_checkpoint_round_trip_keeps_masks(tmp_path):
    rec = make_sparse_mask((8, 8), 0.5, seed=0)
    fixed = torch.zeros(8, 2)
    fixed[:3] = 1
    m = LeakyRNN(2, 8, 2, dale=True, dale_output=True, rec_mask=rec, no_autapse=True,
                 fixed={"w_in": fixed}, output_scale="rich", spectral_radius=1.2, seed=4)
    with torch.no_grad():
        m.w_rec.add_(0.3)
    save_checkpoint(tmp_path / "m.pt", m)
    loaded = load_checkpoint(tmp_path / "m.pt").model
    for a, b in zip(m.params()[:5], loaded.params()[:5]):
        assert torch.equal(a, b)
    assert torch.equal(loaded.w_rec_mask, rec * (1 - torch.eye(8)))
    assert loaded.config() == m.config()
