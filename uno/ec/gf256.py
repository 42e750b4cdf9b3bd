"""GF(2^8) arithmetic and the Reed–Solomon generator over it: the one place :mod:`uno.ec.mds`
takes its field law from.

The field is GF(2)[z] / (z^8 + z^4 + z^3 + z^2 + 1) (``PRIMITIVE_POLY`` = 0x11D, the Conway
polynomial), with primitive element ``z`` (the byte 2): the field ``galois.GF(2**8)`` builds by
default, and the one ``galois.ReedSolomon(255, k)`` picks, so the codes here are galois's codes
(``tests/test_ec_gf256.py`` checks products, inverses, generators and decodes against galois on
random data and erasure patterns). An element is a byte; addition is XOR; products are looked up
in :data:`MUL`, a 256 × 256 table built with NumPy from the powers of ``z`` (64 KiB).

The kernels are compiled with Numba and cached on disk (``cache=True``): a process loads them in
milliseconds, and only the first process after a change of the package's sources compiles them
(:mod:`uno.core.jit_cache`). They take C-contiguous uint8 matrices (callers pass them so: one
compiled form each).

- :func:`gf_matmul` ``(mul, a, b)``: matrix product, the work of every encode and decode;
- :func:`gf_inverse` ``(mul, inv, a)``: inverse of a square matrix (Gauss–Jordan);
- :func:`rs_generator` ``(mul, alpha_powers, x, y)``: the systematic generator of the Reed–Solomon
  code of ``y`` parity symbols shortened to ``x`` message symbols.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: elements of GF(2^8): one symbol is one byte
ORDER = 2**8
#: z^8 + z^4 + z^3 + z^2 + 1: the field's defining (primitive) polynomial as bits
PRIMITIVE_POLY = 0x11D


def _powers_of_z() -> np.ndarray:
    """z^0 .. z^254 as bytes: the nonzero elements, each once (z is primitive)."""
    out = np.empty(ORDER - 1, dtype=np.uint8)
    a = 1
    for i in range(ORDER - 1):
        out[i] = a
        a <<= 1  # times z
        if a & ORDER:
            a ^= PRIMITIVE_POLY  # reduce modulo the defining polynomial
    return out


#: EXP[i] = z^i, i = 0 .. 254 (uint8)
EXP = _powers_of_z()
#: LOG[a] = i with z^i = a, for a = 1 .. 255 (LOG[0] is unused, 0), int64
LOG = np.zeros(ORDER, dtype=np.int64)
LOG[EXP] = np.arange(ORDER - 1)


def _tables() -> tuple[np.ndarray, np.ndarray]:
    nz = np.arange(1, ORDER)
    mul = np.zeros((ORDER, ORDER), dtype=np.uint8)
    mul[1:, 1:] = EXP[(LOG[nz][:, None] + LOG[nz][None, :]) % (ORDER - 1)]
    inv = np.zeros(ORDER, dtype=np.uint8)
    inv[nz] = EXP[(-LOG[nz]) % (ORDER - 1)]
    return mul, inv


#: MUL[a, b] = a · b in GF(2^8), (256, 256) uint8
#: INV[a] = a^-1 for a != 0 (INV[0] = 0, never used), (256,) uint8
MUL, INV = _tables()
# shared by every code of every process's coders: read-only
MUL.flags.writeable = False
INV.flags.writeable = False
EXP.flags.writeable = False
LOG.flags.writeable = False


@njit(cache=True)
def gf_matmul(mul, a, b):
    """GF(2^8) product of ``a`` (r, m) and ``b`` (m, s), uint8 -> (r, s) uint8; ``mul`` is
    :data:`MUL`. Sums are XORs."""
    r, m = a.shape
    s = b.shape[1]
    out = np.zeros((r, s), dtype=np.uint8)
    for i in range(r):
        for k in range(m):
            c = a[i, k]
            if c == 0:
                continue
            row = mul[c]  # the products c · (every byte)
            for j in range(s):
                out[i, j] ^= row[b[k, j]]
    return out


@njit(cache=True)
def gf_inverse(mul, inv, a):
    """Inverse of the square uint8 matrix ``a`` over GF(2^8) by Gauss–Jordan elimination
    (``mul`` :data:`MUL`, ``inv`` :data:`INV`); raises ValueError if ``a`` is singular."""
    n = a.shape[0]
    m = a.copy()
    out = np.zeros((n, n), dtype=np.uint8)
    for i in range(n):
        out[i, i] = 1
    for col in range(n):
        piv = col
        while piv < n and m[piv, col] == 0:
            piv += 1
        if piv == n:
            raise ValueError("singular matrix over GF(2^8)")
        if piv != col:
            for j in range(n):
                m[col, j], m[piv, j] = m[piv, j], m[col, j]
                out[col, j], out[piv, j] = out[piv, j], out[col, j]
        scale = mul[inv[m[col, col]]]  # make the pivot 1
        for j in range(n):
            m[col, j] = scale[m[col, j]]
            out[col, j] = scale[out[col, j]]
        for r in range(n):
            f = m[r, col]
            if r == col or f == 0:
                continue
            row = mul[f]  # row r -= f · row col (subtraction is XOR)
            for j in range(n):
                m[r, j] ^= row[m[col, j]]
                out[r, j] ^= row[out[col, j]]
    return out


@njit(cache=True)
def rs_generator(mul, alpha_powers, x, y):
    """Systematic (x, x + y) uint8 generator of the Reed–Solomon code over GF(2^8) with ``y``
    parity symbols (length 255, generator polynomial g = (X - α)(X - α^2) ... (X - α^y), α = z,
    ``alpha_powers`` :data:`EXP`) shortened to ``x`` message symbols.

    As galois's systematic encoder, a codeword is the message m_0 .. m_{x-1} (coefficients of
    X^(x-1+y) .. X^y) followed by the remainder of m(X) X^y modulo g (coefficients of X^(y-1)
    .. X^0): row ``i`` is the identity's row ``i``, then X^(x-1-i+y) mod g."""
    gen = np.zeros((x, x + y), dtype=np.uint8)
    for i in range(x):
        gen[i, i] = 1
    if y == 0:
        return gen
    # g's coefficients, highest degree first (g[0] = 1): multiply in (X - α^j) = (X + α^j)
    g = np.zeros(y + 1, dtype=np.uint8)
    g[0] = 1
    for j in range(1, y + 1):
        root = alpha_powers[j % 255]
        for d in range(j, 0, -1):
            g[d] ^= mul[root, g[d - 1]]
    # r = X^d mod g for d = y, y + 1, ...: X^y mod g = g - X^y (the lower coefficients)
    r = g[1:].copy()
    for d in range(y, x + y):
        if d > y:  # r <- X · r mod g: shift up, fold the overflowing coefficient back through g
            top = r[0]
            for t in range(y - 1):
                r[t] = r[t + 1]
            r[y - 1] = 0
            if top != 0:
                row = mul[top]
                for t in range(y):
                    r[t] ^= row[g[t + 1]]
        i = x - 1 - (d - y)  # the unit message whose polynomial is X^(x-1-i)
        for t in range(y):
            gen[i, x + t] = r[t]
    return gen
