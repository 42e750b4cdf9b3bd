"""Small NumPy helpers shared by the topology and the engines."""

from __future__ import annotations

import numpy as np


def concat_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + counts[i] - 1`` of every i, concatenated (int64),
    without a Python loop: each index is its range's start plus its place in the range."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - counts), counts) + np.arange(
        total, dtype=np.int64
    )
