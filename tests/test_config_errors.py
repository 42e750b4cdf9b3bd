"""Bad configuration stops before the run, and before anything is written, with one line naming
the field, the value and what is accepted, and exit status 2.

The bad-value table is built by walking the schema, so a numeric field added later is covered
the moment it is declared (and a field declared without a rule fails
``test_every_numeric_field_declares_a_rule``)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
import typing

import pytest

import uno
from uno.cli import main
from uno.config.fields import INT_LIMIT
from uno.config.schema import TOPO_SCHEMAS, WORKLOAD_SCHEMAS, FlowEntry, RunConfig
from uno.config.validate import _unwrap
from uno.core.errors import ConfigError


def _walk(cls: type, prefix: str):
    """(path, base type, field) of every numeric field under dataclass ``cls``."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        base, _ = _unwrap(hints[f.name])
        path = f"{prefix}.{f.name}" if prefix else f.name
        if dataclasses.is_dataclass(base):
            yield from _walk(base, path)
        elif base in (int, float):
            yield path, base, f


def numeric_fields() -> list[tuple[list[str], str, type, dataclasses.Field]]:
    """(overrides selecting the schema, path, type, field) for every numeric config field."""
    out = [([], path, base, f) for path, base, f in _walk(RunConfig, "")]
    for kind, cls in TOPO_SCHEMAS.items():
        out += [([f"topo={kind}"], p, b, f) for p, b, f in _walk(cls, "topo")]
    for kind, cls in WORKLOAD_SCHEMAS.items():
        out += [([f"workload={kind}"], p, b, f) for p, b, f in _walk(cls, "workload")]
    out += [(["workload=flows"], p, b, f) for p, b, f in _walk(FlowEntry, "workload.flows[0]")]
    return out


def bad_values(base: type, rule) -> list[str]:
    """Values the field must refuse: NaN, infinities, negative, zero and too large where the
    rule excludes them, and beyond the rule's upper bound."""
    values = ["nan", "inf"]
    if rule.low >= 0:
        values.append("-1")
    if not rule.accepts(0):
        values.append("0")
    values.append(str(10**30) if base is int else "1e300")
    if math.isfinite(rule.high):
        above = rule.high + 1 if base is int else rule.high * 2 + 1
        values.append(str(int(above)) if base is int else repr(float(above)))
    return values


def override_for(path: str, value: str) -> str:
    if path.startswith("workload.flows[0]."):
        entry = {"src": "0", "dst": "1", "size_bytes": "1000"}
        entry[path.rsplit(".", 1)[1]] = value
        return "workload.flows=[{" + ",".join(f"{k}:{v}" for k, v in entry.items()) + "}]"
    return f"{path}={value}"


def _cases() -> list:
    """Every (field, bad value) pair. The default run checks every field with one of its bad
    values, taken in turn so that every kind of bad value is checked on many fields; the rest
    of the pairs (the same generic rule, other values) are ``slow``: each case composes a whole
    config, and the full table takes minutes."""
    cases = []
    for i, (pre, path, base, f) in enumerate(numeric_fields()):
        values = bad_values(base, f.metadata["rule"])
        for j, v in enumerate(values):
            marks = () if j == i % len(values) else (pytest.mark.slow,)
            cases.append(
                pytest.param(pre + [override_for(path, v)], path, id=f"{path}={v}", marks=marks)
            )
    return cases


CASES = _cases()


def refused(argv, capsys) -> str:
    """Run ``uno-run`` in-process; it must exit with 2 before Hydra starts. Returns stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_every_numeric_field_declares_a_rule():
    missing = [path for _, path, _, f in numeric_fields() if "rule" not in f.metadata]
    assert not missing, f"numeric config fields without a rule: {missing}"
    assert len(CASES) > 400  # the walk really found the schema


@pytest.mark.parametrize("argv,field", CASES)
def test_every_bad_numeric_value_is_refused_by_name(argv, field, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused(argv, capsys)
    assert line.startswith(f"uno-run: configuration error: {field}"), line
    assert "must be" in line and "got" in line, line
    assert not any(tmp_path.iterdir()), "a refused config wrote something"


@pytest.mark.parametrize(
    "override,field",
    [
        ("+unknown=1", "unknown"),
        ("+sed=3", "sed"),
        ("+topo.foo=1", "topo.foo"),
        ("+cc.uno.gamma=2", "cc.uno.gamma"),
        ("+switch.ecn.kmid_frac=0.5", "switch.ecn.kmid_frac"),
        ("cc.dctcp.gg=0.1", "cc.dctcp.gg"),
        ("topo.kk=8", "topo.kk"),
        ("sed=3", "sed"),
    ],
)
def test_unknown_keys_are_refused_even_with_plus(override, field, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused([override], capsys)
    assert f"error: {field}" in line and "unknown key" in line, line
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "overrides,field",
    [
        (["topo.k=eight"], "topo.k"),
        (["seed=one"], "seed"),
        (["engine.max_sim_time_ms=[1]"], "engine.max_sim_time_ms"),
        (["engine.sample_rates=maybe"], "engine.sample_rates"),
        (["cc=unoo"], "cc"),
        (["switch.ecn.kmin_frac=0.8", "switch.ecn.kmax_frac=0.5"], "switch.ecn.kmin_frac"),
        (["switch.ecn.kmin_bytes=5000", "switch.ecn.kmax_bytes=1000"], "switch.ecn.kmin_bytes"),
        (["switch.ecn.kmin_bytes=5000"], "switch.ecn.kmin_bytes"),
        (["workload.receiver=999"], "workload.receiver"),
        (
            ["workload=flows", "workload.flows=[{src:0,dst:300,size_bytes:10}]"],
            "workload.flows[0].dst",
        ),
        (["workload=flows", "workload.flows=[{src:0,dst:1}]"], "workload.flows[0].size_bytes"),
        (["workload=flows", "workload.flows=[{src:0,dst:1,size_bytes:5,foo:1}]"], "workload.flows"),
        (["topo.k=7"], "topo.k"),
        (["cc.algo=reno"], "cc.algo"),
        (["cc.inter=nope"], "cc.inter"),
        (["lb.algo=magic"], "lb.algo"),
        (["workload.placement=everywhere"], "workload.placement"),
        (["switch.port_kinds=[nonsense]"], "switch.port_kinds"),
        (["switch.mark_source=phantom", "switch.phantom.enabled=false"], "switch.mark_source"),
        (["topo=dumbbell", "workload.n_inter=2"], "workload.n_inter"),
        (["workload.n_intra=500"], "workload.n_intra"),
        (["workload.n_intra=0", "workload.n_inter=0"], "workload.n_intra"),
        (["engine.queue_ports=[nosuchport]"], "engine.queue_ports[0]"),
        (["engine.stop_when_done=[nosuchtag]"], "engine.stop_when_done"),
        (["topo.inter_rtt_ratio=1.2"], "topo.inter_rtt_ratio"),
        (["cc.gemini.h_min_mss=2", "cc.gemini.h_max_mss=1"], "cc.gemini.h_max_mss"),
        (["workload=rpc_incast", "workload.rpc_cdf=no_such_cdf"], "workload.rpc_cdf"),
    ],
)
def test_refusals_name_the_field(overrides, field, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused(overrides, capsys)
    assert line.startswith(f"uno-run: configuration error: {field}"), line
    assert not any(tmp_path.iterdir())


def test_every_job_of_a_sweep_is_checked_before_any_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = refused(["-m", "workload.size_bytes=1000,-5", "engine.sample_interval_us=0"], capsys)
    assert "workload.size_bytes" in line and "job 1" in line, line
    assert not any(tmp_path.iterdir()), "a refused sweep created its folder"


def test_the_api_refuses_the_same_way():
    with pytest.raises(ConfigError) as err:
        uno.compose(["+sed=3"])
    assert err.value.field == "sed"
    cfg = uno.compose(["workload.size_bytes=1000"])
    cfg.engine.max_sim_time_ms = float("nan")
    with pytest.raises(ConfigError) as err:
        uno.run(cfg)
    assert err.value.field == "engine.max_sim_time_ms"


def test_int_limit_is_what_the_messages_say():
    assert INT_LIMIT == 2**53


def test_the_real_command_exits_2_with_one_line(tmp_path):
    for argv, field in [
        (["engine.sample_interval_us=nan"], "engine.sample_interval_us"),
        (["+sed=3"], "sed"),
        (["workload.size_bytes=" + str(10**30)], "workload.size_bytes"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "uno.cli", *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and field in proc.stderr, proc.stderr
        assert not any(tmp_path.iterdir())
