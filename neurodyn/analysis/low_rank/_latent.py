"""The latent map of a low-rank RNN: exact at finite N, and its Gaussian mean-field limit."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from neurodyn._checks import check_finite

__all__ = ["latent_map", "mean_field_latent_map"]

#: Gauss-Hermite nodes used for the Gaussian averages of the mean-field map
N_QUADRATURE = 64


def check_low_rank(model: Any) -> None:
    """Raise a one-line ``ValueError`` unless ``model`` is a purely low-rank :class:`LowRankRNN`."""
    from neurodyn.models import LowRankRNN

    if not isinstance(model, LowRankRNN):
        raise TypeError(f"expected a LowRankRNN, got {type(model).__name__}; build one with "
                        "LowRankRNN(...) or LowRankRNN.from_loadings(...)")
    if model.random_gain != 0.0:
        raise ValueError("the latent dynamics close only for random_gain = 0; the full-rank part g chi "
                         f"(random_gain={model.random_gain}) has no low-rank description")


def low_rank_rows(model: Any) -> torch.Tensor:
    """The loading rows of a low-rank model as float64, after :func:`check_low_rank`; a one-line
    ``ValueError`` if they hold NaN or Inf (not checked inside ``torch.func`` transforms)."""
    check_low_rank(model)
    rows = model.loadings().double()
    if not torch._C._functorch.is_functorch_wrapped_tensor(rows) and not bool(torch.isfinite(rows).all()):
        raise ValueError("the model's loadings contain NaN or Inf; refit or repair the model first")
    return rows


def _drive(kappa: Any, inputs: Any, n_inputs: int, rank: int) -> torch.Tensor:
    """Stack ``[kappa, u, 1]`` into (..., drive) float64; ``inputs=None`` means zero input. A one-line
    ``ValueError`` for a wrong shape or NaN/Inf in ``kappa`` or ``inputs`` (values are not checked
    inside ``torch.func`` transforms such as ``vmap``/``jacfwd``, which cannot branch on them)."""
    k = torch.as_tensor(kappa, dtype=torch.float64)
    if k.ndim < 1 or k.shape[-1] != rank:
        raise ValueError(f"kappa must have shape (..., rank={rank}), got {tuple(k.shape)}")
    if not torch._C._functorch.is_functorch_wrapped_tensor(k):  # under vmap/jacfwd: no value checks
        check_finite(k, "kappa")
    if inputs is None:
        u = k.new_zeros(*k.shape[:-1], n_inputs)
    else:
        u = torch.as_tensor(inputs, dtype=torch.float64)
        try:
            u = u.expand(*k.shape[:-1], n_inputs)
        except RuntimeError:
            raise ValueError(f"inputs must have shape (..., input={n_inputs}) or (input={n_inputs},) "
                             f"matching kappa's batch shape {tuple(k.shape[:-1])}, "
                             f"got {tuple(u.shape)}") from None
        if not torch._C._functorch.is_functorch_wrapped_tensor(u):
            check_finite(u, "inputs")
    return torch.cat([k, u, k.new_ones(*k.shape[:-1], 1)], dim=-1)


def latent_map(model: Any, kappa: Any, inputs: Any = None) -> torch.Tensor:
    """One step of the exact latent dynamics ``kappa[t+1] = G(kappa[t], u[t])`` of a low-rank RNN.

    With ``J = m n^T / N`` the projection ``kappa = n^T h / N`` of the state of a
    :class:`~neurodyn.models.LowRankRNN` closes on itself at every N:
    ``kappa[t+1] = (1 - alpha) kappa[t] + alpha / N sum_i n_i phi(m_i . kappa[t] + I_i . u[t] + b_i)``
    (Mastrogiuseppe & Ostojic 2018, *Neuron* 99:609; Beiran et al. 2021, *Neural Comput* 33:1572),
    so the latent dynamics depend on the network only through the empirical distribution of the
    per-neuron loadings ``(m_i, n_i, I_i, b_i)``.

    Parameters
    ----------
    model : LowRankRNN
        With ``random_gain = 0``.
    kappa : array, shape (..., rank)
        Latent states (any batch shape).
    inputs : array, shape (..., input) or (input,), optional
        Input at this step; ``None`` is zero input.

    Returns
    -------
    Tensor, float64, shape (..., rank)

    Raises
    ------
    TypeError
        For a model that is not a ``LowRankRNN``.
    ValueError
        For ``random_gain != 0`` (the latent dynamics do not close), NaN/Inf in the model's loadings,
        a ``kappa`` whose last axis is not ``rank``, ``inputs`` of the wrong shape, or NaN/Inf in either.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=0, n_units=200, n_outputs=0, rank=1, alpha=0.5, seed=0)
    >>> h = torch.randn(200, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    >>> kappa = model.n.detach().double().T @ h / 200
    >>> step = model.double().step(h[None])[0]  # one step of the full network, projected
    >>> bool(torch.allclose(latent_map(model, kappa), model.n.detach().T @ step / 200))
    True
    """
    rows = low_rank_rows(model)
    rank = model.rank
    drive = _drive(kappa, inputs, model.n_inputs, rank)
    x = torch.cat([rows[:, :rank], rows[:, 2 * rank:]], dim=1)  # (unit, drive)
    from neurodyn.models._base import activation_fn

    rates = activation_fn(model.activation)(drive @ x.T)  # (..., unit)
    k = drive[..., :rank]
    return (1.0 - model.alpha) * k + model.alpha * rates @ rows[:, rank:2 * rank] / model.n_units


def mean_field_latent_map(statistics: Any, kappa: Any, inputs: Any = None) -> torch.Tensor:
    """The large-N latent map predicted by Gaussian-mixture loading statistics alone.

    For loadings drawn from a mixture of Gaussian populations ``p`` with weights ``w_p``
    (Beiran et al. 2021, *Neural Comput* 33:1572; Dubreuil et al. 2022, *Nat Neurosci* 25:783),
    Stein's lemma gives ``G(kappa, u) = (1 - alpha) kappa + alpha sum_p w_p (mu_n^p <phi>_p +
    Sigma_{n,drive}^p v <phi'>_p)`` with ``v = [kappa, u, 1]``, the pre-activation
    ``z ~ N(mu_drive^p . v, v^T Sigma_drive^p v)`` and ``<.>`` its Gaussian average
    (Gauss-Hermite, 64 nodes). Only these statistics enter: they are the identifiable ones.

    Parameters
    ----------
    statistics : xarray.Dataset
        From :func:`compute_low_rank_statistics`.
    kappa : array, shape (..., rank)
    inputs : array, shape (..., input) or (input,), optional

    Returns
    -------
    Tensor, float64, shape (..., rank)

    Raises
    ------
    TypeError
        For ``statistics`` that are not the dataset of :func:`compute_low_rank_statistics`.
    ValueError
        For a ``kappa`` whose last axis is not ``rank``, ``inputs`` of the wrong shape, or NaN/Inf in
        either.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LowRankRNN
    >>> model = LowRankRNN(n_inputs=0, n_units=4000, n_outputs=0, rank=1, alpha=1.0, seed=0)
    >>> from neurodyn.analysis.low_rank import compute_low_rank_statistics
    >>> stats = compute_low_rank_statistics(model)
    >>> kappa = torch.tensor([[0.5]], dtype=torch.float64)
    >>> exact, mf = latent_map(model, kappa), mean_field_latent_map(stats, kappa)
    >>> bool(abs(exact - mf).max() < 0.05)
    True
    """
    from neurodyn.models._base import activation_fn

    s = statistics
    needed = ("weight", "mean_drive", "cov_drive", "mean_n", "cov_n_drive")
    if not (hasattr(s, "data_vars") and all(v in s for v in needed)
            and all(a in s.attrs for a in ("n_inputs", "activation", "alpha"))):
        raise TypeError(f"statistics must be the xarray.Dataset of compute_low_rank_statistics(model), got "
                        f"{type(s).__name__}")
    rank, n_inputs = s.sizes["rank"], int(s.attrs["n_inputs"])
    phi = activation_fn(s.attrs["activation"])
    dphi = activation_fn(s.attrs["activation"], slope=True)
    v = _drive(kappa, inputs, n_inputs, rank)  # (..., drive)
    nodes, weights = np.polynomial.hermite_e.hermegauss(N_QUADRATURE)
    z = torch.as_tensor(nodes, dtype=torch.float64)
    wq = torch.as_tensor(weights / np.sqrt(2.0 * np.pi), dtype=torch.float64)
    out = torch.zeros(*v.shape[:-1], rank, dtype=torch.float64)
    for p in range(s.sizes["population"]):
        mu = torch.as_tensor(s["mean_drive"].values[p])
        cov = torch.as_tensor(s["cov_drive"].values[p])
        c_nx = torch.as_tensor(s["cov_n_drive"].values[p])
        mean = v @ mu
        sd = torch.sqrt(torch.clamp(torch.einsum("...i,ij,...j->...", v, cov, v), min=0.0))
        pre = mean[..., None] + sd[..., None] * z  # (..., node)
        avg_phi, avg_dphi = phi(pre) @ wq, dphi(pre) @ wq
        mu_n = torch.as_tensor(s["mean_n"].values[p])
        out = out + float(s["weight"].values[p]) * (
            mu_n * avg_phi[..., None] + (v @ c_nx.T) * avg_dphi[..., None])
    alpha = float(s.attrs["alpha"])
    return (1.0 - alpha) * v[..., :rank] + alpha * out
