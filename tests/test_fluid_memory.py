"""The delay-line memory a process keeps between fluid runs (uno.fluid.memory): every run sees
all-zero memory, whatever the run before it left, and the cache changes no result."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid.memory import DELAY_LINES, DelayLineMemory

SMALL = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
         "workload.n_flows=300", "workload.load=0.6", "engine.kind=fluid",
         "engine.sample_interval_us=0"]  # fmt: skip


def test_a_buffer_given_back_is_zeroed_and_handed_out_again():
    memory = DelayLineMemory(max_kept_bytes=100_000)
    buf, ring = memory.take(100, 13)
    assert ring.shape == (100, 13) and not ring.any() and np.shares_memory(buf, ring)
    ring[:40] = 7.0
    memory.give(buf, 40 * 13)
    assert memory.kept_bytes == buf.nbytes
    again, ring2 = memory.take(50, 19)  # smaller: the same buffer, zero
    assert again is buf and ring2.shape == (50, 19) and not again.any()
    assert memory.kept_bytes == 0  # (taken: no other run may have it meanwhile)
    other, _ = memory.take(50, 19)  # a second taker gets new memory
    assert other is not buf
    memory.give(other, 0)
    memory.give(again, 0)  # the larger of the two stays
    assert memory.kept_bytes == buf.nbytes
    big, _ = memory.take(2000, 13)  # larger than what is kept: new memory
    assert big.size >= 2000 * 13 and big is not buf
    big[:] = 1.0
    memory.give(big, big.size)  # over max_kept_bytes: not kept
    assert memory.kept_bytes == buf.nbytes
    memory.release()
    assert memory.kept_bytes == 0


def test_a_run_after_a_truncated_one_gets_the_results_of_fresh_memory(delay_lines_at_end):
    """A run stopped by ``engine.max_sim_time_ms`` leaves feedback due in its delay lines; the
    memory goes back zeroed, so the next run in the process (which reuses it) gives the flows
    table of a run on fresh memory."""
    DELAY_LINES.release()
    fresh = uno.run(uno.compose(SMALL)).tables["flows"]
    truncated = build_simulation(to_run_config(uno.compose([*SMALL, "engine.max_sim_time_ms=1"])))
    truncated.run()
    assert truncated.n_finished < len(truncated.flows)
    assert delay_lines_at_end == [False, True]  # (the truncated run left rows to clear)
    kept = DELAY_LINES._kept
    assert kept is not None and not kept.any()
    reused = build_simulation(to_run_config(uno.compose(SMALL)))
    assert np.shares_memory(reused.ring, kept)
    pd.testing.assert_frame_equal(reused.run().tables["flows"], fresh)


def test_a_failed_run_gives_no_memory_back(monkeypatch):
    DELAY_LINES.release()
    sim = build_simulation(to_run_config(uno.compose(SMALL)))

    def fail(k_start, k_stop):
        raise RuntimeError("midway")

    monkeypatch.setattr(sim, "advance", fail)
    with pytest.raises(RuntimeError, match="midway"):
        sim.run()
    assert DELAY_LINES.kept_bytes == 0


def test_delay_lines_the_system_cannot_map_stop_the_run_naming_their_timeouts(monkeypatch):
    """A ring the system refuses (too many flows with long timeouts for its memory) stops the
    run before it starts, with one line naming the timeouts that size the lines."""
    from uno.core.errors import ConfigError

    def refuse(rows, cols):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(DELAY_LINES, "take", refuse)
    with pytest.raises(ConfigError, match="transport.rto_queue_factor") as err:
        build_simulation(to_run_config(uno.compose(SMALL)))
    message = str(err.value)
    assert "300 flows" in message and "retransmission timeouts" in message
    assert "Cannot allocate memory" in message and "\n" not in message


@pytest.mark.parametrize("kind", ["fluid", "hybrid"])
def test_delay_lines_that_outgrow_their_memory_stop_the_run_with_one_line(
    kind, tmp_path, monkeypatch
):
    """Lines grow with the delays the flows meet; a run whose lines come to hold more than the
    memory they may use stops there with one line naming the step, and leaves no run folder."""
    from uno.core.errors import ConfigError

    over = [*SMALL, f"engine.kind={kind}", "engine.hybrid_packet_max_bytes=100000"]
    sim = build_simulation(to_run_config(uno.compose(over)))
    sim_fluid = getattr(sim, "fluid", sim)
    sim_fluid.line_memory_limit_bytes = 1 << 20
    with pytest.raises(ConfigError, match="engine.fluid_step_intra_rtt") as err:
        sim.run()
    message = str(err.value)
    assert "more than the 1 MiB they may use" in message and "\n" not in message
    assert sim_fluid.now_ps > 0 and sim_fluid.n_finished < len(sim_fluid.flows)
    # the run as a user starts it: the error, and nothing written
    monkeypatch.setattr("uno.fluid.engine.line_memory_limit_bytes", lambda: 1 << 20)
    with pytest.raises(ConfigError, match="delay lines hold"):
        uno.run(uno.compose([*over, f"out_dir={tmp_path / 'run'}"]))
    assert not (tmp_path / "run").exists()


def test_the_line_memory_limit_is_most_of_what_the_system_has():
    from uno.fluid.engine import line_memory_limit_bytes

    limit = line_memory_limit_bytes()
    assert 0 < limit < os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
