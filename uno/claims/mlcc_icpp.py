"""Claims of "Efficient Cross-Datacenter Congestion Control with Fast Control Loops" (MLCC;
Zhao et al., ICPP 2025) with an experiment here: convergence with the bottleneck in the sender's
datacenter (Fig. 7, ``experiment=mlcc_fig7``) or the receiver's (Fig. 8,
``experiment=mlcc_fig9``), and the receiver-side DCI switch's queue under simultaneous bursts
(Fig. 9) and sequential ones (Fig. 10, ``experiment=mlcc_fig10``).

The full form is the experiment as its README runs it (60-150 ms). The reduced form runs the
same flows for 30 ms: past the queue's peak (about 10 ms) and its fall to the settled level
(the second half, 15-30 ms).
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import MeasureError, steady_share_ratio
from uno.core.units import PS_PER_US
from uno.metrics.dci import pfq_levels

PAPER = "MLCC (ICPP 2025)"
_SHORT = ("engine.max_sim_time_ms=30",)
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
)
