"""Claims checked against the Uno authors' artifact (spcl/Uno_SC25, its htsim built and run on
the same scenarios by ``benchmarks/cpp_reference.py``): the mean FCT per class of its 4+4
incast of 10^9-B flows (``experiment=artifact_check``) with the ``*_artifact`` presets. These
runs are the artifact's own scenario at full size in both forms."""

from __future__ import annotations

from uno.claims.ledger import Claim, Expect
from uno.claims.measures import fct_ms

PAPER = "Uno (SC'25) artifact"
#: the built artifact's mean FCTs (ms) on the 4+4 incast, per preset and class
ARTIFACT_MS = {
    "uno_artifact": {"intra": 682.2, "inter": 564.3},
    "gemini_artifact": {"intra": 649.1, "inter": 454.5},
    "mprdma_bbr_artifact": {"intra": 704.3, "inter": 859.6},
}
_NAMES = {"uno_artifact": "UnoCC", "gemini_artifact": "Gemini", "mprdma_bbr_artifact": "MPRDMA+BBR"}


def _claim(preset: str, cls: str) -> Claim:
    ms = ARTIFACT_MS[preset][cls]
    runs = {"run": ("experiment=artifact_check", "incast_mix=artifact_intra4_inter4",
                    f"cc={preset}")}  # fmt: skip
    return Claim(
        id=f"artifact.incast4_4.{preset.removesuffix('_artifact')}_{cls}",
        paper=PAPER,
        where="4+4 incast (Figs. 3 and 8 scenario)",
        claim=f"In the artifact, {_NAMES[preset]}'s {cls}-DC flows of the 4+4 incast of 10^9-B "
        f"flows finish in {ms:g} ms on average.",
        basis="artifact",
        experiment="artifact_check",
        measure=fct_ms("run", "mean", cls),
        measure_doc=f"mean FCT of the {cls}-DC flows with cc={preset}, ms",
        expect=Expect("within", paper=ms, rel_tol=0.10),
        reduced=runs,
        full=runs,
    )


CLAIMS = tuple(_claim(p, c) for p in ARTIFACT_MS for c in ("intra", "inter"))
