"""Initial states of a fixed-point search: given states, task rollouts or free rollouts."""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np
import torch

from neurodyn._checks import check_finite
from neurodyn._seed import numpy_rng, torch_generator

#: trials rolled out on a task when no initial states are given
TASK_TRIALS = 128
#: length (time steps), initial-state spread and input-noise std of the free rollouts
FREE_STEPS = 50
FREE_STATE_STD = 1.0
FREE_INPUT_STD = 0.1


def as_state_array(initial_states: Any, state_size: int) -> np.ndarray:
    """Validate ``(n, state)`` or ``(trial, time, state)`` states; return them as ``(n, state)``.

    Raises
    ------
    ValueError
        On a wrong shape (ragged rows included), an empty array, complex or non-numeric values, or
        NaN/Inf entries.
    """
    try:
        arr = initial_states.detach().cpu().numpy() if isinstance(initial_states, torch.Tensor) \
            else np.asarray(initial_states)
    except ValueError as err:  # a ragged nested sequence
        raise ValueError(f"initial_states must be a rectangular array (n, {state_size}) or (trial, time, "
                         f"{state_size}), got rows of different lengths: {reprlib.repr(initial_states)}"
                         ) from err
    if arr.dtype.kind not in "biuf":
        what = "complex" if arr.dtype.kind == "c" else f"{arr.dtype}"
        raise ValueError(f"initial_states must be real numbers, got {what} values; pass the real states "
                         "(e.g. states.real if the imaginary part is zero)")
    if arr.ndim not in (2, 3) or arr.shape[-1] != state_size:
        raise ValueError(
            f"initial_states must have shape (n, {state_size}) or (trial, time, {state_size}), "
            f"got {arr.shape}"
        )
    arr = arr.reshape(-1, state_size).astype(np.float64)
    if arr.shape[0] == 0:
        raise ValueError("initial_states is empty; give at least one state")
    check_finite(arr, "initial_states", "drop or fill those states first")
    return arr


def sample_states(states: np.ndarray, n_inits: int, noise_scale: float, seed: int) -> np.ndarray:
    """Pick ``n_inits`` rows (all of them, in order, when there are no more than ``n_inits``;
    otherwise a seeded sample without replacement) and add N(0, noise_scale²) noise."""
    rng = numpy_rng(seed, 0)
    if states.shape[0] > n_inits:
        states = states[np.sort(rng.choice(states.shape[0], size=n_inits, replace=False))]
    if noise_scale > 0:
        states = states + noise_scale * rng.standard_normal(states.shape)
    return states


def task_states(model, task, seed: int, device: Any, dtype: torch.dtype) -> np.ndarray:
    """States of ``model`` run noise-free on ``TASK_TRIALS`` trials of ``task`` (trial, time, state)."""
    if getattr(task, "n_inputs", None) != model.n_inputs:
        raise ValueError(
            f"task {type(task).__name__} has {task.n_inputs} inputs but the model takes "
            f"{model.n_inputs}; pass a matching task or initial_states"
        )
    batch = task.sample(TASK_TRIALS, seed=seed)
    inputs = torch.as_tensor(batch.inputs, dtype=dtype, device=device)
    with torch.no_grad():
        states = model(inputs, noise=False).states
    return states.cpu().numpy()


def free_rollout_states(G_input, state_size: int, u_star: torch.Tensor | None, n_inits: int,
                        seed: int, device: Any, dtype: torch.dtype) -> np.ndarray:
    """Free rollouts: ``n_inits`` states drawn N(0, FREE_STATE_STD²) run ``FREE_STEPS`` steps under
    input ``u* + N(0, FREE_INPUT_STD²)``; one state per rollout at a random step."""
    gen = torch_generator(seed, 1, device=device)
    h = FREE_STATE_STD * torch.randn(n_inits, state_size, generator=gen, dtype=dtype, device=device)
    stop = torch.randint(0, FREE_STEPS, (n_inits,), generator=gen, device=device)
    picked = h.clone()
    with torch.no_grad():
        for t in range(FREE_STEPS):
            u = None
            if u_star is not None and u_star.numel() > 0:
                noise = torch.randn((n_inits, u_star.numel()), generator=gen, dtype=dtype,
                                    device=device)
                u = u_star + FREE_INPUT_STD * noise
            h = G_input(h, u)
            picked = torch.where((stop == t)[:, None], h, picked)
    return picked.cpu().numpy()
