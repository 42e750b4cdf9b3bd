"""GF(2^8) kernels of uno.ec.gf256 and the Reed–Solomon coder built on them, against galois
(the reference): field tables, products, inverses, generators, and encode / decode of random
data under random erasure patterns."""

from __future__ import annotations

import galois
import numpy as np
import pytest

from uno.ec import BlockCoder, MdsCode
from uno.ec.gf256 import (
    EXP,
    INV,
    MUL,
    ORDER,
    PRIMITIVE_POLY,
    gf_inverse,
    gf_matmul,
    rs_generator,
)

GF = galois.GF(2**8)


def _u8(a) -> np.ndarray:
    return np.asarray(a.view(np.ndarray), dtype=np.uint8)


def test_field_is_galois_default_gf256():
    assert int(GF.irreducible_poly) == PRIMITIVE_POLY
    assert int(GF.primitive_element) == 2
    elems = GF.Range(0, ORDER)
    assert np.array_equal(_u8(np.multiply.outer(elems, elems)), MUL)
    nonzero = GF.Range(1, ORDER)
    assert np.array_equal(_u8(np.reciprocal(nonzero)), INV[1:])
    assert np.array_equal(_u8(GF.primitive_element ** np.arange(ORDER - 1)), EXP)
    assert sorted(EXP.tolist()) == list(range(1, ORDER))  # z is primitive


def test_matmul_random_against_galois():
    rng = np.random.default_rng(1)
    for _ in range(40):
        r, m, s = rng.integers(1, 12, size=3)
        a = rng.integers(0, 256, size=(r, m), dtype=np.uint8)
        b = rng.integers(0, 256, size=(m, s), dtype=np.uint8)
        a[rng.random(a.shape) < 0.2] = 0  # zeros take the kernel's skip
        assert np.array_equal(gf_matmul(MUL, a, b), _u8(GF(a) @ GF(b)))


def test_inverse_random_against_galois():
    rng = np.random.default_rng(2)
    checked = 0
    for n in [1, 2, 3, 5, 8, 10, 17, 32] * 3:
        a = rng.integers(0, 256, size=(n, n), dtype=np.uint8)
        try:
            ref = _u8(np.linalg.inv(GF(a)))
        except np.linalg.LinAlgError:
            with pytest.raises(ValueError, match="singular"):
                gf_inverse(MUL, INV, a)
            continue
        inv = gf_inverse(MUL, INV, a)
        assert np.array_equal(inv, ref)
        assert np.array_equal(gf_matmul(MUL, a, inv), np.eye(n, dtype=np.uint8))
        checked += 1
    assert checked > 15
    singular = np.array([[3, 7], [3, 7]], dtype=np.uint8)
    with pytest.raises(ValueError, match="singular"):
        gf_inverse(MUL, INV, singular)


@pytest.mark.parametrize(
    "x,y", [(8, 2), (1, 1), (4, 2), (3, 4), (5, 0), (10, 6), (253, 2), (1, 254), (128, 127)]
)
def test_generator_is_galois_shortened_rs(x, y):
    gen = rs_generator(MUL, EXP, x, y)
    if y:
        rs = galois.ReedSolomon(255, 255 - y, systematic=True)
        ref = _u8(rs.encode(rs.field.Identity(x)))
    else:
        ref = np.eye(x, dtype=np.uint8)
    assert gen.shape == (x, x + y) and gen.dtype == np.uint8
    assert np.array_equal(gen, ref)
    assert np.array_equal(MdsCode(x, y).generator, ref)


def test_encode_decode_random_erasures_against_galois():
    rng = np.random.default_rng(3)
    for _ in range(30):
        x = int(rng.integers(1, 20))
        y = int(rng.integers(1, 6))
        spp = int(rng.integers(1, 9))
        code = MdsCode(x, y, symbols_per_packet=spp)
        rs = galois.ReedSolomon(255, 255 - y, systematic=True)
        data = rng.integers(0, 256, size=(x, spp), dtype=np.uint8)
        coded = code.encode(data)
        # galois encodes one codeword per row: packet i carries symbol i of each codeword
        assert np.array_equal(coded, _u8(rs.encode(rs.field(data.T))).T)
        for _ in range(4):
            lost = sorted(rng.choice(x + y, size=int(rng.integers(0, y + 1)), replace=False))
            kept = [p for p in rng.permutation(x + y) if p not in lost]
            got = code.decode({int(p): coded[p] for p in kept})
            assert np.array_equal(got, data), (x, y, lost)


def test_decode_agrees_with_galois_decoder_on_random_erasures():
    rng = np.random.default_rng(4)
    x, y, spp = 8, 2, 4
    code = MdsCode(x, y, symbols_per_packet=spp)
    rs = galois.ReedSolomon(255, 255 - y, systematic=True)
    for _ in range(10):
        data = rng.integers(0, 256, size=(x, spp), dtype=np.uint8)
        coded = code.encode(data)
        lost = list(rng.choice(x + y, size=y, replace=False))
        cw = coded.T.copy()
        cw[:, lost] = 0
        mask = np.zeros(cw.shape, dtype=bool)
        mask[:, lost] = True
        ref = _u8(rs.decode(rs.field(cw), erasures=mask)).T
        ours = code.decode({p: coded[p] for p in range(x + y) if p not in lost})
        assert np.array_equal(ours, ref) and np.array_equal(ours, data)


def test_block_coder_short_blocks_against_galois():
    coder = BlockCoder(8, 2, symbols_per_packet=4, seed=9)
    rs = galois.ReedSolomon(255, 253, systematic=True)
    lay = coder.layout(8 * 3 + 5)  # blocks of 8, 8, 8 and 5 data packets
    for b in range(lay.n_blocks):
        k = lay.data_packets(b)
        coded = coder.encode_block(2, lay, b)
        data = coder.block_data(2, b, k)
        assert np.array_equal(coded, _u8(rs.encode(rs.field(data.T))).T)
