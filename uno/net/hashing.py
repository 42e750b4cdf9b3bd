"""Hashing every engine shares: the SplitMix64 finaliser, the ECMP key of a packet's
(src, dst, entropy), and the choice a switch makes among its equal-cost ports.

A switch hashes the packet's key mixed with its own salt, so switches at one tier choose
independently (no polarisation) and a choice depends only on the run's seed. The Python data
plane, the compiled data plane and the flow-level engines all call these compiled functions, so
a flow takes the same path in every engine. Keys are uint64; Python callers pass ``np.uint64``
and get Python ints back from the wrappers at the end of the module.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: the golden-ratio increment of SplitMix64's counter (Steele, Lea and Flood, OOPSLA 2014)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# numba types a mix of uint64 and int64 as float64, so every literal meeting a uint64 is one
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U20, _U27, _U30, _U31, _U40 = (np.uint64(k) for k in (20, 27, 30, 31, 40))


@njit(cache=True)
def mix64(x):
    """SplitMix64 finaliser: a well-spread 64-bit hash of a uint64 (or of every element of a
    uint64 array; arithmetic wraps modulo 2^64)."""
    x = (x ^ (x >> _U30)) * _MIX1
    x = (x ^ (x >> _U27)) * _MIX2
    return x ^ (x >> _U31)


@njit(cache=True)
def flow_key(src, dst, entropy):
    """The uint64 key a switch hashes (with its salt) for a packet from host ``src`` to host
    ``dst`` carrying ``entropy`` (all non-negative integers)."""
    return mix64((np.uint64(src) << _U40) ^ (np.uint64(dst) << _U20) ^ np.uint64(entropy))


@njit(cache=True)
def ecmp_choice(key, salt, n_ports):
    """Index in [0, n_ports) of the equal-cost port a switch with ``salt`` picks for ``key``
    (both uint64)."""
    return np.int64(mix64(key ^ salt) % np.uint64(n_ports))


@njit(cache=True)
def ecmp_choices(keys, salts, n_ports):
    """:func:`ecmp_choice` element-wise over equal-length arrays (uint64, uint64, int64)."""
    out = np.empty(len(keys), dtype=np.int64)
    for i in range(len(keys)):
        out[i] = ecmp_choice(keys[i], salts[i], n_ports[i])
    return out


def flow_hash_key(src: int, dst: int, entropy: int) -> int:
    """:func:`flow_key` as a Python int (the Python data plane caches it per entropy)."""
    return int(flow_key(src, dst, entropy))


@njit(cache=True)
def ack_path_entropy(data_entropy, next_path, n_paths):
    """The entropy an ACK is routed with and the flow's next ACK path: the data packet's entropy
    when ``n_paths`` is 0 (the reverse of its path), else ``next_path``, cycling over
    0..``n_paths``-1 (``transport.ack_paths``)."""
    if n_paths == 0:
        return data_entropy, next_path
    return next_path, (next_path + 1) % n_paths


def ecmp_index(key: int, salt: int, n_ports: int) -> int:
    """:func:`ecmp_choice` for Python ints (a switch caches the result per key)."""
    return int(ecmp_choice(np.uint64(key), np.uint64(salt), n_ports))
