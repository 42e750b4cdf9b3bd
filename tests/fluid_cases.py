"""Shared cases of the fluid engine's tests: a DCTCP dumbbell incast, random link rows, law
flows with the packet engines' constants, and a small UnoLB run."""

from __future__ import annotations

import numpy as np

import uno
from uno.cc.registry import LAW_BY_NAME
from uno.fluid import kernels as K

DUMBBELL = ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
            "cc=dctcp", "switch=ecn", "lb=ecmp", "workload.size_bytes=20000000",
            "engine.sample_interval_us=0"]  # fmt: skip


def on_routes(n_flows: int, n_links: int) -> tuple:
    """:func:`uno.fluid.pfc.pfc_step`'s subflow arguments for flows on routes alone: no link's
    ingress row read, no subflow."""
    no_sub = np.zeros(n_flows, dtype=np.int64)
    return (np.full(n_links, -1, dtype=np.int64), no_sub, no_sub,
            np.zeros((n_flows, 1, 1), dtype=np.int64))  # fmt: skip


def random_links(n: int, rng) -> np.ndarray:
    ls = np.zeros((n, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[:, K.LS_CAP] = rng.uniform(0.001, 0.02, n)
    ls[:, K.LS_BUF] = rng.uniform(1e4, 1e6, n)
    ls[:, K.LS_Q] = rng.uniform(0, 1e6, n) * (rng.random(n) < 0.5)
    ls[:, K.LS_PH] = rng.uniform(0, 1e5, n)
    ls[:, K.LS_PHSIZE] = rng.uniform(0, 2e5, n) * (rng.random(n) < 0.7)
    ls[:, K.LS_PHDRAIN] = ls[:, K.LS_CAP] * 0.9
    ls[:, K.LS_PHKMIN] = 1e4
    ls[:, K.LS_PHKMAX] = 5e4
    ls[:, K.LS_KMIN] = 2e4
    ls[:, K.LS_KMAX] = rng.choice([2e4, 8e4], n)
    ls[:, K.LS_KSPAN] = (ls[:, K.LS_KMAX] - ls[:, K.LS_KMIN]) / rng.choice([1.0, 0.2], n)
    ls[:, K.LS_MODE] = rng.integers(0, 4, n)
    ls[:, K.LS_PH_COUNTS] = rng.integers(0, 4, n)  # (PH_COUNTS_DROPS | PH_COUNTS_ACKS bits)
    ls[:, K.LS_ARR] = rng.uniform(0, 0.04, n) * (rng.random(n) < 0.8)
    ls[:, K.LS_EXT] = rng.uniform(0, 5e4, n) * (rng.random(n) < 0.5)
    ls[:, K.LS_QF] = ls[:, K.LS_Q] * rng.random(n)
    ls[:, K.LS_ACK_IN] = rng.uniform(0, 2e3, n) * (rng.random(n) < 0.5)
    ls[:, K.LS_LISTED] = 1.0
    return ls


def law_flows(name: str, rng, n: int = 30):
    """The fluid rows of ``n`` flows running law ``name`` on paths of random base RTTs: their
    constants (the packet engines' own) and their state after init, and the flows table."""
    from cc_events import VARIANTS, context, variant_params

    from uno.cc.adapter import make_cc
    from uno.cc.registry import KIND

    variant = next((v for v, (algo, _) in VARIANTS.items() if algo == name), name)
    params = variant_params(variant)[1]
    ctrls = [
        make_cc(name, type("Cfg", (), {name: params})(), context(int(rtt)))
        for rtt in rng.integers(2_000_000, 200_000_000, n)
    ]
    law = LAW_BY_NAME[name]
    width = max(K.N_P, max(len(c.consts) for c in ctrls))  # (a law's constants may have a tail)
    cp = np.zeros((n, width))
    for f, c in enumerate(ctrls):
        cp[f, : len(c.consts)] = c.consts
    cp[:, K.P_KIND] = K.CC_LAW + KIND[name]
    cs = np.zeros((n, max(K.N_C, max(len(c.state) for c in ctrls))))
    fs = np.zeros((n, K.N_FS))
    fs[:, K.FS_DRAWS] = 1.0 if "queueing" in law.signals else 0.0
    fs[:, K.FS_RTTMIN] = 1.0 if "rtt_min" in law.signals else 0.0
    fs[:, K.FS_RATE] = 1.0 if "delivery_rate" in law.signals else 0.0
    if law.cnp_interval_ps is not None:  # (the receiver's CNPs: uno.fluid.control.np_cnps)
        fs[:, K.FS_CNP_GAP] = law.cnp_interval_ps(params)
    for f in range(n):
        K.cc_init(cs, cp, f)
    return cs, cp, fs


def unolb_sim(n_flows=40, extra=()):
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno",
                       f"workload.n_flows={n_flows}", "engine.kind=fluid", *extra])  # fmt: skip
    return build_simulation(to_run_config(cfg))


def switch_indices(sim) -> dict[int, int]:
    """Each switch's index among the switches of ``sim``'s topology, by its node index (as
    ``uno.fluid.routes.ecmp_path_edges`` takes them)."""
    nodes = sim.scenario.routing.topo.nodes
    return {i: j for j, i in enumerate(i for i, node in enumerate(nodes) if node.kind != "host")}
