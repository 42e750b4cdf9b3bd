"""How one overflowing link's drops fall on its flows, in the packet and the fluid engine, and
how often full ports lock flows out.

Usage::

    python experiments/fluid_validation/loss_spread.py [--port "dc0/border->dc1/border#1"]
        [--from-ms 0.3] [--to-ms 1.5] [--scheme uno_ecmp] [--min-packets 100] [--fluid OVERRIDE]
        [--scenario mixed40_paper] [--override KEY=VALUE] [--flows 152,135 --window-us 100]
        [--ports REGEX --window-us 50 --min-window-packets 20 --lockout-share 0.95]

Runs the ``mixed40`` scenario of ``compare.py`` (``fig10_load`` at 40% load, 5000 flows; or
``--scenario mixed40_paper``, the paper's traffic) in both engines up to ``--to-ms`` and counts,
per flow, the data packets that reached ``--port`` between ``--from-ms`` and ``--to-ms`` and
those it dropped. Prints the link's totals and, over the flows with at least ``--min-packets``
arrivals, the spread of their drop fractions; with ``--flows``, those flows' arrivals and drop
fractions window by window (``--window-us``), which shows whose packets a full drop-tail port
refuses while its inputs keep their phases (:mod:`uno.fluid.phases`) and when that changes.

It is a diagnostic, not part of the engines: it wraps ``Port.receive`` of the packet engine's
lazy port model on the Python data plane (``engine.port_model=lazy``, ``engine.dataplane=python``)
for the run, and steps the fluid engine one step at a time, reading each route entry's arrivals
(``EF_IN``) and the share of them the link dropped (``EF_LOSS``: the link's drop fraction, or
with ``engine.fluid_phase_drops`` its input's share) after the step (the fluid engine's own,
per-flow losses are whole packets drawn around these means). ``--fluid OVERRIDE`` adds an
override to the fluid run (e.g. ``engine.fluid_phase_drops=false`` or ``engine=fluid_fast``),
``--override`` one to both runs (e.g. ``workload.n_flows=2000``).

With ``--ports REGEX`` it counts at every port whose name matches, in windows of
``--window-us``, and prints per engine how often a flow is locked out at a port: the windows in
which it brings at least ``--min-window-packets`` data packets to the port and loses at least
``--lockout-share`` of them, and the runs of such windows back to back (their lengths in us, and
those that began within ``--newcomer-us`` of the flow's first such window at the port).
"""

from __future__ import annotations

import argparse
import collections
import re

import numpy as np
import pandas as pd
from compare import SCENARIOS  # this folder's script: the scenarios it compares

import uno
from uno.api import to_run_config

QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]


def scenario(args) -> list[str]:
    """The overrides of both runs: the scenario's, the scheme, ``--override``."""
    chosen = [s for s in SCENARIOS[args.scenario] if not s.startswith("scheme=")]
    return [*chosen, *QUIET, f"scheme={args.scheme}", *args.override]


def window_ps(args) -> float:
    """The span each count covers, ps: ``--window-us``, or the whole of ``--from-ms`` to
    ``--to-ms``."""
    if args.window_us > 0.0:
        return args.window_us * 1e6
    return (args.to_ms - args.from_ms) * 1e9


def port_filter(args):
    """Whether a port is counted: its name matches ``--ports`` (a regular expression), or,
    without it, is ``--port``; and the option as asked, for a refusal."""
    ports = getattr(args, "ports", "")
    if ports:
        pattern = re.compile(ports)
        return (lambda name: pattern.search(name) is not None), f"--ports {ports!r}"
    return (lambda name: name == args.port), f"--port {args.port!r}"


def one_port(counts: collections.Counter) -> collections.Counter:
    """Counts keyed (port, flow id, window) summed over the ports: keyed (flow id, window)."""
    out: collections.Counter = collections.Counter()
    for (_, fid, w), n in counts.items():
        out[(fid, w)] += n
    return out


def packet_counts(args) -> tuple[collections.Counter, collections.Counter]:
    """Per (flow id, window): data packets that reached ``args.port``, and those dropped."""
    arrivals, drops = packet_port_counts(args)
    return one_port(arrivals), one_port(drops)


def packet_port_counts(args) -> tuple[collections.Counter, collections.Counter]:
    """Per (port, flow id, window) at the ports counted (:func:`port_filter`): data packets
    that reached the port, and those it dropped."""
    from uno.core.packet import DATA
    from uno.net import port as port_module

    t0, t1 = int(args.from_ms * 1e9), int(args.to_ms * 1e9)
    span = window_ps(args)
    counted, _ = port_filter(args)
    chosen: dict[str, bool] = {}
    arrivals, drops = collections.Counter(), collections.Counter()
    original = port_module.Port.receive

    def receive(port, pkt):
        now = port._engine._now
        name = port.name
        if name not in chosen:
            chosen[name] = counted(name)
        if pkt.kind != DATA or not chosen[name] or not t0 <= now < t1:
            return original(port, pkt)
        before = port.drops
        original(port, pkt)
        key = (name, pkt.flow_id, int((now - t0) // span))
        arrivals[key] += 1
        drops[key] += port.drops - before

    port_module.Port.receive = receive
    try:
        cfg = uno.compose([*scenario(args), "engine.kind=packet", "engine.port_model=lazy",
                           "engine.dataplane=python", f"engine.max_sim_time_ms={args.to_ms}"])  # fmt: skip
        uno.run(cfg)
    finally:
        port_module.Port.receive = original
    return arrivals, drops


def fluid_counts(args) -> tuple[collections.Counter, collections.Counter]:
    """The fluid engine's arrivals and drops at ``args.port`` per (flow id, window) (packets,
    fractional)."""
    _, arrivals, drops = fluid_counted(args)
    return arrivals, drops


def fluid_counted(args):
    """:func:`fluid_counts` and the run's result (:meth:`FluidSimulation.run`)."""
    result, arrivals, drops = fluid_port_counted(args)
    return result, one_port(arrivals), one_port(drops)


def fluid_port_counted(args):
    """The fluid run's result, and its arrivals and drops (packets, fractional) per (port,
    flow id, window) at the ports counted (:func:`port_filter`)."""
    from uno.build import build_simulation
    from uno.fluid import kernels as K

    cfg = to_run_config(uno.compose([*scenario(args), "engine.kind=fluid", *args.fluid,
                                     f"engine.max_sim_time_ms={args.to_ms}"]))  # fmt: skip
    sim = build_simulation(cfg)
    counted, asked = port_filter(args)
    links = [i for i, name in enumerate(sim.port_names) if counted(name)]
    if not links:
        raise SystemExit(f"{asked}: no such link in this scenario")
    ei, ef = sim.hops[2], sim.hops[3]
    n_entries = int(sim.rt_ptr[-1])  # route entries (UnoLB subflow hops follow; not counted)
    mine = np.nonzero(np.isin(ei[:n_entries, K.EI_LINK], links))[0]
    if len(mine) == 0:
        raise SystemExit(f"{asked}: no flow's route crosses it")
    flow_ids = np.array([p.spec.flow_id for p in sim.flows])[ei[mine, K.EI_FLOW]]
    entry_links = ei[mine, K.EI_LINK]
    group = ei[mine, K.EI_GSTART]
    weight = ef[mine, K.EF_W]
    mss = sim.scenario.data_bytes
    t0, span = args.from_ms * 1e9, window_ps(args)
    got: dict[int, np.ndarray] = {}  # window: arrivals per entry of ``mine``
    lost: dict[int, np.ndarray] = {}
    advance = sim.advance

    def one_step_at_a_time(k_start: int, k_stop: int) -> int:
        """The run loop's steps, one kernel call each, counted after each (a step's bytes in
        the window of its start; the step's size is the engine's at the time)."""
        k = k_start
        while k < k_stop:
            ef[:n_entries, K.EF_IN] = 0.0  # entries not walked this step keep no stale arrivals
            reached = advance(k, k + 1)
            if reached == k:
                return k
            start_ps = k * sim.dt_ps
            k = reached
            if start_ps < t0 or start_ps >= args.to_ms * 1e9:
                continue
            w = int((start_ps - t0) // span)
            into = np.where(weight < 1.0, ef[group, K.EF_IN] * weight, ef[mine, K.EF_IN])
            got[w] = got.get(w, 0.0) + into / mss
            # each entry's share where its link dropped (by its input, with phase drops)
            dropping = sim.ls[entry_links, K.LS_LOSS] > 0.0
            if dropping.any():
                share = np.where(dropping, ef[mine, K.EF_LOSS], 0.0)
                lost[w] = lost.get(w, 0.0) + into * share / mss
        return k

    sim.advance = one_step_at_a_time
    result = sim.run()
    names = [sim.port_names[link] for link in entry_links]
    arrivals, drops = collections.Counter(), collections.Counter()
    for w, per_entry in got.items():
        dropped = lost.get(w, np.zeros(len(mine)))
        for name, fid, a, d in zip(names, flow_ids, per_entry, dropped, strict=True):
            if a > 0.0:
                arrivals[(name, int(fid), w)] += a
                drops[(name, int(fid), w)] += d
    return result, arrivals, drops


def lockout_runs(arrivals, drops, min_packets: float, share: float):
    """Over the (port, flow) pairs of counts keyed (port, flow id, window): the windows in
    which the flow brought at least ``min_packets`` data packets to the port, those in which
    it lost at least ``share`` of them, and of the runs of such lock-outs back to back their
    lengths and where each began, in windows after the pair's first such sending window (0:
    the flow was locked out as it came)."""
    by_pair: dict[tuple, dict[int, float]] = collections.defaultdict(dict)
    for (port, fid, w), a in arrivals.items():
        if a >= min_packets:
            by_pair[(port, fid)][w] = drops.get((port, fid, w), 0.0) / a
    sending = locked = 0
    lengths, starts = [], []
    for windows_lost in by_pair.values():
        sending += len(windows_lost)
        first = min(windows_lost)
        run = 0
        for w in range(first, max(windows_lost) + 2):
            if windows_lost.get(w, 0.0) >= share:
                if run == 0:
                    starts.append(w - first)
                locked += 1
                run += 1
            elif run:
                lengths.append(run)
                run = 0
    return sending, locked, np.array(lengths, dtype=int), np.array(starts, dtype=int)


def print_lockouts(name: str, arrivals, drops, args) -> None:
    """:func:`lockout_runs` of one engine's counts, the run lengths in us, and the runs that
    began within ``--newcomer-us`` of the flow's first window at the port."""
    sending, locked, runs, starts = lockout_runs(arrivals, drops, args.min_window_packets,
                                                 args.lockout_share)  # fmt: skip
    total_a, total_d = sum(arrivals.values()), sum(drops.values())
    us = runs * args.window_us
    spread = "none"
    if len(us):
        new = starts * args.window_us <= args.newcomer_us
        spread = (f"mean {us.mean():.0f}, p50 {np.median(us):.0f}, p90 "
                  f"{np.percentile(us, 90):.0f}, max {us.max():.0f} us; "
                  + ", ".join(f">= {m} us: {int(np.sum(us >= m))}" for m in (200, 400, 800))
                  + f"; begun within {args.newcomer_us:g} us of the flow's first window there: "
                  f"{int(new.sum())} runs, {100 * runs[new].sum() / runs.sum():.1f}% of the "
                  f"locked windows, {int(np.sum(us[new] >= 200))} of >= 200 us")  # fmt: skip
    print(f"{name:6s} arrivals {total_a:9.0f}  drops {total_d:9.0f} "
          f"({100 * total_d / max(total_a, 1):.1f}%); flow-windows sending {sending}, locked out "
          f"{locked} ({100 * locked / max(sending, 1):.1f}%); {len(us)} runs: {spread}")  # fmt: skip


def per_flow(counts) -> collections.Counter:
    """Counts keyed (flow id, window), summed over the windows."""
    total: collections.Counter = collections.Counter()
    for (fid, _), n in counts.items():
        total[fid] += n
    return total


def summarize(name: str, arrivals, drops, min_packets: int) -> dict:
    arrivals, drops = per_flow(arrivals), per_flow(drops)
    total_a, total_d = sum(arrivals.values()), sum(drops.values())
    big = {f: drops[f] / a for f, a in arrivals.items() if a >= min_packets}
    frac = pd.Series(big, dtype=float)
    q = frac.quantile([0.0, 0.1, 0.5, 0.9, 1.0]).round(2).tolist() if len(frac) else []
    print(f"{name:6s} arrivals {total_a:9.0f}  drops {total_d:9.0f} "
          f"({100 * total_d / max(total_a, 1):.1f}%), {len(arrivals)} flows; "
          f"drop fraction over the {len(frac)} flows with >= {min_packets} arrivals: "
          f"min/p10/p50/p90/max {q}, std {frac.std():.3f}")  # fmt: skip
    return big


def windows(counts: dict, flows: list[int], args) -> None:
    """``--flows``' arrivals and drop fractions window by window, packet | fluid."""
    span_us = window_ps(args) / 1e6
    n_windows = 1 + max((w for (_, w) in counts["packet"][0]), default=0)
    print(f"window (us from {args.from_ms} ms): per flow, arrivals and drop fraction, "
          "packet | fluid")  # fmt: skip
    for w in range(n_windows):
        cells = []
        for fid in flows:
            parts = []
            for name in ("packet", "fluid"):
                arrivals, drops = counts[name]
                got = arrivals.get((fid, w), 0.0)
                share = drops.get((fid, w), 0.0) / got if got > 0.0 else 0.0
                parts.append(f"{got:4.0f} {share:4.2f}")
            cells.append(f"{fid}: " + " | ".join(parts))
        print(f"{w * span_us:6.0f}  " + "    ".join(cells))


def lockouts(args) -> None:
    """``--ports``: the lock-outs at the matching ports, per engine."""
    if args.window_us <= 0.0:
        raise SystemExit("--window-us: lock-outs are counted in windows; give a positive length")
    print(f"== lock-outs at ports matching {args.ports!r}, {args.from_ms}-{args.to_ms} ms, "
          f"windows of {args.window_us:g} us, {args.scenario}, scheme={args.scheme}")  # fmt: skip
    print_lockouts("packet", *packet_port_counts(args), args)
    print_lockouts("fluid", *fluid_port_counted(args)[1:], args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", default="dc0/border->dc1/border#1")
    ap.add_argument("--from-ms", type=float, default=0.3)
    ap.add_argument("--to-ms", type=float, default=1.5)
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--scenario", default="mixed40", choices=("mixed40", "mixed40_paper"))
    ap.add_argument("--min-packets", type=int, default=100)
    ap.add_argument("--flows", default="", help="flow ids to follow window by window (comma list)")
    ap.add_argument("--window-us", type=float, default=100.0)
    ap.add_argument(
        "--ports",
        default="",
        metavar="REGEX",
        help="lock-outs at every port whose name matches (see the docstring)",
    )
    ap.add_argument(
        "--min-window-packets",
        type=float,
        default=20.0,
        help="--ports: packets a flow brings to a port in a window to count it",
    )
    ap.add_argument(
        "--newcomer-us",
        type=float,
        default=200.0,
        help="--ports: a run begun this soon after the flow came counts apart",
    )
    ap.add_argument("--lockout-share", type=float, default=0.95,
                    help="--ports: the share of them lost that makes a window a lock-out")  # fmt: skip
    ap.add_argument(
        "--fluid",
        action="append",
        default=[],
        metavar="OVERRIDE",
        help="a config override of the fluid run (repeatable)",
    )
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override of both runs (repeatable)")  # fmt: skip
    args = ap.parse_args()
    if args.ports:
        lockouts(args)
        return
    flows = [int(f) for f in args.flows.split(",") if f.strip()]
    if not flows:
        args.window_us = 0.0  # (one window: the whole span)
    print(f"== drops at {args.port}, {args.from_ms}-{args.to_ms} ms, {args.scenario}, "
          f"scheme={args.scheme}")  # fmt: skip
    fractions, counts = {}, {}
    for name, count in (("packet", packet_counts), ("fluid", fluid_counts)):
        counts[name] = count(args)
        fractions[name] = summarize(name, *counts[name], args.min_packets)
    both = sorted(set(fractions["packet"]) & set(fractions["fluid"]),
                  key=lambda f: -fractions["packet"][f])  # fmt: skip
    print("flow: packet / fluid drop fraction, by the packet engine's:")
    print(", ".join(f"{f}: {fractions['packet'][f]:.2f}/{fractions['fluid'][f]:.2f}" for f in both))
    if flows:
        windows(counts, flows, args)


if __name__ == "__main__":
    main()
