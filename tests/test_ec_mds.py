"""Reed–Solomon block coding for UnoRC (uno.ec.mds): MDS property, equality with galois's code,
corruption, inverse cache, count-only mode, block layout."""

from __future__ import annotations

import itertools

import galois
import numpy as np
import pytest

import uno.ec.mds as mds
from uno.ec import (
    BlockCoder,
    BlockReceiver,
    DecodeMismatchError,
    InconsistentBlockError,
    MdsCode,
    UndecodableError,
    block_data,
    block_layout,
)

#: (x, y) shapes: the paper's (8, 2), smaller ones, no parity, and more parity than data
SHAPES = [(8, 2), (4, 2), (2, 1), (5, 0), (1, 3)]


def _data(code: MdsCode, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(code.x, code.symbols_per_packet), dtype=np.uint8)


def test_plain_rs_10_8_is_refused_hence_shortened():
    # An RS code of length n needs a primitive n-th root of unity: 10 divides neither 15
    # (GF(2^4), galois's default field for n = 10) nor 255 (GF(2^8)).
    with pytest.raises(ValueError, match="no primitive 10-th roots of unity"):
        galois.ReedSolomon(10, 8)
    with pytest.raises(ValueError, match="no primitive 10-th roots of unity"):
        galois.ReedSolomon(10, 8, field=galois.GF(2**8))
    rs = galois.ReedSolomon(255, 253, systematic=True)
    assert rs.field is galois.GF(2**8)
    assert rs.encode(rs.field.Zeros(8)).shape == (10,)  # shortened: 8 in, 10 out


@pytest.mark.parametrize("x,y", SHAPES)
def test_mds_property_every_erasure_pattern(x, y):
    code = MdsCode(x, y, symbols_per_packet=3)
    assert (code.x, code.y, code.n) == (x, y, x + y)
    data = _data(code, seed=x * 10 + y)
    coded = code.encode(data)
    assert coded.shape == (x + y, 3) and coded.dtype == np.uint8
    assert np.array_equal(coded[:x], data)  # systematic
    for lost in range(y + 1):
        for erased in itertools.combinations(range(code.n), lost):
            received = {p: coded[p] for p in range(code.n) if p not in erased}
            assert np.array_equal(code.decode(received), data), erased
    for erased in itertools.combinations(range(code.n), y + 1):
        received = {p: coded[p] for p in range(code.n) if p not in erased}
        with pytest.raises(UndecodableError):
            code.decode(received)


@pytest.mark.parametrize("x,y", [(8, 2), (4, 2), (2, 1), (3, 4)])
def test_parity_is_galois_shortened_rs(x, y):
    code = MdsCode(x, y, symbols_per_packet=5)
    rs = galois.ReedSolomon(255, 255 - y, systematic=True)
    gf = rs.field
    data = _data(code, seed=7)
    coded = code.encode(data)
    for j in range(code.symbols_per_packet):
        # galois's systematic codeword of the shortened code: the x message symbols, then the
        # y parity symbols appended at the end.
        cw = rs.encode(gf(data[:, j]))
        assert cw.shape == (x + y,)
        assert np.array_equal(np.asarray(cw[:x]), data[:, j])
        assert np.array_equal(np.asarray(cw), coded[:, j])
        assert np.array_equal(np.asarray(rs.encode(gf(data[:, j]), output="parity")), coded[x:, j])


def test_galois_decoder_agrees_on_positions():
    code = MdsCode(8, 2, symbols_per_packet=4)
    rs = galois.ReedSolomon(255, 253, systematic=True)
    data = _data(code, seed=3)
    coded = code.encode(data)
    erased = [1, 9]
    cw = coded.T.copy()  # one codeword per row, positions along columns
    cw[:, erased] = 0
    mask = np.zeros(cw.shape, dtype=bool)
    mask[:, erased] = True
    assert np.array_equal(np.asarray(rs.decode(rs.field(cw), erasures=mask)), data.T)
    received = {p: coded[p] for p in range(10) if p not in erased}
    assert np.array_equal(code.decode(received), data)


def test_generator_systematic_and_short_block_is_shortened_full_code():
    g = MdsCode(8, 2).generator
    assert g.shape == (8, 10) and g.dtype == np.uint8
    assert np.array_equal(g[:, :8], np.eye(8, dtype=np.uint8))
    assert np.count_nonzero(g[:, 8:]) == 16  # every parity depends on every data packet
    # A short block of k data packets = the full code with x - k leading zero data symbols.
    for k in (1, 3, 7):
        assert np.array_equal(MdsCode(k, 2).generator, g[8 - k :, 8 - k :])
    assert np.array_equal(MdsCode(5, 0).generator, np.eye(5, dtype=np.uint8))


def test_corrupted_symbol_changes_decode_or_is_caught():
    code = MdsCode(8, 2)
    data = _data(code, seed=11)
    coded = code.encode(data)
    kept = [0, 1, 3, 4, 5, 6, 7, 9]  # exactly x arrived: 2 and 8 lost
    exact = {p: coded[p] for p in kept}
    assert np.array_equal(code.decode(exact), data)
    for p in kept:
        bad = dict(exact)
        bad[p] = coded[p] ^ np.array([0, 0, 0x40, 0], dtype=np.uint8)
        # undetectable with exactly x symbols, but the data differs, so a comparison with
        # what was sent catches it
        assert not np.array_equal(code.decode(bad), data), p
    # x + 1 arrived: the surplus symbol cross-checks the decode, whichever symbol is wrong
    plus = {p: coded[p] for p in kept + [8]}
    assert np.array_equal(code.decode(plus), data)
    for p in plus:
        bad = dict(plus)
        bad[p] = coded[p] ^ np.array([1, 0, 0, 0], dtype=np.uint8)
        with pytest.raises(InconsistentBlockError):
            code.decode(bad)
    bad = dict(plus)
    bad[9] = coded[9] ^ np.uint8(1)  # 9 is surplus (the lowest 8 positions are used)
    assert np.array_equal(code.decode(bad, check=False), data)


def test_block_coder_raises_on_decode_mismatch():
    coder = BlockCoder(8, 2, symbols_per_packet=4, seed=5)
    lay = coder.layout(8)
    coded = coder.encode_block(3, lay, 0)
    rx = lay.new_receiver(0)
    for p in (0, 1, 2, 3, 4, 5, 8, 9):
        sym = coded[p].copy()
        if p == 8:
            sym[2] ^= 0x10
        rx.add(p, sym)
    with pytest.raises(DecodeMismatchError):
        coder.decode_block(3, 0, rx)
    assert not rx.decoded
    # the same symbols checked against another flow's data also mismatch
    rx2 = lay.new_receiver(0)
    for p in (0, 1, 2, 3, 4, 5, 8, 9):
        rx2.add(p, coded[p])
    with pytest.raises(DecodeMismatchError):
        coder.decode_block(4, 0, rx2)
    coder.decode_block(3, 0, rx2)
    assert rx2.decoded and rx2.symbols == {}


def test_inverse_cached_per_erasure_pattern():
    code = MdsCode(8, 2)
    data = _data(code, seed=2)
    coded = code.encode(data)
    assert code.inverse_cache_size == 0
    pattern = [9, 0, 1, 2, 3, 5, 6, 7]
    for _ in range(2):
        assert np.array_equal(code.decode({p: coded[p] for p in pattern}), data)
    assert code.inverse_cache_size == 1
    # the same set in another arrival order is the same pattern
    assert np.array_equal(code.decode({p: coded[p] for p in reversed(pattern)}), data)
    assert code.inverse_cache_size == 1
    code.decode({p: coded[p] for p in [0, 1, 2, 3, 4, 5, 8, 9]})
    assert code.inverse_cache_size == 2
    # all data packets arrived: no inverse needed, none cached
    assert np.array_equal(code.decode({p: coded[p] for p in range(10)}), data)
    assert code.inverse_cache_size == 2
    # with surplus positions the lowest x are used: {0, 1, 2, 3, 5, 6, 7, 8} both times
    code.decode({p: coded[p] for p in pattern + [8]})
    assert code.inverse_cache_size == 3
    code.decode({p: coded[p] for p in [8, 9, 7, 6, 5, 3, 2, 1, 0]})
    assert code.inverse_cache_size == 3


def test_count_only_mode_same_decisions_no_symbols(monkeypatch):
    payload = BlockCoder(8, 2, payload=True, seed=1)
    rng = np.random.default_rng(0)
    runs = []
    for n_data in (1, 8, 13, 40):
        lay = payload.layout(n_data)
        for b in range(lay.n_blocks):
            size = lay.block_size(b)
            arrivals = list(rng.permutation(size)[: rng.integers(0, size + 1)])
            arrivals += arrivals[:2]  # duplicates
            runs.append((n_data, b, arrivals))

    def replay(coder):
        out = []
        for n_data, b, arrivals in runs:
            lay = coder.layout(n_data)
            coded = coder.encode_block(9, lay, b)
            rx = lay.new_receiver(b)
            edges = [rx.add(p, None if coded is None else coded[p]) for p in arrivals]
            if rx.decodable:
                coder.decode_block(9, b, rx)
            else:
                with pytest.raises(UndecodableError):
                    coder.decode_block(9, b, rx)
            out.append((edges, rx.decodable, rx.decoded, rx.missing()))
        return out

    expected = replay(payload)
    assert any(d for _, d, _, _ in expected) and not all(d for _, d, _, _ in expected)

    def no_code(*args, **kwargs):
        raise AssertionError("count-only mode built a code")

    monkeypatch.setattr(mds, "MdsCode", no_code)
    count_only = BlockCoder(8, 2, payload=False, seed=1)
    assert count_only.encode_block(9, count_only.layout(8), 0) is None
    assert replay(count_only) == expected


@pytest.mark.parametrize(
    "n_data,n_blocks,last_k",
    [(1, 1, 1), (7, 1, 7), (8, 1, 8), (9, 2, 1), (16, 2, 8), (17, 3, 1)],
)
def test_block_layout(n_data, n_blocks, last_k):
    x, y = 8, 2
    lay = block_layout(n_data, x, y)
    assert lay.n_blocks == n_blocks
    assert lay.n_parity == 2 * n_blocks  # y parity per block, the short last one included
    assert lay.n_wire == n_data + 2 * n_blocks
    assert [lay.data_packets(b) for b in range(n_blocks)] == [8] * (n_blocks - 1) + [last_k]
    assert lay.block_size(n_blocks - 1) == last_k + 2
    seqs = [s for b in range(n_blocks) for s in lay.wire_range(b)]
    assert seqs == list(range(lay.n_wire))  # blocks back to back, every wire packet once
    data_seen = []
    for s in seqs:
        b, p = lay.locate(s)
        assert lay.wire_seq(b, p) == s
        assert lay.wire_range(b)[p] == s
        k = lay.data_packets(b)
        assert lay.is_parity(b, p) == (p >= k)
        i = lay.data_index(b, p)
        if i is not None:
            assert lay.locate_data(i) == (b, p)
            data_seen.append(i)
    assert data_seen == list(range(n_data))  # data packets in message order
    last = lay.wire_range(n_blocks - 1)
    assert [lay.locate(s)[1] for s in last] == list(range(last_k + 2))
    assert [lay.is_parity(n_blocks - 1, p) for p in range(last_k + 2)] == [False] * last_k + [
        True,
        True,
    ]
    rx = lay.new_receiver(n_blocks - 1)
    assert (rx.k, rx.size) == (last_k, last_k + 2)
    with pytest.raises(ValueError):
        lay.locate(lay.n_wire)
    with pytest.raises(ValueError):
        lay.wire_seq(n_blocks - 1, last_k + 2)


def test_round_trip_with_losses_nack_and_retransmit():
    coder = BlockCoder(8, 2, symbols_per_packet=4, seed=42)
    lay = coder.layout(17)  # blocks of 8, 8 and 1 data packets
    rng = np.random.default_rng(1)
    for b in range(lay.n_blocks):
        coded = coder.encode_block(7, lay, b)
        assert coded.shape == (lay.block_size(b), 4)
        assert np.array_equal(
            coded[: lay.data_packets(b)], coder.block_data(7, b, lay.data_packets(b))
        )
        for lost in range(lay.y + 2):
            order = rng.permutation(lay.block_size(b))
            arrived, dropped = order[lost:], sorted(int(p) for p in order[:lost])
            rx = lay.new_receiver(b)
            edges = [rx.add(p, coded[p]) for p in arrived]
            assert rx.missing() == tuple(dropped)
            if lost <= lay.y:
                assert edges.count(True) == 1 and edges.index(True) == rx.k - 1
                coder.decode_block(7, b, rx)
                assert rx.decoded
            else:
                assert not rx.decodable and True not in edges
                # NACK: the sender resends the missing wire packets (same symbols)
                for s in [lay.wire_seq(b, p) for p in rx.missing()]:
                    bb, p = lay.locate(s)
                    assert bb == b
                    rx.add(p, coder.encode_block(7, lay, b)[p])
                assert rx.missing() == ()
                coder.decode_block(7, b, rx)
                assert rx.decoded


def test_block_receiver_edges_and_duplicates():
    rx = BlockReceiver(2, 1)
    assert rx.missing() == (0, 1, 2)
    assert rx.add(2, np.zeros(4, np.uint8)) is False
    assert rx.add(2) is False  # duplicate
    assert rx.n_received == 1 and not rx.decodable
    assert rx.add(0, np.zeros(4, np.uint8)) is True  # the k-th distinct position
    assert rx.decodable and rx.has(0) and not rx.has(1)
    rx.mark_decoded()
    assert rx.add(1, np.zeros(4, np.uint8)) is False
    assert rx.symbols == {} and rx.missing() == ()
    with pytest.raises(ValueError):
        rx.add(3)


def test_block_data_is_deterministic_and_keyed():
    a = block_data(0, 1, 2, 8, 4)
    assert a.shape == (8, 4) and a.dtype == np.uint8
    assert np.array_equal(a, block_data(0, 1, 2, 8, 4))
    for other in (block_data(1, 1, 2, 8, 4), block_data(0, 2, 2, 8, 4), block_data(0, 1, 3, 8, 4)):
        assert not np.array_equal(a, other)
    # a shorter block is a prefix of the same stream, not a different one
    assert np.array_equal(block_data(0, 1, 2, 1, 4), a[:1])


@pytest.mark.parametrize(
    "args", [(0, 2), (8, -1), (254, 2), (8, 2, 0)], ids=["x0", "y<0", "n>255", "symbols0"]
)
def test_invalid_shapes_refused(args):
    with pytest.raises(ValueError):
        MdsCode(*args)


def test_largest_block_and_wrong_inputs():
    code = MdsCode(253, 2, symbols_per_packet=1)
    data = _data(code, seed=4)
    coded = code.encode(data)
    received = {p: coded[p] for p in range(255) if p not in (17, 200)}
    assert np.array_equal(code.decode(received), data)
    small = MdsCode(2, 1)
    with pytest.raises(ValueError):
        small.encode(np.zeros((3, 4), np.uint8))
    with pytest.raises(ValueError):
        small.encode(np.full((2, 4), 256))
    with pytest.raises(ValueError):
        small.decode({0: np.zeros(4, np.uint8), 3: np.zeros(4, np.uint8)})
