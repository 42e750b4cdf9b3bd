"""What a claim of the ledger is: a paper's sentence with its number, the runs and the measure
that give our number, and the rule that says whether the two agree.

A claim names its runs twice: ``reduced`` (minutes for the whole ledger: fewer or smaller flows,
a shorter RTT ratio) and ``full`` (the paper's scale: the experiment as its README runs it).
Each run is a list of ``uno-run`` overrides under a short name the measure refers to. A claim
without a measure (or without runs for a form) is listed as "not yet".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

#: the ledger's modules (uno.claims.<name>), one per paper, each defining ``CLAIMS``
PAPER_MODULES = ("uno_sc25", "uno_artifact", "gemini_ton", "gear_ton", "reps_arxiv", "mlcc_icpp")

#: what our value is checked against: the paper's text (a figure, a table, a sentence) or the
#: authors' artifact (its code, its logs, a run of it)
BASES = ("paper", "artifact")


@dataclass(frozen=True)
class Expect:
    """The agreement rule. ``gain``: a claimed improvement factor ``paper`` (2 for "2x lower
    FCT"), agreed when ours reaches at least ``gain_share`` of the claimed gain, ours - 1 >=
    gain_share x (paper - 1) (a larger factor also agrees); ``at_least``: ours >= paper x
    (1 - rel_tol); ``at_most``: ours <= paper x (1 + rel_tol);
    ``within``: |ours / paper - 1| <= rel_tol; ``between``: low <= ours <= high (the paper's
    statement has no single number, e.g. "equal shares")."""

    rule: str
    paper: float | None = None
    rel_tol: float = 0.0
    low: float | None = None
    high: float | None = None
    gain_share: float = 0.5

    def __post_init__(self):
        if self.rule not in ("gain", "at_least", "at_most", "within", "between"):
            raise ValueError(f"Expect.rule: unknown rule {self.rule!r}")
        if self.rule == "between" and (self.low is None or self.high is None):
            raise ValueError("Expect.rule 'between' needs low and high")
        if self.rule != "between" and self.paper is None:
            raise ValueError(f"Expect.rule {self.rule!r} needs the paper's value")

    def agrees(self, ours: float) -> bool:
        if self.rule == "gain":
            return ours - 1.0 >= self.gain_share * (self.paper - 1.0)
        if self.rule == "at_least":
            return ours >= self.paper * (1.0 - self.rel_tol)
        if self.rule == "at_most":
            return ours <= self.paper * (1.0 + self.rel_tol)
        if self.rule == "within":
            return abs(ours / self.paper - 1.0) <= self.rel_tol
        return self.low <= ours <= self.high

    def describe(self) -> str:
        """The rule in words (for the table)."""
        tol = f"{self.rel_tol:.0%}"
        if self.rule == "gain":
            floor = 1.0 + self.gain_share * (self.paper - 1.0)
            return f"{self.paper:g}x claimed; >= {floor:.2f}x ({self.gain_share:.0%} of the gain)"
        if self.rule == "at_least":
            return f">= {self.paper:g} less {tol}"
        if self.rule == "at_most":
            return f"<= {self.paper:g} plus {tol}"
        if self.rule == "within":
            return f"{self.paper:g} ± {tol}"
        return f"in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper (see the module docstring)."""

    id: str
    paper: str
    where: str  # section, figure or table
    claim: str  # the claim in one sentence, with the paper's number
    basis: str  # one of BASES
    experiment: str  # the experiment (experiments/<name>) whose README reports it in full
    measure: Callable | None  # f(results: dict[name, RunResult]) -> our value (float)
    measure_doc: str  # what the value is, in words
    expect: Expect | None
    reduced: dict[str, tuple[str, ...]] = field(default_factory=dict)
    full: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self):
        if self.basis not in BASES:
            raise ValueError(f"claim {self.id}: basis {self.basis!r} is not one of {BASES}")
        if self.measure is not None and self.expect is None:
            raise ValueError(f"claim {self.id}: a measure needs an agreement rule (expect)")

    def runs(self, form: str) -> dict[str, tuple[str, ...]]:
        """The runs of ``form`` ("reduced" or "full")."""
        if form not in ("reduced", "full"):
            raise ValueError(f"form: {form!r} is neither 'reduced' nor 'full'")
        return self.reduced if form == "reduced" else self.full


def load_claims() -> tuple[Claim, ...]:
    """Every claim of every paper module, in order; ids are unique."""
    claims = []
    for name in PAPER_MODULES:
        claims.extend(importlib.import_module(f"uno.claims.{name}").CLAIMS)
    seen = set()
    for c in claims:
        if c.id in seen:
            raise ValueError(f"claim id {c.id!r} appears twice")
        seen.add(c.id)
    return tuple(claims)
