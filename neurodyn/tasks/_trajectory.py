"""Random-walk trajectories in a box and place-cell codes (rat motion model of Raudies &
Hasselmo 2012 with the defaults of Sorscher et al. 2019, NeurIPS, "A unified theory for the
origin of grid cells through the lens of pattern formation")."""

from __future__ import annotations

import math

from neurodyn._lazy import numpy as np

#: Sorscher et al. (2019) defaults: time step 20 ms, rotation-velocity s.d. 11.52 rad/s, Rayleigh
#: scale of the forward speed 0.13 * 2 pi m/s, border region 3 cm, speed x 0.25 near a wall.
SORSCHER_DT_MS = 20.0
SORSCHER_TURN_STD = 5.76 * 2
SORSCHER_SPEED_SCALE = 0.13 * 2 * math.pi
SORSCHER_BORDER_M = 0.03
WALL_SLOWDOWN = 0.25


def _fold(x: np.ndarray, half: float) -> np.ndarray:
    """Reflect unconstrained coordinates into ``[-half, half]`` (mirror walls)."""
    m = np.mod(x + half, 4 * half)
    return np.where(m > 2 * half, 4 * half - m, m) - half


def _avoid_walls(pos: np.ndarray, hd: np.ndarray, half: float, border: float):
    """Sorscher's rule: near a wall and heading into it, turn parallel to it and slow down.

    ``pos`` (trial, dim), ``hd`` (trial,) → (near (trial,) bool, turn (trial,) radians).
    In 1-D, ``turn`` reverses the direction of travel (``hd -> pi - hd``).
    """
    if pos.shape[1] == 1:
        x = pos[:, 0]
        near = (half - np.abs(x) < border) & (np.sign(np.cos(hd)) == np.sign(x))
        return near, np.where(near, np.pi - 2 * hd, 0.0)
    dists = np.stack([half - pos[:, 0], half - pos[:, 1], half + pos[:, 0], half + pos[:, 1]])
    theta = np.argmin(dists, axis=0) * np.pi / 2
    a_wall = np.mod(hd - theta + np.pi, 2 * np.pi) - np.pi
    near = (dists.min(axis=0) < border) & (np.abs(a_wall) < np.pi / 2)
    return near, np.where(near, np.sign(a_wall) * (np.pi / 2 - np.abs(a_wall)), 0.0)


def random_walk(
    x0: np.ndarray, hd0: np.ndarray, speed: np.ndarray, turn: np.ndarray, *, dt_ms: float,
    box_size: float, border: float, boundary: str,
) -> np.ndarray:
    """Positions of a random walk with smooth heading changes inside a square box.

    Parameters
    ----------
    x0 : ndarray, shape (trial, dim)
        Start positions (m), ``dim`` 1 or 2, inside ``[-box_size/2, box_size/2]``.
    hd0 : ndarray, shape (trial,)
        Initial heading (radians); in 1-D the velocity is ``speed * cos(heading)``.
    speed : ndarray, shape (trial, time)
        Forward speed per step (m/s), e.g. Rayleigh distributed.
    turn : ndarray, shape (trial, time)
        Angular velocity per step (rad/s), e.g. Gaussian.
    dt_ms : float
        Time step in ms.
    box_size : float
        Side of the box (m).
    border : float
        Width of the wall region (m) for ``boundary="avoid"``.
    boundary : {"avoid", "reflect"}
        ``"avoid"``: Sorscher et al.'s wall avoidance (turn parallel to the wall and slow to a
        quarter speed in the border region), a sequential rule computed step by step on whole
        batches, with positions clipped to the box. ``"reflect"``: unconstrained walk mirrored at
        the walls, fully vectorised.

    Returns
    -------
    ndarray, shape (trial, time + 1, dim)
        Positions at steps 0..time (m), all inside the box.
    """
    dt = dt_ms / 1000.0
    half = box_size / 2
    n, n_steps = speed.shape
    if boundary == "reflect":
        hd = hd0[:, None] + np.concatenate([np.zeros((n, 1)), np.cumsum(turn * dt, 1)[:, :-1]], 1)
        direction = np.stack([np.cos(hd), np.sin(hd)], -1)[..., : x0.shape[1]]
        free = x0[:, None] + np.cumsum(speed[..., None] * dt * direction, axis=1)
        return np.concatenate([x0[:, None], _fold(free, half)], axis=1)
    if boundary != "avoid":
        raise ValueError(f"boundary must be 'avoid' or 'reflect', got {boundary!r}")
    pos = np.empty((n, n_steps + 1, x0.shape[1]))
    pos[:, 0] = x0
    hd = hd0.astype(np.float64)
    for t in range(n_steps):  # sequential by definition of the rule; vectorised over trials
        near, turn_t = _avoid_walls(pos[:, t], hd, half, border)
        v = np.where(near, WALL_SLOWDOWN, 1.0) * speed[:, t]
        step = np.stack([np.cos(hd), np.sin(hd)], -1)[:, : x0.shape[1]] * (v * dt)[:, None]
        pos[:, t + 1] = np.clip(pos[:, t] + step, -half, half)
        hd = hd + turn_t + dt * turn[:, t]
    return pos


def place_cell_centers(n_cells: int, n_dims: int, box_size: float, seed: int) -> np.ndarray:
    """``n_cells`` centres uniform in the box, shape (cell, dim), from their own ``seed``."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(7,))))
    return rng.uniform(-box_size / 2, box_size / 2, size=(n_cells, n_dims))


def place_cell_code(pos: np.ndarray, centers: np.ndarray, width: float) -> np.ndarray:
    """Softmax-normalised Gaussian place-cell activity (Sorscher et al. 2019).

    ``pos`` (..., dim), ``centers`` (cell, dim) → (..., cell), each row summing to 1:
    ``softmax_i(-|x - c_i|^2 / (2 width^2))``.
    """
    d2 = ((pos[..., None, :] - centers) ** 2).sum(-1)
    logits = -d2 / (2 * width**2)
    logits -= logits.max(-1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(-1, keepdims=True)


def decode_place_cells(activity: np.ndarray, centers: np.ndarray, k: int = 3) -> np.ndarray:
    """Position estimate: mean centre of the ``k`` most active cells (Sorscher et al. 2019).

    ``activity`` (..., cell) → (..., dim).
    """
    top = np.argpartition(-activity, kth=min(k, activity.shape[-1]) - 1, axis=-1)[..., :k]
    return centers[top].mean(-2)
