"""Recorded time series for dynamical systems reconstruction: a validated container.

A :class:`TimeSeries` holds observations ``(trial, time, channel)`` (a continuous recording is one
trial), optional external inputs ``(trial, time, input)``, the sampling interval ``dt`` in seconds
and channel names. Preprocessing (standardisation, delay embedding, channel selection) returns a
new series and appends a plain-dict record to :attr:`TimeSeries.preprocessing`, so a fitted model
can store exactly what was done to its data (``neurodyn fit`` saves it in the checkpoint).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from neurodyn._checks import check_setting

__all__ = ["TimeSeries", "apply_preprocessing", "content_hashes"]


def _as_3d(name: str, arr: Any) -> tuple[np.ndarray, bool]:
    """``arr`` as (trial, time, channel) float64 and whether it was one continuous (time, channel)
    series; one-line errors for non-numeric, complex, ragged or wrongly shaped input."""
    try:
        a = np.asarray(arr)
    except ValueError:  # a list of trials of different shapes (NumPy: "inhomogeneous shape")
        shapes = sorted({np.shape(t) for t in arr}) if isinstance(arr, (list, tuple)) else []
        shown = ", ".join(map(str, shapes[:4])) + (", ..." if len(shapes) > 4 else "")
        raise ValueError(f"{name} is a list of trials of different shapes ({shown}); cut them to a common "
                         "(time, channel) shape, or fit each trial on its own") from None
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise TypeError(f"{name} must be a numeric array, got dtype {a.dtype}")
    if np.iscomplexobj(a):
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}; pass the real part, "
                        "magnitude or phase explicitly")
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim == 2:
        return a[None].astype(np.float64), True
    if a.ndim == 3:
        return a.astype(np.float64), False
    raise ValueError(f"{name} must have shape (time, channel) or (trial, time, channel), got {a.shape}")


def check_orientation(shape: tuple[int, ...], source: str, fix: str) -> None:
    """Refuse data ``(trial, time, channel)`` with more channels than time points (all trials together):
    almost surely an array stored ``(channel, time)``, too short to fit dynamics. ``fix`` ends the
    message (how the caller's user transposes it: ``data.T``, ``transpose=True``, ``--transpose``)."""
    if len(shape) != 3:
        return
    n_trials, n_steps, n_channels = shape
    if n_steps >= 2 and n_channels > n_trials * n_steps:  # fewer steps: "need at least 2 time points"
        per = " per trial" if n_trials > 1 else ""
        raise ValueError(f"{source or 'data'} has {n_channels} channels but only {n_steps} time points{per}, "
                         f"too few to fit dynamics; {fix}")


def _check_finite(name: str, a: np.ndarray) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        trial, t, ch = np.argwhere(bad)[0]
        kind = "NaN" if np.isnan(a[trial, t, ch]) else "Inf"
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN/Inf values (first: {kind} at trial {trial}, "
            f"time {t}, channel {ch}); interpolate or drop them before fitting"
        )


@dataclass(frozen=True)
class TimeSeries:
    """Observations ``(trial, time, channel)`` with optional external inputs.

    Build it with :meth:`from_arrays` (or a loader in :mod:`neurodyn.io.loaders`), which validates.

    Attributes
    ----------
    data : ndarray, float64, shape (trial, time, channel)
    dt : float
        Sampling interval in seconds.
    channel_names : tuple of str
    inputs : ndarray, float64, shape (trial, time, input), or None
        External inputs aligned with ``data`` (``inputs[:, t]`` acts at time step ``t``).
    input_names : tuple of str
    continuous : bool
        True for one continuous recording given as ``(time, channel)``.
    preprocessing : tuple of dict
        The steps applied so far, oldest first (plain values, storable in checkpoints).
    source : str
        Where the data came from (file path and key), for the record.

    Examples
    --------
    >>> import numpy as np
    >>> from neurodyn.io import TimeSeries
    >>> t = np.arange(100) * 0.1
    >>> ts = TimeSeries.from_arrays(np.c_[np.sin(t), 2 + 3 * np.cos(t)], dt=0.1, channel_names=["x", "y"])
    >>> ts.n_trials, ts.n_steps, ts.n_channels, ts.channel_names
    (1, 100, 2, ('x', 'y'))
    >>> z = ts.standardize()
    >>> bool(np.allclose(z.values.mean(axis=0), 0.0)), bool(np.allclose(z.values.std(axis=0), 1.0))
    (True, True)
    >>> train, test = z.split(0.8)
    >>> train.n_steps, test.n_steps, [s["step"] for s in z.preprocessing]
    (80, 20, ['standardize'])
    """

    data: np.ndarray
    dt: float = 1.0
    channel_names: tuple[str, ...] = ()
    inputs: np.ndarray | None = None
    input_names: tuple[str, ...] = ()
    continuous: bool = True
    preprocessing: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    source: str = ""

    @classmethod
    def from_arrays(
        cls, data: Any, *, dt: float = 1.0, channel_names: Any = None, inputs: Any = None,
        input_names: Any = None, source: str = "",
    ) -> TimeSeries:
        """Validate arrays and build a series.

        Parameters
        ----------
        data : array, shape (time,), (time, channel) or (trial, time, channel)
        dt : float
            Sampling interval in seconds (> 0).
        channel_names, input_names : sequence of str, optional
            Default ``ch0, ch1, …`` / ``in0, …``.
        inputs : array, shape (time, input) or (trial, time, input), optional

        Raises
        ------
        ValueError
            On more channels than time points (an array stored ``(channel, time)``: the message
            names ``data.T``), NaN/Inf, constant channels, a non-positive ``dt``, fewer than 2 time
            points, wrong numbers of names, inputs whose trial/time lengths differ from the data's, or
            a list of trials of different shapes.
        TypeError
            For non-numeric arrays.
        """
        x, continuous = _as_3d("data", data)
        check_orientation(x.shape, source, "if the array is stored (channel, time), pass its transpose "
                          "(data.T; load_timeseries: transpose=True)")
        u = None
        if inputs is not None:
            u, _ = _as_3d("inputs", inputs)
            if u.shape[:2] != x.shape[:2]:
                raise ValueError(
                    f"inputs cover (trial, time) = {u.shape[:2]} but data cover {x.shape[:2]}; "
                    "give one input row per data time point"
                )
            _check_finite("inputs", u)
        names = tuple(str(n) for n in channel_names) if channel_names is not None else tuple(
            f"ch{i}" for i in range(x.shape[2]))
        n_in = 0 if u is None else u.shape[2]
        in_names = tuple(str(n) for n in input_names) if input_names is not None else tuple(
            f"in{i}" for i in range(n_in))
        ts = cls(x, float(dt), names, u, in_names, continuous, (), str(source))
        ts.validate()
        return ts

    def validate(self) -> None:
        """Check finiteness, non-constant channels and consistent sizes (see :meth:`from_arrays`)."""
        x = self.data
        if not np.isfinite(self.dt) or self.dt <= 0:
            raise ValueError(f"dt must be a positive number of seconds, got {self.dt}")
        if x.shape[0] < 1 or x.shape[1] < 2 or x.shape[2] < 1:
            raise ValueError(f"need at least 2 time points, 1 channel and 1 trial, got shape {x.shape} "
                             "(trial, time, channel)")
        if len(self.channel_names) != x.shape[2]:
            raise ValueError(f"{len(self.channel_names)} channel names for {x.shape[2]} channels")
        if self.inputs is not None and len(self.input_names) != self.inputs.shape[2]:
            raise ValueError(f"{len(self.input_names)} input names for {self.inputs.shape[2]} inputs")
        _check_finite("data", x)
        flat = x.reshape(-1, x.shape[2])
        const = np.flatnonzero(flat.max(axis=0) == flat.min(axis=0))
        if const.size:
            shown = ", ".join(self.channel_names[i] for i in const[:5])
            raise ValueError(
                f"{const.size} constant channel(s) ({shown}{' …' if const.size > 5 else ''}) carry no "
                "dynamics and break standardisation; drop them with .select_channels(...) or the "
                "loader's drop_constant=True"
            )

    # -- sizes --------------------------------------------------------------------------------
    @property
    def n_trials(self) -> int:
        return self.data.shape[0]

    @property
    def n_steps(self) -> int:
        """Time points per trial."""
        return self.data.shape[1]

    @property
    def n_channels(self) -> int:
        return self.data.shape[2]

    @property
    def n_inputs(self) -> int:
        return 0 if self.inputs is None else self.inputs.shape[2]

    @property
    def values(self) -> np.ndarray:
        """The data in the shape given: (time, channel) when continuous, else (trial, time, channel)."""
        return self.data[0] if self.continuous and self.n_trials == 1 else self.data

    def check_length(self, seq_len: int) -> None:
        """Raise ``ValueError`` if trials are shorter than ``seq_len + 1`` time points (one window)."""
        if self.n_steps < seq_len + 1:
            raise ValueError(
                f"trials have {self.n_steps} time points but a training window needs seq_len + 1 = "
                f"{seq_len + 1}; lower --seq-len or use longer recordings"
            )

    # -- preprocessing (each returns a new series and records itself) ---------------------------
    def _with(self, record: dict[str, Any], **changes: Any) -> TimeSeries:
        ts = replace(self, preprocessing=self.preprocessing + (record,), **changes)
        ts.validate()
        return ts

    def standardize(self, mean: Any = None, std: Any = None) -> TimeSeries:
        """Z-score each channel: ``(x - mean) / std`` over all trials and time points.

        Give ``mean``/``std`` (shape (channel,)) to apply the statistics of another series, e.g.
        the training part to the held-out part. Recorded as ``{"step": "standardize", ...}``.
        """
        flat = self.data.reshape(-1, self.n_channels)
        mu = flat.mean(axis=0) if mean is None else np.asarray(mean, dtype=np.float64)
        sd = flat.std(axis=0) if std is None else np.asarray(std, dtype=np.float64)
        if mu.shape != (self.n_channels,) or sd.shape != (self.n_channels,):
            raise ValueError(f"the statistics cover {mu.size} channels but the data have {self.n_channels}; "
                             f"give data with the channels the statistics came from")
        if np.any(sd <= 0):
            raise ValueError("std must be > 0 for every channel; drop constant channels first")
        record = {"step": "standardize", "mean": mu.tolist(), "std": sd.tolist()}
        return self._with(record, data=(self.data - mu) / sd)

    def delay_embed(self, lags: Any, *, channels: Any = None) -> TimeSeries:
        """Delay (Takens) embedding: new channels ``x_c(t - lag)`` for each lag and channel.

        Parameters
        ----------
        lags : sequence of int
            Non-negative lags in time steps (e.g. ``(0, 20, 68, 55, 10)``; include 0 to keep the
            present). The first ``max(lags)`` time points are dropped from data and inputs.
        channels : sequence of int, optional
            Channels to embed (default all).

        Raises
        ------
        ValueError
            For negative or duplicate lags, or a largest lag leaving fewer than 2 time points.
        """
        lags = [int(v) for v in np.atleast_1d(lags)]
        chans = list(range(self.n_channels)) if channels is None else [int(c) for c in channels]
        if not lags or min(lags) < 0 or len(set(lags)) != len(lags):
            raise ValueError(f"lags must be distinct non-negative integers, got {lags}")
        m = max(lags)
        if self.n_steps - m < 2:
            raise ValueError(f"largest lag {m} leaves {self.n_steps - m} time points; use smaller lags")
        t_end = self.n_steps
        cols, names = [], []
        for lag in lags:
            for c in chans:
                cols.append(self.data[:, m - lag:t_end - lag, c])
                names.append(f"{self.channel_names[c]}(t-{lag})" if lag else self.channel_names[c])
        u = None if self.inputs is None else self.inputs[:, m:]
        record = {"step": "delay_embed", "lags": lags, "channels": chans}
        return self._with(record, data=np.stack(cols, axis=-1), channel_names=tuple(names), inputs=u)

    def select_channels(self, channels: Any) -> TimeSeries:
        """Keep the given channels (indices or names), in that order."""
        idx = []
        for c in channels:
            if isinstance(c, str) and c not in self.channel_names:
                raise ValueError(f"no channel named {c!r}; the channels are {', '.join(self.channel_names)}")
            i = self.channel_names.index(c) if isinstance(c, str) else int(c)
            if not 0 <= i < self.n_channels:
                raise ValueError(f"channel index {i} does not exist: the data have {self.n_channels} "
                                 f"channels (indices 0 to {self.n_channels - 1})")
            idx.append(i)
        record = {"step": "select_channels", "channels": idx}
        return self._with(record, data=self.data[:, :, idx],
                          channel_names=tuple(self.channel_names[i] for i in idx))

    def lowpass(self, cutoff: float, *, order: int = 4) -> TimeSeries:
        """Zero-phase Butterworth low-pass filter along time, per trial and channel (inputs untouched).

        A forward-backward second-order-sections filter (``scipy.signal.sosfiltfilt``): no phase
        shift, magnitude response squared. Use it before :meth:`downsample` so that power above the
        new Nyquist frequency ``0.5 / (factor dt)`` does not alias (e.g. the sharp QRS complex of an
        ECG). Recorded as ``{"step": "lowpass", "cutoff": ..., "order": ...}``.

        Parameters
        ----------
        cutoff : float
            Cutoff frequency in Hz (1/s, with ``dt`` in seconds); ``0 < cutoff < 0.5 / dt``.
        order : int
            Butterworth order (>= 1) of each pass.

        Raises
        ------
        ValueError
            For a cutoff outside (0, Nyquist), ``order < 1``, or trials too short for the filter's
            edge padding.
        """
        from scipy import signal

        nyquist = 0.5 / self.dt
        if isinstance(order, bool) or int(order) != order:
            raise ValueError(f"order must be a positive integer, got {order!r}")
        if not 0.0 < float(cutoff) < nyquist:
            raise ValueError(f"cutoff must be in (0, {nyquist:g}) Hz (the Nyquist frequency of dt = "
                             f"{self.dt:g} s), got {cutoff}; set dt in seconds when loading (--dt)")
        if int(order) < 1:
            raise ValueError(f"order must be >= 1, got {order}")
        if float(cutoff) < 1e-6 * nyquist:
            raise ValueError(f"cutoff {cutoff} Hz is below 1e-6 of the Nyquist frequency ({nyquist:g} Hz): "
                             f"the filter is numerically singular; downsample first or raise the cutoff")
        sos = signal.butter(int(order), float(cutoff), fs=1.0 / self.dt, output="sos")
        pad = 3 * (2 * len(sos) + 1)
        if self.n_steps <= pad:
            raise ValueError(f"trials have {self.n_steps} time points but the order-{order} filter needs "
                             f"more than {pad}; lower the order or use longer trials")
        record = {"step": "lowpass", "cutoff": float(cutoff), "order": int(order)}
        filtered = np.ascontiguousarray(signal.sosfiltfilt(sos, self.data, axis=1))  # sosfiltfilt may return
        return self._with(record, data=filtered)  # negative strides, which torch refuses

    def downsample(self, factor: int) -> TimeSeries:
        """Keep every ``factor``-th time point (no filtering); ``dt`` is multiplied by ``factor``.

        Low-pass the data first (:meth:`lowpass`) if they hold power above the new Nyquist
        frequency ``0.5 / (factor dt)``.
        """
        if isinstance(factor, bool) or int(factor) != factor or int(factor) < 1:
            raise ValueError(f"factor must be a positive integer, got {factor!r}")
        factor = int(factor)
        u = None if self.inputs is None else self.inputs[:, ::factor]
        return self._with({"step": "downsample", "factor": factor}, data=self.data[:, ::factor],
                          inputs=u, dt=self.dt * factor)

    def split(self, fraction: float = 0.8) -> tuple[TimeSeries, TimeSeries]:
        """Split along time into a training head and a held-out tail (``fraction`` in (0, 1)).

        Raises
        ------
        ValueError
            If ``fraction`` is not in (0, 1), or leaves either part fewer than 2 time points (the
            message gives the valid range of ``fraction`` for this series).
        """
        real = isinstance(fraction, numbers.Real) and not isinstance(fraction, bool)
        if not (real and 0.0 < fraction < 1.0):
            raise ValueError(f"fraction must be a number in (0, 1) (the training share), got {fraction!r}")
        n = self.n_steps
        cut = int(round(n * fraction))
        if not 2 <= cut <= n - 2:
            raise ValueError(f"fraction={fraction!r} splits the {n} time points into {cut} and {n - cut}; "
                             f"each part needs at least 2: use a fraction in [{2 / n:.4g}, {1 - 2 / n:.4g}]"
                             if n >= 4 else f"{n} time points cannot be split into two parts of 2 or more")
        return self.time_slice(0, cut), self.time_slice(cut, n)

    def time_slice(self, start: int, stop: int) -> TimeSeries:
        """Time points ``start .. stop - 1`` of every trial (recorded).

        Raises
        ------
        ValueError
            Unless ``start`` and ``stop`` are integers with ``0 <= start``, ``start + 2 <= stop <=
            n_steps`` (no negative indexing, no clipping; the message names the valid range).
        """
        n = self.n_steps
        for name, v in (("start", start), ("stop", stop)):
            check_setting(name, v, 0, high=n, integer=True,
                          hint=f" (a time index of the {n} time points; negative indices are not taken)")
        if int(stop) - int(start) < 2:
            raise ValueError(f"time_slice(start={start}, stop={stop}) keeps {max(int(stop) - int(start), 0)} "
                             f"time points; need start + 2 <= stop <= {n}")
        start, stop = int(start), int(stop)
        u = None if self.inputs is None else self.inputs[:, start:stop]
        return self._with({"step": "time_slice", "start": int(start), "stop": int(stop)},
                          data=self.data[:, start:stop], inputs=u)

    def to_xarray(self):
        """An ``xarray.Dataset`` with ``data`` (trial, time, channel) and optional ``inputs``.

        The time coordinate is in seconds; the preprocessing record is stored as a JSON attribute.
        """
        import json

        import xarray as xr

        coords = {"trial": np.arange(self.n_trials), "time": np.arange(self.n_steps) * self.dt,
                  "channel": list(self.channel_names)}
        ds = xr.Dataset({"data": (("trial", "time", "channel"), self.data)}, coords=coords)
        if self.inputs is not None:
            ds["inputs"] = (("trial", "time", "input"), self.inputs)
            ds = ds.assign_coords(input=list(self.input_names))
        ds.attrs.update(dt=self.dt, continuous=int(self.continuous), source=self.source,
                        preprocessing=json.dumps(list(self.preprocessing)))
        return ds


def content_hashes(ts: TimeSeries) -> dict[str, Any]:
    """SHA-256 fingerprints of a series' values, to recognise the same data under another file name.

    Returns ``{"sha256": <hex of all data and inputs>, "trial_sha256": [<hex per trial>, ...]}``.
    The hashes cover the values as float64 with their shape, not the file's bytes, so a copy saved
    in another format hashes alike; ``neurodyn fit`` stores them in its checkpoint and ``neurodyn
    evaluate`` warns when held-out data match the training data (all of it or some trials).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(12.0).reshape(2, 3, 2)
    >>> a = content_hashes(TimeSeries.from_arrays(x))
    >>> b = content_hashes(TimeSeries.from_arrays(x[::-1]))
    >>> a["sha256"] == b["sha256"], a["trial_sha256"] == b["trial_sha256"][::-1]
    (False, True)
    """
    import hashlib

    def digest(*arrays: np.ndarray | None) -> str:
        h = hashlib.sha256()
        for a in arrays:
            if a is not None:
                a = np.ascontiguousarray(a, dtype=np.float64)
                h.update(repr(a.shape).encode())
                h.update(a.tobytes())
        return h.hexdigest()

    u = ts.inputs
    return {"sha256": digest(ts.data, u),
            "trial_sha256": [digest(ts.data[i], None if u is None else u[i]) for i in range(ts.n_trials)]}


#: the range of per-channel std that replayed training statistics may leave on new data unflagged
REPLAYED_STD_RANGE = (0.5, 2.0)


def replayed_scale_note(ts: TimeSeries) -> str:
    """One sentence naming the channels of ``ts`` (just standardised with another series' statistics)
    whose std lies outside :data:`REPLAYED_STD_RANGE`, or ``""`` if there are none (or fewer than 10
    points, too few to judge a std by)."""
    flat = ts.data.reshape(-1, ts.n_channels)
    if len(flat) < 10:
        return ""
    with np.errstate(invalid="ignore"):
        sd = np.nanstd(flat, axis=0)
    low, high = REPLAYED_STD_RANGE
    bad = np.flatnonzero((sd < low) | (sd > high))
    if bad.size == 0:
        return ""
    names = list(ts.channel_names) if len(ts.channel_names) == ts.n_channels else [f"x{k}" for k in
                                                                                  range(ts.n_channels)]
    shown = ", ".join(f"{names[k]} (std {sd[k]:.3g})" for k in bad[:8])
    more = f" and {bad.size - 8} more" if bad.size > 8 else ""
    return (f"after the training standardisation the new data have channel std far from 1 (outside "
            f"[{low:g}, {high:g}]) in {shown}{more}; they are likely in other units or recorded with another "
            f"gain than the training data, so scores on them compare rescaled data")


def apply_preprocessing(ts: TimeSeries, steps: Any) -> TimeSeries:
    """Replay recorded preprocessing ``steps`` (from :attr:`TimeSeries.preprocessing`) on new data.

    Used to bring held-out data into the space a model was fitted in. ``time_slice`` steps are
    skipped (they select data, not transform it).

    Warns
    -----
    UserWarning
        One line when a replayed ``standardize`` step leaves some channel of the new data (10 or
        more points) with a standard deviation outside ``[0.5, 2]`` (far from the training data's
        1), naming those channels: the new data are likely in other units or recorded with another
        gain.

    Raises
    ------
    ValueError
        For an unknown step name.

    Examples
    --------
    Bring new data into the space a model was fitted in:

    >>> import numpy as np
    >>> from neurodyn.io import TimeSeries, apply_preprocessing
    >>> rng = np.random.default_rng(0)
    >>> train = TimeSeries.from_arrays(rng.normal(5.0, 2.0, size=(200, 2))).standardize()
    >>> new = TimeSeries.from_arrays(np.array([[5.0, 5.0], [7.0, 3.0]]))
    >>> same = apply_preprocessing(new, train.preprocessing)  # the training mean and std, not new ones
    >>> mean, std = train.preprocessing[0]["mean"], train.preprocessing[0]["std"]
    >>> bool(np.allclose(same.values, (new.values - mean) / std))
    True
    """
    for s in steps:
        kind = s.get("step")
        if kind == "standardize":
            ts = ts.standardize(s["mean"], s["std"])
            note = replayed_scale_note(ts)
            if note:
                warnings.warn(f"apply_preprocessing: {note}", UserWarning, stacklevel=2)
        elif kind == "delay_embed":
            ts = ts.delay_embed(s["lags"], channels=s["channels"])
        elif kind == "downsample":
            ts = ts.downsample(s["factor"])
        elif kind == "lowpass":
            ts = ts.lowpass(s["cutoff"], order=s.get("order", 4))
        elif kind == "select_channels":
            ts = ts.select_channels(s["channels"])
        elif kind == "time_slice":
            continue
        else:
            raise ValueError(f"unknown preprocessing step {kind!r}")
    return ts
