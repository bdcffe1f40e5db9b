"""What the benchmark scripts share (run them as ``python benchmarks/bench_*.py``): the line that says
which torch ran them, the synthetic recording they fit, and where they write results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np


def torch_line() -> str:
    """``"torch <version>, <n> thread(s)"``: the start of a benchmark's table header."""
    import torch

    return f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)"


def oscillation(n: int, seed: int = 0, dtype: type = np.float64) -> np.ndarray:
    """A synthetic 3-channel recording of ``n`` steps, shape (time, channel): three coupled oscillations
    plus Gaussian noise of standard deviation 0.05."""
    t = np.arange(n) * 0.05
    rng = np.random.default_rng(seed)
    x = np.stack([np.sin(t), np.sin(2.1 * t) * np.cos(0.3 * t), np.cos(t + 0.5 * np.sin(0.7 * t))], 1)
    return (x + 0.05 * rng.standard_normal(x.shape)).astype(dtype)


def write_json(record: Any, out: str, *, indent: int = 1, quiet: bool = False) -> None:
    """Write ``record`` as JSON to ``out`` (its folder is created) and say so unless ``quiet``;
    ``/dev/null`` writes nothing."""
    if out == "/dev/null":
        return
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(record, indent=indent))
    if not quiet:
        print(f"wrote {out}")
