"""Jacobians, spectra and stability labels of the points a search keeps, and the result table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from neurodyn.analysis.fixed_points._result import FixedPointResult
from neurodyn.analysis.fixed_points._search import power_map, speed
from neurodyn.analysis.fixed_points._stability import classify, monodromy, spectra

#: what :func:`linearise` adds to a part, one row per cycle point
LINEAR_FIELDS = ("states", "inputs", "jacobians", "input_jacobians", "eigenvalues", "leading_mode",
                 "stability", "n_unstable")


def linearise(part: dict[str, Any], jac_hu: Callable, u_star: torch.Tensor | None, n_state: int,
              n_cond: int, marginal_tol: float, dtype: torch.dtype, device: Any) -> dict[str, Any]:
    """``part`` (one order's points, see ``_find._collect``) with the fields of ``LINEAR_FIELDS``.

    One row per cycle point: the state and input of the point, its (monodromy) Jacobian
    (state, state) and input Jacobian (state, input), the eigenvalues (state,) sorted by decreasing
    modulus with the leading mode (state,) from one eigenvalue solve per point, the label and the
    number of unstable eigenvalues. The midpoint starts take their stable points from these labels,
    and the result its rows, so each point's spectrum is computed once.

    With ``n_cond`` > 0 the orbits' states carry their input in the last ``n_cond`` columns.
    """
    orbits, k = part["orbits"], part["order"]
    n_cycles = orbits.shape[0]
    n_in = n_cond if n_cond else (0 if u_star is None else u_star.shape[0])
    t_orbits = torch.as_tensor(orbits, dtype=dtype, device=device)[:, :k]
    h = t_orbits[..., :n_state].reshape(-1, n_state)
    u = t_orbits[..., n_state:].reshape(-1, n_cond) if n_cond else \
        (None if u_star is None else u_star.expand(h.shape[0], -1))
    if n_cycles:
        A, B = jac_hu(h, u)
        mono, mono_u = monodromy(A.reshape(n_cycles, k, n_state, n_state),
                                 None if B is None else B.reshape(n_cycles, k, n_state, n_in))
        jac = mono.reshape(-1, n_state, n_state).cpu().numpy()
        jac_u = np.zeros((h.shape[0], n_state, 0)) if mono_u is None else \
            mono_u.reshape(-1, n_state, n_in).cpu().numpy()
    else:
        jac, jac_u = np.zeros((0, n_state, n_state)), np.zeros((0, n_state, n_in))
    eig, leading = spectra(jac)
    labels, n_unstable = classify(eig, marginal_tol)
    return {**part, "states": h.cpu().numpy(),
            "inputs": np.zeros((h.shape[0], 0)) if u is None else u.cpu().numpy(),
            "jacobians": jac, "input_jacobians": jac_u, "eigenvalues": eig, "leading_mode": leading,
            "stability": labels, "n_unstable": n_unstable}


def assemble(F, parts, marginal_tol, attrs, n_state, dtype, device, jac_hu, u_star,
             n_cond) -> FixedPointResult:
    """The result of the parts (one per order): one row per cycle point, cycles numbered in row
    order; parts not yet :func:`linearise`-d are linearised here."""
    rows: dict[str, list[np.ndarray]] = {name: [] for name in (
        *LINEAR_FIELDS, "q", "converged", "order", "cycle_id", "cycle_step", "iterations", "status")}
    n_in = n_cond if n_cond else (0 if u_star is None else u_star.shape[0])
    next_id = 0
    for part in parts:
        orbits, k = part["orbits"], part["order"]
        n_cycles = orbits.shape[0]
        if n_cycles == 0:
            continue
        if "eigenvalues" not in part:
            part = linearise(part, jac_hu, u_star, n_state, n_cond, marginal_tol, dtype, device)
        if k == 1:
            q = part["q"]
        else:
            with torch.no_grad():
                pts = torch.as_tensor(orbits[:, :k], dtype=dtype, device=device).reshape(-1, orbits.shape[-1])
                q = speed(power_map(F, k), pts).cpu().numpy()
        ids = np.arange(next_id, next_id + n_cycles)
        next_id += n_cycles
        for name in LINEAR_FIELDS:
            rows[name].append(part[name])
        rows["q"].append(q)
        rows["converged"].append(np.repeat(part["converged"], k))
        rows["iterations"].append(np.repeat(part["iterations"], k))
        rows["status"].append(np.repeat(part["status"], k))
        rows["order"].append(np.full(n_cycles * k, k, dtype=np.int64))
        rows["cycle_id"].append(np.repeat(ids, k))
        rows["cycle_step"].append(np.tile(np.arange(k), n_cycles))
    if not rows["states"]:
        cat = {name: np.zeros(0, dtype=np.int64) for name in rows}
        eig, leading = spectra(np.zeros((0, n_state, n_state)))
        labels, n_unstable = classify(eig, marginal_tol)
        cat.update(states=np.zeros((0, n_state)), inputs=np.zeros((0, n_in)), q=np.zeros(0),
                   jacobians=np.zeros((0, n_state, n_state)), input_jacobians=np.zeros((0, n_state, n_in)),
                   converged=np.zeros(0, dtype=bool), status=np.zeros(0, dtype=object), eigenvalues=eig,
                   leading_mode=leading, stability=labels, n_unstable=n_unstable)
    else:
        cat = {name: np.concatenate(vals) for name, vals in rows.items()}
    with_inputs = n_in > 0
    return FixedPointResult(
        states=cat["states"], q=cat["q"].astype(np.float64), eigenvalues=cat["eigenvalues"],
        stability=cat["stability"], n_unstable=cat["n_unstable"], converged=cat["converged"].astype(bool),
        order=cat["order"].astype(np.int64), cycle_id=cat["cycle_id"].astype(np.int64),
        cycle_step=cat["cycle_step"].astype(np.int64), iterations=cat["iterations"].astype(np.int64),
        status=cat["status"].astype(object), attrs=attrs, jacobians=cat["jacobians"],
        leading_mode=cat["leading_mode"], inputs=cat["inputs"].astype(np.float64) if with_inputs else None,
        input_jacobians=cat["input_jacobians"] if with_inputs else None,
    )

