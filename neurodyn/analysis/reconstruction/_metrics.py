"""Measures of dynamical systems reconstruction quality.

* :func:`state_space_divergence` ``D_stsp``: Kullback-Leibler divergence between the occupation
  measures of true and generated trajectories in observation space — binned (Koppe et al. 2019;
  Brenner et al. 2022) or by a Monte-Carlo estimate between Gaussian mixtures centred on the
  points (Hershey & Olsen 2007, as used by Mikhaeil et al. 2022; Hess et al. 2023).
* :func:`power_spectrum_distance` ``D_H``: mean over channels of the Hellinger distance between
  the normalised, Gaussian-smoothed power spectra (Mikhaeil et al. 2022; Hess et al. 2023).
* :func:`prediction_error` ``PE(n)``: mean squared error of ``n``-step-ahead predictions from
  data-inferred latent states (Koppe et al. 2019; Hess et al. 2023).

``D_stsp`` and ``D_H`` compare a *freely generated* trajectory (after discarding a transient)
with held-out data; they are invariant to the phase of the trajectories, unlike ``PE``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from neurodyn._budget import check_memory, warn_flops
from neurodyn._checks import check_finite, check_setting, float64_copy
from neurodyn._seed import SeedLike, numpy_rng
from neurodyn.analysis.reconstruction._inputs import check_count, check_inputs

__all__ = ["normalized_power_spectrum", "power_spectrum_distance", "prediction_error",
           "state_space_divergence", "state_space_divergence_max"]


def _series(x: Any, name: str) -> np.ndarray:
    """``x`` (array or tensor) as a float64 (time, channel) array; a 1-D series is one channel."""
    a = float64_copy(x, name)
    return a[:, None] if a.ndim == 1 else a


def _pair(x_true: Any, x_gen: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = _series(x_true, "x_true"), _series(x_gen, "x_gen")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or a.shape[1] == 0:
        raise ValueError(
            f"x_true and x_gen must be (time, channel) with the same channels, at least one; got {a.shape} "
            f"and {b.shape}"
        )
    check_finite(a, "x_true", "clean the data first")
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"need at least 2 time points each, got {len(a)} and {len(b)}")
    return a, b


def _bin_index(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_bins: int) -> np.ndarray:
    """Flat bin index of every point; ``-1`` for points outside ``[lo, hi]`` (the overflow bin).

    Bin ``k`` of a dimension is ``[lo + k w, lo + (k+1) w)``; the top edge ``hi`` belongs to the last
    bin, the bottom edge ``lo`` to the first, so every bin — the lowest included — is counted. A point
    with a NaN or infinite coordinate (a generated trajectory that diverged) is outside, silently.
    """
    w = (hi - lo) / n_bins
    with np.errstate(invalid="ignore", over="ignore"):  # huge, inf or NaN: marked outside below
        k = np.floor((x - lo) / w).astype(np.int64)
    k = np.where(x == hi, n_bins - 1, k)
    inside = np.all((k >= 0) & (k < n_bins) & np.isfinite(x), axis=1)
    flat = np.ravel_multi_index(tuple(np.clip(k, 0, n_bins - 1).T), (n_bins,) * x.shape[1])
    return np.where(inside, flat, -1)


def _check_bins(n_bins: Any, n_dim: int, n_points: int | None = None, smoothing: float = 0.0,
                stacklevel: int = 3) -> int:
    """``n_bins`` as an int: an integer >= 1 whose ``n_bins ** n_dim`` cells can be indexed.

    The one rule for "too many cells" of the binned ``D_stsp``: cells that cannot be indexed (above
    ``2**62``) are refused; cells whose Laplace pseudo-counts (``smoothing`` each) outweigh the
    ``n_points`` data points give a score near 0 for any series, so a ``UserWarning`` names
    ``method='gmm'``.
    """
    check_setting("n_bins", n_bins, 1, integer=True, hint=" (bins per dimension)")
    n_bins = int(n_bins)
    if float(n_bins) ** n_dim > 2**62:
        raise ValueError(f"{n_bins}**{n_dim} cells overflow; use method='gmm' for many channels")
    if n_points is not None and smoothing > 0 and smoothing * float(n_bins) ** n_dim >= n_points:
        warnings.warn(
            f"binned D_stsp cannot resolve these data: the pseudo-counts of {n_bins}**{n_dim} cells "
            f"(smoothing={smoothing:g} each) outweigh the {n_points} data points, so any series scores "
            f"near 0; use method='gmm' (or fewer n_bins)", UserWarning, stacklevel=stacklevel)
    return n_bins


def _box(a: np.ndarray, bin_range: Any) -> tuple[np.ndarray, np.ndarray]:
    """The histogram box ``(lo, hi)`` of ``state_space_divergence`` (default: data range + 0.1 std; a
    constant channel of value ``c`` gets ``c ± 0.5 max(|c|, 1)``)."""
    n_dim = a.shape[1]
    if bin_range is None:
        sd = a.std(axis=0)
        lo, hi = a.min(axis=0) - 0.1 * sd, a.max(axis=0) + 0.1 * sd
        # a constant channel (up to rounding in its std): no spread to set the bin width
        flat = ~(hi - lo > 1e-12 * np.maximum(np.abs(lo), np.abs(hi)))
        if np.any(flat):
            mid = a.min(axis=0)[flat]
            half = 0.5 * np.maximum(np.abs(mid), 1.0)
            lo[flat], hi[flat] = mid - half, mid + half
    else:
        try:
            rng = np.asarray(bin_range, dtype=np.float64)
        except (TypeError, ValueError):
            rng = None
        if rng is not None and rng.shape == (2,):
            rng = np.broadcast_to(rng[:, None], (2, n_dim))
        if rng is None or rng.shape != (2, n_dim) or not np.all(np.isfinite(rng)) or np.any(rng[1] <= rng[0]):
            raise ValueError(f"bin_range must be finite (lo, hi) or (2, {n_dim}) with hi > lo; got "
                             f"{bin_range!r}".replace("\n", " "))
        lo, hi = rng[0], rng[1]
    return lo, hi


def _binned_kl(a: np.ndarray, b: np.ndarray, n_bins: int, lo: np.ndarray, hi: np.ndarray,
               smoothing: float) -> float:
    n_dim = a.shape[1]
    ia, ib = _bin_index(a, lo, hi, n_bins), _bin_index(b, lo, hi, n_bins)
    # sparse histograms over the n_bins**n_dim cells plus one overflow cell (index -1)
    keys, inv = np.unique(np.concatenate([ia, ib]), return_inverse=True)
    ca = np.bincount(inv[: len(ia)], minlength=len(keys)).astype(np.float64)
    cb = np.bincount(inv[len(ia):], minlength=len(keys)).astype(np.float64)
    n_cells = float(n_bins) ** n_dim + 1.0
    za, zb = len(a) + smoothing * n_cells, len(b) + smoothing * n_cells
    p, q = (ca + smoothing) / za, (cb + smoothing) / zb
    pos = p > 0
    with np.errstate(divide="ignore"):
        kl = float(np.sum(p[pos] * np.log(p[pos] / q[pos])))  # 0 log 0 = 0; inf where q = 0 < p
    n_empty = n_cells - len(keys)  # cells visited by neither: p = s/za, q = s/zb
    if smoothing > 0 and n_empty > 0:
        kl += n_empty * (smoothing / za) * np.log(zb / za)
    return kl


def _log_mixture(points: np.ndarray, centres: np.ndarray, var: float, chunk: int = 2048) -> np.ndarray:
    """log of the equal-weight isotropic Gaussian mixture density at ``points`` (sample, dim)."""
    from scipy.special import logsumexp

    d = points.shape[1]
    out = np.empty(len(points))
    c2 = (centres ** 2).sum(axis=1)
    for s in range(0, len(points), chunk):
        p = points[s:s + chunk]
        sq = (p ** 2).sum(axis=1)[:, None] - 2 * p @ centres.T + c2[None]
        out[s:s + chunk] = logsumexp(-0.5 * np.maximum(sq, 0) / var, axis=1)
    return out - np.log(len(centres)) - 0.5 * d * np.log(2 * np.pi * var)


def _gmm_kl(a: np.ndarray, b: np.ndarray, var: float, n_samples: int, max_points: int,
            seed: SeedLike) -> float:
    a, b = a[:max_points], b[:max_points]
    # the samples with their indices and densities, and one chunk of distances to the larger mixture
    n_bytes = 8.0 * n_samples * (a.shape[1] + 4) + 8.0 * 2048 * 3 * max(len(a), len(b))
    check_memory("state_space_divergence", n_bytes,
                 f"{n_samples} Monte-Carlo samples of {a.shape[1]} channels", "lower n_samples")
    rng = numpy_rng(seed)
    idx = rng.integers(0, len(a), n_samples)
    samples = a[idx] + np.sqrt(var) * rng.standard_normal((n_samples, a.shape[1]))
    return float(np.mean(_log_mixture(samples, a, var) - _log_mixture(samples, b, var)))


def state_space_divergence(
    x_true: Any,
    x_gen: Any,
    *,
    n_bins: int = 30,
    bin_range: Any = None,
    method: str = "binned",
    smoothing: float = 1e-5,
    gmm_variance: float = 1.0,
    n_samples: int = 1000,
    max_points: int = 10_000,
    seed: SeedLike = 0,
) -> float:
    """State-space divergence ``D_stsp = KL(p_true || p_gen)`` of two trajectories.

    Parameters
    ----------
    x_true, x_gen : array, shape (time, channel)
        Held-out data and a freely generated trajectory (transient removed); lengths may differ.
        A constant channel of ``x_true`` (value ``c``) has no spread to size the box by: its
        default box is ``c ± 0.5 max(|c|, 1)``, so a generated series near ``c`` scores near 0.
    n_bins : int
        ``method="binned"``: bins per dimension (``n_bins ** channel`` cells, stored sparsely).
    bin_range : (lo, hi) or array (2, channel), optional
        Binned: the histogram box. Default: the range of ``x_true`` widened by 0.1 std per side
        (the GTF reference's default). Points outside the box of either series fall into one
        overflow cell, so mass a generated trajectory puts outside is counted, not dropped.
    method : {"binned", "gmm"}
        Binned KL with Laplace smoothing (low dimensions, Koppe et al. 2019), or a Monte-Carlo
        KL between Gaussian mixtures with one component of variance ``gmm_variance`` per point
        (high dimensions; Hershey & Olsen 2007; Hess et al. 2023 use it for more than 5 channels).
    smoothing : float
        Laplace pseudo-count added to every cell (binned).
    gmm_variance : float
        Component variance (in the data's units squared; data are usually standardised).
    n_samples, max_points : int
        GMM: Monte-Carlo samples, and points of each series used as mixture centres.
    seed : int, Generator or None
        GMM: seed of the Monte-Carlo samples.

    Returns
    -------
    float
        Divergence in nats; 0 for identical series; ``inf`` when ``x_gen`` holds NaN/Inf (a
        diverged model).

    Raises
    ------
    ValueError
        On shape mismatches, NaN/Inf in ``x_true``, an unknown ``method``; (``method="binned"``)
        ``n_bins`` not an integer >= 1 or too many cells (``n_bins ** channel`` above ``2**62``),
        ``bin_range`` not finite with ``hi > lo``, ``smoothing`` not a finite number >= 0; or
        (``method="gmm"``) ``gmm_variance`` not a finite number > 0, ``n_samples`` or ``max_points``
        not an integer >= 1, or more samples than the memory available can hold (estimated before
        drawing them).

    Warns
    -----
    UserWarning
        (``method="binned"``) When the pseudo-counts of the ``n_bins ** channel`` cells outweigh the
        points of ``x_true`` (``smoothing * n_bins ** channel >= time``, e.g. 20 bins and 8 channels for
        a few thousand points): every series then scores near 0; use ``method="gmm"``.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import state_space_divergence
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(2000, 2))
    >>> round(float(state_space_divergence(x, x, n_bins=10)), 6)  # identical occupation: 0 nats
    0.0
    >>> bool(state_space_divergence(x, x + 3.0, n_bins=10) > 1.0)  # shifted far away
    True
    """
    if method not in ("binned", "gmm"):
        raise ValueError(f"unknown method {method!r}; choose 'binned' or 'gmm'")
    a, b = _pair(x_true, x_gen)
    if method == "binned":
        check_setting("smoothing", smoothing, 0.0, hint=" (Laplace pseudo-count per cell)")
        n_bins = _check_bins(n_bins, a.shape[1], len(a), smoothing)
        lo, hi = _box(a, bin_range)
        if not np.all(np.isfinite(b)):
            return float("inf")
        return float(_binned_kl(a, b, n_bins, lo, hi, smoothing))
    check_setting("gmm_variance", gmm_variance, 0.0, strict=True, hint=" (mixture component variance)")
    check_setting("n_samples", n_samples, 1, integer=True, hint=" (Monte-Carlo samples)")
    check_setting("max_points", max_points, 1, integer=True, hint=" (mixture centres per series)")
    if not np.all(np.isfinite(b)):
        return float("inf")
    return _gmm_kl(a, b, gmm_variance, int(n_samples), int(max_points), seed)


def state_space_divergence_max(
    x_true: Any,
    n_gen: int,
    *,
    n_bins: int = 30,
    bin_range: Any = None,
    smoothing: float = 1e-5,
) -> float:
    """The saturation value of the binned ``D_stsp``: its value for a series that misses the data's cells.

    With Laplace smoothing ``s`` per cell, a generated series of ``n_gen`` points that visits none of
    the cells the data visit (a collapse to a fixed point between the data's orbits, an escape out of
    the box) scores, whatever it does elsewhere,

    ``D_max = sum_i p_i log(p_i z_g / s) + O(s)``,  ``p_i = (c_i + s) / z_d``,

    over the data's occupied cells ``i`` (counts ``c_i``), with ``z_d = n_data + s K`` and
    ``z_g = n_gen + s K`` for ``K = n_bins ** channel + 1`` cells (the box and one overflow cell);
    to leading order ``log(n_gen / s) - H``, with ``H`` the entropy of the data's cell occupation.
    Every run that misses the data scores this same number (the ECG linear and mean baselines both
    scored 14.805), so ``D_stsp`` near ``D_max`` says only that the run left the data's cells, not how
    far. The value returned is exact for a series concentrated in one cell the data never visit; it
    is the largest value over series of length ``n_gen`` to within ``s / z_d`` per cell of the series.

    Parameters
    ----------
    x_true : array, shape (time, channel)
        The data (as given to :func:`state_space_divergence`).
    n_gen : int
        Time points of the generated series.
    n_bins, bin_range, smoothing
        As in :func:`state_space_divergence` (``method="binned"``).

    Returns
    -------
    float
        ``D_max`` in nats.

    Raises
    ------
    ValueError
        If ``n_gen`` is not an integer >= 2, ``smoothing`` not a finite number > 0 (without smoothing
        the divergence is unbounded: ``inf``), ``n_bins`` not an integer >= 1 or too many cells
        (``n_bins ** channel`` above ``2**62``), on NaN/Inf in ``x_true`` or a bad ``bin_range``.

    Warns
    -----
    UserWarning
        When the cells' pseudo-counts outweigh the data's points, as in :func:`state_space_divergence`
        (``D_max`` is then tiny and no fit can be ranked).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import state_space_divergence, state_space_divergence_max
    >>> x = np.random.default_rng(0).normal(size=(2000, 2))
    >>> d_max = state_space_divergence_max(x, 2000, n_bins=10)
    >>> round(d_max, 3)
    15.556
    >>> far, other = np.full((2000, 2), 50.0), np.full((2000, 2), -50.0)  # two collapsed runs
    >>> [round(state_space_divergence(x, y, n_bins=10), 3) for y in (far, other)]  # the same score
    [15.556, 15.556]
    """
    a, _ = _pair(x_true, x_true)
    check_setting("n_gen", n_gen, 2, integer=True, hint=" (time points)")
    check_setting("smoothing", smoothing, 0.0, strict=True, hint=" (positive for a finite maximum)")
    n_bins = _check_bins(n_bins, a.shape[1], len(a), smoothing)
    lo, hi = _box(a, bin_range)
    _, counts = np.unique(_bin_index(a, lo, hi, n_bins), return_counts=True)
    n_cells = float(n_bins) ** a.shape[1] + 1.0
    za, zb = len(a) + smoothing * n_cells, n_gen + smoothing * n_cells
    p = (counts + smoothing) / za
    kl = float(np.sum(p * np.log(p * zb / smoothing)))
    kl += (smoothing / za) * np.log((smoothing / za) * zb / (n_gen + smoothing))  # the series' own cell
    n_empty = n_cells - len(counts) - 1
    return float(kl + max(n_empty, 0.0) * (smoothing / za) * np.log(zb / za))


def normalized_power_spectrum(x: Any, smoothing: float) -> np.ndarray:
    """Per-channel power spectrum (freq, channel) of the z-scored series, smoothed and summing to 1.

    Parameters
    ----------
    x : array, shape (time, channel) or (time,)
        The series (a 1-D series is one channel); ``freq = time // 2 + 1``.
    smoothing : float
        Standard deviation of the Gaussian kernel over frequency bins (0: none).

    Raises
    ------
    ValueError
        If ``x`` is not (time, channel) with at least one channel and one time point or holds NaN/Inf,
        or ``smoothing`` is negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import normalized_power_spectrum
    >>> t = np.arange(100)
    >>> p = normalized_power_spectrum(np.sin(2 * np.pi * 10 * t / 100)[:, None], smoothing=0.0)
    >>> p.shape, round(float(p.sum()), 6), int(p[:, 0].argmax())  # (freq, channel); peak at bin 10
    ((51, 1), 1.0, 10)
    """
    from scipy.ndimage import gaussian_filter1d

    check_setting("smoothing", smoothing, 0.0, hint=" (Gaussian kernel width in frequency bins; 0: none)")
    x = _series(x, "x")
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError(f"x must be (time, channel) with at least one of each, got shape {x.shape}")
    check_finite(x, "x", "clean the data first")
    sd = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    ps = np.abs(np.fft.rfft(z, axis=0)) ** 2
    if smoothing > 0:
        _check_kernel(smoothing, ps.shape)
        ps = np.maximum(gaussian_filter1d(ps, smoothing, axis=0, mode="reflect"), 0.0)
    total = ps.sum(axis=0)
    return ps / np.where(total > 0, total, 1.0)


def _check_kernel(smoothing: float, shape: tuple[int, int]) -> None:
    """Refuse (memory) or warn about (work) a Gaussian kernel of ``smoothing`` bins before SciPy builds it."""
    length = 2.0 * int(4.0 * smoothing + 0.5) + 1.0  # scipy.ndimage's kernel, truncated at 4 sd
    n_freq, n_ch = shape
    fix = (f"lower smoothing (the spectrum has {n_freq} frequency bins; a kernel far wider than that only "
           "flattens it)")
    # the kernel and its temporaries, and the padded line buffer, in float64
    check_memory("power_spectrum_distance", 8.0 * (4.0 * length + n_freq + length),
                 f"a Gaussian kernel of {length:.3g} taps for smoothing={smoothing:g}", fix)
    warn_flops("power_spectrum_distance", 2.0 * length * n_freq * n_ch,
               f"{n_ch} channels of {n_freq} bins smoothed by {length:.3g} taps", fix, stacklevel=4)


#: a generated channel whose std is at most this fraction of the data's scale is constant up to rounding
#: (float32 models round at about 1e-7 of a value)
COLLAPSE_RTOL = 1e-6


def collapsed_channels(x_true: np.ndarray, x_gen: np.ndarray) -> np.ndarray:
    """(channel,) bool: channels of ``x_gen`` constant up to rounding relative to the scale of the data.

    A channel is collapsed when its std is at most ``COLLAPSE_RTOL`` times the larger of the data
    channel's std and the generated channel's magnitude (rounding noise of a fixed point); z-scoring it
    would give the spectrum of the rounding noise.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.maximum(x_true.std(axis=0), np.abs(x_gen).max(axis=0))
        return np.isfinite(scale) & (x_gen.std(axis=0) <= COLLAPSE_RTOL * scale)


def power_spectrum_distance(x_true: Any, x_gen: Any, *, smoothing: float = 20.0,
                            per_channel: bool = False) -> float | np.ndarray:
    """Hellinger distance ``D_H`` between power spectra, averaged over channels.

    ``D_H = sqrt(1 - sum_f sqrt(p(f) q(f)))`` for the normalised spectra ``p``, ``q`` of each
    z-scored channel after Gaussian smoothing over frequency bins (Mikhaeil et al. 2022; Hess et
    al. 2023, whose default smoothing is 20 bins for series of 10⁵ points). Insensitive to phase,
    amplitude and offset.

    Parameters
    ----------
    x_true, x_gen : array, shape (time, channel)
        Both are cut to the shorter length so the frequency grids match; at least 4 time points each.
    smoothing : float
        Standard deviation of the Gaussian kernel, in frequency bins (0: none).
    per_channel : bool
        Return the (channel,) distances instead of their mean.

    Returns
    -------
    float or ndarray
        In [0, 1]; 0 for identical spectra, 1 for spectra with disjoint support (and for an
        ``x_gen`` holding NaN/Inf, a diverged model). A generated channel that is constant up to
        rounding (std at most ``1e-6`` of the data channel's std or of its own magnitude: a run
        collapsed to a fixed point) has no spectrum and scores the fixed value 1.

    Warns
    -----
    UserWarning
        When some generated channel is constant up to rounding (scored 1, see Returns).

    Raises
    ------
    ValueError
        On shape mismatches, NaN/Inf in ``x_true``, fewer than 4 time points in either series, a
        negative or non-finite ``smoothing``, or one so large that its Gaussian kernel needs more
        memory than is available (estimated before allocating).

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import power_spectrum_distance
    >>> t = np.arange(1000)
    >>> x = np.sin(0.3 * t)[:, None]
    >>> y = 5.0 * np.sin(0.3 * t + 1.0)[:, None] + 2.0  # another phase, amplitude and offset
    >>> bool(power_spectrum_distance(x, y) < 0.02)
    True
    >>> bool(power_spectrum_distance(x, np.sin(1.2 * t)[:, None]) > 0.9)  # another frequency
    True
    """
    check_setting("smoothing", smoothing, 0.0, hint=" (Gaussian kernel width in frequency bins; 0: none)")
    a, b = _pair(x_true, x_gen)
    n = min(len(a), len(b))
    if n < 4:
        raise ValueError(f"power_spectrum_distance needs at least 4 time points in each series (below that "
                         f"every z-scored spectrum is the same); got {len(a)} and {len(b)}")
    if not np.all(np.isfinite(b)):
        return np.ones(a.shape[1]) if per_channel else 1.0
    flat = collapsed_channels(a, b[:n])
    if flat.any():
        warnings.warn(f"power_spectrum_distance: {int(flat.sum())} of {len(flat)} generated channel(s) are "
                      f"constant up to rounding (a collapsed run); they score the fixed D_H = 1", UserWarning,
                      stacklevel=2)
    pa, pb = normalized_power_spectrum(a[:n], smoothing), normalized_power_spectrum(b[:n], smoothing)
    # 1 - sum sqrt(p q) = sum (sqrt p - sqrt q)^2 / 2 for normalised spectra; the right side is exactly 0
    # for equal spectra, the left loses ~1e-16 to cancellation (a distance of ~1e-8)
    d = np.sqrt(np.clip(0.5 * ((np.sqrt(pa) - np.sqrt(pb)) ** 2).sum(axis=0), 0.0, 1.0))
    d[(pa.sum(axis=0) == 0) | (pb.sum(axis=0) == 0) | flat] = 1.0  # a constant channel has no spectrum
    return d if per_channel else float(d.mean())


def prediction_error(model, x: Any, n_steps: int, *, observation: str = "affine",
                     inputs: Any = None) -> float:
    """``PE(n)``: mean squared error of ``n``-step-ahead predictions (Koppe et al. 2019).

    From every time point ``t`` the latent state is inferred by inverting the affine observation
    model, ``z_t = B⁺ (x_t - b)``, iterated ``n_steps`` times and read out; the mean over ``t``
    and channels of ``(ŷ_{t+n} - x_{t+n})²`` is returned (for the Poisson model ``ŷ`` are rates).

    Parameters
    ----------
    model : RecurrentModel
    x : array, shape (time, channel)
        Held-out observations, preprocessed like the training data.
    n_steps : int
        Prediction horizon in time steps (>= 1, < time).
    observation : {"identity", "affine", "poisson"}
    inputs : array, shape (time, input), optional
        External inputs aligned with ``x`` (``u[t+1]`` drives the step to ``x[t+1]``); required for
        a model with inputs, refused for one without.

    Raises
    ------
    TypeError
        If ``model`` is not a ``RecurrentModel``.
    ValueError
        If ``n_steps`` is not an integer in ``[1, time - 1]``, ``observation`` is unknown, ``x`` is not
        (time, channel) with the model's outputs or holds NaN/Inf, or ``inputs`` are missing for a model
        with inputs, given to one without, not (time, input) or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.analysis.reconstruction import prediction_error
    >>> from neurodyn.models import PLRNN
    >>> model = PLRNN.from_arrays(A=[0.5], W=[[0.0]], h=[1.0])  # x' = 0.5 x + 1
    >>> x = np.array([[0.0], [1.0], [1.5], [1.75]])
    >>> prediction_error(model, x, 1, observation="identity")  # the exact model
    0.0
    >>> prediction_error(model, x[::-1], 1, observation="identity")  # reversed: errors 0.375, 0.75, 1.5
    0.984375
    """
    import torch

    from neurodyn.models._base import check_model
    from neurodyn.training import observation as obs

    check_model(model, example="PLRNN(...) or a fitted result's .model")
    obs.check_observation(observation)
    xa = _series(x, "x")  # a fresh contiguous copy: torch takes no negative strides (x[::-1])
    if xa.ndim != 2 or len(xa) < 2:
        raise ValueError(f"x must be (time, channel) with at least 2 time points, got shape {xa.shape}")
    check_finite(xa, "x", "clean the data first")
    n_steps = check_count("n_steps", n_steps, 1, len(xa) - 1,
                          f" (prediction horizon for {len(xa)} time points)")
    if xa.shape[1] != model.n_outputs:
        raise ValueError(f"x has {xa.shape[1]} channels but the model has {model.n_outputs} outputs")
    (inputs,) = check_inputs(model, (("inputs", inputs, xa, "x"),), required=("inputs",))
    ref = next(model.parameters())
    start = obs.forcing_targets(xa[None], observation, smoothing=0.0)[0] if observation == "poisson" else xa
    with torch.no_grad():
        B, b = obs.affine_readout(model)
        z = obs.invert(B, b, torch.as_tensor(start[:-n_steps], dtype=ref.dtype, device=ref.device))
        u = None if inputs is None else torch.as_tensor(
            np.ascontiguousarray(inputs), dtype=ref.dtype, device=ref.device)
        m = len(xa) - n_steps
        for i in range(n_steps):
            z = model.step(z, None if u is None else u[i + 1:i + 1 + m])
        pred = obs.observe(model, z, observation).cpu().double().numpy()
    return float(np.mean((pred - xa[n_steps:]) ** 2))
