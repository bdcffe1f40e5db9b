"""Every benchmark script still imports and parses its arguments (a moved module breaks them silently,
since benchmarks are not run by the tests)."""

import subprocess
import sys

import pytest
from _paths import REPO

#: the scripts (``_*.py`` are modules they share)
SCRIPTS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if not p.name.startswith("_"))


def test_there_are_benchmarks():
    assert any(p.name.startswith("bench_") for p in SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_help_runs(script):
    out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                         timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout.lower()
