"""The GPU training benchmark refuses a machine without CUDA in one line (it is prepared, not run, here)."""

import subprocess
import sys

import pytest
import torch
from _paths import REPO


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the benchmark would run")
def test_gpu_training_benchmark_exits_with_one_line_without_cuda():
    script = REPO / "benchmarks" / "bench_training_gpu.py"
    out = subprocess.run([sys.executable, str(script), "--out", "/dev/null"], capture_output=True, text=True,
                         timeout=300, cwd=REPO)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert "needs a CUDA GPU" in out.stderr
