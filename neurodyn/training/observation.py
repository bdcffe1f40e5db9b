"""Observation models for fitting latent RNNs to recordings.

The latent model's :meth:`~neurodyn.models.RecurrentModel.readout` is the observation map. It must
be affine, ``g(z) = B z + b`` (every neurodyn model's readout is), and is used in three ways:

* ``"identity"``: ``B = [I 0]``, ``b = 0``, frozen — the first ``n_channels`` latent units are the
  observed channels and only those are teacher-forced (partial forcing, Hess et al. 2023);
* ``"affine"``: ``B``, ``b`` are learned with a Gaussian (MSE) loss; forcing signals are the
  pseudo-inverse ``B⁺ (x - b)`` (Brenner et al. 2022; Hess et al. 2023);
* ``"poisson"``: spike counts ``x ~ Poisson(softplus(B z + b))``, trained by the Poisson negative
  log-likelihood; forcing signals invert the link on temporally smoothed counts,
  ``B⁺ (softplus⁻¹(x̄ + eps) - b)``.
"""

from __future__ import annotations

import numpy as np
import torch

from neurodyn._checks import check_finite, check_setting

__all__ = [
    "OBSERVATIONS", "affine_readout", "check_counts", "check_observation", "forcing_mask", "forcing_targets",
    "invert", "observation_loss", "observe", "prepare_observation", "readout_pinv",
]

OBSERVATIONS = ("identity", "affine", "poisson")
READOUT_PARAMS = ("B", "b_out", "w_out")
_EPS = 1e-3


def check_observation(observation: str) -> None:
    """Raise a ``ValueError`` listing :data:`OBSERVATIONS` unless ``observation`` is one of them.

    Examples
    --------
    >>> from neurodyn.training.observation import check_observation
    >>> check_observation("poisson")
    >>> check_observation("gaussian")
    Traceback (most recent call last):
    ...
    ValueError: unknown observation model 'gaussian'; choose one of identity, affine, poisson
    """
    if observation not in OBSERVATIONS:
        raise ValueError(
            f"unknown observation model {observation!r}; choose one of {', '.join(OBSERVATIONS)}")


def check_counts(x: np.ndarray) -> None:
    """Raise a one-line ``ValueError`` unless ``x`` holds finite non-negative integer counts (integer-valued
    floats such as ``3.0`` are counts), as the Poisson observation model's data must.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.training.observation import check_counts
    >>> check_counts(np.array([0.0, 3.0, 7.0]))
    >>> check_counts(np.array([1.0, 0.5]))
    Traceback (most recent call last):
    ...
    ValueError: Poisson observation needs non-negative integer counts; got non-integer values (e.g. 0.5): \
bin spikes into counts or use observation='identity'
    """
    x = np.asarray(x)
    check_finite(x, "Poisson counts", "bin spikes into finite counts")
    for what, bad in (("negative", x < 0), ("non-integer", x != np.round(x))):
        if np.any(bad):
            example = x[bad].flat[0]
            raise ValueError(f"Poisson observation needs non-negative integer counts; got {what} values "
                             f"(e.g. {example:g}): bin spikes into counts or use observation='identity'")


def affine_readout(model) -> tuple[torch.Tensor, torch.Tensor]:
    """``(B (output, state), b (output,))`` with ``readout(z) = z @ B.T + b`` (differentiable).

    Found by evaluating the readout at 0 and at the unit vectors, so it works for any model.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.training.observation import affine_readout
    >>> model = LeakyRNN(1, 5, 2, seed=0)
    >>> B, b = affine_readout(model)
    >>> tuple(B.shape), tuple(b.shape)  # (output, state), (output,)
    ((2, 5), (2,))
    >>> z = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    >>> bool(torch.allclose(model.readout(z), z @ B.T + b, atol=1e-6))
    True
    """
    ref = next(model.parameters())
    n = model.state_size
    eye = torch.eye(n, dtype=ref.dtype, device=ref.device)
    b = model.readout(torch.zeros(1, n, dtype=ref.dtype, device=ref.device))[0]
    B = (model.readout(eye) - b).T
    return B, b


def readout_parameter_names(model) -> list[str]:
    """Names of the parameters that belong to the readout (``B``/``w_out``, ``b_out``)."""
    return [n for n, p in model.named_parameters() if n in READOUT_PARAMS]


@torch.no_grad()
def prepare_observation(model, observation: str, n_channels: int) -> list[str]:
    """Check sizes and set up the readout in place; return the names of frozen parameters.

    Raises
    ------
    ValueError
        If ``model.n_outputs != n_channels``, the readout is not affine, or ``"identity"`` is asked
        of a model with fewer latent units than channels.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training.observation import affine_readout, prepare_observation
    >>> model = PLRNN(0, 4, 2, seed=0)
    >>> prepare_observation(model, "identity", 2)  # the readout becomes [I 0] and is frozen
    ['B', 'b_out']
    >>> affine_readout(model)[0].tolist()
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    """
    check_observation(observation)
    if model.n_outputs != n_channels:
        raise ValueError(
            f"the model has {model.n_outputs} outputs but the data have {n_channels} channels; "
            f"build it with n_outputs={n_channels}"
        )
    B, b = affine_readout(model)
    gen = torch.Generator(device=B.device).manual_seed(0)  # probe points; never the global generator
    z = torch.randn(3, model.state_size, dtype=B.dtype, device=B.device, generator=gen)
    if not torch.allclose(model.readout(z), z @ B.T + b, atol=1e-5, rtol=1e-4):
        raise ValueError(
            f"{type(model).__name__}'s readout is not affine; it cannot serve as observation model")
    if observation != "identity":
        return []
    if model.state_size < n_channels:
        raise ValueError(
            f"identity observation needs at least {n_channels} latent units (one per channel), "
            f"the model has {model.state_size}; use observation='affine'"
        )
    names = readout_parameter_names(model)
    params = dict(model.named_parameters())
    target = torch.zeros(n_channels, model.state_size, dtype=B.dtype, device=B.device)
    target[:, :n_channels] = torch.eye(n_channels, dtype=B.dtype, device=B.device)
    if torch.equal(B, target) and not b.any():
        return names
    weight = next((params[n] for n in ("B", "w_out") if n in params), None)
    if weight is None or weight.shape != target.shape:
        raise ValueError(
            f"cannot set an identity readout on {type(model).__name__}; use observation='affine'")
    weight.copy_(target)
    if "b_out" in params:
        params["b_out"].zero_()
    return names


def forcing_mask(model, observation: str, n_channels: int) -> torch.Tensor:
    """``(state,)`` mask of the teacher-forced latent dimensions (first ``n_channels`` for identity).

    Examples
    --------
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training.observation import forcing_mask
    >>> model = PLRNN(0, 4, 2, seed=0)
    >>> forcing_mask(model, "identity", 2).tolist(), forcing_mask(model, "affine", 2).tolist()
    ([1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0])
    """
    ref = next(model.parameters())
    mask = torch.ones(model.state_size, dtype=ref.dtype, device=ref.device)
    if observation == "identity":
        mask[n_channels:] = 0
    return mask


def forcing_targets(x: np.ndarray, observation: str, smoothing: float = 2.0) -> np.ndarray:
    """Observation-space targets whose inversion gives the forcing signals.

    Gaussian models use the data themselves; the Poisson model uses the inverse softplus of the
    counts smoothed along time with a Gaussian of ``smoothing`` bins. ``x`` is (trial, time, channel).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.training.observation import forcing_targets
    >>> counts = np.full((1, 50, 2), 3.0)  # (trial, time, channel)
    >>> forcing_targets(counts, "affine") is counts  # Gaussian models force with the data
    True
    >>> y = forcing_targets(counts, "poisson")  # inverse softplus of the smoothed rate
    >>> y.shape, round(float(np.log1p(np.exp(y[0, 25, 0]))), 3)
    ((1, 50, 2), 3.001)
    """
    if observation != "poisson":
        return x
    if np.any(x < 0):
        raise ValueError("the Poisson observation model needs non-negative counts")
    from scipy.ndimage import gaussian_filter1d

    rate = gaussian_filter1d(x, smoothing, axis=1, mode="nearest") if smoothing > 0 else x
    rate = np.maximum(rate, 0.0) + _EPS
    return rate + np.log(-np.expm1(-rate))


def readout_pinv(B: torch.Tensor, *, ridge: float = 0.0) -> tuple[torch.Tensor, float]:
    """Ridge pseudo-inverse ``B⁺ = Bᵀ (B Bᵀ + ridge I)⁻¹`` of a readout and its condition number.

    Computed from the SVD ``B = U S Vᵀ`` as ``V diag(s / (s² + ridge)) Uᵀ``, which is the
    Moore–Penrose pseudo-inverse at ``ridge = 0`` (singular values below ``1e-7 s_max``
    dropped) and bounded by ``1 / (2 sqrt(ridge))`` otherwise (Tikhonov regularisation).

    Parameters
    ----------
    B : Tensor, shape (..., output, state)
        The readout matrix (see :func:`affine_readout`), or a stack of them (an ensemble's, with
        a leading network dim); same dtype and device out.
    ridge : float
        Tikhonov term (output units squared), ``>= 0`` (a ``ValueError`` otherwise).

    Returns
    -------
    pinv : Tensor, shape (..., state, output)
    condition : float
        ``s_max / s_min`` of ``B`` (``inf`` if a singular value is 0); of a stack, the largest.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training.observation import readout_pinv
    >>> B = torch.tensor([[2.0, 0.0, 0.0], [0.0, 4.0, 0.0]], dtype=torch.float64)
    >>> pinv, cond = readout_pinv(B)
    >>> pinv.T.tolist(), cond  # the Moore–Penrose inverse; condition number 4 / 2
    ([[0.5, 0.0, 0.0], [0.0, 0.25, 0.0]], 2.0)
    >>> round(readout_pinv(B, ridge=1.0)[0][0, 0].item(), 6)  # 2 / (2² + 1)
    0.4
    """
    check_setting("ridge", ridge, 0.0)
    U, s, Vh = torch.linalg.svd(B, full_matrices=False)
    s_max = s.amax(-1, keepdim=True) if s.shape[-1] else s.new_zeros((*s.shape[:-1], 1))
    if ridge > 0:
        scale = s / (s ** 2 + ridge)
    else:
        keep = s > 1e-7 * s_max
        scale = torch.where(keep, 1.0 / torch.where(keep, s, torch.ones_like(s)), torch.zeros_like(s))
    s_min = s.amin(-1, keepdim=True) if s.shape[-1] else s_max
    condition = max((hi / lo if lo > 0 else float("inf")
                     for hi, lo in zip(s_max.reshape(-1).tolist(), s_min.reshape(-1).tolist())), default=0.0)
    return (Vh.mT * scale[..., None, :]) @ U.mT, condition


def invert(B: torch.Tensor, b: torch.Tensor, y: torch.Tensor, *, ridge: float = 0.0) -> torch.Tensor:
    """Latent estimate ``B⁺ (y - b)``; ``y`` (..., output) → (..., state).

    ``ridge > 0`` uses the ridge pseudo-inverse of :func:`readout_pinv`.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training.observation import invert
    >>> B, b = torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([1.0, 1.0])
    >>> invert(B, b, torch.tensor([[3.0, 9.0]])).tolist()  # B⁺ (y - b)
    [[1.0, 2.0]]
    """
    pinv = torch.linalg.pinv(B) if ridge == 0 else readout_pinv(B, ridge=ridge)[0]
    return (y - b) @ pinv.T


def observe(model, z: torch.Tensor, observation: str) -> torch.Tensor:
    """Predicted observations: the readout, passed through softplus for the Poisson model.

    Examples
    --------
    >>> import math
    >>> import torch
    >>> from neurodyn.models import PLRNN
    >>> from neurodyn.training.observation import observe, prepare_observation
    >>> model = PLRNN(0, 2, 2, seed=0)
    >>> _ = prepare_observation(model, "identity", 2)
    >>> z = torch.tensor([[0.0, 1.0]])
    >>> observe(model, z, "identity").tolist()
    [[0.0, 1.0]]
    >>> round(observe(model, z, "poisson")[0, 0].item(), 6) == round(math.log(2), 6)  # softplus(0)
    True
    """
    y = model.readout(z)
    return torch.nn.functional.softplus(y) if observation == "poisson" else y


def observation_loss(pred: torch.Tensor, x: torch.Tensor, observation: str) -> torch.Tensor:
    """MSE (Gaussian models) or mean Poisson negative log-likelihood (``pred`` are rates); a
    ``ValueError`` for an unknown ``observation``.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.training.observation import observation_loss
    >>> pred, x = torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0, 4.0]])
    >>> observation_loss(pred, x, "affine").item()  # mean squared error
    2.0
    >>> round(observation_loss(pred, x, "poisson").item(), 4)  # mean of rate - x log(rate)
    0.1137
    """
    check_observation(observation)
    if observation == "poisson":
        return torch.nn.functional.poisson_nll_loss(pred, x, log_input=False, full=False, eps=1e-6)
    return torch.mean((pred - x) ** 2)
