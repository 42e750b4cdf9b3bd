"""The fluid engine's PFC step visits only its live ingress queues
(:func:`uno.fluid.pfc.pfc_step`): on random sequences of queued bytes and departures it gives,
bit for bit, what a visit to every queue at every step gives (the rule of the module
docstring, written out here), and a queue leaves the live list once it is empty, does not
pause and was not paused lately."""

from __future__ import annotations

import numpy as np
import pytest
from fluid_cases import on_routes

from uno.fluid import columns as K
from uno.fluid.pfc import MIN_SERVED, PF, live_list, pfc_step


def visit_every_queue(k, dt_ps, fs_q, rows, ls, tx_before, pfc):
    """Every queue at step ``k``: its level from the entries' queued bytes (``fs_q``: (row,
    bytes) pairs), what its link let into the switch (its cumulative departures against
    ``tx_before``), its pause and its moving mean."""
    pfc[:, PF.level] = 0.0
    for row, q in fs_q:
        pfc[row, PF.level] += q
    for i in rows:
        link = int(pfc[i, PF.link])
        level = pfc[i, PF.level]
        drained = pfc[i, PF.prev_level] + (ls[link, K.LS_TX] - tx_before[link]) - level
        pfc[i, PF.prev_level] = level
        pfc[i, PF.max_level] = max(pfc[i, PF.max_level], level)
        if pfc[i, PF.pausing] == 0.0:
            if level > pfc[i, PF.xoff]:
                pfc[i, PF.pausing] = 1.0
                pfc[i, PF.pauses] += 1.0
        elif level <= pfc[i, PF.xon]:
            pfc[i, PF.pausing] = 0.0
        share = 0.0
        if pfc[i, PF.pausing] > 0.0:
            over = level - pfc[i, PF.xon]
            share = over / drained if drained > over else 1.0
        ls[link, K.LS_PAUSE] = share
        pfc[i, PF.paused_ps] += share * dt_ps
        weight = min(1.0, dt_ps / pfc[i, PF.mean_ps])
        mean = pfc[i, PF.paused_mean] + weight * (share - pfc[i, PF.paused_mean])
        pfc[i, PF.paused_mean] = mean
        if mean > 0.0:
            served = max(1.0 - mean, MIN_SERVED)
            ls[link, K.LS_DELAY] = ls[link, K.LS_Q] / (ls[link, K.LS_CAP] * served)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_live_list_gives_what_visiting_every_queue_gives(seed):
    rng = np.random.default_rng(seed)
    n_links, n_rows, n_flows, hops = 10, 6, 5, 4
    # flow f's route: `hops` links; an entry's queued bytes count in the ingress queue of the
    # link of the hop before it (links 0..5 have one)
    routes = [rng.choice(n_links, size=hops, replace=False) for _ in range(n_flows)]
    rt_ptr = np.arange(0, hops * (n_flows + 1), hops)
    pf_ptr, pf_row = [0], []
    for route in routes:
        for h in range(hops):
            if h > 0 and route[h - 1] < n_rows:
                pf_row.append(int(route[h - 1]))
            pf_ptr.append(len(pf_row))
    pf_ptr, pf_row = np.array(pf_ptr), np.array(pf_row, dtype=np.int64)
    pf_w = np.ones(len(pf_row))
    pfc = np.zeros((n_rows, PF.size))
    pfc[:, PF.link] = np.arange(n_rows)
    pfc[:, PF.xoff] = 100_000.0
    pfc[:, PF.xon] = 80_000.0
    pfc[:, PF.mean_ps] = 8e6
    reference = pfc.copy()
    ls = np.zeros((n_links, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[:, K.LS_CAP] = 12.5e-3
    ls[:, K.LS_TX_AT] = -1.0
    ls_ref = ls.copy()
    ef = np.zeros((hops * n_flows, K.N_EF))
    fx = np.zeros((n_flows, K.N_FX))
    active = np.arange(n_flows)
    pf_live = live_list(n_rows)
    dt = 1e6
    visited = 0
    for k in range(400):
        # bursts come and go: most steps some flows hold nothing in the network
        ef[:, K.EF_Q] = 0.0
        fx[:, K.FX_NETQ] = 0.0
        fx[:, K.FX_FIRST] = rt_ptr[1:]
        for f in range(n_flows):
            if rng.random() < 0.4:
                continue
            for e in range(rt_ptr[f] + rng.integers(0, hops), rt_ptr[f + 1]):
                if rng.random() < 0.6:
                    ef[e, K.EF_Q] = rng.uniform(0.0, 120_000.0)
            held = ef[rt_ptr[f] : rt_ptr[f + 1], K.EF_Q]
            if held.any():
                fx[f, K.FX_NETQ] = held.sum()
                fx[f, K.FX_FIRST] = rt_ptr[f] + int(np.argmax(held > 0.0))
        tx_before = ls_ref[:, K.LS_TX].copy()
        for link in range(n_links):  # the links that sent in this step, and their queues
            q = rng.uniform(0.0, 200_000.0) if rng.random() < 0.5 else 0.0
            ls[link, K.LS_Q] = ls_ref[link, K.LS_Q] = q
            if rng.random() < 0.5:
                sent = rng.uniform(0.0, 60_000.0)
                ls[link, K.LS_TX_BEFORE], ls[link, K.LS_TX_AT] = ls[link, K.LS_TX], k * dt
                ls[link, K.LS_TX] += sent
                ls_ref[link, K.LS_TX] += sent
        pairs = [
            (int(pf_row[j]), ef[e, K.EF_Q])
            for e in range(len(ef))
            if ef[e, K.EF_Q] > 0.0
            for j in range(pf_ptr[e], pf_ptr[e + 1])
        ]
        visit_every_queue(k, dt, pairs, range(n_rows), ls_ref, tx_before, reference)
        pfc_step(k, dt, n_flows, active, fx, rt_ptr, ef, ls, pfc, pf_ptr, pf_row, pf_w, pf_live,
                 *on_routes(n_flows, n_links))  # fmt: skip
        visited += pf_live[0]
        for col in ("level", "prev_level", "pausing", "pauses", "max_level", "paused_mean",
                    "paused_ps"):  # fmt: skip
            c = getattr(PF, col)
            np.testing.assert_array_equal(pfc[:, c], reference[:, c])
        for col in (K.LS_PAUSE, K.LS_DELAY):
            np.testing.assert_array_equal(ls[:, col], ls_ref[:, col])
        # the list holds exactly the queues that held bytes, paused or were paused lately
        live = set(pf_live[1 : 1 + pf_live[0]].tolist())
        busy = (pfc[:, PF.level] > 0) | (pfc[:, PF.pausing] > 0) | (pfc[:, PF.paused_mean] > 0)
        assert live == set(np.nonzero(busy)[0].tolist())
        assert (pfc[:, PF.listed] > 0).sum() == len(live)
    assert reference[:, PF.pauses].sum() > 10  # (the sequences do pause)
    assert visited < 400 * n_rows  # (and queues leave the list)


def test_a_subflows_queued_bytes_count_where_its_previous_hop_enters_now():
    """A flow on two subflows (UnoLB, PLB, REPS) counts the bytes each queues at a hop in the
    ingress queue of the link its own previous hop takes, and after a balancer moves a subflow,
    in its new link's: the moved bytes push that queue past Xoff and pause its link."""
    n_links = 5
    # subflow 0 over links 0 -> 1 -> 2, subflow 1 over 0 -> 3 -> 4; links 0, 1, 3 enter switches
    sub_links = np.array([[[0, 1, 2], [0, 3, 4]]], dtype=np.int64)
    sub_n, sub_hops = np.array([2]), np.array([3])
    pf_of = np.array([0, 1, -1, 2, -1], dtype=np.int64)
    pfc = np.zeros((3, PF.size))
    pfc[:, PF.link] = [0, 1, 3]
    pfc[:, PF.xoff] = 60_000.0
    pfc[:, PF.xon] = 50_000.0
    pfc[:, PF.mean_ps] = 8e6
    rt_ptr = np.array([0, 0])  # (no route entries: the subflows' hops from entry 0)
    ef = np.zeros((6, K.N_EF))
    ef[[2, 4, 5], K.EF_Q] = [50_000.0, 20_000.0, 30_000.0]  # (entry: subflow x 3 + hop)
    fx = np.zeros((1, K.N_FX))
    fx[0, K.FX_NETQ] = ef[:, K.EF_Q].sum()
    ls = np.zeros((n_links, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0
    ls[:, K.LS_CAP] = 12.5e-3
    pf_live = live_list(len(pfc))
    no_routes = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    args = (np.array([0]), fx, rt_ptr, ef, ls, pfc, *no_routes, pf_live, pf_of, sub_n, sub_hops)
    pfc_step(0, 1e6, 1, *args, sub_links)
    assert pfc[:, PF.level].tolist() == [20_000.0, 50_000.0, 30_000.0]
    assert ls[:, K.LS_PAUSE].tolist() == [0.0] * n_links
    sub_links[0, 1] = [0, 1, 2]  # subflow 1 moved onto subflow 0's path
    pfc_step(1, 1e6, 1, *args, sub_links)
    assert pfc[:, PF.level].tolist() == [20_000.0, 80_000.0, 0.0]
    assert pfc[:, PF.pausing].tolist() == [0.0, 1.0, 0.0] and ls[1, K.LS_PAUSE] == 1.0
