"""The jobs of a Hydra multirun as the ``uno`` launcher runs them (``hydra_plugins/uno_launcher``):
what a process running jobs keeps between them, and one job's run.

This lives outside ``hydra_plugins`` because Hydra's plugin scan executes the modules it finds
there again (each time its plugin registry is rebuilt), which would replace state kept in them.
"""

from __future__ import annotations

from pathlib import Path


class SweepJobs:
    """What a process running jobs keeps between them (one set per process: a forked worker's,
    which inherits Hydra's state from the launching process, or the launching process's when
    it runs the jobs itself)."""

    context = None
    task_function = None
    configs = None

    @classmethod
    def start(cls, hydra_context, config, task_function) -> None:
        """Keep what the jobs need (compositions are shared from here on); the objects alive
        now stay out of the garbage collector's passes (:func:`uno.runs.settle_heap`)."""
        from uno.config.sweep_configs import SweepConfigs
        from uno.runs import settle_heap

        cls.context, cls.task_function = hydra_context, task_function
        cls.configs = SweepConfigs(hydra_context.config_loader, config)
        settle_heap()

    @classmethod
    def run(cls, idx: int, overrides: list[str]):
        """Job number ``idx`` with its ``overrides``; returns Hydra's JobReturn."""
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
