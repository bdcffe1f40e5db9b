"""Training: one engine (``TrainConfig``) behind BPTT on tasks, ensembles, deflation, teacher forcing,
flow matching and diffusion."""

from neurodyn.training._config import TrainConfig
from neurodyn.training._results import EnsembleResult, FitResult, TrainingDivergedError, TrainResult
from neurodyn.training.curriculum import Curriculum
from neurodyn.training.deflation import ridge_predictivity, train_deflated, train_deflation_sequence
from neurodyn.training.diffusion import sample_diffusion, train_diffusion
from neurodyn.training.early_stopping import EarlyStopping
from neurodyn.training.ensemble import train_ensemble
from neurodyn.training.ensemble_io import load_ensemble, save_ensemble
from neurodyn.training.flow_matching import LoadingFlow, fit_flow_matching
from neurodyn.training.generate import Generated, generate
from neurodyn.training.losses import LOSSES, masked_cross_entropy, masked_mse
from neurodyn.training.regularizers import RatePenalty, WeightPenalty, l1_rate, l1_weight, l2_rate, l2_weight
from neurodyn.training.teacher_forcing import fit_teacher_forcing
from neurodyn.training.train import evaluate, train

__all__ = [
    "LOSSES", "TrainConfig", "TrainResult", "TrainingDivergedError", "evaluate", "masked_cross_entropy",
    "masked_mse", "train",
    "FitResult", "Generated", "fit_teacher_forcing", "generate",
    "Curriculum", "EarlyStopping", "RatePenalty", "WeightPenalty", "l1_rate", "l1_weight", "l2_rate",
    "l2_weight",
    "EnsembleResult", "load_ensemble", "save_ensemble", "train_ensemble",
    "ridge_predictivity", "train_deflated", "train_deflation_sequence",
    "LoadingFlow", "fit_flow_matching",
    "sample_diffusion", "train_diffusion",
]
