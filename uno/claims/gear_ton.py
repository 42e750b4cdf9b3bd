"""Claims of "In-Band Network Telemetry-Based Congestion Control for Cross-Datacenter Networks"
(Gear; Han et al., IEEE/ACM Transactions on Networking) with an experiment here: the two-flow
coexistence of Fig. 9 (§IV-C1, ``experiment=gear_fig9``): one intra-DC and one cross-DC flow
from line rate on one 100 Gb/s bottleneck, the intra/cross throughput ratio over the run's
second half; and Fig. 14(b)'s ablation of the cross-DC logic on the same two flows (the paper
runs it in "the setup of §IV-A", which names no other topology).

The full form is the experiment's 2-s run; the reduced form stops at 1 s (the window is then
0.5-1 s: at a 50-ms cross-DC RTT that is still ten of its round trips).
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import steady_share_ratio

PAPER = "Gear (ToN)"

_FIG9 = "experiment=gear_fig9"
_REDUCED = (_FIG9, "engine.max_sim_time_ms=1000")


def _fig9(scheme: str, claim: str, expect: Expect, extra: tuple[str, ...] = (),
          name: str | None = None, where: str = "§IV-C1, Fig. 9") -> Claim:  # fmt: skip
    return Claim(
        id=f"gear.fig9.{name or scheme}_ratio",
        paper=PAPER,
        where=where,
        claim=claim,
        basis="paper",
        experiment="gear_fig9",
        measure=steady_share_ratio(scheme),
        measure_doc="intra-DC / cross-DC flow throughput over the run's second half",
        expect=expect,
        reduced={scheme: (*_REDUCED, f"scheme=gear_{scheme}", *extra)},
        full={scheme: (_FIG9, f"scheme=gear_{scheme}", *extra)},
    )


CLAIMS = (
    _fig9(
        "gear",
        "One intra-DC and one cross-DC flow from line rate share the bottleneck fairly under "
        "Gear: an intra/cross throughput ratio within [0.9, 1.1].",
        Expect("between", low=0.9, high=1.1),
    ),
    _fig9(
        "dctcp",
        "Under DCTCP (cross-DC additive increase min(500, CRTT/IRTT) MSS) the cross-DC flow is "
        "essentially starved: intra/cross above 1.1.",
        Expect("at_least", paper=1.1),
    ),
    _fig9(
        "timely",
        "Under TIMELY (high threshold 55 ms) the intra-DC flow is almost starved: intra/cross "
        "below 0.9.",
        Expect("at_most", paper=0.9),
    ),
    _fig9(
        "gemini",
        "Under GEMINI (F_min = 0.05) the cross-DC flow's throughput is about 1.3x the intra-DC "
        "flow's: intra/cross 1/1.3 = 0.77 (within 20%).",
        Expect("within", paper=round(1 / 1.3, 4), rel_tol=0.2),
    ),
    _fig9(
        "gear",
        "Without its cross-DC logic (cross-DC flows on HPCC's rule) Gear's intra/cross "
        "throughput ratio drops to 0.38, against 1.02 with it (within 20%).",
        Expect("within", paper=0.38, rel_tol=0.2),
        extra=("cc.gear.cross_logic=hpcc",),
        name="gear_without_cross_logic",
        where="§IV-C5, Fig. 14(b)",
    ),
)
