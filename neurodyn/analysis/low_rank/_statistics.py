"""Identifiable statistics of the per-neuron loadings of a low-rank RNN."""

from __future__ import annotations

from typing import Any

import numpy as np

from neurodyn.analysis.low_rank._latent import low_rank_rows

__all__ = ["compute_low_rank_statistics"]


def compute_low_rank_statistics(model: Any, *, labels: Any = None) -> Any:
    """Which statistics of the loadings ``(m_i, n_i, I_i, b_i)`` fix the latent dynamics, and which do not.

    The latent map ``G(kappa, u) = (1 - alpha) kappa + alpha E[n phi(x . v)]`` with the drive
    loadings ``x = (m, I, b)`` and ``v = [kappa, u, 1]`` (see :func:`latent_map`) depends on the
    joint loading distribution only through the distribution of ``x`` and the conditional mean
    ``E[n | x]``: the spread of ``n`` around it (``n - E[n | x]``) averages out at large N, and the
    gauge ``(m, n) -> (m Q, n Q^-T)`` (any invertible ``Q``, rank x rank) leaves ``J`` unchanged.
    For Gaussian-mixture loadings (one Gaussian per population) the identifiable statistics are
    the population weights, the means and covariances of ``x``, the mean of ``n`` and the
    covariances ``Sigma_{n,x}`` (``sigma_nm``, ``sigma_nI``, ``sigma_nb``; Beiran et al. 2021,
    *Neural Comput* 33:1572; Dubreuil et al. 2022, *Nat Neurosci* 25:783), which is all that
    :func:`mean_field_latent_map` uses. The unconstrained directions are reported as the
    residual covariance of ``n`` after its linear regression on ``x`` within each population
    (exactly ``n - E[n | x]`` for Gaussian populations) and the gauge.

    Parameters
    ----------
    model : LowRankRNN
        With ``random_gain = 0``.
    labels : array of int, shape (unit,), optional
        Population of each neuron (``0 .. P-1``); default one population.

    Returns
    -------
    xarray.Dataset
        Dims ``population``, ``rank``/``rank_`` (latent), ``drive``/``drive_`` (``m0.., I0.., b``).
        Variables: ``weight`` (population), ``mean_drive`` (population, drive), ``cov_drive``
        (population, drive, drive_), ``mean_n`` (population, rank), ``cov_n_drive`` (population,
        rank, drive), ``overlap`` (rank, rank_: ``sigma_nm = n^T m / N``, gauge-covariant),
        ``overlap_eigenvalues_real`` / ``_imag`` (rank; gauge-invariant), and the unidentified
        part ``residual_cov_n`` (population, rank, rank_) and ``unidentified_fraction`` (rank):
        the share of the variance of each ``n_r`` that the dynamics do not constrain. Attributes
        ``activation``, ``alpha``, ``n_units``, ``n_inputs``. Covariances are population (1/N_p).

    Raises
    ------
    TypeError
        For a model that is not a ``LowRankRNN``.
    ValueError
        For ``random_gain != 0``, NaN/Inf in the model's loadings, labels of the wrong length or
        a population with fewer than ``drive + 1`` neurons (its covariance is not determined).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LowRankRNN
    >>> g = torch.Generator().manual_seed(0)
    >>> m = torch.randn(5000, 1, generator=g)
    >>> n = 2.0 * m + torch.randn(5000, 1, generator=g)  # sigma_nm = 2, half of n unconstrained
    >>> rows = torch.cat([m, n, torch.zeros(5000, 1)], dim=1)
    >>> stats = compute_low_rank_statistics(LowRankRNN.from_loadings(rows, rank=1))
    >>> round(float(stats.cov_n_drive[0, 0, 0]), 1), round(float(stats.unidentified_fraction[0]), 1)
    (2.0, 0.2)
    """
    import xarray as xr

    rows = low_rank_rows(model).numpy()
    rank, n_inputs, n_units = model.rank, model.n_inputs, model.n_units
    x = np.concatenate([rows[:, :rank], rows[:, 2 * rank:]], axis=1)  # (unit, drive)
    n = rows[:, rank:2 * rank]
    labels = np.zeros(n_units, dtype=int) if labels is None else np.asarray(labels)
    if labels.shape != (n_units,) or not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
        raise ValueError(f"labels must be non-negative integers of shape (unit,) = ({n_units},), "
                         f"got shape {labels.shape} dtype {labels.dtype}")
    n_pop, n_drive = int(labels.max()) + 1, x.shape[1]
    out = {k: [] for k in ("weight", "mean_drive", "cov_drive", "mean_n", "cov_n_drive", "residual_cov_n")}
    residual_var = np.zeros(rank)
    for p in range(n_pop):
        sel = labels == p
        if sel.sum() < n_drive + 1:
            raise ValueError(f"population {p} has {int(sel.sum())} neurons, fewer than drive + 1 = "
                             f"{n_drive + 1}; merge it with another population")
        xp, np_ = x[sel], n[sel]
        xc, nc = xp - xp.mean(0), np_ - np_.mean(0)
        cov_x, cov_nx = xc.T @ xc / sel.sum(), nc.T @ xc / sel.sum()
        # regression of n on x within the population; the b column is constant there, so pinv
        coef = cov_nx @ np.linalg.pinv(cov_x, rcond=1e-10, hermitian=True)
        res = nc - xc @ coef.T
        out["weight"].append(sel.mean())
        out["mean_drive"].append(xp.mean(0))
        out["cov_drive"].append(cov_x)
        out["mean_n"].append(np_.mean(0))
        out["cov_n_drive"].append(cov_nx)
        out["residual_cov_n"].append(res.T @ res / sel.sum())
        residual_var += (res ** 2).sum(0)
    overlap = n.T @ rows[:, :rank] / n_units
    eig = np.linalg.eigvals(overlap)
    eig = eig[np.lexsort((eig.imag, -eig.real))]
    total_var = np.maximum(((n - n.mean(0)) ** 2).sum(0), np.finfo(float).tiny)
    names = model.loading_names()
    drive = names[:rank] + names[2 * rank:]
    pdims = ("population",)
    ds = xr.Dataset(
        {
            "weight": (pdims, np.array(out["weight"])),
            "mean_drive": (pdims + ("drive",), np.array(out["mean_drive"])),
            "cov_drive": (pdims + ("drive", "drive_"), np.array(out["cov_drive"])),
            "mean_n": (pdims + ("rank",), np.array(out["mean_n"])),
            "cov_n_drive": (pdims + ("rank", "drive"), np.array(out["cov_n_drive"])),
            "residual_cov_n": (pdims + ("rank", "rank_"), np.array(out["residual_cov_n"])),
            "overlap": (("rank", "rank_"), overlap),
            "overlap_eigenvalues_real": (("rank",), eig.real.copy()),
            "overlap_eigenvalues_imag": (("rank",), eig.imag.copy()),
            "unidentified_fraction": (("rank",), residual_var / total_var),
        },
        coords={"population": np.arange(n_pop), "rank": np.arange(rank), "rank_": np.arange(rank),
                "drive": drive, "drive_": drive},
        attrs={"activation": model.activation, "alpha": model.alpha, "n_units": n_units,
               "n_inputs": n_inputs},
    )
    return ds
