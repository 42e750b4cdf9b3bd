"""Programmatic entry points for scripts, tests and notebooks.

>>> import uno
>>> cfg = uno.compose(["topo=dumbbell", "workload=flows", "cc=dctcp"])
>>> result = uno.run(cfg)                 # in-process; nothing written unless out_dir is given
>>> result.flows[["flow_id", "fct_ps", "slowdown"]]
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from uno.config.schema import register_configs
from uno.core.sim import RunResult
from uno.metrics.io import write_results

CONFIG_MODULE = "uno.conf"


def config_dir() -> str:
    """Filesystem path of the packaged Hydra config tree."""
    import importlib.resources

    return str(importlib.resources.files(CONFIG_MODULE))


def compose(overrides: list[str] | None = None, config_name: str = "config") -> DictConfig:
    """Compose the run config from Hydra overrides (same syntax as on the command line)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module

    register_configs()
    with initialize_config_module(config_module=CONFIG_MODULE, version_base=None):
        return hydra_compose(config_name=config_name, overrides=list(overrides or []))


def to_run_config(cfg: DictConfig):
    """Resolve a composed DictConfig into plain dataclass objects (fast attribute access)."""
    if isinstance(cfg, DictConfig):
        return OmegaConf.to_object(cfg)
    return cfg


def run(
    cfg,
    out_dir: str | Path | None = None,
    measure_memory: bool = False,
    choices: dict[str, str] | None = None,
) -> RunResult:
    """Validate, build and run ``cfg``; write result tables to ``out_dir`` if given.
    ``choices`` (config group -> option, as Hydra records them) are kept in the summary."""
    from uno.build import build_simulation

    run_cfg = to_run_config(cfg)
    sim = build_simulation(run_cfg)
    if choices:
        sim.meta["choices"] = dict(choices)
    result = sim.run(measure_memory=measure_memory)
    if out_dir is not None:
        write_results(Path(out_dir), result.tables, result.summary)
    return result
