"""Sweep settings refused before any work: unwritable output, executor options, missing Dask, SLURM set-up."""

import sys

import pytest

from neurodyn.sweep import run_sweep
from tests.sweep.conftest import TINY


def test_unwritable_out_and_bad_executor_settings(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PermissionError, match="cannot create sweep output folder .*; choose a writable"):
        run_sweep(TINY, blocker / "out", workers=0, progress=False)
    with pytest.raises(ValueError, match="either a scheduler address or a cluster kind"):
        run_sweep(TINY, tmp_path / "o", scheduler="tcp://x:1", cluster="slurm")
    with pytest.raises(ValueError, match="workers must be an integer >= 0"):
        run_sweep(TINY, tmp_path / "o", workers=-1)
    # workers=0 (serial) with a scheduler or cluster: refused at once, no output folder, no connection tried
    with pytest.raises(ValueError, match="workers=0 runs the sweep serially in this process; drop it to "
                                         "use the scheduler 'tcp://nope:1'"):
        run_sweep(TINY, tmp_path / "w", workers=0, scheduler="tcp://nope:1", progress=False)
    with pytest.raises(ValueError, match="drop it to use the 'slurm' cluster"):
        run_sweep(TINY, tmp_path / "w", workers=0, cluster="slurm", progress=False)
    assert not (tmp_path / "w").exists()


def test_missing_dask_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r'pip install "neurodyn\[dist\]"'):
        run_sweep(TINY, tmp_path / "o", workers=2, progress=False)
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)
    monkeypatch.delitem(sys.modules, "distributed")
    with pytest.raises(ImportError, match=r"cluster='slurm' needs dask-jobqueue; install it with pip"):
        run_sweep(TINY, tmp_path / "o", cluster="slurm", progress=False)


def test_slurm_cluster_comes_from_the_dask_configuration(tmp_path, monkeypatch):
    """cluster="slurm" builds dask_jobqueue.SLURMCluster() with no arguments (the user's jobqueue.slurm
    configuration) and asks for --workers workers; a stand-in cluster stops before any job is queued."""
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    calls = []

    class Stop(Exception):
        pass

    class FakeSLURMCluster:
        def __init__(self, *args, **kwargs):
            calls.append(("init", args, kwargs))

        def scale(self, n):
            calls.append(("scale", n))
            raise Stop

    monkeypatch.setattr(dask_jobqueue, "SLURMCluster", FakeSLURMCluster)
    with pytest.raises(Stop):
        run_sweep(TINY, tmp_path / "o", cluster="slurm", workers=3, progress=False)
    assert calls == [("init", (), {}), ("scale", 3)]
    assert not (tmp_path / "o" / "items").exists()  # nothing ran
