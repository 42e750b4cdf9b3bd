"""``benchmarks/perf_kernels.py``: the compiled kernels a run loaded from Numba's cache, named at
the addresses the process loaded them at (the map ``perf report`` reads)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from uno.warmup import cache_folder

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "perf_kernels.py"


def test_a_fluid_runs_kernels_are_named_without_overlap():
    if cache_folder() is None:
        pytest.skip("Numba keeps its kernels in its default places here: nothing to name")
    # (a process of its own: the kernels it names are those its run loaded from the cache)
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "engine.kind=fluid", "workload.size_bytes=100000"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    path = Path(re.search(r"mapped in (\S+\.map)", run.stdout).group(1))
    try:
        rows = [line.split() for line in path.read_text().splitlines()]
    finally:
        path.unlink()
    found = {int(address, 16): (int(size, 16), name) for address, size, name in rows}
    names = [name for _, name in found.values()]
    # the step loop's kernels, which the run loaded, are among them, by their mangled names
    for kernel in ("take_feedback", "7forward7forward", "file_sends"):
        assert any(kernel in name and name.startswith("_ZN3uno") for name in names), kernel
    # each function's bytes end before the next one's begin: sizes read from the right entries
    addresses = sorted(found)
    for here, after in zip(addresses, addresses[1:], strict=False):
        size = found[here][0]
        assert 0 < size and here + size <= after, found[here][1]
