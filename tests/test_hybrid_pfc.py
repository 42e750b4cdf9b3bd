"""PFC in the hybrid (uno/fluid/hybrid_pfc.py): the packets' ingress queues decide every pause,
the fluid flows' bytes counting in their levels, and a fluid link is paused for the share of each
step its upstream port was.

* With every flow as packets the hybrid is the packet engine, pauses and all (its event ports
  keep the shared links' rules, which act only where fluid flows are).
* Pauses the fluid bytes call for hold the fluid bytes: an incast of fluid flows through a
  lossless fabric delivers every byte over the receiver's link, no faster than its line.
* Packets and fluid flows in one lossless incast: the packet flows finish as in the packet run.
* A kernel call whose packets leave the event heap no room for a step's PFC signals stops,
  Python grows the heap, and the run goes on as if it had had the room all along.
* Once the fluid flows are done and no ingress queue counts fluid bytes, the steps stop, and
  the packets run on as when the steps go on, pauses and all.
* A port's pauses as signalled give the time it is paused up to any moment.
* A shared link that overflows drops the fluid flows' bytes in their FIFO share of it: those
  are the fluid's lossless violations, the packets' the packet ports count.
"""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid import hybrid as hybrid_module
from uno.fluid import kernels as K
from uno.fluid.hybrid_loop import DRIVE_KERNEL_STOP, hybrid_steps
from uno.fluid.pfc import PF
from uno.net.compiled import build_state
from uno.net.compiled.layout import HEAP_ROOM, ING, RUN_HEAP
from uno.net.compiled.pfc import paused_through_ps

#: eight senders in two pods into host 0 of a k=4 fat tree, 1 MB each, PFC on
INCAST = ["topo=fat_tree", "topo.k=4", "workload=flows", "lb=ecmp", "cc=dctcp",
          "switch.pfc.enabled=true", "engine.sample_interval_us=0",
          "engine.progress=false"]  # fmt: skip
SENDERS = (4, 5, 6, 7, 8, 9, 10, 11)


def flows(tags: str, extra: str = "") -> str:
    """The incast's flows, tagged ``pkt`` or ``bulk`` by the letters of ``tags`` (p, f)."""
    listed = ",".join(
        f"{{src:{s},dst:0,size_bytes:1000000,tag:{'pkt' if t == 'p' else 'bulk'}}}"
        for s, t in zip(SENDERS, tags, strict=True)
    )
    return f"workload.flows=[{listed}{extra}]"


def test_every_flow_as_packets_is_the_packet_run():
    over = [*INCAST, flows("pppppppp"), "switch.ecn.enabled=false"]
    packet = uno.run(uno.compose(over))
    hybrid = uno.run(uno.compose([*over, "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]"]))
    assert packet.summary["pfc"]["pause_frames"] > 0
    assert hybrid.flows["finish_ps"].tolist() == packet.flows["finish_ps"].tolist()
    for key, value in packet.summary["pfc"].items():
        assert hybrid.summary["pfc"][key] == value, key


def test_fluid_bytes_paused_by_the_kernel_cross_the_receivers_link():
    """All eight senders fluid (a 4 kB packet flow elsewhere), ECN off so only PFC holds them:
    the ToR's ingress queues pause on the fluid bytes, the fluid links stop for the shares the
    ports were paused, and every fluid byte crosses the receiver's link, the last flow finishing
    no earlier than the link could carry them (timed by the full line instead of the line the
    paused links keep, they finished at 473 us with a quarter of their bytes still queued)."""
    over = [*INCAST, flows("ffffffff", ",{src:14,dst:15,size_bytes:4000,tag:pkt}"),
            "switch.ecn.enabled=false", "engine.kind=hybrid",
            "engine.hybrid_packet_tags=[pkt]"]  # fmt: skip
    sim = build_simulation(to_run_config(uno.compose(over)))
    result = sim.run()
    fluid = sim.fluid
    bulk = result.flows["tag"] == "bulk"
    sent = fluid.fs[:, C.FS_SENT].sum()
    receiver = fluid.ls[fluid.port_names.index("tor0->h0")]
    assert receiver[C.LS_TXF] == pytest.approx(sent, rel=0.01)
    line_ps = sent * 8 / 100e9 * 1e12
    assert result.flows.loc[bulk, "finish_ps"].max() >= line_ps
    pfc = result.summary["pfc"]
    assert pfc["pause_frames"] > 10 and pfc["lossless_violations"] == 0
    assert pfc["fluid_lossless_violations"] == 0
    # the fluid links were paused as long as their ports, within a step each pause
    shared = fluid.pfc[:, PF.shared] == 1.0
    fluid_paused_us = fluid.pfc[shared, PF.paused_ps].sum() / 1e6
    assert fluid_paused_us == pytest.approx(pfc["total_pause_us"], rel=0.05)


def test_packet_flows_beside_fluid_ones_finish_as_in_the_packet_run():
    """Half the incast as packets, half fluid, DCTCP with ECN and PFC: the packet flows' mean
    FCT is the packet run's within 10%, the switches pause, nothing is lost."""
    over = [*INCAST, flows("pfpfpfpf")]
    packet = uno.run(uno.compose(over)).flows
    run = uno.run(uno.compose([*over, "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]"]))
    mine = run.flows["tag"] == "pkt"
    gap = run.flows.loc[mine, "fct_ps"].mean() / packet.loc[mine, "fct_ps"].mean() - 1.0
    assert abs(gap) < 0.1
    assert run.flows["finish_ps"].notna().all()
    assert run.summary["pfc"]["pause_frames"] > 0
    assert run.summary["pfc"]["lossless_violations"] == 0


def test_a_heap_short_of_room_mid_call_changes_nothing(monkeypatch):
    """The mixed incast with the kernel's event heap started at HEAP_ROOM + 28 events: Python
    grows it before the first call to fit a step's signals, the packets' events then fill it
    within a call (the kernel's own check, for one event's pushes, still passes), the call
    stops with ``RUN_HEAP``, and every flow finishes when it does with a heap of the usual
    size, with the same pauses."""
    over = [*INCAST, flows("pfpfpfpf"), "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]"]
    usual = uno.run(uno.compose(over))
    stops = []

    def traced(*args):  # (the kernel's entry called as is, its stops recorded)
        out = hybrid_steps(*args)
        stops.append((int(out[0]), int(out[5])))
        return out

    monkeypatch.setattr(hybrid_module, "loaded_entry", lambda dispatcher, args: traced)
    monkeypatch.setattr(build_state, "first_heap_cap", lambda n_ports, n_ingresses: HEAP_ROOM + 28)
    short = uno.run(uno.compose(over))
    assert (DRIVE_KERNEL_STOP, RUN_HEAP) in stops
    assert short.flows["finish_ps"].tolist() == usual.flows["finish_ps"].tolist()
    assert short.summary["pfc"] == usual.summary["pfc"]


def test_once_no_queue_counts_fluid_bytes_the_steps_stop(monkeypatch):
    """Two 8-MB packet flows and six 1-MB fluid flows in the lossless incast, ECN on: the fluid
    flows finish by 640 us, the packet flows at 1.8 ms. Once the fluid flows are done and no
    shared ingress queue counts fluid bytes, the steps stop (364 of them, not 1,040 to the
    run's end); every flow finishes, and every pause is signalled, as in the run whose steps
    go on to its end."""
    listed = ",".join(
        f"{{src:{s},dst:0,size_bytes:{8000000 if i in (0, 4) else 1000000},"
        f"tag:{'pkt' if i in (0, 4) else 'bulk'}}}"
        for i, s in enumerate(SENDERS)
    )
    over = [*INCAST, f"workload.flows=[{listed}]", "engine.kind=hybrid",
            "engine.hybrid_packet_tags=[pkt]"]  # fmt: skip
    stopped = uno.run(uno.compose(over))
    run, flows_done = stopped.summary["run"], stopped.flows
    fluid_end_us = flows_done.loc[flows_done["tag"] == "bulk", "finish_ps"].max() / 1e6
    assert run["sim_time_us"] > 2 * fluid_end_us
    assert run["fluid_end_us"] < fluid_end_us + 50.0

    def only_when_idle(counters, n_flows, queues_hold_fluid):  # (every link empty)
        return (counters[C.CT.running] == 0 and counters[C.CT.busy] == 0
                and counters[C.CT.next_start] >= n_flows)  # fmt: skip

    monkeypatch.setattr(hybrid_module, "fluid_done", only_when_idle)
    stepped = uno.run(uno.compose(over))
    assert stepped.summary["run"]["fluid_end_us"] > 0.99 * run["sim_time_us"]
    assert stopped.flows["finish_ps"].tolist() == stepped.flows["finish_ps"].tolist()
    assert stopped.summary["pfc"] == stepped.summary["pfc"]
    assert stopped.summary["pfc"]["pause_frames"] > 0


def test_paused_time_follows_the_signals():
    """A queue's pauses as signalled: closed ones counted whole once ended, the latest one up
    to the moment asked, an open one up to it."""
    ST = np.zeros(ING.size, dtype=np.int64)
    ST[ING.p_from], ST[ING.p_end], ST[ING.p_acc] = 100, 300, 200  # [100, 300) paused
    assert [paused_through_ps(ST, 0, t) for t in (50, 100, 200, 300, 400)] == [0, 0, 100, 200, 200]
    ST[ING.p_from], ST[ING.p_open] = 500, 1  # paused again from 500, no RESUME yet
    assert [paused_through_ps(ST, 0, t) for t in (400, 500, 650)] == [200, 200, 350]
    ST[ING.p_end], ST[ING.p_open], ST[ING.p_acc] = 700, 0, 400  # resumed at 700
    assert [paused_through_ps(ST, 0, t) for t in (650, 700, 900)] == [350, 400, 400]


def test_a_shared_links_drops_count_the_fluid_bytes_share_as_the_fluids():
    """A 100-Gb/s link, 1 us steps, a 100-kB buffer: 60 kB queued (a third of it fluid), 90 kB
    of fluid and 30 kB of packets arrive, 12.5 kB leave, 67.5 kB are dropped. The fluid's share
    of those is that of the fluid bytes among all the link held, (20 + 90) / 180; with no
    packets on the link, all of them."""
    ls = np.zeros((2, K.N_LS))
    ls[:, K.LS_FOLD] = ls[:, K.LS_LISTED] = 1.0
    ls[:, K.LS_CAP], ls[:, K.LS_BUF] = 0.0125, 1e5
    ls[0, K.LS_Q], ls[0, K.LS_QF], ls[0, K.LS_EXT] = 6e4, 2e4, 3e4
    ls[1, K.LS_Q] = ls[1, K.LS_QF] = 6e4
    ls[:, K.LS_ARR] = 9e4 / 1e6
    K.update_links(ls, np.arange(2), 2, 1e6)
    assert ls[0, K.LS_DROP] == pytest.approx(6e4 + 1.2e5 - 1.25e4 - 1e5)
    assert ls[0, K.LS_DROPF] == pytest.approx(ls[0, K.LS_DROP] * 1.1e5 / 1.8e5)
    assert ls[1, K.LS_DROPF] == pytest.approx(ls[1, K.LS_DROP]) and ls[1, K.LS_DROP] > 0.0
