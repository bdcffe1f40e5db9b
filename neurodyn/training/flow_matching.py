"""A continuous normalising flow over vectors, trained by flow matching (Lipman et al., ICLR 2023).

The flow carries a standard normal base ``x0 ~ N(0, I)`` at ``t = 0`` to the data at ``t = 1``
along ``dx/dt = v(x, t)``, a small MLP. Training regresses ``v`` on the conditional optimal-transport
velocity ``x1 - (1 - sigma_min) x0`` at ``x_t = (1 - (1 - sigma_min) t) x0 + t x1`` (the
"conditional flow matching" loss, no ODE solve in training), through the one training engine.
Sampling and densities integrate the ODE with a fixed-step fourth-order Runge-Kutta scheme (the
field is a smooth MLP in a few dimensions, so a fixed step is enough; ``n_steps`` sets it);
densities add the instantaneous change of variables ``d log p / dt = -div v`` (Chen et al.,
NeurIPS 2018) with the divergence computed exactly, one autograd pass per dimension.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import nn

from neurodyn._budget import check_memory
from neurodyn._checks import check_finite
from neurodyn._result import TorchResult
from neurodyn._seed import SeedLike, resolve_seed, torch_generator
from neurodyn.training import _engine
from neurodyn.training._config import TrainConfig, check_setting

__all__ = ["LoadingFlow", "fit_flow_matching"]

#: a fitted flow whose samples' standardised mean or covariance is off by more than this is
#: reported as not converged (status "not_converged" and a RuntimeWarning)
MOMENT_TOLERANCE = 0.15


class _Field(nn.Module):
    """The vector field ``v(x, t)``: an MLP on ``[x, t, sin 2 pi t, cos 2 pi t]``."""

    def __init__(self, dim: int, hidden: int, n_layers: int, gen: torch.Generator) -> None:
        super().__init__()
        sizes = [dim + 3] + [hidden] * n_layers + [dim]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        with torch.no_grad():
            for layer in self.layers:
                bound = 1.0 / math.sqrt(layer.in_features)
                layer.weight.uniform_(-bound, bound, generator=gen)
                layer.bias.zero_()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        t = t.expand(x.shape[0], 1)
        h = torch.cat([x, t, torch.sin(2 * math.pi * t), torch.cos(2 * math.pi * t)], dim=1)
        for layer in self.layers[:-1]:
            h = nn.functional.silu(layer(h))
        return self.layers[-1](h)


@dataclass(frozen=True, eq=False)
class LoadingFlow(TorchResult):
    """A fitted flow-matching density over vectors (dim,), e.g. per-neuron loading vectors.

    Made by :func:`fit_flow_matching`; works in standardised coordinates (``mean``, ``scale``)
    and maps back. ``status`` is ``"completed"``, ``"not_converged"`` (samples miss the data's
    standardised moments by more than ``MOMENT_TOLERANCE``; ``moment_error`` says by how much)
    or ``"diverged"`` (training met NaN/Inf); ``history`` is the engine's per-epoch loss.
    :meth:`save` writes a ``.pt`` file (format ``neurodyn.loading_flow``) that :meth:`load` and
    :func:`neurodyn.io.load` read back with ``torch.load(weights_only=True)``; the loaded flow
    gives the same draws for the same seed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import torch
    >>> data = torch.randn(500, 2, generator=torch.Generator().manual_seed(0)) * 2.0 + 1.0
    >>> flow = fit_flow_matching(data, n_epochs=30, seed=0)
    >>> flow.status, tuple(flow.sample(3, seed=1).shape), tuple(flow.log_prob(data[:4]).shape)
    ('completed', (3, 2), (4,))
    >>> path = flow.save(pathlib.Path(tempfile.mkdtemp()) / "flow.pt")
    >>> bool(torch.equal(LoadingFlow.load(path).sample(3, seed=1), flow.sample(3, seed=1)))
    True
    """

    FORMAT: ClassVar[str] = "neurodyn.loading_flow"
    FORMAT_VERSION: ClassVar[int] = 1

    field: nn.Module
    mean: torch.Tensor
    scale: torch.Tensor
    names: tuple[str, ...]
    n_steps: int
    seed: int
    status: str
    moment_error: float
    history: dict[str, list[Any]] = field(repr=False)
    config: dict[str, Any] = field(repr=False)

    @property
    def dim(self) -> int:
        return int(self.mean.shape[0])

    def _integrate(self, x: torch.Tensor, *, reverse: bool,
                   density: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """RK4 from t = 0 to 1 (or 1 to 0 when ``reverse``), with ``-int div v dt`` when ``density``."""
        h = (-1.0 if reverse else 1.0) / self.n_steps
        t0 = 1.0 if reverse else 0.0
        logdet = x.new_zeros(x.shape[0])

        def rhs(y: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
            tt = y.new_full((1, 1), t)
            if not density:
                return self.field(y, tt), logdet
            with torch.enable_grad():
                y = y.detach().requires_grad_(True)
                v = self.field(y, tt)
                div = sum(torch.autograd.grad(v[:, d].sum(), y, retain_graph=d < self.dim - 1)[0][:, d]
                          for d in range(self.dim))
            return v.detach(), div.detach()

        with torch.no_grad():
            for k in range(self.n_steps):
                t = t0 + k * h
                k1, d1 = rhs(x, t)
                k2, d2 = rhs(x + 0.5 * h * k1, t + 0.5 * h)
                k3, d3 = rhs(x + 0.5 * h * k2, t + 0.5 * h)
                k4, d4 = rhs(x + h * k3, t + h)
                x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                logdet = logdet + h / 6 * (d1 + 2 * d2 + 2 * d3 + d4)
        return x, logdet

    def sample(self, n_samples: int, *, seed: SeedLike = 0) -> torch.Tensor:
        """``n_samples`` draws, float64, shape (sample, dim); same seed ⇒ same draws.

        Raises ``ValueError`` for ``n_samples`` not an integer >= 1 or too many to hold in memory.
        """
        check_setting("n_samples", n_samples, 1, integer=True)
        check_memory("LoadingFlow.sample", 8.0 * n_samples * self.dim * 6,
                     f"{n_samples} samples x {self.dim} dims x 8 bytes x 6 copies (RK4 stages)",
                     "draw fewer samples, in chunks")
        x0 = torch.randn(int(n_samples), self.dim, generator=torch_generator(seed), dtype=torch.float64)
        x1, _ = self._integrate(x0, reverse=False, density=False)
        return x1 * self.scale + self.mean

    def log_prob(self, x: Any) -> torch.Tensor:
        """Log density (nats) of the flow at ``x`` (sample, dim), shape (sample,), float64.

        Raises ``ValueError`` for ``x`` of another shape or with NaN/Inf.
        """
        x = torch.as_tensor(x, dtype=torch.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (sample, {self.dim}), got {tuple(x.shape)}")
        check_finite(x, "x", "a density is defined at finite points only")
        y = (x - self.mean) / self.scale
        y0, div_int = self._integrate(y, reverse=True, density=True)
        # div_int = int_1^0 div v dt = -int_0^1 div v dt; log p1(x1) = log p0(x0) - int_0^1 div v dt
        base = -0.5 * (y0 ** 2).sum(1) - 0.5 * self.dim * math.log(2 * math.pi)
        return base + div_int - torch.log(self.scale).sum()

    def entropy(self, n_samples: int = 2000, *, seed: SeedLike = 0) -> float:
        """Monte Carlo differential entropy ``-E[log q(x)]`` (nats) from ``n_samples`` own draws."""
        return float(-self.log_prob(self.sample(n_samples, seed=seed)).mean())

    def to_dict(self) -> dict[str, Any]:
        """The flow as a plain versioned dict (tensors, numbers, strings) for ``torch.save``."""
        layers = self.field.layers
        return {"format": self.FORMAT, "version": self.FORMAT_VERSION, "hidden": int(layers[0].out_features),
                "n_layers": len(layers) - 1,
                "state_dict": {k: v.detach().clone() for k, v in self.field.state_dict().items()},
                "mean": self.mean.clone(), "scale": self.scale.clone(), "names": list(self.names),
                "n_steps": self.n_steps, "seed": self.seed, "status": self.status,
                "moment_error": self.moment_error, "history": dict(self.history), "config": dict(self.config)}

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> LoadingFlow:
        """Rebuild a flow from :meth:`to_dict`; raises ``KeyError``/``RuntimeError`` for a damaged dict."""
        mean = torch.as_tensor(obj["mean"], dtype=torch.float64)
        vf = _Field(int(mean.shape[0]), int(obj["hidden"]), int(obj["n_layers"]), torch.Generator()).double()
        vf.load_state_dict(obj["state_dict"])
        return cls(vf.eval(), mean, torch.as_tensor(obj["scale"], dtype=torch.float64), tuple(obj["names"]),
                   int(obj["n_steps"]), int(obj["seed"]), str(obj["status"]), float(obj["moment_error"]),
                   dict(obj["history"]), dict(obj["config"]))



def fit_flow_matching(
    samples: Any, *, names: Any = None, hidden: int = 64, n_layers: int = 2, n_epochs: int = 100,
    batches_per_epoch: int = 4, batch_size: int = 256, lr: float = 1e-2, sigma_min: float = 1e-3,
    n_steps: int = 24, seed: SeedLike = 0, progress: bool = False,
) -> LoadingFlow:
    """Fit a continuous normalising flow to ``samples`` (sample, dim) by conditional flow matching.

    Flow matching with the optimal-transport conditional path of Lipman et al. (2023), "Flow
    Matching for Generative Modeling", ICLR: the field is regressed on ``x1 - (1 - sigma_min) x0``
    at ``x_t = (1 - (1 - sigma_min) t) x0 + t x1``, ``x0 ~ N(0, I)``, ``t ~ U(0, 1)``, in
    coordinates standardised per dimension. Training runs on the one engine
    (:class:`TrainConfig`: Adam, learning rate decayed to ``lr / 10``, gradient norm clipped at 1).

    Parameters
    ----------
    samples : array, shape (sample, dim)
        Data, e.g. the per-neuron loading rows of a network (unit, loading).
    names : sequence of str, optional
        Names of the dims (stored on the flow).
    hidden, n_layers : int
        Width and depth of the MLP field.
    n_epochs, batches_per_epoch, batch_size, lr : training settings (see :class:`TrainConfig`).
    sigma_min : float
        Width of the conditional path at ``t = 1`` (standardised units).
    n_steps : int
        RK4 steps for sampling and densities.
    seed : int, numpy/torch Generator or None
        Initialisation and minibatch noise; same seed ⇒ same flow.
    progress : bool
        Show a progress bar.

    Returns
    -------
    LoadingFlow
        With ``status`` ``"completed"``, ``"not_converged"`` or ``"diverged"`` (both also warn).

    Raises
    ------
    ValueError
        For samples that are not 2-D, fewer than ``2 * dim + 2`` samples, NaN/Inf, a
        constant column, or settings out of range.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> data = torch.cat([torch.randn(300, 1, generator=g) - 3, torch.randn(300, 1, generator=g) + 3])
    >>> flow = fit_flow_matching(data, n_epochs=40, seed=0)
    >>> x = flow.sample(2000, seed=1)
    >>> round(float((x > 0).double().mean()), 1), round(float(x.abs().mean()), 0)  # two modes at +-3
    (0.5, 3.0)
    """
    x = torch.as_tensor(samples, dtype=torch.float64)
    if x.ndim != 2:
        raise ValueError(f"samples must have shape (sample, dim), got {tuple(x.shape)}")
    n, dim = x.shape
    if n < 2 * dim + 2:
        raise ValueError(f"need at least 2 * dim + 2 = {2 * dim + 2} samples to fit a {dim}-dim flow, "
                         f"got {n}; use more neurons or a smaller loading vector")
    check_finite(x, "samples", "drop or repair the rows with NaN or Inf first")
    mean, scale = x.mean(0), x.std(0)
    if bool((scale <= 1e-12 * (1 + mean.abs())).any()):
        bad = [int(i) for i in torch.nonzero(scale <= 1e-12 * (1 + mean.abs())).flatten()]
        raise ValueError(f"samples columns {bad} are constant; drop them (a flow needs a spread)")
    for name, value, low in (("hidden", hidden, 1), ("n_layers", n_layers, 1), ("n_steps", n_steps, 1)):
        check_setting(name, value, low, integer=True)
    check_setting("sigma_min", sigma_min, 0.0, high=0.5)
    names = tuple(names) if names is not None else tuple(f"x{d}" for d in range(dim))
    if len(names) != dim:
        raise ValueError(f"names has {len(names)} entries for {dim} dims")
    config = TrainConfig(n_epochs=n_epochs, batches_per_epoch=batches_per_epoch, epoch_name="epoch",
                         batch_size=batch_size, lr=lr, lr_end=lr / 10, clip_grad_norm=1.0, seed=seed,
                         eval_every=0, progress=progress)
    gen = torch_generator(config.seed)
    vf = _Field(dim, hidden, n_layers, gen).double()
    y = (x - mean) / scale

    def batches(step: int) -> tuple[torch.Tensor, ...]:
        idx = torch.randint(0, n, (config.batch_size,), generator=gen)
        x0 = torch.randn(config.batch_size, dim, generator=gen, dtype=torch.float64)
        t = torch.rand(config.batch_size, 1, generator=gen, dtype=torch.float64)
        return y[idx], x0, t

    def objective(batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, dict[str, Any]]:
        x1, x0, t = batch
        xt = (1 - (1 - sigma_min) * t) * x0 + t * x1
        loss = (vf(xt, t) - (x1 - (1 - sigma_min) * x0)).pow(2).sum(1).mean()
        return loss, {"loss": loss.detach()}

    hist, rec = _engine.run(list(vf.parameters()), objective, batches, config,
                            hint="lower lr", desc="flow matching")
    status = rec["status"]
    flow = LoadingFlow(vf.eval(), mean, scale, names, int(n_steps), resolve_seed(config.seed), status,
                       math.nan, hist[0], rec)
    if status == "diverged":
        return flow
    draws = (flow.sample(max(n, 1000), seed=(config.seed + 1) % 2**62) - mean) / scale
    err = float(max(draws.mean(0).abs().max(), (torch.cov(draws.T).reshape(dim, dim)
                                                 - torch.cov(y.T).reshape(dim, dim)).abs().max()))
    if not err <= MOMENT_TOLERANCE:
        status = "not_converged"
        warnings.warn(f"the flow did not converge: its samples miss the data's standardised moments by "
                      f"{err:.2f} > {MOMENT_TOLERANCE}; train longer (n_epochs) or with a lower lr",
                      RuntimeWarning, stacklevel=2)
    return LoadingFlow(vf.eval(), mean, scale, names, int(n_steps), flow.seed, status, err, hist[0], rec)
