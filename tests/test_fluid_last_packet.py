"""A flow's last ACK in the flow-level engines with ``engine.fluid_last_packet``, against the
packet engine's (``FS_LAST_EARLY``, :func:`uno.fluid.arrays.last_ack_early_ps`).

A packet's ACK returns a base RTT after its serialisation at the NIC began, a fluid byte's a
base RTT after the byte left it, and a flow's last packet crosses its hops at its own size. So
a lone flow's packet sender finishes before the ideal FCT (the base RTT and the message's
serialisation): by a full packet's NIC time on one path of equal rates, by its one packet's
NIC time for a flow of one packet. The fluid and max-min engines finish it then too (without
the setting, at the ideal FCT)."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.fluid import columns as C
from uno.fluid.arrays import last_two_packets_ps
from uno.fluid.jitter import link_mean_wait_ps, mean_queue_pkts

QUIET = ["engine.progress=false", "engine.sample_interval_us=0", "engine.fluid_last_packet=true"]


def _lone_flows(pairs, size_bytes: int, gap_us: float = 40.0) -> str:
    """A ``workload.flows`` list: one flow per (src, dst), each alone in the network."""
    items = [f"{{src:{s},dst:{d},size_bytes:{size_bytes},start_us:{i * gap_us}}}"
             for i, (s, d) in enumerate(pairs)]  # fmt: skip
    return "[" + ",".join(items) + "]"


def _fcts_ps(kind: str, flows: str, overrides) -> np.ndarray:
    cfg = uno.compose(["workload=flows", f"workload.flows={flows}", f"engine.kind={kind}",
                       *QUIET, *overrides])  # fmt: skip
    return uno.run(cfg).flows["fct_ps"].to_numpy(dtype=float)


@pytest.mark.parametrize(("mtu", "pad"), [(4096, "false"), (9000, "false"), (4096, "true")])
def test_lone_flows_on_one_path_finish_as_their_packet_senders(mtu, pad):
    """ECMP: every flow size (one packet, a short last packet, whole packets), within the
    ToR, the pod and across pods, finishes in the fluid and max-min engines to the ps of the
    packet engine, and before its ideal FCT."""
    pairs = [(0, 1), (0, 5), (1, 40), (3, 100)]
    over = ["lb=ecmp", f"transport.mtu_bytes={mtu}", f"transport.pad_last_packet={pad}"]
    for size in (1000, 5000, 13000, mtu * 4):
        flows = _lone_flows(pairs, size)
        packet = _fcts_ps("packet", flows, over)
        for kind in ("fluid", "maxmin"):
            assert _fcts_ps(kind, flows, over) == pytest.approx(packet, abs=1.0), (kind, size)
        ideal = uno.run(uno.compose(["workload=flows", f"workload.flows={flows}",
                                     "engine.kind=maxmin", *QUIET, *over])).flows  # fmt: skip
        assert (packet < ideal["ideal_fct_ps"].to_numpy(dtype=float)).all()


def test_sprayed_lone_flows_finish_as_their_packet_senders_on_average():
    """Spraying: the last packet and the one before it take the same links with the chance
    two packets hash alike, and otherwise meet at the first and last hop only (where the short
    last one may overtake the other): the fluid's finish is the mean of the two, within a few
    ns of the packet runs' over 150 flows of random pairs, and each flow within a packet's
    serialisation of its packet run."""
    rng = np.random.default_rng(1)
    pairs = [tuple(rng.choice(128, 2, replace=False).tolist()) for _ in range(150)]
    over = ["lb=spray", "transport.mtu_bytes=9000"]
    flows = _lone_flows(pairs, 13000)
    packet = _fcts_ps("packet", flows, over)
    fluid = _fcts_ps("fluid", flows, over)
    full_packet_ps = 9064 * 8 * 10  # at 100 Gb/s
    assert abs(fluid.mean() - packet.mean()) < 20_000.0  # ps
    assert np.abs(fluid - packet).max() < full_packet_ps


def test_the_last_two_packets_on_six_hops_of_equal_rates():
    """A 4,064-B last packet (325 ns a hop) behind a 9,064-B one (725 ns): on one path it
    follows it across every hop (6 x 725 + 325 ns after the full one's start); sprayed, it
    overtakes it between the first and the last hop and both have crossed the last one when
    the full one has (6 x 725); behind ten full packets it goes into their stream at the last
    hop and delays its end by its own 325 ns."""
    full = np.full((1, 6), 725, dtype=np.int64)
    last = np.full((1, 6), 325, dtype=np.int64)
    on = np.ones((1, 6), dtype=bool)
    ends = on.copy()
    ends[0, 1:5] = False
    none = np.zeros(1, dtype=np.int64)
    assert last_two_packets_ps(full, last, on, on, none)[0] == 6 * 725 + 325
    assert last_two_packets_ps(full, last, on, ends, none)[0] == 6 * 725
    assert last_two_packets_ps(full, last, on, ends, none + 10 * 725)[0] == 6 * 725 + 325


def test_the_mean_queue_a_packet_meets_among_periodic_streams():
    """One other periodic stream at load 0.5 leaves, at a random time, a packet's remaining
    work with the chance 0.5 (1 - x) above x packets: 0.25 packets on average; none at load 1
    (the fluid queue holds the delay there) or without another stream. At a link of two
    equal streams of 0.25 each, a packet of one meets the other's queue (0.125 packets: 41.6
    ns of 4,160 B at 100 Gb/s), an ACK both streams' (load 0.5)."""
    assert mean_queue_pkts(1.0, 0.5) == pytest.approx(0.25, rel=1e-9)
    assert mean_queue_pkts(1.0, 1.0) == 0.0 and mean_queue_pkts(0.0, 0.5) == 0.0
    assert mean_queue_pkts(4.0, 0.8) > mean_queue_pkts(4.0, 0.5) > mean_queue_pkts(2.0, 0.5)
    ls = np.zeros((1, C.N_LS))
    cap = 100e9 / 8e12  # bytes/ps
    ls[0, C.LS_CAP] = cap
    ls[0, C.LS_ARR] = 0.5 * cap
    ls[0, C.LS_ARR2] = 2 * (0.25 * cap) ** 2
    assert link_mean_wait_ps(ls, 0, 4160.0, True) == pytest.approx(0.125 * 4160 / cap)
    assert link_mean_wait_ps(ls, 0, 4160.0, False) == pytest.approx(
        mean_queue_pkts(2.0, 0.5) * 4160 / cap
    )
    ls[0, C.LS_ARR2] = (0.5 * cap) ** 2  # one stream: no other to meet
    assert link_mean_wait_ps(ls, 0, 4160.0, True) == 0.0
