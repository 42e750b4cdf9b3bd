"""How one overflowing link's drops fall on its flows, in the packet and the fluid engine.

Usage::

    python experiments/fluid_validation/loss_spread.py [--port "dc0/border->dc1/border#1"]
        [--from-ms 0.3] [--to-ms 1.5] [--scheme uno_ecmp] [--min-packets 100] [--fluid OVERRIDE]

Runs the ``mixed40`` scenario of ``compare.py`` (``fig10_load`` at 40% load, 5000 flows) in both
engines up to ``--to-ms`` and counts, per flow, the data packets that reached ``--port`` between
``--from-ms`` and ``--to-ms`` and those it dropped. Prints the link's totals and, over the flows
with at least ``--min-packets`` arrivals, the spread of their drop fractions.

It is a diagnostic, not part of the engines: it wraps ``Port.receive`` of the packet engine's
lazy port model on the Python data plane (``engine.port_model=lazy``, ``engine.dataplane=python``)
for the run, and steps the fluid engine one step at a time, reading each route entry's arrivals
(``EF_IN``) and the share of them the link dropped (``EF_LOSS``: the link's drop fraction, or
with ``engine.fluid_phase_drops`` its input's share) after the step (the fluid engine's own,
per-flow losses are whole packets drawn around these means). ``--fluid OVERRIDE`` adds an
override to the fluid run (e.g. ``engine.fluid_phase_drops=false``).
"""

from __future__ import annotations

import argparse
import collections

import numpy as np
import pandas as pd
from compare import SCENARIOS  # this folder's script: the scenarios it compares

import uno
from uno.api import to_run_config

SCENARIO = [s for s in SCENARIOS["mixed40"] if not s.startswith("scheme=")] + [
    "engine.progress=false", "engine.sample_interval_us=0"]  # fmt: skip


def packet_counts(args) -> tuple[collections.Counter, collections.Counter]:
    """Per flow id: data packets that reached ``args.port`` in the window, and those dropped."""
    from uno.core.packet import DATA
    from uno.net import port as port_module

    t0, t1 = int(args.from_ms * 1e9), int(args.to_ms * 1e9)
    arrivals, drops = collections.Counter(), collections.Counter()
    original = port_module.Port.receive

    def receive(port, pkt):
        now = port._engine._now
        if pkt.kind != DATA or port.name != args.port or not t0 <= now < t1:
            return original(port, pkt)
        before = port.drops
        original(port, pkt)
        arrivals[pkt.flow_id] += 1
        drops[pkt.flow_id] += port.drops - before

    port_module.Port.receive = receive
    try:
        cfg = uno.compose([*SCENARIO, f"scheme={args.scheme}", "engine.kind=packet",
                           "engine.port_model=lazy", "engine.dataplane=python",
                           f"engine.max_sim_time_ms={args.to_ms}"])  # fmt: skip
        uno.run(cfg)
    finally:
        port_module.Port.receive = original
    return arrivals, drops


def fluid_counts(args) -> tuple[collections.Counter, collections.Counter]:
    """The fluid engine's arrivals and drops at ``args.port`` per flow id (packets, fractional)."""
    from uno.build import build_simulation
    from uno.fluid import kernels as K

    cfg = to_run_config(uno.compose([*SCENARIO, f"scheme={args.scheme}", "engine.kind=fluid",
                                     *args.fluid]))  # fmt: skip
    sim = build_simulation(cfg)
    if args.port not in sim.port_names:
        raise SystemExit(f"--port {args.port!r}: no such link in this scenario")
    link = sim.port_names.index(args.port)
    ei, ef = sim.hops[2], sim.hops[3]
    n_entries = int(sim.rt_ptr[-1])  # route entries (UnoLB subflow hops follow; not counted)
    mine = np.nonzero(ei[:n_entries, K.EI_LINK] == link)[0]
    if len(mine) == 0:
        raise SystemExit(f"--port {args.port!r}: no flow's route crosses it")
    flow_ids = np.array([p.spec.flow_id for p in sim.flows])[ei[mine, K.EI_FLOW]]
    group = ei[mine, K.EI_GSTART]
    weight = ef[mine, K.EF_W]
    mss = sim.scenario.data_bytes
    dt = sim.dt_ps
    got = np.zeros(len(mine))
    lost = np.zeros(len(mine))
    k = 0
    while k * dt < args.to_ms * 1e9 and int(sim.counters[2]) < len(sim.flows):
        ef[:n_entries, K.EF_IN] = 0.0  # entries not walked this step keep no stale arrivals
        k = sim.advance(k, k + 1)
        if k * dt <= args.from_ms * 1e9:
            continue
        into = np.where(weight < 1.0, ef[group, K.EF_IN] * weight, ef[mine, K.EF_IN])
        got += into / mss
        if sim.ls[link, K.LS_LOSS] > 0.0:  # each entry's share (by its input, phase drops)
            lost += into * ef[mine, K.EF_LOSS] / mss
    arrivals, drops = collections.Counter(), collections.Counter()
    for fid, a, d in zip(flow_ids, got, lost, strict=True):
        arrivals[int(fid)] += a
        drops[int(fid)] += d
    return arrivals, drops


def summarize(name: str, arrivals, drops, min_packets: int) -> dict:
    total_a, total_d = sum(arrivals.values()), sum(drops.values())
    big = {f: drops[f] / a for f, a in arrivals.items() if a >= min_packets}
    frac = pd.Series(big, dtype=float)
    q = frac.quantile([0.0, 0.1, 0.5, 0.9, 1.0]).round(2).tolist() if len(frac) else []
    print(f"{name:6s} arrivals {total_a:9.0f}  drops {total_d:9.0f} "
          f"({100 * total_d / max(total_a, 1):.1f}%), {len(arrivals)} flows; "
          f"drop fraction over the {len(frac)} flows with >= {min_packets} arrivals: "
          f"min/p10/p50/p90/max {q}, std {frac.std():.3f}")  # fmt: skip
    return big


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", default="dc0/border->dc1/border#1")
    ap.add_argument("--from-ms", type=float, default=0.3)
    ap.add_argument("--to-ms", type=float, default=1.5)
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--min-packets", type=int, default=100)
    ap.add_argument(
        "--fluid",
        action="append",
        default=[],
        metavar="OVERRIDE",
        help="a config override of the fluid run (repeatable)",
    )
    args = ap.parse_args()
    print(f"== drops at {args.port}, {args.from_ms}-{args.to_ms} ms, scheme={args.scheme}")
    fractions = {}
    for name, counts in (("packet", packet_counts), ("fluid", fluid_counts)):
        fractions[name] = summarize(name, *counts(args), args.min_packets)
    both = sorted(set(fractions["packet"]) & set(fractions["fluid"]),
                  key=lambda f: -fractions["packet"][f])  # fmt: skip
    print("flow: packet / fluid drop fraction, by the packet engine's:")
    print(", ".join(f"{f}: {fractions['packet'][f]:.2f}/{fractions['fluid'][f]:.2f}" for f in both))


if __name__ == "__main__":
    main()
