"""Runs that say when they did not do their job, and leave nothing stale behind.

A run whose required flows (all, or those tagged in ``engine.stop_when_done``) are unfinished at
the stop time writes its folder, says "run incomplete: ..." on its last line and in
``summary.json`` (``run.status``, ``run.required_flows_unfinished``) and ``uno-run`` exits with
status 3, unless ``engine.allow_unfinished=true`` declares a time-bounded run. A network that
cannot deliver a packet is refused before the run. The staging folder of a killed run is removed
by the next run that stages beside it (never a live run's, nor another host's), and an
interrupted run leaves no empty folder behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import uno_cli

import uno
from uno.metrics.rundir import LOG_FILE, SUMMARY_FILE, _host
from uno.metrics.summary import format_summary

BASE = [
    "topo=dumbbell",
    "workload=flows",
    "engine.sample_interval_us=0",
    "engine.progress=false",
]
#: a 1 kB flow (done in ~10 us) and a 10 MB one (~1 ms at 100 Gb/s)
TWO_FLOWS = (
    "workload.flows=[{src:0,dst:4,size_bytes:1000,tag:small},"
    "{src:1,dst:4,size_bytes:10000000,tag:big}]"
)
#: stops before the 10 MB flow can finish
CUT_SHORT = [*BASE, TWO_FLOWS, "engine.max_sim_time_ms=0.1"]


def cli(args, cwd, timeout=300):
    proc = uno_cli(args, cwd)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


@pytest.mark.parametrize(
    "args,field",
    [
        (["topo.buffer_bytes=100"], "topo.buffer_bytes"),
        (["transport.mtu_bytes=1048576", "topo.buffer_bytes=1000"], "transport.mtu_bytes"),
    ],
    ids=["buffer-below-a-packet", "mtu-above-the-buffer"],
)
def test_a_network_that_cannot_deliver_a_packet_is_refused(args, field, tmp_path):
    code, out, err = cli([*BASE, TWO_FLOWS, *args, f"out_dir={tmp_path / 'run'}"], tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "topo.buffer_bytes" in err and field in err, err
    assert not (tmp_path / "run").exists() and not (tmp_path / "results").exists()


def test_a_run_cut_short_by_the_stop_time_exits_3_and_says_so(tmp_path):
    run_dir = tmp_path / "run"
    code, out, err = cli([*CUT_SHORT, f"out_dir={run_dir}"], tmp_path)
    assert code == 3, err
    expected = "run incomplete: 1 of 2 required flows unfinished at the stop time"
    # the log's last line (stdout, before the results line) and run.log's; stderr's one line
    log_lines = [ln for ln in out.splitlines() if not ln.startswith("results: ")]
    assert log_lines[-1].startswith(expected), out
    assert (run_dir / LOG_FILE).read_text().splitlines()[-1] == log_lines[-1]
    assert err.strip().splitlines() == [f"uno-run: {log_lines[-1]}"], err
    assert "run complete" not in out
    # the folder is written: a time-bounded run's results are a complete record
    summary = json.loads((run_dir / SUMMARY_FILE).read_text())
    run = summary["run"]
    assert run["status"] == "incomplete" and run["required_flows_unfinished"] == 1
    assert run["required_flows"] == 2 and run["all_flows_finished"] is False


def test_allow_unfinished_marks_a_time_bounded_run(tmp_path):
    run_dir = tmp_path / "run"
    code, out, err = cli([*CUT_SHORT, "engine.allow_unfinished=true", f"out_dir={run_dir}"],
                         tmp_path)  # fmt: skip
    assert code == 0 and err == "", err
    last = [ln for ln in out.splitlines() if not ln.startswith("results: ")][-1]
    assert last == "run ended at the stop time with 1 flows unfinished (engine.allow_unfinished)"
    run = json.loads((run_dir / SUMMARY_FILE).read_text())["run"]
    assert run["status"] == "complete" and run["required_flows_unfinished"] == 1


def test_only_the_flows_the_run_waits_for_are_required(tmp_path):
    # waits for the small flow only: it finishes, the run stops, the big one is left unfinished
    code, out, err = cli([*BASE, TWO_FLOWS, "engine.stop_when_done=[small]",
                          f"out_dir={tmp_path / 'a'}"], tmp_path)  # fmt: skip
    assert code == 0, err
    run = json.loads((tmp_path / "a" / SUMMARY_FILE).read_text())["run"]
    assert run["required_flows"] == 1 and run["required_flows_unfinished"] == 0
    assert run["all_flows_finished"] is False and run["status"] == "complete"
    assert out.splitlines()[-2] == "run complete"
    # waits for the big flow, which the stop time cuts short
    code, out, err = cli([*CUT_SHORT, "engine.stop_when_done=[big]", f"out_dir={tmp_path / 'b'}"],
                         tmp_path)  # fmt: skip
    assert code == 3 and "1 of 1 required flows unfinished" in err, err


def test_from_python_an_incomplete_run_does_not_raise():
    result = uno.run(uno.compose(CUT_SHORT))
    assert result.summary["run"]["status"] == "incomplete"
    assert result.summary_text().splitlines()[-1].startswith("run incomplete: 1 of 2")


def test_no_finished_flow_prints_no_nan_fairness():
    result = uno.run(uno.compose([*BASE, TWO_FLOWS.replace("1000,tag", "5000000,tag"),
                                  "engine.max_sim_time_ms=0.05"]))  # fmt: skip
    assert result.summary["classes"]["all"]["finished"] == 0
    text = format_summary(result.summary)
    assert "nan" not in text
    assert "Jain's fairness of flow rates (finished flows): n/a (no flow finished)" in text


def test_a_sweep_goes_on_and_exits_3_listing_the_incomplete_jobs(tmp_path):
    sweep = tmp_path / "sw"
    code, out, err = cli(["-m", *BASE, TWO_FLOWS, "engine.max_sim_time_ms=0.1,5",
                          f"hydra.sweep.dir={sweep}"], tmp_path)  # fmt: skip
    assert code == 3, err
    assert (sweep / "0" / SUMMARY_FILE).is_file() and (sweep / "1" / SUMMARY_FILE).is_file()
    (line,) = err.strip().splitlines()
    assert line.startswith("uno-run: 1 of 2 runs incomplete"), line
    assert "job 0 (engine.max_sim_time_ms=0.1)" in line and "job 1" not in line
    proc = subprocess.run([sys.executable, "-m", "uno.metrics.sweep", str(sweep)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0 and "1 of 2 runs incomplete" in proc.stdout


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_staging_of_a_dead_run_is_removed_and_live_or_foreign_ones_kept(tmp_path):
    import os

    parent = tmp_path / "results" / "stale"
    dead = parent / f".20250101-000000-1.partial-{_host()}-{_dead_pid()}-abc123"
    live = parent / f".20250101-000000-2.partial-{_host()}-{os.getpid()}-abc123"
    foreign = parent / f".20250101-000000-3.partial-otherhost-{_dead_pid()}-abc123"
    dead_target = parent / "20250101-000000-1"  # the empty run dir Hydra made for it
    for d in (dead, live, foreign, dead_target):
        d.mkdir(parents=True)
    (dead / "run.log").write_text("killed\n")
    code, out, err = cli([*BASE, "name=stale"], tmp_path)
    assert code == 0, err
    assert not dead.exists() and not dead_target.exists()
    assert live.is_dir() and foreign.is_dir()
    assert len(list(parent.glob("*/summary.json"))) == 1


def _interrupted(args, cwd, staging_parent, sig) -> tuple[int, str]:
    """Start a long run, send ``sig`` once its staging folder exists, return (exit, stderr)."""
    proc = uno_cli(args, cwd)
    deadline = time.monotonic() + 120
    while not list(staging_parent.glob(".*.partial-*")) and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


LONG = [*BASE, "workload.flows=[{src:0,dst:4,size_bytes:100000000000}]"]


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")],
                         ids=["ctrl-c", "sigterm"])  # fmt: skip
def test_an_interrupted_out_dir_run_leaves_no_folder(sig, code, word, tmp_path):
    out_dir = tmp_path / "out" / "run"
    got, err = _interrupted([*LONG, f"out_dir={out_dir}"], tmp_path, out_dir.parent, sig)
    assert got == code and err.strip() == f"uno-run: {word}", err
    assert not (tmp_path / "results").exists()  # Hydra's run dir and results/<name>/ are gone
    assert not out_dir.exists() and not list(out_dir.parent.iterdir())


def test_an_interrupted_run_in_results_leaves_no_empty_folder(tmp_path):
    got, err = _interrupted([*LONG, "name=cut"], tmp_path, tmp_path / "results" / "cut",
                            signal.SIGINT)  # fmt: skip
    assert got == 130 and err.strip() == "uno-run: interrupted", err
    assert not (tmp_path / "results").exists()


def test_a_signal_inside_llvms_callbacks_waits_for_python():
    """A signal handled in a frame llvmlite runs for LLVM's C++ code (as Numba loads a kernel
    from its cache) is sent again a little later: an exception raised there crashed the process
    (exit -11) instead of the run cleaning up."""
    import sys

    from uno.cli import in_llvm_callback

    namespace: dict = {}
    exec(compile("import sys\nframe = sys._getframe()", "/site/llvmlite/binding/ffi.py", "exec"),
         namespace)  # fmt: skip
    assert in_llvm_callback(namespace["frame"])
    assert not in_llvm_callback(sys._getframe())


class _SignalledInFinalizer:
    """Sends the process SIGINT from its finalizer and waits there, so that the handler raises
    where Python drops the exception (``sys.unraisablehook``), as in a ctypes callback."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)


def test_a_signal_whose_exception_python_drops_is_sent_again():
    """Ctrl-C handled inside a finalizer (or a callback from C) raises where Python only reports
    the exception and goes on: the signal is sent again, and the run still stops."""
    from uno.cli import _sigterm_raises

    before = sys.unraisablehook
    waited = 0.0
    with pytest.raises(KeyboardInterrupt), _sigterm_raises():
        obj = _SignalledInFinalizer()
        del obj
        start = time.monotonic()
        try:
            while time.monotonic() - start < 5.0:
                time.sleep(0.01)
        finally:
            waited = time.monotonic() - start
    assert waited < 4.0
    assert sys.unraisablehook is before
