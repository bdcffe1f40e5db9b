"""Forcing the state during task training (error or teacher forcing) and the RFLO learning rule.

After every step of a training rollout the state is nudged towards the targets through a ridge
pseudo-inverse ``W⁺`` of the (affine) readout ``y = W h + b``:

* ``"error"`` — error forcing (Sağtekin, Bredenberg & Savin, NeurIPS 2025):
  ``h ← h + c W⁺ m ⊙ (y* - y)``, an orthogonal step towards the zero-error manifold
  ``{h : W h + b = y*}`` (onto it when ``c = 1`` and ``ridge = 0``). The step is detached: the
  gradient sees ``h`` alone.
* ``"teacher"`` — generalised teacher forcing (Doya 1992; Hess et al. 2023), as in
  :func:`~neurodyn.training.fit_teacher_forcing`: ``h ← h + c m (ĥ - h)`` with
  ``ĥ = W⁺ (y* - b)`` detached, so the gradient through the state is scaled by ``1 - c m``.

``m`` is the task's loss mask (per output for error forcing; for teacher forcing 1 at a step where
any output counts), so nothing is forced where the target is undefined. The loss is taken on the
outputs *before* forcing, and forcing exists only in training rollouts: evaluation, analyses and
saved models never see it. For a leaky RNN, GRU, PLRNN, ALRNN or shallow PLRNN trained by BPTT both rules
run inside
the fused Numba kernels (``backend="auto"``, :class:`~neurodyn.kernels.fused.ReadoutForcing`; the leaky
RNN on a GPU in Triton too); RFLO, a ``state_hook`` and the other model families run the torch rollout
below. :func:`~neurodyn.training.train_ensemble` forces each network of an ensemble through its own
readout with the same :func:`forcing_step`.

The learning rule ``"rflo"`` (random feedback local online learning; Murray, eLife 2019) replaces
backpropagation through time for leaky RNNs: the error reaches the units through a fixed random
feedback matrix instead of ``Wᵀ``, and the recurrent and input weights follow eligibility traces
``p_ij ← (1 - α) p_ij + α φ'(a_i) r_j``. Both are obtained from the same engine and loss by
differentiating a rollout in which the recurrent input ``W_rec h`` is detached (so gradients flow
back only along the leak, which is the trace) and the readout passes the error back through the
feedback matrix.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import torch

from neurodyn.kernels.fused import finite_targets
from neurodyn.models._base import Rollout
from neurodyn.training._config import check_setting
from neurodyn.training.observation import affine_readout, prepare_observation, readout_pinv

__all__ = ["FORCINGS", "Forcing", "forcing_step", "forcing_strength_at", "forced_task_rollout"]

#: forcing methods of :class:`Forcing` (``None``: no forcing)
FORCINGS = ("error", "teacher")
#: learning rules: backpropagation through time, or random feedback local online (leaky RNNs)
RULES = ("bptt", "rflo")
#: annealing schedules of the forcing strength over training
ANNEALING = ("none", "linear", "cosine")
#: a readout whose condition number exceeds this makes its pseudo-inverse amplify errors: warn
CONDITION_LIMIT = 1e4


@dataclass(frozen=True)
class Forcing:
    """Settings of state forcing and of the learning rule during task training.

    Parameters
    ----------
    method : {"error", "teacher"} or None
        Error forcing, generalised teacher forcing, or none (only ``rule`` then matters).
    strength : float
        Forcing strength ``c`` in [0, 1] at the first iteration.
    anneal : {"none", "linear", "cosine"}
        Schedule of ``c`` over the iterations (see :func:`forcing_strength_at`).
    ridge : float
        Tikhonov term of the readout's pseudo-inverse (output units squared), ``>= 0``.
    rule : {"bptt", "rflo"}
        Backpropagation through time, or RFLO (Murray 2019; leaky RNNs only).

    Raises
    ------
    ValueError
        One line naming an unknown method, schedule or rule, or a strength outside [0, 1].

    Examples
    --------
    >>> from neurodyn.training.forcing import Forcing
    >>> Forcing("error", strength=0.5, anneal="linear").record()
    {'method': 'error', 'strength': 0.5, 'anneal': 'linear', 'ridge': 0.001, 'rule': 'bptt'}
    >>> Forcing("error", strength=1.5)
    Traceback (most recent call last):
    ...
    ValueError: forcing_strength must be a finite number in [0, 1], got 1.5
    """

    method: str | None = None
    strength: float = 0.5
    anneal: str = "none"
    ridge: float = 1e-3
    rule: str = "bptt"

    def __post_init__(self) -> None:
        for name, value, allowed in (("forcing", self.method, (*FORCINGS, None)),
                                     ("forcing_anneal", self.anneal, ANNEALING),
                                     ("learning_rule", self.rule, RULES)):
            if value not in allowed:
                shown = ", ".join(str(a) for a in allowed)
                raise ValueError(f"unknown {name} {value!r}; choose one of {shown}")
        check_setting("forcing_strength", self.strength, 0, high=1)
        check_setting("forcing_ridge", self.ridge, 0)
        object.__setattr__(self, "strength", float(self.strength))
        object.__setattr__(self, "ridge", float(self.ridge))

    @property
    def active(self) -> bool:
        """Whether training rollouts differ from plain BPTT rollouts."""
        return self.method is not None or self.rule != "bptt"

    def record(self) -> dict[str, Any]:
        """The settings as plain values (stored in the training config)."""
        return asdict(self)


def forcing_strength_at(strength: float, anneal: str, iteration: int, n_iterations: int) -> float:
    """The forcing strength at ``iteration`` (0-based) of ``n_iterations``.

    ``"none"`` keeps ``strength``; ``"linear"`` lowers it to 0 at the last iteration,
    ``c (1 - k / (K - 1))``; ``"cosine"`` follows ``c (1 + cos(pi k / (K - 1))) / 2``, also to 0.

    Examples
    --------
    >>> from neurodyn.training.forcing import forcing_strength_at
    >>> [round(forcing_strength_at(0.8, "linear", k, 5), 6) for k in range(5)]
    [0.8, 0.6, 0.4, 0.2, 0.0]
    >>> forcing_strength_at(0.8, "cosine", 2, 5), forcing_strength_at(0.8, "none", 4, 5)
    (0.4, 0.8)
    """
    frac = min(iteration / (n_iterations - 1), 1.0) if n_iterations > 1 else 1.0
    if anneal == "linear":
        return strength * (1.0 - frac)
    if anneal == "cosine":
        return strength * 0.5 * (1.0 + math.cos(math.pi * frac))
    return strength


def forcing_step(h: torch.Tensor, outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, *,
                 method: str, strength: float, pinv: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """One forcing step of the state (see the module docstring for the two rules).

    Every tensor may carry a leading network dim (an ensemble, each network forced through its
    own readout): ``h`` (network, batch, state), ``pinv`` (network, state, output), ``bias``
    (network, 1, output), and so on.

    Parameters
    ----------
    h : Tensor, shape (batch, state)
        The state after a model step (and its noise).
    outputs, targets : Tensor, shape (batch, output)
        The readout of ``h`` and the task's targets at this step.
    mask : Tensor, shape (batch, output) or (batch, 1)
        The task's loss mask at this step (0: not forced). Targets must be finite; the rollouts
        first pass theirs through :func:`~neurodyn.kernels.fused.finite_targets` (once, not per
        step), which zeroes non-finite targets the mask leaves out.
    method : {"error", "teacher"}
    strength : float
        ``c`` in [0, 1].
    pinv : Tensor, shape (state, output)
        (Ridge) pseudo-inverse of the readout matrix, from
        :func:`~neurodyn.training.observation.readout_pinv`.
    bias : Tensor, shape (output,)
        The readout's bias ``b``.

    Returns
    -------
    Tensor, shape (batch, state)
        The forced state; the correction carries no gradient (for teacher forcing the gradient
        through ``h`` is scaled by ``1 - c m``).

    Examples
    --------
    A state on the zero-error manifold is left where it is; otherwise error forcing with ``c = 1``
    puts it on the manifold:

    >>> import torch
    >>> from neurodyn.training.forcing import forcing_step
    >>> W, b = torch.tensor([[1.0, 1.0]]), torch.tensor([0.5])
    >>> pinv = torch.tensor([[0.5], [0.5]])  # W⁺ = Wᵀ (W Wᵀ)⁻¹
    >>> h, target, mask = torch.tensor([[0.0, 0.0]]), torch.tensor([[2.5]]), torch.ones(1, 1)
    >>> forced = forcing_step(h, h @ W.T + b, target, mask, method="error", strength=1.0, pinv=pinv, bias=b)
    >>> forced.tolist(), (forced @ W.T + b).tolist()
    ([[1.0, 1.0]], [[2.5]])
    >>> forcing_step(forced, forced @ W.T + b, target, mask, method="error", strength=1.0, pinv=pinv,
    ...              bias=b).tolist()
    [[1.0, 1.0]]
    """
    if method == "error":
        return h + (strength * (mask * (targets - outputs)) @ pinv.mT).detach()
    m = strength * mask.amax(-1, keepdim=True)
    target_state = ((targets - bias) @ pinv.mT).detach()
    return h + m * (target_state - h)


def forced_task_rollout(model: Any, inputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, *,
                        forcing: Forcing, strength: float, generator: torch.Generator | None = None,
                        feedback: torch.Tensor | None = None, state_hook: Any = None,
                        backend: str = "torch") -> Rollout:
    """A training rollout under ``forcing`` (its method at ``strength``, and its learning rule).

    Iterates the model family's one step map with the model's noise (drawn from ``generator`` as
    :meth:`~neurodyn.models.RecurrentModel.forward` draws it), applies ``state_hook``, records the
    state, then forces it. With ``strength = 0`` and ``rule = "bptt"`` it returns what the model's
    own forward returns. With ``backend="numba"`` (a leaky RNN, GRU, PLRNN, ALRNN or shallow PLRNN) or
    ``"triton"``
    (a leaky RNN), ``rule = "bptt"`` and no ``state_hook`` (what
    :func:`~neurodyn.kernels.fused_backend` with ``forcing="readout"`` allows)
    the same rollout, forcing included, runs in the fused Numba or Triton kernels
    (:func:`~neurodyn.kernels.fused_states` with a :class:`~neurodyn.kernels.fused.ReadoutForcing`)
    with the same noise and the same values and gradients to float tolerance; RFLO and the other
    families run on the torch path.

    Parameters
    ----------
    model : RecurrentModel
        With an affine readout (all neurodyn models); a ``LeakyRNN`` for ``rule = "rflo"``.
    inputs : Tensor, shape (batch, time, input)
    targets : Tensor, shape (batch, time, output)
    mask : Tensor, shape (batch, time, output) or (batch, time, 1)
    forcing : Forcing
    strength : float
        The forcing strength of this iteration (annealed by the caller).
    generator : torch.Generator, optional
        Source of the state noise.
    feedback : Tensor, shape (output, state), optional
        RFLO's fixed random feedback matrix (required for ``rule = "rflo"``).
    state_hook : callable ``(t, h) -> h``, optional
        Applied to each new state before it is recorded and forced.
    backend : {"torch", "numba", "triton"}
        The step-by-step torch rollout, or the fused kernels (see above).

    Returns
    -------
    Rollout
        ``outputs`` (batch, time, output) and ``states`` (batch, time, state), both *before*
        forcing, with gradients (for RFLO, the gradients RFLO prescribes).

    Raises
    ------
    ValueError
        For RFLO on a model other than a leaky RNN, or without ``feedback``; for ``backend="numba"``
        or ``"triton"`` with RFLO or a ``state_hook``, or a model the fused kernels cannot force.

    Warns
    -----
    RuntimeWarning
        If the readout's condition number exceeds :data:`CONDITION_LIMIT` (its pseudo-inverse then
        amplifies errors; raise ``ridge``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> from neurodyn.tasks import FlipFlop
    >>> from neurodyn.training.forcing import Forcing, forced_task_rollout
    >>> model = LeakyRNN(1, 6, 1, alpha=0.5, seed=0)
    >>> x, y, m = FlipFlop(n_bits=1, n_steps=8).sample(3, seed=0).to_torch()
    >>> free = forced_task_rollout(model, x, y, m, forcing=Forcing("error"), strength=0.0)
    >>> bool(torch.equal(free.states, model(x).states))  # c = 0: the plain rollout
    True
    >>> forced = forced_task_rollout(model, x, y, m, forcing=Forcing("error", ridge=0.0), strength=1.0)
    >>> after = forced.states[:, 0] + (y[:, 0] - forced.outputs[:, 0]) @ torch.linalg.pinv(model.w_out).T
    >>> bool(torch.allclose(model.readout(after), y[:, 0], atol=1e-5))  # forced onto the targets
    True
    """
    from neurodyn.kernels import FAMILIES

    p = model.params()
    step = FAMILIES[type(p)].step
    rflo = forcing.rule == "rflo"
    if rflo:
        check_rflo(model)
        if feedback is None:
            raise ValueError("learning_rule='rflo' needs a feedback matrix (output, state)")
    forced = forcing.method is not None and strength > 0
    if forced:
        W, b, pinv = _readout_inverse(model, forcing.ridge)
        targets = finite_targets(targets, mask)
    if backend in ("numba", "triton"):
        if rflo or state_hook is not None:
            raise ValueError("the fused forced rollout runs learning_rule='bptt' without a state_hook; "
                             "use backend='torch'")
        from neurodyn.kernels.fused import ReadoutForcing
        from neurodyn.training._fused_rollout import fused_rollout

        spec = ReadoutForcing(forcing.method, strength, targets, mask, W, b, pinv) if forced else None
        return fused_rollout(model, inputs, generator=generator, forcing=spec, backend=backend)
    n_batch, n_steps = inputs.shape[:2]
    h = model.initial_state(n_batch)
    scale = model.noise_scale if model.training else 0.0
    leak = 1.0 - getattr(p, "alpha", 1.0)
    states = []
    for t in range(n_steps):
        u = inputs[:, t]
        if rflo:  # gradients flow back along the leak only: the eligibility trace
            h = step(p, h.detach(), u) + leak * (h - h.detach())
        else:
            h = step(p, h, u)
        if scale > 0:
            h = h + scale * torch.randn(h.shape, generator=generator, device=h.device, dtype=h.dtype)
        if state_hook is not None:
            h = state_hook(t, h)
        states.append(h)
        if forced:
            h = forcing_step(h, h.detach() @ W.mT + b, targets[:, t], mask[:, t], method=forcing.method,
                             strength=strength, pinv=pinv, bias=b)
    states_t = torch.stack(states, dim=1)
    if not rflo:
        return Rollout(model.readout(states_t), states_t)
    detached = states_t.detach()
    through_feedback = states_t @ feedback.mT
    return Rollout(model.readout(detached) + (through_feedback - through_feedback.detach()), states_t)


def _readout_inverse(model: Any, ridge: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The detached affine readout ``(W (output, state), b (output,))`` of ``model`` and its ridge
    pseudo-inverse ``(state, output)``; warns when the readout is ill-conditioned.

    ``model`` may also be a readout ``(W, b)`` given directly, for an ensemble stacked over
    networks: ``W`` (network, output, state), ``b`` (network, output); the pseudo-inverse is then
    (network, state, output), one per network, and the warning is for the worst of them."""
    W, b = model if isinstance(model, tuple) else affine_readout(model)
    W, b = W.detach(), b.detach()
    if W.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"forcing through the readout needs a float32 or float64 model (its readout's "
                         f"pseudo-inverse), not {W.dtype}; convert the model (model.float()) or drop forcing")
    pinv, condition = readout_pinv(W, ridge=ridge)
    if condition > CONDITION_LIMIT:
        which = "the readout" if W.ndim == 2 else "a network's readout"
        warnings.warn(f"{which} is ill-conditioned (condition number {condition:.3g}): its pseudo-"
                      f"inverse amplifies output errors; raise forcing_ridge (now {ridge})",
                      RuntimeWarning, stacklevel=3)
    return W, b, pinv


def check_rflo(model: Any) -> None:
    """Raise a one-line ``ValueError`` unless ``model`` is a leaky RNN (what RFLO is defined for)."""
    from neurodyn.models.leaky_rnn import LeakyRNNParams

    if not isinstance(model.params(), LeakyRNNParams):
        raise ValueError(f"learning_rule='rflo' needs a LeakyRNN (RFLO's eligibility traces are those of a "
                         f"leaky rate network); got {type(model).__name__}, train it with 'bptt'")


def check_forcing(model: Any, task: Any, forcing: Forcing) -> None:
    """Raise a one-line ``ValueError`` if ``forcing`` cannot train ``model`` on ``task``."""
    if forcing.rule == "rflo":
        check_rflo(model)
    if forcing.method is not None or forcing.rule == "rflo":
        if task.loss != "mse":
            raise ValueError(f"forcing and RFLO need a task with outputs in target units (loss 'mse'); "
                             f"{task.name!r} is trained with {task.loss!r}")
        prepare_observation(model, "affine", model.n_outputs)  # raises unless the readout is affine


def feedback_matrix(model: Any, generator: torch.Generator) -> torch.Tensor:
    """RFLO's fixed random feedback ``(output, state)``, entries ``N(0, 1 / state)`` (as ``W_out`` starts)."""
    ref = next(model.parameters())
    shape = (model.n_outputs, model.state_size)
    draw = torch.randn(shape, generator=generator, dtype=ref.dtype, device=generator.device)
    return (draw / math.sqrt(model.state_size)).to(ref.device)
