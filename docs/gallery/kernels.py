# %% [markdown]
# # Rollout kernels: one result, three backends
#
# `neurodyn.kernels.rollout` runs one network or a whole ensemble forward without gradients on one of
# three backends that compute the same thing: `torch` (the reference, a Python loop over time steps
# calling the model's own step), `numba` (a compiled CPU kernel with the time loop inside, parallel
# over states; Lam, Pitrou & Seibert 2015, *LLVM-HPC*) and `triton` (one GPU launch for the whole time
# loop; Tillet, Kung & Cox 2019, *MAPL*). `backend="auto"` picks the fastest one available and the
# result records which ran. This page rolls out an ensemble of leaky RNNs with state noise on every
# backend present, checks that they agree, and times them. Sizes are small when the site is built;
# `NEURODYN_FULL=1` uses 64 networks of 128 units.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.kernels import backend_available, rollout, stack_params
from neurodyn.models import LeakyRNN

full = os.environ.get("NEURODYN_FULL") == "1"
n_networks, n_units, n_trials, n_steps = (64, 128, 32, 1000) if full else (16, 32, 16, 100)
models = [LeakyRNN(2, n_units, 1, alpha=0.2, gain=1.5, noise_std=0.05, seed=s) for s in range(n_networks)]
ensemble = stack_params(models)  # every tensor gets a leading (network,) dim
gen = torch.Generator().manual_seed(0)
h0 = 0.5 * torch.randn(n_networks, n_trials, n_units, generator=gen)  # (network, trial, unit)
inputs = torch.randn(n_networks, n_trials, 2, generator=gen)  # constant (network, trial, input)
backends = [b for b in ("torch", "numba", "triton") if backend_available(b)]
if "triton" in backends and not torch.cuda.is_available():
    backends.remove("triton")  # Triton runs on CUDA tensors only
print("backends available here:", ", ".join(backends), "| auto picks:",
      rollout(ensemble, h0=h0, inputs=inputs, n_steps=1).backend)

# %% [markdown]
# ## Same noise, same trajectories
#
# The noise of step t is the t-th draw of one seeded CPU generator on every backend, so the backends
# differ only by float rounding. Each backend runs once to compile (Numba caches its kernels on disk),
# then is timed.

# %%
results, seconds = {}, {}
for backend in backends:
    device = "cuda" if backend == "triton" else "cpu"
    nets = ensemble if device == "cpu" else stack_params([m.to(device) for m in models])
    kw = dict(h0=h0.to(device), inputs=inputs.to(device), seed=0, backend=backend)
    rollout(nets, n_steps=2, **kw)  # compile / warm up
    start = time.perf_counter()
    results[backend] = rollout(nets, n_steps=n_steps, **kw)
    seconds[backend] = time.perf_counter() - start
reference = results["torch"].states.cpu().double()
print(f"{n_networks} networks x {n_trials} trials x {n_units} units, {n_steps} steps")
print(f"{'backend':<8} {'seconds':>8} {'speed-up':>9} {'max |difference| from torch':>29}  status")
for backend, res in results.items():
    diff = (res.states.cpu().double() - reference).abs().max().item()
    status = "all finite" if all(s == "finite" for s in np.ravel(res.status)) else "some diverged"
    print(f"{backend:<8} {seconds[backend]:8.3f} {seconds['torch'] / seconds[backend]:9.1f} "
          f"{diff:29.2e}  {status}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
t = np.arange(1, n_steps + 1)
for backend, style in zip(results, ("-", "--", ":")):
    axes[0].plot(t, results[backend].states[0, 0, :, :3].cpu().numpy(), style, lw=1.2,
                 label=[backend, None, None])
axes[0].set(xlabel="step", ylabel="state", title="network 0, trial 0: three units per backend")
axes[0].legend(fontsize=8)
axes[1].bar(list(seconds), [seconds[b] for b in seconds], color=["C0", "C1", "C2"][:len(seconds)])
axes[1].set_yscale("log")
axes[1].set(ylabel="seconds (log scale)", title=f"{n_networks * n_trials} trajectories x {n_steps} steps")
plt.show()
