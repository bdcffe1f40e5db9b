"""PLRNN-family models from ``.npz`` / ``.mat`` files of named arrays.

=================  ============================================
arch               arrays (names as stored in the file)
=================  ============================================
plrnn              ``A``, ``W``, ``h`` (optional ``C``)
shplrnn            ``A``, ``W1``, ``W2``, ``h1``, ``h2`` (optional ``C``)
clipped-shplrnn    as shplrnn
alrnn              ``A``, ``W``, ``h``, ``n_relu`` (optional ``C``)
=================  ============================================

``A`` may be a vector, a diagonal matrix or (plrnn, alrnn) a full matrix. MATLAB files are read
with :func:`scipy.io.loadmat`; row/column vectors stored as 1×n or n×1 matrices are flattened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from neurodyn._checks import check_finite

__all__ = ["load_plrnn_arrays"]

ARCHS: dict[str, tuple[str, ...]] = {
    "plrnn": ("A", "W", "h"),
    "shplrnn": ("A", "W1", "W2", "h1", "h2"),
    "clipped-shplrnn": ("A", "W1", "W2", "h1", "h2"),
    "alrnn": ("A", "W", "h", "n_relu"),
}
_VECTORS = ("h", "h1", "h2")


def _read(path: Path) -> dict[str, np.ndarray]:
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            return {k: np.asarray(data[k]) for k in data.files}
    if suffix == ".mat":
        from scipy.io import loadmat

        data = loadmat(path)
        return {k: np.asarray(v) for k, v in data.items() if not k.startswith("__")}
    raise ValueError(f"{path}: expected a .npz or .mat file, got suffix {suffix!r}")


def _vector(name: str, arr: np.ndarray, path: Path) -> np.ndarray:
    """Flatten 1×n / n×1 matrices (as MATLAB stores vectors)."""
    if arr.ndim == 2 and 1 in arr.shape:
        return arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{path}: {name} must be a vector, got shape {arr.shape}")
    return arr


def _a_matrix(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape and arr.size > 1 else arr


def load_plrnn_arrays(path: str | os.PathLike, arch: str) -> Any:
    """Build a PLRNN, ShallowPLRNN or ALRNN from a file of named arrays.

    Parameters
    ----------
    path : path-like
        ``.npz`` (NumPy) or ``.mat`` (MATLAB, read with ``scipy.io.loadmat``) file.
    arch : {"plrnn", "shplrnn", "clipped-shplrnn", "alrnn"}
        Which model the arrays describe (see the module table for the array names).

    Returns
    -------
    PLRNN or ShallowPLRNN or ALRNN
        A float64 model with the identity observation and ``n_inputs`` from ``C`` (0 without).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unknown ``arch``, missing arrays (the message lists the ones found), shape
        mismatches, or NaN/Inf entries.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import torch
    >>> from neurodyn.io.plrnn_arrays import load_plrnn_arrays
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     np.savez(Path(tmp) / "shallow.npz", A=[0.5], W1=[[1.0]], W2=[[1.0]], h1=[0.0], h2=[-1.0])
    ...     model = load_plrnn_arrays(Path(tmp) / "shallow.npz", "shplrnn")
    >>> type(model).__name__, model.n_inputs  # no C: no inputs
    ('ShallowPLRNN', 0)
    >>> model.step(torch.tensor([[3.0]], dtype=torch.float64)).item()  # 0.5 z + relu(z - 1)
    3.5
    """
    from neurodyn.models import ALRNN, PLRNN, ShallowPLRNN

    path = Path(path)
    if arch not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}; choose one of {', '.join(ARCHS)}")
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    data = _read(path)
    missing = [k for k in ARCHS[arch] if k not in data]
    if missing:
        raise ValueError(
            f"{path}: arch {arch!r} needs arrays {', '.join(ARCHS[arch])}; missing {', '.join(missing)} "
            f"(found {', '.join(sorted(data)) or 'none'})"
        )
    arrays = {k: np.asarray(v) for k, v in data.items() if k in (*ARCHS[arch], "C")}
    for name, arr in arrays.items():
        if not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{path}: {name} is not numeric (dtype {arr.dtype})")
        check_finite(arr, f"{path}: {name}")
    for name in _VECTORS:
        if name in arrays:
            arrays[name] = _vector(name, arrays[name], path)
    arrays["A"] = _a_matrix(arrays["A"])
    C = arrays.get("C")
    try:
        if arch == "plrnn":
            return PLRNN.from_arrays(arrays["A"], arrays["W"], arrays["h"], C=C)
        if arch == "alrnn":
            n_relu = arrays["n_relu"]
            if n_relu.size != 1 or float(n_relu.reshape(-1)[0]) != int(n_relu.reshape(-1)[0]):
                raise ValueError(f"n_relu must be one integer, got {n_relu!r}")
            return ALRNN.from_arrays(arrays["A"], arrays["W"], arrays["h"],
                                     int(n_relu.reshape(-1)[0]), C=C)
        return ShallowPLRNN.from_arrays(
            arrays["A"], arrays["W1"], arrays["W2"], arrays["h1"], arrays["h2"],
            clipped=arch == "clipped-shplrnn", C=C,
        )
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
