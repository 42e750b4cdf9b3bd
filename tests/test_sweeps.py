"""Sweeps at the cost of their engines: composing configs that differ in values from one
composition gives exactly Hydra's configs (app and multirun jobs, refusals included), the
``uno`` launcher's worker processes give the same runs as running them in turn, the job runner
resumes and reports failures, and the shortcuts of building a run (forwarding tables from the
routing's table, config.yaml from the composed config) give what the long way gave."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import SMALL_INCAST, uno_cli
from omegaconf import OmegaConf

import uno
from uno.api import to_run_config
from uno.config.compose import Composer, compose
from uno.core.errors import ConfigError
from uno.runs import Job, run_jobs

#: override lists that differ in groups, in values, in additions and deletions
CASES = [
    ["experiment=fig13_linkfail", "seed=3"],
    ["experiment=fig13_linkfail", "lb=plb", "ec=mds", "seed=4"],
    ["cc=dctcp", "cc.dctcp.g=0.1", "topo.wan_links=4", "seed=2"],
    ["experiment=artifact_fig10", "scheme=artifact_uno", "seed=2",
     "workload.path=websearchIntra_AlibabaInter_5000f_60l"],
    ["experiment=fig13_linkfail", "~faults"],
    ["workload=incast", "faults=border_link_down", "engine.max_sim_time_ms=5"],
]  # fmt: skip
REFUSED = [["seed=x"], ["cc=nonexistent"], ["engine.no_such_key=1"], ["cc.uno.qa_beta=high"],
           ["+engine.stop_time_us=5"]]  # fmt: skip


def _plain(cfg) -> dict:
    return OmegaConf.to_container(cfg)


def test_composer_gives_what_hydra_composes():
    composer = Composer()
    for overrides in CASES + CASES:  # (the second pass from the cached compositions)
        assert _plain(composer.compose(overrides)) == _plain(compose(overrides)), overrides


def test_composer_refuses_as_hydra_does():
    composer = Composer()
    composer.compose(["seed=2"])  # a cached base must not hide a refusal
    for overrides in REFUSED:
        with pytest.raises(ConfigError) as ours:
            composer.compose(overrides)
        with pytest.raises(ConfigError) as hydras:
            compose(overrides)
        assert str(ours.value) == str(hydras.value), overrides


def test_composer_reports_the_group_choices():
    _, choices = Composer().compose_with_choices(["experiment=artifact_fig10",
                                                  "scheme=artifact_uno", "seed=4"])  # fmt: skip
    assert choices["scheme"] == "artifact_uno" and choices["cc"] == "uno_artifact"
    assert not any(k.startswith("hydra") for k in choices)


def test_sweep_configs_equal_hydras_own():
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from uno.config.schema import register_configs
    from uno.config.sweep_configs import SweepConfigs

    register_configs()
    with initialize_config_module(config_module="uno.conf", version_base=None):
        loader = GlobalHydra.instance().config_loader()
        master = loader.load_configuration(
            "config", ["hydra.sweep.dir=/tmp/unused", "hydra.job.chdir=false"], RunMode.MULTIRUN
        )
        fast = SweepConfigs(loader, master)
        for overrides in CASES + CASES:
            ours = _plain(fast.load(overrides))
            hydras = _plain(loader.load_sweep_config(master, overrides))
            assert ours == hydras, overrides
        assert fast.group_options(CASES[1]) == ("experiment=fig13_linkfail", "lb=plb", "ec=mds")


def _run_sweep(tmp_path, name: str, extra: list[str]) -> str:
    sw = tmp_path / name
    proc = uno_cli(["-m", *SMALL_INCAST, "engine.sample_interval_us=0", "seed=1,2,3",
                    "lb=ecmp,spray", f"hydra.sweep.dir={sw}", *extra], tmp_path)  # fmt: skip
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    return out


def test_worker_processes_give_the_runs_of_one_process(tmp_path):
    one = _run_sweep(tmp_path, "one", [])
    two = _run_sweep(tmp_path, "two", ["hydra.launcher.n_jobs=2"])
    assert one.count("results: ") == two.count("results: ") == 6
    for job in range(6):
        a, b = tmp_path / "one" / str(job), tmp_path / "two" / str(job)
        for table in ("flows.parquet", "ports.parquet"):
            assert pd.read_parquet(a / table).equals(pd.read_parquet(b / table)), (job, table)
        sa = json.loads((a / "summary.json").read_text())["run"]
        sb = json.loads((b / "summary.json").read_text())["run"]
        assert sa["overrides"] == sb["overrides"] and sa["choices"] == sb["choices"]
        assert (a / "config.yaml").read_text() == (b / "config.yaml").read_text()


def test_job_runner_resumes_and_reports_failures(tmp_path):
    small = (*SMALL_INCAST, "engine.sample_interval_us=0")
    jobs = [Job((*small, f"seed={s}"), str(tmp_path / str(s))) for s in (1, 2)]
    bad = Job((*small, "cc=nonexistent"), str(tmp_path / "bad"))
    seen = []
    first = run_jobs([*jobs, bad], workers=2, on_done=lambda o, d, t: seen.append((d, t)))
    assert [o.status for o in first] == ["complete", "complete", "failed"]
    assert "cc" in first[2].error and not (tmp_path / "bad").exists()
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert all(o.engine_s > 0 and o.job_s >= o.engine_s for o in first[:2])
    again = run_jobs(jobs, workers=1)
    assert all(o.reused and o.status == "complete" for o in again)


def test_forwarding_tables_from_the_routing_equal_the_switches_fibs():
    from uno.build import build_simulation
    from uno.net.compiled.build_ports import forwarding
    from uno.net.switch import Switch

    for topo in ("two_dc", "fat_tree", "dumbbell"):
        cfg = uno.compose([f"topo={topo}", "engine.dataplane=python", "workload=incast",
                           "workload.n_inter=0", "workload.n_intra=2"])  # fmt: skip
        net = build_simulation(to_run_config(cfg)).network
        index_of = {id(p): i for i, p in enumerate(net.ports)}
        n_hosts = len(net.hosts)
        fwd = forwarding(net)
        for i, node in enumerate(net.node_objs):
            for dst in range(n_hosts):
                row = i * n_hosts + dst
                got = fwd.fib_ports[fwd.fib_off[row] : fwd.fib_off[row] + fwd.fib_n[row]]
                want = [index_of[id(p)] for p in node.fib[dst]] if isinstance(node, Switch) else []
                assert list(got) == want, (topo, node, dst)
        assert np.array_equal(
            fwd.node_host >= 0, [not isinstance(n, Switch) for n in net.node_objs]
        )


def test_config_file_from_the_composed_config_equals_the_dataclass_one():
    for overrides in CASES[:4]:
        cfg = compose(overrides)
        run_cfg = to_run_config(cfg)
        long_way = OmegaConf.to_yaml(OmegaConf.structured(run_cfg))
        assert OmegaConf.to_yaml(cfg, resolve=True) == long_way, overrides
