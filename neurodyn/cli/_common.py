"""Helpers shared by the sub-commands: output guards and argument parsing."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def check_outputs(*paths: str | Path | None, overwrite: bool = False) -> None:
    """Refuse to touch existing outputs unless ``overwrite``; called before any work starts.

    Raises
    ------
    FileExistsError
        Naming the first existing path and the ``--overwrite`` flag.
    """
    for p in paths:
        if p is not None and Path(p).exists() and not overwrite:
            raise FileExistsError(f"{p} exists; pass --overwrite to replace it")
        if p is not None and Path(p).is_dir():
            raise FileExistsError(f"{p} is a directory; give a file name")


def parse_vector(text: str, n: int, what: str = "--input") -> np.ndarray:
    """Parse ``"0,0.5,-1"`` into a float array of length ``n``.

    Raises
    ------
    ValueError
        If the text is not comma-separated numbers or has the wrong length.
    """
    try:
        values = np.array([float(v) for v in text.split(",")], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{what} must be comma-separated numbers, got {text!r}") from None
    if values.shape != (n,):
        raise ValueError(f"{what} has {values.size} values but the model has {n} inputs")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what} contains NaN or Inf")
    return values


def save_figure(fig, path: str | Path) -> None:
    """Save a matplotlib figure and close it."""
    import matplotlib.pyplot as plt

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
