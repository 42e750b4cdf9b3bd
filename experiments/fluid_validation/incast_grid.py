"""Every congestion control on the default incast at three flow sizes: a flow-level engine
against the packet engine, class by class.

Usage::

    python experiments/fluid_validation/incast_grid.py [--ccs dctcp,gemini,...]
        [--sizes 100000,1500000,20000000] [--engine fluid] [--override KEY=VALUE ...]

The default incast (4 intra-DC and 4 inter-DC senders into one receiver, ECMP) with every flow
of one size, ``cc=<law>`` for both classes. The flows send their first window whole, so from
1.5 MB on they overflow the receiver's port and the WAN links they share; what decides each
class's mean FCT (four flows) is which flows lose their window's tail and wait for the timer,
and which lose its middle and resend by fast retransmit. Printed per law and size: each class's
mean FCT in the packet run (µs), the engine's gap to it (%), and each engine's timeouts and
resent packets per class (packet / engine). About 1 min on a 2-core laptop-class machine.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import uno

CCS = ("dctcp", "mprdma", "gemini", "uno", "bbr", "timely", "mprdma_bbr", "powertcp", "hpcc",
       "dcqcn")  # fmt: skip
SIZES = (100_000, 1_500_000, 20_000_000)
QUIET = ["engine.progress=false", "engine.sample_interval_us=0", "lb=ecmp"]


def class_figures(result) -> dict:
    """Per class: (mean FCT µs, timeouts, resent packets)."""
    flows = result.flows
    if not flows["finish_ps"].notna().all():
        raise SystemExit(f"unfinished flows in {result.summary['run'].get('engine')} run")
    by = flows.groupby("cls")
    return {
        cls: (by["fct_ps"].mean()[cls] / 1e6, by["timeouts"].sum()[cls],
              by["retransmits"].sum()[cls])
        for cls in by.groups
    }  # fmt: skip


def row(cc: str, size: int, engine: str, overrides: list[str]) -> str:
    base = [f"cc={cc}", f"workload.size_bytes={size}", *QUIET, *overrides]
    packet = class_figures(uno.run(uno.compose([*base, "engine.kind=packet"])))
    other = class_figures(uno.run(uno.compose([*base, f"engine.kind={engine}"])))
    cells = []
    for cls in ("inter", "intra"):
        p, o = packet[cls], other[cls]
        cells.append(f"{cls} {p[0]:,.1f} us {100.0 * (o[0] / p[0] - 1.0):+.1f}% "
                     f"(timeouts {p[1]}/{o[1]}, resent {p[2]}/{o[2]})")  # fmt: skip
    return f"{cc:<10} {size:>10,} B  " + " | ".join(cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ccs", default=",".join(CCS))
    ap.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    ap.add_argument("--engine", default="fluid", choices=("fluid", "hybrid", "maxmin"))
    ap.add_argument("--override", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes: not a list of byte counts: {args.sizes!r}")
    print(f"incast grid, packet against {args.engine}: class mean FCT (packet), gap, "
          "timeouts and resent packets (packet / engine)")  # fmt: skip
    for cc, size in itertools.product(args.ccs.split(","), sizes):
        print(row(cc, size, args.engine, args.override), flush=True)


if __name__ == "__main__":
    sys.exit(main())
