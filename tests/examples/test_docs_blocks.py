"""Every ```python block of the README and of every page in docs/ runs as pasted: each in its own plain
Python process, in an empty folder, writing only the files it names. (```py blocks show other libraries'
code and are not run.)"""

import os
import re
import subprocess
import sys

import pytest
from _notebooks import untracked_files
from _paths import DOCS, REPO

PAGES = {"README": REPO / "README.md",
         **{p.relative_to(DOCS).with_suffix("").as_posix(): p for p in sorted(DOCS.rglob("*.md"))}}
#: files (or folders) each block writes into its working directory (the rest write nothing)
WRITES = {("README", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("fixed_points", 0): {"fixedpoints.nc", "fixedpoints.png"},
          ("formats", 0): {"fixedpoints.nc"},
          ("kernels", 0): {"rollout.nc"},
          ("kernels", 2): {"ff_ensemble"},
          ("tasks", 3): {"romo_outputs.png", "romo_psychometric.png"}}
#: blocks that train a network for about 15 s or more
SLOW = {("README", 0), ("fixed_points", 0), ("tasks", 3), ("sweeps", 0), ("error_forcing", 0),
        ("low_rank", 0), ("low_rank", 1), ("swap_errors", 0)}


def python_blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.S | re.M)


BLOCKS = [(page, i) for page, path in PAGES.items() for i in range(len(python_blocks(path)))]


def test_every_page_is_read_and_the_known_writers_exist():
    counts = {k: len(python_blocks(p)) for k, p in PAGES.items()}
    assert all(index < counts[page] for page, index in WRITES), "WRITES names a block that is gone"


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
    sizes = {name: sum(f.stat().st_size for f in (tmp_path / name).rglob("*")) if (tmp_path / name).is_dir()
             else (tmp_path / name).stat().st_size for name in written}
    assert all(size > 1000 for size in sizes.values()), sizes
    assert untracked_files() == before
