"""Sweeps on a 2-worker dask LocalCluster: the bits of one process, and a killed worker loses nothing."""

import os
import signal
import threading
import time

import pytest

from neurodyn.sweep import run_sweep
from tests.sweep.conftest import TINY
from tests.sweep.test_run import same_values

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow


def _kill_a_busy_worker(address: str, items: os.PathLike, killed: list, timeout: float = 120.0) -> None:
    """Once the first item has finished, SIGKILL a worker that is running another one."""
    with distributed.Client(address, set_as_default=False) as client:
        end = time.monotonic() + timeout
        while time.monotonic() < end and not killed:
            finished = [p for p in items.glob("*/metrics.json")] if items.exists() else []
            busy = [w for w, keys in client.processing().items() if keys]
            if finished and busy:
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.05)


def test_local_cluster_gives_the_serial_bits_even_when_a_worker_dies(serial_sweep, tmp_path):
    """One test for both claims: a cluster start costs tens of seconds on a shared 2-core machine."""
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        killed: list = []
        killer = threading.Thread(target=_kill_a_busy_worker,
                                  args=(cluster.scheduler_address, out / "items", killed))
        killer.start()
        result = run_sweep(TINY, out, scheduler=cluster.scheduler_address, progress=False)
        killer.join()
    assert killed, "no worker was busy after the first item finished"
    assert (result.n_computed, result.n_failed) == (4, 0)
    same_values(result.dataset, serial_sweep[0].dataset)
