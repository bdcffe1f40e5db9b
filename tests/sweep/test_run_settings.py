"""Sweep settings refused before any work: unwritable output, executor options, missing Dask, SLURM set-up."""

import shutil
import sys

import dask
import pytest

from neurodyn.sweep import run_sweep
from tests.sweep.conftest import TINY

#: a jobqueue.slurm configuration as docs/sweeps.md describes
SLURM_CONFIG = {"jobqueue.slurm.cores": 1, "jobqueue.slurm.memory": "2GB", "jobqueue.slurm.processes": 1,
                "jobqueue.slurm.walltime": "00:10:00"}


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

        def close(self):
            calls.append(("close",))

    FakeSLURMCluster.job_cls = dask_jobqueue.SLURMCluster.job_cls
    monkeypatch.setattr(dask_jobqueue, "SLURMCluster", FakeSLURMCluster)
    monkeypatch.setattr(shutil, "which", lambda cmd: f"/usr/bin/{cmd}")  # as on a SLURM login node
    with dask.config.set(SLURM_CONFIG), pytest.raises(Stop):
        run_sweep(TINY, tmp_path / "o", cluster="slurm", workers=3, progress=False)
    assert calls == [("init", (), {}), ("scale", 3), ("close",)]  # a cluster that failed is closed
    assert not (tmp_path / "o").exists()  # the cluster is asked for before anything is written


def test_slurm_without_sbatch_or_configuration_is_refused_before_any_work(tmp_path, monkeypatch):
    """No SLURM (its submit command, from dask-jobqueue's job class, not on PATH): one line naming it and
    the fix, instead of a cluster whose job submissions fail forever; no configuration: its file named."""
    dask_jobqueue = pytest.importorskip("dask_jobqueue")

    class Unchecked:  # a real SLURMCluster without sbatch would queue failing jobs forever
        job_cls = dask_jobqueue.SLURMCluster.job_cls

        def __init__(self, *args, **kwargs):
            raise AssertionError("a SLURM cluster was built without checking for sbatch")

    monkeypatch.setattr(dask_jobqueue, "SLURMCluster", Unchecked)
    looked_up = []
    monkeypatch.setattr(shutil, "which", lambda cmd: looked_up.append(cmd))
    with dask.config.set(SLURM_CONFIG), pytest.raises(
            ValueError, match=r"^cluster='slurm' needs SLURM's sbatch on PATH \(not found\); run on a SLURM "
                              r"login node, or use workers=N for a local cluster$"):
        run_sweep(TINY, tmp_path / "o", cluster="slurm", workers=2, progress=False)
    assert looked_up == ["sbatch"] and not (tmp_path / "o").exists()
    monkeypatch.setattr(shutil, "which", lambda cmd: f"/usr/bin/{cmd}")
    empty = {"jobqueue.slurm.cores": None, "jobqueue.slurm.memory": None}
    with dask.config.set(empty), pytest.raises(
            ValueError, match=r"lacks jobqueue\.slurm\.cores and \.memory; write them to .*jobqueue\.yaml "
                              r"\(see docs/sweeps\.md"):
        run_sweep(TINY, tmp_path / "o", cluster="slurm", workers=2, progress=False)
    assert not (tmp_path / "o").exists()


def test_an_unreachable_scheduler_names_the_fix_and_writes_nothing(tmp_path):
    pytest.importorskip("distributed")
    with dask.config.set({"distributed.comm.timeouts.connect": "0.2s"}), pytest.raises(
            OSError, match=r"^cannot reach the Dask scheduler 'tcp://127\.0\.0\.1:1' \(.*\); start the "
                           r"scheduler or check the address$"):
        run_sweep(TINY, tmp_path / "o", scheduler="tcp://127.0.0.1:1", progress=False)
    assert not (tmp_path / "o").exists()  # the folder stays free for any spec


def _other_study(folder, spec):
    """``folder`` as another study left it: items/ and a sweep.nc whose attributes hold ``spec``"""
    import json

    import xarray as xr

    from neurodyn.sweep import load_spec

    (folder / "items").mkdir(parents=True)
    xr.Dataset(attrs={"spec": json.dumps(load_spec(spec).to_dict(), sort_keys=True)}).to_netcdf(
        folder / "sweep.nc", engine="h5netcdf")


def test_without_spec_json_the_spec_in_sweep_nc_guards_the_folder(tmp_path):
    other = {**TINY, "seeds": 3}
    _other_study(tmp_path / "o", other)
    before = (tmp_path / "o" / "sweep.nc").read_bytes()
    with pytest.raises(ValueError, match=r"holds a sweep made with a different spec \(differs in: seeds\); "
                                         r"pass force=True to reuse it"):
        run_sweep(TINY, tmp_path / "o", workers=0, progress=False)
    assert (tmp_path / "o" / "sweep.nc").read_bytes() == before  # not overwritten
    assert not (tmp_path / "o" / "spec.json").exists()
    (tmp_path / "o" / "sweep.nc").write_bytes(b"not netCDF")
    with pytest.raises(ValueError, match=r"sweep\.nc is not a readable sweep spec .*; pass force=True"):
        run_sweep(TINY, tmp_path / "o", workers=0, progress=False)
    from neurodyn.sweep import load_spec
    from neurodyn.sweep._run import check_out

    _other_study(tmp_path / "same", TINY)
    check_out(tmp_path / "same", load_spec(TINY), force=False)  # the same study: resumed
    check_out(tmp_path / "o", load_spec(TINY), force=True)
