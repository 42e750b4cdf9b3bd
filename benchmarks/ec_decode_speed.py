"""Decode speed of (10, 8) Reed–Solomon blocks with 2 erasures (uno.ec.mds).

Compares, per block (``--symbols`` codewords, one symbol per packet each):

(a) ``MdsCode.decode``: inverse of the 8 × 8 generator submatrix at the received positions,
    cached per erasure pattern (warm: all 45 patterns cached; cold: the inverse computed
    for each decode, i.e. a fresh cache);
(b) galois's general decoder, ``ReedSolomon(255, 253).decode(codewords, erasures=mask)`` on
    the shortened codewords, all of a block's codewords in one call.

Every decode is checked against the data. Prints µs per block decode (best of ``--repeat``
passes) and the ratios. galois's decoder runs numba code with parallel loops, so its time
swings widely when other processes load the CPU (1.5 to 20 ms per block measured on a 2-core
machine); compare on a quiet machine, or with ``NUMBA_NUM_THREADS=1``.

    python benchmarks/ec_decode_speed.py [--blocks 20000] [--galois-blocks 300] [--symbols 4]
"""

from __future__ import annotations

import argparse
import itertools
import time

import galois
import numba
import numpy as np

from uno.ec import MdsCode

X, Y = 8, 2
N = X + Y


def _best_us(decode, items, repeat: int, before=None) -> float:
    """Best (least disturbed) of ``repeat`` timed passes over ``items``, in µs per item; the
    minimum, because other processes sharing the CPU only ever add time."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for item in items:
            if before is not None:
                before()
            decode(item)
        best = min(best, (time.perf_counter() - t0) / len(items) * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--blocks", type=int, default=20_000, help="blocks for the cached decoder")
    ap.add_argument("--galois-blocks", type=int, default=300, help="blocks for galois's decoder")
    ap.add_argument("--symbols", type=int, default=4, help="symbols per packet")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes; the best is reported")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    code = MdsCode(X, Y, symbols_per_packet=args.symbols)
    patterns = list(itertools.combinations(range(N), Y))
    n_blocks = max(args.blocks, args.galois_blocks)
    datas = rng.integers(0, 256, size=(n_blocks, X, args.symbols), dtype=np.uint8)
    erased = [patterns[i] for i in rng.integers(0, len(patterns), size=n_blocks)]
    coded = [code.encode(d) for d in datas]
    received = [
        {p: c[p] for p in range(N) if p not in e} for c, e in zip(coded, erased, strict=True)
    ]
    for r, d in zip(received, datas, strict=True):
        assert np.array_equal(code.decode(r), d)

    # (a) warm: the check above cached all 44 patterns that need an inverse (the 45th, both
    # parity packets lost, is the identity).
    cached = code.inverse_cache_size
    warm_us = _best_us(code.decode, received[: args.blocks], args.repeat)

    # (a') cold: the inverse is computed for every decode (cache emptied before each).
    cold_us = _best_us(
        code.decode, received[: args.galois_blocks], args.repeat, code.clear_inverse_cache
    )

    # (b) galois's general decoder (errors and erasures: syndromes, Berlekamp–Massey, Chien,
    # Forney), all codewords of a block in one call.
    rs = galois.ReedSolomon(255, 255 - Y, systematic=True)
    gf = rs.field
    g_in = []
    for i in range(args.galois_blocks):
        cw = coded[i].T.copy()  # (symbols, n): one codeword per row
        mask = np.zeros(cw.shape, dtype=bool)
        mask[:, list(erased[i])] = True
        cw[mask] = 0
        g_in.append((gf(cw), mask))
    for i, (cw, mask) in enumerate(g_in):  # also JIT-compiles galois's decoder before timing
        assert np.array_equal(np.asarray(rs.decode(cw, erasures=mask)), datas[i].T)
    galois_us = _best_us(lambda a: rs.decode(a[0], erasures=a[1]), g_in, args.repeat)

    print(
        f"ec_decode_speed: (10, 8) blocks, {Y} erasures, {args.symbols} symbols per packet "
        f"(codewords per block), best of {args.repeat}; galois {galois.__version__}, "
        f"numpy {np.__version__}, numba threads {numba.config.NUMBA_NUM_THREADS}"
    )
    print(
        f"(a)  cached-inverse decoder, warm ({cached} patterns cached): "
        f"{warm_us:9.2f} us/block over {args.blocks} blocks"
    )
    print(
        f"(a') inverse computed at every decode (cold cache):    "
        f"{cold_us:9.2f} us/block over {args.galois_blocks} blocks"
    )
    print(
        f"(b)  galois ReedSolomon.decode with erasures:          "
        f"{galois_us:9.2f} us/block over {args.galois_blocks} blocks"
    )
    print(f"ratio (b)/(a) = {galois_us / warm_us:,.0f}x; (b)/(a') = {galois_us / cold_us:,.1f}x")


if __name__ == "__main__":
    main()
