"""What a test leaves in the repository: the untracked files git reports."""

from __future__ import annotations

import shutil
import subprocess

from _paths import REPO


def untracked_files() -> set[str] | None:
    """Paths that git reports as untracked (not ignored) in the repository, or None without git."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    proc = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    return {line[3:] for line in proc.stdout.splitlines() if line.startswith("??")}
