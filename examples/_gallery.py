"""Run a gallery page of the documentation site from the command line.

A study's one source is its page ``docs/gallery/<name>.py`` (jupytext percent format), which the site
executes at a small size. The example scripts beside this module run the same page at full size (or the
site's size with ``--tiny``) and write what it computed into an output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
from pathlib import Path
from unittest import mock

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PAGES = Path(__file__).resolve().parents[1] / "docs" / "gallery"


def run_page(name: str, *, tiny: bool, **settings: object) -> dict:
    """Execute ``docs/gallery/<name>.py`` and return its variables.

    The page reads its size from ``NEURODYN_FULL`` (``"1"`` unless ``tiny``) and each keyword of
    ``settings`` from ``NEURODYN_<KEYWORD>`` (e.g. ``seed=1`` sets ``NEURODYN_SEED=1``), only while it runs;
    a setting that is ``None`` is left to the page's default.
    """
    env = {"NEURODYN_FULL": "0" if tiny else "1"}
    env.update({f"NEURODYN_{key.upper()}": str(value) for key, value in settings.items()
                if value is not None})
    with mock.patch.dict(os.environ, env):
        return runpy.run_path(str(PAGES / f"{name}.py"), run_name="__gallery__")


def write_outputs(out_dir: str | Path, summary: dict | list | None, figures: dict | None = None,
                  dpi: int = 120, summary_name: str = "summary.json") -> dict | list | None:
    """Write ``summary`` as JSON (``summary_name``; nothing when ``None``) and each ``{file name: figure}``
    into ``out_dir`` (created); return ``summary``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for file_name, fig in (figures or {}).items():
        fig.savefig(out / file_name, dpi=dpi)
        plt.close(fig)
    if summary is not None:
        (out / summary_name).write_text(json.dumps(summary, indent=1))
    return summary


def page_parser(doc: str, out_dir: str | None, from_env: bool = False) -> argparse.ArgumentParser:
    """The command line every page runner shares: ``--tiny`` and ``--out-dir`` (none if ``out_dir`` is None).

    With ``from_env``, ``NEURODYN_TINY=1`` sets ``--tiny`` and ``NEURODYN_OUT`` the default ``--out-dir``.
    """
    tiny = from_env and os.environ.get("NEURODYN_TINY", "0") not in ("0", "")
    if from_env:
        out_dir = os.environ.get("NEURODYN_OUT") or out_dir
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", default=tiny,
                        help="the documentation site's small sizes (seconds)" + ("; also NEURODYN_TINY=1"
                                                                                  if from_env else ""))
    if out_dir is not None:
        parser.add_argument("--out-dir", default=out_dir,
                            help="output folder" + (" (default: NEURODYN_OUT if set)" if from_env else ""))
    return parser
