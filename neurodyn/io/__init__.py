"""Reading and writing: model checkpoints, foreign model files."""

from neurodyn.io.checkpoint import Checkpoint, ModelFileError, load_checkpoint, save_checkpoint
from neurodyn.io.model_file import LoadedModel, load_model

__all__ = [
    "Checkpoint", "LoadedModel", "ModelFileError", "load_checkpoint", "load_model", "save_checkpoint",
]
