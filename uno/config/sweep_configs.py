"""The config of each job of a Hydra multirun at about the cost of one composition per set of
config-group options (:class:`SweepConfigs`), for the ``uno`` launcher
(``hydra_plugins/uno_launcher``).

Hydra's launchers compose every job from scratch (``ConfigLoader.load_sweep_config``): its
defaults list and YAML files, about a quarter of a second per job, however little the jobs
differ. Here the jobs that select the same config-group options share one composition; each
job's value overrides are then applied to a copy as Hydra applies them, and the job's own
fields under ``hydra`` (its overrides, its ``override_dirname``) are filled in as Hydra fills
them. This relies on internals of hydra-core 1.3 (pinned below 1.4 in ``pyproject.toml``);
``tests/test_sweeps.py`` checks that every job's config equals Hydra's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from omegaconf import DictConfig, OmegaConf, open_dict

from uno.config.compose import copy_config, parse_overrides, split_overrides, split_parsed


class SweepConfigs:
    """Job configs of the multirun whose master config is ``master_config``, composed by
    ``config_loader`` (Hydra's ``ConfigLoaderImpl``)."""

    def __init__(self, config_loader, master_config: DictConfig):
        self._loader = config_loader
        self._master = master_config
        self._bases: dict[tuple[str, ...], DictConfig] = {}

    def group_options(self, sweep_overrides: Sequence[str]) -> tuple[str, ...]:
        """The overrides of ``sweep_overrides`` that select config-group options."""
        groups, _ = split_overrides(sweep_overrides, self._loader.repository.group_exists)
        return tuple(o.input_line for o in groups)

    def load(self, sweep_overrides: Sequence[str]) -> DictConfig:
        """What ``config_loader.load_sweep_config(master_config, sweep_overrides)`` returns."""
        from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
        from hydra.types import RunMode

        sweep_overrides = list(sweep_overrides)
        hydra_overrides = list(OmegaConf.to_container(self._master.hydra.overrides.hydra))
        parsed = parse_overrides(sweep_overrides)  # (in their order)
        groups, values = split_parsed(parsed, self._loader.repository.group_exists)
        if any(o.is_hydra_override() for o in values):  # (a swept Hydra setting: rare)
            return self._loader.load_sweep_config(self._master, sweep_overrides)
        key = tuple(o.input_line for o in groups)
        base = self._bases.get(key)
        if base is None:
            base = self._bases[key] = self._loader.load_configuration(
                config_name=self._master.hydra.job.config_name,
                overrides=hydra_overrides + list(key),
                run_mode=RunMode.RUN,
            )
        cfg = copy_config(base)
        ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
        job = cfg.hydra.job
        with open_dict(cfg.hydra):
            cfg.hydra.overrides.task = [o.input_line for o in parsed]
            job.override_dirname = get_overrides_dirname(
                overrides=parsed,
                kv_sep=job.config.override_dirname.kv_sep,
                item_sep=job.config.override_dirname.item_sep,
                exclude_keys=job.config.override_dirname.exclude_keys,
            )
        OmegaConf.copy_cache(from_config=self._master, to_config=cfg)
        return cfg
