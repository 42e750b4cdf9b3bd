"""The documentation cannot drift from the software.

``docs/configuration.md`` is what ``python -m uno.config.reference`` prints from the schema and
``conf/``; every config field has doc text in the schema; and every config option the README and
``docs/`` name (``group.field``, ``group.field: value``, ``group=option``) exists, with a value
the field accepts.
"""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from uno.config.reference import (
    GROUP_DOCS,
    all_fields,
    field_doc,
    group_options,
    undocumented,
)

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "configuration.md"
REGENERATE = "python -m uno.config.reference > docs/configuration.md"

#: the documents whose option names are checked (the generated reference is checked above)
DOCUMENTS = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p != REFERENCE)]
#: the top-level names of the config: a backticked dotted name starting with one is an option
CONFIG_ROOTS = ("topo", "workload", "transport", "cc", "lb", "switch", "engine", "faults", "ec")
FILE_SUFFIXES = (".py", ".md", ".yaml", ".yml", ".csv", ".json", ".txt", ".parquet")
GROUPS = tuple(p.name for p in (ROOT / "conf").iterdir() if p.is_dir() and p.name != "hydra")


def test_configuration_reference_is_what_the_schema_generates():
    proc = subprocess.run(
        [sys.executable, "-m", "uno.config.reference"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == REFERENCE.read_text(), f"docs/configuration.md is stale: {REGENERATE}"


def test_every_config_group_is_in_the_reference():
    assert set(GROUPS) == set(GROUP_DOCS)


def test_every_config_field_has_doc_text():
    missing = undocumented()
    assert not missing, (
        "fields without a '#:' comment in the schema (or their parameter class): "
        f"{missing}; then {REGENERATE}"
    )


@dataclass
class _Example:
    #: a doc comment above the field
    #: over two lines
    above: int = 1
    after: int = 2  # a comment after it
    #: both
    both: float = 3.0  # and more
    # an ordinary comment is not documentation
    bare: int = 4


@pytest.mark.parametrize(
    "name,doc",
    [
        ("above", "a doc comment above the field over two lines"),
        ("after", "a comment after it"),
        ("both", "both and more"),
        ("bare", ""),
    ],
)
def test_field_doc_reads_the_comments(name, doc):
    assert field_doc(_Example, name) == doc


_KEY = re.compile(
    rf"(?<![\w./])((?:{'|'.join(CONFIG_ROOTS)})\.[\w.\[\]]*\w\]?)(?:(?::\s*|=)([^\s,;()]+))?"
)
_OPTION = re.compile(rf"(?<![\w./])({'|'.join(GROUPS)})=([\w,]+)")


def option_names(text: str) -> list[tuple[int, str, str]]:
    """(line, name, value or "") of every config option a document names in backticks: a field
    (``group.field``, with ``: value`` or ``=value``) or an option (``group=option``)."""
    found = []
    for m in re.finditer(r"`([^`\n]+)`", text):
        line = text.count("\n", 0, m.start()) + 1
        for k in _KEY.finditer(m.group(1)):
            found.append((line, k.group(1), (k.group(2) or "").strip("'\"")))
        for o in _OPTION.finditer(m.group(1)):
            found.append((line, o.group(1), o.group(2)))
    return found


def unknown_options(text: str) -> list[str]:
    """The option names of ``text`` that do not exist, or with a value the field refuses."""
    fields = all_fields()
    sections = {p.rsplit(".", i)[0] for p in fields for i in range(1, p.count(".") + 1)}
    bad = []
    for line, key, value in option_names(text):
        if key.endswith(FILE_SUFFIXES):  # a file such as ``engine.py``, not an option
            continue
        if key in GROUPS:
            options = set(group_options(key))
            if not set(value.split(",")) <= options:
                bad.append(f"line {line}: {key}={value} (options: {sorted(options)})")
            continue
        path = re.sub(r"\[\d+\]", "[i]", key)
        if path in sections and not value:  # a group of fields, e.g. ``transport.intra``
            continue
        if path not in fields:
            bad.append(f"line {line}: {key} (no such field)")
            continue
        owner, f = fields[path]
        choices = f.metadata.get("choices")
        if value and value != "null" and choices is not None:
            allowed = set(choices() if callable(choices) else choices)
            if value not in allowed:
                bad.append(f"line {line}: {key}: {value} (accepted: {sorted(allowed)})")
        elif value and typing.get_type_hints(owner)[f.name] in (bool, bool | None):
            if value not in ("true", "false", "null"):
                bad.append(f"line {line}: {key}: {value} (true or false)")
    return bad


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documents_name_only_options_that_exist(doc):
    bad = unknown_options(doc.read_text())
    assert not bad, f"{doc.relative_to(ROOT)} names options that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "text",
    [
        "`switch.ack_bypass: true`",
        "`transport.rto_intra_us`",
        "`cc.gemini.alpha_update: per_base_rtt`",
        "`switch=ecn_border`",
        "`transport.pad_last_packet: maybe`",
    ],
)
def test_the_option_check_finds_what_does_not_exist(text):
    assert unknown_options(text), text


def test_the_option_check_accepts_what_exists():
    text = (
        "`switch.ack_priority: true`, `transport.intra.rto_base_rtts: 2.875`, "
        "`cc.gemini.alpha_update: base_rtt`, `switch=ecn_uno_artifact`, `cc=uno,gemini`, "
        "`faults.losses[0].probability`, `topo.wan_delay_us=443`"
    )
    assert len(option_names(text)) == 7
    assert not unknown_options(text)
