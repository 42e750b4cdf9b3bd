"""Erasure coding for UnoRC (Uno paper §3.3, §4.2): Reed–Solomon block codes over GF(2^8) and
the block bookkeeping a transport needs. See :mod:`uno.ec.mds`."""

from uno.ec.mds import (
    BlockCoder,
    BlockLayout,
    BlockReceiver,
    DecodeMismatchError,
    InconsistentBlockError,
    MdsCode,
    UndecodableError,
    block_data,
    block_layout,
)

__all__ = [
    "BlockCoder",
    "BlockLayout",
    "BlockReceiver",
    "DecodeMismatchError",
    "InconsistentBlockError",
    "MdsCode",
    "UndecodableError",
    "block_data",
    "block_layout",
]
