"""``engine.fluid_wire_loss_sides``: a step's losses of a flow on both sides of its wire link are
booked each on its own side, in whole packets, and on the default incast with ECMP and 20-MB
DCTCP flows (whose inter-DC flows lose their new bytes at the WAN ports and older ones at the
ports past them) the fluid's inter-DC mean FCT then comes within 10% of the packet engine's."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.fluid import columns as C
from uno.fluid.losses import beyond_share, far_bytes

MSS = 4160.0


def one_flow(wire_drop: float, dropped: float, coded: bool = False) -> np.ndarray:
    fs = np.zeros((1, C.N_FS))
    fs[0, C.FS_WIRE_DROP] = wire_drop
    fs[0, C.FS_DROPPED] = dropped
    fs[0, C.FS_EC_N] = 8.0 if coded else 0.0
    return fs


def test_the_share_beyond_the_wire_link_is_each_sides_or_the_majoritys():
    assert beyond_share(0, one_flow(3 * MSS, 10 * MSS), 1.0) == pytest.approx(0.3)
    assert beyond_share(0, one_flow(3 * MSS, 10 * MSS), 0.0) == 0.0  # (most dropped before it)
    assert beyond_share(0, one_flow(6 * MSS, 10 * MSS), 0.0) == 1.0
    assert beyond_share(0, one_flow(3 * MSS, 10 * MSS, coded=True), 1.0) == 0.0
    assert beyond_share(0, one_flow(0.0, 10 * MSS), 1.0) == 0.0
    fs = one_flow(3 * MSS, 10 * MSS)
    beyond_share(0, fs, 1.0)
    assert fs[0, C.FS_WIRE_DROP] == 0.0  # (the next count starts)


def test_the_bytes_beyond_are_whole_packets_and_no_more_than_the_loss():
    assert far_bytes(10 * MSS, 0.3, MSS) == 3 * MSS
    assert far_bytes(10 * MSS, 0.34, MSS) == 3 * MSS
    assert far_bytes(10 * MSS, 0.36, MSS) == 4 * MSS
    assert far_bytes(10 * MSS, 1.0, MSS) == 10 * MSS
    assert far_bytes(10 * MSS, 0.0, MSS) == 0.0
    assert far_bytes(1000.0, 0.7, MSS) == 1000.0  # (a flow's one smaller packet)
    assert far_bytes(1000.0, 0.3, MSS) == 0.0


def inter_mean_fct_ps(engine: list[str]) -> float:
    overrides = ["cc=dctcp", "lb=ecmp", "workload.size_bytes=20000000", "engine.progress=false",
                 "engine.sample_interval_us=0", *engine]  # fmt: skip
    flows = uno.run(uno.compose(overrides)).flows
    assert flows["finish_ps"].notna().all()
    return float(flows.loc[flows["cls"] == "inter", "fct_ps"].mean())


def test_each_sides_losses_bring_the_incast_inter_dc_flows_near_packets():
    packet = inter_mean_fct_ps(["engine.kind=packet"])
    sides = inter_mean_fct_ps(["engine.kind=fluid", "engine.fluid_wire_loss_sides=true"])
    majority = inter_mean_fct_ps(["engine.kind=fluid"])
    assert sides != majority  # (the setting reaches the kernels)
    assert abs(sides / packet - 1.0) < 0.10
