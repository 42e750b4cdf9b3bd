"""The exploration notebook's code cells run as written (about 10 s)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb"


def test_explore_notebook_runs():
    nb = json.loads(NOTEBOOK.read_text())
    ns: dict = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            exec(compile(source, str(NOTEBOOK), "exec"), ns)
    assert ns["result"].flows["finish_ps"].notna().all()
    assert len(ns["jain"]) > 0
