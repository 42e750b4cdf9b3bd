"""Where the short flows of a scenario lose their data packets, port by port, in the packet
engine and in the hybrid that runs them as packets over a fluid background.

Usage::

    python experiments/fluid_validation/drops_by_port.py [--max-bytes 10000] [--cls intra]
        [--scheme uno_ecmp] [--top 12] [--override KEY=VALUE ...]

Runs ``compare.py``'s ``mixed40`` scenario (``fig10_load`` at 40% load, 5000 flows) in the
packet engine and in the hybrid with the flows of at most 100 kB as packets (as ``compare.py``
runs it), both on the Python data plane, and counts the data packets of the flows studied (class
``--cls``, at most ``--max-bytes``) that each port dropped. Prints, per engine, the flows'
timeouts and resent packets, the drops per port (the ``--top`` ports of either engine) and per
kind of port; for the packet run, by kind of port, the share of the data packets that find a
port's queue within 1% of its buffer that it drops, for the studied flows, the other intra-DC
and the other inter-DC flows; the studied flows' data packets, full-size and shorter, that reach
a port with less than two full packets' room free and the share of them it drops (packet run),
and their drops of each size and their ACKs' drops in both runs; for the hybrid, how often one
of the studied flows' packets reached a port whose fluid flows hold or send bytes, found the
buffer full with the fluid bytes (``uno.net.shared_link.fluid_fills_buffer``) and what share of
a packet's arrivals at a random phase the fluid model drops there (``squeezed_out``'s chance),
also by kind of port.

A diagnostic, not part of the engines: it wraps ``Port._overflow`` (every data and ACK drop of
either engine's ports), ``Port.receive`` (the packet run) and ``HybridPort.receive`` for the runs.
"""

from __future__ import annotations

import argparse
import collections
import re

from compare import HYBRID, SCENARIOS  # this folder's script: the scenarios it compares

import uno
from uno.core.packet import ACK, DATA
from uno.fluid import shared_ports
from uno.net import port as port_module
from uno.net.shared_link import fluid_fills_buffer, fluid_on_link

QUIET = ["engine.progress=false", "engine.sample_interval_us=0", "engine.dataplane=python"]
#: a queue this close to its buffer (share of it) counts as nearly full
NEARLY_FULL = 0.01
#: a port with less room than this many full data packets counts as full (the size split)
FULL_ROOM_PACKETS = 2


def size_class(size: int, full_bytes: int) -> str:
    """``full`` for a full-size data packet (``full_bytes`` on the wire), else ``shorter``."""
    return "full" if size >= full_bytes else "shorter"


def studied(flows, cls: str, max_bytes: int) -> set[int]:
    """The flow ids of class ``cls`` (``all``: every class) of at most ``max_bytes``."""
    keep = flows.size_bytes <= max_bytes
    if cls != "all":
        keep &= flows.cls == cls
    return set(flows.index[keep].tolist())


def level(port_name: str) -> str:
    """The kind of a port: its name without the numbers (``dc/tor->dc/agg``)."""
    return re.sub(r"\d+", "", port_name)


def counted_run(overrides: list[str], flow_ids: set[int] | None, args):
    """One run with every data drop of the studied flows counted by port (``flow_ids`` None:
    the flows are chosen from this run's table, all drops counted while it runs; the packet
    ports' data arrivals that find their queue within ``NEARLY_FULL`` of the buffer are counted
    too, by kind of port and flow, with how many of them it dropped). Returns (the run's
    result, the studied ids, drops by port name, the hybrid's shared-port counts, the nearly
    full arrivals and drops by (kind of port, flow), and by (flow, size class) every data drop
    (``dropped``; class ``ack``: their ACKs') and, in the packet run, the arrivals at a port
    with less than ``FULL_ROOM_PACKETS`` full packets' room free and how many of them it
    dropped))."""
    drops: collections.Counter = collections.Counter()
    sized: collections.Counter = collections.Counter()
    cfg = uno.compose([*SCENARIOS["mixed40"], f"scheme={args.scheme}", *QUIET, *overrides,
                       *args.override])  # fmt: skip
    full_bytes = cfg.transport.mtu_bytes + cfg.transport.header_bytes
    shared: collections.Counter = collections.Counter()
    near: collections.Counter = collections.Counter()
    overflow, receive = port_module.Port._overflow, shared_ports.HybridPort.receive
    port_receive = port_module.Port.receive

    def counted_port_receive(port, pkt):
        if pkt.kind != DATA or isinstance(port, shared_ports.HybridPort):
            return port_receive(port, pkt)
        port._settle(port._engine._now)  # (what receive does first)
        nearly_full = port.bytes > (1.0 - NEARLY_FULL) * port.buffer_bytes
        full = port.buffer_bytes - port.bytes < FULL_ROOM_PACKETS * full_bytes
        before = port.drops
        port_receive(port, pkt)
        if nearly_full:
            key = (level(port.name), pkt.flow_id)
            near[key + ("arrivals",)] += 1
            near[key + ("drops",)] += port.drops - before
        if full:
            key = (pkt.flow_id, size_class(pkt.size_bytes, full_bytes))
            sized[key + ("arrivals",)] += 1
            sized[key + ("drops",)] += port.drops - before

    def counted_overflow(port, pkt, now, outcome):
        if pkt.kind == DATA and (flow_ids is None or pkt.flow_id in flow_ids):
            drops[(port.name, pkt.flow_id)] += 1
            sized[(pkt.flow_id, size_class(pkt.size_bytes, full_bytes), "dropped")] += 1
        elif pkt.kind == ACK and (flow_ids is None or pkt.flow_id in flow_ids):
            sized[(pkt.flow_id, "ack", "dropped")] += 1
        return overflow(port, pkt, now, outcome)

    def counted_receive(port, pkt):
        link = port._link
        fluid_q = float(port._fluid_q[link])
        if (
            pkt.kind == DATA
            and not port._nic
            and (flow_ids is None or pkt.flow_id in flow_ids)
            and fluid_on_link(fluid_q, port._fluid_arr[link])
        ):
            shared["arrivals"] += 1
            if fluid_fills_buffer(port.bytes, fluid_q, pkt.size_bytes, port.buffer_bytes):
                shared["full"] += 1
                shared["loss_sum"] += port._packet_loss_at(link)
                shared[(level(port.name), "full")] += 1
                shared[(level(port.name), "loss_sum")] += port._packet_loss_at(link)
        return receive(port, pkt)

    port_module.Port._overflow = counted_overflow
    shared_ports.HybridPort.receive = counted_receive
    if flow_ids is None:
        port_module.Port.receive = counted_port_receive
    try:
        result = uno.run(cfg)
    finally:
        port_module.Port._overflow = overflow
        shared_ports.HybridPort.receive = receive
        port_module.Port.receive = port_receive
    ids = flow_ids if flow_ids is not None else studied(result.flows, args.cls, args.max_bytes)
    by_port = collections.Counter()
    for (name, flow), n in drops.items():
        if flow in ids:
            by_port[name] += n
    return result, ids, by_port, shared, near, sized


def by_size(sized, ids) -> collections.Counter:
    """``sized`` (:func:`counted_run`) summed over the flows ``ids``: (size class, what)."""
    total: collections.Counter = collections.Counter()
    for (flow, cls, what), count in sized.items():
        if flow in ids:
            total[(cls, what)] += count
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-bytes", type=int, default=10_000)
    ap.add_argument("--cls", default="intra", choices=("intra", "inter", "all"))
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                    help="a config override of both runs (repeatable)")  # fmt: skip
    args = ap.parse_args()
    print(f"== {args.cls} flows of at most {args.max_bytes:,} B on mixed40, scheme={args.scheme}")
    hybrid = ["engine.kind=hybrid", *HYBRID["mixed40"]]
    result_p, ids, packet_drops, _, near, sized_p = counted_run(["engine.kind=packet"], None, args)
    result_h, _, hybrid_drops, shared, _, sized_h = counted_run(hybrid, ids, args)
    runs = {"packet": (packet_drops, result_p), "hybrid": (hybrid_drops, result_h)}
    for name, (by_port, result) in runs.items():
        flows = result.flows.loc[sorted(ids)]
        print(f"{name:6s}: {len(flows)} flows, {int(flows.timeouts.sum())} timeouts in "
              f"{int((flows.timeouts > 0).sum())} flows, {int(flows.retransmits.sum())} resent, "
              f"{sum(by_port.values())} data packets dropped")  # fmt: skip
    ports = [p for p, _ in (packet_drops + hybrid_drops).most_common(args.top)]
    print("drops by port (packet / hybrid): " + ", ".join(
        f"{p} {packet_drops[p]} / {hybrid_drops[p]}" for p in ports))  # fmt: skip
    levels = collections.defaultdict(lambda: [0, 0])
    for i, by_port in enumerate((packet_drops, hybrid_drops)):
        for p, count in by_port.items():
            levels[level(p)][i] += count
    ranked = sorted(levels.items(), key=lambda x: -x[1][0])
    print("by kind of port (packet / hybrid): " + ", ".join(
        f"{kind} {a} / {b}" for kind, (a, b) in ranked))  # fmt: skip
    print(
        f"packet run, data packets that find a port within {NEARLY_FULL:.0%} of its buffer: "
        "the share dropped (arrivals)"
    )
    cls = result_p.flows["cls"]
    groups: collections.Counter = collections.Counter()  # (kind, group, what): packets
    for (kind, flow, what), count in near.items():
        group = "studied" if flow in ids else f"other {cls[flow]}-DC"
        groups[(kind, group, what)] += count
    for kind, _ in ranked:
        parts = [f"{group} {groups[(kind, group, 'drops')] / got:.2f} ({got})"
                 for group in ("studied", "other intra-DC", "other inter-DC")
                 if (got := groups[(kind, group, "arrivals")])]  # fmt: skip
        print(f"  {kind}: " + ", ".join(parts))
    sizes_p, sizes_h = by_size(sized_p, ids), by_size(sized_h, ids)
    print(f"packet run, their data packets that reach a port with less than {FULL_ROOM_PACKETS} "
          "full packets' room free, the share dropped (arrivals): " + ", ".join(
              f"{cls} {sizes_p[(cls, 'drops')] / got:.2f} ({got})" for cls in ("full", "shorter")
              if (got := sizes_p[(cls, "arrivals")])))  # fmt: skip
    print("their data packets dropped by size (packet / hybrid): " + ", ".join(
        f"{cls} {sizes_p[(cls, 'dropped')]} / {sizes_h[(cls, 'dropped')]}"
        for cls in ("full", "shorter")))  # fmt: skip
    print(f"their ACKs dropped (packet / hybrid): {sizes_p[('ack', 'dropped')]} / "
          f"{sizes_h[('ack', 'dropped')]}")  # fmt: skip
    n, full = shared["arrivals"], shared["full"]
    mean_loss = shared["loss_sum"] / full if full else 0.0
    print(f"hybrid: {n} of their packets reached a port with fluid bytes; {full} found the "
          f"buffer full with them, where the fluid model drops {mean_loss:.2f} of a packet's "
          "arrivals at a random phase (mean)")  # fmt: skip
    kinds = sorted({key[0] for key in shared if isinstance(key, tuple)})
    means = {kind: shared[(kind, "loss_sum")] / shared[(kind, "full")] for kind in kinds}
    print("  by kind of port, found full (mean loss): " + ", ".join(
        f"{kind} {shared[(kind, 'full')]} ({means[kind]:.2f})" for kind in kinds))  # fmt: skip


if __name__ == "__main__":
    main()
