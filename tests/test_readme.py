"""Every command and snippet in the README runs, so the README cannot go stale.

Commands run in one scratch directory, in the order the README gives them (an ``analyze.py``
reads the sweep the command before it wrote). Simulations run at reduced sizes: each
``uno-run`` gets a short stop time and small flows unless it sets them itself, and benchmarks
run at a small size once. Quickstart step 1's ``uno-run`` runs like the others; its install
part and step 2 are what CI runs (``.ci/run`` must hold step 2's command verbatim); the whole of
step 1 on a fresh virtual environment is the ``slow`` test at the end.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: extra arguments that shrink a simulation; a key the command sets itself is not overridden
REDUCE_RUN = {"engine.max_sim_time_ms": "20", "engine.sample_interval_us": "100"}
REDUCE_SIZE = {"workload.size_bytes": "1000000"}
REDUCE_BENCH = {
    "benchmarks/engine_speed.py": ["--size-bytes", "1000000", "--repeat", "1"],
    "benchmarks/fig3_speed.py": ["--size-bytes", "1000000", "--phantom-check-bytes", "1000000"],
    "benchmarks/fig10_speed.py": ["--workload", "mixed_artifact", "workload.n_flows=100"],
    "benchmarks/fluid_speed.py": [
        "--n-flows",
        "100",
        "--skip-sweep",
        "--repeat",
        "1",
        "--packet-repeat",
        "1",
    ],
    "benchmarks/scaling.py": [
        "--ks",
        "4",
        "--flows",
        "8",
        "--size-bytes",
        "50000",
        "--repeat",
        "1",
        "--idle",
        "0,64",
        "--concurrent",
        "4,16",
    ],
}


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced code block, in order (indented ones included)."""
    pattern = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```", re.S | re.M)
    return [(m.group(1), m.group(2)) for m in pattern.finditer(text)]


def bash_commands(body: str) -> list[str]:
    """Commands of a bash block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    commands = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        commands.append(re.sub(r"\s+#.*$", "", line))
    return commands


def readme_commands() -> list[str]:
    return [
        c
        for lang, body in code_blocks(README.read_text())
        if lang == "bash"
        for c in bash_commands(body)
    ]


def readme_python() -> list[str]:
    return [body for lang, body in code_blocks(README.read_text()) if lang == "python"]


def _reduced_run(args: list[str]) -> list[str]:
    keys = {a.split("=", 1)[0] for a in args if "=" in a}
    if "--cfg" in args or "--help" in args:
        return args
    reduce = dict(REDUCE_RUN)
    if "workload=flows" not in args:  # the one workload without a size_bytes field
        reduce.update(REDUCE_SIZE)
    return args + [f"{k}={v}" for k, v in reduce.items() if k not in keys]


def to_argv(command: str) -> list[str]:
    """The argv that runs ``command`` here, reduced in size."""
    words = shlex.split(command)
    if "&&" in words:  # Quickstart: the install part is CI's; run what it ends with
        words = words[len(words) - 1 - words[::-1].index("&&") + 1 :]
    head, args = words[0], words[1:]
    if head == "uno-run":
        return [sys.executable, "-m", "uno.cli", *_reduced_run(args)]
    if head == "uno-collect":
        return [sys.executable, "-m", "uno.metrics.sweep", *args]
    if head == "uno-plot":
        return [sys.executable, "-m", "uno.metrics.plots", *args]
    if head == "python" and args[0].startswith("benchmarks/"):
        return [sys.executable, str(ROOT / args[0]), *args[1:], *REDUCE_BENCH[args[0]]]
    if head == "python" and args[0].startswith("experiments/"):
        return [sys.executable, str(ROOT / args[0]), *args[1:]]
    if head == "pytest":
        return []  # Quickstart step 2 is CI itself (checked below)
    raise AssertionError(f"the README has a command this test does not know how to run: {command}")


def test_readme_has_the_commands_we_expect():
    commands = readme_commands()
    assert any(c.endswith("&& uno-run") for c in commands)
    assert any(c.endswith("&& pytest") for c in commands)
    assert any("hydra/launcher=joblib" in c for c in commands)
    assert readme_python()


def test_quickstart_step_2_is_what_ci_runs():
    step2 = next(c for c in readme_commands() if c.endswith("&& pytest"))
    install_and_test = step2.split("&& ", 2)[2]  # pip install -e ".[dev]" && pytest
    ci = (ROOT / ".ci" / "run").read_text()
    assert install_and_test.replace('"', "") in ci.replace('"', "").replace("--quiet ", "")


def test_every_readme_command_runs(tmp_path):
    for command in readme_commands():
        argv = to_argv(command)
        if not argv:
            continue
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def test_readme_error_example_is_what_the_command_prints(tmp_path):
    text = README.read_text()
    example = re.search(r"\$ (uno-run [^\n]+)\n(uno-run: [^\n]+)", text)
    assert example, "the README's error example is missing"
    argv = [sys.executable, "-m", "uno.cli", *shlex.split(example.group(1))[1:]]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip() == example.group(2)


def test_readme_cluster_command_is_checked(tmp_path, monkeypatch):
    """The SLURM example cannot submit here; every one of its jobs is checked as uno-run would
    before submitting, and the launcher config it names composes to submitit's SLURM launcher."""
    from uno.cli import precheck

    blocks = [
        body for lang, body in code_blocks(README.read_text()) if "hydra/launcher=slurm" in body
    ]
    assert len(blocks) == 1
    (command,) = bash_commands(blocks[0].replace("<partition>", "gpu").replace("$USER", "me"))
    monkeypatch.chdir(tmp_path)
    precheck(shlex.split(command)[1:], build=False)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno.cli",
            "hydra/launcher=slurm",
            "hydra.launcher.partition=gpu",
            "--cfg",
            "hydra",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SlurmLauncher" in proc.stdout and "partition: gpu" in proc.stdout


@pytest.mark.parametrize("index", range(len(readme_python())))
def test_readme_python_snippets_run_as_written(index, tmp_path):
    code = readme_python()[index]
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.slow
def test_quickstart_step_1_verbatim_on_a_fresh_venv(tmp_path):
    """Quickstart step 1 exactly as written, in a copy of the project (installs from the
    package index: minutes)."""
    step1 = next(c for c in readme_commands() if c.endswith("&& uno-run"))
    project = tmp_path / "project"
    subprocess.run(
        ["git", "clone", "-q", str(ROOT), str(project)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    proc = subprocess.run(
        ["bash", "-c", step1], cwd=project, capture_output=True, text=True, timeout=3600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "mean FCT us" in proc.stdout and "results: " in proc.stdout
