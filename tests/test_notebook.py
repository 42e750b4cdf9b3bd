"""Every notebook under ``notebooks/`` runs as shipped in a Jupyter kernel of this interpreter,
in a temporary copy of the repository's layout (so the runs and sweeps it writes land there, not
in the repository's ``results/``), and shows its key outputs; the notebooks are committed without
outputs. ``uno_results.ipynb``, which runs its reduced stand-in sweeps (20 short runs), takes the
longest."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: per notebook, expressions that must be true in its kernel after its last cell; ``LAYOUT`` is
#: the temporary repository root. A notebook not listed must only run without error.
KEY_OUTPUTS = {
    "explore.ipynb": [
        "ROOT == LAYOUT and RUN_DIR.is_relative_to(LAYOUT / 'results')",
        "(RUN_DIR / 'summary.json').is_file() and Path(result.run_dir) == RUN_DIR",
        "len(fct) == len(result.flows) > 0 and fct['fct_us'].notna().all()",
        "set(fct['cls']) == {'intra', 'inter'} and set(class_rates) == {'intra', 'inter'}",
        "len(rates) > 0 and len(jain) > 0 and jain['jain'].between(0, 1).all()",
        "len(queues) > 0 and queues['phantom_bytes'].max() > 0",
        "len(stored['flows']) == len(result.flows)",
    ],
    "uno_results.ipynb": [
        "ROOT == LAYOUT",
        # no full sweep in a fresh layout: every figure is the reduced stand-in, run here
        "list(sources['source']) == ['reduced stand-in'] * 3",
        "all(folder.is_relative_to(LAYOUT / 'results') for folder, _ in SWEEPS.values())",
        "list(sources['runs']) == [8, 8, 4]",
        "[len(expand_sweep(overrides(e, AXES[e][0]))) for e in AXES] == [16, 16, 4]",
        "set(fig10.index.get_level_values('label')) == {'uno_ecmp', 'uno', 'gemini', 'mprdma_bbr'}",
        "set(fig10.index.get_level_values('load')) == {0.2, 0.4} and len(fig10) == 16",
        "fig10['flows'].sum() == 8 * 200 - fig10['unfinished'].sum()",
        "set(slowdown11.index.get_level_values('rtt_ratio')) == {8, 512}",
        "set(slowdown11.index.get_level_values('cls')) == {'intra', 'inter', 'all'}",
        "slowdown11.notna().all().all() and len(fig12) == 8 and len(by_size) > 0",
        "(p99_vs_uno(fig12)['uno'] == 1).all()",
        "len(list(FIGURES.glob('*.png'))) == 7",
    ],
}

PROBE = """\
import json as _json, sys as _sys
from pathlib import Path as _Path
LAYOUT = _Path({layout!r})
print(_json.dumps({{"python": _sys.executable,
                    "checks": {{_e: bool(eval(_e, globals())) for _e in {checks!r}}}}}))
"""


@pytest.fixture
def this_python_kernel(tmp_path, monkeypatch):
    """A ``python3`` kernelspec that starts this interpreter, first on the Jupyter path of this
    test only (nothing is registered outside ``tmp_path``)."""
    kernels = tmp_path / "jupyter" / "kernels"
    write_kernel_spec(kernels / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "python3"


def _outputs(cell) -> list[dict]:
    return cell.get("outputs", []) if cell.cell_type == "code" else []


def test_notebooks_are_found():
    assert {p.name for p in NOTEBOOKS} >= {"explore.ipynb", "uno_results.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: code cells {dirty} hold outputs or execution counts"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


def test_results_notebook_names_the_documented_sweeps():
    """The full-sweep commands the results notebook shows are its experiments' README commands."""
    nb = nbformat.read(ROOT / "notebooks" / "uno_results.ipynb", as_version=4)
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")

    def flat(s: str) -> str:
        return " ".join(s.replace("\\\n", " ").split())

    commands = [flat(c) for c in re.findall(r"uno-run -m .*?artifact_mix", text, re.S)]
    assert len(commands) == 3
    for command in commands:
        experiment = re.search(r"experiment=(\w+)", command).group(1)
        assert command in flat((ROOT / "experiments" / experiment / "README.md").read_text())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_in_a_fresh_layout(path, tmp_path, this_python_kernel):
    layout = tmp_path / "repo"
    shutil.copytree(ROOT / "notebooks", layout / "notebooks", ignore=shutil.ignore_patterns(".*"))
    shipped = {p.name for p in (layout / "notebooks").iterdir()}
    nb = nbformat.read(layout / "notebooks" / path.name, as_version=4)
    checks = KEY_OUTPUTS.get(path.name, [])
    nb.cells.append(nbformat.v4.new_code_cell(PROBE.format(layout=str(layout), checks=checks)))
    # as Jupyter and nbconvert do, the kernel starts in the notebook's folder
    NotebookClient(
        nb,
        kernel_name=this_python_kernel,
        timeout=600,
        resources={"metadata": {"path": str(layout / "notebooks")}},
    ).execute()

    errors = [o for cell in nb.cells for o in _outputs(cell) if o.output_type == "error"]
    assert not errors
    probe = json.loads(nb.cells[-1].outputs[-1]["text"])
    assert Path(probe["python"]).resolve() == Path(sys.executable).resolve()
    failed = [expr for expr, ok in probe["checks"].items() if not ok]
    assert not failed, f"{path.name}: key outputs not as expected: {failed}"
    shown = [o for cell in nb.cells[:-1] for o in _outputs(cell)]
    assert shown, f"{path.name} shows nothing"
    # whatever the notebook wrote is under the layout's results/, nothing beside the notebooks
    assert {p.name for p in (layout / "notebooks").iterdir()} == shipped
