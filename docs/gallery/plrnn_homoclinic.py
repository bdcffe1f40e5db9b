# %% [markdown]
# # A proof of chaos: transversal homoclinic points of a PLRNN
#
# A chaotic trajectory is hard to tell from a long transient or a very long cycle by simulation alone;
# a positive Lyapunov exponent estimated from a finite run is evidence, not proof. A piecewise-linear
# RNN allows a proof: its saddles, and pieces of their stable and unstable manifolds, are computed
# exactly region by region (Eisenmann et al. 2023, NeurIPS; Eisenmann et al., ICLR 2026), and where the
# unstable manifold of a saddle crosses the saddle's own stable manifold transversally (a homoclinic
# point), the Smale–Birkhoff homoclinic theorem gives a horseshoe in some iterate of the map, i.e.
# chaos on an invariant Cantor set. For a piecewise-linear map the theorem also needs the region maps
# along the orbit to be invertible, which `find_homoclinic_points` checks.
#
# The known chaotic PLRNN here is the Lozi map `x' = 1 + y - a|x|`, `y' = b x` (Lozi 1978) with the
# classic `a = 1.7`, `b = 0.5`, for which Misiurewicz (1980, *Ann NY Acad Sci* 357:348) proved a strange
# attractor; as a PLRNN `z' = A z + W relu(z) + h` it uses `|x| = 2 relu(x) - x`. A Lozi map with
# `a = 1.2` is the control: same form, but its orbits settle on a stable 2-cycle. Everything on this
# page is exact or cheap, so it runs at the same size in the site build and with `NEURODYN_FULL=1`
# (which only lengthens the Lyapunov run from 20,000 to 200,000 steps).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from neurodyn.analysis import find_cycles, find_homoclinic_points, find_manifolds, lyapunov_spectrum
from neurodyn.models import PLRNN
from neurodyn.plotting import plot_phase_portrait

full = os.environ.get("NEURODYN_FULL") == "1"


def lozi(a: float, b: float = 0.5) -> PLRNN:
    """The Lozi map x' = 1 + y - a|x|, y' = b x as a PLRNN, with |x| = 2 relu(x) - x."""
    return PLRNN.from_arrays(np.array([[a, 1.0], [b, 0.0]]), np.array([[-2 * a, 0.0], [0.0, 0.0]]),
                             np.array([1.0, 0.0]))


chaotic = lozi(1.7)
saddles = find_cycles(chaotic, max_order=1, exhaustive=True)
print(saddles.summary())
for point, eig in zip(saddles.states, saddles.eigenvalues):
    print(f"fixed point at ({point[0]: .4f}, {point[1]: .4f}): eigenvalues {eig[0].real: .4f}, "
          f"{eig[1].real: .4f}")

# %% [markdown]
# ## The manifolds and their crossings
#
# Both fixed points are saddles (one eigenvalue outside the unit circle, one inside). Their 1-D stable
# and unstable manifolds are grown as polygonal lines, six preimages/images deep inside the box
# `|z| ≤ 3`; every crossing of a stable with an unstable piece is solved as a linear system and checked
# for transversality (the two directions span the plane), for invertible region maps along the orbit,
# and numerically: its forward iterates must approach the saddle.

# %%
manifolds = find_manifolds(chaotic, saddles, box=3.0, max_depth=6)
homoclinic = find_homoclinic_points(chaotic, manifolds)
print(homoclinic.report())
is_homoclinic = homoclinic.kind == "homoclinic"
angle, approach = homoclinic.angle[is_homoclinic], homoclinic.approach[is_homoclinic]
print(f"homoclinic points: {is_homoclinic.sum()}, all transversal: "
      f"{bool(homoclinic.transversal[is_homoclinic].all())}, region maps invertible: "
      f"{bool(homoclinic.invertible[is_homoclinic].all())}")
print(f"angle between the manifolds at them: {angle.min():.2f} to {angle.max():.2f} rad; closest approach "
      f"of their forward orbits to the saddle: at most {approach.max():.1e}")
print(f"proves chaos: {homoclinic.proves_chaos}")

# %% [markdown]
# ## A second, independent sign: the Lyapunov spectrum
#
# The proof says nothing about how strongly orbits separate. The Lyapunov spectrum (QR method) of the
# chaotic map should have a positive largest exponent, and the two exponents must add up to
# `log |det| = log b = log 0.5 = -0.693` per step in every region. Sprott (2003, *Chaos and Time-Series
# Analysis*, Oxford) lists 0.470 and -1.163 for these parameters. The control is run through the same
# two steps.

# %%
n_steps = 200_000 if full else 20_000
control = lozi(1.2)
control_manifolds = find_manifolds(control, find_cycles(control, max_order=1, exhaustive=True), box=3.0,
                                   max_depth=6)
rows = []
control_homoclinic = find_homoclinic_points(control, control_manifolds)
for name, model, result in (("Lozi a = 1.7", chaotic, homoclinic),
                            ("Lozi a = 1.2 (control)", control, control_homoclinic)):
    spectrum = lyapunov_spectrum(model, n_steps=n_steps, n_transient=1000, seed=0).exponents[0]
    stable = find_cycles(model, max_order=8, exhaustive=True)
    n_stable = len(set(stable.cycle_id[stable.stability == "stable"].tolist()))
    rows.append((name, int((result.kind == "homoclinic").sum()), result.proves_chaos, spectrum, n_stable))
print(f"{'map':24s} {'homoclinic':>10s} {'proves chaos':>12s} {'λ1':>8s} {'λ2':>8s} {'λ1+λ2':>8s} "
      f"{'stable cycles (order ≤ 8)':>26s}")
for name, n_h, proof, lam, n_stable in rows:
    print(f"{name:24s} {n_h:10d} {proof!s:>12s} {lam[0]:8.4f} {lam[1]:8.4f} {lam.sum():8.4f} {n_stable:26d}")

# %% [markdown]
# ## The figure
#
# Left: the chaotic attractor (grey), the two saddles, their stable (blue) and unstable (red) manifold
# pieces and the homoclinic points (black crosses). Right: the forward orbit of one homoclinic point
# closes in on its saddle at the rate of the stable eigenvalue, until round-off along the unstable
# direction (growing by |−1.956| per step) throws it back onto the attractor.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
orbit = np.empty((5000, 2))
z = np.array([0.1, 0.1])
for t in range(len(orbit) + 100):  # the map itself, x' = 1 + y - 1.7|x|, y' = 0.5 x
    z = np.array([1 + z[1] - 1.7 * abs(z[0]), 0.5 * z[0]])
    if t >= 100:
        orbit[t - 100] = z
axes[0].plot(orbit[:, 0], orbit[:, 1], ".", ms=1.5, color="0.55", label="attractor")
plot_phase_portrait(chaotic, cycles=saddles, manifolds=manifolds, ax=axes[0],
                    limits=((-1.5, 1.5), (-1.0, 1.0)))
axes[0].plot(*homoclinic.points[is_homoclinic].T, "kx", ms=6, label="homoclinic points")
axes[0].legend(fontsize=8, loc="lower left")
axes[0].set_title("Lozi map (a = 1.7): manifolds of the saddles")

first = int(np.flatnonzero(is_homoclinic)[0])
home = manifolds.saddles[homoclinic.stable_saddle[first]]  # the saddle whose manifolds cross there
saddle, rate = home.points[0], np.abs(home.eigenvalues).min()
z, distance = homoclinic.points[first], []
for _ in range(60):
    distance.append(np.linalg.norm(z - saddle))
    z = np.array([1 + z[1] - 1.7 * abs(z[0]), 0.5 * z[0]])
axes[1].semilogy(distance, "o-", ms=3, label="forward orbit of a homoclinic point")
axes[1].semilogy(distance[0] * rate ** np.arange(25), "--", label=f"stable eigenvalue |{rate:.4f}|^n")
axes[1].set(xlabel="iterate n", ylabel="distance to the saddle", title="the orbit returns to its saddle")
axes[1].legend(fontsize=8)
plt.show()
