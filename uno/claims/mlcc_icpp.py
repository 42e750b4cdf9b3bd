"""Claims of "Efficient Cross-Datacenter Congestion Control with Fast Control Loops" (MLCC;
Zhao et al., ICPP 2025) with an experiment here: convergence with the bottleneck in the sender's
datacenter (Fig. 7, ``experiment=mlcc_fig7``) or the receiver's (Fig. 8,
``experiment=mlcc_fig9``), and the receiver-side DCI switch's queue under simultaneous bursts
(Fig. 9) and sequential ones (Fig. 10, ``experiment=mlcc_fig10``).

The motivation's Experiments 1-2 (Figs. 2-3, ``experiment=mlcc_fig2`` / ``mlcc_fig3``) and
the mixed traffic's average FCTs (Figs. 11-12, ``experiment=mlcc_fct``) are here too.

The full form is the experiment as its README runs it (20-150 ms; the mixed traffic: 20 ms of
arrivals on a quarter of MLCC's topology, run to completion). The reduced form runs the same
flows for 30 ms: past the DCI queue's peak (about 10 ms) and its fall to the settled level
(the second half, 15-30 ms); the mixed traffic has no reduced form (minutes a run).
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import MeasureError, fct_ratio, pfc_pause_us, steady_share_ratio
from uno.core.units import PS_PER_US
from uno.metrics.dci import pfq_levels

PAPER = "MLCC (ICPP 2025)"
_SHORT = ("engine.max_sim_time_ms=30",)
_HADOOP = ("workload.intra_cdf=fb_hadoop", "workload.inter_cdf=fb_hadoop")
_LIGHT = ("workload.load=0.3", "workload.inter_load=0.1")
_WAN1 = ("topo.wan_delay_us=1000",)
_HEAVY_1MS = "50% + 20% load over 1 ms long-distance links"
MB = 1e6


def _runs(experiment: str) -> dict:
    return {
        "full": {"mlcc": (f"experiment={experiment}",)},
        "reduced": {"mlcc": (f"experiment={experiment}", *_SHORT)},
    }


def pfq_level(run: str, what: str, switch: str = "dc1/dci"):
    """``what`` of :func:`uno.metrics.dci.pfq_levels` for run ``run``'s DCI switch ``switch``,
    in MB (the settled levels over the run's second half)."""

    def measure(results: dict) -> float:
        result = results[run]
        queues = result.tables.get("queues")
        if queues is None or queues.empty:
            raise MeasureError(f"run {run!r} sampled no queues (engine.sample_interval_us)")
        half_ps = int(result.summary["run"]["sim_time_us"] * PS_PER_US) // 2
        try:
            return pfq_levels(queues, switch, half_ps)[what] / MB
        except ValueError as err:
            raise MeasureError(str(err)) from err

    measure.__doc__ = f"{what} of {switch}'s per-flow queues in {run} (MB)"
    return measure


CLAIMS = (
    Claim(
        id="mlcc.fig7.sender_side_fair",
        paper=PAPER,
        where="§4.2, Fig. 7",
        claim="With the bottleneck in the sender's datacenter, intra-DC and cross-DC flows "
        "started together quickly stabilise at a fair bandwidth allocation.",
        basis="paper",
        experiment="mlcc_micro",
        measure=steady_share_ratio("mlcc"),
        measure_doc="acknowledged rate per intra-DC flow / per cross-DC flow over the run's "
        "second half",
        expect=Expect("between", low=0.8, high=1.25),
        **_runs("mlcc_fig7"),
    ),
    Claim(
        id="mlcc.fig8.receiver_side_fair",
        paper=PAPER,
        where="§4.2, Fig. 8",
        claim="With the bottleneck in the receiver's datacenter, MLCC reconverges to the fair "
        "rate after DQM has reduced the DCI switch's queue.",
        basis="paper",
        experiment="mlcc_micro",
        measure=steady_share_ratio("mlcc"),
        measure_doc="acknowledged rate per intra-DC flow / per cross-DC flow over the run's "
        "second half",
        expect=Expect("between", low=0.8, high=1.25),
        **_runs("mlcc_fig9"),
    ),
    Claim(
        id="mlcc.fig9.dci_queue_peak",
        paper=PAPER,
        where="§4.3, Fig. 9(a)",
        claim="When the flows start simultaneously the receiver-side DCI switch's queue peaks "
        "at about 40 MB.",
        basis="paper",
        experiment="mlcc_micro",
        measure=pfq_level("mlcc", "peak_total_bytes"),
        measure_doc="peak of the receiver-side DCI switch's per-flow queues together (MB)",
        expect=Expect("within", paper=40.0, rel_tol=0.5),
        **_runs("mlcc_fig9"),
    ),
    Claim(
        id="mlcc.fig9.dci_queue_settles",
        paper=PAPER,
        where="§4.3, Fig. 9(a)",
        claim="DQM (theta = 18 ms, D_t = 1 ms) then reduces the DCI switch's queue from its "
        "peak to around 5 MB.",
        basis="paper",
        experiment="mlcc_micro",
        measure=pfq_level("mlcc", "settled_total_bytes"),
        measure_doc="the DCI switch's per-flow queues together, mean over the run's second "
        "half (MB)",
        expect=Expect("within", paper=5.0, rel_tol=0.5),
        **_runs("mlcc_fig9"),
    ),
    Claim(
        id="mlcc.fig9.per_flow_queue_at_target_delay",
        paper=PAPER,
        where="§4.3, Fig. 9(b)",
        claim="Each flow's queue at the DCI switch falls from about 10 MB to about 1.5 MB, its "
        "fair rate (12.5 Gb/s) times D_t (1 ms).",
        basis="paper",
        experiment="mlcc_micro",
        measure=pfq_level("mlcc", "settled_flow_bytes"),
        measure_doc="a flow's queue at the DCI switch, mean over the flows and the run's "
        "second half (MB)",
        expect=Expect("within", paper=1.5, rel_tol=0.3),
        **_runs("mlcc_fig9"),
    ),
    Claim(
        id="mlcc.fig10.sequential_peak",
        paper=PAPER,
        where="§4.3, Fig. 10",
        claim="When the cross-DC flows start one after another, DQM reduces the DCI switch's "
        "queue from a peak of about 25 MB to around 5 MB.",
        basis="paper",
        experiment="mlcc_micro",
        measure=pfq_level("mlcc", "peak_total_bytes"),
        measure_doc="peak of the receiver-side DCI switch's per-flow queues together (MB)",
        expect=Expect("within", paper=25.0, rel_tol=0.5),
        **_runs("mlcc_fig10"),
    ),
    Claim(
        id="mlcc.fig2.dcqcn_pfc_at_receiver_side",
        paper=PAPER,
        where="§2.2, Experiment 1, Fig. 2",
        claim="Under DCQCN, when the cross-DC flows reach the receiver's datacenter the "
        "bottleneck switch's queue rises sharply and PFC is triggered.",
        basis="paper",
        experiment="mlcc_motivation",
        measure=pfc_pause_us("dcqcn"),
        measure_doc="total PFC pause time under DCQCN (us)",
        expect=Expect("at_least", paper=1.0),
        reduced={"dcqcn": ("experiment=mlcc_fig2", "scheme=mlcc_dcqcn")},
        full={"dcqcn": ("experiment=mlcc_fig2", "scheme=mlcc_dcqcn")},
    ),
    Claim(
        id="mlcc.fig3.dcqcn_intra_starved_at_sender_side",
        paper=PAPER,
        where="§2.2, Experiment 2, Fig. 3",
        claim="Under DCQCN, as cross-DC flows join in the sender's datacenter they "
        "progressively take the intra-DC flows' bandwidth.",
        basis="paper",
        experiment="mlcc_motivation",
        measure=steady_share_ratio("dcqcn"),
        measure_doc="acknowledged rate per intra-DC flow / per cross-DC flow over the run's "
        "second half",
        expect=Expect("at_most", paper=0.8),
        reduced={"dcqcn": ("experiment=mlcc_fig3", "scheme=mlcc_dcqcn")},
        full={"dcqcn": ("experiment=mlcc_fig3", "scheme=mlcc_dcqcn")},
    ),
    *(
        Claim(
            id=f"mlcc.{fig}.{cdf}_{cls}_vs_{base}",
            paper=PAPER,
            where=f"§4.4, Fig. {fig[3:]}",
            claim=f"Under {cdf} traffic at {load} MLCC reduces the average FCT of "
            f"{'intra' if cls == 'intra' else 'cross'}-DC flows by {cut}% against {base}.",
            basis="paper",
            experiment="mlcc_fct",
            measure=fct_ratio(base, "mlcc", "mean", cls=cls),
            measure_doc=f"mean FCT of {cls}-DC flows, {base} / mlcc",
            expect=Expect("gain", paper=round(1 / (1 - cut / 100), 3)),
            full={
                name: ("experiment=mlcc_fct", f"scheme=mlcc_{name}", *over)
                for name in ("mlcc", base)
            },
        )
        for fig, cdf, load, over, cls, base, cut in (
            ("fig11", "web_search", "50% + 20% load", (), "intra", "dcqcn", 28),
            ("fig11", "web_search", "50% + 20% load", (), "intra", "hpcc", 46),
            ("fig11", "web_search", "50% + 20% load", (), "intra", "powertcp", 39),
            ("fig11", "fb_hadoop", "50% + 20% load", _HADOOP, "intra", "dcqcn", 7),
            ("fig11", "fb_hadoop", "50% + 20% load", _HADOOP, "inter", "dcqcn", 12),
            ("fig12", "web_search", "30% + 10% load", _LIGHT, "intra", "dcqcn", 24),
            (
                "fig15",
                "web_search",
                _HEAVY_1MS,
                _WAN1,
                "intra",
                "dcqcn",
                22,
            ),
            (
                "fig15",
                "fb_hadoop",
                _HEAVY_1MS,
                (*_HADOOP, *_WAN1),
                "inter",
                "dcqcn",
                5,
            ),
        )
    ),
)
