"""What the benchmark scripts share (run them as ``python benchmarks/bench_*.py``): the line that says
which torch ran them, the options most of them take, the synthetic recording they fit, and where they
write results."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np


def torch_line() -> str:
    """``"torch <version>, <n> thread(s)"``: the start of a benchmark's table header."""
    import torch

    return f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)"


RESULTS = Path(__file__).resolve().parent / "results"


def bench_parser(
    doc: str,
    *,
    quick: str | None = None,
    repeats: tuple[int, str] | None = None,
    out: str | None = None,
    json_file: bool = False,
) -> argparse.ArgumentParser:
    """The argument parser of a benchmark script, with the options the scripts share.

    Parameters
    ----------
    doc : str
        The script's docstring; its first line describes the script.
    quick : str, optional
        Add ``--quick`` (a flag); the text says which smaller sizes it runs.
    repeats : (int, str), optional
        Add ``--repeats``: its default and what one repeat is.
    out : str, optional
        Add ``--out``: the JSON file to write, by default this name under ``benchmarks/results``.
    json_file : bool
        Add ``--json``: a JSON file to write the results to as well (default: none).

    Returns
    -------
    argparse.ArgumentParser
        The script adds its own options after these.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=quick)
    if repeats is not None:
        parser.add_argument("--repeats", type=int, default=repeats[0], help=repeats[1])
    if out is not None:
        parser.add_argument("--out", default=str(RESULTS / out))
    if json_file:
        parser.add_argument("--json", default=None, help="also write the results to this file")
    return parser


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
