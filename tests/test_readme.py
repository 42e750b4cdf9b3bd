"""Every command and snippet in the README runs, so the README cannot go stale.

What runs is decided by a code block's language, and nothing else:

* ``bash`` blocks: every command runs, in one scratch directory, in the order the README gives
  them (``uno-collect`` reads the sweep the command before it wrote). Simulations run at
  reduced sizes: each ``uno-run`` gets a short stop time and small flows unless it sets them
  itself, and benchmarks run at a small size once. Quickstart step 1's ``uno-run`` runs like
  the others; its install part and step 2 are what CI runs (``.ci/run`` must hold step 2's
  command verbatim); the whole of step 1 on a fresh virtual environment is the ``slow`` test
  at the end.
* ``python`` blocks: each runs as written, in a scratch directory.
* ``text`` blocks are shown, not run: what they hold cannot run here (a browser, a cluster, an
  extra the test environment lacks) or is an example of output. Each must be one of the kinds
  :data:`TEXT_BLOCK_CHECKS` knows, and is checked another way: the error example's command is
  run and its message compared, every job of the cluster command is checked as ``uno-run``
  would before submitting, and the notebook commands name notebooks and an extra that exist
  (the notebooks themselves run in ``tests/test_notebook.py``).
* blocks without a language are figures: they must hold no command.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: extra arguments that shrink a simulation; a key the command sets itself is not overridden
#: (a shortened run may stop before its flows finish: it is time-bounded on purpose)
REDUCE_RUN = {
    "engine.max_sim_time_ms": "20",
    "engine.sample_interval_us": "100",
    "engine.allow_unfinished": "true",
}
REDUCE_SIZE = {"workload.size_bytes": "1000000"}
REDUCE_BENCH = {
    "benchmarks/engine_speed.py": ["--size-bytes", "1000000", "--repeat", "1"],
    # (one engine of each kind: the fast presets are the same engines at coarser steps)
    "benchmarks/fluid_speed.py": [
        "--suites",
        "paper",
        "--schemes",
        "uno_ecmp",
        "--n-flows",
        "60",
        "--engines",
        "packet-c,fluid,hybrid,maxmin",
    ],  # fmt: skip
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


def readme_text_blocks() -> list[str]:
    return [body for lang, body in code_blocks(README.read_text()) if lang == "text"]


#: the kinds of ``text`` block, each with the test that checks it
TEXT_BLOCK_CHECKS = {
    "error example": (
        lambda body: body.startswith("$ uno-run "),
        "test_readme_error_example_is_what_the_command_prints",
    ),
    "cluster sweep": (
        lambda body: "hydra/launcher=slurm" in body,
        "test_readme_cluster_command_is_checked",
    ),
    "notebooks": (
        lambda body: "jupyter " in body,
        "test_readme_notebook_commands_name_what_exists",
    ),
}


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
    assert any("hydra.launcher.n_jobs=2" in c for c in commands)  # uno's launcher, 2 workers
    assert readme_python()


def test_readme_is_short():
    assert len(README.read_text().splitlines()) <= 155


def test_every_text_block_is_a_kind_that_is_checked():
    for body in readme_text_blocks():
        kinds = [k for k, (is_kind, _) in TEXT_BLOCK_CHECKS.items() if is_kind(body)]
        assert len(kinds) == 1, f"a text block of no known kind, so checked by nothing:\n{body}"
    for _, test_name in TEXT_BLOCK_CHECKS.values():
        assert callable(globals()[test_name])


def test_untagged_blocks_are_figures():
    for lang, body in code_blocks(README.read_text()):
        if lang == "":
            commands = [ln for ln in body.splitlines() if re.match(r"\s*(\$|uno-|python|pip)", ln)]
            assert not commands, f"a command in a block without a language: {commands}"


def test_readme_notebook_commands_name_what_exists():
    (block,) = [b for b in readme_text_blocks() if "jupyter " in b]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in re.findall(r"\.\[(\w+)\]", block):
        assert extra in extras, f"the README installs an extra pyproject.toml lacks: {extra}"
        assert any(dep.startswith("jupyter") for dep in extras[extra])
    notebooks = re.findall(r"notebooks/[\w./-]+\.ipynb", block + README.read_text())
    assert notebooks
    for nb in notebooks:
        assert (ROOT / nb).exists(), nb
    for name in re.findall(r"`(\w+\.ipynb)`", README.read_text()):
        assert (ROOT / "notebooks" / name).exists(), name


def test_quickstart_step_2_is_what_ci_runs():
    step2 = next(c for c in readme_commands() if c.endswith("&& pytest"))
    install_and_test = step2.split("&& ", 2)[2]  # pip install -e ".[dev]" && pytest
    ci = (ROOT / ".ci" / "run").read_text()
    assert install_and_test.replace('"', "") in ci.replace('"', "").replace("--quiet ", "")


def is_benchmark(command: str) -> bool:
    return command.startswith("python benchmarks/")


def run_readme_command(command: str, cwd: Path) -> None:
    argv = to_argv(command)
    if not argv:
        return
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def test_every_readme_command_runs(tmp_path):
    """The README's runs, sweeps and tools, in its order (the tools read the sweeps' folders);
    its benchmarks each on their own (:func:`test_readme_benchmark_runs`)."""
    for command in readme_commands():
        if not is_benchmark(command):
            run_readme_command(command, tmp_path)


@pytest.mark.parametrize(
    "command", [c for c in readme_commands() if is_benchmark(c)], ids=lambda c: c.split()[1]
)
def test_readme_benchmark_runs(tmp_path, command):
    run_readme_command(command, tmp_path)


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
