"""Kill ``train``, ``fit`` and ``fixedpoints`` at moments drawn with a fixed seed, including during the final
write (``NEURODYN_WRITE_DELAY`` pauses after each temporary file): an existing output is never corrupted,
a result and its figure stay a pair, and the next run leaves no temporary file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neurodyn.analysis import find_fixed_points
from neurodyn.cli._common import check_outputs
from neurodyn.io import load, load_checkpoint, save_checkpoint
from neurodyn.models import LeakyRNN

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def start(argv, cwd, delay=None):
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    env.pop("NEURODYN_WRITE_DELAY", None)
    if delay is not None:
        env["NEURODYN_WRITE_DELAY"] = str(delay)
    return subprocess.Popen([sys.executable, "-m", "neurodyn.cli.main", *argv], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def temporaries(folder):
    return [p for p in Path(folder).iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def kill_at(proc, folder, when, rng):
    """SIGKILL ``proc`` ``when`` seconds after start, or (``when == "write"``) at a random moment of
    the final write: once the first temporary file exists, within the pauses after each write."""
    t0, before = time.monotonic(), set(temporaries(folder))
    if when == "write":
        while not set(temporaries(folder)) - before:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() - t0 < 60, "the command never reached its final write"
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.9))
    else:
        time.sleep(when)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


def check_checkpoint(path, old_bytes):
    data = path.read_bytes()
    if data != old_bytes:  # replaced: it must be the complete new result
        load_checkpoint(path)


def run_kills(argv, folder, check, rng, outputs, complete=False):
    for when in (rng.uniform(0.3, 1.5), "write"):
        proc = start(argv, folder, delay=0.5)
        kill_at(proc, folder, when, rng)
        check()
    if complete:  # a whole run after the kills: its start-up removes their leftovers
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, "-m", "neurodyn.cli.main", *argv], cwd=folder,
                              capture_output=True, env=env)
        assert done.returncode == 0, done.stderr.decode()
    else:  # what every command does first (the whole run is shown for fixedpoints)
        check_outputs(*outputs, overwrite=True)
    assert temporaries(folder) == []
    check()


def test_kills_never_corrupt_outputs_nor_leave_temporaries(tmp_path):
    rng = np.random.default_rng(20261201)
    old = save_checkpoint(tmp_path / "model.pt", LeakyRNN(1, 4, 1, seed=1))
    old_bytes = old.read_bytes()

    train = ["train", "flipflop", "--n-bits", "2", "--n-steps", "6", "--n-units", "8", "--n-iterations", "3",
             "--batch-size", "4", "--eval-every", "2", "--no-progress", "--out", "model.pt", "--overwrite"]
    run_kills(train, tmp_path, lambda: check_checkpoint(tmp_path / "model.pt", old_bytes), rng,
              [tmp_path / "model.pt"])

    t = np.arange(300) * 0.1
    np.save(tmp_path / "sine.npy", np.stack([np.sin(t), np.cos(2 * t)], 1))
    fit_old = save_checkpoint(tmp_path / "fit.pt", LeakyRNN(0, 2, 2, seed=2)).read_bytes()
    fit = ["fit", "sine.npy", "--model", "plrnn", "--epochs", "1", "--batches-per-epoch", "2", "--batch-size",
           "4", "--seq-len", "20", "--no-progress", "--out", "fit.pt", "--overwrite"]
    run_kills(fit, tmp_path, lambda: check_checkpoint(tmp_path / "fit.pt", fit_old), rng,
              [tmp_path / "fit.pt"])

    res = find_fixed_points(lambda h, u: 0.5 * h, state_size=2, initial_states=np.ones((2, 2)))
    res.save(tmp_path / "fp.nc")
    (tmp_path / "fp.png").write_bytes(b"\x89PNG old figure")
    pair_old = ((tmp_path / "fp.nc").read_bytes(), (tmp_path / "fp.png").read_bytes())

    def check_pair():
        pair = ((tmp_path / "fp.nc").read_bytes(), (tmp_path / "fp.png").read_bytes())
        replaced = [new != before for new, before in zip(pair, pair_old)]
        assert replaced[0] == replaced[1], "the result and its figure are out of step"
        if replaced[0]:
            assert load(tmp_path / "fp.nc").attrs is not None and pair[1].startswith(b"\x89PNG\r\n")

    fixedpoints = ["fixedpoints", str(old), "--n-inits", "4", "--out", "fp.nc", "--plot", "fp.png",
                   "--overwrite"]
    run_kills(fixedpoints, tmp_path, check_pair, rng, [], complete=True)
    assert (tmp_path / "fp.nc").read_bytes() != pair_old[0]
    assert (tmp_path / "fp.png").read_bytes() != pair_old[1]
