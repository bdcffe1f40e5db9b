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


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gru"])
def test_gpu_training_benchmark_runs_in_the_triton_interpreter(family, tmp_path):
    """``--device cpu`` under ``TRITON_INTERPRET=1`` runs every contender once (a smoke test of the script,
    so that the prepared GPU run does not fail on its own code) and records the family."""
    pytest.importorskip("triton", reason="the Triton backend is the 'gpu' extra")
    import json
    import os

    script = REPO / "benchmarks" / "bench_training_gpu.py"
    out_file = tmp_path / "gpu.json"
    env = {**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(script), "--device", "cpu", "--family", family, "--units", "8",
                          "--batch", "3", "--trial-steps", "4", "--steps", "1", "--repeats", "1",
                          "--out", str(out_file)], capture_output=True, text=True, timeout=600, cwd=REPO,
                         env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    record = json.loads(out_file.read_text())
    assert record["family"] == family
    assert set(record["ratios"]) >= {"train_torch_over_train_triton", "plain_torch_over_train_triton"}
