"""The product speaks only of itself: no text about how it was made.

Every text file of the README, ``docs/``, ``experiments/``, ``conf/``, ``uno/``, ``tests/``,
``benchmarks/`` and the cell sources of ``notebooks/`` is searched for process text: work
periods and their notes, the instructions and reviews behind a change, the machines it was
built on and paths outside the repository, dates of past work. Each pattern below writes one
letter of its word as a character class (``[i]``), so that this file, which the search covers
too, does not match itself. A failure lists every offending ``file:line``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (label, pattern), matched case-insensitively unless the pattern says otherwise
PATTERNS: list[tuple[str, str]] = [
    ("work period", r"(?<!jupyter )\bsess[i]ons?\b"),
    ("ordinal work period", r"\b(?:\w+th|first|second|third|last|previous|earlier)\s+sess[i]on"),
    ("process note", r"\bclos[i]ng notes?\b"),
    ("instructions", r"\bbr[i]ef(?:'s|s)?\b"),
    ("review", r"\brev[i]ewers?\b"),
    ("helper", r"\bhelper sess[i]ons?\b"),
    ("tracker", r"\biss[u]es?\b(?!\s+#\d)"),  # a cited repository's numbered ticket is a source
    ("tracker", r"iss[u]e\s*«"),
    ("counted work period", r"\btw[e]nty-"),
    ("build machine", r"\bth[i]s VM\b"),
    ("build machine", r"\bf[i]recracker\b"),
    ("build machine", r"\bth[i]s (?:2-core )?mach[i]ne\b"),
    ("build machine", r"\bthe 2-core mach[i]ne\b"),
    ("build machine", r"\bmach[i]nes? (?:th[i]s|the) project\b"),
    ("build machine", r"\bAMD EP[Y]C\b"),
    ("build machine", r"\bXe[o]n\b"),
    ("path outside the repository", r"/wor[k]/"),
    ("path outside the repository", r"\.\./sh[a]red/"),
    ("path outside the repository", r"\bsh[a]red/papers\b"),
    ("path outside the repository", r"\bpap[e]rs/0\d"),
    ("path outside the repository", r"/home/[a-z_][\w.-]*/"),
    ("path outside the repository", r"/Us[e]rs/\w"),
    ("path outside the repository", r"/r[o]ot/"),
    ("path outside the repository", r"(?-i:\bDES[I]GN\.md\b)"),  # the target architecture's file
    ("date of past work", r"\b202[6]-"),
]
REGEXES = [(label, re.compile(p, re.I)) for label, p in PATTERNS]

#: where the product's text lives
AREAS = ("README.md", "docs", "experiments", "conf", "uno", "tests", "benchmarks", "notebooks")
TEXT_SUFFIXES = {
    ".md",
    ".py",
    ".yaml",
    ".yml",
    ".txt",
    ".toml",
    ".cfg",
    ".ini",
    ".sh",
    ".json",
    ".csv",
    ".rst",
    ".ipynb",
}
#: folders that hold generated files, not the product's text
SKIP_DIRS = {"__pycache__", "results", "outputs", "multirun"}


def hits_in(text: str) -> list[str]:
    """The labels of the patterns ``text`` matches."""
    return sorted({label for label, rx in REGEXES if rx.search(text)})


def text_files(area: str) -> list[Path]:
    path = ROOT / area
    if path.is_file():
        return [path]
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix in TEXT_SUFFIXES
        and not any(part in SKIP_DIRS or part.startswith(".") for part in p.relative_to(ROOT).parts)
    )


def lines_of(path: Path) -> list[tuple[str, str]]:
    """(where, line) of a file's text; a notebook's cell sources only (``cell N, line M``)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix != ".ipynb":
        return [(str(i), line) for i, line in enumerate(text.splitlines(), 1)]
    cells = json.loads(text)["cells"]
    return [
        (f"cell {c} line {i}", line)
        for c, cell in enumerate(cells, 1)
        for i, line in enumerate("".join(cell.get("source", [])).splitlines(), 1)
    ]


def offending_lines(area: str) -> list[str]:
    found = []
    for path in text_files(area):
        for where, line in lines_of(path):
            labels = hits_in(line)
            if labels:
                rel = path.relative_to(ROOT)
                found.append(f"{rel}:{where}: [{', '.join(labels)}] {line.strip()[:120]}")
    return found


@pytest.mark.parametrize("area", AREAS)
def test_no_process_text(area):
    assert text_files(area), f"nothing to check under {area}"
    found = offending_lines(area)
    assert not found, f"{len(found)} lines of process text:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "as measured in the fifth sess" + "ion",
        "on the previous sess" + "ion's machine",
        "Speed at the twenty" + "-fifth run's end",
        "the bri" + "ef's reading",
        "see the clos" + "ing note",
        "Iss" + "ue «Presets»",
        "the iss" + "ue's acceptance run",
        "a comment from a revi" + "ewer",
        "on th" + "is VM, which hands memory back",
        "a Fire" + "cracker guest",
        "on th" + "is 2-core machine",
        "an AMD EP" + "YC host",
        "/wo" + "rk/data/000.txt",
        "../sha" + "red/pap" + "ers/004_2e7eada5f9d7c507.txt",
        "``pap" + "ers/002_3160f14936d8e845.txt``",
        "/ho" + "me/alice/uno/results",
        "(DESI" + "GN.md reference numbers)",
        "until 202" + "6-11-27 the slice was lost",
    ],
)
def test_the_guard_finds_process_text(text):
    assert hits_in(text), text


@pytest.mark.parametrize(
    "text",
    [
        "open it in a Jupyter sess" + "ion",
        "comments explain why, briefly",
        "see docs/design.md",
        "alibaba-edu/High-Precision-Congestion-Control issue #24",
        "about 1 min on a 2-core laptop-class machine",
        "hydra.launcher.setup='[\". ~/venvs/uno/bin/activate\"]'",
        "uno.metrics.provenance records the host it ran on",
    ],
)
def test_the_guard_leaves_product_text_alone(text):
    assert not hits_in(text), text
