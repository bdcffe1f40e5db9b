"""Path integration in 1-D and 2-D boxes (Cueva & Wei 2018, ICLR; Sorscher et al. 2019, NeurIPS)."""

from __future__ import annotations

from dataclasses import dataclass

from neurodyn._lazy import numpy as np
from neurodyn._seed import trial_rngs
from neurodyn.tasks import _trajectory as traj
from neurodyn.tasks._base import Task, TaskBatch
from neurodyn.tasks._checks import integers, rule
from neurodyn.tasks._registry import register_task
from neurodyn.tasks._timeline import ms_to_steps, per_trial

__all__ = ["PathIntegration"]


@register_task
@dataclass(frozen=True)
class PathIntegration(Task):
    """Integrate a velocity signal into position, starting from a cued initial position.

    A random walk (Sorscher et al. 2019 motion model: Rayleigh speeds, Gaussian angular
    velocity, wall avoidance) runs inside the box ``[-box_size_m/2, box_size_m/2]**n_dims``.
    Inputs per step: the velocity (m/s, ``n_dims`` channels), then an initial-position code that
    is on for the first ``init_steps`` steps only: the start coordinates (``targets="position"``)
    or the place-cell code of the start (``targets="place_cells"``). The target at step ``t`` is
    the position after the step, ``x0 + dt * cumsum(v)[t]``: raw coordinates with
    ``loss = "mse"``, or softmax place-cell activity (soft targets, ``loss =
    "soft_cross_entropy"``). Fixed place-cell centres come from ``place_cell_seed``.

    Parameters
    ----------
    n_dims : int
        1 or 2 (the complexity knob, together with ``duration_ms``).
    box_size_m : float
        Side of the box in m (Sorscher et al.: 2.2).
    duration_ms : float
        Path duration in ms (Sorscher et al.: 20 steps of 20 ms).
    speed_scale : float
        Rayleigh scale of the forward speed in m/s.
    turn_std : float
        Standard deviation of the angular velocity in rad/s.
    border_m : float
        Width of the wall region in m.
    boundary : {"avoid", "reflect"}
        Sorscher et al.'s wall avoidance, or mirror reflection at the walls (fully vectorised).
    targets : {"position", "place_cells"}
    n_place_cells : int
        Number of place cells (Sorscher et al.: 512).
    place_cell_width_m : float
        Place-field width sigma in m (Sorscher et al.: 0.12).
    place_cell_seed : int
        Seed of the place-cell centres (part of the task definition).
    init_steps : int
        Number of initial steps carrying the initial-position code.
    tolerance_m : float
        :meth:`evaluate` counts a step as correct when the position error is below this.
    dt : float
        Time step in ms.

    Raises
    ------
    ValueError
        At construction, for a field that breaks its rule, e.g. ``n_dims`` not 1 or 2; the count fields
        (``n_dims``, ``n_place_cells``, ``init_steps``) must be integers (a fraction, NaN, a bool or a string
        is refused; a whole float such as ``4.0`` is stored as ``4``).

    Notes
    -----
    ``ood()`` returns the task with paths four times longer.
    Per-trial params: ``position`` (trial, time + 1, dim), ``x0`` (trial, dim).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.tasks import PathIntegration
    >>> task = PathIntegration(n_dims=2, duration_ms=200.0)
    >>> task.n_steps, task.n_inputs, task.n_outputs  # 20 ms steps; velocity + start position in
    (10, 4, 2)
    >>> batch = task.sample(3, seed=0)
    >>> batch.inputs.shape, batch.targets.shape
    ((3, 10, 4), (3, 10, 2))
    >>> bool(np.all(np.abs(batch.targets) <= task.box_size_m / 2))  # paths stay in the box
    True
    >>> task.evaluate(batch.targets, batch)["accuracy"]
    1.0
    """

    name = "path_integration"
    n_dims: int = 2
    box_size_m: float = 2.2
    duration_ms: float = 400.0
    speed_scale: float = traj.SORSCHER_SPEED_SCALE
    turn_std: float = traj.SORSCHER_TURN_STD
    border_m: float = traj.SORSCHER_BORDER_M
    boundary: str = "avoid"
    targets: str = "position"
    n_place_cells: int = 512
    place_cell_width_m: float = 0.12
    place_cell_seed: int = 0
    init_steps: int = 1
    tolerance_m: float = 0.1
    dt: float = traj.SORSCHER_DT_MS

    checks = (
        integers("n_dims", "n_place_cells", "init_steps"),
        rule(lambda t: t.n_dims not in (1, 2), "n_dims must be 1 or 2, got {t.n_dims}"),
        rule(lambda t: t.targets not in ("position", "place_cells"),
             "targets must be 'position' or 'place_cells', got {t.targets!r}"),
        rule(lambda t: t.boundary not in ("avoid", "reflect"),
             "boundary must be 'avoid' or 'reflect', got {t.boundary!r}"),
        rule(lambda t: t.box_size_m <= 0 or t.speed_scale < 0 or t.turn_std < 0,
             "box_size_m must be positive, speed_scale and turn_std non-negative"),
        rule(lambda t: t.n_steps < 1 or not 1 <= t.init_steps <= t.n_steps,
             "need duration_ms >= dt and 1 <= init_steps <= number of steps"),
        rule(lambda t: t.targets == "place_cells" and t.n_place_cells < 2, "n_place_cells must be >= 2"),
    )

    @property
    def loss(self) -> str:  # type: ignore[override]
        return "mse" if self.targets == "position" else "soft_cross_entropy"

    @property
    def n_steps(self) -> int:
        return int(ms_to_steps(self.duration_ms, self.dt))

    @property
    def n_inputs(self) -> int:
        return self.n_dims + (self.n_dims if self.targets == "position" else self.n_place_cells)

    @property
    def n_outputs(self) -> int:
        return self.n_dims if self.targets == "position" else self.n_place_cells

    @property
    def place_cell_centers(self) -> np.ndarray:
        """Place-cell centres (cell, dim) in m."""
        return traj.place_cell_centers(
            self.n_place_cells, self.n_dims, self.box_size_m, self.place_cell_seed
        )

    def _sample(self, n_trials: int, seed: int, first_trial: int) -> TaskBatch:
        rngs = trial_rngs(seed, n_trials, first_trial)
        half, n_steps = self.box_size_m / 2, self.n_steps
        x0 = per_trial(rngs, lambda r: r.uniform(-half, half, size=self.n_dims))
        hd0 = per_trial(rngs, lambda r: r.uniform(0, 2 * np.pi))
        speed = per_trial(rngs, lambda r: r.rayleigh(self.speed_scale, size=n_steps))
        turn = per_trial(rngs, lambda r: r.normal(0.0, self.turn_std, size=n_steps))
        pos = traj.random_walk(
            x0, hd0, speed, turn, dt_ms=self.dt, box_size=self.box_size_m,
            border=self.border_m, boundary=self.boundary,
        )
        velocity = np.diff(pos, axis=1) / (self.dt / 1000.0)
        init = np.arange(n_steps)[None, :, None] < self.init_steps
        if self.targets == "position":
            code, targets = x0, pos[:, 1:]
        else:
            centers = self.place_cell_centers
            code = traj.place_cell_code(x0, centers, self.place_cell_width_m)
            targets = traj.place_cell_code(pos[:, 1:], centers, self.place_cell_width_m)
        inputs = np.concatenate([velocity, init * code[:, None]], axis=-1)
        return self._batch(
            inputs, targets, np.ones((n_trials, n_steps, 1)), seed=seed,
            first_trial=first_trial, trial_params={"position": pos, "x0": x0},
            periods={"integration": np.tile([0, n_steps], (n_trials, 1))},
        )

    def ood(self) -> PathIntegration:
        return self.replace(duration_ms=4 * self.duration_ms)

    def decode(self, outputs: np.ndarray) -> np.ndarray:
        """Position estimate (trial, time, dim) from network ``outputs``: the outputs themselves
        for ``targets="position"``, else the mean centre of the 3 most active place cells."""
        out = np.asarray(outputs, dtype=np.float64)
        if self.targets == "position":
            return out
        return traj.decode_place_cells(out, self.place_cell_centers, k=3)

    def evaluate(self, outputs: np.ndarray, batch: TaskBatch) -> dict[str, float]:
        """``position_error_m`` (mean Euclidean error of the decoded position), ``r2`` of the
        decoded position, and ``accuracy`` (fraction of steps with error < ``tolerance_m``)."""
        true = batch.trial_params["position"][:, 1:]
        est = self.decode(outputs)
        if est.shape != true.shape:
            raise ValueError(f"decoded outputs have shape {est.shape}, expected {true.shape}")
        err = np.linalg.norm(est - true, axis=-1)
        sst = ((true - true.mean((0, 1))) ** 2).sum()
        return {
            "position_error_m": float(err.mean()),
            "r2": float(1 - ((est - true) ** 2).sum() / max(sst, 1e-12)),
            "accuracy": float(np.mean(err < self.tolerance_m)),
        }
