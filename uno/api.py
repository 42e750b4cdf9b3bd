"""Programmatic entry points for scripts, tests and notebooks.

>>> import uno
>>> cfg = uno.compose(["topo=dumbbell", "workload=flows", "cc=dctcp"])
>>> result = uno.run(cfg)                 # in-process; nothing written unless out_dir is given
>>> result.flows[["flow_id", "fct_ps", "slowdown"]]

With ``out_dir`` (or ``out_dir`` in the config) the run writes its result folder the same way
``uno-run`` does (:mod:`uno.metrics.rundir`): ``config.yaml`` (the resolved config run),
``run.log``, the tables and ``summary.json`` last, staged and renamed into place when complete.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from uno.config.compose import compose as _compose
from uno.config.validate import check_composed, check_config
from uno.core.jit_cache import announce_compile
from uno.metrics.io import read_run, write_results
from uno.metrics.progress import Progress, progress_wanted
from uno.metrics.provenance import config_hash, provenance, utc_now
from uno.metrics.result import RunResult
from uno.metrics.rundir import CONFIG_FILE, LOG_FILE, IfComplete, RunFolder
from uno.metrics.summary import option_names

#: the logger of runs: header, progress lines, summary (also written to each run's run.log)
RUN_LOGGER = "uno.run"


def compose(overrides: list[str] | None = None, config_name: str = "config") -> DictConfig:
    """Compose the run config from Hydra overrides (same syntax as on the command line).
    Raises :class:`uno.core.errors.ConfigError`, naming the field, for a misspelt or unknown
    key (also with ``+``), a value of the wrong type or an unknown config option."""
    return _compose(overrides or [], config_name)


def to_run_config(cfg: DictConfig):
    """Resolve a composed DictConfig into plain dataclass objects (fast attribute access)."""
    if isinstance(cfg, DictConfig):
        check_composed(cfg)
        return OmegaConf.to_object(cfg)
    return cfg


def run(
    cfg,
    out_dir: str | Path | None = None,
    *,
    if_complete: IfComplete | str | None = None,
    generated_name: bool = False,
    progress: bool | None = None,
    measure_memory: bool = False,
    choices: dict[str, str] | None = None,
    overrides: list[str] | None = None,
) -> RunResult:
    """Validate, build and run ``cfg``; with ``out_dir`` (or ``cfg.out_dir``) write its result
    folder.

    ``if_complete`` says what to do when that folder already holds a complete run: "refuse"
    (the default; "overwrite" if ``cfg.overwrite``), "skip" (return the stored result when its
    config hash matches, refuse otherwise) or "overwrite". ``generated_name``: the folder name
    was made up for this run, so a collision takes the next free name instead of failing.
    ``progress``: show a progress bar (None: ``cfg.engine.progress``, then auto-detect a
    terminal). ``choices`` (config group -> option, as Hydra records them) and ``overrides``
    (the job's command-line overrides, which ``uno-collect`` turns into columns) go into the
    summary. Every refusal raises :class:`uno.core.errors.ConfigError` before anything is
    written. A run whose required flows (:func:`run_status`) are unfinished at the stop time
    does not raise: its folder is written and ``summary["run"]["status"]`` says "incomplete"."""
    from uno.build import build_simulation

    run_cfg = to_run_config(cfg)
    check_config(run_cfg)
    # the composed DictConfig hashes to the same value 20-50x faster than the dataclass, which
    # must first be turned back into a DictConfig (tests/test_run_folders.py checks they agree)
    cfg_hash = config_hash(cfg if isinstance(cfg, DictConfig) else run_cfg)
    target = out_dir if out_dir is not None else run_cfg.out_dir
    folder = RunFolder(target, generated_name) if target is not None else None
    if if_complete is None:
        if_complete = IfComplete.OVERWRITE if run_cfg.overwrite else IfComplete.REFUSE
    if_complete = IfComplete(if_complete)
    if folder is not None and folder.existing_run(cfg_hash, if_complete):
        return load_result(folder.target)
    sim = build_simulation(run_cfg)  # every remaining check (hosts, ports, tags) is here
    if choices:
        sim.meta["choices"] = dict(choices)
        sim.meta.update(option_names(sim.meta))  # topo=two_dc, topo_detail=two_dc_k8
    if overrides is not None:
        sim.meta["overrides"] = list(overrides)
    log = logging.getLogger(RUN_LOGGER)
    log.setLevel(logging.INFO)
    handler = None
    started = utc_now()
    t0 = time.perf_counter()
    try:
        if folder is not None:
            staging = folder.open()
            # (the composed DictConfig gives the same text as the dataclass, 5x faster)
            node = cfg if isinstance(cfg, DictConfig) else OmegaConf.structured(run_cfg)
            (staging / CONFIG_FILE).write_text(OmegaConf.to_yaml(node, resolve=True))
            handler = logging.FileHandler(staging / LOG_FILE, encoding="utf-8")
            handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
            log.addHandler(handler)
        log.info(_header(sim, cfg_hash, folder))
        announce_compile(sim.kernels(), f"the {run_cfg.engine.kind} engine's kernels", log)
        show_bar = progress_wanted(progress if progress is not None else run_cfg.engine.progress)
        watcher = Progress(sim, show_bar, log, time_bounded=run_cfg.engine.allow_unfinished)
        watcher.attach()
        try:
            result = sim.run(measure_memory=measure_memory)
        finally:
            watcher.close()
        result.summary["run"].update(run_status(run_cfg.engine, result.flows))
        result.summary["provenance"] = provenance(cfg_hash, started, time.perf_counter() - t0)
        log.info(result.summary_text())  # its last line says whether the run did its job
        if folder is not None:
            log.removeHandler(handler)
            handler.close()
            handler = None
            write_results(folder.staging, result.tables, result.summary)
            result.run_dir = folder.commit(overwrite=if_complete is IfComplete.OVERWRITE)
    except BaseException:
        if folder is not None:
            folder.abandon()
        raise
    finally:
        if handler is not None:
            log.removeHandler(handler)
            handler.close()
    return result


def _header(sim, cfg_hash: str, folder: RunFolder | None) -> str:
    from uno.metrics.summary import run_label

    m = sim.meta
    where = f" -> {folder.target}" if folder is not None else ""
    return (
        f"uno run '{m['name']}' seed={m['seed']}: {run_label(m)}, {m['n_flows']} flows on "
        f"{m['n_hosts']} hosts, stop at {sim.max_time_ps / 1e9:g} ms simulated; config "
        f"{cfg_hash[:12]}{where}"
    )


def run_status(engine_cfg, flows) -> dict:
    """Whether a run did its job: ``required_flows`` (those with a tag of
    ``engine.stop_when_done``, or every flow), how many of them were unfinished at the end, and
    ``status``: "incomplete" when some were and ``engine.allow_unfinished`` is false (uno-run
    exits with status 3), else "complete"."""
    from uno.scenario import stop_flags

    required = stop_flags(engine_cfg.stop_when_done, flows["tag"])
    unfinished = int((required & flows["finish_ps"].isna().to_numpy()).sum())
    incomplete = unfinished > 0 and not engine_cfg.allow_unfinished
    return {
        "required_flows": int(required.sum()),
        "required_flows_unfinished": unfinished,
        "status": "incomplete" if incomplete else "complete",
    }


def load_result(run_dir: str | Path) -> RunResult:
    """A complete run folder as a :class:`RunResult` (``reused`` set)."""
    data = read_run(run_dir)
    summary = data.pop("summary")
    return RunResult(
        flows=data["flows"], tables=data, summary=summary, run_dir=Path(run_dir), reused=True
    )
