"""Numba kernels behind :func:`neurodyn._seed.trial_uniforms` and :func:`neurodyn._seed._trial_states`.

Two pieces of NumPy's random machinery, restated so that they run for all trials in one compiled loop:

* the ``SeedSequence`` hash (M. O'Neill's ``seed_seq_fe``, as ``numpy.random.SeedSequence`` mixes its
  entropy pool and generates state words), for the entropy ``seed words + [0, trial]`` of each trial,
  i.e. ``SeedSequence(seed, spawn_key=(0, trial)).generate_state(4, numpy.uint64)``;
* ``PCG64`` (PCG XSL RR 128/64): seeded from those 4 words as ``numpy.random.PCG64`` seeds itself
  (``initstate = w0 * 2**64 + w1``, ``initseq = w2 * 2**64 + w3``, then ``pcg_setseq_128_srandom_r``),
  each draw one step of the 128-bit LCG followed by the XSL RR output, and each float64
  ``(next64 >> 11) * 2**-53``, what ``Generator.random`` makes of one draw.

The 128-bit LCG state is kept as two ``uint64`` halves and its arithmetic is done by hand on them; the one
piece Numba cannot state, the high half of a 64 x 64-bit product, is LLVM's widening multiply (an ``i128``
intrinsic, one instruction on x86-64, where four 32-bit partial products took twice as long). Every
integer here is a ``uint64`` (Numba would turn ``uint64`` mixed with a Python ``int`` into float64).
This module imports Numba, so it is itself imported only when trials are sampled.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["pcg64_uniforms", "seed_states"]

_U = np.uint64
# numpy's SeedSequence constants (seed_seq_fe): hash multipliers and initial values, mixing weights
_INIT_A, _MULT_A, _INIT_B, _MULT_B = _U(0x43B0D7E5), _U(0x931E8875), _U(0x8B51F9DD), _U(0x58F38DED)
_MIX_L, _MIX_R = _U(0xCA01F9DD), _U(0x4973F715)
_POOL = 4  # SeedSequence's pool size, in uint32 words
_M32, _S16, _S32 = _U(0xFFFFFFFF), _U(16), _U(32)
# PCG's default 128-bit multiplier, high and low halves (PCG_DEFAULT_MULTIPLIER_128)
_MUL_HI, _MUL_LO = _U(2549297995355413924), _U(4865540595714422341)
_ONE, _S1, _S11, _S58, _S63, _M6 = _U(1), _U(1), _U(11), _U(58), _U(63), _U(63)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def _hashmix(value, const):
    """seed_seq_fe's ``hashmix`` of one 32-bit word; returns the hashed word and the next constant."""
    value = value ^ const
    const = (const * _MULT_A) & _M32
    value = (value * const) & _M32
    return value ^ (value >> _S16), const


@njit(cache=True, inline="always")
def _mix(x, y):
    """seed_seq_fe's ``mix`` of two 32-bit words."""
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> _S16)


@njit(cache=True, inline="always")
def _hash_trial(entropy, pool, out):
    """``SeedSequence`` state of one entropy vector (uint32 values in uint64, at least ``_POOL`` of them)
    into ``out``: 4 uint64 words, each two consecutive 32-bit words, the first in the low half."""
    const = _INIT_A
    for i in range(_POOL):
        pool[i], const = _hashmix(entropy[i], const)
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                h, const = _hashmix(pool[src], const)
                pool[dst] = _mix(pool[dst], h)
    for src in range(_POOL, entropy.shape[0]):
        for dst in range(_POOL):
            h, const = _hashmix(entropy[src], const)
            pool[dst] = _mix(pool[dst], h)
    const = _INIT_B
    for k in range(4):
        word = _U(0)
        for half in range(2):
            v = pool[(2 * k + half) % _POOL] ^ const
            const = (const * _MULT_B) & _M32
            v = (v * const) & _M32
            word |= (v ^ (v >> _S16)) << (_S32 * _U(half))
        out[k] = word


@njit(cache=True)
def seed_states(words, first_trial, n_trials):
    """``SeedSequence(seed, spawn_key=(0, first_trial + t)).generate_state(4, uint64)`` for every trial
    ``t``, shape (trial, 4) uint64. ``words``: the seed's 32-bit words (least significant first, padded
    with zeros to at least 4), as uint64; trial indices must be below 2**32."""
    n_words = words.shape[0]
    entropy = np.zeros(n_words + 2, np.uint64)  # seed words, spawn key (0, trial)
    entropy[:n_words] = words
    pool = np.empty(_POOL, np.uint64)
    out = np.empty((n_trials, 4), np.uint64)
    for t in range(n_trials):
        entropy[n_words + 1] = _U(first_trial) + _U(t)
        _hash_trial(entropy, pool, out[t])
    return out


@intrinsic
def _mulhi(typingctx, x, y):
    """High 64 bits of the 128-bit product of two uint64: one widening multiply (LLVM ``i128``)."""
    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


@njit(cache=True, inline="always")
def _step(hi, lo, inc_hi, inc_lo):
    """One LCG step ``state * MULT + inc`` mod 2**128, on (high, low) halves."""
    new_hi = _mulhi(lo, _MUL_LO) + lo * _MUL_HI + hi * _MUL_LO
    new_lo = lo * _MUL_LO
    out_lo = new_lo + inc_lo
    carry = _ONE if out_lo < inc_lo else _U(0)
    return new_hi + inc_hi + carry, out_lo


@njit(cache=True)
def pcg64_uniforms(states, n_draws):
    """``Generator(PCG64(s)).random(n_draws)`` for every row ``s`` of ``states`` (trial, 4) uint64 (the
    4 words PCG64 takes from a ``SeedSequence``); returns (trial, n_draws) float64."""
    n_trials = states.shape[0]
    out = np.empty((n_trials, n_draws), np.float64)
    for t in range(n_trials):
        # pcg_setseq_128_srandom_r: inc = (initseq << 1) | 1; state = 0; step; state += initstate; step
        inc_hi = (states[t, 2] << _S1) | (states[t, 3] >> _S63)
        inc_lo = (states[t, 3] << _S1) | _ONE
        hi, lo = _step(_U(0), _U(0), inc_hi, inc_lo)
        lo = lo + states[t, 1]
        hi = hi + states[t, 0] + (_ONE if lo < states[t, 1] else _U(0))
        hi, lo = _step(hi, lo, inc_hi, inc_lo)
        for j in range(n_draws):
            hi, lo = _step(hi, lo, inc_hi, inc_lo)
            v, rot = hi ^ lo, hi >> _S58  # XSL RR output
            v = (v >> rot) | (v << ((_U(64) - rot) & _M6))
            out[t, j] = np.float64(v >> _S11) * _TWO_M53
    return out


@njit(cache=True)
def trial_uniforms_kernel(words, first_trial, n_trials, n_draws):
    """:func:`seed_states` then :func:`pcg64_uniforms`, in one call: (trial, n_draws) float64."""
    return pcg64_uniforms(seed_states(words, first_trial, n_trials), n_draws)
