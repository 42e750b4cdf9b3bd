"""``hydra/launcher=uno`` and ``hydra/sweeper=uno`` (uno-run's defaults).

The launcher runs a multirun's jobs in this process (``n_jobs=1``, the default)
or in ``n_jobs`` worker processes forked from it, each running many jobs.

It differs from Hydra's basic and joblib launchers only in cost, not in what a job sees: a
job's config is composed once per set of config-group options and copied for its value
overrides (:class:`uno.config.sweep_configs.SweepConfigs`, checked equal to Hydra's own), and
a worker keeps its imports, compiled kernels and caches from job to job, with the objects alive
after its start excluded from the garbage collector's passes (:func:`uno.runs.settle_heap`).
Jobs run as Hydra's ``run_job`` runs them (callbacks, logging, output folders as usual; the
configs copied by pickling), and the launcher returns each job's status, return value and
overrides, not its configs (they are in the job's folder).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from hydra.core.config_store import ConfigStore
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper

log = logging.getLogger(__name__)


@dataclass
class UnoLauncherConf:
    _target_: str = "hydra_plugins.uno_launcher.uno_launcher.UnoLauncher"
    #: jobs at a time: 1 runs them one after another in this process; N > 1 in N worker
    #: processes (forked, so they start with everything this process has loaded)
    n_jobs: int = 1


ConfigStore.instance().store(group="hydra/launcher", name="uno", node=UnoLauncherConf)


@dataclass
class UnoSweeperConf:
    _target_: str = "hydra_plugins.uno_launcher.uno_launcher.UnoSweeper"
    max_batch_size: int | None = None
    params: dict[str, str] | None = None


ConfigStore.instance().store(group="hydra/sweeper", name="uno", node=UnoSweeperConf)


class UnoSweeper(Sweeper):
    """Hydra's basic sweeper (same jobs, same order, same ``params``: it does the sweeping),
    whose check that the jobs compose before any runs composes each set of config-group
    options once (:class:`uno.config.sweep_configs.SweepConfigs`) instead of every job:
    ``uno-run`` has already composed and checked every job (:func:`uno.cli.precheck`)."""

    def __init__(self, max_batch_size: int | None = None, params=None) -> None:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

        super().__init__()
        self._basic = BasicSweeper(max_batch_size=max_batch_size, params=params)
        self._basic.validate_batch_is_legal = self.validate_batch_is_legal

    def setup(self, *, hydra_context, task_function, config) -> None:
        self.hydra_context, self.config = hydra_context, config
        self._basic.setup(hydra_context=hydra_context, task_function=task_function,
                          config=config)  # fmt: skip

    def sweep(self, arguments):
        return self._basic.sweep(arguments)

    def validate_batch_is_legal(self, batch) -> None:
        from uno.config.sweep_configs import SweepConfigs

        configs = SweepConfigs(self.hydra_context.config_loader, self.config)
        checked = set()
        for overrides in batch:
            options = configs.group_options(list(overrides))
            if options not in checked:
                configs.load(list(overrides))
                checked.add(options)


class UnoLauncher(Launcher):
    def __init__(self, n_jobs: int = 1) -> None:
        super().__init__()
        if n_jobs < 1:
            raise ValueError(f"hydra.launcher.n_jobs must be at least 1, got {n_jobs}")
        self.n_jobs = n_jobs
        self.config = None
        self.task_function = None
        self.hydra_context = None

    def setup(self, *, hydra_context, task_function, config) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.task_function = task_function

    def launch(self, job_overrides, initial_job_idx: int):
        from hydra.core.singleton import Singleton
        from hydra.core.utils import configure_log, filter_overrides, setup_globals

        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        workers = min(self.n_jobs, len(job_overrides))
        where = "locally" if workers <= 1 else f"in {workers} worker processes"
        log.info(f"Launching {len(job_overrides)} jobs {where}")
        for i, overrides in enumerate(job_overrides):
            log.info(f"\t#{initial_job_idx + i} : {' '.join(filter_overrides(overrides))}")
        state = (self.hydra_context, self.config, self.task_function, Singleton.get_state())
        numbered = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
        if workers <= 1:
            _Jobs.start(*state)
            try:
                return [_Jobs.run(idx, overrides) for idx, overrides in numbered]
            finally:
                configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        from uno.runs import worker_pool

        with worker_pool(workers, _Jobs.start, state) as pool:
            futures = [pool.submit(_Jobs.run, idx, overrides) for idx, overrides in numbered]
            return [f.result() for f in futures]


class _Jobs:
    """What a process running jobs keeps between them (one set per process: a worker's, or
    this process's when it runs the jobs itself)."""

    context = None
    config = None
    task_function = None
    configs = None

    @classmethod
    def start(cls, hydra_context, config, task_function, singleton_state) -> None:
        from hydra.core.singleton import Singleton

        from uno.config.sweep_configs import SweepConfigs
        from uno.runs import settle_heap

        Singleton.set_state(singleton_state)
        cls.context, cls.config, cls.task_function = hydra_context, config, task_function
        cls.configs = SweepConfigs(hydra_context.config_loader, config)
        settle_heap()

    @classmethod
    def run(cls, idx: int, overrides: list[str]):
        from hydra.core.utils import setup_globals
        from omegaconf import open_dict

        setup_globals()
        sweep_config = cls.configs.load(overrides)
        with open_dict(sweep_config):
            sweep_config.hydra.job.id = idx
            sweep_config.hydra.job.num = idx
        ret = _run_job(cls.context, cls.task_function, sweep_config)
        # kept until the sweep ends (and pickled back from a worker): the job's status, return
        # value and overrides, not its two configs (in its folder already), whose objects
        # would slow every later garbage collection of a long sweep
        ret.cfg = ret.hydra_cfg = None
        return ret


def _run_job(hydra_context, task_function, config):
    """``hydra.core.utils.run_job`` (hydra-core 1.3) for a job of a multirun, with its two copies
    of the job's config made by :func:`uno.config.compose.copy_config` (a pickle round trip)
    rather than ``copy.deepcopy``, a tenth of a second per job: the same job, callbacks, logging
    and folders."""
    import os

    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import (
        JobReturn,
        JobRuntime,
        JobStatus,
        _flush_loggers,
        _save_config,
        configure_log,
        env_override,
    )
    from omegaconf import OmegaConf, open_dict, read_write

    from uno.config.compose import copy_config

    callbacks = hydra_context.callbacks
    old_cwd = os.getcwd()
    orig_hydra_cfg = HydraConfig.instance().cfg
    HydraConfig.instance().set_config(config)  # (the folder's name may read the Hydra config)
    output_dir = os.path.join(str(OmegaConf.select(config, "hydra.sweep.dir")),
                              str(OmegaConf.select(config, "hydra.sweep.subdir")))  # fmt: skip
    with read_write(config.hydra.runtime), open_dict(config.hydra.runtime):
        config.hydra.runtime.output_dir = os.path.abspath(output_dir)
    HydraConfig.instance().set_config(config)
    chdir = False
    try:
        ret = JobReturn()
        task_cfg = copy_config(config)
        with read_write(task_cfg), open_dict(task_cfg):
            del task_cfg["hydra"]
        ret.cfg = task_cfg
        hydra_cfg = copy_config(HydraConfig.instance().cfg)
        ret.hydra_cfg = hydra_cfg
        ret.overrides = OmegaConf.to_container(config.hydra.overrides.task)
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        chdir = bool(hydra_cfg.hydra.job.chdir)  # (None: False, as from Hydra 1.2)
        if chdir:
            os.chdir(output_dir)
        ret.working_dir = os.getcwd()
        configure_log(config.hydra.job_logging, config.hydra.verbose)
        if config.hydra.output_subdir is not None:
            hydra_output = Path(config.hydra.runtime.output_dir) / Path(config.hydra.output_subdir)
            _save_config(task_cfg, "config.yaml", hydra_output)
            _save_config(hydra_cfg, "hydra.yaml", hydra_output)
            _save_config(config.hydra.overrides.task, "overrides.yaml", hydra_output)
        with env_override(hydra_cfg.hydra.job.env_set):
            callbacks.on_job_start(config=config, task_function=task_function)
            try:
                ret.return_value = task_function(task_cfg)
                ret.status = JobStatus.COMPLETED
            except Exception as e:
                ret.return_value = e
                ret.status = JobStatus.FAILED
        ret.task_name = JobRuntime.instance().get("name")
        _flush_loggers()
        callbacks.on_job_end(config=config, job_return=ret)
        return ret
    finally:
        HydraConfig.instance().cfg = orig_hydra_cfg
        if chdir:
            os.chdir(old_cwd)
