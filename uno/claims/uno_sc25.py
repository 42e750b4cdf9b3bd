"""Claims of "Uno: A One-Stop Solution for Inter- and Intra-Data Center Congestion Control and
Reliable Connectivity" (SC'25): every headline number of §3 and §5 with an experiment here.

The reduced runs are smaller versions of the experiments (256-MiB flows in Fig. 3, 200 RPCs at
a 16x RTT ratio in Fig. 4, 150 flows of the Fig. 10–12 traffic, five seeds of Fig. 13 A); the
full runs are the experiments' own configurations at the paper's scale.
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import (
    collective_over_ideal,
    collective_ratio,
    convergence_ratio,
    fct_ratio,
    mean_over_seeds_ratio,
    min_of,
    seeded,
)

PAPER = "Uno (SC'25)"

# ---- Fig. 4: phantom queues and the RPCs' FCT (§3.2) -------------------------------------------
_FIG4_REDUCED = ("experiment=fig4_phantom", "topo.inter_rtt_ratio=16",
                 "workload.rpc_start_us=30000", "workload.rpc_count=200")  # fmt: skip
_FIG4 = {
    "reduced": {
        "phantom": (*_FIG4_REDUCED, "switch=phantom"),
        "no_phantom": (*_FIG4_REDUCED, "switch=ecn"),
    },
    "full": {
        "phantom": ("experiment=fig4_phantom", "switch=phantom"),
        "no_phantom": ("experiment=fig4_phantom", "switch=ecn"),
    },
}


def _fig4(stat: str, factor: float, what: str) -> Claim:
    return Claim(
        id=f"uno.fig4.rpc_{stat}",
        paper=PAPER,
        where="§3.2, Fig. 4",
        claim=f"Phantom queues give a {factor:g}x lower {what} FCT of the RPCs sharing the "
        "receiver with eight inter-DC incast flows.",
        basis="paper",
        experiment="fig4_phantom",
        measure=fct_ratio("no_phantom", "phantom", stat, cls="intra"),
        measure_doc=f"{stat} FCT of the RPCs (intra-DC flows), without / with phantom queues",
        expect=Expect("gain", paper=factor),
        reduced=_FIG4["reduced"],
        full=_FIG4["full"],
    )


# ---- Figs. 10 and 12: realistic traffic at 40% load (§5.2.2) ----------------------------------
_SCHEMES = ("uno_ecmp", "uno", "gemini", "mprdma_bbr")


def _mixed_runs(experiment: str, n_flows: int | None, extra: tuple[str, ...] = ()):
    runs = {}
    for scheme in _SCHEMES:
        over = (f"experiment={experiment}", f"scheme={scheme}", "workload.load=0.4", *extra)
        if n_flows is not None:
            over = (*over, f"workload.n_flows={n_flows}")
        if scheme == "uno" and n_flows is not None:
            over = (*over, "ec.payload=false")  # (the parity is counted, not computed)
        runs[scheme] = over
    return runs


_NAMES = {"gemini": "Gemini", "mprdma_bbr": "MPRDMA+BBR"}


def _mean_claim(baseline: str, percent: int) -> Claim:
    return Claim(
        id=f"uno.fig10.mean_vs_{baseline}",
        paper=PAPER,
        where="§5.2.2, Fig. 10",
        claim=f"Under 40% load, UnoCC (Uno+ECMP) improves the mean FCT by {percent}% compared "
        f"to {_NAMES[baseline]}.",
        basis="paper",
        experiment="fig10_load",
        measure=fct_ratio(baseline, "uno_ecmp", "mean"),
        measure_doc=f"mean FCT of all flows, {baseline} / uno_ecmp (a {percent}% lower FCT is "
        f"{1 / (1 - percent / 100):.2f}x)",
        expect=Expect("gain", paper=round(1 / (1 - percent / 100), 3)),
        reduced=_mixed_runs("fig10_load", 150),
        full=_mixed_runs("fig10_load", None),
    )


def _tail_claim(fig: str, experiment: str, where: str, baseline: str, cls: str,
                factor: float) -> Claim:  # fmt: skip
    return Claim(
        id=f"uno.{fig}.p99_{cls}_vs_{baseline}",
        paper=PAPER,
        where=where,
        claim=f"Uno (UnoCC + UnoRC) lowers the {cls}-DC p99 FCT by {factor:g}x compared to "
        f"{_NAMES[baseline]}"
        + (
            " (40% load)."
            if fig == "fig10"
            else " (40% load, shallow intra-DC and deep inter-DC buffers)."
        ),
        basis="paper",
        experiment=experiment,
        measure=fct_ratio(baseline, "uno", "p99", cls=cls),
        measure_doc=f"p99 FCT of {cls}-DC flows, {baseline} / uno",
        expect=Expect("gain", paper=factor),
        reduced=_mixed_runs(experiment, 150),
        full=_mixed_runs(experiment, None),
    )


# ---- Fig. 11: the RTT ratio (§5.2.2) ---------------------------------------------------------
def _fig11(baseline: str) -> Claim:
    return Claim(
        id=f"uno.fig11.p99_ratio512_vs_{baseline}",
        paper=PAPER,
        where="§5.2.2, Fig. 11",
        claim=f"At an inter/intra-DC RTT ratio of 512, Uno's tail FCT slowdown is 5x lower than "
        f"{_NAMES[baseline]}'s.",
        basis="paper",
        experiment="fig11_rtt_ratio",
        measure=fct_ratio(baseline, "uno", "p99"),
        measure_doc=f"p99 FCT of all flows, {baseline} / uno (the same flows: the slowdowns' "
        "ratio at the tail)",
        expect=Expect("gain", paper=5.0),
        reduced=_mixed_runs("fig11_rtt_ratio", 150, ("topo.inter_rtt_ratio=512",)),
        full=_mixed_runs("fig11_rtt_ratio", None, ("topo.inter_rtt_ratio=512",)),
    )


# ---- Fig. 13 A: a failed border link (§5.2.3) -------------------------------------------------
_LINKFAIL = ("experiment=fig13_linkfail",)
_VARIANTS = {"spray": ("lb=spray",), "plb": ("lb=plb",), "unolb": ("lb=unolb",)}


def _linkfail_runs(seeds: int, coded: bool) -> dict:
    ec = ("ec=mds", "ec.payload=false") if coded else ("ec=none",)
    runs = {}
    for name, lb in _VARIANTS.items():
        runs.update(seeded((*_LINKFAIL, *lb, *ec), name, seeds))
    return runs


def _linkfail(coded: bool) -> Claim:
    label = "with" if coded else "without"
    return Claim(
        id=f"uno.fig13a.unolb_{'ec' if coded else 'no_ec'}",
        paper=PAPER,
        where="§5.2.3, Fig. 13 A",
        claim=f"With one of the eight border links failed, Uno's load balancing {label} erasure "
        "coding beats spraying and PLB (mean FCT of eight 5-MiB inter-DC flows).",
        basis="paper",
        experiment="fig13_linkfail",
        measure=min_of(
            mean_over_seeds_ratio("spray", "unolb"), mean_over_seeds_ratio("plb", "unolb")
        ),
        measure_doc=f"mean FCT averaged over the seeds, the better of spraying and PLB / UnoLB, "
        f"{label} coding (> 1: UnoLB is faster than both)",
        expect=Expect("at_least", paper=1.0),
        reduced=_linkfail_runs(5, coded),
        full=_linkfail_runs(100, coded),
    )


# ---- Fig. 13 C: cross-DC training with a failed link and correlated loss (§5.2.3) -----------
_AI_VARIANTS = {"spray": ("lb=spray",), "plb": ("lb=plb",), "unolb": ("lb=unolb",)}
_AI_CODED = ("ec=mds", "ec.payload=false")


def _ai_runs(seeds: int) -> dict:
    runs = {}
    for name, lb in _AI_VARIANTS.items():
        runs.update(seeded(("experiment=fig13_ai", *lb, "ec=none"), name, seeds))
        runs.update(seeded(("experiment=fig13_ai", *lb, *_AI_CODED), f"{name}+ec", seeds))
    return runs


def _ai_claims() -> tuple[Claim, ...]:
    where, common = "§5.2.3, Fig. 13 C", {"paper": PAPER, "basis": "paper"}
    runs = {"experiment": "fig13_ai", "reduced": _ai_runs(3), "full": _ai_runs(10)}
    return (
        Claim(
            id="uno.fig13c.ai_vs_ideal",
            where=where,
            claim="With erasure coding, Uno's Allreduce per training iteration is only 30% "
            "slower than the ideal (a failed border link and correlated WAN loss).",
            measure=collective_over_ideal("unolb+ec"),
            measure_doc="iteration time (the all-reduce's last flow) / ideal, UnoLB + coding, "
            "mean over iterations and seeds",
            expect=Expect("at_most", paper=1.3),
            **common,
            **runs,
        ),
        Claim(
            id="uno.fig13c.ai_vs_second_best",
            where=where,
            claim="With erasure coding, Uno's Allreduce iterations are over 2x faster than "
            "those of the second-best load balancer.",
            measure=min_of(
                collective_ratio("spray+ec", "unolb+ec"), collective_ratio("plb+ec", "unolb+ec")
            ),
            measure_doc="iteration time / ideal, the better of spraying and PLB / UnoLB, all "
            "with coding",
            expect=Expect("gain", paper=2.0),
            **common,
            **runs,
        ),
        Claim(
            id="uno.fig13c.ai_no_ec",
            where=where,
            claim="Without erasure coding too, Uno's load balancing gives the fastest Allreduce "
            "iterations.",
            measure=min_of(collective_ratio("spray", "unolb"), collective_ratio("plb", "unolb")),
            measure_doc="iteration time / ideal, the better of spraying and PLB / UnoLB, no "
            "coding (> 1: UnoLB is faster than both)",
            expect=Expect("at_least", paper=1.0),
            **common,
            **runs,
        ),
    )


CLAIMS = (
    _fig4("mean", 2.0, "average"),
    _fig4("p99", 8.0, "99th-percentile"),
    _mean_claim("mprdma_bbr", 30),
    _mean_claim("gemini", 37),
    _tail_claim("fig10", "fig10_load", "§5.2.2, Fig. 10", "mprdma_bbr", "intra", 4.4),
    _tail_claim("fig10", "fig10_load", "§5.2.2, Fig. 10", "gemini", "intra", 5.3),
    _tail_claim("fig10", "fig10_load", "§5.2.2, Fig. 10", "mprdma_bbr", "inter", 1.7),
    _tail_claim("fig10", "fig10_load", "§5.2.2, Fig. 10", "gemini", "inter", 2.1),
    _fig11("mprdma_bbr"),
    _fig11("gemini"),
    _tail_claim("fig12", "fig12_buffers", "§5.2.2, Fig. 12", "gemini", "intra", 3.1),
    _tail_claim("fig12", "fig12_buffers", "§5.2.2, Fig. 12", "gemini", "inter", 1.7),
    _tail_claim("fig12", "fig12_buffers", "§5.2.2, Fig. 12", "mprdma_bbr", "intra", 3.6),
    _tail_claim("fig12", "fig12_buffers", "§5.2.2, Fig. 12", "mprdma_bbr", "inter", 1.8),
    _linkfail(coded=True),
    _linkfail(coded=False),
    Claim(
        id="uno.fig3.convergence",
        paper=PAPER,
        where="§3.1, Fig. 3",
        claim="Uno converges to fairness considerably faster than Gemini (four intra-DC and "
        "four inter-DC 1-GiB flows into one receiver).",
        basis="paper",
        experiment="fig3_fairness",
        measure=convergence_ratio("gemini", "uno"),
        measure_doc="time until Jain's index of the eight sending rates (10-ms windows, the "
        "first skipped) reaches 0.9 before the first completion, gemini / uno",
        # ("considerably faster": at least 1.5 times as fast)
        expect=Expect("at_least", paper=1.5),
        reduced={
            "uno": ("experiment=fig3_fairness", "cc=uno", "workload.size_bytes=268435456"),
            "gemini": ("experiment=fig3_fairness", "cc=gemini", "workload.size_bytes=268435456"),
        },
        full={
            "uno": ("experiment=fig3_fairness", "cc=uno"),
            "gemini": ("experiment=fig3_fairness", "cc=gemini"),
        },
    ),
    *_ai_claims(),
)
