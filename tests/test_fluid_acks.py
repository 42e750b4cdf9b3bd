"""The fluid engine's ACKs as bytes on their way back (``engine.fluid_ack_bytes``,
``uno.fluid.kernels.acks_out``): one ACK per data packet delivered, on the links of the flow's
ACK route where ACKs share the data queue; a full buffer drops the data, not them; the phantom
queue counts them as ``switch.phantom.count_acks`` says; and the ports they cross carry the
bytes the packet engine's ACKs carry there."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import kernels as K

RNG = np.random.default_rng(11)
CAP = 0.0125  # 100 Gb/s in bytes/ps
DT = 1e6  # 1 us


def _sim(overrides: list[str]):
    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                       "workload.n_flows=60", "engine.kind=fluid", *overrides])  # fmt: skip
    return build_simulation(to_run_config(cfg))


@pytest.mark.parametrize("scheme", ["uno_ecmp", "uno"])
def test_acks_out_matches_python_and_puts_one_ack_per_packet_on_the_ack_route(scheme):
    """Random deliveries of random flows (``uno``: UnoLB subflows, each with its own way
    back): the kernel and its twin agree, every link of a flow's ACK route gets its ACK bytes
    (ack_bytes / packet_bytes of the delivered bytes, by the route's weight, or an equal share
    per subflow), and those links, and no others, join the busy list."""
    sim = _sim([f"scheme={scheme}"])
    n = len(sim.flows)
    share = sim.hops[15][0]
    assert share == pytest.approx(64 / 4160)
    sub_n, sub_rlinks, sub_rhops = sim.lb[0], sim.lb[13], sim.lb[14]
    assert (sub_n > 0).any() == (scheme == "uno")
    for _ in range(5):
        markers = RNG.choice(n, 12, replace=False).astype(np.int64)
        fs = sim.fs.copy()
        fs[markers, K.FS_DELIV_NEW] = RNG.uniform(0, 5e4, 12) * (RNG.random(12) < 0.8)
        out = []
        for fn in (K.acks_out, K.acks_out.py_func):
            ls, busy = sim.ls.copy(), np.zeros(len(sim.ls), dtype=np.int64)
            n_busy = fn(fs, ls, markers, 12, sim.rv_ptr, sim.rv_link, sim.rv_w, sim.lb, busy, 0,
                        share)  # fmt: skip
            out.append((ls, busy[:n_busy]))
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
        ls, listed = out[0]
        want = np.zeros(len(ls))
        for f in markers:
            acks = fs[f, K.FS_DELIV_NEW] * share
            if acks <= 0.0:
                continue
            if sub_n[f] > 0 and sub_rhops[f] > 0:
                for s in range(sub_n[f]):
                    np.add.at(want, sub_rlinks[f, s, : sub_rhops[f]], acks / sub_n[f])
            else:
                e = slice(sim.rv_ptr[f], sim.rv_ptr[f + 1])
                np.add.at(want, sim.rv_link[e], acks * sim.rv_w[e])
        np.testing.assert_allclose(ls[:, K.LS_ACK_IN], want, rtol=1e-12, atol=0)
        assert set(listed.tolist()) == set(np.nonzero(want)[0].tolist())
        assert (ls[listed, K.LS_LISTED] == 1.0).all() and len(set(listed.tolist())) == len(listed)


def test_with_the_switches_ack_lane_only_the_receivers_nic_carries_acks():
    """``switch.ack_priority``: the switch ports serve ACKs in a lane of their own that delays
    no data (uno.net.port.ControlLane), so the ACK bytes go only to the receiver's NIC, the
    first link of the way back."""
    sim = _sim(["scheme=uno_ecmp", "switch.ack_priority=true"])
    f = 0
    fs = sim.fs.copy()
    fs[f, K.FS_DELIV_NEW] = 4160.0 * 10
    ls, busy = sim.ls.copy(), np.zeros(len(sim.ls), dtype=np.int64)
    n_busy = K.acks_out(fs, ls, np.array([f]), 1, sim.rv_ptr, sim.rv_link, sim.rv_w, sim.lb,
                        busy, 0, sim.hops[15][0])  # fmt: skip
    nic = sim.rv_link[sim.rv_ptr[f]]
    assert busy[:n_busy].tolist() == [nic]
    assert ls[nic, K.LS_ACK_IN] == pytest.approx(640.0)
    assert sim.rv_ptr[f + 1] - sim.rv_ptr[f] > 1  # (the way back has switch ports too)


def test_a_full_buffer_drops_the_data_not_the_acks_and_the_phantom_counts_them_if_asked():
    """A link at its buffer with data arriving above its rate and ACKs with them: the drops
    are the overflow, all of it data, so the data's loss share is overflow / data arrivals; the
    ACK bytes join the queue's fluid part; the phantom queue counts them only with
    ``LS_PH_COUNTS``' ACK bit. ACKs alone over a full buffer lose their excess bytes and no data share."""
    ls = np.zeros((4, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[:, K.LS_CAP] = CAP
    ls[:, K.LS_BUF] = 1e5
    ls[:, K.LS_Q] = ls[:, K.LS_QF] = 1e5
    ls[:, K.LS_PHSIZE] = 1e6
    ls[:, K.LS_PHDRAIN] = 0.9 * CAP
    ls[:, K.LS_PHKMIN], ls[:, K.LS_PHKMAX] = 1e5, 5e5
    ls[:, K.LS_MODE] = K.MODE_PHANTOM
    ls[:, K.LS_PH_COUNTS] = [K.PH_COUNTS_ACKS, 0, K.PH_COUNTS_ACKS, 0]
    ls[:2, K.LS_ARR] = 1.5 * CAP  # data: 1.5x the line rate
    ls[:, K.LS_ACK_IN] = 200.0
    ls[:, K.LS_LISTED] = 1.0
    assert K.update_links(ls, np.arange(4), 4, DT) == 4
    data = 1.5 * CAP * DT
    overflow = data + 200.0 - CAP * DT
    for link in (0, 1):
        assert ls[link, K.LS_LOSS] == pytest.approx(overflow / data, rel=1e-12)
        assert ls[link, K.LS_DROP] == pytest.approx(overflow, rel=1e-12)
        assert ls[link, K.LS_Q] == pytest.approx(1e5) and ls[link, K.LS_QF] == ls[link, K.LS_Q]
    # the phantom: what stayed of the arrivals, with or without the ACKs, less its drain
    kept = data + 200.0 - overflow
    assert ls[0, K.LS_PH] == pytest.approx(kept - 0.9 * CAP * DT, rel=1e-12)
    assert ls[1, K.LS_PH] == pytest.approx(kept - 200.0 - 0.9 * CAP * DT, rel=1e-12)
    # ACKs only, onto a queue at its buffer: the line drains it, they fit (nothing dropped)
    assert ls[2, K.LS_DROP] == 0.0 and ls[2, K.LS_LOSS] == 0.0
    assert ls[2, K.LS_Q] == pytest.approx(1e5 + 200.0 - CAP * DT)
    assert (ls[:, K.LS_ACK_IN] == 0.0).all()
    # a link that cannot drain them in the step: the excess is lost, the data share is 0
    ls = np.zeros((1, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[0, K.LS_CAP], ls[0, K.LS_BUF] = 1e-6, 1e5
    ls[0, K.LS_Q] = ls[0, K.LS_QF] = 1e5
    ls[0, K.LS_ACK_IN] = 300.0
    K.update_links(ls, np.arange(1), 1, DT)
    assert ls[0, K.LS_LOSS] == 0.0 and ls[0, K.LS_DROP] == pytest.approx(300.0 - 1.0)
    assert ls[0, K.LS_Q] == 1e5


def test_the_ack_ports_carry_the_packet_engines_ack_bytes():
    """Two 4 MB flows s0, s1 -> r0 on the dumbbell: the ports of the way back (r0's NIC, the
    right switch's port to the left one, the left one's ports to s0 and s1) carry only ACKs,
    64 B per data packet. The fluid ones send the bytes the packet engine's send, within 1%;
    without ACK bytes (``engine.fluid_ack_bytes=false``) nothing."""
    from conftest import flows_override

    base = ["topo=dumbbell", "cc=dctcp", "switch=ecn", "lb=ecmp", "workload=flows",
            flows_override([(0, 4, 4_000_000), (1, 4, 4_000_000)]),
            "engine.sample_interval_us=0"]  # fmt: skip
    tx = {}
    for name, extra in (("packet", ["engine.kind=packet"]), ("fluid", ["engine.kind=fluid"]),
                        ("off", ["engine.kind=fluid", "engine.fluid_ack_bytes=false"])):  # fmt: skip
        ports = uno.run(uno.compose([*base, *extra])).tables["ports"].set_index("port")
        tx[name] = ports["tx_bytes"]
    sim = build_simulation(to_run_config(uno.compose([*base, "engine.kind=fluid"])))
    back = {sim.port_names[link] for link in sim.rv_link.tolist()}
    forward = {sim.port_names[link] for link in sim.rt_link.tolist()}
    only_acks = sorted(back - forward)
    assert len(only_acks) >= 3
    for port in only_acks:
        assert tx["packet"][port] > 0
        assert tx["fluid"][port] == pytest.approx(tx["packet"][port], rel=0.01), port
        assert tx["off"].get(port, 0) == 0
    # r0's NIC sends one 64-B ACK per data packet of both flows
    nic = sim.port_names[sim.rv_link[sim.rv_ptr[0]]]
    assert nic in only_acks
    assert tx["packet"][nic] == 2 * -(-4_000_000 // 4096) * 64


def test_cycled_ack_paths_are_the_packet_receivers_entropies_hashed():
    """``transport.ack_paths``: a receiver sends its ACKs on entropies 0 .. n - 1 in turn, each
    hashed on (receiver, sender, entropy); a flow's ACK route is, hop by hop, the links those n
    paths take, each with the share of the paths that take it."""
    from fluid_cases import switch_indices

    from uno.fluid.routes import ecmp_path_edges

    n_paths = 64
    sim = _sim(["scheme=uno_ecmp", f"transport.ack_paths={n_paths}"])
    index = switch_indices(sim)
    for f in range(0, len(sim.flows), 7):
        src, dst = int(sim.lb[7][f, 0]), int(sim.lb[7][f, 1])
        paths = [ecmp_path_edges(sim.scenario, dst, src, e, index) for e in range(n_paths)]
        want = {}
        for h in range(len(paths[0])):
            for links in paths:
                want[(h, links[h])] = want.get((h, links[h]), 0) + 1 / n_paths
        lo, hi = sim.rv_ptr[f], sim.rv_ptr[f + 1]
        got_links, got_w = sim.rv_link[lo:hi].tolist(), sim.rv_w[lo:hi].tolist()
        assert sorted(got_links) == sorted(link for _, link in want)
        assert sum(got_w) == pytest.approx(len(paths[0]))
        for (_, link), w in want.items():
            assert got_w[got_links.index(link)] == pytest.approx(w)


def test_cycled_ack_paths_carry_the_packet_engines_ack_bytes():
    """Two 4-MB DCTCP flows into one receiver, ECMP, ACKs cycling over 256 paths: the links
    out of the receiver's ToR carry only ACKs, spread over its uplinks; the fluid's come within
    5% of the packet engine's on each (which of the 256 entropies got one ACK more is the
    packet engine's rounding), and the flows' mean rates within 10%."""
    base = ["cc=dctcp", "lb=ecmp", "ec=none", "workload=incast", "workload.n_intra=2",
            "workload.n_inter=0", "workload.size_bytes=4000000", "transport.ack_paths=256",
            "engine.sample_interval_us=0"]  # fmt: skip
    runs = {
        kind: uno.run(uno.compose([*base, f"engine.kind={kind}"])) for kind in ("packet", "fluid")
    }
    tx = {k: r.tables["ports"].set_index("port")["tx_bytes"] for k, r in runs.items()}
    uplinks = [p for p in tx["packet"].index if p.startswith("dc0/tor0->dc0/agg")]
    assert len(uplinks) == 4
    for port in uplinks:
        assert tx["packet"][port] > 0
        assert tx["fluid"][port] == pytest.approx(tx["packet"][port], rel=0.05), port
    rate = {k: r.flows["mean_rate_gbps"].to_numpy() for k, r in runs.items()}
    np.testing.assert_allclose(rate["fluid"], rate["packet"], rtol=0.10)


def test_the_nics_data_room_leaves_the_step_for_its_queue_and_acks_first():
    """``nic_data_room``: the line's bytes in the step's unpaused share, less the bytes queued
    at the NIC link and the ACKs its receivers send in the step; never below zero."""
    ls = np.zeros((3, K.N_LS))
    ls[:, K.LS_CAP] = CAP
    ls[:, K.LS_PAUSE] = [0.0, 0.25, 0.0]
    ls[:, K.LS_Q] = [0.0, 1000.0, 9000.0]
    ls[:, K.LS_ACK_IN] = [300.0, 200.0, 5000.0]
    for fn in (K.nic_data_room, K.nic_data_room.py_func):
        assert fn(ls, 0, DT) == pytest.approx(CAP * DT - 300.0, rel=1e-15)
        assert fn(ls, 1, DT) == pytest.approx(0.75 * CAP * DT - 1200.0, rel=1e-15)
        assert fn(ls, 2, DT) == 0.0


def test_a_host_sending_at_line_rate_sends_its_acks_without_queueing_them():
    """Host 9 sends a 20-MB flow at line rate while it receives one: a packet host pushes its
    ACKs into the NIC's queue and hands it data only when the port is free, so its NIC never
    holds more than a data packet and a few ACKs. In the fluid its data senders share what
    the step leaves after the ACKs: the NIC's queue stays under a packet (with the whole line
    for data the ACKs queued there, 12 kB here), and the flow into host 9, whose RTT holds
    that queue, finishes within 3% of the packet run (+5.7% with the ACKs queued)."""
    flows = ("workload.flows=[{src:0,dst:9,size_bytes:20000000,start_us:0.0},"
             "{src:9,dst:20,size_bytes:20000000,start_us:0.0}]")  # fmt: skip
    base = ["experiment=fig10_load", "workload=flows", flows, "scheme=uno_ecmp"]
    runs = {
        kind: uno.run(uno.compose([*base, f"engine.kind={kind}"])) for kind in ("packet", "fluid")
    }
    ports = runs["fluid"].tables["ports"].set_index("port")
    nic = [p for p in ports.index if p.startswith("dc0/h9->")]
    assert len(nic) == 1 and ports.loc[nic[0], "tx_bytes"] > 20e6
    assert ports.loc[nic[0], "max_queue_bytes"] < 4160
    fct = {k: r.flows.set_index("flow_id")["fct_ps"] for k, r in runs.items()}
    assert fct["fluid"][0] == pytest.approx(fct["packet"][0], rel=0.03)


def test_a_links_growth_rate_follows_its_queue_and_is_cleared_when_it_empties():
    """``LS_QSLOPE`` averages the queue's change per step (``SLOPE_GAIN``): fed at twice its
    line it tends to the line rate, at its buffer to 0, and an emptied link has none.
    ``LS_QTREND`` is how long it has kept its sign."""
    ls = np.zeros((1, K.N_LS))
    ls[0, K.LS_FOLD], ls[0, K.LS_CAP], ls[0, K.LS_BUF] = 1.0, CAP, 1e9
    ls[0, K.LS_LISTED] = 1.0
    for _ in range(100):  # twice the line: the queue grows by the line's worth each step
        ls[0, K.LS_ARR] = 2 * CAP
        K.update_links(ls, np.arange(1), 1, DT)
    assert ls[0, K.LS_QSLOPE] == pytest.approx(CAP, rel=(1 - K.SLOPE_GAIN) ** 100 * 1.01)
    assert ls[0, K.LS_QTREND] == pytest.approx(100 * DT, rel=1e-12)
    ls[0, K.LS_BUF] = ls[0, K.LS_Q]  # at its buffer: it cannot grow
    for _ in range(100):
        ls[0, K.LS_ARR] = 2 * CAP
        K.update_links(ls, np.arange(1), 1, DT)
    assert abs(ls[0, K.LS_QSLOPE]) < 1e-5 * CAP
    ls[0, K.LS_QSLOPE] = CAP
    draining = 0
    while ls[0, K.LS_Q] > 0.0:  # nothing arrives: it drains, then empties
        ls[0, K.LS_ARR] = 0.0
        K.update_links(ls, np.arange(1), 1, DT)
        draining += ls[0, K.LS_QSLOPE] < 0.0
    assert draining > 0 and ls[0, K.LS_QTREND] == pytest.approx(draining * DT, rel=1e-12)
    K.update_links(ls, np.arange(1), 1, DT)
    assert ls[0, K.LS_QSLOPE] == 0.0 and ls[0, K.LS_QTREND] == 0.0


@pytest.mark.parametrize("twin", [False, True])
def test_acks_meet_a_reverse_queue_as_it_will_be_when_they_reach_it(twin):
    """The queueing an ACK meets at a reverse link ``ahead_ps`` after the send: the level grown
    at the link's growth rate, for no longer than that rate has kept its sign, within its
    buffer and above 0, at the service its delay is taken at now (the line, or what PFC
    leaves it)."""
    delay_ahead = K.delay_ahead.py_func if twin else K.delay_ahead
    ls = np.zeros((1, K.N_LS))
    ls[0, K.LS_CAP], ls[0, K.LS_BUF] = CAP, 1e6
    ls[0, K.LS_Q], ls[0, K.LS_DELAY] = 1e5, 1e5 / CAP
    ls[0, K.LS_QSLOPE] = 0.5 * CAP  # filling at half the line
    ls[0, K.LS_QTREND] = 1e9  # (for longer than any look-ahead below)
    assert delay_ahead(0, 8e6, ls) == pytest.approx((1e5 + 0.5 * CAP * 8e6) / CAP, rel=1e-12)
    assert delay_ahead(0, 0.0, ls) == pytest.approx(1e5 / CAP, rel=1e-12)
    assert delay_ahead(0, 1e9, ls) == pytest.approx(1e6 / CAP, rel=1e-12)  # its buffer
    ls[0, K.LS_DELAY] = 2e5 / CAP  # half the line paused (PFC): twice the delay per byte
    assert delay_ahead(0, 8e6, ls) == pytest.approx(2 * (1e5 + 0.5 * CAP * 8e6) / CAP, rel=1e-12)
    ls[0, K.LS_QSLOPE] = -CAP  # draining at the line: empty before the ACKs come
    assert delay_ahead(0, 8e6, ls) == 0.0
    ls[0, K.LS_Q] = ls[0, K.LS_DELAY] = 0.0  # empty now, filling
    ls[0, K.LS_QSLOPE] = 0.25 * CAP
    assert delay_ahead(0, 4e6, ls) == pytest.approx(1e6, rel=1e-12)
    ls[0, K.LS_QTREND] = 1e6  # filling for 1 us only: read 1 us ahead
    assert delay_ahead(0, 4e6, ls) == pytest.approx(0.25e6, rel=1e-12)


def test_acks_wait_for_a_reverse_wan_queue_that_fills_before_they_reach_it():
    """Two cross-DC flows fill the WAN link from the second datacenter at twice its line; a
    short flow the other way starts 20 us later, its ACKs through that queue, which grows by
    a microsecond per microsecond while they travel to it (half a 100-us base RTT). With
    packets its FCT exceeds its ideal by 80 us; read at the send (22 us then) the fluid's
    ACKs come back early (a third of that excess). Read ahead
    (``engine.fluid_ack_read_ahead``) they wait longer (45 us): the queue's growth is read
    ahead no further than it has lasted, less than the look-ahead at the first sends."""
    from conftest import flows_override

    flows = [(16, 4, 4_000_000), (17, 5, 4_000_000), (0, 20, 50_000, 20.0)]
    base = ["topo=two_dc", "topo.k=4", "topo.wan_links=1", "topo.inter_rtt_ratio=8",
            "cc=dctcp", "switch=ecn", "lb=ecmp", "engine.sample_interval_us=0",
            "workload=flows", flows_override(flows)]  # fmt: skip
    excess = {}
    for engine, ahead in (("packet", "false"), ("fluid", "false"), ("fluid", "true")):
        over = [f"engine.kind={engine}", f"engine.fluid_ack_read_ahead={ahead}"]
        short = uno.run(uno.compose([*base, *over])).flows.iloc[-1]
        excess[engine, ahead] = short["fct_ps"] - short["ideal_fct_ps"]
    packet = excess["packet", "false"]
    assert packet > 50e6  # (the packets' ACKs did wait: the case holds)
    assert excess["fluid", "false"] < 0.4 * packet  # (read at the send)
    assert 1.5 * excess["fluid", "false"] < excess["fluid", "true"] < 1.2 * packet
