"""experiments/artifact_check: the artifact presets on the artifact's own scenarios compose as
the artifact's scripts set them up, and a reduced run goes through the analysis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation

ROOT = Path(__file__).resolve().parents[1]
ANALYZE = ROOT / "experiments" / "artifact_check" / "analyze.py"
US = 1_000_000


@pytest.mark.parametrize(
    "mix,senders",
    [
        ("artifact_intra4_inter4", [130, 140, 150, 160, 0, 10, 20, 30]),
        ("artifact_intra8", list(range(130, 138))),
        ("artifact_inter8", list(range(1, 9))),
    ],
)
@pytest.mark.parametrize("cc", ["uno_artifact", "gemini_artifact", "mprdma_bbr_artifact"])
def test_incasts_are_the_artifacts(mix, senders, cc):
    sim = build_simulation(
        to_run_config(uno.compose(["experiment=artifact_check", f"incast_mix={mix}", f"cc={cc}"]))
    )
    assert [f.src for f in sim.flows] == senders
    assert {f.dst for f in sim.flows} == {240} and {f.size_bytes for f in sim.flows} == {10**9}
    assert {f.start_ps for f in sim.flows} == {0}
    assert round(sim.meta["max_base_rtt_us"], 2) == 1792.04  # WAN 886.5 us, as the artifact
    ports = sim.network.ports
    assert {p.buffer_bytes for p in ports if p.kind != "host"} == {1_000_000}


def test_fig4_run_is_the_artifacts():
    sim = build_simulation(to_run_config(uno.compose(["experiment=artifact_check_fig4"])))
    rpc = [f for f in sim.flows if f.tag == "rpc"]
    long = [f for f in sim.flows if f.tag != "rpc"]
    assert [f.src for f in long] == list(range(1, 9)) and {f.dst for f in sim.flows} == {240}
    assert len(rpc) == 1000 and {f.src for f in rpc} == {241}
    assert rpc[0].start_ps == 15_000 * US and rpc[1].start_ps - rpc[0].start_ps == 25 * US
    assert 4000 <= min(f.size_bytes for f in rpc) and max(f.size_bytes for f in rpc) <= 16000


def test_reduced_incast_and_analysis(tmp_path):
    sweep = tmp_path / "sweep"
    for i, cc in enumerate(("uno_artifact", "gemini_artifact", "mprdma_bbr_artifact")):
        cfg = uno.compose(["experiment=artifact_check", f"cc={cc}", "workload.size_bytes=3000000"])
        uno.run(cfg, out_dir=sweep / str(i), choices={"cc": cc})
    proc = subprocess.run(
        [sys.executable, str(ANALYZE), str(sweep)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    for cc in ("uno_artifact", "gemini_artifact", "mprdma_bbr_artifact"):
        assert f"4+4    {cc}" in proc.stdout
    assert (sweep / "artifact_check.json").exists()
