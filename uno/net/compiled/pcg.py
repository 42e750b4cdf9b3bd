"""Random draws inside the kernels: a port's or a flow's PCG64 stream stepped in place, giving
exactly the doubles numpy's ``Generator.random`` gives from the same stream
(:class:`uno.core.rng.UniformBuffer`), so the compiled data plane draws what the Python one
draws. A stream is four uint64 words of ``U``: state high, state low, increment high, increment
low."""

from __future__ import annotations

import numpy as np
from numba import njit

# numba types a mix of uint64 and int64 as float64, so every literal that meets a uint64 is one
_U11, _U32, _U58, _U63, _U64 = (np.uint64(k) for k in (11, 32, 58, 63, 64))
_M32 = np.uint64(0xFFFFFFFF)
_PCG_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_PCG_MULT_LO = np.uint64(0x4385DF649FCCF645)
_ONE = np.uint64(1)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def mul64(a, b):
    """Full 128-bit product of two uint64: (high, low)."""
    a0 = a & _M32
    a1 = a >> _U32
    b0 = b & _M32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _U32) + (p01 & _M32) + (p10 & _M32)
    low = (mid << _U32) | (p00 & _M32)
    high = p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    return high, low


@njit(cache=True)
def pcg64_next_double(U, base):
    """Step the PCG64 stream whose words are ``U[base:base + 4]`` and return the double in
    [0, 1) numpy's ``Generator.random`` gives: a 128-bit LCG step, the XSL-RR output of the new
    state, its top 53 bits."""
    sh = U[base]
    sl = U[base + 1]
    high, low = mul64(sl, _PCG_MULT_LO)
    high = high + sh * _PCG_MULT_LO + sl * _PCG_MULT_HI
    new_low = low + U[base + 3]
    carry = _ONE if new_low < low else np.uint64(0)
    new_high = high + U[base + 2] + carry
    U[base] = new_high
    U[base + 1] = new_low
    xored = new_high ^ new_low
    rot = new_high >> _U58
    out = (xored >> rot) | (xored << ((_U64 - rot) & _U63))
    return np.float64(out >> _U11) * _TO_UNIT


def pcg64_words(uniform) -> tuple[int, int, int, int]:
    """The four words of a not yet drawn :class:`uno.core.rng.UniformBuffer`'s stream, past the
    values it must skip."""
    if uniform.started:
        raise ValueError("compiled data plane: a port's random stream was drawn from already")
    seq = np.random.SeedSequence(entropy=uniform.entropy, spawn_key=uniform.spawn_key)
    bitgen = np.random.PCG64(seq)
    if uniform.skip:
        np.random.Generator(bitgen).random(uniform.skip)
    state = bitgen.state["state"]
    s, inc = state["state"], state["inc"]
    mask = (1 << 64) - 1
    return s >> 64, s & mask, inc >> 64, inc & mask
