"""The kernels' view of the model families: backend kernel tables, dtype casts, ensemble stacking.

Families themselves (step, drive, Jacobians) live in :mod:`neurodyn.models._family`, one per
params type; this module adds which compiled kernel runs each family on each backend. A kernel
table maps a family name to a *chunk runner*

    run(params, h, drive, noise, noise_std, n_steps, t0, every, out) -> None

that advances ``h`` (network, batch, state) in place by ``n_steps`` steps, given ensemble-form
params (a leading ``network`` dim on every tensor), ``drive`` (network, batch, n_steps or 1,
n_drive) from the family's ``drive``, ``noise`` (network, batch, n_steps, state) or None, and
fills ``out`` (network, batch, records, state) or None with the states after the steps
``every, 2 every, ...`` counted from the chunk's first global step ``t0``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from neurodyn.models._family import FAMILIES, Family, family_of, is_ensemble, lift

__all__ = ["FAMILIES", "Family", "cast", "family_of", "is_ensemble", "kernel_for", "lift",
           "register_family", "stack_params"]

KERNEL_BACKENDS = ("numba", "triton")


def _table(backend: str) -> dict[str, Callable[..., None]]:
    """The family-name → chunk-runner table of a compiled backend (imports neither Numba nor Triton)."""
    if backend == "numba":
        from neurodyn.kernels._numba_backend import KERNELS
    elif backend == "triton":
        from neurodyn.kernels._triton_backend import KERNELS
    else:
        raise ValueError(f"backend {backend!r} has no kernel table; choose one of "
                         f"{', '.join(KERNEL_BACKENDS)}")
    return KERNELS


def kernel_for(backend: str, family: Family | None) -> Callable[..., None] | None:
    """The chunk runner of ``family`` on ``backend``, or None when that backend has none."""
    return None if family is None else _table(backend).get(family.name)


def register_family(
    params_type: type, family: Family, *, kernels: Mapping[str, Callable[..., None]] | None = None
) -> None:
    """Make models, kernels and analyses accept ``params_type`` (a model family added later).

    Parameters
    ----------
    params_type : type
        The NamedTuple type that the model's ``params()`` returns.
    family : Family
        Its step, drive, state-noise scale, input count and, optionally, closed-form Jacobians.
    kernels : mapping backend name -> chunk runner, optional
        Compiled kernels (``"numba"``, ``"triton"``) with the contract of this module's docstring.
        Without one, ``rollout(backend="auto")`` runs the family on torch.

    Raises
    ------
    ValueError
        If ``family.name`` is taken by another params type, or a kernel backend is unknown.

    Examples
    --------
    A new params type becomes a family that ``rollout`` runs on torch (no compiled kernel needed):

    >>> from typing import NamedTuple
    >>> import torch
    >>> from neurodyn.kernels import FAMILIES, Family, register_family, rollout
    >>> class DecayParams(NamedTuple):
    ...     w: torch.Tensor  # (unit, unit)
    >>> def decay_step(p, h, u):
    ...     return h @ p.w.mT
    >>> register_family(DecayParams, Family(
    ...     "decay_example", "w", (), decay_step, drive=lambda p, u: 0.0, noise_scale=lambda p: 0.0,
    ...     n_inputs=lambda p: 0))
    >>> params = DecayParams(0.5 * torch.eye(2))
    >>> result = rollout(params, h0=torch.ones(1, 2), n_steps=3)
    >>> result.final.tolist(), result.backend  # 0.5 ** 3
    ([[0.125, 0.125]], 'torch')
    >>> del FAMILIES[DecayParams]  # leave the registry as it was
    """
    taken = {f.name: t for t, f in FAMILIES.items()}
    if taken.get(family.name, params_type) is not params_type:
        raise ValueError(f"family name {family.name!r} is taken by {taken[family.name].__name__}; "
                         "choose another name")
    tables = {b: _table(b) for b in (kernels or {})}
    FAMILIES[params_type] = family
    for backend, run in (kernels or {}).items():
        tables[backend][family.name] = run


def cast(params: Any, *, dtype: torch.dtype, device: Any) -> Any:
    """Detached copy of every tensor field in ``dtype`` on ``device``."""
    return type(params)(*(
        v.detach().to(device=device, dtype=dtype) if isinstance(v, torch.Tensor) else v
        for v in params
    ))


def stack_params(params: Sequence[Any]) -> Any:
    """Stack the params of several networks of one family into ensemble params.

    Parameters
    ----------
    params : sequence of params NamedTuples (or ``RecurrentModel`` objects), all the same type and
        sizes, with equal non-tensor fields (activation, alpha, noise_std).

    Returns
    -------
    NamedTuple of the same type whose tensor fields have shape ``(network, *shape)``.

    Raises
    ------
    ValueError
        If ``params`` is empty, mixes types or sizes, or the non-tensor fields differ.
    TypeError
        If ``params`` is not a list (or other iterable) of models or params NamedTuples, or an item
        is neither (e.g. ``stack_params([1, 2])``).

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import rollout, stack_params
    >>> from neurodyn.models import LeakyRNN
    >>> nets = [LeakyRNN(2, 8, 1, alpha=0.5, seed=s) for s in range(3)]
    >>> params = stack_params(nets)
    >>> tuple(params.w_rec.shape), params.alpha  # (network, unit, unit); shared fields stay scalars
    ((3, 8, 8), 0.5)
    >>> result = rollout(params, inputs=torch.ones(3, 4, 2), h0=torch.zeros(3, 4, 8), n_steps=10,
    ...                  backend="torch")
    >>> tuple(result.states.shape)  # (network, batch, time, unit)
    (3, 4, 10, 8)
    >>> one = rollout(nets[1], inputs=torch.ones(4, 2), h0=torch.zeros(4, 8), n_steps=10, backend="torch")
    >>> bool(torch.allclose(result.final[1], one.final, atol=1e-6))
    True
    """
    if not isinstance(params, Iterable) or hasattr(params, "_fields"):
        raise TypeError(f"stack_params takes a list of models or of their params() NamedTuples, got "
                        f"{type(params).__name__}; e.g. stack_params([net.params() for net in nets])")
    items = [p.params() if hasattr(p, "params") and callable(p.params) else p for p in params]
    bad = next((p for p in items if not hasattr(p, "_fields")), None)
    if bad is not None:
        raise TypeError(f"stack_params takes a list of models or of their params() NamedTuples, got an item "
                        f"of type {type(bad).__name__}; e.g. stack_params([net.params() for net in nets])")
    if not items:
        raise ValueError("stack_params needs at least one network")
    kind = type(items[0])
    if any(type(p) is not kind for p in items):
        raise ValueError("stack_params: all networks must be of the same model family")
    check_shared(items)
    fields = []
    for name, first in zip(kind._fields, items[0]):
        values = [getattr(p, name) for p in items]
        if isinstance(first, torch.Tensor):
            shapes = {tuple(v.shape) for v in values}
            if len(shapes) > 1:
                raise ValueError(f"stack_params: field {name!r} has different shapes {sorted(shapes)}")
            fields.append(torch.stack([v.detach() for v in values]))
        else:
            fields.append(first)
    return kind(*fields)


def check_shared(items: Sequence[Any], *, extra: Mapping[str, Sequence[Any]] | None = None,
                 what: str = "stack_params", fix: str = "roll such networks out separately") -> None:
    """Raise when a non-tensor field (setting) of the params ``items`` differs between networks.

    An ensemble holds one value of each such field (activation, alpha, noise_std, n_relu, ...) for
    all its networks. ``extra`` adds settings kept outside the params, one value per network.

    Raises
    ------
    ValueError
        One line naming the field, the first two networks that differ and their values.

    Examples
    --------
    >>> from neurodyn.kernels._families import check_shared
    >>> from neurodyn.models import LeakyRNN
    >>> check_shared([LeakyRNN(1, 4, 1, alpha=a).params() for a in (0.5, 0.5, 1.0)], what="demo", fix="fix")
    Traceback (most recent call last):
    ...
    ValueError: demo: field 'alpha' differs between networks (network 0: 0.5, network 2: 1.0); ensembles ...
    """
    settings = {name: [getattr(p, name) for p in items] for name, first in zip(items[0]._fields, items[0])
                if not isinstance(first, torch.Tensor)}
    settings.update({k: list(v) for k, v in (extra or {}).items() if k not in settings})
    for name, values in settings.items():
        for e, value in enumerate(values):
            if value != values[0]:
                raise ValueError(f"{what}: field {name!r} differs between networks (network 0: "
                                 f"{values[0]!r}, network {e}: {value!r}); ensembles share it; {fix}")
