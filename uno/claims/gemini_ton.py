"""Claims of "Congestion Control for Cross-Datacenter Networks" (Gemini; Zeng et al., IEEE/ACM
Transactions on Networking, 2022) with an experiment here: the ECN threshold sweep (§IV-B,
Fig. 8) and RTT fairness (§IV-C, Fig. 11), on the paper's 1 Gb/s setting
(``experiment=gemini_k_sweep``, ``experiment=gemini_rtt_fairness``).

Both claims are measured in the full form only (the experiments' 10-s runs, over their second
half, as the experiments' analyses read the steady state): at a 10-ms RTT on 1 Gb/s links
Gemini's inter-DC flows take seconds to fill their share, so a run short enough for the reduced
form measures their start-up, not the claim.
"""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import steady_goodput_ratio, steady_share_ratio

PAPER = "Gemini (ToN 2022)"

_K320 = ("experiment=gemini_k_sweep", "switch.ecn.kmin_bytes=480000")  # K = 320 packets
_RATIO64 = ("experiment=gemini_rtt_fairness", "topo.inter_rtt_ratio=64")

CLAIMS = (
    Claim(
        id="gemini.fig8.k320_throughput",
        paper=PAPER,
        where="§IV-B, Fig. 8",
        claim="At an ECN threshold of K = 320 packets, Gemini's inter-DC flows reach 938 Mb/s "
        "of the 1 Gb/s bottleneck against DCTCP's 899 Mb/s (4.3% more).",
        basis="paper",
        experiment="gemini_k_sweep",
        measure=steady_goodput_ratio("dctcp", "gemini"),
        measure_doc="throughput of the inter-DC flows over the run's second half, gemini / dctcp",
        expect=Expect("gain", paper=round(938 / 899, 4)),
        full={"gemini": (*_K320, "cc=gemini"), "dctcp": (*_K320, "cc=dctcp")},
    ),
    Claim(
        id="gemini.fig11.equal_shares",
        paper=PAPER,
        where="§IV-C, Fig. 11",
        claim="Gemini keeps equal bandwidth shares between intra- and inter-DC flows whatever "
        "their RTT ratio (here 64).",
        basis="paper",
        experiment="gemini_rtt_fairness",
        measure=steady_share_ratio("gemini"),
        measure_doc="rate per intra-DC flow / per inter-DC flow over the run's second half (1: equal "
        "shares)",
        expect=Expect("between", low=0.8, high=1.25),
        full={"gemini": (*_RATIO64, "cc=gemini")},
    ),
)
