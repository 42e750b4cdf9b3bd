"""The Uno paper's whole evaluation as sweeps: every figure the authors' artifact runs, with its
seeds and repetition counts, on the artifact's presets and on the paper's.

Each figure is one or more sweeps, written as ``uno-run -m`` command lines (the commands of the
experiment READMEs); ``uno-eval`` (:mod:`uno.claims.eval_cli`) runs them all in one pool of
worker processes. A sweep's jobs go to ``<out>/<presets>/<figure>/<sweep>/<job number>``, a
multirun folder that ``uno-collect``, ``uno-plot`` and the experiments' ``analyze.py`` read.

The artifact's counts (spcl/Uno_SC25 ``artifact_scripts/`` and ``sc25_*.sh``): one run per
configuration for Figs. 3-12 (its seed 15 or 215; ours 1), 100 seeds per variant for Figs. 13 A
and B (111-210 and 333-432), 10 for Fig. 13 C (111-120). Fig. 3 is the 4+4 incast of Fig. 8
and Fig. 4 only plots logs in the artifact; they are run here from their experiments.
"""

from __future__ import annotations

from dataclasses import dataclass

#: every scheme of Figs. 10-12 as the artifact's scripts run it
_ARTIFACT_SCHEMES = "scheme=artifact_uno_ecmp,artifact_uno,artifact_gemini,artifact_mprdma_bbr"
_PAPER_SCHEMES = "scheme=uno_ecmp,uno,gemini,mprdma_bbr"
_MATRICES = ",".join(f"websearchIntra_AlibabaInter_5000f_{load}l" for load in (40, 60, 80))
PRESETS = ("artifact", "paper")


@dataclass(frozen=True)
class Sweep:
    """One ``uno-run -m`` command of a figure: ``overrides`` as on its command line (comma
    lists and ``range()`` sweep)."""

    presets: str
    figure: str
    name: str
    overrides: tuple[str, ...]

    def folder(self, out: str) -> str:
        """The sweep's multirun folder under ``out``."""
        return f"{out}/{self.presets}/{self.figure}/{self.name}"


def _sweeps(presets: str, figure: str, **named: str) -> tuple[Sweep, ...]:
    return tuple(Sweep(presets, figure, name, tuple(cmd.split())) for name, cmd in named.items())


EVALUATION: tuple[Sweep, ...] = (
    # ---- the artifact's presets (experiment=artifact_*, cc=*_artifact, scheme=artifact_*) ----
    *_sweeps("artifact", "fig3_fig8", incasts=(
        "experiment=artifact_check "
        "incast_mix=artifact_intra4_inter4,artifact_intra8,artifact_inter8 "
        "cc=uno_artifact,gemini_artifact,mprdma_bbr_artifact")),
    *_sweeps("artifact", "fig4", phantom=(
        "experiment=artifact_check_fig4 switch=phantom_artifact,ecn_uno_artifact")),
    *_sweeps("artifact", "fig9",
             ecmp=("experiment=artifact_fig9 cc=uno_artifact,gemini_artifact,mprdma_bbr_artifact "
                   "topo.wan_links=8,128"),
             unolb="experiment=artifact_fig9 lb=unolb_artifact topo.wan_links=8,128"),
    *_sweeps("artifact", "fig10", loads=(
        f"experiment=artifact_fig10 {_ARTIFACT_SCHEMES} workload.path={_MATRICES}")),
    *_sweeps("artifact", "fig11", rtt=(
        f"experiment=artifact_fig11 {_ARTIFACT_SCHEMES} "
        "topo.wan_delay_us=46.5,214.5,886.5,3574.5")),
    *_sweeps("artifact", "fig12", buffers=f"experiment=artifact_fig12 {_ARTIFACT_SCHEMES}"),
    *_sweeps("artifact", "fig13a", linkfail=(
        "experiment=artifact_fig13_linkfail lb=spray,plb,unolb_artifact ec=none,mds "
        "seed=range(111,211)")),
    *_sweeps("artifact", "fig13b", random_drops=(
        "experiment=artifact_fig13_random_drops lb=spray,plb,unolb_artifact ec=none,mds "
        "seed=range(333,433)")),
    *_sweeps("artifact", "fig13c", mult_failures=(
        "experiment=artifact_fig13_mult_failures lb=spray,plb,unolb_artifact ec=none,mds "
        "seed=range(111,121)")),
    # ---- the paper's presets (the experiments as the paper's text describes them) ----------
    *_sweeps("paper", "fig3", fairness="experiment=fig3_fairness cc=uno,gemini,mprdma_bbr"),
    *_sweeps("paper", "fig4", phantom="experiment=fig4_phantom switch=phantom,ecn"),
    *_sweeps("paper", "fig8", incasts=(
        "experiment=fig8_incast incast_mix=intra8,inter8,intra4_inter4 "
        "cc=uno,gemini,mprdma_bbr")),
    *_sweeps("paper", "fig9",
             ecmp="experiment=fig9_permutation cc=uno,gemini,mprdma_bbr topo.wan_links=8,128",
             unolb="experiment=fig9_permutation cc=uno lb=unolb topo.wan_links=8,128"),
    *_sweeps("paper", "fig10", loads=(
        f"experiment=fig10_load workload=mixed_artifact {_PAPER_SCHEMES} "
        "workload.load=0.4,0.6,0.8")),
    *_sweeps("paper", "fig11", rtt=(
        f"experiment=fig11_rtt_ratio workload=mixed_artifact {_PAPER_SCHEMES} "
        "topo.inter_rtt_ratio=8,32,128,512")),
    *_sweeps("paper", "fig12", buffers=(
        f"experiment=fig12_buffers workload=mixed_artifact {_PAPER_SCHEMES}")),
    *_sweeps("paper", "fig13a", linkfail=(
        "experiment=fig13_linkfail lb=spray,plb,unolb ec=none,mds seed=range(100)")),
    *_sweeps("paper", "fig13b", random_loss=(
        "experiment=fig13_random_loss lb=spray,plb,unolb ec=none,mds seed=range(100)")),
    *_sweeps("paper", "fig13c", ai="experiment=fig13_ai lb=spray,plb,unolb ec=none,mds "
             "seed=range(10)"),
)  # fmt: skip


def select_sweeps(presets: tuple[str, ...], figures: tuple[str, ...] = ()) -> list[Sweep]:
    """The sweeps of ``presets`` (and of ``figures`` only, when given; a figure name matches
    its prefix: ``fig13`` selects fig13a, fig13b and fig13c)."""
    for p in presets:
        if p not in PRESETS:
            raise ValueError(f"presets: unknown {p!r}; choose from {PRESETS}")
    chosen = [s for s in EVALUATION if s.presets in presets]
    if figures:
        chosen = [s for s in chosen if any(s.figure.startswith(f) for f in figures)]
        if not chosen:
            raise ValueError(f"figures: {', '.join(figures)} match no figure of {presets}")
    return chosen
