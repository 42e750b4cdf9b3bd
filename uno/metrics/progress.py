"""Progress of a running simulation: a tqdm bar on stderr, and a log line every ``log_every_s``
seconds of wall time, so that batch jobs without a bar still show progress in their log.

**What the percentage measures.** A run ends when every required flow has finished (every
flow, or those with a tag of ``engine.stop_when_done``) or at the stop time
(``engine.max_sim_time_ms``), whichever comes first. The bar measures the way to the one that
ends it (:func:`run_fraction`):

- **completion**: the bytes the required flows delivered, of all their bytes. It follows the
  work left, which is what the wall time goes to, and reaches 100% when the last required flow
  finishes. Before every required flow has started this is the measure: the bytes of the flows
  still to come are work to do, and the simulated time says nothing of when it will be done.
- **stop time**: the simulated time, of the stop time. It is the measure only when the stop
  time is what ends the run: when a required flow starts at or after the stop time (it cannot
  finish), or when the stop time is reached; and, once every required flow has started (from
  the start for a run meant to end at its stop time: ``time_bounded``, which
  ``engine.allow_unfinished`` sets) and 1% of the stop time
  has been simulated (past the first round trips, which deliver little whatever comes after),
  when it is further along than completion: the flows deliver too slowly to finish before the
  stop time at their pace so far, and of the two, the one further along ends the run first.

The time left shown (the bar's and the log line's alike) extrapolates that fraction p over the
wall time so far: wall time x (1 - p) / p, without smoothing. The simulated time, the flows finished
and the engine's own count of work (packet-hops, fluid steps, rate computations) are shown as
text beside it.

**When it updates.** A thread wakes every ``refresh_s`` (the bar) or ``log_every_s`` (no bar),
reads the simulation's counters (each engine's ``progress_snapshot()``, which only reads: watching
never changes what the run does), redraws the bar and logs a line when ``log_every_s`` has passed
since the last one. The thread needs the interpreter, as Ctrl-C does (SIGINT is handled between
Python bytecodes): the engines' compiled kernels give it back at least every fraction of a
second (:mod:`uno.core.budget`; the compiled data plane after a bounded number of events).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from uno.core.units import PS_PER_US

#: what ends the run, as the bar and the log line name it
COMPLETION = "completion"
STOP_TIME = "stop time"
#: the fraction of the stop time simulated before the time measure may take over from
#: completion (:func:`run_fraction`)
TIME_EVIDENCE = 0.01
#: wall time between redraws of the bar
REFRESH_S = 0.25


def progress_wanted(setting: bool | None) -> bool:
    """``engine.progress``: an explicit true/false wins; null means a bar when stderr is a
    terminal and the run is not in CI (``$CI`` set) or a batch job."""
    if setting is not None:
        return bool(setting)
    if os.environ.get("CI") or os.environ.get("SLURM_JOB_ID"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass(frozen=True)
class Snapshot:
    """What a running simulation reports to its watcher (its ``progress_snapshot()``)."""

    now_ps: int
    #: bytes the required flows delivered so far, and all their bytes
    done_bytes: float
    total_bytes: float
    #: every required flow has started
    all_started: bool
    #: a required flow starts at or after the stop time (it cannot finish)
    late_start: bool
    n_finished: int
    n_flows: int
    #: the engine's count of work done so far, and its unit
    work: int
    work_unit: str


def run_fraction(snap: Snapshot, stop_ps: int, time_bounded: bool = False) -> tuple[float, str]:
    """(the fraction of the run done, what ends the run: :data:`COMPLETION` or
    :data:`STOP_TIME`), by the rule of the module's docstring."""
    t = min(1.0, snap.now_ps / stop_ps) if stop_ps > 0 else 1.0
    if t >= 1.0 or snap.late_start or snap.total_bytes <= 0:
        return t, STOP_TIME
    w = min(1.0, snap.done_bytes / snap.total_bytes)
    if (snap.all_started or time_bounded) and t >= TIME_EVIDENCE and t > w:
        return t, STOP_TIME
    return w, COMPLETION


def _bytes_text(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.2f} {unit}"
    return f"{n:,.0f} B"


def _left_text(elapsed_s: float, fraction: float) -> str:
    if fraction <= 0 or elapsed_s <= 0:
        return "?"
    left = round(elapsed_s * (1.0 - fraction) / fraction)
    return f"{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"


class Progress:
    """Watches one simulation (a packet :class:`uno.simulation.Simulation`, the hybrid or a
    flow-level engine): :meth:`attach` before it runs, :meth:`close` after, also when it fails.

    ``time_bounded``: the run is meant to end at its stop time (``engine.allow_unfinished``).
    ``clock`` (seconds) is injectable for tests; ``refresh_s`` is the bar's redraw interval."""

    def __init__(
        self,
        sim,
        show_bar: bool,
        logger: logging.Logger | None = None,
        log_every_s: float = 10.0,
        *,
        time_bounded: bool = False,
        refresh_s: float = REFRESH_S,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.sim = sim
        self.show_bar = show_bar
        self.logger = logger
        self.log_every_s = log_every_s
        self.time_bounded = time_bounded
        self.refresh_s = refresh_s
        self.clock = clock
        #: the last update's (fraction, what ends the run)
        self.last: tuple[float, str] | None = None
        self._bar = None
        self._t0 = 0.0
        self._last_log = 0.0
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self._lock = threading.Lock()  # one update at a time: the thread's or close()'s

    def attach(self) -> None:
        """Open the bar and start the watching thread."""
        if self.show_bar:
            from tqdm import tqdm

            self._bar = tqdm(
                total=100.0,
                file=sys.stderr,
                dynamic_ncols=True,
                smoothing=0,  # the time left from the average pace, as the log line's
                bar_format="{desc}: {percentage:3.0f}% {bar} [{elapsed}<{remaining}]{postfix}",
            )
        self._t0 = self._last_log = self.clock()
        period = self.refresh_s if self._bar is not None else self.log_every_s
        if self._bar is None and self.logger is None:
            return
        self._thread = threading.Thread(
            target=self._watch, args=(max(period, 1e-3),), name="uno-progress", daemon=True
        )
        self._thread.start()

    def _watch(self, period_s: float) -> None:
        while not self._closing.wait(period_s):
            try:
                self.update()
            except Exception as exc:  # a display must not end the run it shows
                if self.logger is not None:
                    self.logger.warning("progress display stopped: %r", exc)
                return

    def update(self, log: bool = True) -> None:
        """Read the simulation, redraw the bar, and (``log``) log a line if ``log_every_s`` has
        passed."""
        with self._lock:
            now = self.clock()
            elapsed = now - self._t0
            sim = self.sim
            snap = sim.progress_snapshot()
            stop_ps = sim.max_time_ps
            fraction, ends = run_fraction(snap, stop_ps, self.time_bounded)
            self.last = (fraction, ends)
            sim_text = f"simulated {snap.now_ps / PS_PER_US:,.1f} of {stop_ps / PS_PER_US:,.1f} us"
            work_text = (
                f"delivered {_bytes_text(snap.done_bytes)} of {_bytes_text(snap.total_bytes)}"
            )
            rate = snap.work / elapsed if elapsed > 0 else 0.0
            flows_text = f"flows {snap.n_finished}/{snap.n_flows}, {rate:,.0f} {snap.work_unit}/s"
            # the measure first, what else there is to see after it
            texts = (work_text, sim_text) if ends == COMPLETION else (sim_text, work_text)
            if self._bar is not None:
                self._bar.n = 100.0 * fraction
                self._bar.set_description_str(f"to {ends}", refresh=False)
                self._bar.set_postfix_str(f"{texts[0]}; {texts[1]}; {flows_text}", refresh=False)
                self._bar.refresh()
            if log and self.logger is not None and now - self._last_log >= self.log_every_s:
                self._last_log = now
                self.logger.info(
                    "progress: %.0f%% to %s, about %s left (%s; %s; %s)",
                    100.0 * fraction,
                    "completion" if ends == COMPLETION else "the stop time",
                    _left_text(elapsed, fraction),
                    *texts,
                    flows_text,
                )

    def close(self) -> None:
        """Stop the thread, take the last state (:attr:`last`; the bar's, which then closes),
        and let go of the simulation (a finished run's arrays are freed when the caller drops
        it). No log line: the run's summary follows."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        try:
            if self.sim is not None:
                self.update(log=False)
        except Exception:  # (the run's own outcome, its result or its error, is what counts)
            pass
        finally:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            self.sim = None
