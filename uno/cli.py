"""``uno-run``: the Hydra command-line entry point.

    uno-run                                   # the default experiment
    uno-run cc=dctcp lb=spray seed=3          # overrides
    uno-run -m cc=dctcp,uno seed='range(3)'   # a multirun sweep (joblib launcher: hydra/launcher=joblib)

Before Hydra starts (and creates any folder), every job of the command is composed and
checked: a refused config prints one line naming the field and exits with status 2. Each run
writes its result folder through :func:`uno.api.run` (staged, renamed into place when
complete). A multirun re-run into the same sweep directory (``hydra.sweep.dir=...``) skips the
jobs whose folder already holds a complete run of the same config and runs the rest;
``overwrite=true`` redoes them.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from uno.config.schema import register_configs
from uno.core.errors import ConfigError

register_configs()

PROG = "uno-run"


def _refuse(exc: ConfigError, where: str = "") -> None:
    print(f"{PROG}: configuration error{where}: {exc}", file=sys.stderr)
    raise SystemExit(2)


@hydra.main(config_path="pkg://uno.conf", config_name="config", version_base=None)
def _main(cfg: DictConfig) -> dict | None:
    from uno.api import RUN_LOGGER, run
    from uno.metrics.rundir import IfComplete, remove_if_empty

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    output_dir = Path(hc.runtime.output_dir)
    choices = {k: v for k, v in hc.runtime.choices.items() if not k.startswith("hydra")}
    if cfg.out_dir and not multirun:  # (in a multirun, main() made out_dir the sweep dir)
        target, generated = Path(cfg.out_dir), False
        remove_if_empty(output_dir)  # Hydra created its own run dir; it stays unused
    else:
        explicit = any(o.startswith("hydra.run.dir=") for o in hc.overrides.hydra)
        target, generated = output_dir, not multirun and not explicit
    if cfg.overwrite:
        if_complete = IfComplete.OVERWRITE
    else:
        if_complete = IfComplete.SKIP if multirun else IfComplete.REFUSE
    try:
        result = run(
            cfg,
            target,
            if_complete=if_complete,
            generated_name=generated,
            choices=choices,
            overrides=list(hc.overrides.task),
        )
    except ConfigError as exc:
        remove_if_empty(output_dir)
        _refuse(exc, f" (job {hc.job.num})" if multirun else "")
    log = logging.getLogger(RUN_LOGGER)
    if result.reused:
        log.info(
            "job %s: %s already holds a complete run of this config; skipped "
            "(overwrite=true redoes it)",
            hc.job.num,
            result.run_dir,
        )
    else:
        print(f"results: {result.run_dir}", flush=True)
    return result.summary


# ---- before Hydra ---------------------------------------------------------------------


def _parse(argv: list[str]):
    from hydra._internal.utils import get_args_parser

    return get_args_parser().parse_args(argv)


def precheck(argv: list[str], build: bool = True) -> list[str]:
    """Compose and check every job of the command line before anything runs or is written.
    Returns the argument list to hand to Hydra (``out_dir`` of a multirun becomes its sweep
    directory). Raises ConfigError, naming the job and the field, for the first refusal."""
    from uno.api import compose, to_run_config
    from uno.config.compose import expand_sweep, is_hydra_override
    from uno.config.validate import check_config

    args = _parse(argv)
    app = [o for o in args.overrides if not is_hydra_override(o)]
    jobs = expand_sweep(app) if args.multirun else [app]
    if args.multirun:
        argv = _out_dir_to_sweep_dir(argv, jobs)
    built: set[str] = set()
    for i, job in enumerate(jobs):
        try:
            run_cfg = to_run_config(compose(job))
            check_config(run_cfg)
            if build:
                # checks that need the topology (hosts, ports, tags): once per distinct
                # scenario, the seed aside
                key = _scenario_key(run_cfg)
                if key not in built:
                    from uno.build import build_simulation

                    build_simulation(run_cfg)
                    built.add(key)
        except ConfigError as exc:
            if len(jobs) > 1:
                where = f"(job {i}: {' '.join(job)})"
                raise ConfigError(exc.field, f"{exc.reason} {where}") from None
            raise
    return argv


def _scenario_key(run_cfg) -> str:
    from dataclasses import replace

    from uno.metrics.provenance import config_hash

    return config_hash(replace(run_cfg, seed=0, name=""))


def _out_dir_to_sweep_dir(argv: list[str], jobs: list[list[str]]) -> list[str]:
    """In a multirun, ``out_dir=X`` names the sweep directory (one folder per job number)."""
    values = {o.split("=", 1)[1] for job in jobs for o in job if o.startswith("out_dir=")}
    if not values:
        return argv
    if len(values) > 1:
        raise ConfigError("out_dir", "cannot be swept; in a multirun it is the sweep directory")
    (value,) = values
    return [a for a in argv if not a.startswith("out_dir=")] + [f"hydra.sweep.dir={value}"]


def help_text(argv: list[str]) -> str:
    """``uno-run --help``: the config groups and their options, and the composed config."""
    import importlib.resources

    from omegaconf import OmegaConf

    from uno.api import compose
    from uno.config.compose import CONFIG_MODULE, is_hydra_override

    root = Path(str(importlib.resources.files(CONFIG_MODULE)))
    groups = []
    for d in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in ("hydra",)):
        options = sorted(p.stem for p in d.glob("*.yaml"))
        if options and not d.name.startswith("_"):
            groups.append(f"  {d.name}: {', '.join(options)}")
    overrides = [o for o in _parse(argv).overrides if not is_hydra_override(o)]
    try:
        config = OmegaConf.to_yaml(compose(overrides))
    except ConfigError as exc:
        config = f"(not composed: {exc})\n"
    return (
        f"{PROG}: simulate congestion control, load balancing and loss recovery in and across "
        "datacenters.\n\n"
        f"Usage: {PROG} [group=option ...] [key=value ...]\n"
        f"       {PROG} -m key=a,b seed='range(3)' [hydra/launcher=joblib]   (a sweep)\n"
        f"       {PROG} --cfg job   (print the composed config)\n\n"
        "Results go to results/<name>/<time>-<pid>/ (or out_dir=DIR; overwrite=true replaces a "
        "complete run there).\nA multirun re-run with the same hydra.sweep.dir=DIR skips complete "
        "jobs and runs the rest.\n\n"
        "== Configuration groups (group=option) ==\n" + "\n".join(groups) + "\n\n"
        "== Config (override any field with key=value) ==\n" + config + "\n"
        "Hydra's own options: --hydra-help\n"
    )


_PASS_THROUGH = ("--hydra-help", "--version", "--shell-completion", "-sc", "--info", "-i")
_ONLY_SHOW = ("--cfg", "-c")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("--help", "-h") for a in argv):
        print(help_text([a for a in argv if a not in ("--help", "-h")]))
        return
    if not any(a.split("=")[0] in _PASS_THROUGH for a in argv):
        only_show = any(a.split("=")[0] in _ONLY_SHOW for a in argv)
        try:
            argv = precheck(argv, build=not only_show)
        except ConfigError as exc:
            _refuse(exc)
    sys.argv = [sys.argv[0] if sys.argv else PROG, *argv]
    _main()


if __name__ == "__main__":
    main()
