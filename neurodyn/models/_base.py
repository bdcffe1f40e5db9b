"""Base class shared by all recurrent models.

Every model is a discrete-time state-space map

    h[t+1] = F(h[t], u[t]) + noise_scale * xi[t],     y[t] = G(h[t+1])

with state ``h`` of shape ``(batch, state)``, input ``u`` of shape ``(batch, input)`` and output
``y`` of shape ``(batch, output)``. ``F`` is :meth:`RecurrentModel.step`, ``G`` is
:meth:`RecurrentModel.readout`. Analyses use only these two maps (and :meth:`params`, a plain
container of tensors), never the module's internals.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, NamedTuple

import torch
from torch import nn

from neurodyn._budget import check_memory
from neurodyn._checks import check_setting
from neurodyn._seed import SeedLike
from neurodyn.models._family import FAMILIES


class Rollout(NamedTuple):
    """Result of :meth:`RecurrentModel.forward`: the plain ``(outputs, states)`` pair, with gradients.

    outputs : Tensor, shape (batch, time, output)
    states : Tensor, shape (batch, time, state); ``states[:, t]`` is the state after step ``t``.

    A training-time tuple, not a result: the rollout result type (status, ``to_xarray``, ``save``)
    is :class:`neurodyn.kernels.RolloutResult`, which :func:`neurodyn.kernels.rollout` returns.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(2, 8, 1, seed=0)
    >>> outputs, states = model(torch.zeros(3, 5, 2))
    >>> tuple(outputs.shape), tuple(states.shape)  # (batch, time, output), (batch, time, state)
    ((3, 5, 1), (3, 5, 8))
    >>> model(torch.zeros(3, 5, 2))  # the repr: dtypes and shapes
    Rollout(outputs=Tensor float32 (3, 5, 1), states=Tensor float32 (3, 5, 8))
    """

    outputs: torch.Tensor
    states: torch.Tensor

    def __repr__(self) -> str:
        """One line, the tensors by dtype and shape (the values would fill a notebook)."""
        from neurodyn._result import brief

        return f"Rollout(outputs={brief(self.outputs)}, states={brief(self.states)})"


class RecurrentModel(nn.Module):
    """Common shell: subclasses implement ``readout``, ``params`` and ``config``, and ``step`` unless their
    params type has a family in :data:`~neurodyn.kernels.FAMILIES` (whose step function it then uses).

    Examples
    --------
    Every model is a step map ``F`` and a readout ``G``; ``forward`` iterates them:

    >>> import torch
    >>> from neurodyn.models import GRU
    >>> model = GRU(2, 6, 1, seed=0)
    >>> model.state_size, model.noise_scale
    (6, 0.0)
    >>> h0 = model.initial_state(4)
    >>> u = torch.randn(4, 10, 2, generator=torch.Generator().manual_seed(0))
    >>> out = model(u, h0)
    >>> h = h0
    >>> for t in range(10):
    ...     h = model.step(h, u[:, t])
    >>> bool(torch.allclose(out.states[:, -1], h)), bool(torch.allclose(out.outputs[:, -1], model.readout(h)))
    (True, True)
    >>> type(model.from_config(model.config())).__name__
    'GRU'
    """

    n_inputs: int
    n_units: int
    n_outputs: int
    #: the constructor arguments that :meth:`config` returns, each stored under its own name
    config_fields: tuple[str, ...] = ()

    @property
    def state_size(self) -> int:
        """Length of the state vector (``n_units``; ``2 * n_units`` for an LSTM's (h, c))."""
        return self.n_units

    # -- to implement -------------------------------------------------------------------------
    def step(self, h: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """Deterministic one-step map F(h, u); ``h`` (..., state), ``u`` (..., input) or None (no input):
        the step function of the family registered for the type of :meth:`params`
        (``NotImplementedError`` if there is none).

        Raises
        ------
        TypeError
            If ``h`` or ``u`` is not a torch tensor (e.g. a NumPy array or a list).
        ValueError
            If the last dim of ``h`` is not :attr:`state_size` or that of ``u`` not ``n_inputs``, or
            their dtype differs from the model's (``model.double()`` for float64 states, or ``h.float()``).

        Examples
        --------
        >>> import torch
        >>> from neurodyn.models import LeakyRNN
        >>> model = LeakyRNN(3, 16, 3, seed=0)
        >>> model.step(torch.zeros(4, 16), torch.zeros(4, 3)).shape
        torch.Size([4, 16])
        >>> model.step(torch.zeros(4, 16), torch.zeros(4, 2))
        Traceback (most recent call last):
        ...
        ValueError: u must have shape (..., 3) (the model's n_inputs), got (4, 2)
        """
        _check_step_args(self, h, u)
        return self._step(h, u)

    def _step(self, h: torch.Tensor, u: torch.Tensor | None) -> torch.Tensor:
        """:meth:`step` without its argument checks, for loops that checked their arguments once (a
        subclass may override this one instead of :meth:`step` to keep the checks)."""
        params = self.params()
        family = FAMILIES.get(type(params))
        if family is None:
            raise NotImplementedError(f"{type(self).__name__} defines no step and its params type "
                                      f"{type(params).__name__} has no registered family")
        return family.step(params, h, u)

    def frozen_step(self) -> Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor]:
        """:meth:`step` with the effective parameters built once, for many calls on unchanged weights
        (a fixed-point search): ``family.step(params, h, u)`` where :meth:`step` is the family's,
        else :meth:`step` itself. Later changes to the weights are not seen by the returned map."""
        frozen = self._frozen_family()
        return self.step if frozen is None else partial(frozen[0].step, frozen[1])

    def frozen_step_vjp(self) -> Callable[[torch.Tensor, torch.Tensor | None], tuple] | None:
        """Like :meth:`frozen_step`, a map ``(h, u) -> (F(h, u), pull)`` where ``pull(v)`` is
        ``vᵀ ∂F/∂h`` (..., state) at those ``h``, in closed form; None where the family has no
        closed-form vector-Jacobian product or the model defines its own :meth:`step`.

        Examples
        --------
        >>> import torch
        >>> from neurodyn.models import LeakyRNN
        >>> model = LeakyRNN(1, 3, 1, seed=0)
        >>> h = torch.randn(2, 3)
        >>> F, pull = model.frozen_step_vjp()(h, None)
        >>> v = torch.ones(2, 3)
        >>> J = torch.func.vmap(torch.func.jacrev(lambda x: model.step(x[None], None)[0]))(h)
        >>> torch.allclose(pull(v), torch.einsum("bi,bij->bj", v, J), atol=1e-6)
        True
        """
        frozen = self._frozen_family()
        if frozen is None or frozen[0].step_vjp is None:
            return None
        return partial(frozen[0].step_vjp, frozen[1])

    def _frozen_family(self) -> tuple[Any, Any] | None:
        """``(family, params)`` when :meth:`step` is the family's, else None."""
        if type(self).step is not RecurrentModel.step or type(self)._step is not RecurrentModel._step:
            return None
        params = self.params()
        family = FAMILIES.get(type(params))
        return None if family is None else (family, params)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        """Output map G(h); ``h`` (..., state) → (..., output)."""
        raise NotImplementedError

    def params(self) -> NamedTuple:
        """The effective parameters as a NamedTuple of tensors (what kernels consume)."""
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        """Constructor keyword arguments (JSON-like) that rebuild this architecture: the attributes named
        in ``config_fields`` unless a subclass overrides it."""
        if not self.config_fields:
            raise NotImplementedError(f"{type(self).__name__} lists no config_fields and defines no config")
        return {name: getattr(self, name) for name in self.config_fields}

    # -- shared -------------------------------------------------------------------------------
    @property
    def noise_scale(self) -> float:
        """Standard deviation of the additive state noise per step (0 when noise-free)."""
        return 0.0

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> RecurrentModel:
        return cls(**config)

    def initial_state(
        self, n_batch: int, *, device: Any = None, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        """Initial state ``(batch, state)``: the trainable ``h0`` if the model has one, else zeros."""
        ref = next(self.parameters())
        device = ref.device if device is None else device
        dtype = ref.dtype if dtype is None else dtype
        h0 = getattr(self, "h0", None)
        if isinstance(h0, torch.Tensor):
            return h0.to(device=device, dtype=dtype).expand(n_batch, -1).clone()
        return torch.zeros(n_batch, self.state_size, device=device, dtype=dtype)

    def forward(
        self,
        inputs: torch.Tensor | None = None,
        h0: torch.Tensor | None = None,
        *,
        n_steps: int | None = None,
        noise: bool | None = None,
        generator: torch.Generator | None = None,
        state_hook: Any = None,
    ) -> Rollout:
        """Roll the network out (plain torch; the reference for every kernel).

        Parameters
        ----------
        inputs : Tensor, shape (batch, time, input), optional
            External input; ``None`` for autonomous runs (then give ``n_steps`` and ``h0``).
        h0 : Tensor, shape (batch, state), optional
            Initial state; defaults to :meth:`initial_state`.
        n_steps : int, optional
            Number of steps when ``inputs`` is ``None``.
        noise : bool, optional
            Add state noise (``noise_scale`` per step); defaults to ``self.training``.
        generator : torch.Generator, optional
            Source of the noise (same generator state ⇒ same noise).
        state_hook : callable ``(t, h) -> h``, optional
            Called on each new state before the readout (teacher forcing, clamping).

        Returns
        -------
        Rollout
            ``outputs`` (batch, time, output) and ``states`` (batch, time, state).

        Raises
        ------
        TypeError
            If ``inputs`` or ``h0`` is not a torch tensor (e.g. a NumPy array).
        ValueError
            On wrong input shapes, a dtype different from the model's (``model.double()`` for
            float64 inputs, or ``inputs.float()``), or a ``state_hook`` that does not return a
            tensor of the state's shape.
        """
        _check_dtype(self, "inputs", inputs)
        _check_dtype(self, "h0", h0)
        if inputs is not None:
            if inputs.ndim != 3 or inputs.shape[-1] != self.n_inputs:
                raise ValueError(
                    f"inputs must have shape (batch, time, {self.n_inputs}), got {tuple(inputs.shape)}"
                )
            n_batch, n_steps = inputs.shape[0], inputs.shape[1]
        else:
            if n_steps is None or h0 is None:
                raise ValueError("without inputs, give both n_steps and h0")
            n_batch = h0.shape[0]
        h = self.initial_state(n_batch) if h0 is None else h0
        if h.ndim != 2 or h.shape[-1] != self.state_size:
            raise ValueError(f"h0 must have shape (batch, {self.state_size}), got {tuple(h.shape)}")
        use_noise = (self.training if noise is None else noise) and self.noise_scale > 0
        # the arguments were checked above: the step unchecked, unless a subclass has its own step
        step = self._step if type(self).step is RecurrentModel.step else self.step
        states = []
        for t in range(int(n_steps)):
            u = None if inputs is None else inputs[:, t]
            h = step(h, u)
            if use_noise:
                xi = torch.randn(h.shape, generator=generator, device=h.device, dtype=h.dtype)
                h = h + self.noise_scale * xi
            if state_hook is not None:
                shape, h = h.shape, state_hook(t, h)
                if not isinstance(h, torch.Tensor) or h.shape != shape:
                    raise ValueError(f"state_hook must return the state, a tensor of shape {tuple(shape)}; "
                                     f"got {type(h).__name__} {tuple(getattr(h, 'shape', ()))}")
            states.append(h)
        states_t = torch.stack(states, dim=1) if states else h.new_empty((h.shape[0], 0, h.shape[1]))
        return Rollout(self.readout(states_t), states_t)

    def rollout(self, *args: Any, **kwargs: Any) -> Rollout:
        """Alias of :meth:`forward`."""
        return self.forward(*args, **kwargs)


def _check_step_args(model: RecurrentModel, h: Any, u: Any) -> None:
    """The checks of :meth:`RecurrentModel.step`: tensors of the model's dtype whose last dims are the
    state and input sizes."""
    _check_dtype(model, "h", h)
    try:
        size = model.state_size
    except AttributeError:  # a bare subclass without sizes: its step raises what it lacks
        return
    if h.ndim == 0 or h.shape[-1] != size:
        raise ValueError(f"h must have shape (..., {size}) (the model's state size), got {tuple(h.shape)}")
    if u is not None:
        _check_dtype(model, "u", u)
        if u.ndim == 0 or u.shape[-1] != model.n_inputs:
            raise ValueError(f"u must have shape (..., {model.n_inputs}) (the model's n_inputs), "
                             f"got {tuple(u.shape)}")


def _check_dtype(model: nn.Module, name: str, x: Any) -> None:
    """Raise a clear error for non-tensor arguments or a dtype that differs from the model's."""
    if x is None:
        return
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}; use torch.as_tensor(...)")
    param = next(model.parameters(), None)
    if param is not None and x.dtype != param.dtype:
        raise ValueError(
            f"{name} has dtype {x.dtype} but the model's parameters are {param.dtype}; "
            f"convert with {name}.to({param.dtype}) or the model with model.to({x.dtype})"
        )


def check_model(model: Any, name: str = "model", example: str = "LeakyRNN(...)") -> None:
    """A one-line ``TypeError`` unless ``model`` is a :class:`RecurrentModel`; ``name`` is how the
    message calls it and ``example`` what it suggests building.

    Examples
    --------
    >>> check_model("net.pt", example="PLRNN(...)")
    Traceback (most recent call last):
    ...
    TypeError: model must be a RecurrentModel (e.g. PLRNN(...)), got str
    """
    if not isinstance(model, RecurrentModel):
        raise TypeError(f"{name} must be a RecurrentModel (e.g. {example}), got {type(model).__name__}")


def check_sizes(
    n_inputs: int, n_units: int, n_outputs: int, *, units: str = "n_units"
) -> tuple[int, int, int]:
    """``(n_inputs, n_units, n_outputs)`` as ints; ``ValueError`` naming the first bad size.

    Each size must be an integer (a whole float such as ``4.0`` is taken as ``4``; bools, strings,
    NaN and fractions are refused). The state needs at least one unit (``units`` names it in the
    message, e.g. ``"n_latent"``); a model may have no inputs (autonomous) or no outputs.

    Examples
    --------
    >>> from neurodyn.models._base import check_sizes
    >>> check_sizes(2, 4.0, 1)
    (2, 4, 1)
    >>> check_sizes(1, 4.5, 1)
    Traceback (most recent call last):
    ...
    ValueError: n_units must be an integer >= 1, got 4.5
    """
    check_setting(units, n_units, 1, integer=True)
    for name, n in (("n_inputs", n_inputs), ("n_outputs", n_outputs)):
        check_setting(name, n, 0, integer=True)
    return int(n_inputs), int(n_units), int(n_outputs)


def check_param_memory(model: str, n_values: float, sizes: str, fix: str, *, itemsize: int = 4) -> None:
    """One-line ``ValueError`` (:func:`~neurodyn._budget.check_memory`) when the ``n_values`` parameter
    and buffer entries of a new model, with their initial random draws (twice the bytes), do not fit in
    the memory available now; raised before any allocation."""
    check_memory(model, 2.0 * itemsize * float(n_values), f"parameters for {sizes}", fix)


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """``model`` in eval mode inside the block; its previous mode is restored after, also on error."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def init_generator(seed: SeedLike) -> tuple[int, torch.Generator]:
    """Resolve a model's init seed and return ``(seed_int, generator)``."""
    from neurodyn._seed import resolve_seed, torch_generator

    s = resolve_seed(seed)
    return s, torch_generator(s)


def init_h0(module: nn.Module, train_h0: bool) -> None:
    """Store ``train_h0`` and the initial state ``h0``: learnable zeros (unit,) when asked, else None."""
    module.h0 = nn.Parameter(torch.zeros(module.n_units)) if train_h0 else None
    module.train_h0 = bool(train_h0)


def uniform_weights(gen: torch.Generator, scale: float, *shape: int) -> nn.Parameter:
    """A parameter of ``shape`` uniform in ``±scale``, drawn from ``gen``."""
    return nn.Parameter((torch.rand(*shape, generator=gen) * 2 - 1) * scale)


def init_input_weights(gen: torch.Generator, n_units: int, n_inputs: int) -> torch.Tensor:
    """Input weights (unit, input), ``N(0, 1 / n_inputs)``, drawn from ``gen``."""
    return torch.randn(n_units, n_inputs, generator=gen) / math.sqrt(max(n_inputs, 1))


def init_readout_weights(gen: torch.Generator, n_outputs: int, n_units: int,
                         output_scale: float | None) -> torch.Tensor:
    """Readout weights (output, unit), ``N(0, 1)`` when an ``output_scale`` is applied later, else
    ``N(0, 1 / n_units)``, drawn from ``gen``."""
    w_out = torch.randn(n_outputs, n_units, generator=gen)
    return w_out if output_scale is not None else w_out / math.sqrt(n_units)


ACTIVATIONS = {
    "tanh": torch.tanh,
    "relu": torch.relu,
    "softplus": torch.nn.functional.softplus,
    "sigmoid": torch.sigmoid,
    "linear": lambda x: x,
}




def _softplus_slope(x: torch.Tensor) -> torch.Tensor:
    # torch's softplus is the identity above its threshold 20, so its slope there is exactly 1
    return torch.where(x > 20.0, torch.ones_like(x), torch.sigmoid(x))


def _sigmoid_slope(x: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(x)
    return s * (1.0 - s)


#: derivative phi'(x) of each activation, equal to what autograd gives (relu'(0) = 0)
SLOPES = {
    "tanh": lambda x: 1.0 - torch.tanh(x) ** 2,
    "relu": lambda x: (x > 0).to(x.dtype),
    "softplus": _softplus_slope,
    "sigmoid": _sigmoid_slope,
    "linear": torch.ones_like,
}


def activation_fn(name: str, *, slope: bool = False):
    """Look up an activation (or with ``slope=True`` its derivative) by name.

    Raises ``ValueError`` listing the known names.
    """
    try:
        return (SLOPES if slope else ACTIVATIONS)[name]
    except KeyError:
        raise ValueError(
            f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}"
        ) from None
