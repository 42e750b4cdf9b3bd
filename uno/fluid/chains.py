"""Flows that start after others in the fluid engine (a workload's ``after``: a flow starts its
``start_us`` after every flow of the tag it names has finished, as
:meth:`uno.simulation.Simulation.flow_completed` starts it in the packet engine).

A chained flow waits with a start no step reaches (:data:`NEVER_PS`); each flow of a tag that
others wait for is marked ``FS_LEADS``, and the kernel hands back to Python at the end of the
step one of them finished in (:func:`uno.fluid.kernels.advance`). :meth:`FlowChains.start_ready`
then starts the flows whose group is done: at the group's last finish plus their own delay,
in the first step whose end is after it (the step the kernel resumes at, if that is later).

Units: time in ps.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from uno.fluid import columns as C

#: the start of a flow still waiting for its group: no step reaches it (its step index fits an
#: int64 at any step size)
NEVER_PS = float(2**62)


class FlowChains:
    """The groups other flows wait for, and what is left of each."""

    def __init__(self, plans, fs: np.ndarray):
        tags = [p.spec.tag for p in plans]
        self._unfinished = Counter(tags)
        self._dependents: dict[str, list[int]] = {}
        self._delay_ps = np.array([float(p.spec.start_ps) for p in plans])
        for i, p in enumerate(plans):
            if p.spec.after:
                self._dependents.setdefault(p.spec.after, []).append(i)
                fs[i, C.FS_START] = NEVER_PS
        self._tags = np.array(tags, dtype=object)
        self._last_finish_ps: dict[str, float] = {}
        if self._dependents:
            fs[:, C.FS_LEADS] = np.isin(self._tags, list(self._dependents))
        self._counted = np.zeros(len(plans), dtype=bool)
        self.any = bool(self._dependents)

    def start_ready(self, fs: np.ndarray, order: np.ndarray, next_start: int) -> bool:
        """After a kernel call: the leading flows that finished in it leave their groups; the
        flows waiting for a group now done get their start (``FS_START``), and the flows of
        ``order`` not started yet (from ``next_start``) are sorted by start again, in place.
        Returns whether any start was set."""
        done = (fs[:, C.FS_STATE] == 2.0) & (fs[:, C.FS_LEADS] > 0.0) & ~self._counted
        started = False
        for i in np.flatnonzero(done):
            self._counted[i] = True
            tag = self._tags[i]
            finish = float(fs[i, C.FS_FINISH])
            self._last_finish_ps[tag] = max(self._last_finish_ps.get(tag, 0.0), finish)
            self._unfinished[tag] -= 1
            if self._unfinished[tag] == 0:
                at = self._last_finish_ps[tag]
                for j in self._dependents.pop(tag, ()):
                    fs[j, C.FS_START] = at + self._delay_ps[j]
                    started = True
        if started:
            tail = order[next_start:]
            order[next_start:] = tail[np.lexsort((tail, fs[tail, C.FS_START]))]
        return started

    def waiting(self, fs: np.ndarray) -> np.ndarray:
        """Per flow, whether it still waits for its group (its start unknown)."""
        return fs[:, C.FS_START] >= NEVER_PS

    def start_times_ps(self, fs: np.ndarray) -> np.ndarray:
        """Each flow's start (ps): a chained flow's once its group is done, else its delay
        after the group (as the packet engine's flows table has it)."""
        start = np.where(self.waiting(fs), self._delay_ps, fs[:, C.FS_START])
        return np.round(start).astype(np.int64)
