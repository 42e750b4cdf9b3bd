"""Propagation on the way out in the fluid engine (``engine.fluid_wire``): an inter-DC flow's
bytes cross its WAN link's propagation before they reach the receiving datacenter's links,
as packets do, and the rest of the base RTT is on the way back.

Without it the fluid's bytes reached every link of their route in the step they were sent: an
inter-DC flow's first window reached the receiver's downlink ~0.9 ms early, where 2-MB intra-DC
flows that finish before it arrives (packet engine: ~340 us) lost packets to it and waited for
their timers (fluid: 1.93 ms, 5.7x)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TWO_PLUS_TWO_INCAST as INCAST

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import kernels as K


def _sim(overrides):
    return build_simulation(to_run_config(uno.compose(["engine.kind=fluid", *overrides])))


def test_the_wire_link_is_the_wan_hop_of_inter_dc_routes_only():
    sim = _sim(["workload.n_intra=1", "workload.n_inter=1", "lb=ecmp"])
    ei, fs = sim.hops[2], sim.fs
    edges = sim.scenario.routing.edges
    intra, inter = 0, 1
    assert fs[intra, K.FS_WIRE_NEXT] == -1.0 and fs[intra, K.FS_WIRE_PS] == 0.0
    entries = range(sim.rt_ptr[inter], sim.rt_ptr[inter + 1])
    wired = [j for j in entries if ei[j, K.EI_LAG] < 0]
    assert len(wired) == 1
    (j,) = wired
    assert edges[ei[j, K.EI_LINK]].kind == "wan"
    assert fs[inter, K.FS_WIRE_NEXT] == ei[j, K.EI_NEXT] == j + 1
    assert fs[inter, K.FS_WIRE_PS] == edges[ei[j, K.EI_LINK]].delay_ps
    # spraying: every WAN link of the split hop hands on to the same next hop; folded
    # (uno.fluid.folding), the hop is one entry at the first of the eight
    for fold, n_wired in (("false", 8), ("true", 1)):
        spray = _sim(["workload.n_intra=0", "workload.n_inter=1", "lb=spray",
                      f"engine.fluid_fold_links={fold}"])  # fmt: skip
        ei = spray.hops[2]
        wired = [j for j in range(spray.rt_ptr[0], spray.rt_ptr[1]) if ei[j, K.EI_LAG] < 0]
        assert len(wired) == n_wired
        assert {int(ei[j, K.EI_NEXT]) for j in wired} == {int(spray.fs[0, K.FS_WIRE_NEXT])}
        assert {spray.scenario.routing.edges[ei[j, K.EI_LINK]].kind for j in wired} == {"wan"}
    assert spray.ls[ei[wired[0], K.EI_LINK], K.LS_FOLD] == 8
    assert (fs[:, K.FS_WIRE_HOP] == -1.0).all()  # (no UnoLB flow)
    # UnoLB: the hop of every subflow's WAN link, through the ring's subflow columns
    unolb = _sim(["workload.n_intra=1", "workload.n_inter=1", "lb=unolb"])
    sub_n, sub_hops, sub_links = unolb.lb[:3]
    assert unolb.fs[intra, K.FS_WIRE_HOP] == -1.0
    hop = int(unolb.fs[inter, K.FS_WIRE_HOP])
    assert sub_n[inter] == 10 and 0 < hop < sub_hops[inter] - 1
    for s in range(sub_n[inter]):
        kinds = [edges[sub_links[inter, s, h]].kind for h in range(sub_hops[inter])]
        assert [h for h, kind in enumerate(kinds) if kind == "wan"] == [hop]
    assert unolb.fs[inter, K.FS_WIRE_PS] == edges[sub_links[inter, 0, hop]].delay_ps
    assert unolb.fs[inter, K.FS_WIRE_NEXT] == -1.0
    assert unolb.ring.shape[1] == K.R_SUBWIRE + 2 * sub_links.shape[1]
    # off, and a single datacenter: no wire
    for overrides in (["engine.fluid_wire=false"], ["lb=unolb", "engine.fluid_wire=false"],
                      ["topo=dumbbell", "workload.n_intra=4", "workload.n_inter=0"]):  # fmt: skip
        off = _sim(overrides)
        assert (off.fs[:, K.FS_WIRE_NEXT] == -1.0).all(), overrides
        assert (off.fs[:, K.FS_WIRE_HOP] == -1.0).all(), overrides
        assert (off.hops[2][: len(off.rt_link), K.EI_LAG] >= 0).all(), overrides
        assert off.ring.shape[1] <= K.N_R, overrides


@pytest.mark.parametrize("wire", [True, False])
def test_subflows_bytes_reach_the_links_after_the_wan_link_its_propagation_later(wire):
    """A lone inter-DC UnoLB flow: each subflow's links after its WAN link first see its bytes
    one WAN propagation after the first send (to the step), the links before it in the first
    step; with the option off, in the first step too."""
    sim = _sim(["workload.n_intra=0", "workload.n_inter=1", "lb=unolb",
                f"engine.fluid_wire={str(wire).lower()}"])  # fmt: skip
    sub_n, sub_hops, sub_links = sim.lb[:3]
    edges = sim.scenario.routing.edges
    (wan,) = [h for h in range(sub_hops[0]) if edges[sub_links[0, 0, h]].kind == "wan"]
    first_seen = {}
    k = 0
    while k * sim.dt_ps < 1.2e9:
        k = sim.advance(k, k + 1)
        for s in range(sub_n[0]):
            for h in range(sub_hops[0]):
                link = int(sub_links[0, s, h])
                if (s, h) not in first_seen and sim.ls[link, K.LS_IN] > 0.0:
                    first_seen[s, h] = k - 1  # (the step that just ran)
    assert len(first_seen) == sub_n[0] * sub_hops[0]
    lag = round(886.5e6 / sim.dt_ps) if wire else 0
    for (s, h), step in first_seen.items():
        assert step == (0 if h <= wan else lag), (s, h)


@pytest.mark.parametrize("wire", [True, False])
def test_bytes_reach_the_links_after_the_wan_link_its_propagation_later(wire):
    """A lone inter-DC flow (ECMP): the receiver's downlink first sees its bytes one WAN
    propagation (886.5 us) after the first send, to the step, and every link before the WAN
    link in the first step; with the option off, in the first step too."""
    sim = _sim(["workload.n_intra=0", "workload.n_inter=1", "lb=ecmp",
                f"engine.fluid_wire={str(wire).lower()}"])  # fmt: skip
    route = sim.rt_link[sim.rt_ptr[0] : sim.rt_ptr[1]]
    first_seen = {}
    k = 0
    while k * sim.dt_ps < 1.2e9 and len(first_seen) < len(route):
        k = sim.advance(k, k + 1)
        for link in route.tolist():
            if link not in first_seen and sim.ls[link, K.LS_IN] > 0.0:
                first_seen[link] = k - 1  # (the step that just ran)
    assert len(first_seen) == len(route)
    wan = [i for i, link in enumerate(route) if sim.scenario.routing.edges[link].kind == "wan"]
    (w,) = wan
    before = [first_seen[link] for link in route[: w + 1].tolist()]
    after = [first_seen[link] for link in route[w + 1 :].tolist()]
    assert before == [0] * len(before)
    lag = round(886.5e6 / sim.dt_ps) if wire else 0
    assert after == [lag] * len(after)


def test_a_lone_inter_dc_flow_still_finishes_in_its_ideal_time():
    """The ACKs and the ECN echoes come back a base RTT after the send, the propagation out
    and back together."""
    for size in (100_000, 50_000_000):
        r = uno.run(uno.compose(["engine.kind=fluid", "engine.progress=false",
                                 "engine.sample_interval_us=0", "workload.n_intra=0",
                                 "workload.n_inter=1", f"workload.size_bytes={size}"]))  # fmt: skip
        f = r.flows.iloc[0]
        assert f["fct_ps"] == pytest.approx(f["ideal_fct_ps"], rel=0.002)
        assert r.summary["fluid"]["lost_bytes"] == 0.0


@pytest.mark.parametrize("lb", ["spray", "unolb"])
def test_short_intra_dc_flows_finish_before_the_inter_dc_window_arrives(lb):
    """The 2 + 2 incast of 2 MB: with packets the intra-DC flows are done (~340 us) before
    the inter-DC flows' first window reaches the receiver's downlink, and lose nothing; so do
    the fluid ones now (without the wire they lost packets to it and took 5.7x as long, 6.1x
    with UnoLB's subflows)."""
    incast = [*INCAST, f"lb={lb}"]
    packet = uno.run(uno.compose(incast)).flows
    fluid = uno.run(uno.compose([*incast, "engine.kind=fluid"])).flows
    off = uno.run(uno.compose([*incast, "engine.kind=fluid", "engine.fluid_wire=false"])).flows
    for flows in (packet, fluid):
        assert flows.loc[flows["cls"] == "intra", "retransmits"].sum() == 0
    mean = {name: f.groupby("cls")["fct_ps"].mean() for name, f in
            (("packet", packet), ("fluid", fluid), ("off", off))}  # fmt: skip
    for cls in ("intra", "inter"):
        assert mean["fluid"][cls] == pytest.approx(mean["packet"][cls], rel=0.05)
    assert mean["off"]["intra"] > 3 * mean["packet"]["intra"]  # (the setting is read)


def test_wire_kernels_match_python_on_an_inter_dc_incast():
    """``advance`` with bytes on the wire (ECMP, spraying, UnoLB's subflows) agrees with its
    Python twin."""
    import copy

    for lb in ("ecmp", "spray", "unolb"):
        sim = _sim([*INCAST, f"lb={lb}", "workload.n_intra=1", "workload.n_inter=3"])
        k = sim.advance(0, 600)  # (the first bytes have crossed the WAN link by step ~506)
        twin = {n: copy.deepcopy(getattr(sim, n)) for n in sim.STEPPED_STATE}
        k1 = sim.advance(k, k + 60)
        k2 = K.advance.py_func(k, k + 60, *sim.kernel_args(twin))
        assert k1 == k2
        for n in ("fs", "cs", "ls", "ring", "fx", "calendar"):
            np.testing.assert_array_equal(getattr(sim, n), twin[n], err_msg=f"{lb}: {n}")
        assert sim.ls[:, K.LS_IN].sum() > 0.0


def _first_batch(sim, f):
    """(step offset, RTT sample in ps, chance of its packets' queueing beyond the fluid's, for
    UnoCC's gentle test) of flow ``f``'s only ACK batch filed in its delay line."""
    start, n = sim.ring_pool[0][f], sim.ring_pool[1][f]
    rows = sim.ring[start : start + n]
    (slots,) = np.nonzero(rows[:, K.R_ACK])
    assert len(slots) == 1
    row = rows[slots[0]]
    return int(slots[0]), row[K.R_RTTW] / row[K.R_ACK], row[K.R_JITTER] / row[K.R_ACK]


def _queue_at(sim, link, nbytes):
    """A queue of ``nbytes`` of the fluid's at ``link``, which joins the busy list (a link
    with a queue is on it: the steps advance only those links and the ones bytes reach)."""
    sim.ls[link, K.LS_Q] = sim.ls[link, K.LS_QF] = nbytes
    sim.counters[3] = K.join_busy(sim.ls, sim.busy, int(sim.counters[3]), link)


def test_rtt_samples_read_the_queueing_beyond_the_wan_link_when_the_bytes_meet_it():
    """UnoCC's gentle test reads one packet's RTT sample (Uno paper Alg. 1 line 9). A lone
    inter-DC flow's bytes reach the receiver's downlink a WAN propagation (886.5 us) after the
    send: a queue there at the send (1 MB, 80 us; gone long before they arrive) times the
    batch's ACKs (the ACK clock) but is not in its RTT sample; a queue there as they cross it
    is, when their ECN echoes come back."""
    sim = _sim(["workload.n_intra=0", "workload.n_inter=1", "lb=ecmp", "cc=uno"])
    f = 0
    down = int(sim.rt_link[sim.rt_ptr[f + 1] - 1])
    wire_next = int(sim.fs[f, K.FS_WIRE_NEXT])
    assert wire_next > 0 and sim.scenario.routing.edges[down].kind == "host"
    queue = 1e6
    delay = queue / sim.ls[down, K.LS_CAP]
    base = sim.fs[f, K.FS_BASE_RTT]
    _queue_at(sim, down, queue)
    block = int(sim.block[0, f])  # (its sends are filed as one batch at its block's end)
    k = sim.advance(0, block)
    slot, rtt, p_queued = _first_batch(sim, f)
    assert sim.ls[down, K.LS_DELAY] > 0.0  # (the queue was there at the send)
    assert rtt == pytest.approx(base, rel=1e-9)  # not base + ~80 us
    assert p_queued < 1e-6  # (the links before the WAN link: no other flow, no queue)
    assert slot * sim.dt_ps > base + 0.5 * delay  # its ACKs wait behind it
    # the bytes reach the downlink: a queue there now is what their RTT samples meet
    while sim.ls[down, K.LS_IN] == 0.0:
        k = sim.advance(k, k + 1)
    assert sim.ls[down, K.LS_Q] < 1.0  # (the first queue drained)
    assert sim.fs[f, K.FS_QBEYOND] == 0.0
    _queue_at(sim, down, sim.ls[down, K.LS_Q] + queue)
    back = (base - sim.fs[f, K.FS_WIRE_PS]) / sim.dt_ps
    k = sim.advance(k, k + int(back) + 3)
    assert sim.fs[f, K.FS_QBEYOND] == pytest.approx(delay, rel=0.05)
    # with the option off the whole path's queueing is sampled at the send, as before
    off = _sim(["workload.n_intra=0", "workload.n_inter=1", "lb=ecmp", "cc=uno",
                "engine.fluid_wire=false"])  # fmt: skip
    _queue_at(off, down, queue)
    off.advance(0, block)
    _, rtt, p_queued = _first_batch(off, f)
    assert rtt == pytest.approx(base + delay, rel=0.02)
    assert p_queued == 1.0  # (a sample above the gentle threshold for certain)
