"""End-to-end behaviour of the transport with DCTCP: analytic cases and invariants."""

from __future__ import annotations

import pytest
from conftest import flows_override, run

from uno.metrics.summary import jain_index


@pytest.mark.parametrize("cc", ["dctcp", "uno"])
@pytest.mark.parametrize("dst,cls,hops", [(127, "intra", 6), (255, "inter", 9)])
def test_lone_flow_meets_ideal_fct(dst, cls, hops, cc):
    r = run(["workload=flows", flows_override([(0, dst, 20_000_000)]), f"cc={cc}", "lb=ecmp"])
    f = r.flows.iloc[0]
    assert f.cls == cls and f.hops == hops
    assert f.retransmits == 0
    assert abs(f.fct_ps / f.ideal_fct_ps - 1) < 0.01
    # exactly: the last packet does not wait behind itself, so FCT = ideal - one serialisation
    assert f.ideal_fct_ps - f.fct_ps == 332_800


def test_lone_flow_ideal_fct_formula():
    r = run(["workload=flows", flows_override([(0, 255, 1_000_000)])])
    f = r.flows.iloc[0]
    packets = -(-1_000_000 // 4096)
    wire = 1_000_000 + packets * 64
    assert f.ideal_fct_ps == f.base_rtt_ps + wire * 8 * 10**12 // 100_000_000_000


def dumbbell_long_flows(n: int, extra: list[str] | None = None):
    flows = [(i, n, 10**10) for i in range(n)]
    return run(
        [
            "cc=dctcp",
            "topo=dumbbell",
            f"topo.n_senders={n}",
            "topo.host_rate_gbps=10",
            "topo.bottleneck_rate_gbps=10",
            "topo.link_delay_us=5",
            "topo.bottleneck_delay_us=5",
            "workload=flows",
            flows_override(flows),
            "engine.max_sim_time_ms=40",
            "engine.sample_interval_us=100",
            "engine.queue_ports=['left->right']",
            *(extra or []),
        ]
    )


@pytest.mark.parametrize("n", [2, 4, 8])
def test_dctcp_flows_share_a_dumbbell_bottleneck(n):
    r = dumbbell_long_flows(n)
    converged_ps = 10 * 10**9
    rates = r.tables["rates"]
    per_flow = rates[rates.time_ps > converged_ps].groupby("flow_id").acked_gbps.mean()
    assert len(per_flow) == n
    assert per_flow.sum() / 10.0 >= 0.95  # bottleneck utilisation
    assert jain_index(per_flow.to_numpy()) >= 0.99
    queue = r.tables["queues"]
    q = queue[queue.time_ps > converged_ps].queue_bytes
    buffer_bytes = 1 << 20
    kmin, kmax = 0.25 * buffer_bytes, 0.75 * buffer_bytes
    # DCTCP holds the queue in the marking ramp, close to its lower threshold
    assert kmin * 0.8 <= q.mean() <= kmin + 0.5 * (kmax - kmin)
    ports = r.tables["ports"].set_index("port")
    assert ports.loc["left->right", "max_queue_bytes"] <= buffer_bytes
    assert r.summary["packets"]["dropped"] == {}
    assert ports.loc["left->right", "ecn_marks"] > 0


def test_tail_drop_losses_are_all_recovered():
    # 8 senders at line rate into a 60 kB drop-tail bottleneck: heavy loss
    n = 8
    flows = [(i, n, 2_000_000) for i in range(n)]
    r = run(
        [
            "cc=dctcp",
            "topo=dumbbell",
            f"topo.n_senders={n}",
            "topo.buffer_bytes=60000",
            "switch=droptail",
            "workload=flows",
            flows_override(flows),
            "engine.sample_interval_us=0",
        ]
    )
    dropped = r.summary["packets"]["dropped"]
    assert dropped.get("buffer_full/data", 0) > 100
    assert r.flows["finish_ps"].notna().all()
    assert (r.flows["bytes_delivered"] == r.flows["size_bytes"]).all()
    assert r.flows["retransmits"].sum() >= dropped["buffer_full/data"]
    assert r.summary["packets"]["in_network"] == 0


def test_flows_with_staggered_starts_and_spraying_complete():
    flows = [(i, 200 + i, 3_000_000, 10.0 * i) for i in range(6)]
    r = run(["workload=flows", flows_override(flows), "lb=spray"])
    assert r.flows["finish_ps"].notna().all()
    assert (r.flows["start_ps"] == [10_000_000 * i for i in range(6)]).all()


def test_sub_mtu_flow_ideal_fct_uses_its_own_packet_size():
    r = run(["workload=flows", flows_override([(0, 127, 1000)]), "cc=dctcp", "lb=ecmp"])
    f = r.flows.iloc[0]
    wire = 1000 + 64
    ser = wire * 8 * 10**12 // 100_000_000_000
    # 6 hops: data of 1064 B forward, 64 B ACK back, 1 us per link each way
    base = 6 * (2_000_000 + ser + 5_120)
    assert f.ideal_fct_ps == base + ser
    assert f.fct_ps == base  # the one packet's serialisation is inside the base RTT
    assert f.slowdown <= 1.0 and f.slowdown > 0.98


@pytest.mark.parametrize("dataplane", ["python", "compiled"])
def test_a_host_shares_its_nic_round_robin_with_a_line_rate_paced_flow(dataplane):
    """UnoCC paces its first window at line rate (cwnd / base RTT), so the long inter-DC flow's
    next send falls due the instant its packet leaves the NIC. A short intra-DC flow started
    10 us later on the same host must still get every other turn (the NIC's FIFO), not wait
    for the long flow's window: its FCT is its ideal one plus at most its own bytes' time
    again (half the NIC), where jumping the queue made it wait ~1.6 ms."""
    short_bytes = 40_000
    r = run(["workload=flows", flows_override([(0, 255, 20_000_000), (0, 127, short_bytes, 10.0)]),
             "cc=uno", "lb=ecmp", f"engine.dataplane={dataplane}"])  # fmt: skip
    short = r.flows.set_index("dst").loc[127]
    assert short.retransmits == 0
    wire_ps = (short_bytes + 10 * 64) * 8 * 10**12 // 100_000_000_000
    assert short.ideal_fct_ps < short.fct_ps <= short.ideal_fct_ps + wire_ps
