"""The fluid's chance that a packet's RTT sample shows packet-level queueing covers the ACK's
way back: the packet receiver's ACK waits in the data FIFO of every port it crosses (unless
``switch.ack_priority``), so UnoCC's gentle test reads those queues too."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import kernels as K
from uno.fluid.jitter import ack_path_exceedance
from uno.fluid.routes import ack_priority_routes
from uno.fluid.state import Routes

RNG = np.random.default_rng(7)
MSS = 4160.0


def _sim(scheme: str):
    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=40", "engine.kind=fluid"])  # fmt: skip
    return build_simulation(to_run_config(cfg))


def _loaded_links(sim) -> np.ndarray:
    """Every link below saturation with a few paced streams (each link's chance > 0)."""
    ls = np.zeros((len(sim.ls), K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[:, K.LS_CAP] = 0.0125  # 100 Gb/s in bytes/ps
    ls[:, K.LS_ARR] = ls[:, K.LS_CAP] * RNG.uniform(0.5, 0.95, len(ls))
    ls[:, K.LS_ARR2] = ls[:, K.LS_ARR] ** 2 / RNG.uniform(2, 30, len(ls))
    return ls


def _by_hand(links, weights, ls, slack_ps) -> float:
    stay = 1.0
    for link, w in zip(links, weights, strict=True):
        arr, sq = ls[link, K.LS_ARR], ls[link, K.LS_ARR2]
        p = K.packet_jitter_exceedance(slack_ps * ls[link, K.LS_CAP] / MSS, arr * arr / sq,
                                       arr / ls[link, K.LS_CAP])  # fmt: skip
        stay *= 1.0 - w * p
    return 1.0 - stay


def test_ack_path_chance_is_the_queue_tail_of_each_link_of_the_way_back():
    sim = _sim("uno_ecmp")
    ls = _loaded_links(sim)
    slack = 1e6  # 1 us: three 4-kB packets at 100 Gb/s
    checked = 0
    for f in range(len(sim.flows)):
        lo, hi = int(sim.rv_ptr[f]), int(sim.rv_ptr[f + 1])
        want = _by_hand(sim.rv_link[lo:hi], sim.rv_w[lo:hi], ls, slack)
        args = (f, slack, sim.rv_ptr, sim.rv_link, sim.rv_w, ls, sim.lb, MSS)
        got = ack_path_exceedance(*args)
        assert got == pytest.approx(want, rel=1e-12) and got > 0.0
        assert got == pytest.approx(ack_path_exceedance.py_func(*args), rel=1e-12)
        assert ack_path_exceedance(f, 0.0, *args[2:]) == 1.0  # (no slack left)
        checked += 1
    assert checked == 40
    # with the switches' ACK lane only the receiver's NIC delays an ACK
    nic_links = np.unique(sim.fs[:, K.FS_NIC_LINK].astype(np.int64))
    rv = Routes(sim.rt_ptr, sim.rt_link, sim.rt_w, sim.rv_ptr, sim.rv_link, sim.rv_w)
    lane = ack_priority_routes(rv, sim.lb, nic_links)
    for f in range(len(sim.flows)):
        lo, hi = int(sim.rv_ptr[f]), int(sim.rv_ptr[f + 1])
        nic = [link for link in sim.rv_link[lo:hi] if link in set(nic_links.tolist())]
        want = _by_hand(nic, [1.0] * len(nic), ls, slack)
        got = ack_path_exceedance(f, slack, lane.rv_ptr, lane.rv_link, lane.rv_w, ls, sim.lb, MSS)
        assert got == pytest.approx(want, rel=1e-12)


def test_unolb_subflows_acks_take_their_own_way_back():
    sim = _sim("uno")
    ls = _loaded_links(sim)
    slack = 1e6
    subflow_flows = 0
    for f in range(len(sim.flows)):
        n, hops = int(sim.lb.n[f]), int(sim.lb.ack_hops[f])
        if n == 0 or hops == 0:
            continue
        want = np.mean([_by_hand(sim.lb.ack_links[f, s, :hops], [1.0] * hops, ls, slack)
                        for s in range(n)])  # fmt: skip
        args = (f, slack, sim.rv_ptr, sim.rv_link, sim.rv_w, ls, sim.lb, MSS)
        assert ack_path_exceedance(*args) == pytest.approx(want, rel=1e-12)
        assert ack_path_exceedance.py_func(*args) == pytest.approx(want, rel=1e-12)
        subflow_flows += 1
    assert subflow_flows > 0


def test_a_batch_files_the_chance_of_its_path_and_its_acks_way_back():
    """``file_samples`` files ack x (1 - (1 - p_path)(1 - p_back)) for an UnoCC flow."""
    sim = _sim("uno_ecmp")
    ls = _loaded_links(sim)
    routes = Routes(sim.rt_ptr, sim.rt_link, sim.rt_w, sim.rv_ptr, sim.rv_link, sim.rv_w)
    subs = (sim.lb.n, sim.lb.hops, sim.lb.links)
    drawn = np.flatnonzero(sim.fs[:, K.FS_DRAWS] > 0.0)
    assert len(drawn) > 0
    for f in drawn:
        ring = np.zeros_like(sim.ring)
        base = sim.cp[f, K.P_BASE_RTT]
        rtt = base + 1e5
        slack = sim.fs[f, K.FS_QTHR] - (rtt - base)
        nic = int(sim.fs[f, K.FS_NIC_LINK])
        p_path = K.wire_side_exceedance(f, False, slack, nic, sim.fs, sim.rt_ptr, sim.rt_link,
                                        sim.rt_w, ls, subs, sim.cp[f, K.P_MSS])  # fmt: skip
        p_back = ack_path_exceedance(f, slack, sim.rv_ptr, sim.rv_link, sim.rv_w, ls, sim.lb,
                                     sim.cp[f, K.P_MSS])  # fmt: skip
        assert p_back > 0.0
        p_queued = K.queued_chance(f, rtt, 0.0, sim.fs, sim.cp, ls, routes, sim.lb)
        K.file_samples(f, 0, 8320.0, p_queued, rtt, 0.0, 0.0, rtt, sim.fs, ring)
        want = 8320.0 * (1.0 - (1.0 - p_path) * (1.0 - p_back))
        assert ring[0, K.R_JITTER] == pytest.approx(want, rel=1e-12)
