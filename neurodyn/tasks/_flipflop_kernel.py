"""The flip-flop's trials from their uniforms in one compiled loop (what ``FlipFlop._trials`` runs).

Kept in its own module because it imports Numba, which ``neurodyn.tasks`` loads only when a task samples.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["flipflop_trials"]


@njit(cache=True)
def flipflop_trials(uniforms, p_pulse, inputs, targets, n_pulses):
    """Fill the inputs, targets (trial, time, bit) and pulse counts (trial, bit) of flip-flop trials.

    ``uniforms`` (trial, 2, time, bit), float64: a pulse where ``uniforms[:, 0] < p_pulse`` (always at
    step 0), of sign -1 where ``uniforms[:, 1] < 0.5`` and +1 elsewhere; the input is the sign times
    the pulse (float32, a signed zero without a pulse, as NumPy's ``sign * pulse`` gives it) and the
    target the sign of the latest pulse. Not compiled with ``fastmath``, which may drop the sign of zero.
    """
    n_trials, _, n_steps, n_bits = uniforms.shape
    minus, plus, zero = np.float32(-1.0), np.float32(1.0), np.float32(0.0)
    for k in range(n_trials):
        for b in range(n_bits):
            last = plus
            count = 0
            for t in range(n_steps):
                sign = minus if uniforms[k, 1, t, b] < 0.5 else plus
                if t == 0 or uniforms[k, 0, t, b] < p_pulse:
                    inputs[k, t, b] = sign
                    last = sign
                    count += 1
                else:
                    inputs[k, t, b] = sign * zero
                targets[k, t, b] = last
            n_pulses[k, b] = count
