"""The fused kernels' reused buffers: reused only when nothing else holds them, never outside training."""

from __future__ import annotations

import contextlib
import threading

import pytest
import torch

from neurodyn.kernels import _workspace as ws
from neurodyn.kernels import fused_states, stack_params
from neurodyn.models import LeakyRNN
from neurodyn.tasks import FlipFlop
from neurodyn.training import train_ensemble

BIG = (4, 256, 256)  # 1 MiB of float32: at MIN_BYTES, so pooled

pytestmark = pytest.mark.skipif(ws._alone() is None, reason="this torch does not report storage use counts")


def test_reused_when_free_and_fresh_while_held():
    with ws.reuse_buffers():
        a = ws.empty("r", BIG, torch.float32)
        ptr = a.data_ptr()
        a.fill_(1.0)
        b = ws.empty("r", BIG, torch.float32)  # ``a`` still alive: a fresh buffer
        assert b.data_ptr() != ptr and bool((a == 1).all())
        del a
        b.fill_(2.0)
        view = b[1:]  # a view keeps ``b``'s memory in use
        del b
        c = ws.empty("r", BIG, torch.float32)
        assert bool((view == 2).all()) and c.data_ptr() != view.data_ptr() - BIG[1] * BIG[2] * 4
        arr = c.numpy()  # so does a NumPy view
        ptr_c = c.data_ptr()
        del c
        d = ws.empty("r", BIG, torch.float32)
        assert d.data_ptr() != ptr_c
        ptr_d = d.data_ptr()
        del d, arr
        assert ws.empty("r", BIG, torch.float32).data_ptr() == ptr_d  # nothing holds it: reused


def test_zeroed_smaller_and_other_dtypes():
    with ws.reuse_buffers():
        a = ws.empty("z", BIG, torch.float64)
        a.fill_(3.0)
        ptr = a.data_ptr()
        del a
        z = ws.empty("z", (2, 256, 256), torch.float64, zero=True)  # fits in the held buffer
        assert z.data_ptr() == ptr and z.shape == (2, 256, 256) and bool((z == 0).all())
        del z
        f = ws.empty("z", BIG, torch.float32)  # another dtype: a new buffer
        assert f.dtype == torch.float32 and f.shape == BIG


def test_fresh_outside_the_block_and_for_small_buffers():
    with ws.reuse_buffers():
        s = ws.empty("s", (3, 4), torch.float32, zero=True)
        assert bool((s == 0).all())
    assert not getattr(ws._LOCAL, "pool", {})  # released on exit
    b = ws.empty("o", BIG, torch.float32, zero=True)  # plain torch.zeros: no pool involved
    assert b.shape == BIG and bool((b == 0).all()) and not getattr(ws._LOCAL, "pool", {})


def test_pools_are_per_thread():
    seen = {}

    def worker(name):
        with ws.reuse_buffers():
            t = ws.empty("t", BIG, torch.float32)
            seen[name] = t.data_ptr()
            t.fill_(float(len(name)))
            barrier.wait()
            seen[name + "_ok"] = bool((t == float(len(name))).all())

    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "bb")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"] != seen["bb"] and seen["a_ok"] and seen["bb_ok"]


def _grads(nets, h0, x, reuse: bool):
    params = stack_params(nets)
    params = type(params)(*(v.detach().clone().requires_grad_(True) if isinstance(v, torch.Tensor)
                            and v.is_floating_point() and v.numel() else v for v in params))
    out = []
    with ws.reuse_buffers() if reuse else contextlib.nullcontext():
        for step in range(3):  # later calls reuse the buffers of earlier ones
            s = fused_states(params, h0, x * (step + 1))
            keep = s.detach().clone()
            (s.square().sum() + s[:, :, -1].sum()).backward()
            out.append((keep, *(p.grad.clone() for p in params if isinstance(p, torch.Tensor)
                                and p.grad is not None)))
            for p in params:
                if isinstance(p, torch.Tensor):
                    p.grad = None
    return out


def test_fused_states_equal_with_and_without_reuse():
    """Several fused forward/backward passes inside the block equal those outside, to the bit."""
    nets = [LeakyRNN(3, 40, 3, alpha=0.3, seed=s) for s in range(4)]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 50, 64, 3, generator=g)
    h0 = torch.zeros(4, 50, 40)
    plain, reused = _grads(nets, h0, x, False), _grads(nets, h0, x, True)
    for a, b in zip(plain, reused):
        for u, v in zip(a, b):
            assert torch.equal(u, v)


def test_ensemble_training_unchanged_by_reuse(monkeypatch):
    """A fused ensemble trains to the same weights with the buffers reused and with fresh ones."""
    task = FlipFlop(n_bits=2, n_steps=40)

    def run():
        res = train_ensemble(lambda seed: LeakyRNN(2, 48, 2, alpha=0.2, seed=seed), task, n_networks=6,
                             n_iterations=4, batch_size=64, lr=1e-2, eval_every=0, progress=False)
        assert res.config["backend"] == "numba"
        return [m.w_rec.detach().clone() for m in res.models]

    reused = run()
    monkeypatch.setattr(ws, "MIN_BYTES", 1 << 62)  # nothing pooled
    fresh = run()
    assert all(torch.equal(a, b) for a, b in zip(reused, fresh))
