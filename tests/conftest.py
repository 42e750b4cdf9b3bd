"""Shared helpers for the test suite."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

import uno
from uno.metrics.result import RunResult
from uno.warmup import warm


@pytest.hookimpl(trylast=True)  # (after the terminal reporter is configured)
def pytest_configure(config: pytest.Config) -> None:
    """The whole suite on several workers: compile the kernels once, before the workers start
    (:mod:`uno.warmup`), rather than in every worker at once. A worker, a run in one process
    or a run of chosen tests compiles only what its tests call."""
    if hasattr(config, "workerinput") or config.getoption("numprocesses", None) in (None, 0, 1):
        return
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        warm(say=config.pluginmanager.get_plugin("terminalreporter").write_line)


#: a mixed incast of about a second: two_dc with k=4, 2 intra + 2 inter senders of 4 MB
SMALL_INCAST = [
    "topo.k=4",
    "workload.size_bytes=4000000",
    "workload.n_intra=2",
    "workload.n_inter=2",
]

#: the default two-datacenter incast with 2 intra-DC and 2 inter-DC senders of 2 MB, unsampled:
#: the intra-DC flows finish (~340 us with packets) before the inter-DC flows' first windows
#: reach the receiver's link (the fluid engine's tests of stop_when_done and of the wire)
TWO_PLUS_TWO_INCAST = [
    "workload=incast",
    "workload.n_intra=2",
    "workload.n_inter=2",
    "workload.size_bytes=2000000",
    "engine.sample_interval_us=0",
    "engine.progress=false",
]

#: the four schemes whose data-plane behaviour two implementations must agree on (event vs lazy
#: port, compiled vs Python data plane): DCTCP/ECMP, UnoCC (phantom queues, spraying), Gemini,
#: MP-RDMA+BBR
SCHEME_OVERRIDES = [
    ["cc=dctcp", "lb=ecmp"],
    ["cc=uno"],
    ["cc=gemini", "lb=ecmp"],
    ["cc=mprdma_bbr"],
]


def uno_cli(args: list[str], cwd) -> subprocess.Popen:
    """Start ``uno-run args`` (as ``python -m uno.cli``) in ``cwd``, output captured as text,
    with SIGINT at its default disposition: a shell without job control starts a background
    command with SIGINT ignored, and the children of a test run started so would inherit it
    (the Ctrl-C tests send SIGINT)."""
    return subprocess.Popen(
        [sys.executable, "-m", "uno.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(overrides: list[str], out_dir=None) -> RunResult:
    """Compose with Hydra overrides, run in-process, and check the run's invariants."""
    result = uno.run(uno.compose(overrides), out_dir=out_dir)
    assert_conservation(result)
    return result


def assert_conservation(result: RunResult) -> None:
    """Packets: injected = delivered + dropped + in network (the engine checks this too and
    raises; here we re-derive it from the summary). Bytes: every finished flow delivered
    exactly its size, no flow delivered more than its size."""
    pk = result.summary["packets"]
    injected = sum(pk["injected"].values())
    delivered = sum(pk["delivered"].values())
    dropped = sum(pk["dropped"].values())
    assert injected == delivered + dropped + pk["in_network"]
    flows = result.flows
    assert (flows["bytes_delivered"] <= flows["size_bytes"]).all()
    done = flows[flows["finish_ps"].notna()]
    assert (done["bytes_delivered"] == done["size_bytes"]).all()


def flows_override(flows: list[tuple[int, int, int]] | list[tuple[int, int, int, float]]) -> str:
    """A ``workload.flows=[...]`` override from (src, dst, size_bytes[, start_us]) tuples."""
    items = []
    for f in flows:
        start = f[3] if len(f) > 3 else 0.0
        items.append(f"{{src:{f[0]},dst:{f[1]},size_bytes:{f[2]},start_us:{start}}}")
    return "workload.flows=[" + ",".join(items) + "]"


@pytest.fixture
def run_sim():
    return run


@pytest.fixture
def delay_lines_at_end(monkeypatch) -> list[bool]:
    """Per fluid run that gives its delay-line memory back (uno.fluid.memory), in order,
    whether a row it handed out still held anything at that moment (before the zeroing)."""
    from uno.fluid.memory import DELAY_LINES

    nonzero: list[bool] = []
    give = DELAY_LINES.give

    def checked_give(buf, used_elements):
        nonzero.append(bool(buf[:used_elements].any()))
        give(buf, used_elements)

    monkeypatch.setattr(DELAY_LINES, "give", checked_give)
    return nonzero
