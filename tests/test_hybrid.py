"""The packet/fluid hybrid (engine.kind=hybrid, uno/fluid/hybrid.py): with every flow selected
as packets it is the packet engine, result for result; packet and fluid flows on one bottleneck
share it fairly and fill it (each sees the other's bytes, the packets' INT records too); once
the fluid flows are done the fluid steps stop; it writes every table, with every flow of the
scenario in the flows table."""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.errors import ConfigError
from uno.fluid import hybrid as hybrid_module
from uno.fluid.columns import CT
from uno.fluid.hybrid import HybridSimulation
from uno.fluid.int_records import INTS
from uno.metrics.flows import FLOW_COLUMNS
from uno.net.shared_link import fluid_sent_bytes, shared_int_record

INCAST = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
          "cc=dctcp", "switch=ecn", "lb=ecmp", "workload.size_bytes=2000000",
          "engine.sample_interval_us=0"]  # fmt: skip


def shared_bottleneck(packet_senders=(1, 2)) -> list[str]:
    """Four 20-MB DCTCP flows into host 0; those from ``packet_senders`` tagged ``pkt``."""
    flows = ",".join(
        f"{{src:{s},dst:0,size_bytes:20000000,tag:{'pkt' if s in packet_senders else 'bulk'}}}"
        for s in (1, 2, 3, 4)
    )
    return ["topo=dumbbell", "workload=flows", f"workload.flows=[{flows}]", "cc=dctcp",
            "switch=ecn", "lb=ecmp", "engine.sample_interval_us=0"]  # fmt: skip


@pytest.mark.parametrize("cc", ["dctcp", "hpcc"])  # (HPCC: the shared ports' INT records)
def test_every_flow_as_packets_is_the_packet_engine(cc):
    incast = [*INCAST, f"cc={cc}"]
    packet = uno.run(uno.compose(incast)).flows
    hybrid = uno.run(
        uno.compose([*incast, "engine.kind=hybrid", "engine.hybrid_packet_max_bytes=2000000"])
    ).flows
    cols = ["flow_id", "finish_ps", "sent_packets", "ecn_acks", "retransmits"]
    assert hybrid[cols].equals(packet[cols])


def test_packet_and_fluid_flows_share_a_bottleneck_fairly_and_fill_it():
    r = uno.run(uno.compose([*shared_bottleneck(), "engine.kind=hybrid",
                             "engine.hybrid_packet_tags=[pkt]"]))  # fmt: skip
    f = r.flows
    assert r.summary["hybrid"]["packet_flows"] == 2 and r.summary["hybrid"]["fluid_flows"] == 2
    rates = f["mean_rate_gbps"].to_numpy()
    assert rates.sum() ** 2 / (len(rates) * (rates**2).sum()) > 0.98  # Jain's index
    by_kind = f.groupby("tag")["mean_rate_gbps"].mean()
    # packets that did not wait behind the fluid bytes took twice their share
    assert by_kind["pkt"] / by_kind["bulk"] == pytest.approx(1.0, abs=0.2)
    # 4 x 20 MB through 100 Gb/s: the last flow ends within 5% of 6.4 ms + base RTT
    assert f["finish_ps"].max() / 1e6 == pytest.approx(4 * 20e6 * 1.0156 * 8 / 100e3, rel=0.05)
    # the fluid model carried the fluid flows' bytes on the receiver's link, besides the packets
    ports = r.tables["ports"].set_index("port")
    down = ports["fluid_tx_bytes"].idxmax()
    assert ports.loc[down, "fluid_tx_bytes"] == pytest.approx(2 * 20e6 * 1.0156, rel=0.02)
    assert ports.loc[down, "tx_bytes"] >= 2 * 20e6


def test_hybrid_writes_every_table_with_every_flow(tmp_path):
    cfg = uno.compose([*shared_bottleneck(packet_senders=(1,)), "engine.kind=hybrid",
                       "engine.hybrid_packet_tags=[pkt]", "engine.sample_interval_us=100"])  # fmt: skip
    r = uno.run(cfg, out_dir=tmp_path / "run")
    for name in ("flows", "rates", "cwnd", "queues", "ports"):
        assert (tmp_path / "run" / f"{name}.parquet").exists(), name
    f = r.flows
    assert list(f.columns) == list(FLOW_COLUMNS) and list(f["flow_id"]) == [0, 1, 2, 3]
    assert f["finish_ps"].notna().all() and (f["bytes_delivered"] == f["size_bytes"]).all()
    assert set(r.tables["rates"]["flow_id"]) == {0, 1, 2, 3}  # packet and fluid samples
    assert r.summary["run"]["engine"] == "hybrid" and r.summary["run"]["fluid_steps"] > 0


@pytest.mark.parametrize("dataplane", ["python", "compiled"])
def test_the_fluid_flows_are_sampled_with_the_packet_recorder_at_the_last_step_done(dataplane):
    """The fluid flows' samples are taken with the packet recorder's, one each, stamped with
    the end of the last fluid step done: within a step before the recorder's time (the steps
    as Python events, or inside the kernel). At the first step throughout, each fluid flow
    sends its last byte an RTT before it finishes, before its last sample, so their rates add
    up to the bytes each fluid flow sent."""
    cfg = uno.compose([*shared_bottleneck(packet_senders=(1,)), "engine.kind=hybrid",
                       "engine.fluid_step_settled_rtt=0",
                       "engine.hybrid_packet_tags=[pkt]", "engine.sample_interval_us=20",
                       f"engine.dataplane={dataplane}"])  # fmt: skip
    r = uno.run(cfg)
    rates = r.tables["rates"]
    step_ps = r.summary["run"]["fluid_step_us"] * 1e6
    tags = r.flows.set_index("flow_id")["tag"]
    packet_ids = tags.index[tags == "pkt"]
    every_ps = 20_000_000
    assert len(packet_ids) == 1
    assert (rates.loc[rates["flow_id"].isin(packet_ids), "time_ps"] % every_ps == 0).all()
    for fid in tags.index.difference(packet_ids):
        mine = rates[rates["flow_id"] == fid]
        times = mine["time_ps"].to_numpy()
        assert len(times) > 20
        # each within a step before a time of the recorder's, one at each of its times
        recorder_times = -(-times // every_ps) * every_ps
        gap = recorder_times - times
        assert (gap >= 0).all() and (gap < step_ps + 1).all() and (gap > 0).any()
        assert (np.diff(recorder_times) == every_ps).all()
        spans = np.diff(np.concatenate([[0], times]))
        sampled = (mine["sent_gbps"] * spans / 8e3).sum()  # Gb/s x ps -> bytes
        # (each flow sends its last byte an RTT before it finishes, before its last sample)
        assert sampled == pytest.approx(r.flows.set_index("flow_id").loc[fid, "sent_bytes"])


def test_a_hosts_packet_flow_takes_its_round_robin_turns_beside_its_fluid_flows():
    """Host 0 sends a long fluid flow across the bottleneck and, from 100 µs, a 200-kB packet
    flow to its neighbour: they share host 0's NIC round robin (uno/net/nic.py), as in the
    packet engine, where the short flow finishes in 1.77x its line-rate FCT (37.0 µs). Waiting
    behind the fluid NIC queue, as before, it took 410.9 µs."""
    flows = ("workload.flows=[{src:0,dst:4,size_bytes:20000000,tag:bulk},"
             "{src:0,dst:1,size_bytes:200000,start_us:100.0,tag:pkt}]")  # fmt: skip
    base = ["topo=dumbbell", "workload=flows", flows, "cc=dctcp", "switch=ecn", "lb=ecmp",
            "engine.sample_interval_us=0"]  # fmt: skip
    packet = uno.run(uno.compose(base)).flows.set_index("flow_id")
    hybrid = uno.run(uno.compose([*base, "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]"]))
    short = hybrid.flows.set_index("flow_id").loc[1]
    assert hybrid.summary["hybrid"]["packet_flows"] == 1
    assert short["fct_ps"] == pytest.approx(packet.loc[1, "fct_ps"], rel=0.15)
    assert short["fct_ps"] > 1.5 * short["ideal_fct_ps"]  # (it shared the NIC)
    long = hybrid.flows.set_index("flow_id").loc[0]
    assert long["fct_ps"] == pytest.approx(packet.loc[0, "fct_ps"], rel=0.05)


#: the default incast (UnoCC, spraying, phantom queues), its inter-DC flows as packets: they meet
#: the fluid flows' queues at the receiver's links, where the fluid bytes fill the buffer and drop
#: packets
INCAST_INTER_AS_PACKETS = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]",
                           "workload.size_bytes=20000000", "engine.sample_interval_us=0"]  # fmt: skip
#: the same, its intra-DC flows as packets: the fluid flows finish first, and the ports see no
#: fluid bytes after them (uno.fluid.shared_ports' ``retire``)
INCAST_INTRA_AS_PACKETS = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]",
                           "workload.size_bytes=20000000", "engine.sample_interval_us=0"]  # fmt: skip
#: a host sends a fluid flow and a packet flow: they share its NIC round robin
NIC_SHARED = ["topo=dumbbell", "workload=flows", "cc=dctcp", "switch=ecn", "lb=ecmp",
              "engine.sample_interval_us=0", "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]",
              "workload.flows=[{src:0,dst:4,size_bytes:20000000,tag:bulk},"
              "{src:0,dst:1,size_bytes:200000,start_us:100.0,tag:pkt},"
              "{src:2,dst:4,size_bytes:2000000,tag:pkt},{src:3,dst:4,size_bytes:20000000,tag:bulk}]"]  # fmt: skip


#: HPCC packet and fluid flows into one receiver: the packets' INT records count fluid bytes
HPCC_SHARED = ["topo=dumbbell", "workload=flows", "cc=hpcc", "lb=ecmp", "engine.sample_interval_us=0",
               "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]",
               "workload.flows=[{src:1,dst:0,size_bytes:20000000,tag:pkt},"
               "{src:2,dst:0,size_bytes:20000000,tag:bulk},"
               "{src:3,dst:0,size_bytes:2000000,start_us:500.0,tag:pkt}]"]  # fmt: skip


@pytest.mark.parametrize("scenario",
                         [INCAST_INTER_AS_PACKETS, INCAST_INTRA_AS_PACKETS, NIC_SHARED, HPCC_SHARED],
                         ids=["incast", "incast_fluid_done_first", "nic", "int"])  # fmt: skip
def test_the_compiled_data_plane_runs_the_hybrids_packets_as_the_python_one(scenario):
    """The hybrid's packets on the compiled data plane (its ports apply uno.net.shared_link in
    the kernel; the fluid steps run inside the kernel between the packets' events) and on the
    Python one's HybridPorts: the same run, bit for bit: every flow's completion, packets, ECN
    and retransmissions, every port's drops, marks and bytes (with HPCC, the INT records its
    packets carry decide them)."""
    runs = {dp: uno.run(uno.compose([*scenario, f"engine.dataplane={dp}"]))
            for dp in ("python", "compiled")}  # fmt: skip
    py, kernel = runs["python"], runs["compiled"]
    assert kernel.summary["dataplane"]["kind"] == "compiled"
    assert py.summary["dataplane"]["kind"] == "python"
    pd.testing.assert_frame_equal(kernel.flows, py.flows)
    ports = ["port", "arrivals", "tx_bytes", "drops", "ecn_marks", "fluid_tx_bytes"]
    pd.testing.assert_frame_equal(kernel.tables["ports"][ports], py.tables["ports"][ports])
    # the fluid bytes squeezed packets out (else the check shows little)
    if scenario is INCAST_INTER_AS_PACKETS:
        assert py.tables["ports"]["drops"].sum() > 0
    if scenario is INCAST_INTRA_AS_PACKETS:  # (the steps stopped before the packets were done)
        assert py.summary["run"]["fluid_end_us"] < 0.9 * py.flows["finish_ps"].max() / 1e6
        assert kernel.summary["run"]["fluid_steps"] == py.summary["run"]["fluid_steps"]


def test_the_kernel_driving_the_steps_is_loaded_before_the_run_for_the_types_its_calls_pass(
    monkeypatch,
):
    """``hybrid_steps`` is loaded as the hybrid starts, outside the engine's time; every call
    of the run, with the recorder's samples taken in the kernel or none, then passes the
    argument types it was loaded for (else a call would reach a compiled entry of other
    types)."""
    loaded, seen = {}, set()
    load = hybrid_module.loaded_entry

    def loading(dispatcher, args):
        entry = loaded["entry"] = load(dispatcher, args)

        def traced(*call_args):
            seen.add(tuple(numba.typeof(a) for a in call_args))
            return entry(*call_args)

        return traced

    monkeypatch.setattr(hybrid_module, "loaded_entry", loading)
    over = [*INCAST_INTER_AS_PACKETS, "engine.sample_interval_us=10", "engine.dataplane=compiled"]
    result = uno.run(uno.compose(over))
    assert result.flows["finish_ps"].notna().all()
    assert seen
    for types in seen:
        assert hybrid_module.hybrid_steps.overloads[types].entry_point is loaded["entry"]


def test_a_packet_at_a_full_shared_port_meets_the_loss_of_a_random_phase():
    """The ports read, of a link that drops in the fluid step, the loss of a packet at a random
    phase of its packet time (``LS_PKT_LOSS``, uno.fluid.phases.input_drop_shares), not the
    link's share of its arrivals dropped: where back-to-back fluid inputs take the slots, a
    packet of no fluid input loses more than the average. A link that does not drop in the
    step drops no packet, whatever it last wrote. The Python data plane's ports read the same."""
    from uno.fluid import kernels as K
    from uno.fluid.hybrid_loop import copy_link_row
    from uno.fluid.shared_ports import HybridPort
    from uno.net.compiled.layout import PF

    ls = np.zeros((2, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[0, K.LS_LOSS], ls[0, K.LS_PKT_LOSS] = 0.5, 0.8
    ls[1, K.LS_LOSS], ls[1, K.LS_PKT_LOSS] = 0.0, 0.8  # (from a step it dropped in)
    F = np.zeros((2, PF.size))
    for p in (0, 1):
        copy_link_row(F, ls, p, p)
    assert list(F[:, PF.sh_loss]) == [0.8, 0.0]
    port = HybridPort.__new__(HybridPort)
    port._fluid_loss, port._packet_loss = ls[:, K.LS_LOSS], ls[:, K.LS_PKT_LOSS]
    assert [port._packet_loss_at(p) for p in (0, 1)] == [0.8, 0.0]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_short_data_packet_at_a_full_shared_port_is_refused_as_often_as_a_full_one(compiled):
    """At a buffer the fluid bytes fill, a data packet is dropped with the fluid model's
    random-phase loss whatever its size (the room a departure frees goes to the first arrival;
    the crumbs left are an ACK's): over evenly spread draws a full 4,160-B packet and a 500-B
    one both lose 0.8 of their arrivals, a 64-B ACK 0.8 x 64 / 4,160."""
    from uno.net import shared_link

    squeezed = shared_link.squeezed_out if compiled else shared_link.squeezed_out.py_func
    draws = (np.arange(10_000) + 0.5) / 10_000

    def refused(size, is_data):
        return np.mean([squeezed(d, 4160.0, 0.8, size, is_data) for d in draws])

    assert refused(4160, True) == pytest.approx(0.8)
    assert refused(500, True) == pytest.approx(0.8)
    assert refused(64, False) == pytest.approx(0.8 * 64 / 4160, abs=1e-4)
    assert refused(64, True) == pytest.approx(0.8)  # (the kind decides, not the size)
    assert refused(500, False) == pytest.approx(0.8 * 500 / 4160, abs=1e-4)


def test_once_the_packets_are_done_the_fluid_step_grows_as_the_fluid_engines():
    """A short intra-DC packet flow and two 20-MB inter-DC fluid flows into host 0: once the
    packet flow is done only the inter-DC flows are left, and the step grows with their RTT (up
    to engine.fluid_step_max_intra_rtt, 8x) as the fluid engine's does; their FCTs stay within
    1% of a run whose step does not grow."""
    flows = ("workload.flows=[{src:1,dst:0,size_bytes:2000000,tag:pkt},"
             "{src:200,dst:0,size_bytes:20000000,tag:bulk},"
             "{src:201,dst:0,size_bytes:20000000,tag:bulk}]")  # fmt: skip
    base = ["workload=flows", flows, "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]",
            "engine.sample_interval_us=0"]  # fmt: skip
    grown = uno.run(uno.compose(base))
    fixed = uno.run(uno.compose([*base, "engine.fluid_step_max_intra_rtt=0.125"]))
    step_us = fixed.summary["run"]["fluid_step_last_us"]
    assert grown.summary["run"]["fluid_step_us"] == pytest.approx(step_us)
    assert grown.summary["run"]["fluid_step_last_us"] == pytest.approx(8 * step_us)
    assert grown.summary["run"]["fluid_steps"] < 0.5 * fixed.summary["run"]["fluid_steps"]
    g, f = (r.flows.set_index("flow_id") for r in (grown, fixed))
    assert (g.loc[[1, 2], "cls"] == "inter").all() and g.loc[0, "cls"] == "intra"
    assert (g.loc[[1, 2], "finish_ps"] > 10 * g.loc[0, "finish_ps"]).all()
    np.testing.assert_allclose(g.loc[[1, 2], "fct_ps"], f.loc[[1, 2], "fct_ps"], rtol=0.01)


def test_once_the_fluid_flows_are_done_the_steps_stop_and_the_packets_run_on_alone(monkeypatch):
    """The default incast's 20-MB flows, its intra-DC flows as packets: the inter-DC fluid flows
    finish first (11.1 ms against 16.2 ms), and the fluid steps stop there. With no fluid byte
    left on the links then, the packets run as they do in a run whose fluid model steps on to
    the end: bit for bit."""
    over = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]",
            "workload.size_bytes=20000000", "engine.sample_interval_us=0"]  # fmt: skip
    stopped = uno.run(uno.compose(over))
    run, flows = stopped.summary["run"], stopped.flows
    fluid_done_us = flows.loc[flows["cls"] == "inter", "finish_ps"].max() / 1e6
    assert flows.loc[flows["cls"] == "intra", "finish_ps"].max() / 1e6 > 1.2 * fluid_done_us
    assert run["fluid_end_us"] < fluid_done_us + 100.0

    def only_when_idle(counters, n_flows, shared_pfc):  # (every link empty)
        return (counters[CT.running] == 0 and counters[CT.busy] == 0
                and counters[CT.next_start] >= n_flows)  # fmt: skip

    monkeypatch.setattr(hybrid_module, "fluid_done", only_when_idle)
    stepped = uno.run(uno.compose(over))
    assert stepped.summary["run"]["fluid_end_us"] > 0.99 * run["sim_time_us"]
    pd.testing.assert_frame_equal(stopped.flows, stepped.flows)
    ports = ["port", "arrivals", "tx_bytes", "drops", "ecn_marks", "fluid_tx_bytes"]
    pd.testing.assert_frame_equal(stopped.tables["ports"][ports], stepped.tables["ports"][ports])


@pytest.mark.parametrize("dataplane", ["compiled", "python"])
def test_a_port_takes_the_phantom_level_the_fluid_flows_leave_behind(dataplane):
    """The fluid model done at 2 us (``retire``): a port whose link still holds a sliver of
    fluid bytes, so that its packets read the fluid model's phantom level (60 kB, the fluid
    flows' bytes counted), takes that level where its own (20 kB at 1 us, draining at 0.9 x
    100 Gb/s) is lower, and drains from it; a port whose link holds none keeps its own; every
    port then reads no fluid bytes. Both data planes alike."""
    from uno.fluid import kernels as K
    from uno.net.compiled.layout import PF, H, P

    flows = "workload.flows=[{src:1,dst:0,size_bytes:20000000,tag:pkt},{src:2,dst:0,size_bytes:2000000,tag:bulk}]"
    over = ["topo=dumbbell", "workload=flows", flows, "engine.kind=hybrid",
            "engine.hybrid_packet_tags=[pkt]", f"engine.dataplane={dataplane}"]  # fmt: skip
    sim = build_simulation(to_run_config(uno.compose(over)))
    links, ls = sim.links, sim.fluid.ls
    sliver, empty = 1, 5  # (the switch's ports to host 0, the fluid flow's receiver, and to 2)
    ls[[sliver, empty], K.LS_PH] = 6e4
    ls[sliver, K.LS_QF] = 0.5
    drain = 0.9 * 100e9 / 8e12  # (bytes/ps)
    if dataplane == "compiled":
        from uno.fluid.hybrid_loop import copy_link_state

        dp = links._dp
        n = len(dp.views)
        copy_link_state(dp.F, ls, n, sim.fluid.link_rep)
        rows = dp.ST[dp.ST[H.off_ports] : dp.ST[H.off_ports] + n * P.size].reshape(n, P.size)
        dp.F[[sliver, empty], PF.ph_level], rows[[sliver, empty], P.ph_last] = 2e4, 1_000_000
        links.retire(2_000_000)
        levels = [dp.F[p, PF.ph_level] for p in (sliver, empty)]
        levels[1] = max(levels[1] - (2_000_000 - rows[empty, P.ph_last]) * drain, 0.0)
        assert (dp.F[:n, [PF.sh_fluid_q, PF.sh_phantom, PF.sh_link_q]] == 0.0).all()
    else:
        ports = [links._ports[p] for p in (sliver, empty)]
        for port in ports:
            port.phantom.level_bytes, port.phantom.last_ps = 2e4, 1_000_000
        links.retire(2_000_000)
        levels = [port.phantom.level_at(2_000_000) for port in ports]
        assert all(port._fluid_q[sliver] == 0.0 and port._fluid_ph[sliver] == 0.0 for port in ports)
    assert levels[0] == pytest.approx(6e4)
    assert levels[1] == pytest.approx(2e4 - 1_000_000 * drain)


def test_fluid_bytes_sent_are_replayed_over_the_step_after_theirs():
    """A packet's INT record on a shared link counts the fluid bytes its link sent in its latest
    step spread over the step after it: the step's count at its end, the next at the end of
    the replay, linear between, and never decreasing from one window to the next."""
    sent = fluid_sent_bytes.py_func
    assert sent(100.0, 400.0, 1_000.0, 500.0, 900) == 100.0  # (a record settled late)
    assert sent(100.0, 400.0, 1_000.0, 500.0, 1_000) == 100.0
    assert sent(100.0, 400.0, 1_000.0, 500.0, 1_250) == pytest.approx(250.0)
    assert sent(100.0, 400.0, 1_000.0, 500.0, 1_500) == 400.0
    assert sent(100.0, 400.0, 1_000.0, 500.0, 9_000) == 400.0  # (the link went idle)
    # two steps of 500 ps: the first window's end is the second's start
    times = np.arange(900, 2_100, 7)
    counts = [sent(*((100.0, 400.0, 1_000.0) if t < 1_500 else (400.0, 450.0, 1_500.0)), 500.0, t)
              for t in times]  # fmt: skip
    assert np.all(np.diff(counts) >= 0.0) and counts[-1] == 450.0
    # the queue: the link's as RED reads it while the fluid flows are there, else the port's
    assert shared_int_record.py_func(3_000, 10_000, True, 500.0, 8_000.7, 249.6) == (8_000, 10_249)
    assert shared_int_record.py_func(3_000, 10_000, False, 0.0, 0.0, 0.0) == (3_000, 10_000)


@pytest.mark.parametrize("fluid_bytes_in_records", [True, False])
def test_a_packet_flows_int_records_count_the_fluid_bytes_of_its_links(
    fluid_bytes_in_records, monkeypatch
):
    """HPCC, one packet flow and one fluid flow of 20 MB into one receiver: the packet flow's
    INT records count the fluid flow's bytes on the shared bottleneck (its utilisation is the
    link's), so it takes about its share (55 Gb/s; the packet engine gives the first of the two
    flows 67). With the fluid bytes left out of its records (the links not keeping them) it
    sees a link it fills alone and takes 86."""
    if not fluid_bytes_in_records:
        build = HybridSimulation.__init__

        def without(self, cfg):
            build(self, cfg)
            self.fluid.hops.int_set[INTS.keep_sent] = 0

        monkeypatch.setattr(HybridSimulation, "__init__", without)
    flows = "{src:1,dst:0,size_bytes:20000000,tag:pkt},{src:2,dst:0,size_bytes:20000000,tag:bulk}"
    r = uno.run(uno.compose(["topo=dumbbell", "workload=flows", f"workload.flows=[{flows}]",
                             "cc=hpcc", "lb=ecmp", "engine.sample_interval_us=0",
                             "engine.kind=hybrid", "engine.hybrid_packet_tags=[pkt]"]))  # fmt: skip
    assert r.summary["hybrid"]["packet_flows"] == 1 and r.flows["finish_ps"].notna().all()
    rate = r.flows.set_index("tag")["mean_rate_gbps"]
    if fluid_bytes_in_records:
        assert 40.0 < rate["pkt"] < 70.0
    else:
        assert rate["pkt"] > 80.0


def test_mprdma_duplicate_ack_rule_runs_with_its_flows_as_packets_or_fluid():
    """MP-RDMA's rule on duplicate ACKs (``cc.mprdma.update_on_duplicate_ack``, as the artifact
    runs it) in the hybrid, its MP-RDMA flows as packets or as fluid. With them as packets,
    ECN marks and timeouts of about a base RTT (many spurious
    retransmissions) the duplicates reach their controllers: the rule moves their FCTs, as it
    does in the packet engine."""
    base = ["cc.intra=mprdma", "cc.inter=dctcp", "lb=ecmp", "switch=ecn",
            "workload.size_bytes=1500000", "transport.intra.rto_base_rtts=1.02",
            "transport.intra.timer_granularity_us=4.0",
            "transport.intra.rto_base_rtts_after_retransmit=1.02", "engine.sample_interval_us=0"]  # fmt: skip
    hybrid = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]"]
    fct = {}
    for rule in ("true", "false"):
        r = uno.run(uno.compose([*base, *hybrid, f"cc.mprdma.update_on_duplicate_ack={rule}"]))
        intra = r.flows[r.flows["cls"] == "intra"]
        assert r.flows["finish_ps"].notna().all() and intra["retransmits"].sum() > 100
        fct[rule] = intra["fct_ps"].mean()
    packets = uno.run(uno.compose([*base, "cc.mprdma.update_on_duplicate_ack=true"])).flows
    in_packets = packets[packets["cls"] == "intra"]["fct_ps"].mean()
    # (the rule's duplicate ACKs grow the window: the flows finish sooner with it)
    assert fct["true"] < 0.95 * fct["false"]
    assert fct["true"] == pytest.approx(in_packets, rel=0.10)
    # (the MP-RDMA flows as fluid: their timers resend copies, whose duplicate ACKs they hear)
    r = uno.run(uno.compose([*base, "engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]",
                             "cc.mprdma.update_on_duplicate_ack=true"]))  # fmt: skip
    intra = r.flows[r.flows["cls"] == "intra"]
    assert r.flows["finish_ps"].notna().all() and intra["retransmits"].sum() > 100


def test_uno_window_sent_resume_runs_where_its_flows_are_packets():
    """UnoCC's epochs resumed once the new window has been sent after a Quick Adapt
    (``cc.uno.qa_epoch_resume=window_sent``) count packet sends: refused where a fluid flow runs
    UnoCC, kept by the hybrid's UnoCC packet flows, on which it acts."""
    # (Quick Adapts happen: first windows of 1 BDP into one receiver)
    base = ["experiment=artifact_check", "incast_mix=artifact_intra4_inter4", "cc.intra=uno",
            "cc.inter=dctcp", "workload.size_bytes=3000000", "engine.sample_interval_us=0",
            "engine.progress=false"]  # fmt: skip
    fct = {}
    for resume in ("window_sent", "ack"):
        r = uno.run(uno.compose([*base, "engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]",
                                 f"cc.uno.qa_epoch_resume={resume}"]))  # fmt: skip
        assert r.flows["finish_ps"].notna().all()
        fct[resume] = r.flows[r.flows["cls"] == "intra"]["fct_ps"].to_numpy()
    assert not np.array_equal(fct["window_sent"], fct["ack"])
    for engine in (
        ["engine.kind=fluid"],
        ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"],
    ):
        with pytest.raises(ConfigError) as err:
            uno.run(uno.compose([*base, *engine, "cc.uno.qa_epoch_resume=window_sent"]))
        assert err.value.field == "cc.uno.qa_epoch_resume"
