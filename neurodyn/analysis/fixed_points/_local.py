"""Linear stability of a model's one-step map at many states: Jacobians and eigenvalues only."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from neurodyn._budget import MAX_MEMORY, check_memory
from neurodyn._checks import check_finite, check_setting
from neurodyn.analysis.fixed_points._stability import certify_stable, classify, eigenvalues
from neurodyn.analysis.jacobians import jacobians

#: memory per chunk with ``labels_only``: Jacobians the squarings read while they are still in the
#: cache, in blocks the allocator reuses (no fresh pages per chunk)
LABELS_CHUNK_BYTES = 32 << 20
#: bytes of outputs and scratch per point: radius, bound, n_unstable (8 each), flags, a label (object
#: pointer and its string) and the dataset's copies
_BYTES_PER_POINT = 96


def compute_stability(
    model: Any,
    states: Any,
    inputs: Any = None,
    *,
    marginal_tol: float = 1e-3,
    max_memory: float = MAX_MEMORY,
    labels_only: bool = False,
):
    """Spectral radius, number of unstable modes and stability label of ``h ↦ F(h, u)`` at each state.

    The Jacobian ``∂F/∂h`` at each state comes from :func:`neurodyn.analysis.jacobians` (closed
    forms for every model family), its eigenvalues from LAPACK's ``geev`` without eigenvectors
    (the labels need only moduli; NumPy's LAPACK, the points split over as many threads as torch's
    intra-op count, each on one BLAS thread, up to 512 units), in chunks whose Jacobians fit in
    ``max_memory``. The labels are those of :func:`find_fixed_points` (the
    discrete-time map's: stable when every ``|λ| < 1 − marginal_tol``); at a state that is not a
    fixed point they describe the local linearisation only (finite-time growth of perturbations).

    With ``labels_only=True`` the eigenvalues are computed only where a cheaper proof fails: a
    few squarings ``J, J², J⁴, …, J⁶⁴`` (float32 batched products with a rigorous rounding
    bound, :func:`~neurodyn.analysis.fixed_points._stability.certify_stable`) prove
    ``ρ(J) ≤ ‖J^(2^k)‖_F^(1/2^k) < 1 − marginal_tol`` at most stable states, which are labelled
    stable without their spectrum; every other state (saddles, unstable and marginal ones, and
    stable ones the squarings do not settle) gets its eigenvalues as above. The labels and
    ``n_unstable`` are those of the default path; only ``spectral_radius`` is missing (NaN) where
    the proof sufficed.

    Parameters
    ----------
    model : RecurrentModel, params NamedTuple or callable ``F(h, u)``
        As for :func:`neurodyn.analysis.jacobians`.
    states : Tensor or array, shape (point, state)
        float32 or float64. Eigenvalues are computed in that precision: float32 states take
        about two thirds of float64's time, with eigenvalue errors near ``1e-6 ‖J‖``.
    inputs : Tensor or array, shape (input,) or (point, input), optional
        The input held at each state (zeros / no input by default).
    marginal_tol : float
        Half-width of the band ``1 ± marginal_tol`` of moduli counted as marginal.
    max_memory : float
        Bytes of Jacobians held at once (1 GiB by default; at most 32 MiB with ``labels_only``).
    labels_only : bool
        Skip the eigenvalues of the states proven stable (see above); for many states whose
        labels are wanted, not their spectral radii.

    Returns
    -------
    xarray.Dataset
        Dimension ``point``; ``spectral_radius`` (point,) float64, the largest ``|λ|``;
        ``n_unstable`` (point,) int64, the number of ``|λ| > 1 + marginal_tol``; ``stability``
        (point,) str: ``"stable"``, ``"saddle"``, ``"unstable"`` or ``"marginal"``. Attributes
        ``marginal_tol`` and ``dtype``. With ``labels_only``, ``spectral_radius`` is NaN at the
        states proven stable, and ``spectral_radius_bound`` (point,) float64 holds a proven upper
        bound of the spectral radius there (below ``1 − marginal_tol``) and the spectral radius
        elsewhere.

    Raises
    ------
    ValueError
        On states that are not (point, state) float32/float64, inputs that are neither one vector
        nor one per state (or of the wrong width), a non-finite state or input, a ``marginal_tol``
        that is not a finite number >= 0 or a ``max_memory`` that is not a finite number > 0, more
        points than the memory available holds their results for (the message gives the
        estimate), or what :func:`neurodyn.analysis.jacobians` rejects (among them a callable that
        does not return (batch, state), and Jacobians with NaN or Inf at the finite states, as from
        model parameters after a diverged training run).

    Examples
    --------
    One tanh unit with self-weight 2: ``J = 2 (1 − h²)`` is 2 at ``h = 0`` and 0.166 at the stable
    point ``h = 0.9575``.

    >>> import torch
    >>> from neurodyn.analysis import compute_stability
    >>> from neurodyn.analysis.fixed_points._examples import bistable_unit
    >>> model = bistable_unit()  # h -> tanh(2 h)
    >>> ds = compute_stability(model, torch.tensor([[0.0], [0.9575]], dtype=torch.float64))
    >>> ds.spectral_radius.values.round(3).tolist(), ds.n_unstable.values.tolist()
    ([2.0, 0.166], [1, 0])
    >>> ds.stability.values.tolist()
    ['unstable', 'stable']
    >>> states = torch.tensor([[0.0], [0.9575]], dtype=torch.float64)
    >>> fast = compute_stability(model, states, labels_only=True)
    >>> fast.stability.values.tolist(), fast.spectral_radius.values.round(3).tolist()
    (['unstable', 'stable'], [2.0, nan])
    >>> bool(fast.spectral_radius_bound.values[1] < 1 - 1e-3)
    True
    """
    import xarray as xr

    check_setting("marginal_tol", marginal_tol, 0)
    check_setting("max_memory", max_memory, 0, strict=True)
    h = torch.as_tensor(states.detach() if isinstance(states, torch.Tensor) else states)
    if h.ndim != 2 or h.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"states must be a float32 or float64 array of shape (point, state), got "
                         f"{h.dtype} of shape {tuple(h.shape)}; reshape them with .reshape(-1, state)")
    # the per-point outputs (radius, bound, n_unstable, flags, labels) are estimated before anything
    # is allocated; the Jacobians come in chunks bounded by max_memory
    check_memory("compute_stability", float(h.shape[0]) * _BYTES_PER_POINT, f"{h.shape[0]} points",
                 "pass fewer states or call it in chunks")
    if not bool(torch.isfinite(h).all()):
        raise ValueError("states contain NaN or Inf; drop those rows before computing stability")
    u = None
    if inputs is not None:
        u = torch.as_tensor(inputs.detach() if isinstance(inputs, torch.Tensor) else inputs)
        if u.ndim not in (1, 2) or (u.ndim == 2 and u.shape[0] != h.shape[0]):
            raise ValueError(f"inputs must have shape (input,) or (point, input) with point = {h.shape[0]}, "
                             f"got {tuple(u.shape)}; pass one input vector or one per state")
        u = u.to(dtype=h.dtype, device=h.device)
        check_finite(u, "inputs", "pass finite inputs")
    n_points, n_state = h.shape
    memory = min(max_memory, LABELS_CHUNK_BYTES) if labels_only else max_memory
    chunk = max(1, int(memory // max(1, 2 * h.element_size() * n_state * n_state)))
    radius = np.zeros(n_points)
    proven = np.zeros(n_points, dtype=bool)
    bound = np.full(n_points, np.nan)
    n_unstable = np.zeros(n_points, dtype=np.int64)
    labels = np.empty(n_points, dtype=object)
    for start in range(0, n_points, chunk):
        rows = slice(start, start + chunk)
        u_rows = None if u is None or u.ndim == 1 else u[rows]
        jac = jacobians(model, h[rows], u if u_rows is None else u_rows)
        at = np.arange(start, min(start + chunk, n_points))
        if labels_only:
            ok, upper = certify_stable(jac, marginal_tol)
            ok = ok.cpu().numpy()
            proven[at[ok]], bound[at[ok]] = True, upper.cpu().numpy()[ok]
            at, jac = at[~ok], jac[torch.as_tensor(~ok, device=jac.device)]
        eig = eigenvalues(jac.cpu().numpy())
        labels[at], n_unstable[at] = classify(eig, marginal_tol)
        radius[at] = np.abs(eig).max(-1, initial=0.0)
    labels[proven], n_unstable[proven], radius[proven] = "stable", 0, np.nan
    data = {"spectral_radius": ("point", radius), "n_unstable": ("point", n_unstable),
            "stability": ("point", labels.astype(str))}
    if labels_only:
        data["spectral_radius_bound"] = ("point", np.where(proven, bound, radius))
    return xr.Dataset(data, attrs={"marginal_tol": float(marginal_tol),
                                   "dtype": str(h.dtype).replace("torch.", "")})
