"""Where a fluid run's wall time goes, and how it grows with flows, links, simulated time and
RTT spread.

Each case is one fluid run, built and stepped as ``uno-run`` does it; the step loop tallies the
CPU's cycle counter around each part of a step (:data:`uno.fluid.cycles.TALLY`), so the shares
come from the run itself, at full speed. Printed per case: the wall time, steps, the running
flows and route entries the steps walked, and each part's time, its share of the wall time, its
cost per step and per running flow-step.

    python benchmarks/fluid_profile.py                      # the scaling cases below
    python benchmarks/fluid_profile.py --case "experiment=fig10_load workload.n_flows=2000"
    python benchmarks/fluid_profile.py --bare --case "engine.kind=hybrid engine.hybrid_packet_tags=[inter]"

Each part's time is its ticks over the counter's rate, measured against ``time.perf_counter``
before the runs; "outside the parts" is the rest of the wall time: the calls between the
kernels and the Python between the calls. A hybrid run's tally also holds the packet events
its kernel ran between the steps and the coupling: the packets' bytes into the fluid links,
the links' state out to the ports. With ``--bare`` a case's overrides are the whole run (the
default incast unless they say otherwise), not added to the Fig. 10 base.
"""

from __future__ import annotations

import argparse
import shlex
import time

import numpy as np
from numba import njit

import uno
import uno.api
from uno.build import build_simulation
from uno.fluid.columns import CT
from uno.fluid.cycles import TALLY, cycles

BASE = ["experiment=fig10_load", "scheme=uno_ecmp", "engine.kind=fluid", "engine.progress=false",
        "engine.sample_interval_us=0"]  # fmt: skip
#: (label, overrides): the paper's Fig. 10 traffic, doubling one thing at a time
CASES = [
    ("base 500 flows", ["workload.n_flows=500"]),
    ("2x flows", ["workload.n_flows=1000"]),
    ("4x flows", ["workload.n_flows=2000"]),
    ("k=12 (3x the links)", ["workload.n_flows=500", "topo.k=12"]),
    (
        "1/4 simulated time",
        ["workload.n_flows=500", "engine.max_sim_time_ms=25", "engine.allow_unfinished=true"],
    ),
    ("RTT ratio 32 (of 128)", ["workload.n_flows=500", "topo.inter_rtt_ratio=32"]),
    ("RTT ratio 512", ["workload.n_flows=500", "topo.inter_rtt_ratio=512"]),
    ("hybrid, flows under 1 MB as packets",
     ["workload.n_flows=500", "engine.kind=hybrid", "engine.hybrid_packet_max_bytes=1000000"]),
]  # fmt: skip
QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]
PARTS = ("start", "feedback", "sends", "enlist", "lone_links", "links", "depart", "carry",
         "file_sends", "file_drops", "file_deliveries", "packet_events", "packets_in",
         "state_out")  # fmt: skip


@njit
def _read_counter() -> int:
    return cycles()


def counter_hz(span_s: float = 0.25) -> float:
    """The cycle counter's ticks per second of ``time.perf_counter``, over ``span_s``."""
    _read_counter()  # (compiled before the span)
    t0, c0 = time.perf_counter(), _read_counter()
    time.sleep(span_s)
    c1, t1 = _read_counter(), time.perf_counter()
    return (c1 - c0) / (t1 - t0)


def profile(label: str, overrides: list[str], hz: float) -> None:
    cfg = uno.api.to_run_config(uno.compose(overrides))
    sim = build_simulation(cfg)
    fluid = getattr(sim, "fluid", sim)  # (a hybrid run's fluid part)
    n_links = len(fluid.ls)
    active_sum = [0, 0]
    advance = fluid.advance

    def counted(k_start, k_stop):  # (the running flows, sampled at each call from Python)
        active_sum[0] += int(fluid.counters[CT.running])
        active_sum[1] += 1
        return advance(k_start, k_stop)

    fluid.advance = counted
    t0 = time.perf_counter()
    result = sim.run()
    wall = time.perf_counter() - t0
    tally = fluid.scratch.tally
    run = result.summary["run"]
    ticks = np.array([tally[getattr(TALLY, p)] for p in PARTS], dtype=float)
    steps = max(int(tally[TALLY.steps]), 1)
    seconds = ticks / hz
    outside = wall - seconds.sum()
    # (the hybrid's kernel runs its steps without calls from Python to sample them at)
    sampled = fluid is sim
    running = active_sum[0] / max(active_sum[1], 1)
    flows = f"~{running:.0f} running flows" if sampled else "running flows not sampled"
    print(f"\n{label}: {len(result.flows)} flows, {n_links} links, simulated "
          f"{run['sim_time_us'] / 1e3:,.1f} ms in {wall:.2f} s wall, {steps:,} steps "
          f"({1e6 * wall / steps:.1f} us/step), {flows}, "
          f"{tally[TALLY.entries] / steps:,.0f} route entries walked a step")  # fmt: skip
    print(f"  {'part':19s} {'s':>7s} {'share':>6s} {'us/step':>8s} {'ns/running flow-step':>21s}")
    for name, s in [*zip(PARTS, seconds, strict=True), ("outside the parts", outside)]:
        print(
            f"  {name:19s} {s:7.3f} {100 * s / wall:5.1f}% {1e6 * s / steps:8.2f} "
            + (f"{1e9 * s / steps / max(running, 1.0):21.1f}" if sampled else f"{'-':>21s}")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", help="overrides of one case (quoted)")
    ap.add_argument("--bare", action="store_true", help="cases without the Fig. 10 base")
    args = ap.parse_args()
    base = QUIET if args.bare else BASE
    cases = [(c, shlex.split(c)) for c in args.case] if args.case else CASES
    hz = counter_hz()
    for label, overrides in cases:
        short = [*base, *overrides, "engine.max_sim_time_ms=0.1", "engine.allow_unfinished=true"]
        uno.run(uno.compose(short))  # (its kernels loaded or compiled before the timed run)
        profile(label, [*base, *overrides], hz)


if __name__ == "__main__":
    main()
