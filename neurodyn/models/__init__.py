"""Recurrent network models: each a state-space map ``h[t+1] = F(h[t], u[t])`` with a readout."""

from neurodyn.models._base import RecurrentModel, Rollout
from neurodyn.models._registry import MODELS, make_model, register_model
from neurodyn.models.alrnn import ALRNN, ALRNNParams, alrnn_step
from neurodyn.models.gru import GRU, GRUParams, gru_step
from neurodyn.models.leaky_rnn import LeakyRNN, LeakyRNNParams, leaky_rnn_step
from neurodyn.models.low_rank import LowRankRNN
from neurodyn.models.lstm import LSTM, LSTMParams, lstm_step
from neurodyn.models.piecewise import PLSystem, pl_system
from neurodyn.models.plrnn import PLRNN, PLRNNParams, plrnn_step
from neurodyn.models.shplrnn import ShallowPLRNN, ShallowPLRNNParams, shplrnn_step

__all__ = [
    "GRU", "LSTM", "MODELS", "GRUParams", "LSTMParams", "LeakyRNN", "LeakyRNNParams",
    "RecurrentModel", "Rollout", "gru_step", "leaky_rnn_step", "lstm_step", "make_model",
    "register_model", "LowRankRNN",
    "ALRNN", "ALRNNParams", "PLRNN", "PLRNNParams", "PLSystem", "ShallowPLRNN", "ShallowPLRNNParams",
    "alrnn_step", "pl_system", "plrnn_step", "shplrnn_step",
]
