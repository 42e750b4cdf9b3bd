"""The fluid kernels' random draws: each flow's own SplitMix64 stream (seeded from the run's seed)
and uniform numbers from hashed 64-bit values, built on :mod:`uno.net.hashing`.

A draw depends only on the run's seed and on what the flow drew before, so the compiled kernels
and their ``py_func`` twins draw the same numbers. Units: states and hashes are uint64, draws
floats in [0, 1), counts whole numbers (as floats).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.net.hashing import GOLDEN, mix64

_U11 = np.uint64(11)
#: 2**-53: a 53-bit integer to a float in [0, 1)
_TO_UNIT = 1.0 / 9007199254740992.0


@njit(cache=True, error_model="numpy", inline="always")
def unit_interval(x) -> float:
    """The uint64 ``x`` (a hash) as a float in [0, 1): its 53 high bits."""
    return float(x >> _U11) * _TO_UNIT


@njit(cache=True, error_model="numpy")
def next_uniform(rng_state, f) -> float:
    """A U[0, 1) draw from flow ``f``'s SplitMix64 stream ``rng_state[f]`` (uint64), which it
    advances."""
    rng_state[f] += GOLDEN
    return unit_interval(mix64(rng_state[f]))


@njit(cache=True, error_model="numpy")
def binomial_draw(n, p, rng_state, f) -> float:
    """Successes among ``n`` (an integer >= 0) trials of chance ``p``: by inversion from the
    flow's stream, counting the rarer outcome (no underflow of (1 - p)^n)."""
    if n <= 0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return float(n)
    q = p if p <= 0.5 else 1.0 - p
    u = next_uniform(rng_state, f)
    k = 0
    term = (1.0 - q) ** n
    cdf = term
    ratio = q / (1.0 - q)
    while u > cdf and k < n:
        term *= (n - k) / (k + 1) * ratio
        k += 1
        cdf += term
    return float(k) if p <= 0.5 else float(n - k)
