"""Inputs ``uno-run`` refuses before it runs: one line on stderr naming the field, exit status 2,
nothing written under ``results/``. A network that cannot deliver a packet (a buffer smaller
than a packet, a link too slow for one packet before the stop time), a value that rounds to
nothing in the engine's integer units, a result folder that cannot be created or a run name that
would leave ``results/``, a trace that uses a flow id twice, and Hydra's display flags combined
with ``-m``. Output into a closed pipe ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import uno_cli

from uno.cli import main

BASE = ["topo=dumbbell", "engine.sample_interval_us=0", "engine.progress=false"]
#: a one-flow dumbbell run of a few milliseconds
TINY = [*BASE, "workload=flows", "workload.flows=[{src:0,dst:4,size_bytes:20000}]"]


def refused(args: list[str], cwd, base: list[str] = TINY) -> str:
    """Run ``uno-run base args`` in ``cwd``; it must exit 2 with one line on stderr and write
    nothing. Returns that line."""
    proc = uno_cli([*base, *args], cwd)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, (out, err)
    return one_line(err, cwd)


def one_line(err: str, cwd) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert not (cwd / "results").exists(), "a refused run wrote under results/"
    return lines[0]


@pytest.fixture
def refused_here(capsys, monkeypatch, tmp_path):
    """:func:`refused` in this process (``uno.cli.main``, in ``tmp_path``), for what the command
    refuses before Hydra starts: the same exit status, line and nothing written, without a
    process's start (the real command's own exit is :func:`refused`'s)."""
    monkeypatch.chdir(tmp_path)

    def check(args: list[str], base: list[str] = TINY) -> str:
        with pytest.raises(SystemExit) as exit_info:
            main([*base, *args])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2, err
        return one_line(err, tmp_path)

    return check


@pytest.mark.parametrize(
    "args,fields",
    [
        # a port buffer smaller than one full data packet (4096 + 64 B), any buffer field
        (["topo.buffer_bytes=100"], ["topo.buffer_bytes"]),
        (["topo.nic_buffer_bytes=4159"], ["topo.nic_buffer_bytes"]),
        # an MTU larger than a buffer
        (
            ["transport.mtu_bytes=1048576", "topo.buffer_bytes=1000"],
            ["topo.buffer_bytes", "transport.mtu_bytes"],
        ),
        # the default 1 MiB buffers and a packet of 1 MiB payload + headers
        (["transport.mtu_bytes=1048576"], ["topo.buffer_bytes", "transport.mtu_bytes"]),
        # INT records make a data packet larger than a buffer that holds one without them
        (["topo.buffer_bytes=4160", "switch.int_telemetry.enabled=true"], ["topo.buffer_bytes"]),
        # an ACK larger than a buffer
        (["transport.ack_bytes=65536", "topo.buffer_bytes=10000"], ["topo.buffer_bytes"]),
        (["topo=two_dc", "topo.k=4", "topo.inter_buffer_bytes=1000"], ["topo.inter_buffer_bytes"]),
        (["topo=gear_two_dc", "topo.wan_buffer_bytes=2000"], ["topo.wan_buffer_bytes"]),
        (["topo=mlcc_two_dc", "topo.dci_buffer_bytes=2000"], ["topo.dci_buffer_bytes"]),
        # a rate that rounds to 0 bit/s, or too slow to carry one packet before the stop time
        (["topo.host_rate_gbps=1e-30"], ["topo.host_rate_gbps"]),
        (["topo.bottleneck_rate_gbps=1e-7"], ["topo.bottleneck_rate_gbps"]),
        (["topo=two_dc", "topo.k=4", "topo.wan_rate_gbps=1e-9"], ["topo.wan_rate_gbps"]),
        (["topo=mlcc_two_dc", "topo.fabric_rate_gbps=1e-6"], ["topo.fabric_rate_gbps"]),
        # a positive time that rounds to 0 ps, in any time field
        (["engine.sample_interval_us=1e-9"], ["engine.sample_interval_us"]),
        (["transport.timer_granularity_us=1e-7"], ["transport.timer_granularity_us"]),
        (["cc=bbr", "cc.bbr.probe_rtt_duration_s=1e-13"], ["cc.bbr.probe_rtt_duration_s"]),
        (["engine.max_sim_time_ms=1e-10"], ["engine.max_sim_time_ms"]),
        # no flow starts before the run stops
        (
            [
                "workload.flows=[{src:0,dst:4,size_bytes:1000,start_us:5000}]",
                "engine.max_sim_time_ms=5",
            ],
            ["workload.flows[0].start_us"],
        ),  # fmt: skip
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_undeliverable_or_unrepresentable_config_is_refused(args, fields, refused_here):
    line = refused_here(args)
    assert line.startswith(f"uno-run: configuration error: {fields[0]}: "), line
    for field in fields:
        assert field in line, line


def test_out_dir_under_proc_is_refused(tmp_path):
    line = refused(["out_dir=/proc/uno-run-x"], tmp_path)
    assert line.startswith("uno-run: configuration error: out_dir: "), line
    assert "/proc" in line


def test_out_dir_under_a_file_is_refused(tmp_path, refused_here):
    (tmp_path / "a_file").write_text("x")
    line = refused_here([f"out_dir={tmp_path / 'a_file' / 'run'}"])
    assert line.startswith("uno-run: configuration error: out_dir: ") and "a_file" in line, line
    line = refused_here([f"out_dir={tmp_path / 'a_file'}"])
    assert line.startswith("uno-run: configuration error: out_dir: "), line


@pytest.mark.skipif(os.geteuid() == 0, reason="permission bits do not stop root")
def test_out_dir_in_a_read_only_folder_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        line = refused([f"out_dir={locked / 'run'}"], tmp_path)
    finally:
        locked.chmod(0o755)
    assert line.startswith("uno-run: configuration error: out_dir: "), line


def test_hydra_run_dir_that_cannot_be_created_is_refused(tmp_path):
    line = refused(["hydra.run.dir=/proc/uno-run-x"], tmp_path)
    assert line.startswith("uno-run: configuration error: hydra.run.dir: "), line


def test_sweep_out_dir_under_a_file_is_refused(tmp_path):
    (tmp_path / "a_file").write_text("x")
    proc = uno_cli(["-m", *TINY, "seed=1,2", f"out_dir={tmp_path / 'a_file' / 'sw'}"], tmp_path)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "out_dir" in err and not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "name",
    ["../../../escape", "", "a/b", "a\\b", ".hidden", "..", "a..b", "tab\there", "x" * 201],
    ids=[
        "parent",
        "empty",
        "slash",
        "backslash",
        "dot",
        "dotdot",
        "inner-dotdot",
        "control",
        "too-long",
    ],  # fmt: skip
)
def test_run_name_must_be_one_plain_folder_name(name, tmp_path, refused_here):
    line = refused_here([f"name={name}"])
    assert line.startswith("uno-run: configuration error: name: "), line
    assert not (tmp_path.parent.parent / "escape").exists()


def test_trace_with_a_duplicate_flow_id_is_refused_naming_the_line(tmp_path, refused_here):
    cm = tmp_path / "dup.cm"
    cm.write_text(
        "Nodes 5\nConnections 3\n0->4 id 1 start 0 size 1000\n"
        "1->4 id 2 start 0 size 1000\n2->4 id 1 start 0 size 1000\n"
    )
    line = refused_here(["workload=trace", f"workload.path={cm}"], BASE)
    assert line.startswith("uno-run: configuration error: workload.path: "), line
    assert f"{cm}:5" in line and "flow id 1" in line and "line 3" in line, line


@pytest.mark.parametrize(
    "flags",
    [["--cfg", "hydra"], ["--cfg", "job"], ["--cfg", "all"], ["-c", "job"], ["--info"],
     ["--info", "config"], ["--shell-completion"]],
    ids=lambda f: " ".join(f),
)  # fmt: skip
def test_display_flags_with_a_sweep_are_refused_in_one_line(flags, tmp_path):
    line = refused(["-m", *TINY, "seed=1,2", *flags], tmp_path, base=[])
    assert line.startswith("uno-run: ") and "-m" in line, line


@pytest.mark.parametrize("flags", [["--help"], ["--hydra-help"]], ids=lambda f: f[0])
def test_help_flags_with_a_sweep_print_their_help(flags, tmp_path):
    proc = uno_cli(["-m", *TINY, "seed=1,2", *flags], tmp_path)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert ("Configuration groups" if flags == ["--help"] else "Hydra") in out
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "args",
    [["--cfg"], ["--bogus"], ["--shell-completion"], ["--info", "nosuchpart"]],
    ids=lambda a: " ".join(a),
)
def test_bad_command_line_flags_are_refused_in_one_line(args, tmp_path):
    line = refused(args, tmp_path)
    assert line.startswith("uno-run: "), line


def _closed_stdout(argv: list[str], cwd) -> tuple[int, str]:
    """Run ``argv`` with its stdout a pipe closed before it writes anything."""
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=300)
    return proc.returncode, err


def test_broken_pipes_end_quietly(tmp_path):
    sweep = tmp_path / "sw"
    code, err = _closed_stdout(
        [sys.executable, "-m", "uno.cli", "-m", *TINY, "seed=1,2", f"hydra.sweep.dir={sweep}"],
        tmp_path,
    )
    # the runs went on: their folders are complete
    assert code == 0 and err == "", err
    assert (sweep / "0" / "summary.json").is_file() and (sweep / "1" / "summary.json").is_file()
    code, err = _closed_stdout([sys.executable, "-m", "uno.metrics.sweep", str(sweep)], tmp_path)
    assert code == 0 and err == "", err


def test_uno_plot_into_a_broken_pipe_ends_quietly(tmp_path):
    sweep = tmp_path / "sw"
    proc = uno_cli(["-m", *TINY, "seed=1,2", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.wait(timeout=300) == 0
    code, err = _closed_stdout(
        [sys.executable, "-m", "uno.metrics.plots", str(sweep), "--out", str(tmp_path / "png")],
        tmp_path,
    )
    assert code == 0 and err == "", err
