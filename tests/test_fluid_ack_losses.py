"""The fluid flows' ACKs lost at full buffers (``engine.fluid_ack_losses``): an ACK that meets a
buffer dropping data is squeezed out with its size's share of a data packet's chance, the rule
that drops the hybrid's ACKs at a full fluid link (:func:`uno.net.shared_link.squeezed_out`),
and a lost ACK is a packet its sender must find lost and resend."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import columns as K
from uno.fluid.faults import ack_loss_share, link_ack_loss

SQUEEZE = 64 / 4160


def links(loss, pkt_loss, fault=0.0) -> np.ndarray:
    ls = np.zeros((len(loss), K.N_LS))
    ls[:, K.LS_LOSS], ls[:, K.LS_PKT_LOSS], ls[:, K.LS_FAULT] = loss, pkt_loss, fault
    return ls


def test_an_ack_meets_a_full_buffer_with_its_size_share_of_a_data_packets_chance():
    ls = links([0.2, 0.0, 0.5], [0.3, 0.3, 0.5], fault=[0.0, 0.0, 0.01])
    # a data packet at a random phase meets 0.3 there: an ACK its share of it
    assert link_ack_loss.py_func(ls, 0, False, SQUEEZE) == pytest.approx(0.3 * SQUEEZE)
    # a link that dropped no data in its last step drops no ACK (its phase loss is stale)
    assert link_ack_loss.py_func(ls, 1, False, SQUEEZE) == 0.0
    # faults add theirs; without the setting only the faults lose ACKs
    assert link_ack_loss.py_func(ls, 2, True, SQUEEZE) == pytest.approx(0.01 + 0.5 * SQUEEZE)
    assert link_ack_loss.py_func(ls, 2, True, 0.0) == pytest.approx(0.01)
    assert link_ack_loss.py_func(ls, 0, False, 0.0) == 0.0


def test_a_routes_acks_add_up_the_chances_of_its_links_by_their_weights():
    ls = links([0.2, 0.0, 0.5], [0.3, 0.3, 0.5])
    no_subflows = SimpleNamespace(n=np.zeros(1, dtype=np.int64))
    rv_ptr, rv_link = np.array([0, 3]), np.array([0, 1, 2])
    ack_w = np.array([1.0, 1.0, 0.5])  # (the last link takes half the route's ACKs)
    share = ack_loss_share.py_func(0, ls, rv_ptr, rv_link, ack_w, no_subflows, None, False,
                                   SQUEEZE)  # fmt: skip
    assert share == pytest.approx((0.3 + 0.5 * 0.5) * SQUEEZE)


def squeeze_of(*overrides: str) -> float:
    sim = build_simulation(to_run_config(uno.compose(["engine.kind=fluid", *overrides])))
    return float(sim.hops.acks[K.ACKS.squeeze])


def test_acks_are_squeezed_out_only_where_they_share_the_data_queue():
    assert squeeze_of() == pytest.approx(SQUEEZE)  # a 64-B ACK, a 4,160-B data packet
    assert squeeze_of("engine.fluid_ack_losses=false") == 0.0
    assert squeeze_of("engine.fluid_ack_bytes=false") == 0.0  # (no ACK bytes in the queues)
    assert squeeze_of("switch.ack_priority=true") == 0.0  # the control lane: never full
    assert squeeze_of("switch.trimming.enabled=true") == 0.0


#: six BBR senders into host 0, whose 60-kB ToR port they keep full, and host 0 sending to host
#: 1: that flow's data path is idle, and its ACKs come back through the full port
INCAST_AND_BACK = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (0, 1)]


def back_flow_lost(*overrides: str) -> tuple[float, float]:
    flows = ",".join(f"{{src:{s},dst:{d},size_bytes:5000000,start_us:0}}"
                     for s, d in INCAST_AND_BACK)  # fmt: skip
    sim = build_simulation(to_run_config(uno.compose([
        "engine.kind=fluid", "workload=flows", f"workload.flows=[{flows}]", "lb=ecmp", "cc=bbr",
        "topo.buffer_bytes=60000", "engine.progress=false", "engine.sample_interval_us=0",
        *overrides,
    ])))  # fmt: skip
    assert sim.run().flows["finish_ps"].notna().all()
    back = len(INCAST_AND_BACK) - 1
    return float(sim.fs[back, K.FS_LOST]), float(sim.fs[back, K.FS_SENT])


def test_a_flow_whose_acks_cross_a_full_port_resends_what_they_lose():
    """Its data meets no full queue, so all it loses are ACKs: at most their share of what
    it sent (one full port on their way back, whose data loss is at most 1), and none when
    ACKs are not squeezed out or wait in the control lane."""
    lost, sent = back_flow_lost()
    assert 0.0 < lost <= 1.2 * SQUEEZE * sent  # (whole packets drawn: a little over)
    assert lost > 0.5 * SQUEEZE * sent  # the port drops most data that reaches it
    assert back_flow_lost("engine.fluid_ack_losses=false")[0] == 0.0
    assert back_flow_lost("switch.ack_priority=true")[0] == 0.0
