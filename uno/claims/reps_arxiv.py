"""Claims of "REPS: Recycling Entropies for Packet Spraying to Adaptively Explore Paths and
Mitigate Failures" (Bonato et al.) with an experiment here: the 4 MiB permutation on a 1,024-host
fat tree with SMaRTT and trimming for every balancer (§4, ``experiment=reps_permutation``): the
non-oversubscribed tree (Fig. 2), the 8:1 tree (Fig. 3), failed aggregation-core links (Fig. 4,
``experiment=reps_failures``) and Wait-to-Decrease off (Fig. 1).

The full form is the paper's scale: 1,024 flows of 4 MiB (about 1 M packets, 15-60 s a run). The
reduced form runs the same permutation on a k = 8 tree (128 hosts, the 8:1 tree as ToRs 4 down /
1 up and aggregation switches 4 down / 2 up, failures on the 4 links into the first aggregation
switch) with 1 MiB flows: a few seconds a run.
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import fct_ratio, rtt_quantile_ratio, unfinished_flows

PAPER = "REPS (arXiv)"

_PERM = ("experiment=reps_permutation",)
_OVERSUB = (*_PERM, "topo.tor_uplinks=2", "topo.agg_uplinks=4")
_FAILED = ("experiment=reps_failures",)
_SMALL = ("topo.k=8", "workload.size_bytes=1048576")
#: the reduced form of each full form above
_REDUCED = {
    _PERM: (*_PERM, *_SMALL),
    _OVERSUB: (*_PERM, *_SMALL, "topo.tor_uplinks=1", "topo.agg_uplinks=2"),
    _FAILED: (*_FAILED, *_SMALL),
}


def _runs(base: tuple[str, ...], *lbs: str) -> dict:
    """The claim's full and reduced runs: one per balancer, on ``base``."""
    return {
        "full": {lb: (*base, f"lb={lb}") for lb in lbs},
        "reduced": {lb: (*_REDUCED[base], f"lb={lb}") for lb in lbs},
    }


CLAIMS = (
    Claim(
        id="reps.fig2.reps_beats_spray",
        paper=PAPER,
        where="§4.2, Fig. 2(a)",
        claim="On the non-oversubscribed 1,024-host fat tree REPS completes the 4 MiB "
        "permutation about 10% sooner than oblivious packet spraying (both on SMaRTT with "
        "trimming).",
        basis="paper",
        experiment="reps_permutation",
        measure=fct_ratio("spray", "reps", "max"),
        measure_doc="the permutation's completion time (max FCT), spray / reps",
        expect=Expect("within", paper=1.1, rel_tol=0.05),
        **_runs(_PERM, "reps", "spray"),
    ),
    Claim(
        id="reps.fig3.reps_beats_spray_8to1",
        paper=PAPER,
        where="§4.2, Fig. 3(a)",
        claim="On the 8:1 oversubscribed tree REPS again completes the permutation about 10% "
        "sooner than oblivious packet spraying.",
        basis="paper",
        experiment="reps_permutation",
        measure=fct_ratio("spray", "reps", "max"),
        measure_doc="the permutation's completion time (max FCT) on the 8:1 tree, spray / reps",
        expect=Expect("within", paper=1.1, rel_tol=0.05),
        **_runs(_OVERSUB, "reps", "spray"),
    ),
    Claim(
        id="reps.fig3.reps_rtt_tail_below_spray_8to1",
        paper=PAPER,
        where="§4.2, Fig. 3(b)",
        claim="On the 8:1 tree REPS keeps packet RTTs closer to the target with lower "
        "variability than oblivious spraying: a lower 99th-percentile RTT.",
        basis="paper",
        experiment="reps_permutation",
        measure=rtt_quantile_ratio("spray", "reps", "p99"),
        measure_doc="99th-percentile per-packet RTT on the 8:1 tree, spray / reps",
        expect=Expect("at_least", paper=1.0),
        **_runs(_OVERSUB, "reps", "spray"),
    ),
    Claim(
        id="reps.fig3.ecmp_1_5x_spray_8to1",
        paper=PAPER,
        where="§4.2, Fig. 3(a)",
        claim="On the 8:1 tree per-flow ECMP takes about 1.5x as long as packet spraying and "
        "REPS to complete the permutation (flow collisions).",
        basis="paper",
        experiment="reps_permutation",
        measure=fct_ratio("ecmp", "spray", "max"),
        measure_doc="the permutation's completion time (max FCT) on the 8:1 tree, ecmp / spray",
        expect=Expect("within", paper=1.5, rel_tol=0.2),
        **_runs(_OVERSUB, "ecmp", "spray"),
    ),
    Claim(
        id="reps.fig4.reps_beats_spray_failures",
        paper=PAPER,
        where="§4.3, Fig. 4(b)",
        claim="With aggregation-core links failed REPS gains about 50% over packet spraying: "
        "it avoids the failed links, spraying keeps choosing them.",
        basis="paper",
        experiment="reps_permutation",
        measure=fct_ratio("spray", "reps", "max"),
        measure_doc="the permutation's completion time (max FCT) with 8 failed core-to-"
        "aggregation links, spray / reps",
        expect=Expect("within", paper=1.5, rel_tol=0.2),
        **_runs(_FAILED, "reps", "spray"),
    ),
    Claim(
        id="reps.fig4.ecmp_flows_never_finish",
        paper=PAPER,
        where="§4.3",
        claim="With failed links some ECMP flows never finish: they cannot avoid the failed "
        "links adaptively.",
        basis="paper",
        experiment="reps_permutation",
        measure=unfinished_flows("ecmp"),
        measure_doc="flows unfinished at the run's 50-ms end under ECMP, 8 failed links",
        expect=Expect("at_least", paper=1.0),
        **_runs(_FAILED, "ecmp"),
    ),
    Claim(
        id="reps.fig1.wtd_improves_fct",
        paper=PAPER,
        where="§3.0.1, Fig. 1",
        claim="Wait-to-Decrease significantly improves the FCT of a permutation on the "
        "1,024-node non-oversubscribed fat tree (REPS on SMaRTT).",
        basis="paper",
        experiment="reps_permutation",
        measure=fct_ratio("no_wtd", "wtd", "max"),
        measure_doc="the permutation's completion time (max FCT) under REPS, Wait-to-Decrease "
        "off / on",
        expect=Expect("at_least", paper=1.1),
        full={"wtd": (*_PERM, "lb=reps"), "no_wtd": (*_PERM, "lb=reps", "cc.smartt.wtd=false")},
        reduced={
            "wtd": (*_REDUCED[_PERM], "lb=reps"),
            "no_wtd": (*_REDUCED[_PERM], "lb=reps", "cc.smartt.wtd=false"),
        },  # fmt: skip
    ),
)
