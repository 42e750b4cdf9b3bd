"""``hydra/launcher=uno`` and ``hydra/sweeper=uno`` (uno-run's defaults).

The launcher runs a multirun's jobs in this process (``n_jobs=1``, the default)
or in ``n_jobs`` worker processes forked from it, each running many jobs.

It differs from Hydra's basic and joblib launchers only in cost, not in what a job sees: a
job's config is composed once per set of config-group options and copied for its value
overrides (:class:`uno.config.sweep_configs.SweepConfigs`, checked equal to Hydra's own), and
a worker keeps its imports, compiled kernels and caches from job to job, with the objects alive
after its start excluded from the garbage collector's passes (:func:`uno.runs.settle_heap`).
Jobs run as Hydra's ``run_job`` runs them (:mod:`uno.sweep_jobs`: callbacks, logging, output
folders as usual; the configs copied by pickling), and the launcher returns each job's status,
return value and overrides, not its configs (they are in the job's folder).
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
        from hydra.core.utils import configure_log, filter_overrides, setup_globals

        from uno.runs import can_fork
        from uno.sweep_jobs import SweepJobs

        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        workers = min(self.n_jobs, len(job_overrides))
        if workers > 1 and not can_fork():  # (workers must inherit Hydra's state)
            log.info("This platform cannot fork worker processes: the jobs run in this process")
            workers = 1
        where = "locally" if workers <= 1 else f"in {workers} worker processes"
        log.info(f"Launching {len(job_overrides)} jobs {where}")
        for i, overrides in enumerate(job_overrides):
            log.info(f"\t#{initial_job_idx + i} : {' '.join(filter_overrides(overrides))}")
        state = (self.hydra_context, self.config, self.task_function)
        numbered = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
        if workers <= 1:
            SweepJobs.start(*state)
            try:
                return [SweepJobs.run(idx, overrides) for idx, overrides in numbered]
            finally:
                configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        from uno.runs import worker_pool

        with worker_pool(workers, SweepJobs.start, state) as pool:
            futures = [pool.submit(SweepJobs.run, idx, overrides) for idx, overrides in numbered]
            return [f.result() for f in futures]
