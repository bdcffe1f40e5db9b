"""Run a notebook the way a user opens it (working directory: its own folder) and see what it leaves."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from _paths import REPO


def execute(path: Path, timeout: int = 600):
    """Execute every cell of the notebook at ``path`` in a fresh kernel started in ``path.parent``.

    The kernel inherits the process environment; returns the executed notebook.
    """
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def text_output(nb) -> str:
    """Everything the code cells printed (streams and text results)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def n_images(nb) -> int:
    """Number of PNG figures shown inline."""
    return sum("image/png" in out.get("data", {}) for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []))


def untracked_files() -> set[str] | None:
    """Paths that git reports as untracked (not ignored) in the repository, or None without git."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    proc = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    return {line[3:] for line in proc.stdout.splitlines() if line.startswith("??")}
