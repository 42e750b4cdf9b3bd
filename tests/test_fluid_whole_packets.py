"""The fluid's bytes in flight as whole packets (``engine.fluid_whole_packets``): the count a
packet sender holds at an ACK, and BBR's 1.25 gain phase ending on it as with packets."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.cc.bbr import PROBE_BW
from uno.cc.bbr import S as BBR
from uno.fluid.control import in_flight_at_ack

MSS = 4160.0

#: twelve inter-DC BBR flows (sizes in bytes, starts in us) over one WAN link: after their
#: first losses the flows left run well below the link's rate on an idle path, where a 1.25
#: phase's bytes in flight meet its target exactly as the phase's own ACKs come back
TWELVE = [
    (188, 55, 98135179, 178.4817), (223, 95, 6863667, 307.6307), (242, 117, 9779128, 438.0171),
    (188, 69, 99252517, 439.2481), (80, 226, 49325511, 592.8525), (88, 164, 24790082, 614.3705),
    (81, 134, 50819677, 615.0129), (206, 55, 50841748, 737.4799), (208, 79, 98268489, 754.5641),
    (112, 181, 13805112, 807.1738), (140, 113, 51007434, 808.5265),
    (130, 113, 201985248, 968.2380),
]  # fmt: skip


def test_in_flight_at_ack_rounds_up_to_whole_packets():
    assert in_flight_at_ack(37.73 * MSS, MSS) == 38 * MSS
    assert in_flight_at_ack(0.2 * MSS, MSS) == MSS
    assert in_flight_at_ack(4 * MSS, MSS) == 4 * MSS  # a whole count stays
    assert in_flight_at_ack(4 * MSS + 1e-4, MSS) == 4 * MSS  # (float noise is not a packet)
    assert in_flight_at_ack(4.01 * MSS, MSS) == 5 * MSS
    assert in_flight_at_ack(0.0, MSS) == 0.0
    assert in_flight_at_ack.py_func(37.73 * MSS, MSS) == 38 * MSS


def probe_phases(whole_packets: bool, read_ahead: bool = False) -> np.ndarray:
    """Each completed 1.25 phase of PROBE_BW in the twelve flows' fluid run, in RTprops. Its
    ACKs are not squeezed out at the full WAN port: the phases are compared on the losses of
    their data alone (with them, one phase of the whole-packet run lasts 14.4 RTprops)."""
    flows = ",".join(f"{{src:{s},dst:{d},size_bytes:{n},start_us:{t}}}" for s, d, n, t in TWELVE)
    sim = build_simulation(to_run_config(uno.compose([
        "experiment=fig10_load", "scheme=mprdma_bbr", "workload=flows",
        f"workload.flows=[{flows}]", "topo.wan_links=1", "engine.kind=fluid",
        "engine.progress=false", "engine.sample_interval_us=0",
        f"engine.fluid_whole_packets={str(whole_packets).lower()}",
        "engine.fluid_ack_losses=false",
        f"engine.fluid_ack_read_ahead={str(read_ahead).lower()}",
    ])))  # fmt: skip
    advance, lengths = sim.advance, []

    def one_step_at_a_time(k_start, k_stop):
        k = k_start
        while k < k_stop:
            gain = sim.cs[:, BBR.pacing_gain].copy()
            stamp = sim.cs[:, BBR.cycle_stamp_ps].copy()
            reached = advance(k, k + 1)
            cs = sim.cs
            ended = (
                (gain == 1.25) & (cs[:, BBR.pacing_gain] != 1.25) & (cs[:, BBR.mode] == PROBE_BW)
            )
            for f in np.flatnonzero(ended):
                lengths.append((cs[f, BBR.cycle_stamp_ps] - stamp[f]) / cs[f, BBR.rtprop_ps])
            if reached < k + 1:
                return reached
            k = reached
        return k

    sim.advance = one_step_at_a_time
    assert sim.run().flows["finish_ps"].notna().all()
    return np.array(lengths)


def test_bbr_probe_phase_ends_on_whole_packets():
    """With packets (Python data plane, every ACK) these flows' 1.25 phases last a median
    1.002 RTprops, at most 7.05. The fluid count of bytes in flight never gets ahead of the
    phase's target once its ACKs raise BtlBw, and phases run on (9 phases, a median 1.64
    RTprops, at most 18.0; two end within 5% of one RTprop); as whole packets more of them end
    after one RTprop, as with packets (8 of 15)."""
    fluid, whole = probe_phases(False), probe_phases(True)
    assert len(fluid) >= 8 and len(whole) >= 8
    assert np.median(fluid) > 1.2 and fluid.max() > 10.0
    on_time = [float(np.mean(lengths < 1.05)) for lengths in (fluid, whole)]
    assert on_time[1] > on_time[0] + 0.2
    assert np.median(whole) < np.median(fluid)


def test_bbr_probe_phases_stay_short_with_the_acks_queueing_read_ahead():
    """Read ahead (``engine.fluid_ack_read_ahead``) for as long as a reverse queue's trend
    has lasted, the whole-packet phases stay near one RTprop (a median 1.03 of 19, longest
    12.1 against 17.5 without). Read half a cross-DC RTT ahead at a few steps' rate whatever
    its age, queues read empty or full."""
    lengths = probe_phases(True, read_ahead=True)
    assert len(lengths) >= 10
    assert np.median(lengths) == pytest.approx(1.0, abs=0.05)
    assert lengths.max() < probe_phases(True).max()
