"""benchmarks/cpp_reference.py without the artifact: the command lines it builds for the Fig. 10
lines, and how it reads the artifact's flow lines and compares flows one by one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ref():
    spec = importlib.util.spec_from_file_location(
        "cpp_reference", ROOT / "benchmarks" / "cpp_reference.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fig10_command_lines(ref, tmp_path):
    tm, variant, ours, _ = ref.SCENARIOS["fig10_uno"]
    cmd = ref.cpp_command(tmp_path, variant, tm, tmp_path / "log", "0")
    assert cmd[0] == str(tmp_path / ref.BINARY)

    def flag(name):
        return cmd[cmd.index(name) + 1]

    assert flag("-strat") == "simple_subflow" and flag("-tm") == tm
    assert flag("-collect_data") == "0" and flag("-phantom_slowdown") == "10"
    assert flag("-logging-folder") == str(tmp_path / "log") and "-noFi" in cmd
    assert ours == ["experiment=artifact_fig10", "scheme=artifact_uno"]
    gemini = ref.cpp_command(tmp_path, "fig10_gemini", tm, tmp_path, "1")
    assert gemini[gemini.index("-strat") + 1] == "ecmp_classic"
    assert gemini[gemini.index("-geminiT") + 1] == "5"
    for name, (tm, *_rest) in ref.SCENARIOS.items():
        assert tm.endswith(".cm"), name


def test_flow_lines_and_the_per_flow_comparison(ref):
    out = (
        "Flow id=3 Completion time is 10.5us - Flow Finishing Time 12us - Flow Start Time 1 - "
        "Size Finished Flow 4096 - From 5 - To 7 - Flow Retx Count 0\n"
        "Flow id=4 Completion time is 2000us - Flow Finishing Time 2100us - Flow Start Time 100 - "
        "Size Finished Flow 99 - From 5 - To 200 - Flow Retx Count 3\n"
    )
    got = {int(m.group(1)): float(m.group(2)) for m in ref.FLOW_LINE.finditer(out)}
    assert got == {3: 10.5, 4: 2000.0}
    cpp = {3: ("intra", 10.5), 4: ("inter", 2000.0)}
    ours = {3: ("intra", 31.5), 4: ("inter", 1900.0)}
    text = ref.per_flow(cpp, ours)
    assert "intra 1 flows, median ours/C++ 3.000, 1 off >2x" in text
    assert "inter 1 flows, median ours/C++ 0.950, 0 off >2x" in text
    stats = ref._class_stats(cpp)
    assert stats["intra"] == (10.5, 10.5)
