"""Sweeps over populations of networks: a declarative spec, run on Dask, resumable, gathered into one dataset.

A spec (TOML or dict, :func:`load_spec`) names a task, a model, training and analysis options, a grid
over any of them and seeds; :func:`run_sweep` trains and analyses every network (grid cell × seed) on a
local Dask cluster, a running scheduler or SLURM (extra ``dist``), or serially, stores each under a key
of its configuration, computes degeneracy per grid cell and writes one ``xarray.Dataset``
(:class:`SweepResult`). :func:`estimate_sweep` times a short calibration run. This layer uses
training and analysis; the command line (``neurodyn sweep``) uses it.
"""

from neurodyn.sweep._dataset import SweepResult
from neurodyn.sweep._estimate import estimate_sweep
from neurodyn.sweep._item import run_item
from neurodyn.sweep._run import run_sweep
from neurodyn.sweep._spec import SpecError, SweepItem, SweepSpec, load_spec

__all__ = ["SpecError", "SweepItem", "SweepResult", "SweepSpec", "estimate_sweep", "load_spec", "run_item",
           "run_sweep"]
