"""fig3_fairness at a reduced size (150 MB flows instead of 1 GiB, about 30 s): the direction of
the full run holds. After the start-up the two classes' rates move towards each other (the
inter-DC flows come out of the start-up ahead and give way, the intra-DC flows gain), fairness
improves, and the receiver link stays loaded (the phantom queues deliberately leave ~10%
headroom). The full-size acceptance run is the slow test below and
experiments/fig3_fairness/README.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import uno
from uno.metrics.analysis import class_mean_rates, jain_over_windows
from uno.metrics.io import read_run

MS = 10**9
ANALYZE = Path(__file__).resolve().parents[1] / "experiments" / "fig3_fairness" / "analyze.py"


def test_experiment_composes_for_every_scheme():
    for cc, phantom in [
        ("uno", True),
        ("uno_artifact", True),
        ("gemini", False),
        ("mprdma_bbr", False),
    ]:
        cfg = uno.compose(["experiment=fig3_fairness", f"cc={cc}"])
        assert cfg.workload.n_intra == 4 and cfg.workload.n_inter == 4
        assert cfg.workload.size_bytes == 1 << 30
        assert cfg.lb.algo == "spray" and cfg.topo.inter_rtt_ratio == 128
        assert cfg.switch.phantom.enabled is phantom


def test_reduced_fig3_moves_towards_fairness(tmp_path):
    out = tmp_path / "run"
    uno.run(uno.compose(["experiment=fig3_fairness", "workload.size_bytes=150000000"]), out_dir=out)
    run = read_run(out)
    flows, rates = run["flows"], run["rates"]
    assert flows["finish_ps"].notna().all()
    assert (flows["fct_ps"] >= flows["ideal_fct_ps"]).all()
    first_finish = int(flows["finish_ps"].min())
    last = (first_finish // (10 * MS) - 1) * 10 * MS  # start of the last full 10 ms window
    early = class_mean_rates(rates, flows, 10 * MS, 20 * MS)
    late = class_mean_rates(rates, flows, last, last + 10 * MS)
    early_gap = abs(early["inter"] - early["intra"])
    late_gap = abs(late["inter"] - late["intra"])
    assert late_gap < 0.8 * early_gap  # the classes converge towards the same rate
    jain = jain_over_windows(rates, flows, 10 * MS)
    after = jain[jain.window_start_ps >= 10 * MS]
    assert after.jain.iloc[-1] > after.jain.iloc[0] + 0.05
    load = jain_over_windows(rates, flows, 10 * MS, value="acked_gbps")
    assert (load[load.window_start_ps >= 10 * MS].total_gbps >= 85.0).all()
    proc = subprocess.run(
        [sys.executable, str(ANALYZE), str(out)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "fig3_fairness.json").read_text())[0]
    assert summary["all_finished"] is True and (out / "fig3_fairness.png").exists()


@pytest.mark.slow
@pytest.mark.parametrize("cc,stays_fair", [("uno", False), ("uno_artifact", True)])
def test_full_fig3_acceptance(tmp_path, cc, stays_fair):
    """The full Fig. 3 run (about 2.5 minutes per scheme, 1 GiB flows): every flow
    finishes, Jain's index over 10 ms windows reaches 0.9 within 150 ms and the receiver link
    carries >= 85% of line rate from then on. With the artifact's constants it also stays
    >= 0.85 until the first flow finishes; with the paper's, one 10 ms window dips below (see
    experiments/fig3_fairness/README.md), so that part is printed, not asserted."""
    out = tmp_path / cc
    uno.run(uno.compose(["experiment=fig3_fairness", f"cc={cc}"]), out_dir=out)
    proc = subprocess.run(
        [sys.executable, str(ANALYZE), str(out)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    print(proc.stdout)
    res = json.loads((out / "fig3_fairness.json").read_text())[0]
    assert res["all_finished"]
    assert res["jain_0.9_at_ms"] is not None and res["jain_0.9_at_ms"] <= 150
    assert res["receiver_load_after_convergence"] >= 0.85
    if stays_fair:
        assert res["jain_stays_ge_0.85_until_first_finish"]
