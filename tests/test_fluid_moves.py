"""Fluid flows on subflows (PLB, REPS, UnoLB): a subflow that moves takes the bytes it has
queued with it (uno.fluid.balance.shift_queued), so every byte a receiver gets crosses its last
link, at that link's line rate at most, however often its flow moved; the balancers hear the
marks the receivers echo (DCQCN's: one packet's per CNP); and PFC pauses the links their bytes
come in by."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import kernels as K
from uno.fluid.balance import PLB_REPATHS, REPS_MOVES

#: six DCTCP flows of 4 MB into host 0 of a k=4 fat tree (and two victims elsewhere), PFC off:
#: the receiver's port marks them, so PLB repaths and REPS moves
SPREADING = ["experiment=pfc_spreading", "switch.pfc.enabled=false", "cc=dctcp",
             "engine.progress=false", "engine.sample_interval_us=0", "engine.kind=fluid"]  # fmt: skip
LINE_BPS = 100e9


def _moves(sim, lb: str) -> float:
    counts = sim.lb.plb_s[:, PLB_REPATHS] if lb == "plb" else sim.lb.reps_s[:, REPS_MOVES]
    return float(counts.sum())


@pytest.mark.parametrize("lb", ["plb", "reps"])
def test_every_byte_a_moved_flow_delivers_crosses_the_receivers_link(lb):
    sim = build_simulation(to_run_config(uno.compose([*SPREADING, f"lb={lb}"])))
    result = sim.run()
    assert _moves(sim, lb) > 10  # (the balancer moves the flows' subflows many times)
    flows = result.flows
    into_h0 = flows[flows["dst"] == 0]
    ports = result.tables["ports"].set_index("port")
    carried = ports.loc["tor0->h0", "tx_bytes"]
    assert carried >= 0.999 * into_h0["bytes_delivered"].sum()
    # the receiver's link lets them through at its line rate at most
    last_ps = into_h0["finish_ps"].max()
    assert last_ps * 1e-12 >= 8 * into_h0["size_bytes"].sum() / LINE_BPS


def test_a_cnp_receiver_echoes_a_packets_worth_of_marks_per_cnp():
    """The marks a balancer hears (uno.fluid.arrivals.echoed_marks): all those a batch's ACKs
    acknowledge, or where the receiver coalesces them into CNPs (DCQCN) a packet's worth per
    CNP, at most all of them."""
    fs, cp = np.zeros((2, K.N_FS)), np.zeros((2, K.N_P))
    cp[:, K.P_MSS] = 4_000.0
    fs[1, K.FS_CNP_GAP] = 50e6
    assert K.echoed_marks(0, 30_000.0, 0.0, fs, cp) == 30_000.0
    assert K.echoed_marks(1, 30_000.0, 2.0, fs, cp) == 8_000.0
    assert K.echoed_marks(1, 30_000.0, 0.0, fs, cp) == 0.0
    assert K.echoed_marks(1, 6_000.0, 2.0, fs, cp) == 6_000.0


@pytest.mark.parametrize("lb", ["plb", "reps", "unolb"])
def test_subflows_under_dcqcn_with_pfc_agree_with_the_packet_engine(lb):
    """``pfc_spreading`` on subflows: PFC pauses the links the subflows' bytes come in by, no
    lossless queue overflows, and the incast's mean FCT is within 10% of packets'. DCQCN's
    receiver echoes a mark once per CNP interval, so PLB's rounds are rarely congested and its
    flows keep their paths in both engines (counting the links' marks instead, the fluid's
    flows move on and finish 23% late)."""
    base = ["experiment=pfc_spreading", f"lb={lb}", "engine.progress=false",
            "engine.sample_interval_us=0"]  # fmt: skip
    means = {}
    for kind in ("packet", "fluid"):
        result = uno.run(uno.compose([*base, f"engine.kind={kind}"]))
        flows = result.flows
        incast = flows[flows["tag"] == "incast"]
        assert flows["finish_ps"].notna().all()
        pfc = result.summary["pfc"]
        assert pfc["lossless_violations"] == 0 and pfc["total_pause_us"] > 1000.0
        means[kind] = (incast["finish_ps"] - incast["start_ps"]).mean()
    assert means["fluid"] == pytest.approx(means["packet"], rel=0.10)
