"""Running many jobs at the cost of their engines: worker processes that each run many jobs.

A single ``uno-run`` spends about two seconds before its engine starts (imports, Numba's cache,
composing the config, building the scenario). A worker here pays that once: it is forked from
a process that has everything loaded, composes configs that differ only in values from one
composition (:class:`uno.config.compose.Composer`), and excludes the objects alive at its start
from the garbage collector's passes (:func:`settle_heap`), so that a job costs its engine time,
its scenario building and its result writing.

Used by the ``uno`` Hydra launcher (``uno-run -m``), ``uno-claims`` and ``uno-eval``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def settle_heap() -> None:
    """Collect garbage once, then exclude every object alive now (modules, compiled kernels,
    caches) from the cyclic garbage collector's later passes (:func:`gc.freeze`). A run
    collects before it starts (:meth:`uno.simulation.Simulation.start`); without this, each of
    those passes walks the whole interpreter's heap, a tenth of a second per job."""
    gc.collect()
    gc.freeze()


def can_fork() -> bool:
    """Whether this platform can fork worker processes (they then start with everything this
    process has loaded)."""
    return "fork" in multiprocessing.get_all_start_methods()


@contextmanager
def worker_pool(workers: int, start: Callable, start_args: tuple = ()) -> Iterator:
    """A pool of ``workers`` processes, each calling ``start(*start_args)`` once. They are
    forked where the platform allows it (they then begin with everything this process has
    imported and compiled, and ``start_args`` are not pickled), else spawned."""
    context = multiprocessing.get_context("fork" if can_fork() else "spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=start,
                             initargs=start_args) as pool:  # fmt: skip
        yield pool


@dataclass(frozen=True)
class Job:
    """One run: its overrides and the folder its results go to."""

    overrides: tuple[str, ...]
    folder: str


@dataclass(frozen=True)
class JobOutcome:
    """What became of a :class:`Job`: ``status`` is the run's ("complete", "incomplete") or
    "failed" with the error in ``error``; ``reused``: the folder already held it; times in
    seconds (``engine_s``: the engine loop; ``job_s``: the whole job in its worker, which
    began at ``started_at``, seconds since the epoch); ``peak_rss_mib``: the worker's peak
    resident memory after the job."""

    job: Job
    status: str
    reused: bool
    engine_s: float
    job_s: float
    started_at: float = 0.0
    error: str = ""
    worker_pid: int = 0
    peak_rss_mib: float = 0.0


class JobRunner:
    """Runs jobs one after another in this process, composing their configs through one
    :class:`uno.config.compose.Composer`."""

    def __init__(self):
        from uno.config.compose import Composer

        self.composer = Composer()

    def run(self, job: Job) -> JobOutcome:
        from uno.api import run
        from uno.core.errors import ConfigError

        started, t0 = time.time(), time.perf_counter()
        try:
            cfg, choices = self.composer.compose_with_choices(
                [*job.overrides, "engine.progress=false"]
            )
            result = run(cfg, job.folder, if_complete="skip", choices=choices,
                         overrides=list(job.overrides))  # fmt: skip
        except (ConfigError, ValueError, RuntimeError) as exc:
            return JobOutcome(job, "failed", False, 0.0, time.perf_counter() - t0, started,
                              f"{type(exc).__name__}: {exc}", os.getpid(), _peak_rss_mib())  # fmt: skip
        run_info = result.summary.get("run", {})
        return JobOutcome(
            job=job,
            status=str(run_info.get("status", "complete")),
            reused=bool(result.reused),
            engine_s=float(run_info.get("wall_s", 0.0)),
            job_s=time.perf_counter() - t0,
            started_at=started,
            worker_pid=os.getpid(),
            peak_rss_mib=_peak_rss_mib(),
        )


def _peak_rss_mib() -> float:
    """This process's peak resident memory (MiB; 0 where the platform does not say)."""
    try:
        import resource
    except ImportError:  # (not on Windows)
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class _Worker:
    """A worker process's :class:`JobRunner` (one per process)."""

    runner: JobRunner | None = None

    @classmethod
    def start(cls) -> None:
        cls.runner = JobRunner()
        settle_heap()

    @classmethod
    def run(cls, job: Job) -> JobOutcome:
        return cls.runner.run(job)


def run_jobs(
    jobs: Sequence[Job],
    workers: int = 1,
    on_done: Callable[[JobOutcome, int, int], None] | None = None,
) -> list[JobOutcome]:
    """Run ``jobs`` (a job whose folder already holds a complete run of its config is not run
    again: resumable), ``workers`` at a time; ``on_done(outcome, done, total)`` after each.
    Returns the outcomes in the order of ``jobs``. The caller orders ``jobs``: with several
    workers, the longest first keeps them all busy to the end."""
    for job in jobs:
        Path(job.folder).parent.mkdir(parents=True, exist_ok=True)
    outcomes: list[JobOutcome | None] = [None] * len(jobs)
    if workers <= 1 or len(jobs) <= 1:
        runner = JobRunner()
        settle_heap()
        for i, job in enumerate(jobs):
            outcomes[i] = runner.run(job)
            if on_done is not None:
                on_done(outcomes[i], i + 1, len(jobs))
        return outcomes
    from concurrent.futures import as_completed

    with worker_pool(min(workers, len(jobs)), _Worker.start) as pool:
        futures = {pool.submit(_Worker.run, job): i for i, job in enumerate(jobs)}
        for done, future in enumerate(as_completed(futures), start=1):
            i = futures[future]
            outcomes[i] = future.result()
            if on_done is not None:
                on_done(outcomes[i], done, len(jobs))
    return outcomes
