"""The fluid engine against the packet engine beyond compare.py's three scenarios: the artifact's
traffic at other loads, inter/intra RTT ratios and buffers (the Uno paper's Figs. 10-12 setups),
per class the mean and p99 FCT differences in %. Each case runs in both engines with the same
config and seed; the packet engine on its default (compiled) data plane.

    python experiments/fluid_validation/sweep.py [--cases load0.2,ratio8,...] [--seed N]
        [--fluid OVERRIDE ...]   # e.g. --fluid engine.fluid_ack_bytes=false

About 1 minute for the default cases on a 2-core laptop-class machine (`buffers_uno`, coded
flows, alone takes another minute; it is not in the default list).
"""

from __future__ import annotations

import argparse

import uno

BASE = ["workload=mixed_artifact", "engine.progress=false", "engine.sample_interval_us=0"]
CASES = {
    "load0.2": ["experiment=fig10_load", "scheme=uno_ecmp", "workload.load=0.2"],
    "load0.6": ["experiment=fig10_load", "scheme=uno_ecmp", "workload.load=0.6"],
    "load0.8": ["experiment=fig10_load", "scheme=uno_ecmp", "workload.load=0.8"],
    "ratio8": ["experiment=fig11_rtt_ratio", "scheme=uno_ecmp", "topo.inter_rtt_ratio=8"],
    "ratio32": ["experiment=fig11_rtt_ratio", "scheme=uno_ecmp", "topo.inter_rtt_ratio=32"],
    "ratio64": ["experiment=fig11_rtt_ratio", "scheme=uno_ecmp", "topo.inter_rtt_ratio=64"],
    "buffers": ["experiment=fig12_buffers", "scheme=uno_ecmp"],
    "buffers_uno": ["experiment=fig12_buffers", "scheme=uno"],
}
DEFAULT_CASES = tuple(c for c in CASES if c != "buffers_uno")


def class_fct_us(overrides: list[str]) -> dict[str, tuple[float, float]]:
    """Per class: (mean, p99) FCT in µs."""
    flows = uno.run(uno.compose(overrides)).flows
    return {
        cls: (g["fct_ps"].mean() / 1e6, g["fct_ps"].quantile(0.99) / 1e6)
        for cls, g in flows.groupby("cls")
    }


def case_names(ap: argparse.ArgumentParser, text: str, cases) -> list[str]:
    """The comma-separated names of ``--cases``, each one of ``cases``; an unknown one stops
    the script, naming it."""
    names = text.split(",")
    unknown = set(names) - set(cases)
    if unknown:
        ap.error(f"--cases: unknown {sorted(unknown)}; known: {', '.join(cases)}")
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES),
                    help=f"comma-separated, of {', '.join(CASES)}")  # fmt: skip
    ap.add_argument("--seed", type=int, default=None, help="the run seed (default: the config's)")
    ap.add_argument("--fluid", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of the fluid runs only (repeatable)")  # fmt: skip
    args = ap.parse_args()
    names = case_names(ap, args.cases, CASES)
    seed = [] if args.seed is None else [f"seed={args.seed}"]
    print("fluid against packet, %: mean / p99 FCT per class")
    for name in names:
        runs = {}
        for engine, extra in (("packet", []), ("fluid", args.fluid)):
            runs[engine] = class_fct_us(
                [*BASE, *CASES[name], *seed, f"engine.kind={engine}", *extra]
            )
        cells = []
        for cls in sorted(runs["packet"]):
            (pm, pp), (fm, fp) = runs["packet"][cls], runs["fluid"][cls]
            cells.append(f"{cls} {100 * (fm / pm - 1):+.1f} / {100 * (fp / pp - 1):+.1f}")
        print(f"{name:12s} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
