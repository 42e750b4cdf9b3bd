"""The wheel built from the working tree: it holds every package under ``uno/``, every config
and every shipped CDF, and, installed into a fresh virtual environment outside the repository,
it runs ``uno-run`` with each engine, a sweep, ``uno-collect`` and ``uno-plot`` from a folder
where the repository is not on the path.

The fresh environment borrows this environment's dependencies (numpy, numba, pandas, ...)
through a ``.pth`` file that holds their site-packages folders as plain lines: Python appends a
plain line to ``sys.path`` without reading the ``.pth`` files in that folder, so an editable
install of ``uno`` there stays invisible. Numba compiles the kernels again in the fresh install
(its cache lives beside the installed modules): the fluid and hybrid runs, which compile the
most, are a test of their own marked ``slow``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest

from uno.workload.cdf import load_cdf

ROOT = Path(__file__).resolve().parents[1]

#: what setuptools reads to build the wheel (copied, so the build leaves nothing in the tree)
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "uno", "hydra_plugins", "conf", "data")

#: packages whose folders lie outside uno/ (package-dir in pyproject.toml: conf/, data/)
MAPPED_PACKAGES = ("uno.conf", "uno.data")

BIN = "Scripts" if os.name == "nt" else "bin"

#: a dumbbell with two small flows to the receiver (host 4) across the bottleneck: the 50 KB
#: flow is the hybrid engine's packet flow, the 100 KB flow its fluid flow
TINY = [
    "topo=dumbbell",
    "workload=flows",
    "workload.flows=[{src:0,dst:4,size_bytes:50000},{src:1,dst:4,size_bytes:100000}]",
    "engine.progress=false",
    "engine.max_sim_time_ms=10",
]

#: per engine kind, the options of its tiny run. The packet and hybrid runs use the Python data
#: plane: the compiled one would add minutes of Numba compilation, and the fluid, hybrid and
#: max-min runs already run compiled kernels from the installed package
ENGINE_RUNS = {
    "packet": ["engine.kind=packet", "engine.dataplane=python"],
    "fluid": ["engine.kind=fluid"],
    "hybrid": [
        "engine.kind=hybrid",
        "engine.hybrid_packet_max_bytes=50000",
        "engine.dataplane=python",
    ],
    "maxmin": ["engine.kind=maxmin"],
}

#: run inside the fresh environment: where uno, its configs and its CDFs are found
IMPORT_CHECK = """
import importlib.resources, json, sys
import uno
from uno.workload.cdf import load_cdf
names = sys.argv[1:]
print(json.dumps({
    "uno": uno.__file__,
    "conf": str(importlib.resources.files("uno.conf")),
    "data": str(importlib.resources.files("uno.data")),
    "editable": sorted(m for m in sys.modules if m.startswith("__editable__")),
    "cdf_mean_bytes": {n: load_cdf(n).mean_bytes() for n in names},
}))
"""


# ---- building the wheel and reading what it holds -----------------------------------------


def build_wheel(src_root: Path, work: Path) -> Path:
    """Build the wheel of ``src_root`` from a copy in ``work`` (offline, with this
    environment's setuptools) and return its path."""
    src = work / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.egg-info")
    for name in BUILD_INPUTS:
        path = src_root / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name)
    dist = work / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    proc = _run([*cmd, "--no-index", "--quiet", "--wheel-dir", str(dist), str(src)], work)
    assert proc.returncode == 0, (
        f"wheel build failed (the dev extra brings setuptools>=77):\n{proc.stderr[-3000:]}"
    )
    (wheel,) = dist.glob("uno-*.whl")
    return wheel


def tree_files(folder: Path, pattern: str) -> list[str]:
    """Files under ``folder`` matching ``pattern`` (caches and hidden files left out), as
    paths relative to it."""
    rels = (f.relative_to(folder) for f in folder.rglob(pattern) if f.is_file())
    return [
        r.as_posix() for r in rels if not any(p.startswith((".", "__pycache__")) for p in r.parts)
    ]


def wheel_problems(names: Iterable[str], root: Path) -> list[str]:
    """What the wheel with member ``names`` lacks (or holds extra) compared with the source
    tree at ``root``: packages (every folder under uno/ with Python modules, uno.conf, uno.data
    and the launcher under hydra_plugins/), modules, config YAML files under conf/ and files
    under data/cdf/."""
    names = set(names)
    modules = tree_files(root / "uno", "*.py")
    plugins = tree_files(root / "hydra_plugins", "*.py")  # (uno's Hydra launcher and sweeper)
    expected = {".".join(["uno", *m.split("/")[:-1]]) for m in modules} | set(MAPPED_PACKAGES)
    expected |= {".".join(["hydra_plugins", *m.split("/")[:-1]]) for m in plugins}
    in_wheel = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith(".py")}
    problems = [f"package {p} is not in the wheel" for p in sorted(expected - in_wheel)]
    problems += [f"package {p} is in the wheel only" for p in sorted(in_wheel - expected)]
    wanted = [f"uno/{m}" for m in modules] + [f"hydra_plugins/{m}" for m in plugins]
    wanted += [f"uno/conf/{f}" for f in tree_files(root / "conf", "*.yaml")]
    wanted += [f"uno/data/cdf/{f}" for f in tree_files(root / "data" / "cdf", "*")]
    problems += [f"{w} is not in the wheel" for w in sorted(set(wanted) - names)]
    return problems


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(ROOT, tmp_path_factory.mktemp("wheel"))


def test_wheel_holds_every_package_config_and_cdf(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = zf.read(entry_points).decode()
    assert wheel_problems(names, ROOT) == []
    for script in ("uno-run", "uno-collect", "uno-plot", "uno-claims", "uno-eval"):
        assert f"{script} =" in scripts
    # the nested Hydra groups the command line composes
    assert "uno/conf/hydra/job_logging/uno.yaml" in names
    assert "uno/conf/hydra/launcher/slurm.yaml" in names


def test_wheel_check_names_what_a_wheel_lacks(wheel):
    """A wheel without a subpackage, a config or a CDF fails the check, naming each."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    lost = ("uno/fluid/", "uno/conf/hydra/launcher/slurm.yaml", "uno/data/cdf/web_search.csv")
    problems = wheel_problems([n for n in names if not n.startswith(lost)], ROOT)
    assert "package uno.fluid is not in the wheel" in problems
    assert "uno/fluid/engine.py is not in the wheel" in problems
    assert "uno/conf/hydra/launcher/slurm.yaml is not in the wheel" in problems
    assert "uno/data/cdf/web_search.csv is not in the wheel" in problems


# ---- the wheel installed in a fresh virtual environment -----------------------------------


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _dependency_paths() -> list[str]:
    """The site-packages folders this environment's dependencies come from."""
    candidates = [*site.getsitepackages(), site.getusersitepackages()]
    return [p for p in dict.fromkeys(candidates) if p in sys.path and Path(p).is_dir()]


def fresh_venv(venv: Path, work: Path) -> tuple[Path, dict]:
    """A virtual environment without uno that sees this environment's dependencies; returns
    its python and the environment variables to run its commands with."""
    proc = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work)
    assert proc.returncode == 0, proc.stderr
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], work
    )
    (Path(purelib.stdout.strip()) / "_uno_test_dependencies.pth").write_text(
        "\n".join(_dependency_paths()) + "\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / BIN}{os.pathsep}{env.get('PATH', '')}"}
    env["MPLBACKEND"] = "Agg"
    return python, env


def _summary(out: Path) -> dict:
    assert (out / "summary.json").is_file(), f"no summary.json in {out}"
    return json.loads((out / "summary.json").read_text())


def _check_finished(out: Path, n_flows: int) -> None:
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == n_flows and flows["finish_ps"].notna().all(), out


def installed_wheel(wheel: Path, tmp_path: Path) -> tuple[Path, Path, Path, dict]:
    """The wheel installed into a fresh virtual environment; returns (venv, work folder,
    python, environment variables)."""
    venv, work = tmp_path / "venv", tmp_path / "work"
    work.mkdir()
    python, env = fresh_venv(venv, tmp_path)
    # without the wheel, uno is not importable: the editable install is not seen
    proc = _run([str(python), "-c", "import uno"], work, env)
    assert proc.returncode != 0 and "No module named 'uno'" in proc.stderr, proc.stderr
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
    proc = _run([*pip, "--no-index", "--quiet", str(wheel)], work, env)
    assert proc.returncode == 0, proc.stderr
    return venv, work, python, env


def run_tool(venv: Path, work: Path, env: dict, tool: str, *args: str):
    proc = _run([str(venv / BIN / tool), *args], work, env)
    assert proc.returncode == 0, f"{tool} {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def check_engine_run(work: Path, kind: str) -> None:
    summary = _summary(work / kind)
    assert summary["run"]["engine"] == kind
    # no git state: the run imported uno from the venv, not from the checkout
    assert summary["provenance"]["git"] is None
    _check_finished(work / kind, 2)


def test_wheel_installed_in_fresh_venv_runs_packets_max_min_and_the_tools(wheel, tmp_path):
    """The installed wheel finds its configs and CDFs, runs the packet engine (Python data
    plane) and the max-min engine, a sweep, ``uno-collect`` and ``uno-plot``."""
    venv, work, python, env = installed_wheel(wheel, tmp_path)
    cdfs = sorted(p.stem for p in (ROOT / "data" / "cdf").glob("*.csv"))
    proc = _run([str(python), "-c", IMPORT_CHECK, *cdfs], work, env)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    for key in ("uno", "conf", "data"):
        assert Path(found[key]).resolve().is_relative_to(venv.resolve()), found
    assert found["editable"] == []
    assert found["cdf_mean_bytes"] == {n: load_cdf(n).mean_bytes() for n in cdfs}

    helped = run_tool(venv, work, env, "uno-run", "--help").stdout
    assert "experiment: " in helped and "fig10_load" in helped and "dumbbell" in helped
    for kind in ("packet", "maxmin"):
        run_tool(venv, work, env, "uno-run", *TINY, *ENGINE_RUNS[kind], f"out_dir={work / kind}")
        check_engine_run(work, kind)

    sweep = work / "sweep"
    sweep_args = [*TINY, *ENGINE_RUNS["maxmin"], "topo.bottleneck_rate_gbps=50,100"]
    run_tool(venv, work, env, "uno-run", "-m", *sweep_args, f"hydra.sweep.dir={sweep}")
    table = work / "sweep_flows.parquet"
    collected = run_tool(venv, work, env, "uno-collect", str(sweep), "--out", str(table))
    assert "2 job folders, 2 complete" in collected.stdout
    assert len(pd.read_parquet(table)) == 4
    plotted = run_tool(venv, work, env, "uno-plot", str(sweep))
    for job in ("0", "1"):
        assert _summary(sweep / job)["run"]["engine"] == "maxmin"
    pngs = sorted(sweep.glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert all(f"wrote {p}" in plotted.stdout for p in pngs)


@pytest.mark.slow
def test_wheel_installed_in_fresh_venv_runs_the_fluid_and_hybrid_engines(wheel, tmp_path):
    """The installed wheel's fluid run compiles its kernels beside the installed modules
    (minutes); the hybrid run after it loads them."""
    venv, work, _, env = installed_wheel(wheel, tmp_path)
    for kind in ("fluid", "hybrid"):
        t0 = time.monotonic()
        run_tool(venv, work, env, "uno-run", *TINY, *ENGINE_RUNS[kind], f"out_dir={work / kind}")
        check_engine_run(work, kind)
        print(f"wheel {kind} run {time.monotonic() - t0:.0f} s")
