"""``python -m neurodyn`` runs the same command line as the ``neurodyn`` script."""

import subprocess
import sys

from _paths import REPO


def test_python_dash_m_runs_the_command_line():
    proc = subprocess.run([sys.executable, "-m", "neurodyn", "tasks"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "flipflop" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "neurodyn", "fixedpoints", "no-such-model.pt"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("neurodyn fixedpoints: error:")
    assert len(bad.stderr.strip().splitlines()) == 1
