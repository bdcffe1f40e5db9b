"""Leaky (continuous-time, Euler-discretised) rate RNN with biological connectivity constraints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch
from torch import nn

from neurodyn._seed import SeedLike
from neurodyn.models import _base as base
from neurodyn.models import _family as fam
from neurodyn.models import constraints as cons
from neurodyn.models._base import RecurrentModel, activation_fn, check_sizes, init_generator
from neurodyn.models._registry import register_model

__all__ = ["LeakyRNN", "LeakyRNNParams", "leaky_rnn_step"]

_WEIGHTS = ("w_in", "w_rec", "w_out")
_OUTPUT_SCALES = {"rich": lambda n: 1.0 / n, "mean_field": lambda n: 1.0 / n,
                  "lazy": lambda n: 1.0 / math.sqrt(n), "ntk": lambda n: 1.0 / math.sqrt(n)}


class LeakyRNNParams(NamedTuple):
    """Effective parameters of a leaky RNN (what kernels and analyses consume).

    w_in (unit, input), w_rec (unit, unit), b (unit,), w_out (output, unit), b_out (output,),
    alpha (float, dt/tau), activation (str), noise_std (float, sigma of the rate noise).
    The weights are *effective*: Dale signs, connectivity masks, fixed entries and the output
    scale are already applied.

    Examples
    --------
    >>> from neurodyn.models import LeakyRNN
    >>> p = LeakyRNN(2, 10, 1, dt=10.0, tau=100.0, seed=0).params()
    >>> tuple(p.w_in.shape), tuple(p.w_rec.shape), tuple(p.w_out.shape), p.alpha, p.activation
    ((10, 2), (10, 10), (1, 10), 0.1, 'tanh')
    """

    w_in: torch.Tensor
    w_rec: torch.Tensor
    b: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor
    alpha: float
    activation: str
    noise_std: float


def leaky_rnn_drive(p: LeakyRNNParams, u: torch.Tensor | None) -> torch.Tensor:
    """The state-independent pre-activation ``W_in u + b``; ``u`` (..., input) → (..., unit)."""
    return fam.affine(p.w_in, u, p.b)


def leaky_rnn_step(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """One Euler step ``h + alpha * (-h + phi(W_rec h + W_in u + b))``; ``h`` (..., unit).

    Examples
    --------
    A unit at rest with zero weights decays by ``1 - alpha`` per step:

    >>> import torch
    >>> from neurodyn.models import LeakyRNNParams, leaky_rnn_step
    >>> z = torch.zeros(1, 1)
    >>> p = LeakyRNNParams(w_in=torch.zeros(1, 0), w_rec=z, b=torch.zeros(1), w_out=z, b_out=torch.zeros(1),
    ...                    alpha=0.25, activation="tanh", noise_std=0.0)
    >>> leaky_rnn_step(p, torch.tensor([[2.0]]), None).item()
    1.5
    """
    pre = fam.mm(h, p.w_rec) + leaky_rnn_drive(p, u)
    return (1.0 - p.alpha) * h + p.alpha * activation_fn(p.activation)(pre)


def leaky_rnn_step_vjp(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None):
    """``(F(h, u), pull)`` with ``pull(v) = vᵀ ∂F/∂h = (1 - alpha) v + (alpha phi'(pre) v) W_rec``;
    one product with ``W_rec`` for ``F`` and one per ``pull``, ``h`` and ``v`` (..., unit)."""
    pre = fam.mm(h, p.w_rec) + leaky_rnn_drive(p, u)
    act = activation_fn(p.activation)(pre)
    slope = 1.0 - act * act if p.activation == "tanh" else activation_fn(p.activation, slope=True)(pre)
    gain = slope if p.alpha == 1.0 else p.alpha * slope
    out = act if p.alpha == 1.0 else (1.0 - p.alpha) * h + p.alpha * act

    def pull(v: torch.Tensor) -> torch.Tensor:
        back = (gain * v) @ p.w_rec  # ``x @ W``: the transpose of fam.mm's product
        return back if p.alpha == 1.0 else back + (1.0 - p.alpha) * v

    return out, pull


def _leaky_gain(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``alpha * phi'(pre)`` per unit, (..., unit)."""
    return p.alpha * activation_fn(p.activation, slope=True)(fam.mm(h, p.w_rec) + leaky_rnn_drive(p, u))


def leaky_rnn_jacobian(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/dh = (1 - alpha) I + alpha diag(phi'(pre)) W_rec``; ``h`` (..., unit) → (..., unit, unit)."""
    jac = fam.scale_rows(_leaky_gain(p, h, u), p.w_rec, h)  # a fresh tensor: the leak goes on its diagonal
    if p.alpha != 1.0:
        jac.diagonal(dim1=-2, dim2=-1).add_(1.0 - p.alpha)
    return jac


def leaky_rnn_input_jacobian(p: LeakyRNNParams, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
    """``dF/du = alpha diag(phi'(pre)) W_in``; ``h`` (..., unit) → (..., unit, input)."""
    return fam.scale_rows(_leaky_gain(p, h, u), p.w_in, h)


def resolve_alpha(alpha: float | None, dt: float | None, tau: float | None) -> float:
    """``alpha`` or ``dt / tau``; raises ``ValueError`` for both or for a value outside (0, 1]."""
    if alpha is None:
        alpha = 1.0 if dt is None or tau is None else dt / tau
    elif dt is not None or tau is not None:
        raise ValueError("give either alpha or (dt, tau), not both")
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha = dt/tau must be in (0, 1], got {alpha}")
    return float(alpha)


def check_nonnegative(name: str, value: float, *, strict: bool = False) -> float:
    """``float(value)``, raising ``ValueError`` unless it is finite and ``>= 0`` (``> 0`` if ``strict``)."""
    value = float(value)
    if not math.isfinite(value) or value < 0 or (strict and value == 0):
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def resolve_output_scale(output_scale: float | str | None, n_units: int) -> float | None:
    """``None``, a positive float, or ``"rich"``/``"mean_field"`` (1/N), ``"lazy"``/``"ntk"`` (1/sqrt N)."""
    if output_scale is None:
        return None
    if isinstance(output_scale, str):
        if output_scale not in _OUTPUT_SCALES:
            raise ValueError(f"unknown output_scale {output_scale!r}; give a float or one of "
                             f"{', '.join(_OUTPUT_SCALES)}")
        return _OUTPUT_SCALES[output_scale](n_units)
    if not output_scale > 0:
        raise ValueError(f"output_scale must be positive, got {output_scale}")
    return float(output_scale)


class LeakyShell(RecurrentModel):
    """Step, readout and noise of every model whose :meth:`params` is a :class:`LeakyRNNParams`.

    Subclasses (:class:`LeakyRNN`, :class:`~neurodyn.models.LowRankRNN`) build the effective weights in
    :meth:`params`; :meth:`forward` builds them once per rollout instead of once per step (time and
    autograd memory), and :meth:`step` / :meth:`readout` use that copy while a rollout runs.
    """

    @property
    def noise_scale(self) -> float:
        return math.sqrt(2.0 * self.alpha) * self.noise_std

    def forward(self, *args: Any, **kwargs: Any):
        """:meth:`RecurrentModel.forward` (same arguments) with the effective weights built once."""
        self._rollout_params = self.params()
        try:
            return super().forward(*args, **kwargs)
        finally:
            self._rollout_params = None

    def _current_params(self) -> LeakyRNNParams:
        p = getattr(self, "_rollout_params", None)
        return self.params() if p is None else p

    def _step(self, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
        return leaky_rnn_step(self._current_params(), h, u)

    def _frozen_family(self) -> tuple[fam.Family, LeakyRNNParams] | None:
        """The leaky family and the effective weights, built once (see
        :meth:`RecurrentModel.frozen_step`); None for a subclass with its own :meth:`step`."""
        if type(self).step is not RecurrentModel.step or type(self)._step is not LeakyShell._step:
            return None
        return fam.FAMILIES[LeakyRNNParams], self.params()

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self._current_params().w_out.T + self.b_out


@register_model
class LeakyRNN(LeakyShell):
    """Leaky rate RNN: ``tau dh/dt = -h + phi(W_rec h + W_in u + b)``, Euler step ``alpha = dt/tau``.

    One step is ``h[t+1] = (1 - alpha) h[t] + alpha phi(W_rec h[t] + W_in u[t] + b)
    + sqrt(2 alpha) sigma xi[t]`` with ``xi ~ N(0, I)`` (noise only during training or when asked),
    and the readout is ``y = s W_out h + b_out`` (``s`` = ``output_scale``, 1 by default).
    ``alpha = 1`` is the vanilla discrete-time RNN. All constraints act in :meth:`params`, so the
    step, the readout, the kernels and every analysis see the same effective weights.

    Parameters
    ----------
    n_inputs, n_units, n_outputs : int
    activation : {"tanh", "relu", "softplus", "sigmoid", "linear"}
    alpha : float, optional
        Euler step dt/tau in (0, 1]; exclusive with (``dt``, ``tau``).
    dt, tau : float, optional
        Time step and time constant in ms; ``alpha = dt / tau``.
    noise_std : float
        sigma of the recurrent noise (scaled by ``sqrt(2 alpha)`` per step).
    gain : float
        Recurrent init ``W_rec ~ N(0, gain**2 / n_units)`` (``|N|`` under Dale's law, with
        inhibitory columns scaled by n_exc/n_inh so that excitation and inhibition balance).
    spectral_radius : float, optional
        Rescale the initial *effective* ``W_rec`` to this spectral radius (overrides ``gain``'s scale).
    train_h0 : bool
        Learn the initial state.
    dale : bool
        Dale's law: effective ``W_rec = |W| * sign`` with one fixed sign per presynaptic unit
        (column); the first ``round(frac_excitatory * n_units)`` units are excitatory.
    frac_excitatory : float
        Fraction of excitatory units under Dale's law (0.8 by default).
    dale_output : bool
        Read out from excitatory units only, with non-negative weights (needs ``dale``): the
        readout columns of inhibitory units are exactly zero.
    no_autapse : bool
        Zero the diagonal of ``W_rec`` (no self-connections).
    input_mask, rec_mask, output_mask : array-like of 0/1, optional
        Fixed connectivity of ``W_in`` (unit, input), ``W_rec`` (unit, unit), ``W_out`` (output,
        unit); masked weights are exactly zero. Stored as buffers (in the state_dict).
    fixed : dict name -> mask (or True), optional
        Entries of ``"w_in"``, ``"w_rec"`` or ``"w_out"`` held at their initial effective values
        (not trained); ``True`` fixes the whole matrix. Stored as buffers.
    output_scale : float or {"rich", "mean_field", "lazy", "ntk"}, optional
        Readout multiplier ``s``; when given, ``W_out`` is initialised ``N(0, 1)``. ``1/N``
        (``"rich"``) is the mean-field / feature-learning parameterisation, ``1/sqrt(N)``
        (``"lazy"``) the kernel (lazy) one (Chizat, Oyallon & Bach 2019; Schuessler et al. 2023).
    seed : int, numpy/torch Generator or None
        Seed of the weight initialisation (stored in :meth:`config`).

    Raises
    ------
    ValueError
        For sizes that are not integers or < 1 (``n_inputs``, ``n_outputs``: < 0), alpha outside (0, 1],
        masks of the wrong shape or values, ``dale_output`` without ``dale``, unknown ``fixed`` names, a
        zero initial spectral radius, or parameters that would not fit in the memory available (lower
        ``n_units``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(n_inputs=2, n_units=20, n_outputs=1, dt=20.0, tau=100.0, dale=True, seed=0)
    >>> model.alpha, int(model.excitatory().sum())  # alpha = dt / tau; 80 % excitatory
    (0.2, 16)
    >>> w = model.params().w_rec
    >>> bool((w[:, :16] >= 0).all() and (w[:, 16:] <= 0).all())  # one sign per presynaptic unit
    True
    >>> out = model(torch.zeros(3, 25, 2))
    >>> tuple(out.outputs.shape), tuple(out.states.shape)
    ((3, 25, 1), (3, 25, 20))
    """

    def __init__(
        self, n_inputs: int, n_units: int, n_outputs: int, *, activation: str = "tanh",
        alpha: float | None = None, dt: float | None = None, tau: float | None = None,
        noise_std: float = 0.0, gain: float = 1.0, spectral_radius: float | None = None,
        train_h0: bool = False, dale: bool = False, frac_excitatory: float = 0.8,
        dale_output: bool = False, no_autapse: bool = False, input_mask: Any = None,
        rec_mask: Any = None, output_mask: Any = None, fixed: Mapping[str, Any] | None = None,
        output_scale: float | str | None = None, seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        activation_fn(activation)
        n_inputs, n, n_outputs = check_sizes(n_inputs, n_units, n_outputs)
        base.check_param_memory(type(self).__name__, n * (n_inputs + n + n_outputs + 2) + n_outputs,
                                f"n_units={n}, n_inputs={n_inputs}, n_outputs={n_outputs}", "lower n_units")
        self.n_inputs, self.n_units, self.n_outputs = n_inputs, n, n_outputs
        if dale_output and not dale:
            raise ValueError("dale_output=True needs dale=True (it reads out excitatory units only)")
        self.activation, self.alpha = activation, resolve_alpha(alpha, dt, tau)
        self.noise_std = check_nonnegative("noise_std", noise_std)
        self.gain = check_nonnegative("gain", gain)
        self.spectral_radius = None if spectral_radius is None else check_nonnegative(
            "spectral_radius", spectral_radius, strict=True
        )
        self.dale, self.frac_excitatory = bool(dale), float(frac_excitatory)
        self.dale_output, self.no_autapse = bool(dale_output), bool(no_autapse)
        self.output_scale = resolve_output_scale(output_scale, n)
        self.seed, gen = init_generator(seed)
        self._fixed = ()

        w_in = base.init_input_weights(gen, n, n_inputs)
        w_rec = torch.randn(n, n, generator=gen) * self.gain / math.sqrt(n)
        w_out = base.init_readout_weights(gen, n_outputs, n, self.output_scale)
        if self.dale:
            self.register_buffer("dale_sign", cons.dale_signs(n, self.frac_excitatory))
            w_rec = cons.balanced_dale_init(w_rec.abs(), self.dale_sign)
        shapes = {"w_in": (n, n_inputs), "w_rec": (n, n), "w_out": (n_outputs, n)}
        self._register_masks(shapes, {"w_in": input_mask, "w_rec": rec_mask, "w_out": output_mask})
        self.w_in, self.w_rec, self.w_out = nn.Parameter(w_in), nn.Parameter(w_rec), nn.Parameter(w_out)
        self.b = nn.Parameter(torch.zeros(n))
        self.b_out = nn.Parameter(torch.zeros(n_outputs))
        base.init_h0(self, train_h0)
        if self.spectral_radius is not None:
            rho = cons.spectral_radius(self._effective("w_rec"))
            if rho == 0.0:
                raise ValueError("the initial effective W_rec is zero; spectral_radius cannot rescale it")
            with torch.no_grad():
                self.w_rec.mul_(self.spectral_radius / rho)
        self._register_fixed(shapes, fixed or {})

    def _register_masks(self, shapes: dict[str, tuple[int, int]], masks: dict[str, Any]) -> None:
        self._has_mask = {k: masks[k] is not None for k in _WEIGHTS}
        for key in _WEIGHTS:
            if masks[key] is not None:
                self.register_buffer(f"{key}_mask", cons.as_mask(masks[key], shapes[key], f"{key} mask"))
        if self.no_autapse:
            if not self._has_mask["w_rec"]:
                self.register_buffer("w_rec_mask", torch.ones(shapes["w_rec"]))
            self.w_rec_mask.fill_diagonal_(0.0)
        if self.dale_output:
            excitatory = (self.dale_sign > 0).to(torch.float32).expand(shapes["w_out"]).clone()
            old = self._buffers.pop("w_out_mask", None)
            self.register_buffer("w_out_mask", excitatory if old is None else excitatory * old)

    def _register_fixed(self, shapes: dict[str, tuple[int, int]], fixed: Mapping[str, Any]) -> None:
        unknown = set(fixed) - set(_WEIGHTS)
        if unknown:
            raise ValueError(f"fixed accepts keys {', '.join(_WEIGHTS)}; got {sorted(unknown)}")
        keys = tuple(k for k in _WEIGHTS if k in fixed and fixed[k] is not None)
        self._fixed: tuple[str, ...] = ()
        for key in keys:
            mask = cons.as_mask(fixed[key], shapes[key], f"fixed[{key!r}]")
            with torch.no_grad():
                init = self._effective(key, scaled=False).detach().clone()
            self.register_buffer(f"{key}_fixed", mask)
            self.register_buffer(f"{key}_init", init)
        self._fixed = keys

    def _effective(self, key: str, *, scaled: bool = True) -> torch.Tensor:
        w = getattr(self, key)
        if key == "w_rec" and self.dale:
            w = cons.apply_dale(w, self.dale_sign)
        if key == "w_out" and self.dale_output:
            w = w.abs()
        mask = self._buffers.get(f"{key}_mask")
        if mask is not None:
            w = w * mask
        if key in self._fixed:
            w = torch.where(self._buffers[f"{key}_fixed"] > 0, self._buffers[f"{key}_init"], w)
        if key == "w_out" and scaled and self.output_scale is not None:
            w = w * self.output_scale
        return w

    def params(self) -> LeakyRNNParams:
        return LeakyRNNParams(
            self._effective("w_in"), self._effective("w_rec"), self.b, self._effective("w_out"),
            self.b_out, self.alpha, self.activation, self.noise_std,
        )

    def excitatory(self) -> torch.Tensor:
        """Boolean (unit,) marking excitatory units (all True without Dale's law)."""
        if not self.dale:
            return torch.ones(self.n_units, dtype=torch.bool)
        return self.dale_sign.detach().cpu() > 0

    def config(self) -> dict[str, Any]:
        return {
            "n_inputs": self.n_inputs, "n_units": self.n_units, "n_outputs": self.n_outputs,
            "activation": self.activation, "alpha": self.alpha, "noise_std": self.noise_std,
            "gain": self.gain, "spectral_radius": self.spectral_radius, "train_h0": self.train_h0,
            "dale": self.dale, "frac_excitatory": self.frac_excitatory,
            "dale_output": self.dale_output, "no_autapse": self.no_autapse,
            # masks and fixed values live in the state_dict; True rebuilds placeholder buffers
            "input_mask": True if self._has_mask["w_in"] else None,
            "rec_mask": True if self._has_mask["w_rec"] else None,
            "output_mask": True if self._has_mask["w_out"] else None,
            "fixed": {k: True for k in self._fixed} or None,
            "output_scale": self.output_scale, "seed": self.seed,
        }


fam.FAMILIES[LeakyRNNParams] = fam.Family(
    "leaky", "w_rec", ("b", "b_out"), leaky_rnn_step, leaky_rnn_drive,
    noise_scale=lambda p: math.sqrt(2.0 * p.alpha) * p.noise_std, n_inputs=lambda p: p.w_in.shape[-1],
    jacobian=leaky_rnn_jacobian, input_jacobian=leaky_rnn_input_jacobian, step_vjp=leaky_rnn_step_vjp,
)
