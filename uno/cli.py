"""``uno-run``: the Hydra command-line entry point.

    uno-run                                   # the default experiment
    uno-run cc=dctcp lb=spray seed=3          # overrides
    uno-run -m cc=dctcp,uno seed='range(3)'   # a multirun sweep (joblib launcher: hydra/launcher=joblib)

Writes ``flows.parquet``, sampled tables and ``summary.json`` into the Hydra run directory
(or ``out_dir``), next to the resolved config, and prints a readable summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from uno.config.schema import register_configs
from uno.core.errors import ConfigError

register_configs()


def _out_dir(cfg: DictConfig) -> Path:
    if cfg.out_dir:
        return Path(cfg.out_dir)
    try:
        return Path(HydraConfig.get().runtime.output_dir)
    except ValueError:
        return Path.cwd()


@hydra.main(config_path="pkg://uno.conf", config_name="config", version_base=None)
def _main(cfg: DictConfig) -> dict:
    from uno.api import run

    out = _out_dir(cfg)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    try:
        choices = {
            k: v for k, v in HydraConfig.get().runtime.choices.items() if not k.startswith("hydra")
        }
    except ValueError:
        choices = {}
    try:
        result = run(cfg, out_dir=out, choices=choices)
    except ConfigError as exc:
        print(f"uno-run: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(result.summary_text())
    print(f"results: {out}")
    return result.summary


def main() -> None:
    _main()


if __name__ == "__main__":
    main()
