"""Every ```python block of the README and of docs/tasks.md and docs/fixed_points.md runs as pasted:
each in its own plain Python process, in an empty folder, writing only the files it names."""

import os
import re
import subprocess
import sys

import pytest
from _notebooks import untracked_files
from _paths import DOCS, REPO

PAGES = {"README": REPO / "README.md", "tasks": DOCS / "tasks.md", "fixed_points": DOCS / "fixed_points.md"}
#: files each block writes into its working directory (the rest write nothing)
WRITES = {("README", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("fixed_points", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("tasks", 3): {"romo_outputs.png", "romo_psychometric.png"}}
#: blocks that train a network for about 15 s or more
SLOW = {("README", 0), ("fixed_points", 0), ("tasks", 3)}


def python_blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


BLOCKS = [(page, i) for page, path in PAGES.items() for i in range(len(python_blocks(path)))]


def test_pages_have_the_blocks_this_test_knows():
    counts = {k: len(python_blocks(p)) for k, p in PAGES.items()}
    assert counts == {"README": 1, "tasks": 5, "fixed_points": 1}


@pytest.mark.parametrize("page, index", [pytest.param(*b, marks=[pytest.mark.slow] if b in SLOW else [])
                                         for b in BLOCKS], ids=[f"{p}-{i}" for p, i in BLOCKS])
def test_block_runs_as_pasted(page, index, tmp_path):
    code = python_blocks(PAGES[page])[index]
    (tmp_path / "block.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # a plain process picks its backend
    env["OMP_NUM_THREADS"] = "1"
    before = untracked_files()
    proc = subprocess.run([sys.executable, "block.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"{page} block {index} failed:\n{code}\n{proc.stderr[-3000:]}"
    written = {p.name for p in tmp_path.iterdir()} - {"block.py"}
    assert written == WRITES.get((page, index), set())
    assert all((tmp_path / name).stat().st_size > 1000 for name in written)
    assert untracked_files() == before
