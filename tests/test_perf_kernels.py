"""``benchmarks/perf_kernels.py``: the compiled kernels a run loaded from Numba's cache, named at
the addresses the process loaded them at (the map ``perf report`` reads)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import uno
import uno.api
from uno.build import build_simulation
from uno.warmup import cache_folder

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "perf_kernels.py"


def load_script():
    spec = importlib.util.spec_from_file_location("perf_kernels", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_fluid_runs_kernels_are_named_without_overlap():
    folder = cache_folder()
    if folder is None:
        pytest.skip("Numba keeps its kernels in its default places here: nothing to name")
    perf_kernels = load_script()
    overrides = ["engine.kind=fluid", "workload.size_bytes=100000", "engine.progress=false"]
    build_simulation(uno.api.to_run_config(uno.compose(overrides))).run()
    found = perf_kernels.loaded_functions(folder)
    names = [name for _, name in found.values()]
    # the step loop's kernels, which the run loaded, are among them, by their mangled names
    for kernel in ("take_feedback", "7forward7forward", "file_sends"):
        assert any(kernel in name and name.startswith("_ZN3uno") for name in names), kernel
    # each function's bytes end before the next one's begin: sizes read from the right entries
    addresses = sorted(found)
    for here, after in zip(addresses, addresses[1:], strict=False):
        size = found[here][0]
        assert 0 < size and here + size <= after, found[here][1]
