"""How often a full drop-tail packet port refuses an ACK, against how often it refuses data, and
how that depends on the buffer's remainder after whole data packets.

Usage::

    python experiments/fluid_validation/ack_room.py [--buffers 1048320,1049152,...]
        [--short-flows 0] [--seed 1] [--override KEY=VALUE ...]

A port refuses a packet only when fewer bytes than its size are free. While every data packet
it holds is full-size, the room left once no data packet fits is the buffer's remainder after
whole data packets less the ACKs it holds: ACKs get in until that room is gone, and then every
ACK is refused until one of them leaves (a departure's room goes to the next arrival, an ACK or
a data packet). Shorter data packets move that room. The scenario: a dumbbell whose
bottleneck carries the data of three 100-MB TIMELY flows into one receiver and the ACKs of a
100-MB flow the other way (drop-tail, no ECN: the flows overflow the buffer), run once per
buffer size (by default the remainders 0, 832, 1,664, 2,496 and 3,328 B, room for 0-52 ACKs,
and the default 1 MiB's 256 B); ``--short-flows N`` adds N flows of 200-4,000 B into the same receiver in the
first 1.5 ms (drawn from ``--seed``), whose packets are shorter than a full one.

Printed for each port that dropped: the data packets and ACKs that arrived with less than a full
data packet's room free, how many of each it dropped, the ACKs' share against the data's (the
fluid engine's ``engine.fluid_ack_losses`` rule takes an ACK's size over a full packet's, the
last column), the buffer's remainder and the ACKs that fit it, and the median number of ACKs
queued when such an ACK arrived. Runs the packet engine on its Python data plane, whose ports
it wraps (``Port.receive``, ``Port._overflow``): a diagnostic, not part of the engine.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics

import uno
from uno.core.packet import DATA
from uno.net import port as port_module

QUIET = ["engine.progress=false", "engine.sample_interval_us=0", "engine.dataplane=python"]
BASE = ["topo=dumbbell", "topo.n_senders=4", "topo.n_receivers=2", "cc=timely",
        "switch=droptail", "workload=flows"]  # fmt: skip
LONG_FLOWS = ["{src:0,dst:4,size_bytes:100000000}", "{src:1,dst:4,size_bytes:100000000}",
              "{src:2,dst:4,size_bytes:100000000}", "{src:5,dst:3,size_bytes:100000000}"]  # fmt: skip


def flows_override(n_short: int, seed: int) -> str:
    """The ``workload.flows`` override: the four long flows and ``n_short`` short ones."""
    draw = random.Random(seed)
    short = [
        f"{{src:{draw.choice((0, 1, 2))},dst:4,size_bytes:{draw.randint(200, 4000)},"
        f"start_us:{draw.uniform(0.0, 1500.0):.2f}}}"
        for _ in range(n_short)
    ]
    return "workload.flows=[" + ",".join(LONG_FLOWS + short) + "]"


def counted_run(overrides: list[str]) -> tuple[dict, int, int]:
    """One packet run with every port's arrivals and drops counted by kind. Returns (counters by
    port name, a full data packet's bytes on the wire, an ACK's)."""
    cfg = uno.compose([*overrides, *QUIET])
    full_bytes = cfg.transport.mtu_bytes + cfg.transport.header_bytes
    counts: dict = collections.defaultdict(collections.Counter)
    queued: dict = collections.defaultdict(list)
    port_class = port_module.Port
    receive, overflow = port_class.receive, port_class._overflow
    own_overflow = "_overflow" in vars(port_class)  # (else inherited from PortBase)

    def counted_receive(port, pkt):
        if port.control_lane is None:
            port._settle(port._engine._now)  # (what receive does first)
            if port.buffer_bytes - port.bytes < full_bytes:
                kind = "data" if pkt.kind == DATA else "ack"
                counts[port.name][kind + "_full"] += 1
                if kind == "ack":
                    held = port._fifo[port._qhead :]
                    queued[port.name].append(sum(1 for p in held if p.kind != DATA))
        return receive(port, pkt)

    def counted_overflow(port, pkt, now, outcome):
        counts[port.name]["data_dropped" if pkt.kind == DATA else "ack_dropped"] += 1
        counts[port.name]["buffer"] = port.buffer_bytes
        return overflow(port, pkt, now, outcome)

    port_class.receive = counted_receive
    port_class._overflow = counted_overflow
    try:
        uno.run(cfg)
    finally:
        port_class.receive = receive
        if own_overflow:
            port_class._overflow = overflow
        else:
            del port_class._overflow
    for name, acks in queued.items():
        counts[name]["acks_queued_median"] = statistics.median(acks)
    return counts, full_bytes, cfg.transport.ack_bytes


def report(counts: dict, full_bytes: int, ack_bytes: int) -> None:
    """One line per port that dropped a packet."""
    print(f"  {'port':<24} {'data full':>9} {'dropped':>8} {'ACKs full':>9} {'dropped':>8} "
          f"{'ACK / data share':>16} {'remainder B':>11} {'ACKs fit':>8} {'ACKs held':>9} "
          f"{'size rule':>9}")  # fmt: skip
    for name, c in sorted(counts.items()):
        if not (c["data_dropped"] or c["ack_dropped"]):
            continue
        data_share = c["data_dropped"] / max(c["data_full"], 1)
        ack_share = c["ack_dropped"] / max(c["ack_full"], 1)
        remainder = c["buffer"] % full_bytes
        ratio = ack_share / data_share if data_share > 0 else float("nan")
        print(f"  {name:<24} {c['data_full']:>9,} {c['data_dropped']:>8,} {c['ack_full']:>9,} "
              f"{c['ack_dropped']:>8,} {ratio:>16.3f} {remainder:>11,} "
              f"{remainder // ack_bytes:>8} {c['acks_queued_median']:>9} "
              f"{ack_bytes / full_bytes:>9.3f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buffers", default="1048320,1049152,1049984,1050816,1051648,1048576",
                    help="switch buffers to run, bytes, comma-separated")  # fmt: skip
    ap.add_argument("--short-flows", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    for buffer_bytes in (int(b) for b in args.buffers.split(",")):
        overrides = [*BASE, f"topo.buffer_bytes={buffer_bytes}",
                     flows_override(args.short_flows, args.seed), *args.override]  # fmt: skip
        print(f"buffer {buffer_bytes:,} B, {args.short_flows} short flows:")
        report(*counted_run(overrides))


if __name__ == "__main__":
    main()
