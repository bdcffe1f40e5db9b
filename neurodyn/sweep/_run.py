"""Run a sweep: items on Dask (a local cluster, a running scheduler, SLURM) or in this process."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from neurodyn.sweep._cells import cell_key, read_cell, run_cell
from neurodyn.sweep._dataset import SweepResult, build_dataset
from neurodyn.sweep._item import ERROR_FILE, item_folder, read_error, read_metrics, run_group, write_json
from neurodyn.sweep._spec import SweepSpec, load_spec

__all__ = ["run_sweep"]

SPEC_FILE = "spec.json"
DIST_HINT = 'pip install "neurodyn[dist]"'
#: cluster kind -> the dask-jobqueue cluster class it builds (its job class names the submit command)
JOBQUEUE_CLUSTERS = {"slurm": "SLURMCluster"}
#: what each kind's batch system is called in messages
BATCH_SYSTEMS = {"slurm": "SLURM"}


def import_distributed():
    """``dask.distributed``, or a one-line ImportError naming the extra."""
    try:
        import distributed
    except ImportError as err:
        raise ImportError(f"sweeps on Dask need dask.distributed ({err.name} is missing); install it with "
                          f"{DIST_HINT}, or run serially with workers=0") from None
    return distributed


def run_sweep(
    spec: str | Path | Mapping[str, Any] | SweepSpec,
    out: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cluster: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> SweepResult:
    """Train and analyse every network of a sweep, then gather ``out/sweep.nc``; resumes what is there.

    Stages: each item (grid cell × seed) is trained with :func:`neurodyn.training.train` and analysed (task
    metrics in and out of distribution, :func:`~neurodyn.analysis.find_fixed_points`,
    :func:`~neurodyn.analysis.fixed_point_graph`, :func:`~neurodyn.analysis.degeneracy_features` of the
    trained and the untrained network) into ``out/items/<key>/`` (``key`` hashes the item's resolved
    configuration); then each grid cell gets pairwise distances (from the stored features: pairwise work only)
    and degeneracy at three levels (:func:`~neurodyn.analysis.compute_solution_degeneracy`, Huang et al. 2025)
    and its number of distinct fixed-point topologies (Maheswaranathan et al. 2019) in ``out/cells/<key>/``;
    last everything is gathered into one dataset (:class:`SweepResult`). Finished items and cells are never
    recomputed; a failed item records its error (``error.json`` and the dataset) and the sweep goes on; a
    rerun retries failed items. Items run on one thread each, so any executor gives the same bits.

    Parameters
    ----------
    spec : path of a TOML file, dict or SweepSpec
        See :func:`load_spec`.
    out : path
        Output folder; remembers its spec in ``spec.json``.
    workers : int, optional
        Worker processes of the local Dask cluster (default: the CPU count); 0 runs serially in this
        process. With ``cluster="slurm"``: the number of workers (jobs) to ask for.
    scheduler : str, optional
        Address of a running Dask scheduler (``"tcp://host:8786"``), or ``"serial"`` (as workers=0).
    cluster : {"slurm"}, optional
        Build a ``dask_jobqueue.SLURMCluster`` from the user's Dask configuration (``jobqueue.slurm``).
    force : bool
        Use an ``out`` made with a different spec (finished items whose key is in the new spec are kept).
    progress : bool
        Show Dask's progress (a tqdm bar over finished items).

    Returns
    -------
    SweepResult
        The dataset (also written to ``out/sweep.nc``) with ``n_computed``, ``n_skipped``, ``n_failed``.

    Raises
    ------
    ValueError
        For a bad spec (see :func:`load_spec`), a spec that differs from the one ``out`` was made with
        or an ``out/spec.json`` that does not read back as a spec (unless ``force``; without
        ``spec.json`` the spec stored in ``out/sweep.nc`` is compared, and an unreadable
        ``sweep.nc`` is refused), ``scheduler`` together with ``cluster``, ``workers=0`` (serial)
        together with either, an unknown ``cluster`` or a negative ``workers``; for
        ``cluster="slurm"``, a missing submit command (``sbatch`` not on PATH) or a missing
        ``jobqueue.slurm`` configuration (cores, memory). All of these are raised before anything is
        written. An item whose stored files do not read back (damaged or edited) is not an error: it
        is computed again.
    OSError
        If the ``scheduler`` cannot be reached (nothing is written to ``out`` then).
    PermissionError
        If ``out`` cannot be written.
    ImportError
        If Dask (or dask-jobqueue for SLURM) is needed and missing (install the extra ``dist``).

    Examples
    --------
    >>> import tempfile
    >>> spec = {"task": {"name": "flipflop", "n_bits": 1, "n_steps": 8},
    ...         "model": {"n_units": 4, "alpha": 1.0},
    ...         "training": {"n_iterations": 3, "batch_size": 4, "eval_every": 0},
    ...         "analysis": {"n_trials": 8, "n_inits": 8, "dynamics_metric": "procrustes"},
    ...         "grid": {"model.gain": [0.5, 1.0]}, "seeds": 2}
    >>> with tempfile.TemporaryDirectory() as out:
    ...     first = run_sweep(spec, out, workers=0, progress=False)
    ...     again = run_sweep(spec, out, workers=0, progress=False)
    >>> (first.n_computed, again.n_computed, again.n_skipped), dict(first.dataset.sizes)
    ((4, 0, 4), {'gain': 2, 'seed': 2, 'seed_': 2})
    """
    spec = load_spec(spec)
    mode = check_run(spec, out, workers=workers, scheduler=scheduler, cluster=cluster, force=force)
    with _executor(mode, workers, scheduler) as submit_all:  # connected before out is written
        out = prepare_out(out, spec, force=force)
        items = spec.items()
        metrics = {it.key: m for it in items if (m := read_metrics(out, it.key)) is not None}
        todo = [it for it in items if it.key not in metrics]
        errors = _run_items(submit_all, spec, todo, out, metrics, progress)
        errors.update({it.key: read_error(out, it.key) or "no result" for it in items
                       if it.key not in metrics and it.key not in errors})
        cells = _run_cells(submit_all, spec, items, out, metrics, progress)
    ds = build_dataset(spec, items, metrics, errors, cells)
    result = SweepResult(ds, n_computed=sum(1 for it in todo if it.key in metrics),
                         n_skipped=len(items) - len(todo), n_failed=len(errors))
    result.save(out / "sweep.nc", overwrite=True)
    return result


def _run_items(submit_all, spec: SweepSpec, todo: list, out: Path, metrics: dict, progress: bool
               ) -> dict[str, str]:
    """Train and analyse ``todo``; finished metrics go into ``metrics``; returns the errors by key."""
    groups = _groups(todo, ensemble=spec.training.get("ensemble", False))
    jobs = [((g, str(out)), f"item-{g[0].key}") for g in groups]
    errors = {}
    for keys, results in submit_all(run_group, jobs, progress, "train + analyse",
                                    labels=[[it.key for it in g] for g in groups]):
        if isinstance(results, dict):  # the task itself was lost (its workers died too often)
            results = [results] * len(keys)
        for key, result in zip(keys, results):
            if result.get("status") == "ok":
                metrics[key] = result
                continue
            errors[key] = read_error(out, key) or result.get("error") or "no result"
            if read_error(out, key) is None:
                write_json(item_folder(out, key) / ERROR_FILE, {"key": key, "error": errors[key]})
    return errors


def _run_cells(submit_all, spec: SweepSpec, items: list, out: Path, metrics: dict, progress: bool
               ) -> dict[tuple, Any]:
    """Per-cell degeneracy and topologies (stored ones reused); returns the summaries by cell."""
    cells: dict[tuple, Any] = {}
    jobs = []
    for cell in spec.cells:
        keys = [it.key for it in items if it.cell == cell and it.key in metrics]
        key = cell_key(keys, spec.analysis, cell)
        stored = read_cell(out, key)
        if stored is not None:
            cells[cell] = stored
        else:
            jobs.append(((keys, str(out), spec.analysis, cell), f"cell-{key}"))
    for cell, result in submit_all(run_cell, jobs, progress, "cells", labels=[a[3] for a, _ in jobs]):
        if "items" not in result:  # the task itself was lost
            result = {"status": "failed", "error": result.get("error", ""), "items": [], "topology": [],
                      "n_topologies": 0}
        cells[cell] = result
    return cells


def _groups(items: list, *, ensemble: bool) -> list[list]:
    """One group per item, or with ``ensemble`` one per grid cell (its items differ only by seed)."""
    if not ensemble:
        return [[it] for it in items]
    cells: dict[tuple, list] = {}
    for it in items:
        cells.setdefault(it.cell, []).append(it)
    return list(cells.values())


def _mode(workers: int | None, scheduler: str | None, cluster: str | None) -> str:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise ValueError(f"workers must be an integer >= 0 (0: serial), got {workers!r}")
    if scheduler is not None and cluster is not None:
        raise ValueError("give either a scheduler address or a cluster kind, not both")
    if workers == 0 and (cluster is not None or scheduler not in (None, "serial")):
        where = f"scheduler {scheduler!r}" if scheduler is not None else f"{cluster!r} cluster"
        raise ValueError(f"workers=0 runs the sweep serially in this process; drop it to use the {where}")
    if cluster is not None and cluster not in ("slurm", "local"):
        raise ValueError(f"unknown cluster {cluster!r}; choose 'slurm' or 'local' (the default)")
    if scheduler == "serial" or (workers == 0 and scheduler is None and cluster is None):
        return "serial"
    if scheduler is not None:
        return "scheduler"
    return "slurm" if cluster == "slurm" else "local"


def check_run(spec: SweepSpec, out: str | Path, *, workers: int | None = None, scheduler: str | None = None,
              cluster: str | None = None, force: bool = False) -> str:
    """Every check of a run that needs no connection and writes nothing; returns the execution mode.

    The executor options (:func:`_mode`), the cluster's batch system (:func:`check_cluster`) and the
    output folder (:func:`check_out`); ``run_sweep`` and ``neurodyn sweep --dry-run`` share it."""
    mode = _mode(workers, scheduler, cluster)
    if mode in JOBQUEUE_CLUSTERS:
        check_cluster(mode)
    check_out(out, spec, force=force)
    return mode


def n_workers(mode: str, workers: int | None) -> int:
    """The number of workers a run of ``mode`` uses (asks for, with a batch system)."""
    if mode == "serial":
        return 1
    if mode in JOBQUEUE_CLUSTERS:
        return workers or 1
    return workers or os.cpu_count() or 1


def _jobqueue_cluster(kind: str):
    try:
        import dask_jobqueue
    except ImportError:
        raise ImportError(f"cluster={kind!r} needs dask-jobqueue; install it with {DIST_HINT}") from None
    return getattr(dask_jobqueue, JOBQUEUE_CLUSTERS[kind])


def check_cluster(kind: str) -> None:
    """A batch-system cluster ``kind`` needs its submit command on PATH and a jobqueue configuration."""
    import dask.config

    job = _jobqueue_cluster(kind).job_cls
    command, name = job.submit_command, BATCH_SYSTEMS[kind]
    if shutil.which(command) is None:
        raise ValueError(f"cluster={kind!r} needs {name}'s {command} on PATH (not found); run on a {name} "
                         "login node, or use workers=N for a local cluster")
    section = f"jobqueue.{job.config_name}"
    missing = [key for key in ("cores", "memory") if dask.config.get(f"{section}.{key}", None) is None]
    if missing:
        path = os.path.join(dask.config.PATH, "jobqueue.yaml")
        raise ValueError(f"cluster={kind!r} takes its jobs from the Dask configuration, which lacks "
                         f"{section}.{' and .'.join(missing)}; write them to {path} (see docs/sweeps.md, "
                         "'Running it')")


def check_out(out: str | Path, spec: SweepSpec, *, force: bool) -> None:
    """Refuse an ``out`` that holds a sweep of a different spec (``spec.json``, else the spec stored in
    ``sweep.nc``) or an unreadable one, unless ``force``; reads only."""
    out = Path(out)
    if force or not out.is_dir():
        return
    new = json.loads(json.dumps(spec.to_dict()))
    path = out / SPEC_FILE
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:  # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError)
            old = None
    elif (out / "sweep.nc").exists():
        path = out / "sweep.nc"
        old = _stored_spec(path)
    else:
        return
    if not isinstance(old, dict):
        what = "not JSON" if path.name == SPEC_FILE else "not a sweep's netCDF"
        raise ValueError(f"{path} is not a readable sweep spec (damaged or {what}); pass force=True to "
                         "write the current spec over it and reuse the folder, or choose another --out")
    if old != new:
        differ = sorted(k for k in new if old.get(k) != new[k])
        raise ValueError(f"{out} holds a sweep made with a different spec (differs in: "
                         f"{', '.join(differ)}); pass force=True to reuse it, or choose another --out")


def _stored_spec(path: Path) -> Any:
    """The spec in the attributes of a stored ``sweep.nc`` (None if it does not read back)."""
    import xarray as xr

    try:
        with xr.open_dataset(path) as ds:
            return json.loads(ds.attrs["spec"])
    except Exception:  # not netCDF, no spec attribute, not JSON: unreadable as a sweep
        return None


def prepare_out(out: str | Path, spec: SweepSpec, *, force: bool) -> Path:
    """Create ``out`` and record its spec; refuse a different recorded spec unless ``force``."""
    check_out(out, spec, force=force)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise PermissionError(f"cannot create sweep output folder {out} ({err.strerror}); "
                              "choose a writable --out") from None
    if not out.is_dir() or not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write the sweep output folder {out}; choose a writable --out")
    write_json(out / SPEC_FILE, spec.to_dict())
    return out


class _executor:
    """Context manager giving ``submit_all(fn, [(args, key)], progress, desc) -> iter of (key, result)``."""

    def __init__(self, mode: str, workers: int | None, scheduler: str | None) -> None:
        self.mode, self.workers, self.scheduler = mode, workers, scheduler
        self.client = self.cluster = None

    def __enter__(self) -> Callable:
        if self.mode == "serial":
            return self._serial
        distributed = import_distributed()
        try:
            self._connect(distributed)
        except BaseException:
            self.__exit__()
            raise
        return self._dask

    def _connect(self, distributed) -> None:
        n = n_workers(self.mode, self.workers)
        if self.mode == "scheduler":
            try:
                self.client = distributed.Client(self.scheduler, set_as_default=False)
            except OSError as err:  # TimeoutError included
                message = " ".join(str(err).split()).rstrip(".")
                raise OSError(f"cannot reach the Dask scheduler {self.scheduler!r} ({message}); start the "
                              "scheduler or check the address") from None
        elif self.mode in JOBQUEUE_CLUSTERS:
            self.cluster = _jobqueue_cluster(self.mode)()
            self.cluster.scale(n)
            self.client = distributed.Client(self.cluster, set_as_default=False)
        else:
            self.cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                                    dashboard_address=None)
            self.client = distributed.Client(self.cluster, set_as_default=False)

    def __exit__(self, *exc: Any) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    @staticmethod
    def _serial(fn, jobs, progress, desc, labels=None):
        from tqdm.auto import tqdm

        labels = labels or [key for _, key in jobs]
        for (args, _), label in zip(tqdm(jobs, desc=desc, disable=not progress or not jobs), labels):
            yield label, fn(*args)

    def _dask(self, fn, jobs, progress, desc, labels=None):
        from tqdm.auto import tqdm

        distributed = import_distributed()
        labels = labels or [key for _, key in jobs]
        futures = [self.client.submit(fn, *args, key=key, retries=1, pure=False) for args, key in jobs]
        label_of = {f.key: lab for f, lab in zip(futures, labels)}
        bar = tqdm(total=len(futures), desc=desc, disable=not progress or not futures)
        for future in distributed.as_completed(futures, loop=self.client.loop):
            bar.update()
            try:
                result = future.result()
            except Exception as err:  # a task lost its workers too often: recorded, the sweep goes on
                result = {"status": "failed", "error": " ".join(f"{type(err).__name__}: {err}".split())}
            yield label_of[future.key], result
        bar.close()
