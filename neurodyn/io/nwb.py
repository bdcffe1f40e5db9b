"""NWB reader (optional extra ``nwb``): a TimeSeries object or the units table binned into counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_nwb"]


def require_pynwb() -> None:
    """Raise ``ImportError`` naming the extra when pynwb is missing (checked without importing)."""
    if importlib.util.find_spec("pynwb") is None:
        raise ImportError("reading .nwb files needs pynwb; install it with: pip install 'neurodyn[nwb]'")


def _timeseries_objects(nwb: Any) -> dict[str, Any]:
    found = {name: obj for name, obj in nwb.acquisition.items() if hasattr(obj, "data")}
    for module in nwb.processing.values():
        for name, obj in module.data_interfaces.items():
            if hasattr(obj, "data") and hasattr(obj, "timestamps"):
                found.setdefault(name, obj)
    return found


def bin_spike_times(spike_times: list[np.ndarray], bin_size: float, t_start: float,
                    t_stop: float) -> np.ndarray:
    """Counts ``(time, unit)`` of spikes in bins ``[t_start + k bin_size, t_start + (k+1) bin_size)``."""
    n_bins = int(np.floor((t_stop - t_start) / bin_size + 1e-9))
    if n_bins < 2:
        raise ValueError(f"bin_size {bin_size} s leaves {n_bins} bins in [{t_start}, {t_stop}] s")
    edges = t_start + bin_size * np.arange(n_bins + 1)
    return np.stack([np.histogram(st, bins=edges)[0] for st in spike_times], axis=1).astype(np.float64)


def read_nwb(path: Path, key: str | None, input_key: str | None, bin_size: float) -> dict[str, Any]:
    """Arrays from an NWB file (see :func:`neurodyn.io.loaders.load_timeseries`).

    Examples
    --------
    Needs pynwb (``pip install "neurodyn[nwb]"``); :func:`neurodyn.io.load_timeseries` calls it for
    ``.nwb`` files:

    >>> import importlib.util
    >>> import tempfile
    >>> from datetime import UTC, datetime
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from neurodyn.io.nwb import read_nwb
    >>> if importlib.util.find_spec("pynwb") is not None:
    ...     from pynwb import NWBHDF5IO, NWBFile, TimeSeries
    ...     nwb = NWBFile(session_description="demo", identifier="demo", session_start_time=datetime.now(UTC))
    ...     nwb.add_acquisition(TimeSeries(name="lfp", data=np.zeros((50, 3)), unit="V", rate=100.0))
    ...     with tempfile.TemporaryDirectory() as tmp:
    ...         with NWBHDF5IO(str(Path(tmp) / "r.nwb"), "w") as io:
    ...             io.write(nwb)
    ...         arrays = read_nwb(Path(tmp) / "r.nwb", "lfp", None, 0.05)
    ...     shape, dt = arrays["data"].shape, arrays["dt"]
    ... else:
    ...     shape, dt = (50, 3), 0.01
    >>> shape, dt  # (time, channel), seconds
    ((50, 3), 0.01)
    """
    require_pynwb()
    try:
        return _read(path, key, input_key, bin_size)
    except (ValueError, ImportError):
        raise
    except Exception as err:  # h5py/hdmf/pynwb raise many types for damaged or foreign files
        reason = " ".join(str(err).split())[:100] or type(err).__name__
        raise ValueError(f"{path.name} is not a readable NWB file: truncated or damaged ({reason}); "
                         "write it again with pynwb") from None


def _read(path: Path, key: str | None, input_key: str | None, bin_size: float) -> dict[str, Any]:
    from pynwb import NWBHDF5IO

    with NWBHDF5IO(str(path), "r") as io:
        nwb = io.read()
        series = _timeseries_objects(nwb)
        if key == "units" or (key is None and not series and nwb.units is not None):
            if nwb.units is None or len(nwb.units) == 0:
                raise ValueError(f"{path.name} has no units table")
            spikes = [np.asarray(nwb.units.get_unit_spike_times(i)) for i in range(len(nwb.units))]
            t_all = np.concatenate([s for s in spikes if s.size] or [np.zeros(1)])
            t_start, t_stop = 0.0, float(t_all.max()) + bin_size
            counts = bin_spike_times(spikes, bin_size, t_start, t_stop)
            names = [f"unit{i}" for i in range(counts.shape[1])]
            out: dict[str, Any] = {"data": counts, "dt": float(bin_size), "channel_names": names,
                                   "key": "units"}
        else:
            if key is None:
                if len(series) != 1:
                    raise ValueError(
                        f"{path.name} holds {len(series)} time series ({', '.join(series) or 'none'}) "
                        "; choose one with key= (or key='units' for the units table)"
                    )
                key = next(iter(series))
            if key not in series:
                raise ValueError(f"{path.name} has no time series {key!r}; found: {', '.join(series)}")
            out = _series_arrays(series[key])
            out["key"] = key
        if input_key is not None:
            if input_key not in series:
                raise ValueError(f"{path.name} has no time series {input_key!r}; found: {', '.join(series)}")
            out["inputs"] = _series_arrays(series[input_key])["data"]
    return out


def _series_arrays(obj: Any) -> dict[str, Any]:
    from neurodyn._guard import check_declared_size

    check_declared_size(tuple(obj.data.shape), "f8", f"NWB series {obj.name!r}")
    data = np.asarray(obj.data[:], dtype=np.float64)
    out: dict[str, Any] = {"data": data}
    if getattr(obj, "rate", None):
        out["dt"] = 1.0 / float(obj.rate)
    elif getattr(obj, "timestamps", None) is not None and len(obj.timestamps) > 1:
        out["dt"] = float(np.median(np.diff(np.asarray(obj.timestamps[:]))))
    return out
