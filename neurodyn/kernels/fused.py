"""Fused training rollouts: the whole time loop forward and BPTT backward in one compiled kernel.

:func:`fused_states` is a differentiable rollout whose ``torch.autograd.Function`` runs the time
loop in Numba (:mod:`~neurodyn.kernels._numba_bptt` for the leaky RNN,
:mod:`~neurodyn.kernels._numba_bptt_gru` for the GRU, :mod:`~neurodyn.kernels._numba_bptt_plrnn` for
the PLRNN, ALRNN and shallow PLRNN) and backpropagates through time in Numba too, instead of
recording one autograd node per operation and step. Ensemble params of every fused family (tensor
fields stacked over networks, :func:`~neurodyn.kernels.stack_params`) run in the same kernels' bodies
with the network as the outer parallel loop, so an ensemble's rollout is one call. Everything
outside the recurrence (effective weights with masks and Dale's law, the input drive, the readout,
the loss) stays in torch, so its gradients reach the raw parameters through autograd as usual.
Teacher forcing of the state towards data (:func:`neurodyn.training.fit_teacher_forcing`) runs inside
the same kernels for one shallow PLRNN, PLRNN or ALRNN (Numba; the shallow PLRNN in Triton too).
Error and teacher forcing of the state through the readout during task training
(:class:`ReadoutForcing`) runs inside them for the leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN, one
network or an
ensemble (Numba; the leaky RNN in Triton too).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from neurodyn._checks import check_device
from neurodyn.kernels import _fused_autograd as _fa
from neurodyn.kernels._api import backend_available
from neurodyn.kernels._families import family_of, is_ensemble

__all__ = [
    "FUSED_FAMILIES", "ReadoutForcing", "finite_targets", "fused_backend", "fused_states", "fuses_outputs",
]

#: families with a fused forward + backward on the CPU (Numba)
FUSED_FAMILIES = ("leaky", "gru", "plrnn", "alrnn", "shplrnn")
_TRAIN_BACKENDS = ("auto", "torch", "numba", "triton")
#: kinds of forcing :func:`fused_backend` knows, with the families fused for each in Numba: of the
#: state towards data (shallow PLRNN, PLRNN, ALRNN; one network), or of the state through the readout
#: towards the task's targets (leaky RNN, GRU, PLRNN, ALRNN, shallow PLRNN; one network or an ensemble)
_FORCINGS = {"state": ("shplrnn", "plrnn", "alrnn"), "readout": ("leaky", "gru", "plrnn", "alrnn", "shplrnn")}
#: those fused in Triton
_TRITON_FORCINGS = {"state": ("shplrnn",), "readout": ("leaky",)}
#: how the refusals name the families of a kind of forcing
_FORCED_NAMES = {"shplrnn": "the shallow PLRNN", "plrnn": "the PLRNN", "alrnn": "the ALRNN",
                 "leaky": "the leaky RNN", "gru": "the GRU"}


def _forcing_refusal(kind: str, families: tuple, name: str) -> str:
    """Why ``kind`` forcing of family ``name`` has no fused path, when ``families`` have one."""
    names = [_FORCED_NAMES[f] for f in families]
    fused = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    what = "teacher-forced rollouts are" if kind == "state" else "forcing through the readout is"
    return f"{what} fused for {fused} only, not {name!r}"


class ReadoutForcing(NamedTuple):
    """Forcing of a leaky RNN's, GRU's, PLRNN's, ALRNN's or shallow PLRNN's state through its affine
    readout after every step, for :func:`fused_states`.

    The two rules of :func:`neurodyn.training.forcing.forcing_step` with the readout
    ``y = h @ w_out.T + b_out`` and its (ridge) pseudo-inverse ``pinv``: ``"error"``,
    ``h <- h + strength * pinv @ (mask * (targets - y))``, the correction detached (the gradient
    sees ``h`` alone); ``"teacher"``, ``h <- h + c (pinv @ (targets - b_out) - h)`` with
    ``c = strength * max(mask)`` per batch row and the target state detached (the gradient through
    the state is scaled by ``1 - c``). No gradient flows to any field. Targets where the mask is 0
    may be NaN (:func:`finite_targets`).

    For an ensemble (leaky RNNs, GRUs, PLRNNs, ALRNNs or shallow PLRNNs) every tensor field has a
    leading network dim (each network forced through its own readout, at the one ``strength``):
    ``targets`` (network, batch, time, output), ``mask`` (network, batch, time, output or 1),
    ``w_out`` (network, output, state), ``b_out`` (network, output), ``pinv`` (network, state, output).

    Attributes
    ----------
    method : {"error", "teacher"}
    strength : float
        In [0, 1].
    targets : Tensor, shape (batch, time, output)
    mask : Tensor, shape (batch, time, output) or (batch, time, 1)
    w_out : Tensor, shape (output, state)
    b_out : Tensor, shape (output,)
    pinv : Tensor, shape (state, output)

    Examples
    --------
    Error forcing with ``c = 1`` onto outputs of 1: the states are returned before forcing, each
    step starting from the forced state, whose readout hits the target:

    >>> import torch
    >>> from neurodyn.kernels import fused_states
    >>> from neurodyn.kernels.fused import ReadoutForcing
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(1, 6, 1, alpha=0.5, seed=0).double()
    >>> p = model.params()
    >>> x = torch.randn(2, 5, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> ones = torch.ones(2, 5, 1, dtype=torch.float64)
    >>> forcing = ReadoutForcing("error", 1.0, ones, ones, p.w_out, p.b_out, torch.linalg.pinv(p.w_out))
    >>> states = fused_states(p, model.initial_state(2), x, forcing=forcing)
    >>> free = fused_states(p, model.initial_state(2), x)
    >>> bool(torch.equal(states[:, 0], free[:, 0])), bool(torch.allclose(states[:, 1:], free[:, 1:]))
    (True, False)
    >>> h = states[:, 0] + (ones[:, 0] - model.readout(states[:, 0])) @ forcing.pinv.T  # the forced state
    >>> bool(torch.allclose(states[:, 1], model.step(h, x[:, 1]), atol=1e-12))
    True
    """

    method: str
    strength: float
    targets: torch.Tensor
    mask: torch.Tensor
    w_out: torch.Tensor
    b_out: torch.Tensor
    pinv: torch.Tensor


def finite_targets(targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The forcing ``targets`` with their non-finite entries where ``mask`` is 0 set to 0: nothing is
    forced there, and a NaN left in them would reach every state through the forcing's product.

    Parameters
    ----------
    targets : Tensor, shape (..., output)
    mask : Tensor, shape (..., output) or (..., 1)
        0 where a target does not count.

    Returns
    -------
    Tensor, shape of ``targets``
        ``targets`` itself when all are finite.

    Raises
    ------
    ValueError
        If a target is NaN or infinite where the mask counts it.

    Examples
    --------
    >>> import torch
    >>> finite_targets(torch.tensor([[1.0, float("nan")]]), torch.tensor([[1.0, 0.0]])).tolist()
    [[1.0, 0.0]]
    """
    bad = ~torch.isfinite(targets)
    if not bool(bad.any()):
        return targets
    if bool((bad & (mask != 0)).any()):
        raise ValueError("forcing targets are NaN or infinite where the mask counts them; give finite "
                         "targets or set the mask to 0 there")
    return torch.where(bad, torch.zeros_like(targets), targets)


def fused_backend(params: Any, *, backend: str = "auto", device: Any = "cpu",
                  dtype: torch.dtype = torch.float32, state_hook: Any = None,
                  forcing: bool | str = False) -> str:
    """The backend a training rollout of ``params`` runs on: ``"numba"``, ``"triton"`` (fused) or ``"torch"``.

    Parameters
    ----------
    params : params NamedTuple
        A model's ``params()`` or ensemble params; the families of :data:`FUSED_FAMILIES` (leaky
        RNN, GRU, PLRNN, ALRNN, shallow PLRNN plain or clipped) have a fused kernel for one
        network and for an ensemble on the CPU. Every other family (LSTM, low-rank, ...)
        falls back to torch under ``auto``.
    backend : {"auto", "torch", "numba", "triton"}
        ``auto`` takes the fused Numba path for a supported family on the CPU in float32/float64
        without a ``state_hook`` (a Python call per step cannot run inside the kernel), on a CUDA
        device the fused Triton path for a float32 leaky RNN, GRU, PLRNN, ALRNN or shallow PLRNN (one
        network or an ensemble) of at most 64 units (the shallow PLRNN: 64 latent and 64 hidden units)
        without hook, unforced, (the shallow PLRNN, one network) state-forced or (the leaky RNN, one
        network or an ensemble, at most 32 outputs) forced through the readout (a GRU forced through
        its readout runs on torch there), and torch otherwise; ``torch`` always runs the reference;
        ``numba`` and ``triton`` insist on their fused path (``triton`` on the CPU only under
        ``TRITON_INTERPRET=1``, for testing).
    device, dtype
        Where and in which dtype the rollout runs.
    state_hook : callable or None
        The training ``state_hook``; any hook rules the fused path out.
    forcing : bool or {"state", "readout"}
        Whether the rollout is forced: ``True`` or ``"state"``, teacher forcing of the state
        towards data (fused for one network: a shallow PLRNN in Numba or Triton, a PLRNN or
        ALRNN in Numba; ensembles, and the PLRNN and ALRNN on a CUDA device, run on torch);
        ``"readout"``, error or teacher forcing through the readout (:class:`ReadoutForcing`;
        fused for the leaky RNN, GRU, PLRNN, ALRNN and shallow PLRNN, one network or an ensemble, in
        Numba, and for
        the leaky RNN in Triton too, with a readout of at most 32 outputs; the others on a CUDA
        device run on torch).

    Returns
    -------
    str
        ``"numba"``, ``"triton"`` or ``"torch"``.

    Raises
    ------
    ValueError
        For an unknown ``backend``, a ``device`` that is not a torch device (e.g. ``"gpu"``), or
        ``backend="numba"`` / ``"triton"`` where that fused path cannot run (the message names the
        reason and suggests ``backend="auto"``).
    ImportError
        For ``backend="numba"`` without Numba, ``backend="triton"`` without Triton installed.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import fused_backend
    >>> from neurodyn.models import GRU, LSTM, LeakyRNN
    >>> fused_backend(LeakyRNN(1, 4, 1).params()), fused_backend(GRU(1, 4, 1).params())
    ('numba', 'numba')
    >>> fused_backend(LSTM(1, 4, 1).params()), fused_backend(LeakyRNN(1, 4, 1).params(), backend="torch")
    ('torch', 'torch')
    >>> from neurodyn.kernels import stack_params
    >>> fused_backend(stack_params([LeakyRNN(1, 4, 1, seed=s) for s in range(3)]))  # ensembles
    'numba'
    >>> fused_backend(stack_params([GRU(1, 4, 1, seed=s) for s in range(3)]))
    'numba'
    >>> fused_backend(LeakyRNN(1, 4, 1).params(), forcing="readout"), fused_backend(GRU(1, 4, 1).params(),
    ...                                                                             forcing="readout")
    ('numba', 'numba')
    >>> fused_backend(stack_params([GRU(1, 4, 1, seed=s) for s in range(3)]), forcing="readout")
    'numba'

    Teacher forcing of the state (``fit_teacher_forcing``) runs fused for one PLRNN or ALRNN too:

    >>> from neurodyn.models import ALRNN, PLRNN
    >>> fused_backend(PLRNN(0, 4, 2).params(), forcing=True), fused_backend(ALRNN(0, 4, 2, n_relu=2).params(),
    ...                                                                     forcing=True)
    ('numba', 'numba')

    and so does forcing through the readout (task training with error or teacher forcing), for one
    PLRNN, ALRNN or shallow PLRNN or an ensemble:

    >>> from neurodyn.models import ShallowPLRNN
    >>> fused_backend(PLRNN(1, 4, 2).params(), forcing="readout")
    'numba'
    >>> fused_backend(ShallowPLRNN(1, 4, 2, n_hidden=8, clipped=True).params(), forcing="readout")
    'numba'
    >>> fused_backend(stack_params([ALRNN(1, 4, 2, n_relu=2, seed=s) for s in range(3)]), forcing="readout")
    'numba'

    On a CUDA device (only the device type is read, so this runs without a GPU) a float32 leaky RNN,
    GRU, PLRNN, ALRNN or shallow PLRNN gets ``'triton'`` where Triton is installed (``'torch'``
    without it), the shallow PLRNN state-forced too, and so does a leaky RNN forced through its
    readout:

    >>> from neurodyn.models import ShallowPLRNN
    >>> from neurodyn.kernels._api import backend_available
    >>> want = "triton" if backend_available("triton") else "torch"
    >>> fused_backend(ShallowPLRNN(1, 4, 1, n_hidden=8).params(), device="cuda", forcing=True) == want
    True
    >>> fused_backend(LeakyRNN(1, 4, 1).params(), device="cuda", forcing="readout") == want
    True
    >>> fused_backend(GRU(1, 4, 1).params(), device="cuda", forcing="readout")  # Triton: the leaky RNN only
    'torch'
    """
    if backend not in _TRAIN_BACKENDS:
        raise ValueError(f"unknown training backend {backend!r}; choose one of {', '.join(_TRAIN_BACKENDS)}")
    device = check_device(device, available=False)
    if backend == "torch":
        return "torch"
    family = family_of(params)
    if backend == "triton" or (backend == "auto" and torch.device(device).type == "cuda"):
        return _triton_backend(params, family, backend, device, dtype, state_hook, forcing)
    reason = None
    if family is None or family.name not in FUSED_FAMILIES:
        name = type(params).__name__ if family is None else family.name
        reason = f"model family {name!r} has no fused training kernel (fused: {', '.join(FUSED_FAMILIES)})"
    elif forcing and family.name not in _FORCINGS[_forcing_kind(forcing)]:
        kind = _forcing_kind(forcing)
        reason = _forcing_refusal(kind, _FORCINGS[kind], family.name)
    elif forcing and _forcing_kind(forcing) == "state" and is_ensemble(params, family):
        reason = "state-forced rollouts are fused for one network, not an ensemble"
    elif torch.device(device).type != "cpu":
        reason = f"the fused Numba kernel runs on the CPU, not {torch.device(device)}"
    elif dtype not in (torch.float32, torch.float64):
        reason = f"the fused kernel runs float32 or float64, not {dtype}"
    elif state_hook is not None:
        reason = "a state_hook runs Python at every step, which the fused kernel cannot"
    if reason is None and not backend_available("numba"):
        if backend == "numba":
            raise ImportError("backend 'numba' is not installed; pip install numba")
        reason = "numba is not installed"
    if reason is None:
        return "numba"
    if backend == "numba":
        raise ValueError(f"backend='numba' cannot train this model: {reason}; use backend='auto'")
    return "torch"


def fuses_outputs(params: Any, backend: str) -> bool:
    """Whether :func:`fused_states` forms the readout inside its loops (``outputs=True``) for ``params``
    on ``backend`` (what :func:`fused_backend` returned): the leaky RNN on Numba, one network or an
    ensemble.

    Examples
    --------
    >>> from neurodyn.kernels.fused import fuses_outputs
    >>> from neurodyn.models import GRU, LeakyRNN
    >>> fuses_outputs(LeakyRNN(1, 4, 1).params(), "numba"), fuses_outputs(GRU(1, 4, 1).params(), "numba")
    (True, False)
    """
    family = family_of(params)
    return backend == "numba" and family is not None and family.name == "leaky"


def _triton_backend(params, family, backend, device, dtype, state_hook, forcing) -> str:
    """``"triton"`` where the Triton training kernels run (CUDA, or the CPU under ``TRITON_INTERPRET=1``),
    else ``"torch"`` under ``auto`` and a ``ValueError`` / ``ImportError`` naming the reason under
    ``triton``."""
    name = family.name if family is not None else type(params).__name__
    reason = None
    kind = _forcing_kind(forcing) if forcing else None
    if kind is not None and name not in _TRITON_FORCINGS[kind]:
        reason = _forcing_refusal(kind, _TRITON_FORCINGS[kind], name) + (
            ", in Triton (the GRU's runs fused in Numba on the CPU)" if name == "gru" else "")
    elif kind == "state" and is_ensemble(params, family):
        reason = "state-forced rollouts are fused for one network, not an ensemble"
    elif state_hook is not None:
        reason = "a state_hook runs Python at every step, which the fused kernel cannot"
    elif not backend_available("triton"):
        if backend == "triton":
            raise ImportError("backend 'triton' is not installed; pip install 'neurodyn[gpu]'")
        reason = "triton is not installed"
    else:
        from neurodyn.kernels._triton_backend import FORCING_MAX_OUTPUTS, interpreting, train_supports

        reason = train_supports(name, params, dtype)
        if reason is None and kind == "readout" and params.w_out.shape[-2] > FORCING_MAX_OUTPUTS:
            reason = (f"forcing through the readout on Triton holds at most {FORCING_MAX_OUTPUTS} outputs "
                      f"on chip (got {params.w_out.shape[-2]}); use backend='torch'")
        if reason is None and torch.device(device).type != "cuda" and not interpreting():
            reason = (f"the Triton kernels need a CUDA device (or TRITON_INTERPRET=1), "
                      f"not {torch.device(device)}")
    if reason is None:
        return "triton"
    if backend == "triton":
        hint = "" if "use backend" in reason else "; use backend='auto'"
        raise ValueError(f"backend='triton' cannot train this model: {reason}{hint}")
    return "torch"


def _forcing_kind(forcing: bool | str) -> str:
    """``"state"`` or ``"readout"`` for a truthy ``forcing`` of :func:`fused_backend`."""
    kind = "state" if forcing is True else forcing
    if kind not in _FORCINGS:
        raise ValueError(f"unknown forcing {forcing!r}; choose True, 'state' or 'readout'")
    return kind


def fused_states(params: Any, h0: torch.Tensor, inputs: torch.Tensor | None = None, *,
                 noise: torch.Tensor | None = None, forcing: tuple | None = None,
                 backend: str = "auto",
                 outputs: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Differentiable rollout with the time loop and its BPTT in Numba or Triton (leaky RNN, GRU, PL family).

    Leaky RNN: ``h[t+1] = (1 - alpha) h[t] + alpha phi(W_rec h[t] + W_in u[t] + b) + noise[t]``,
    the map of :func:`neurodyn.models.leaky_rnn_step` plus the additive noise, so with the noise
    the model itself draws (``model.noise_scale`` times its standard-normal draws) this equals
    ``model(inputs, h0).states`` within float tolerance, gradients included. GRU (Cho et al. 2014;
    :func:`neurodyn.models.gru_step`, torch's ``GRUCell``), PLRNN (Durstewitz 2017;
    :func:`neurodyn.models.plrnn_step`) and ALRNN (Brenner et al., NeurIPS 2024;
    :func:`neurodyn.models.alrnn_step`): ``h[t+1] = F(h[t], u[t]) + noise[t]``, the same equality.
    Shallow PLRNN (plain
    or clipped): ``p[t] = F(c[t], u[t])`` (:func:`neurodyn.models.shplrnn_step`), then
    ``z = p[t] + noise[t]`` and, with ``forcing``, the (generalised) teacher forcing
    ``c[t+1] = z + alphas[t] mask (target[t] - z)`` (Mikhaeil et al., NeurIPS 2022; Hess et al.,
    ICML 2023) — the step of ``neurodyn.training.teacher_forcing.forced_rollout``; without
    ``forcing`` the states ``p[t] + noise[t]`` are returned (the model's own rollout). A PLRNN or
    ALRNN (one network, Numba) takes the same ``forcing``, with ``p[t] = F(c[t], u[t])`` its own step,
    and then returns the predictions ``p[t]`` too. A leaky RNN, GRU, PLRNN, ALRNN or shallow PLRNN
    with a :class:`ReadoutForcing` is forced through its readout after each step (and its noise),
    error or teacher forcing as in :func:`neurodyn.training.forcing.forced_task_rollout`, and the
    states *before* forcing are returned (what the task loss sees); the rollout continues from the
    forced state, and the backward accounts for the forcing's Jacobian.

    Parameters
    ----------
    params : LeakyRNNParams, GRUParams, PLRNNParams, ALRNNParams or ShallowPLRNNParams
        Effective parameters of one network (``model.params()``), or ensemble params of any of
        these families whose tensor fields have a leading ``network`` dim (then every shape below
        has it too: ``h0`` (network, batch, state), ...; of ``forcing``, a stacked
        :class:`ReadoutForcing` of any of them); gradients flow to every
        weight and bias the step uses (``w_rec``, ``w_in``, ``b``; ``w_ih``, ``w_hh``, ``b_ih``,
        ``b_hh``; ``A``, ``W``, ``h``, ``C``; ``a``, ``W1``, ``W2``, ``h1``, ``h2``) and through
        them to the model's raw parameters (masks, Dale's law, a diagonal ``A``).
    h0 : Tensor, shape (batch, state)
        Initial state, CPU (float32 or float64) or CUDA (float32), the dtype of the rollout; may
        require grad.
    inputs : Tensor, shape (batch, time, input), optional
        External input; sets the number of steps (else the forcing targets do, and the rollout runs
        without external input, as with zero inputs).
    noise : Tensor, shape (batch, time, state), optional
        Additive state noise of each step, already scaled (no gradient flows to it). Giving it as
        a tensor keeps the rollout reproducible and equal across backends.
    forcing : (targets, alphas, mask) or ReadoutForcing, optional
        Shallow PLRNN, PLRNN or ALRNN (one network; the PLRNN and ALRNN in Numba only):
        ``targets`` (batch, time, state) without grad, ``alphas`` (time,) forcing strengths in
        [0, 1], ``mask`` (state,) 0/1 of the forced states. Leaky RNN, GRU, PLRNN, ALRNN or shallow PLRNN (one
        network or an ensemble; all but the leaky RNN in Numba only): a :class:`ReadoutForcing` (no
        gradient flows to its fields).
    backend : {"auto", "numba", "triton"}
        ``auto``: Triton for CUDA tensors, Numba for CPU ones (state forcing of the shallow PLRNN and
        a ReadoutForcing of the leaky RNN run on both; state forcing of the PLRNN and ALRNN and a
        ReadoutForcing of the GRU, PLRNN, ALRNN and shallow PLRNN on Numba only); ``triton`` on CPU
        tensors runs only under ``TRITON_INTERPRET=1`` (Triton's interpreter, for tests).
    outputs : bool
        Leaky RNN on Numba only (:func:`fuses_outputs`): also return the readout
        ``states @ w_out.T + b_out`` of the states returned, formed inside the time loop while each
        state is in cache, with its backward (``w_out`` and ``b_out`` gradients, and the gradient it
        sends to the states) inside the BPTT loop; this spares the three passes over the whole
        (batch, time, state) array that a readout after the rollout takes (forward, state gradient,
        ``w_out`` gradient). Equals ``model.readout(states)`` within float rounding.

    Returns
    -------
    Tensor, shape (batch, time, state) or (network, batch, time, state)
        The state after each step, or with ``forcing`` the prediction ``p[t]`` before noise and
        forcing (shallow PLRNN, PLRNN, ALRNN) or, with a :class:`ReadoutForcing`, the state before
        forcing (leaky RNN, GRU, PLRNN, ALRNN, shallow PLRNN).
    (states, outputs) : tuple of Tensor, with ``outputs``
        The states as above and their readout, shape (batch, time, output) or (network, batch, time,
        output).

    Raises
    ------
    TypeError
        If ``params`` is a model or anything but a params NamedTuple (pass ``model.params()``), or
        ``h0``, ``inputs`` or ``noise`` is not a torch tensor.
    ValueError
        If the family, device or dtype is not
        supported (see :func:`fused_backend`; ``h0`` not float32 or float64), a shape does not
        match (``h0``'s last dim not the model's state size, ``inputs``' not its input count),
        forcing is given for a family other than the shallow
        PLRNN, PLRNN and ALRNN (state forcing; the PLRNN and ALRNN not on Triton) or the leaky RNN,
        GRU, PLRNN, ALRNN and shallow PLRNN (a ReadoutForcing; all but the leaky RNN not on Triton), state
        forcing for an ensemble,
        the forcing targets require grad, ``backend`` is unknown, or ``outputs`` is asked of a family
        or backend that does not fuse them (:func:`fuses_outputs`).

    Notes
    -----
    NaN or Inf in ``h0`` or ``inputs`` is not refused here (unlike :func:`rollout`): it runs through
    to the states, and the training engine, which calls this once per optimiser step, names
    non-finite data in its divergence report (``TrainResult.divergence``) and keeps the weights of
    the last good step.

    The forward stores what the backward needs (states and ``alpha phi'(pre)``; states and the
    GRU's gates ``r, z, n, W_hn h + b_hn``; states alone for the PLRNN / ALRNN, the carried
    (forced) ones under forcing; forced states,
    hidden activations and ReLU slopes); the backward runs the adjoint recursion backwards in
    time (backpropagation through time, Werbos 1990). The leaky RNN's input drive
    ``W_in u[t] + b`` is formed inside each step, so no (time, batch, unit) drive array exists,
    and its backward writes the pre-activation gradients, from which every weight gradient is one
    GEMM over all steps, as for the other families. GRU, PLRNN and ALRNN run one block of 4 batch
    rows per parallel Numba item (rows are independent through time), on one thread per 128 rows
    (at least one). An ensemble runs one network per parallel Numba item (threads:
    ``numba.set_num_threads``; a GRU / PL network's blocks one after the other), each network's
    weights staying in cache for its whole time loop; network ``e`` of the stack gets exactly what
    it would get alone (its input drive, formed in torch for the GRU and PL families, up to float
    rounding). float32 leaky and GRU rollouts use the kernels' rational tanh and sigmoid (absolute
    error < 4e-7), float64 the exact ones. A :class:`ReadoutForcing` of a leaky RNN, GRU, PLRNN, ALRNN
    or shallow PLRNN runs inside the same loops: each step's state (after its noise) is stored before
    forcing, then forced through the readout, and the forced state is carried on and stored for the
    backward, which passes the carried gradient through the forcing step (unchanged for error
    forcing, scaled by ``1 - c m`` per batch row for teacher forcing); unforced, the kernels take the
    same path as without forcing.

    On CUDA tensors the leaky RNN (float32, at most 64 units, one network or an ensemble) runs in
    Triton instead: one launch for the forward, storing states and ``alpha phi'(pre)``, one for BPTT,
    with the drive ``W_in u + b`` and the ``W_in``, ``b`` and input gradients formed in torch and the
    ``W_rec`` gradient reduced over batch blocks in a fixed order (deterministic). A
    :class:`ReadoutForcing` (a readout of at most 32 outputs, held on chip with its pseudo-inverse)
    runs inside those launches as in Numba: the forward stores each state before forcing, then
    forces it and carries and stores the forced one; the backward passes the carried gradient through
    the forcing step (unchanged for error forcing, scaled by ``1 - c m`` per batch row for teacher
    forcing). So do the PLRNN and ALRNN (same limits; unforced): the forward stores the states,
    the BPTT launch writes the drive gradients, and the ``A``, ``W`` and drive (``h``, ``C``,
    inputs) gradients are products of those in torch, as on the CPU. So does the GRU (same limits;
    unforced only, a GRU's ReadoutForcing runs in Numba):
    the input drive ``W_ih u + b_ih`` is formed in torch, the forward stores the states and the gates
    ``r, z, n, W_hn h + b_hn``, the BPTT launch writes the gradients of the input drive and of the
    hidden gate pre-activations, and the ``W_hh``, ``b_hh``, ``W_ih``, ``b_ih`` and input gradients are
    products of those in torch, as on the CPU. So does the shallow PLRNN, plain or clipped (latent and
    hidden sizes at most 64 each), with or without its state forcing (one network) or unforced as an
    ensemble: the forward stores the predictions, forced states, hidden activations and ``W2 c``, the
    BPTT launch writes the gradients of the predictions (also the drive's) and of ``W2 c`` and the
    ``h2`` gradient's per-block sums, and the ``a``, ``W1``, ``W2``, ``h1``, ``C`` and input
    gradients are products of those in torch, as on the CPU.

    Examples
    --------
    >>> import torch
    >>> from neurodyn.kernels import fused_states
    >>> from neurodyn.models import LeakyRNN
    >>> model = LeakyRNN(2, 8, 1, alpha=0.5, seed=0).double()
    >>> x = torch.randn(3, 20, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    >>> h0 = model.initial_state(3)
    >>> states = fused_states(model.params(), h0, x)
    >>> tuple(states.shape)  # (batch, time, unit)
    (3, 20, 8)
    >>> bool(torch.allclose(states, model(x, h0).states, atol=1e-12))
    True
    >>> states.square().sum().backward()
    >>> ref = model.w_rec.grad.clone(); model.zero_grad()
    >>> model(x, h0).states.square().sum().backward()
    >>> bool(torch.allclose(ref, model.w_rec.grad, rtol=1e-10, atol=1e-12))
    True

    A teacher-forced shallow PLRNN (forcing every state half-way to a target of zeros):

    >>> from neurodyn.models import ShallowPLRNN
    >>> p = ShallowPLRNN.from_arrays(A=[0.5], W1=[[1.0]], W2=[[1.0]], h1=[0.0], h2=[-1.0]).params()
    >>> z0 = torch.tensor([[3.0]], dtype=torch.float64)
    >>> preds = fused_states(p, z0, forcing=(torch.zeros(1, 2, 1, dtype=torch.float64), [0.5, 0.5], [1.0]))
    >>> preds.ravel().tolist()  # 0.5 * 3 + relu(3 - 1) = 3.5, forced to 1.75; then 0.875 + 0.75
    [3.5, 1.625]

    A GRU and an ALRNN equal their models' own rollouts (noise given as a tensor):

    >>> from neurodyn.models import ALRNN, GRU
    >>> noise = 0.1 * torch.randn(3, 20, 8, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    >>> for net in (GRU(2, 8, 1, seed=0).double(), ALRNN(2, 8, 1, n_relu=3, seed=0).double()):
    ...     h, ref = net.initial_state(3), []
    ...     for t in range(20):
    ...         h = net.step(h, x[:, t]) + noise[:, t]
    ...         ref.append(h)
    ...     got = fused_states(net.params(), net.initial_state(3), x, noise=noise)
    ...     print(type(net).__name__, bool(torch.allclose(got, torch.stack(ref, dim=1), atol=1e-12)))
    GRU True
    ALRNN True

    An ensemble of leaky RNNs in one call (any fused family works the same way); network 1 equals the
    network run alone:

    >>> from neurodyn.kernels import stack_params
    >>> nets = [LeakyRNN(2, 8, 1, alpha=0.5, seed=s).double() for s in range(3)]
    >>> xs = torch.randn(3, 4, 20, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    >>> stack = fused_states(stack_params(nets), torch.zeros(3, 4, 8, dtype=torch.float64), xs)
    >>> tuple(stack.shape)  # (network, batch, time, unit)
    (3, 4, 20, 8)
    >>> bool(torch.allclose(stack[1], fused_states(nets[1].params(), stack.new_zeros(4, 8), xs[1])))
    True
    """
    if backend not in ("auto", "numba", "triton"):
        raise ValueError(f"unknown fused backend {backend!r}; choose 'auto', 'numba' or 'triton'")
    if isinstance(params, torch.nn.Module) or not hasattr(params, "_fields"):
        what = "not the model" if isinstance(params, torch.nn.Module) else "a params NamedTuple"
        raise TypeError(f"fused_states takes model.params(), {what}; got {type(params).__name__}: pass "
                        "model.params() (or stack_params(...) for an ensemble)")
    for name, value in (("h0", h0), ("inputs", inputs), ("noise", noise)):
        if value is not None and not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}; "
                            f"convert it with torch.as_tensor")
    if h0.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"the fused kernels run float32 or float64, not {h0.dtype}; convert h0 "
                         "(h0.float() or h0.double())")
    family = family_of(params)
    if forcing is not None and not isinstance(forcing, ReadoutForcing) and (
            not isinstance(forcing, (tuple, list)) or len(forcing) != 3):
        raise TypeError("forcing is (targets, alphas, mask) for state forcing or a ReadoutForcing(...) for "
                        f"forcing through the readout, got {type(forcing).__name__}"
                        + (f" of {len(forcing)} fields" if isinstance(forcing, (tuple, list)) else ""))
    if (forcing is not None and not isinstance(forcing, ReadoutForcing) and family is not None
            and is_ensemble(params, family)):
        raise ValueError("state-forced rollouts are fused for one network, not an ensemble; force each "
                         "network alone")
    want = ("triton" if h0.device.type == "cuda" else "numba") if backend == "auto" else backend
    ran = fused_backend(params, backend=want, device=h0.device, dtype=h0.dtype,
                        forcing=False if want != "triton" or forcing is None else
                        "readout" if isinstance(forcing, ReadoutForcing) else "state")
    lead = (getattr(params, family.recurrent).shape[0],) if is_ensemble(params, family) else ()
    dims = "(network, batch, state)" if lead else "(batch, state)"
    if h0.ndim != 2 + len(lead) or tuple(h0.shape[:len(lead)]) != lead:
        raise ValueError(f"h0 must have shape {dims}{' with ' + str(lead[0]) + ' networks' if lead else ''}, "
                         f"got {tuple(h0.shape)}")
    n_state, n_batch = h0.shape[-1], h0.shape[-2]
    if n_state != family.n_state(params):
        raise ValueError(f"h0 must have shape {dims} with state = {family.n_state(params)} "
                         f"(the {family.name!r} model's state size), got {tuple(h0.shape)}")
    if inputs is None and forcing is None:
        raise ValueError("give inputs (batch, time, input) or forcing targets to set the number of steps")
    readout = isinstance(forcing, ReadoutForcing)
    if readout:
        _check_readout_fields(forcing)
    if inputs is not None:  # the drive is formed in the parameters' dtype, then run in h0's
        inputs = inputs.to(getattr(params, family.recurrent).dtype)
    n_steps = (inputs if inputs is not None else forcing.targets if readout else forcing[0]).shape[-2]
    if inputs is not None and (inputs.ndim != 3 + len(lead) or tuple(inputs.shape[:-2]) != (*lead, n_batch)):
        raise ValueError(f"inputs must have shape {(*lead, n_batch)} + (time, input), "
                         f"got {tuple(inputs.shape)}")
    if inputs is not None and inputs.shape[-1] != family.n_inputs(params):
        raise ValueError(f"inputs must have shape {(*lead, n_batch)} + (time, {family.n_inputs(params)}) "
                         f"(the {family.name!r} model's input count), got {tuple(inputs.shape)}")
    shape = (*lead, n_batch, n_steps, n_state)
    if noise is not None and tuple(noise.shape) != shape:
        raise ValueError(f"noise must have shape {shape} ({dims[1:-1].replace('state', 'time, state')}), "
                         f"got {tuple(noise.shape)}")
    # time-major (time, batch, state) throughout, so each kernel step reads one contiguous slab
    u = None if inputs is None else inputs.transpose(-3, -2)
    if u is None and family.name in ("leaky", "gru"):  # their kernels read an input array: zeros
        u = h0.new_zeros((*lead, n_steps, n_batch, family.n_inputs(params)))
    xi = None if noise is None else noise.transpose(-3, -2)
    if outputs and not (family.name == "leaky" and ran != "triton"):
        raise ValueError(f"outputs=True is fused for the leaky RNN on Numba only, not a {family.name!r} "
                         f"model on {ran}; apply the model's readout to the states instead")
    if family.name == "leaky":
        if forcing is not None and not readout:
            raise ValueError("state forcing (targets, alphas, mask) is fused for the shallow PLRNN, "
                             "PLRNN and ALRNN only; a leaky RNN takes a ReadoutForcing")
        stacked = None if forcing is None else _stack_readout_forcing(forcing, shape, h0)
        extra = {"outputs": True} if outputs else {}
        recurrence = _fa.leaky_triton if ran == "triton" else _fa.leaky
        if lead:
            got = recurrence(params, h0, u, xi, stacked, **extra)
            return tuple(t.transpose(1, 2) for t in got) if outputs else got.transpose(1, 2)
        one = params._replace(w_in=params.w_in[None], w_rec=params.w_rec[None], b=params.b[None],
                              w_out=params.w_out[None], b_out=params.b_out[None])
        # squeeze, not [0]: its backward is a view, where indexing's fills a zero gradient to copy into
        got = recurrence(one, h0[None], u[None], None if xi is None else xi[None], stacked, **extra)
        return tuple(t.squeeze(0).transpose(0, 1) for t in got) if outputs else got.squeeze(0).transpose(0, 1)
    if family.name in ("plrnn", "alrnn") and forcing is not None and not readout:
        target, alphas, mask = _check_forcing(forcing, shape, h0)
        return _fa.piecewise(params, h0, u, xi, (target, alphas, mask)).transpose(-3, -2)
    if family.name == "gru" and readout:  # forced through the readout in Numba (Triton refused above)
        return _fa.gru(params, h0, u, xi, _stack_readout_forcing(forcing, shape, h0)).transpose(-3, -2)
    if family.name in ("plrnn", "alrnn") and readout:
        stacked = _stack_readout_forcing(forcing, shape, h0)
        return _fa.piecewise(params, h0, u, xi, readout=stacked).transpose(-3, -2)
    if family.name == "shplrnn" and readout:  # forced through the readout in Numba (Triton refused above)
        target, alphas, mask = _check_forcing(None, shape, h0)
        stacked = _stack_readout_forcing(forcing, shape, h0)
        return _fa.shallow(params, h0, u, xi, target, alphas, mask, readout=stacked).transpose(-3, -2)
    if family.name != "shplrnn":
        if forcing is not None:
            raise ValueError("state forcing is fused for the shallow PLRNN, PLRNN and ALRNN only; "
                             f"drop it for a {family.name!r} model")
        recurrence = _TRITON_RECURRENCES[family.name] if ran == "triton" else _RECURRENCES[family.name]
        return recurrence(params, h0, u, xi).transpose(-3, -2)
    target, alphas, mask = _check_forcing(forcing, shape, h0)
    fn = _fa.shallow_triton if ran == "triton" else _fa.shallow
    preds = fn(params, h0, u, xi, target, alphas, mask).transpose(-3, -2)
    # without forcing the carried states are the predictions plus the noise
    return preds + noise if forcing is None and noise is not None else preds


#: the one-network recurrences of the families fused for ``train`` (besides the leaky RNN)
_RECURRENCES = {"gru": _fa.gru, "plrnn": _fa.piecewise, "alrnn": _fa.piecewise}
#: those of them with Triton training kernels (one network or an ensemble)
_TRITON_RECURRENCES = {"gru": _fa.gru_triton, "plrnn": _fa.piecewise_triton, "alrnn": _fa.piecewise_triton}


def _stack_readout_forcing(forcing: ReadoutForcing, shape: tuple, h0: torch.Tensor) -> ReadoutForcing:
    """``forcing`` checked, detached, in the dtype of ``h0``, targets and mask time-major, every
    field with a leading network dim (of 1 for one network; what :func:`_fused_autograd.leaky`
    takes). ``shape`` is the states' ([network,] batch, time, state)."""
    *lead, n_batch, n_steps, n_state = shape
    lead = tuple(lead)
    if forcing.method not in ("error", "teacher"):
        raise ValueError(f"unknown forcing method {forcing.method!r}; choose 'error' or 'teacher'")
    if not 0.0 <= float(forcing.strength) <= 1.0:
        raise ValueError(f"forcing strength must be in [0, 1], got {forcing.strength}")
    if forcing.w_out.ndim != len(lead) + 2 or forcing.w_out.shape[-1] != n_state:  # named before the targets
        want = (*lead, forcing.targets.shape[-1], n_state)
        raise ValueError(f"ReadoutForcing.w_out must have shape {want}, got {tuple(forcing.w_out.shape)}")
    n_out = forcing.w_out.shape[-2]
    expected = {"targets": (*lead, n_batch, n_steps, n_out), "w_out": (*lead, n_out, n_state),
                "b_out": (*lead, n_out), "pinv": (*lead, n_state, n_out)}
    for name, want in expected.items():
        if tuple(getattr(forcing, name).shape) != want:
            raise ValueError(f"ReadoutForcing.{name} must have shape {want}, got "
                             f"{tuple(getattr(forcing, name).shape)}")
    masks = ((*lead, n_batch, n_steps, n_out), (*lead, n_batch, n_steps, 1))
    if tuple(forcing.mask.shape) not in masks:
        raise ValueError(f"ReadoutForcing.mask must have shape {masks[0]} or {masks[1]}, "
                         f"got {tuple(forcing.mask.shape)}")
    fields = {k: getattr(forcing, k).detach().to(h0.dtype) for k in ("w_out", "b_out", "pinv")}
    forcing = forcing._replace(targets=finite_targets(forcing.targets.detach(), forcing.mask.detach()))
    time_major = {k: getattr(forcing, k).detach().to(h0.dtype).transpose(-3, -2) for k in ("targets", "mask")}
    return forcing._replace(**{k: v if lead else v[None] for k, v in {**fields, **time_major}.items()})


def _check_readout_fields(forcing: ReadoutForcing) -> None:
    """A one-line ``TypeError`` unless the tensor fields of ``forcing`` are tensors and its strength a
    number."""
    for name in ("targets", "mask", "w_out", "b_out", "pinv"):
        value = getattr(forcing, name)
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"ReadoutForcing.{name} must be a torch.Tensor, got {type(value).__name__}; "
                            "convert it with torch.as_tensor")
    strength = forcing.strength
    if isinstance(strength, (bool, str, bytes)) or not hasattr(strength, "__float__"):
        raise TypeError(f"ReadoutForcing.strength must be a number in [0, 1], got {type(strength).__name__} "
                        f"{strength!r}")


def _check_forcing(forcing, shape, h0):
    """Forcing as time-major detached targets, a (time,) alpha tensor and a (state,) mask."""
    if forcing is None:  # shape: ([network,] batch, time, state); the targets time-major
        *lead, n_batch, n_steps, n_state = shape
        return (h0.new_zeros((*lead, n_steps, n_batch, n_state)), h0.new_zeros(n_steps),
                h0.new_zeros(n_state))
    target, alphas, mask = forcing
    if tuple(target.shape) != shape:
        raise ValueError(f"forcing targets must have shape {shape} (batch, time, state), "
                         f"got {tuple(target.shape)}")
    if target.requires_grad:
        raise ValueError("forcing targets must not require grad (detach them, as teacher forcing does)")
    alphas = torch.as_tensor(alphas, dtype=h0.dtype).reshape(-1)
    mask = torch.as_tensor(mask, dtype=h0.dtype).reshape(-1)
    if alphas.numel() != shape[1] or mask.numel() != shape[2]:
        raise ValueError(f"forcing needs {shape[1]} alphas (one per step) and a mask of {shape[2]} "
                         f"states, got {alphas.numel()} and {mask.numel()}")
    return target.detach().transpose(0, 1), alphas, mask
