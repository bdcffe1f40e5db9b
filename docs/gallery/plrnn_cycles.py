# %% [markdown]
# # Exact cycles and manifolds of a PLRNN
#
# A piecewise-linear RNN is linear inside each region of its state space, so its fixed points and
# k-cycles solve linear systems, one per sequence of regions (Eisenmann et al. 2023, NeurIPS, the SCYFI
# algorithm). Here the Lozi map, written as a PLRNN, is taken apart: its cycles up to period 4 and the
# stable and unstable manifolds of its saddle fixed points. Where those manifolds cross, they prove
# that the map is chaotic: see the gallery page "Homoclinic chaos proof".

# %%
import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import find_cycles, find_manifolds
from neurodyn.models import PLRNN
from neurodyn.plotting import plot_phase_portrait

# x' = 1 + y - 1.7|x|, y' = 0.5 x, with |x| = 2 relu(x) - x
lozi = PLRNN.from_arrays(np.array([[1.7, 1.0], [0.5, 0.0]]), np.array([[-3.4, 0.0], [0.0, 0.0]]),
                         np.array([1.0, 0.0]))
cycles = find_cycles(lozi, max_order=4, exhaustive=True)
print(cycles.summary())

# %% [markdown]
# ## Stable and unstable manifolds of the saddles
#
# The manifolds are grown region by region as polygonal lines, six images or preimages deep.

# %%
saddle = find_cycles(lozi, max_order=1, exhaustive=True)
manifolds = find_manifolds(lozi, saddle, box=3.0, max_depth=6)
print(f"{len(manifolds.pieces)} manifold pieces of {len(manifolds.saddles)} saddles")

# %%
ax = plot_phase_portrait(lozi, cycles=cycles, manifolds=manifolds, limits=((-1.5, 1.5), (-1.0, 1.0)))
ax.set_title("Lozi map: cycles up to period 4, manifolds of the saddle")
plt.show()
