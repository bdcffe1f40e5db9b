"""Reading and writing: one loader for every neurodyn file (``load``), checkpoints, models, recordings."""

from neurodyn.io._load import ResultFileError, load
from neurodyn.io.checkpoint import Checkpoint, ModelFileError, load_checkpoint, save_checkpoint
from neurodyn.io.loaders import load_timeseries
from neurodyn.io.model_file import LoadedModel, load_model
from neurodyn.io.recordings import find_recordings
from neurodyn.io.timeseries import TimeSeries, apply_preprocessing

__all__ = [
    "Checkpoint", "LoadedModel", "ModelFileError", "ResultFileError", "find_recordings", "load",
    "load_checkpoint", "load_model", "save_checkpoint", "TimeSeries", "apply_preprocessing",
    "load_timeseries",
]
