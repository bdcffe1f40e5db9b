# %% [markdown]
# # How similar are two networks?
#
# Representational measures compare the states two networks visit on the same conditions
# (Procrustes shape distance, Williams et al. 2021; CKA, Kornblith et al. 2019; RSA, Kriegeskorte et
# al. 2008); dynamical similarity analysis (DSA, Ostrow et al. 2023) compares the linear operators that
# best advance each network's delay-embedded states. Here six small networks are compared: three
# rotations of one network (the same dynamics in other coordinates) and three unrelated ones.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from neurodyn.analysis.similarity import cka, pairwise_distances
from neurodyn.models import LeakyRNN
from neurodyn.plotting import plot_distance_matrix

rng = np.random.default_rng(0)
inputs = torch.as_tensor(rng.normal(size=(20, 50, 2)), dtype=torch.float32)  # (trial, time, input)


def states(model):
    with torch.no_grad():
        return model(inputs, noise=False).states.reshape(-1, model.n_units).numpy()  # (sample, unit)


base = states(LeakyRNN(2, 16, 1, alpha=0.5, seed=0))
rotated = [base @ np.linalg.qr(rng.normal(size=(16, 16)))[0] for _ in range(3)]
others = [states(LeakyRNN(2, 16, 1, alpha=0.5, seed=s)) for s in (1, 2, 3)]
activity = rotated + others
names = ["rot A", "rot B", "rot C", "net 1", "net 2", "net 3"]
print(f"CKA(rot A, rot B) = {cka(rotated[0], rotated[1]):.3f}")
print(f"CKA(rot A, net 1) = {cka(rotated[0], others[0]):.3f}")

# %% [markdown]
# ## Pairwise distances
#
# `pairwise_distances` computes every pair at once and returns a labelled `(network, network)` array;
# rotations of one network are at distance zero under Procrustes, unrelated networks are not.

# %%
fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), layout="constrained")
for ax, metric in zip(axes, ["procrustes", "rsa"]):
    D = pairwise_distances(activity, metric=metric, names=names, progress=False)
    plot_distance_matrix(D, ax=ax, title=metric)
plt.show()
