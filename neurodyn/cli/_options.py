"""Options that several sub-commands take, each added by one function so that its flag, default and help
read the same wherever it appears, and the one range check of numeric options."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable

#: a numeric option's bound: (flag, attribute, smallest allowed value, whether the bound itself is allowed)
Bound = tuple[str, str, float, bool]


def add_result_files(p: argparse.ArgumentParser, *, what: str, stem: str) -> None:
    """``--out`` (netCDF file for the ``what``), ``--plot`` (figure file) and ``--overwrite`` of an analysis
    command; ``stem`` names the example files in the help (``fixedpoints.nc``, ``fixedpoints.png``)."""
    p.add_argument("--out", default=None, help=f"netCDF file for the {what} (e.g. {stem}.nc)")
    p.add_argument("--plot", default=None, help=f"figure file (e.g. {stem}.png)")
    p.add_argument("--overwrite", action="store_true", help="replace existing --out/--plot files")


def add_checkpoint_file(g: argparse._ActionsContainer, *, default: str) -> None:
    """``--out`` (the checkpoint a training command writes, ``default`` if not given) and ``--overwrite``."""
    g.add_argument("--out", default=default, help=f"checkpoint to write (default {default})")
    g.add_argument("--overwrite", action="store_true", help="replace an existing --out")


def check_bounds(args: argparse.Namespace, bounds: Iterable[Bound]) -> None:
    """Refuse a numeric option that is not finite or lies below its bound; options not given (None) pass.

    Raises
    ------
    ValueError
        ``"<flag> must be >= <low>, got <value>"`` (``>`` where the bound itself is not allowed).
    """
    for flag, name, low, closed in bounds:
        v = getattr(args, name)
        if v is None:
            continue
        if not math.isfinite(v) or v < low or (v == low and not closed):
            rel = ">=" if closed else ">"
            raise ValueError(f"{flag} must be {rel} {low}, got {v}")
