"""Batched rollouts of one network or an ensemble: torch reference, Numba (CPU) and Triton (GPU).

``rollout(model_or_params, inputs=..., h0=...)`` picks a backend (``backend="auto"``) and returns a
:class:`RolloutResult`; :func:`stack_params` builds ensemble params. Numba and Triton are imported
only when their backend runs. :func:`fused_states` is the differentiable training rollout
with the time loop and its backpropagation through time fused in Numba.
"""

from neurodyn.kernels._api import BACKENDS, RolloutResult, backend_available, rollout
from neurodyn.kernels._families import FAMILIES, Family, register_family, stack_params
from neurodyn.kernels.fused import FUSED_FAMILIES, fused_backend, fused_states

__all__ = [
    "BACKENDS", "FAMILIES", "FUSED_FAMILIES", "Family", "RolloutResult", "backend_available",
    "fused_backend", "fused_states", "register_family", "rollout", "stack_params",
]
