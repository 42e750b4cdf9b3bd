"""Flows run outside a fluid engine that bound its step as its own would: the hybrid's packet
flows (:class:`uno.fluid.hybrid.HybridSimulation`), seen by its fluid part
(:meth:`uno.fluid.engine.FluidSimulation._wanted_factor`)."""

from __future__ import annotations

import numpy as np


class OutsideFlows:
    """Start times and base RTTs (ps) of flows another engine runs, sorted by start
    (``starts_ps``, ``rtts_ps``), and which of them have not finished yet: the shortest base
    RTT among those left bounds the fluid step as a fluid flow's would while it may still
    run."""

    def __init__(self, starts_ps=(), base_rtts_ps=()) -> None:
        starts = np.asarray(starts_ps, dtype=np.float64)
        rtts = np.asarray(base_rtts_ps, dtype=np.float64)
        if starts.shape != rtts.shape:
            raise ValueError(f"{starts.size} start times for {rtts.size} base RTTs")
        order = np.argsort(starts, kind="stable")
        self.starts_ps = starts[order]
        self.rtts_ps = rtts[order]
        #: per flow in the order given: its base RTT, or inf once it has finished
        self._left_rtts_ps = rtts.copy()

    def __len__(self) -> int:
        return int(self.starts_ps.size)

    def finished(self, i: int) -> None:
        """The ``i``-th flow given (the order of the arrays passed in) has finished."""
        self._left_rtts_ps[i] = np.inf

    def shortest_rtt_left_ps(self) -> float:
        """The shortest base RTT (ps) among the flows not finished (started or not); inf when
        none is left."""
        return float(self._left_rtts_ps.min()) if self._left_rtts_ps.size else np.inf
