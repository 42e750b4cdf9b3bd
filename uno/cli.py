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

Exit status: 0 when every run did its job; 2 for a refused command line or config; 3 when a run
ended at the stop time with flows it waits for unfinished (``engine.allow_unfinished=true``
declares a time-bounded run; a multirun runs every job and then lists the incomplete ones);
130 on Ctrl-C and 143 on SIGTERM (the run's staging folder is removed). Output into a closed
pipe (``uno-run ... | head``) is dropped quietly.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.utils import JobStatus
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from uno.config.schema import register_configs
from uno.core.console import quiet_broken_pipes
from uno.core.errors import ConfigError

register_configs()

PROG = "uno-run"
EXIT_REFUSED = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


def _refuse(exc: ConfigError, where: str = "") -> None:
    print(f"{PROG}: configuration error{where}: {exc}", file=sys.stderr)
    raise SystemExit(EXIT_REFUSED)


class UsageError(Exception):
    """A command line Hydra's argument parser refuses (an unknown flag, a missing value)."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that a run removes its staging folder."""


class ExitStatus(Callback):
    """Hydra callback of every ``uno-run`` run and multirun (added to its command line): once
    the run, or every job of the multirun, is over, exit with status 3 if one was incomplete,
    saying which on stderr."""

    def on_run_end(self, config, config_name=None, job_return=None, **kwargs) -> None:
        from uno.metrics.summary import status_line

        if job_return is None or job_return.status != JobStatus.COMPLETED:
            return
        run = (job_return.return_value or {}).get("run", {})
        if run.get("status") == "incomplete":
            print(f"{PROG}: {status_line(run)}", file=sys.stderr)
            raise SystemExit(EXIT_INCOMPLETE)

    def on_multirun_end(self, config, config_name=None, **kwargs) -> None:
        from uno.metrics.sweep import incomplete_jobs_text

        text = incomplete_jobs_text(Path(str(config.hydra.sweep.dir)))
        if text:
            print(f"{PROG}: {text}", file=sys.stderr)
            raise SystemExit(EXIT_INCOMPLETE)


#: the override that installs :class:`ExitStatus`
_EXIT_STATUS_CALLBACK = f"++hydra.callbacks.uno_exit_status._target_={__name__}.ExitStatus"


@hydra.main(config_path="pkg://uno.conf", config_name="config", version_base=None)
def _main(cfg: DictConfig) -> dict | None:
    from uno.api import RUN_LOGGER, run
    from uno.metrics.rundir import IfComplete, remove_empty_parents

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    output_dir = Path(hc.runtime.output_dir)
    choices = {k: v for k, v in hc.runtime.choices.items() if not k.startswith("hydra")}
    if cfg.out_dir and not multirun:  # (in a multirun, main() made out_dir the sweep dir)
        target, generated = Path(cfg.out_dir), False
        # Hydra created its own run dir (and results/<name>/); it stays unused
        remove_empty_parents(output_dir, Path.cwd())
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
        remove_empty_parents(output_dir, Path.cwd())
        _refuse(exc, f" (job {hc.job.num})" if multirun else "")
    except BaseException:  # interrupted: the run removed its staging folder; Hydra's is empty
        remove_empty_parents(output_dir, Path.cwd())
        raise
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
    """Hydra's command line, parsed by Hydra's parser; a refusal raises :class:`UsageError`."""
    from hydra._internal.utils import get_args_parser

    parser = get_args_parser()
    parser.prog = PROG

    def refuse(message: str):
        raise UsageError(message)

    parser.error = refuse  # (argparse would print its usage and exit)
    return parser.parse_args(argv)


def precheck(argv: list[str], build: bool = True) -> list[str]:
    """Compose and check every job of the command line before anything runs or is written.
    Returns the argument list to hand to Hydra (``out_dir`` of a multirun becomes its sweep
    directory). Raises ConfigError, naming the job and the field, for the first refusal."""
    from uno.api import to_run_config
    from uno.config.compose import Composer, expand_sweep, is_hydra_override
    from uno.config.validate import check_config
    from uno.metrics.rundir import check_creatable

    args = _parse(argv)
    app = [o for o in args.overrides if not is_hydra_override(o)]
    jobs = expand_sweep(app) if args.multirun else [app]
    if args.multirun:
        argv = _out_dir_to_sweep_dir(argv, jobs)
    built: set[str] = set()
    seen: set[tuple[str, ...]] = set()
    folders: set[tuple[str, str]] = set()
    hydra_dirs = [o for o in args.overrides if is_hydra_override(o)]
    composer = Composer()  # (jobs that differ in values only share one composition)
    for i, job in enumerate(jobs):
        try:
            run_cfg = to_run_config(composer.compose(job))
            check_config(run_cfg)
            if build:
                for folder in _result_folder(run_cfg, hydra_dirs, args.multirun):
                    if folder not in folders:
                        check_creatable(folder[1], folder[0])
                        folders.add(folder)
                # checks that need the topology (hosts, ports, tags): once per distinct
                # scenario, the seed aside
                unseeded = tuple(o for o in job if not o.startswith("seed="))
                if unseeded in seen:
                    continue
                seen.add(unseeded)
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


def _result_folder(run_cfg, hydra_overrides: list[str], multirun: bool) -> list[tuple[str, str]]:
    """(field, path) of the folder a job writes its results in, as far as it is known before
    Hydra resolves its own directory names: ``out_dir``, an explicit Hydra run or sweep
    directory, or ``results/<name>`` (the default directories' parent)."""
    if run_cfg.out_dir is not None:
        return [("out_dir", run_cfg.out_dir)]
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    for o in hydra_overrides:
        name, _, value = o.lstrip("+").partition("=")
        if name == key:
            return [] if "${" in value else [(key, value)]
    return [("out_dir", str(Path("results") / run_cfg.name))]


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
    try:
        overrides = [o for o in _parse(argv).overrides if not is_hydra_override(o)]
        config = OmegaConf.to_yaml(compose(overrides))
    except (ConfigError, UsageError) as exc:
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


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    with quiet_broken_pipes(), _sigterm_raises():
        try:
            _command(argv)
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            _quiet_teardown()
            raise SystemExit(EXIT_INTERRUPTED) from None
        except Terminated:
            print(f"{PROG}: terminated", file=sys.stderr)
            _quiet_teardown()
            raise SystemExit(EXIT_TERMINATED) from None


def _quiet_teardown() -> None:
    """The run was stopped, perhaps inside Numba's compiler: the objects it left half-built
    report errors as the interpreter tears them down ("Exception ignored in ..." from
    llvmlite); after the one line that says the run stopped, they are not the user's concern."""
    sys.unraisablehook = lambda _unraisable: None


def _command(argv: list[str]) -> None:
    from uno.config.compose import is_hydra_override

    if any(a in ("--help", "-h") for a in argv):
        print(help_text([a for a in argv if a not in ("--help", "-h")]))
        return
    try:
        args = _parse(argv)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_REFUSED) from None
    if args.hydra_help:
        # Hydra's own options: the app's overrides (and -m's sweeps) do not change them
        _hydra_showing(["--hydra-help", *(o for o in args.overrides if is_hydra_override(o))])
        return
    shows = args.cfg is not None or args.info is not None or args.shell_completion
    if shows and args.multirun:
        flag = "--cfg" if args.cfg is not None else "--info" if args.info else "--shell-completion"
        print(
            f"{PROG}: {flag} shows one configuration and cannot be combined with -m (a sweep); "
            "drop -m and give one value per swept key",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_REFUSED)
    if args.shell_completion and not any(
        o.startswith(("install=", "uninstall=", "query=")) for o in args.overrides
    ):
        print(f"{PROG}: --shell-completion needs install=SHELL, uninstall=SHELL or query=SHELL",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(EXIT_REFUSED)
    if not args.shell_completion:
        try:
            argv = precheck(argv, build=not shows)
        except ConfigError as exc:
            _refuse(exc)
    if shows:
        _hydra_showing(argv)
        return
    _hydra([*argv, _EXIT_STATUS_CALLBACK])


def _hydra(argv: list[str]) -> None:
    sys.argv = [sys.argv[0] if sys.argv else PROG, *argv]
    _main()


def _hydra_showing(argv: list[str]) -> None:
    """Hydra's --cfg, --info, --hydra-help or --shell-completion: its output, or one line."""
    try:
        _hydra(argv)
    except Exception as exc:  # Hydra raises many types here; the first line says what it is
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"{PROG}: {first}", file=sys.stderr)
        raise SystemExit(EXIT_REFUSED) from None


#: seconds after which a signal that came inside LLVM's callbacks is sent again
RESEND_S = 0.05


def in_llvm_callback(frame) -> bool:
    """Whether ``frame`` (a signal handler's) runs inside llvmlite, which LLVM's C++ code calls
    back as Numba loads or compiles a kernel: an exception raised there crashes the process
    (exit -11) instead of reaching the run's clean-up."""
    while frame is not None:
        if "llvmlite" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` and Ctrl-C KeyboardInterrupt, so that the run cleans
    up, but not inside LLVM's callbacks (:func:`in_llvm_callback`): there the signal is sent
    again :data:`RESEND_S` later, and so it is when the exception it raised was dropped by
    Python (raised in a finalizer or a ctypes callback, it reaches ``sys.unraisablehook``
    only); the previous handlers and hook are restored after."""

    raised = ((signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt))

    def resend(signum) -> None:
        threading.Timer(RESEND_S, os.kill, (os.getpid(), signum)).start()

    def handler(exc):
        def handle(signum, frame):
            if in_llvm_callback(frame):
                resend(signum)
                return
            raise exc

        return handle

    def dropped(hook):
        # (the exception a signal raised inside a finalizer or a ctypes callback cannot pass
        # on: Python reports it here and goes on, so the signal is sent again)
        def report(unraisable) -> None:
            for sig, exc in raised:
                if unraisable.exc_type is not None and issubclass(unraisable.exc_type, exc):
                    resend(sig)
                    return
            hook(unraisable)

        return report

    try:
        previous = {sig: signal.signal(sig, handler(exc)) for sig, exc in raised}
    except ValueError:  # not the main thread: leave signals alone
        previous = {}
    hook = sys.unraisablehook
    if previous:
        sys.unraisablehook = dropped(hook)
    installed = sys.unraisablehook
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        if sys.unraisablehook is installed:  # (not once the run has silenced its teardown)
            sys.unraisablehook = hook


if __name__ == "__main__":
    main()
