"""Reference chaotic systems simulated for reconstruction benchmarks."""

from __future__ import annotations

import math

import numpy as np

from neurodyn._checks import check_setting

__all__ = ["LORENZ63_MAX_LYAPUNOV", "lorenz63", "lorenz63_fixed_points"]

#: Largest Lyapunov exponent of Lorenz-63 at (10, 28, 8/3), per unit time (Sprott 2003).
LORENZ63_MAX_LYAPUNOV = 0.906


def lorenz63(n_points: int, *, dt: float = 0.01, seed: int = 0, sigma: float = 10.0, rho: float = 28.0,
             beta: float = 8.0 / 3.0) -> np.ndarray:
    """A Lorenz-63 trajectory sampled every ``dt`` after a transient of 20 time units.

    ``x' = σ (y − x)``, ``y' = x (ρ − z) − y``, ``z' = x y − β z``, integrated with
    ``scipy.integrate.solve_ivp`` (DOP853, relative and absolute tolerance 1e-10) from
    ``(1, 1, 20)`` plus a standard normal draw seeded by ``seed``.

    Parameters
    ----------
    n_points : int
        Number of samples.
    dt : float
        Sampling interval (time units).
    seed : int
        Seed of the initial-state perturbation.
    sigma, rho, beta : float
        The system's parameters (default: the chaotic classic 10, 28, 8/3).

    Returns
    -------
    ndarray, shape (time, 3)
        ``(x, y, z)`` at times ``20 + dt * k``, ``k = 0 .. n_points - 1``.

    Raises
    ------
    ValueError
        If ``n_points`` is not an integer >= 1, ``dt`` not a finite number > 0, or ``sigma``, ``rho``,
        ``beta`` not finite.

    Examples
    --------
    >>> from neurodyn.analysis.reconstruction import lorenz63
    >>> x = lorenz63(500, dt=0.05)
    >>> x.shape, bool(abs(x[:, 0]).max() < 25 and 0 < x[:, 2].min())
    ((500, 3), True)
    """
    check_setting("n_points", n_points, 1, integer=True, hint=" (samples of the trajectory)")
    check_setting("dt", dt, 0.0, strict=True, hint=" (sampling interval in time units)")
    for name, value in (("sigma", sigma), ("rho", rho), ("beta", beta)):
        check_setting(name, value, -math.inf)
    from scipy.integrate import solve_ivp

    def rhs(_: float, u: np.ndarray) -> list[float]:
        x, y, z = u
        return [sigma * (y - x), x * (rho - z) - y, x * y - beta * z]

    u0 = np.random.default_rng(seed).normal(size=3) + [1.0, 1.0, 20.0]
    t = 20.0 + dt * np.arange(int(n_points))
    sol = solve_ivp(rhs, (0.0, t[-1]), u0, t_eval=t, rtol=1e-10, atol=1e-10, method="DOP853")
    return sol.y.T


def lorenz63_fixed_points(rho: float = 28.0, beta: float = 8.0 / 3.0) -> np.ndarray:
    """The three equilibria of Lorenz-63 (for ``ρ > 1``): the origin and ``C±``.

    Parameters
    ----------
    rho, beta : float
        The system's parameters (σ does not move the equilibria).

    Returns
    -------
    ndarray, shape (3, 3)
        Rows ``(0, 0, 0)``, ``(+c, +c, ρ − 1)``, ``(−c, −c, ρ − 1)`` with ``c = sqrt(β (ρ − 1))``.

    Raises
    ------
    ValueError
        If ``rho`` is not a finite number > 1 (below it the origin is the only equilibrium) or
        ``beta`` not a finite number > 0.

    Examples
    --------
    >>> from neurodyn.analysis.reconstruction import lorenz63_fixed_points
    >>> lorenz63_fixed_points().round(3).tolist()
    [[0.0, 0.0, 0.0], [8.485, 8.485, 27.0], [-8.485, -8.485, 27.0]]
    """
    check_setting("rho", rho, 1.0, strict=True, hint=" (for rho <= 1 the origin is the only equilibrium)")
    check_setting("beta", beta, 0.0, strict=True)
    c = np.sqrt(beta * (rho - 1.0))
    return np.array([[0.0, 0.0, 0.0], [c, c, rho - 1.0], [-c, -c, rho - 1.0]])
