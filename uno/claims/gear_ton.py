"""Claims of "In-Band Network Telemetry-Based Congestion Control for Cross-Datacenter Networks"
(Gear; Han et al., IEEE/ACM Transactions on Networking) with an experiment here: the two-flow
coexistence of Fig. 9 (§IV-C1, ``experiment=gear_fig9``): one intra-DC and one cross-DC flow
from line rate on one 100 Gb/s bottleneck, the intra/cross throughput ratio over the run's
second half; Fig. 12's lower initial rates (§IV-C3) and Fig. 14(b)'s ablation of the cross-DC
logic on the same two flows (the paper runs it in "the setup of §IV-A", which names no other
topology).

The full form is the experiment's 2-s run; the reduced form stops at 1 s (the window is then
0.5-1 s: at a 50-ms cross-DC RTT that is still ten of its round trips).

Table I, Fig. 8 and Fig. 14(a) (``experiment=gear_fig8``): realistic traffic on Gear's topology,
the PFC pause time per scheme and the FCT slowdown of intra-DC flows; the full form generates
arrivals for 20 ms, the reduced form for 5 ms.

Figs. 6-7 (``experiment=gear_fig6``): the normalised throughput ratio under realistic traffic, in
the full form only (the arrivals must outlast a 50-ms cross-DC round trip: 100 ms of them take
minutes per run).

Figs. 10-11 (``experiment=gear_fig10``, ``gear_fig11``): flows joining and leaving the bottleneck
at set times (1 s apart), in the full form only (4 s and 7 s runs).

Fig. 13 (``experiment=gear_fig13``): Fig. 9's two flows among background traffic with INT records
from every hop or only the longest queue's; Fig. 17 (``experiment=gear_fig17``): INT on the ToR
switches only, the bottleneck moving to the core's WAN port at 2 s. Full form only (1-s runs
with 56,000 background flows; 4-s runs).

Annulus, a baseline of Table I and Figs. 6, 8, 9 and 10, is ``scheme=gear_annulus``.
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import (
    cross_share,
    max_of,
    min_of,
    normalised_throughput,
    pfc_pause_ratio,
    pfc_pause_us,
    share_deviation,
    slowdown_ratio,
    steady_share_ratio,
)

PAPER = "Gear (ToN)"

_FIG9 = "experiment=gear_fig9"
_REDUCED = (_FIG9, "engine.max_sim_time_ms=1000")


def _fig9(scheme: str, claim: str, expect: Expect, extra: tuple[str, ...] = (),
          name: str | None = None, where: str = "§IV-C1, Fig. 9", fig: str = "fig9") -> Claim:  # fmt: skip
    return Claim(
        id=f"gear.{fig}.{name or scheme}_ratio",
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


_FIG8 = ("experiment=gear_fig8",)
_FIG8_REDUCED = (*_FIG8, "workload.duration_us=5000")
_FIG8_SCHEMES = ("gear", "hpcc", "dctcp", "gemini")


def _fig8_runs(schemes: tuple[str, ...], extra: tuple[str, ...] = (), suffix: str = ""):
    return {
        "reduced": {f"{s}{suffix}": (*_FIG8_REDUCED, f"scheme=gear_{s}", *extra) for s in schemes},
        "full": {f"{s}{suffix}": (*_FIG8, f"scheme=gear_{s}", *extra) for s in schemes},
    }


def _table1_fig8() -> Claim:
    runs = _fig8_runs(_FIG8_SCHEMES)
    return Claim(
        id="gear.table1.pause_vs_gear",
        paper=PAPER,
        where="§IV-B3, Table I",
        claim="Gear's PFC pauses are the shortest of Gear, HPCC, DCTCP and GEMINI: the next "
        "shortest, HPCC's, last 1.87x as long (DCTCP 3.22x, GEMINI 5.82x).",
        basis="paper",
        experiment="gear_fig8",
        measure=min_of(*(pfc_pause_ratio(s, "gear") for s in _FIG8_SCHEMES[1:])),
        measure_doc="the least of HPCC's, DCTCP's and GEMINI's total PFC pause time / Gear's",
        expect=Expect("gain", paper=1.87),
        reduced=runs["reduced"],
        full=runs["full"],
    )


def _fig8_large_p99() -> Claim:
    runs = _fig8_runs(_FIG8_SCHEMES)
    return Claim(
        id="gear.fig8.large_p99_slowdown",
        paper=PAPER,
        where="§IV-B4, Fig. 8",
        claim="DCTCP, GEMINI and HPCC show a significant FCT slowdown for large intra-DC flows, "
        "Gear a lower one: its p99 below each of theirs.",
        basis="paper",
        experiment="gear_fig8",
        measure=min_of(*(slowdown_ratio(s, "gear") for s in _FIG8_SCHEMES[1:])),
        measure_doc="the least of HPCC's, DCTCP's and GEMINI's p99 slowdown of the larger half of "
        "intra-DC flows / Gear's",
        expect=Expect("at_least", paper=1.0),
        reduced=runs["reduced"],
        full=runs["full"],
    )


def _annulus_fig8() -> tuple[Claim, ...]:
    runs = _fig8_runs(("annulus", *_FIG8_SCHEMES))
    return (
        Claim(
            id="gear.table1.annulus_no_pauses",
            paper=PAPER,
            where="§IV-B3, Table I",
            claim="Annulus's near-source feedback eliminates the triggering of PFC: its "
            "normalised PFC duration is 0.",
            basis="paper",
            experiment="gear_fig8",
            measure=pfc_pause_us("annulus"),
            measure_doc="Annulus's total PFC pause time (us)",
            expect=Expect("at_most", paper=0.0),
            reduced=_fig8_runs(("annulus",))["reduced"],
            full=_fig8_runs(("annulus",))["full"],
        ),
        Claim(
            id="gear.fig8.annulus_lowest_large_p99",
            paper=PAPER,
            where="§IV-B4, Fig. 8",
            claim="Annulus shows the lowest FCT slowdown: its p99 for large intra-DC flows below "
            "Gear's, HPCC's, DCTCP's and GEMINI's.",
            basis="paper",
            experiment="gear_fig8",
            measure=min_of(*(slowdown_ratio(s, "annulus") for s in _FIG8_SCHEMES)),
            measure_doc="the least of Gear's, HPCC's, DCTCP's and GEMINI's p99 slowdown of the "
            "larger half of intra-DC flows / Annulus's",
            expect=Expect("at_least", paper=1.0),
            reduced=runs["reduced"],
            full=runs["full"],
        ),
    )


def _fig14a(half: str, factor: float) -> Claim:
    runs = {
        form: {**_fig8_runs(("gear",))[form], **_fig8_runs(("gear",), ("cc.gear.intra_logic=hpcc",),
                                                            "_without_intra")[form]}
        for form in ("reduced", "full")
    }  # fmt: skip
    before, after = (72.09, 95.35) if half == "small" else (114.94, 127.72)
    return Claim(
        id=f"gear.fig14a.{half}_p99_without_intra_logic",
        paper=PAPER,
        where="§IV-C5, Fig. 14(a)",
        claim=f"Without its intra-DC logic, Gear's p99 FCT slowdown of {half} intra-DC flows rises "
        f"from {before}x to {after}x ({factor:.2f}x).",
        basis="paper",
        experiment="gear_fig8",
        measure=slowdown_ratio("gear_without_intra", "gear", 0.99, half),
        measure_doc=f"p99 FCT slowdown of the {half} half of intra-DC flows, without / with Gear's "
        "intra-DC logic",
        expect=Expect("gain", paper=round(factor, 4)),
        reduced=runs["reduced"],
        full=runs["full"],
    )


_FIG6 = ("experiment=gear_fig6",)


def _fig6(scheme: str, fraction: float, cdf: str = "web_search") -> tuple[str, ...]:
    return (*_FIG6, f"scheme=gear_{scheme}", f"workload.intra_fraction={fraction}",
            f"workload.intra_cdf={cdf}", f"workload.inter_cdf={cdf}")  # fmt: skip


def _fig6_claims() -> tuple[Claim, ...]:
    others = ("hpcc", "dctcp", "gemini")
    return (
        Claim(
            id="gear.fig6.gear_1to1",
            paper=PAPER,
            where="§IV-B1, Fig. 6",
            claim="With intra:cross traffic 1:1 (WebSearch, 30% load) Gear is relatively fair: "
            "a normalised throughput ratio within [0.9, 1.1].",
            basis="paper",
            experiment="gear_fig6",
            measure=normalised_throughput("gear"),
            measure_doc="(intra / cross throughput) / (intra / cross bytes generated)",
            expect=Expect("between", low=0.9, high=1.1),
            full={"gear": _fig6("gear", 0.5)},
        ),
        Claim(
            id="gear.fig6.others_below_one_1to1",
            paper=PAPER,
            where="§IV-B1, Fig. 6",
            claim="The normalised throughput ratios of GEMINI, HPCC and DCTCP are all less than 1 "
            "(here at 1:1).",
            basis="paper",
            experiment="gear_fig6",
            measure=max_of(*(normalised_throughput(s) for s in others)),
            measure_doc="the greatest of HPCC's, DCTCP's and GEMINI's normalised throughput ratio",
            expect=Expect("at_most", paper=1.0),
            full={s: _fig6(s, 0.5) for s in others},
        ),
        Claim(
            id="gear.fig6.annulus_above_one_1to1",
            paper=PAPER,
            where="§IV-B1, Fig. 6",
            claim="The normalised throughput ratios of Annulus are greater than 1, its cross-DC "
            "flows decreasing their rates more often (here at 1:1).",
            basis="paper",
            experiment="gear_fig6",
            measure=normalised_throughput("annulus"),
            measure_doc="Annulus's normalised throughput ratio",
            expect=Expect("at_least", paper=1.0),
            full={"annulus": _fig6("annulus", 0.5)},
        ),
        Claim(
            id="gear.fig7.gear_hadoop_5to1",
            paper=PAPER,
            where="§IV-B2, Fig. 7",
            claim="With FB_Hadoop sizes at intra:cross 5:1, Gear stays close to the ideal: a "
            "normalised throughput ratio within [0.9, 1.1].",
            basis="paper",
            experiment="gear_fig6",
            measure=normalised_throughput("gear"),
            measure_doc="(intra / cross throughput) / (intra / cross bytes generated)",
            expect=Expect("between", low=0.9, high=1.1),
            full={"gear": _fig6("gear", 0.8333333333333334, "fb_hadoop")},
        ),
    )


_FIG10_SCHEMES = ("gear", "hpcc", "dctcp", "gemini", "timely", "annulus")


def _fig10_11_claims() -> tuple[Claim, ...]:
    def fig10(scheme: str) -> dict:
        return {scheme: ("experiment=gear_fig10", f"scheme=gear_{scheme}")}

    fair = "the largest |x / mean - 1| of the three flows' throughput over 2-3 s"
    return (
        Claim(
            id="gear.fig10.gear_three_flows_fair",
            paper=PAPER,
            where="§IV-C1, Fig. 10",
            claim="When a second intra-DC flow joins at 1 s, Gear's three flows quickly adjust "
            "their rates to a fair position: each within 10% of the mean.",
            basis="paper",
            experiment="gear_fig10",
            measure=share_deviation("gear", 2000, 3000),
            measure_doc=fair,
            expect=Expect("at_most", paper=0.1),
            full=fig10("gear"),
        ),
        Claim(
            id="gear.fig10.dctcp_cross_takes_80pct",
            paper=PAPER,
            where="§IV-C1, Fig. 10(c)",
            claim="Under DCTCP the cross-DC flow aggressively grabs about 80% of the bandwidth "
            "while the two intra-DC flows share the rest (within 20%).",
            basis="paper",
            experiment="gear_fig10",
            measure=cross_share("dctcp", 2000, 3000),
            measure_doc="the cross-DC flow's share of the three flows' throughput over 2-3 s",
            expect=Expect("within", paper=0.8, rel_tol=0.2),
            full=fig10("dctcp"),
        ),
        Claim(
            id="gear.fig10.annulus_three_flows_fair",
            paper=PAPER,
            where="§IV-C1, Fig. 10(d)",
            claim="Annulus achieves a relatively fair distribution of bandwidth among the three "
            "flows: each within 10% of the mean.",
            basis="paper",
            experiment="gear_fig10",
            measure=share_deviation("annulus", 2000, 3000),
            measure_doc=fair,
            expect=Expect("at_most", paper=0.1),
            full=fig10("annulus"),
        ),
        Claim(
            id="gear.fig11.intra_only_fair",
            paper=PAPER,
            where="§IV-C2, Fig. 11",
            claim="With intra-DC flows only, every algorithm shares fairly: with four flows "
            "running, each within 10% of the mean under Gear, HPCC, DCTCP, GEMINI, TIMELY and "
            "Annulus.",
            basis="paper",
            experiment="gear_fig10",
            measure=max_of(*(share_deviation(s, 3500, 4000) for s in _FIG10_SCHEMES)),
            measure_doc="the largest, over the schemes, of the largest |x / mean - 1| of the four "
            "flows' throughput over 3.5-4 s",
            expect=Expect("at_most", paper=0.1),
            full={s: ("experiment=gear_fig11", f"scheme=gear_{s}") for s in _FIG10_SCHEMES},
        ),
    )


_MAX_QLEN = ("switch.int_telemetry.max_records=1", "switch.int_telemetry.replacement=qlen")


def _fig13_17_claims() -> tuple[Claim, ...]:
    ratio = "intra-DC / cross-DC flow throughput over 0.5-1 s (background flows left out)"
    fig17 = {"gear": ("experiment=gear_fig17", "scheme=gear_gear")}
    return (
        Claim(
            id="gear.fig13.keep_all_fair",
            paper=PAPER,
            where="§IV-C4, Fig. 13(a)",
            claim="Among background traffic, with every hop's INT record kept, Gear's intra-DC "
            "and cross-DC flows quickly converge to a fair position: intra/cross within "
            "[0.9, 1.1].",
            basis="paper",
            experiment="gear_fig9",
            measure=steady_share_ratio("keep_all"),
            measure_doc=ratio,
            expect=Expect("between", low=0.9, high=1.1),
            full={"keep_all": ("experiment=gear_fig13",)},
        ),
        Claim(
            id="gear.fig13.max_qlen_cross_takes_more",
            paper=PAPER,
            where="§IV-C4, Fig. 13(b)",
            claim="Keeping only the INT record of the longest queue (ties at random), the "
            "cross-DC flow takes more bandwidth than the intra-DC flow: intra/cross below 1.",
            basis="paper",
            experiment="gear_fig9",
            measure=steady_share_ratio("max_qlen"),
            measure_doc=ratio,
            expect=Expect("at_most", paper=1.0),
            full={"max_qlen": ("experiment=gear_fig13", *_MAX_QLEN)},
        ),
        Claim(
            id="gear.fig17.int_at_tor_fair",
            paper=PAPER,
            where="§V-A, Fig. 17(a)",
            claim="With INT on the ToR switches only, Gear converges rapidly while the "
            "bottleneck is an INT-enabled ToR's uplink: rack A's four flows (two intra-DC, two "
            "cross-DC) each within 10% of their mean over 1-2 s.",
            basis="paper",
            experiment="gear_fig10",
            measure=share_deviation("gear", 1000, 2000),
            measure_doc="the largest |x / mean - 1| of the four flows' throughput over 1-2 s",
            expect=Expect("at_most", paper=0.1),
            full=fig17,
        ),
        Claim(
            id="gear.fig17.eventual_convergence",
            paper=PAPER,
            where="§V-A, Fig. 17(a)",
            claim="After the bottleneck moves to the core switch, which has no INT, Gear still "
            "converges eventually (PFC backpressure makes the ToR queues carry the signal): the "
            "eight flows each within 10% of their mean over 3.5-4 s.",
            basis="paper",
            experiment="gear_fig10",
            measure=share_deviation("gear", 3500, 4000),
            measure_doc="the largest |x / mean - 1| of the eight flows' throughput over 3.5-4 s",
            expect=Expect("at_most", paper=0.1),
            full=fig17,
        ),
    )


CLAIMS = (
    _fig9(
        "gear",
        "One intra-DC and one cross-DC flow from line rate share the bottleneck fairly under "
        "Gear: an intra/cross throughput ratio within [0.9, 1.1].",
        Expect("between", low=0.9, high=1.1),
    ),
    _fig9(
        "annulus",
        "Annulus (ToR congestion points, DCQCN and Vegas at the sender) shows no bandwidth "
        "imbalance between the intra-DC and the cross-DC flow: intra/cross within [0.9, 1.1].",
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
        fig="fig14b",
        where="§IV-C5, Fig. 14(b)",
    ),
    _fig9(
        "gear",
        "Started at 66 Gb/s, Gear's intra- and cross-DC flows reach a fairly balanced state by "
        "0.5 s: intra/cross within [0.9, 1.1].",
        Expect("between", low=0.9, high=1.1),
        extra=("cc.gear.init_cwnd_bdp=0.66",),
        name="gear_66g",
        fig="fig12",
        where="§IV-C3, Fig. 12",
    ),
    _fig9(
        "hpcc",
        "Started at 10 Mb/s, HPCC's cross-DC flow struggles to obtain any bandwidth share: "
        "intra/cross above 1.1.",
        Expect("at_least", paper=1.1),
        extra=("cc.hpcc.init_cwnd_bdp=0.0001",),
        name="hpcc_10m",
        fig="fig12",
        where="§IV-C3, Fig. 12",
    ),
    _fig9(
        "gemini",
        "With F_min = 0.01 GEMINI's intra-DC flow struggles to obtain bandwidth: intra/cross "
        "below 0.9.",
        Expect("at_most", paper=0.9),
        extra=("cc.gemini.f_min=0.01",),
        name="gemini_fmin_0_01",
        where="Appendix, Fig. 18(b)",
        fig="fig18",
    ),
    _fig9(
        "gemini",
        "With F_min = 0.05 GEMINI's intra- and cross-DC flows tend towards fairness: intra/cross "
        "within [0.9, 1.1].",
        Expect("between", low=0.9, high=1.1),
        name="gemini_fmin_0_05",
        where="Appendix, Fig. 18(c)",
        fig="fig18",
    ),
    _table1_fig8(),
    _fig8_large_p99(),
    *_annulus_fig8(),
    _fig14a("small", 95.35 / 72.09),
    _fig14a("large", 127.72 / 114.94),
    *_fig6_claims(),
    *_fig10_11_claims(),
    *_fig13_17_claims(),
)
