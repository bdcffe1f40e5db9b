"""Build neurodyn models from plain ``state_dict``s of ``torch.nn.RNN`` / ``GRU`` / ``LSTM``.

Most labs save ``model.state_dict()`` of their own ``nn.Module`` holding one recurrent layer
(keys such as ``rnn.weight_hh_l0``) and perhaps an ``nn.Linear`` readout. The architecture is
inferred from the keys and shapes: ``weight_hh_l0`` has ``G * n_units`` rows with G = 1 (RNN),
3 (GRU) or 4 (LSTM). A plain RNN's nonlinearity (tanh or ReLU) cannot be seen in its weights, so
it must be named with ``arch``.
"""

from __future__ import annotations

from typing import Any

import torch

from neurodyn.io.checkpoint import ModelFileError, check_finite
from neurodyn.models import GRU, LSTM, LeakyRNN, RecurrentModel


class PlainRNNNeedsArch(ModelFileError):
    """A plain ``torch.nn.RNN`` state_dict read without ``arch``: its nonlinearity (tanh or ReLU) is not
    stored in the weights, so only the caller can say which it is."""

__all__ = ["model_from_state_dict"]

ARCHS = ("rnn_tanh", "rnn_relu", "gru", "lstm")
_GATES = {1: "rnn", 3: "gru", 4: "lstm"}


def _find(sd: dict[str, torch.Tensor], suffix: str) -> list[str]:
    return [k for k in sd if k == suffix or k.endswith("." + suffix)]


def _readout_keys(sd: dict[str, torch.Tensor], rnn_keys: set[str], n_units: int) -> tuple[str, str | None]:
    cands = [
        k for k, v in sd.items()
        if k not in rnn_keys and k.endswith("weight") and v.ndim == 2 and v.shape[1] == n_units
    ]
    if not cands:
        return "", None
    if len(cands) > 1:
        raise ModelFileError(
            f"several possible linear readouts {cands}; keep one nn.Linear(n_units, n_outputs) in the "
            "state_dict or remove the others"
        )
    w = cands[0]
    b = w[: -len("weight")] + "bias"
    return w, b if b in sd else None


def model_from_state_dict(
    sd: dict[str, Any], arch: str | None = None, source: str = "file", *, dtype: torch.dtype = torch.float32
) -> RecurrentModel:
    """Build a :class:`LeakyRNN` (alpha=1), :class:`GRU` or :class:`LSTM` from a torch state_dict.

    Parameters
    ----------
    sd : dict[str, Tensor]
        The state_dict; keys may carry a module prefix (``rnn.weight_hh_l0``).
    arch : {"rnn_tanh", "rnn_relu", "gru", "lstm"}, optional
        Required for plain RNNs; checked against the shapes otherwise.
    dtype : torch dtype
        Parameter dtype of the model (float32, as every loaded model; the two biases of a plain RNN
        are summed in float64 first).

    Raises
    ------
    ModelFileError
        If no single-layer recurrent layer is found, the layer is multi-layer or bidirectional,
        ``arch`` contradicts the shapes, or weights hold NaN/Inf.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.io.foreign import model_from_state_dict
    >>> rnn = torch.nn.GRU(3, 5, batch_first=True)
    >>> model = model_from_state_dict(rnn.state_dict())
    >>> type(model).__name__, model.n_inputs, model.n_units, model.w_hh.dtype  # float32, as loaded models are
    ('GRU', 3, 5, torch.float32)
    >>> x = torch.randn(2, 7, 3, generator=torch.Generator().manual_seed(0))
    >>> bool(torch.allclose(model(x).states, rnn(x)[0], atol=1e-6))  # the same network
    True
    """
    if arch is not None and arch not in ARCHS:
        raise ModelFileError(f"unknown --arch {arch!r}; choose one of {', '.join(ARCHS)}")
    tensors = {k: v for k, v in sd.items() if isinstance(v, torch.Tensor)}
    hh = _find(tensors, "weight_hh_l0")
    if not hh:
        raise ModelFileError(
            f"{source}: found no recurrent layer (no '*weight_hh_l0' key among {list(sd)[:6]}); "
            "expected a neurodyn checkpoint or the state_dict of a torch.nn.RNN/GRU/LSTM"
        )
    if len(hh) > 1:
        raise ModelFileError(f"{source}: several recurrent layers {hh}; keep one")
    prefix = hh[0][: -len("weight_hh_l0")]
    if any(k.startswith(prefix) and ("_l1" in k or "_reverse" in k) for k in tensors):
        raise ModelFileError(f"{source}: multi-layer or bidirectional RNNs are not supported")
    w_hh = tensors[hh[0]].double()
    n_units = w_hh.shape[1]
    gates = w_hh.shape[0] // n_units
    if gates not in _GATES or gates * n_units != w_hh.shape[0]:
        raise ModelFileError(f"{source}: weight_hh_l0 has shape {tuple(w_hh.shape)}, not (G*N, N)")
    kind = _GATES[gates]
    if kind == "rnn":
        if arch not in ("rnn_tanh", "rnn_relu"):
            raise PlainRNNNeedsArch(
                f"{source} holds a plain RNN with {n_units} units; its nonlinearity is not stored in "
                "the weights: pass --arch rnn_tanh or --arch rnn_relu"
            )
    elif arch is not None and arch != kind:
        raise ModelFileError(f"{source}: --arch {arch} given but the weights are those of a {kind.upper()}")
    check_finite(tensors, source)

    def get(name: str, shape: tuple[int, ...]) -> torch.Tensor:
        key = prefix + name
        return tensors[key].double() if key in tensors else torch.zeros(shape, dtype=torch.float64)

    w_ih = get("weight_ih_l0", (gates * n_units, 0))
    n_inputs = w_ih.shape[1]
    b_ih, b_hh = get("bias_ih_l0", (gates * n_units,)), get("bias_hh_l0", (gates * n_units,))
    rnn_keys = {k for k in tensors if k.startswith(prefix) and k[len(prefix):].endswith("_l0")}
    wk, bk = _readout_keys(tensors, rnn_keys, n_units)
    w_out = tensors[wk].double() if wk else torch.zeros(0, n_units, dtype=torch.float64)
    b_out = tensors[bk].double() if bk else torch.zeros(w_out.shape[0], dtype=torch.float64)
    n_outputs = w_out.shape[0]
    if kind == "rnn":
        model: RecurrentModel = LeakyRNN(
            n_inputs, n_units, n_outputs, activation=arch.split("_")[1], alpha=1.0
        )
        new = {"w_in": w_ih, "w_rec": w_hh, "b": b_ih + b_hh, "w_out": w_out, "b_out": b_out}
    else:
        model = (GRU if kind == "gru" else LSTM)(n_inputs, n_units, n_outputs)
        new = {"w_ih": w_ih, "w_hh": w_hh, "b_ih": b_ih, "b_hh": b_hh, "w_out": w_out, "b_out": b_out}
    model = model.double()
    model.load_state_dict(new, strict=False)
    return model.to(dtype).eval()
