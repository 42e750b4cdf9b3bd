"""The fluid engine's longer steps: a step longer than one intra-DC RTT reaches each law as the
batches it hears at one intra-DC RTT (``FS_BATCH_PS``, :func:`uno.fluid.control.law_batch`)."""

from __future__ import annotations

import numpy as np
import pytest

import uno
import uno.api
from uno.build import build_simulation
from uno.cc.law import NO_RECORDS
from uno.cc.registry import KIND
from uno.cc.uno import S as UNO_STATE
from uno.fluid import kernels as K

MSS = 4160.0
INTRA_RTT_PS = 14_000_000.0


def _uno_flow(base_rtt_ps):
    """One UnoCC flow's arrays (controller state and constants, flow state, a delay-line row),
    its window at 100 packets."""
    from uno.cc.base import FlowContext
    from uno.cc.uno import LAW, UnoParams, pack

    ctx = FlowContext(int(base_rtt_ps), 175_000.0, int(100e9), int(MSS), int(INTRA_RTT_PS),
                      175_000.0, False)  # fmt: skip
    consts = pack(UnoParams(), ctx)
    cp = np.zeros((1, max(K.N_P, len(consts))))
    cp[0, : len(consts)] = consts
    cp[0, K.P_KIND] = K.CC_LAW + KIND["uno"]
    cs = np.zeros((1, max(K.N_C, len(LAW.state._fields))))
    K.cc_init(cs, cp, 0)
    cs[0, K.C_CWND] = 100 * MSS
    return cs, cp, np.zeros((1, K.N_FS)), np.zeros((1, K.N_R))


def test_a_long_steps_batch_reaches_the_law_as_the_batches_in_a_row_it_spans():
    """A batch of 16 intra-DC RTTs of an inter-DC UnoCC flow's ACKs, marked, given as 16
    pieces, leaves the law exactly where 16 batches of one intra-DC RTT each in a row leave it
    (each an equal share of the ACKs, its arrival, latest send, bytes in flight and acknowledged
    a sixteenth of the span apart), and ends 16 epochs (one intra-DC RTT each), where one
    batch ends one."""
    base_rtt, pieces = 128 * INTRA_RTT_PS, 16
    span = pieces * INTRA_RTT_PS
    now, sent_max, rtt = 40 * base_rtt, 40 * base_rtt - base_rtt, base_rtt
    acked, marked = 400 * MSS, 100 * MSS
    rng = np.ones(1, dtype=np.uint64)
    runs = {}
    for how in ("pieces", "in_a_row", "one"):
        cs, cp, fs, ring = _uno_flow(base_rtt)
        # the epoch started a round trip ago; the flow's first batch came before
        cs[0, UNO_STATE.started] = 1.0
        cs[0, UNO_STATE.epoch_start_ps] = sent_max - span
        cs[0, UNO_STATE.qa_start_ps] = now - span
        fs[0, K.FS_ACKED] = 10 * acked
        fs[0, K.FS_INFLIGHT] = 300 * MSS
        kind = KIND["uno"]
        if how == "in_a_row":
            part, piece_ps = acked / pieces, span / pieces
            for i in range(pieces):
                back = float(pieces - 1 - i)
                row = fs.copy()
                row[0, K.FS_ACKED] = fs[0, K.FS_ACKED] - back * part
                row[0, K.FS_INFLIGHT] = fs[0, K.FS_INFLIGHT] + back * part
                row[0, K.FS_MARK_CARRY] = fs[0, K.FS_MARK_CARRY]
                ring[0, K.R_SENTMAX] = sent_max - back * piece_ps
                K.law_batch(cs, cp, row, ring, 0, 0, kind, now - back * piece_ps, part,
                            marked / pieces, rtt, 0.0, rng, NO_RECORDS, 0, piece_ps, 1)  # fmt: skip
                fs[0, K.FS_MARK_CARRY] = row[0, K.FS_MARK_CARRY]
        else:
            ring[0, K.R_SENTMAX] = sent_max
            n = pieces if how == "pieces" else 1
            K.law_batch(cs, cp, fs, ring, 0, 0, kind, now, acked, marked, rtt, 0.0, rng,
                        NO_RECORDS, 0, span, n)  # fmt: skip
        runs[how] = cs[0].copy(), fs[0, K.FS_MARK_CARRY]
    np.testing.assert_array_equal(runs["pieces"][0], runs["in_a_row"][0])
    assert runs["pieces"][1] == runs["in_a_row"][1]
    assert runs["pieces"][0][UNO_STATE.epochs] == pieces
    assert runs["one"][0][UNO_STATE.epochs] == 1
    assert runs["pieces"][0][UNO_STATE.md_events] == pieces  # every epoch held a marked ACK


def _inter_incast(cap):
    cfg = uno.api.to_run_config(uno.compose([
        "incast_mix=inter8", "workload.size_bytes=50000000", "engine.kind=fluid",
        f"engine.fluid_step_max_intra_rtt={cap}", "engine.sample_interval_us=0",
    ]))  # fmt: skip
    sim = build_simulation(cfg)
    result = sim.run()
    return sim, result


def test_steps_of_16_intra_dc_rtts_keep_the_inter_dc_flows_epochs_and_fcts():
    """Eight inter-DC UnoCC senders of 50 MB into one receiver: only long-RTT flows run, so the
    step grows at once: with the cap at 16 intra-DC RTTs, to 8 (1/8 of the inter-DC base RTT,
    ``engine.fluid_step_intra_rtt``) instead of one. In a fourth of the steps, each flow still
    ends about one epoch per intra-DC RTT of its ACKs (within 10%; one batch a step would end
    about a ninth of them) and the mean FCT stays within 3% (one batch a step: 3% early)."""
    one, r_one = _inter_incast(1)
    long, r_long = _inter_incast(16)
    assert r_long.summary["run"]["fluid_step_last_us"] == pytest.approx(
        8 * r_one.summary["run"]["fluid_step_last_us"]
    )
    assert r_long.summary["run"]["fluid_steps"] < 0.25 * r_one.summary["run"]["fluid_steps"]
    assert r_long.flows["finish_ps"].notna().all()
    epochs_one = one.cs[:, UNO_STATE.epochs]
    epochs_long = long.cs[:, UNO_STATE.epochs]
    np.testing.assert_allclose(epochs_long, epochs_one, rtol=0.10)
    assert r_long.flows["fct_ps"].mean() == pytest.approx(r_one.flows["fct_ps"].mean(), rel=0.03)


def test_a_long_steps_pieces_send_the_cnps_of_the_whole_batch():
    """DCQCN's notification point spaces CNPs in time (one per 50 us at most): batches of 28 us
    of steadily marked ACKs (a marked packet every 1.75 us) given as 16 pieces each lead to
    the CNPs, and at the times, that the whole batches do."""
    from test_fluid_dcqcn import MSS as DCQCN_MSS
    from test_fluid_dcqcn import US, _dcqcn_flow

    span = 28 * US
    counts = {}
    for pieces in (1, 16):
        cp, cs, fs = _dcqcn_flow()
        ring = np.zeros((1, K.N_R))
        rng = np.ones(1, dtype=np.uint64)
        for k in range(1, 21):  # 560 us
            marked = 16 * DCQCN_MSS
            K.law_batch(cs, cp, fs, ring, 0, 0, KIND["dcqcn"], k * span, marked, marked,
                        10 * US, 0.0, rng, NO_RECORDS, 0, span, pieces)  # fmt: skip
        counts[pieces] = fs[0, K.FS_CNPS], fs[0, K.FS_CNP_NEXT]
    # at 1.75 us, then at the first marked packet 50 us after each: every 50.75 us to 560 us
    assert counts[16][0] == counts[1][0] == 12
    assert counts[16][1] == pytest.approx(counts[1][1], abs=1.0)


def test_the_fast_preset_is_the_fluid_engine_at_coarser_steps_and_meets_the_incast_targets():
    """``engine=fluid_fast`` runs the fluid engine with steps of half the intra-DC RTT (a
    quarter where a law reads INT), ACKs counted by arrival time, feedback blocks of 1/32 of a
    long RTT and the tail step up to 16 intra-DC RTTs; on the default incast (4 intra- and 4
    inter-DC UnoCC flows of 200 MB, spraying) each class's mean FCT stays within the validation
    target (10%) of the compiled packet engine's, with about a quarter of the steps of the
    default fluid run (each step four times as long, and the flows may end a little apart)."""
    quiet = ["engine.sample_interval_us=0", "engine.progress=false"]
    cfg = uno.compose(["engine=fluid_fast", *quiet])
    assert cfg.engine.kind == "fluid"
    assert (cfg.engine.fluid_step_intra_rtt, cfg.engine.fluid_step_fine_intra_rtt,
            cfg.engine.fluid_step_max_intra_rtt, cfg.engine.fluid_blocks_per_rtt,
            cfg.engine.fluid_ack_spread) == (0.5, 0.25, 16.0, 32, True)  # fmt: skip
    fast = uno.run(cfg)
    fine = uno.run(uno.compose(["engine.kind=fluid", *quiet]))
    packet = uno.run(uno.compose(["engine.kind=packet", "engine.dataplane=compiled", *quiet]))
    assert fast.summary["run"]["fluid_steps"] <= 0.26 * fine.summary["run"]["fluid_steps"]
    assert fast.flows["finish_ps"].notna().all()
    for cls in ("intra", "inter"):
        mine = fast.flows.loc[fast.flows.cls == cls, "fct_ps"].mean()
        theirs = packet.flows.loc[packet.flows.cls == cls, "fct_ps"].mean()
        assert mine == pytest.approx(theirs, rel=0.10), cls


HPCC_NO_PFC = ["scheme=gear_hpcc", "switch.pfc.enabled=false"]


@pytest.mark.parametrize(
    ("overrides", "step_intra_rtt"),
    [
        (["engine=fluid_fast"], 0.5),
        (["engine=fluid_fast", *HPCC_NO_PFC], 0.25),
        (["engine=fluid_fast", "scheme=gear_gear", "switch.pfc.enabled=false"], 0.25),
        (["engine=fluid_fast", "experiment=pfc_spreading"], 0.25),
        (["engine.kind=fluid", *HPCC_NO_PFC], 0.125),
        (["engine=fluid_fast", "engine.fluid_step_intra_rtt=0.125", *HPCC_NO_PFC], 0.125),
        (
            [
                "engine.kind=hybrid",
                "engine=fluid_fast",
                "engine.hybrid_packet_tags=[intra]",
                *HPCC_NO_PFC,
            ],
            0.25,
        ),
    ],
)
def test_a_run_with_int_laws_or_pfc_keeps_the_finer_step(overrides, step_intra_rtt):
    """``engine.fluid_step_fine_intra_rtt`` bounds the step of a run where PFC pauses links or
    some flow's law reads INT (HPCC, Gear), whichever engine runs that flow (the hybrid's INT
    flows here are its packets, whose records read the fluid links' state); other runs step
    at ``engine.fluid_step_intra_rtt``; a finer step asked for stays."""
    cfg = uno.api.to_run_config(uno.compose([*overrides, "engine.progress=false"]))
    sim = build_simulation(cfg)
    fluid = getattr(sim, "fluid", sim)  # (a hybrid run's fluid part)
    intra_rtt_ps = fluid.scenario.intra_ref.base_rtt_ps
    assert fluid.dt_ps == pytest.approx(step_intra_rtt * intra_rtt_ps)


def _batches(overrides):
    """The fluid engine's flows on the default incast (4 intra- and 4 inter-DC flows): their
    classes, base RTTs, longest batches (``FS_BATCH_PS``), and the first step (ps)."""
    cfg = uno.api.to_run_config(uno.compose([*overrides, "engine.progress=false"]))
    sim = build_simulation(cfg)
    inter = np.array([p.inter for p in sim.flows])
    return inter, sim.fs[:, K.FS_BASE_RTT], sim.fs[:, K.FS_BATCH_PS], sim.dt_first_ps


@pytest.mark.parametrize("scheme", ["gemini", "mprdma_bbr"])
def test_a_law_of_its_own_rtts_periods_hears_a_long_step_in_batches_of_its_rtt(scheme):
    """GEMINI's, MP-RDMA's and BBR's rules run per their own base RTT (``Law.period_ps``
    None): with the step growing to 16 intra-DC RTTs, an inter-DC flow hears a step's ACKs in
    batches of the longest step within its base RTT (steps are the first times a power of
    two), not of one intra-DC RTT; with ``engine.fluid_batch_rtt`` at most that share of it."""
    quiet = [f"scheme={scheme}", "engine=fluid_fast", "engine.sample_interval_us=0"]
    inter, rtt, batch, dt = _batches([*quiet, "engine.fluid_batch_rtt=0"])
    assert inter.any() and (~inter).any()
    ratio = batch / dt
    np.testing.assert_array_equal(ratio, np.exp2(np.floor(np.log2(ratio))))  # powers of two
    assert (batch <= rtt).all() and (2 * batch > rtt).all()
    assert (batch[inter] >= 64 * batch[~inter].max()).all()
    _, _, eighth, _ = _batches([*quiet, "engine.fluid_batch_rtt=0.125"])
    np.testing.assert_allclose(eighth, np.minimum(batch, 0.125 * rtt))


def test_unocc_hears_a_long_step_in_batches_of_one_intra_dc_rtt_whatever_its_rtt():
    """UnoCC's epochs span one intra-DC RTT for every flow (``Law.period_ps``): its inter-DC
    flows' batches are the intra-DC flows' (the step at one intra-DC RTT, two of
    ``engine=fluid_fast``'s first steps), and so are Gear's, whose utilisation EWMA spans the
    intra-DC RTT (T of its eq. 1) unless ``cc.gear.utilization_rtt=own``."""
    quiet = ["engine=fluid_fast", "engine.sample_interval_us=0", "engine.fluid_batch_rtt=0"]
    inter, rtt, batch, dt = _batches(quiet)
    assert (batch == 2 * dt).all() and (rtt[inter] > 64 * batch[inter]).all()
    gear = [*quiet, "scheme=gear_gear", "switch.pfc.enabled=false"]
    inter, rtt, batch, dt = _batches(gear)
    assert (batch == 4 * dt).all()  # (an INT law's first step: a quarter of the intra-DC RTT)
    inter, rtt, own, dt = _batches([*gear, "cc.gear.utilization_rtt=own"])
    assert (own[inter] >= 64 * batch[inter]).all() and (own <= rtt).all()
