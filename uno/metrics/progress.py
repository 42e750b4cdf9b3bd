"""Progress of a running simulation: a tqdm bar on stderr (simulated time done of the stop
time, flows finished, packet-hops per second of wall time) and a log line every
``log_every_s`` seconds of wall time, so batch jobs without a bar still show progress in their
log. A SimPy process that wakes at simulated-time intervals adapted to keep updates a few
tenths of a second apart; it only reads counters, so it never changes what the network does.
"""

from __future__ import annotations

import logging
import os
import sys
import time

from uno.core.units import PS_PER_US

#: wall time between bar updates the tick interval aims for
_TARGET_TICK_S = 0.25


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


class Progress:
    """Watches one :class:`uno.core.sim.Simulation`; call :meth:`attach` before it runs and
    :meth:`close` after."""

    def __init__(
        self,
        sim,
        show_bar: bool,
        logger: logging.Logger | None = None,
        log_every_s: float = 10.0,
    ):
        self.sim = sim
        self.show_bar = show_bar
        self.logger = logger
        self.log_every_s = log_every_s
        self._bar = None
        self._t0 = 0.0
        self._last_log = 0.0

    def attach(self) -> None:
        sim = self.sim
        stop_us = sim.max_time_ps / PS_PER_US
        if self.show_bar:
            from tqdm import tqdm

            self._bar = tqdm(
                total=round(stop_us),
                unit="us",
                unit_scale=False,
                desc="simulated",
                file=sys.stderr,
                dynamic_ncols=True,
                bar_format="{desc} {n_fmt}/{total_fmt} us {bar} {percentage:3.0f}% "
                "[{elapsed}<{remaining}] {postfix}",
            )
        self._t0 = self._last_log = time.perf_counter()
        if hasattr(sim, "engine"):
            sim.engine.process(self._loop())
            sim.observer_events += 1  # the process's start
        else:  # a flow-level engine calls back between its chunks of steps
            sim.progress_hook = self.update

    def _loop(self):
        engine = self.sim.engine
        # first tick at 1/10,000 of the stop time, then adapted to the measured pace
        step_ps = max(1, self.sim.max_time_ps // 10_000)
        last_wall = time.perf_counter()
        while True:
            self.sim.observer_events += 1  # each tick's timeout (paced by wall time)
            yield engine.timeout(step_ps)
            now_wall = time.perf_counter()
            self.update(now_wall)
            spent = now_wall - last_wall
            last_wall = now_wall
            factor = _TARGET_TICK_S / spent if spent > 0 else 2.0
            step_ps = max(1, int(step_ps * min(2.0, max(0.5, factor))))

    def status(self, now_wall: float) -> tuple[float, str]:
        """(simulated µs, "flows a/b, n packet-hops/s") now."""
        sim = self.sim
        elapsed = now_wall - self._t0
        if not hasattr(sim, "engine"):
            return sim.now_ps / PS_PER_US, sim.progress_text(elapsed)
        sim_us = sim.engine.now / PS_PER_US
        hops = sim.network.packet_hops()
        rate = hops / elapsed if elapsed > 0 else 0.0
        n_flows = getattr(sim, "n_flows_total", len(sim.flows))  # the hybrid's fluid flows too
        return sim_us, f"flows {sim.n_finished}/{n_flows}, {rate:,.0f} packet-hops/s"

    def update(self, now_wall: float) -> None:
        sim_us, text = self.status(now_wall)
        if self._bar is not None:
            self._bar.n = min(round(sim_us), self._bar.total)
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.refresh()
        if self.logger is not None and now_wall - self._last_log >= self.log_every_s:
            self._last_log = now_wall
            stop_us = self.sim.max_time_ps / PS_PER_US
            self.logger.info(
                "progress: simulated %.1f of %.1f us (%.0f%%), %s",
                sim_us,
                stop_us,
                100.0 * sim_us / stop_us,
                text,
            )

    def close(self) -> None:
        """Finish the bar and let go of the simulation: a flow-level engine's hook back to
        this watcher made a reference cycle, which kept the simulation (and the fluid engine's
        delay lines, ~100 MiB on the 5000-flow Fig. 10 traffic) alive after the run until
        Python's cycle collector happened to run."""
        if self._bar is not None:
            self.update(time.perf_counter())
            self._bar.close()
            self._bar = None
        if getattr(self.sim, "progress_hook", None) is not None:
            self.sim.progress_hook = None
