"""A cycle counter the fluid kernels read to tally where a step's time goes
(``StepScratch.tally``, rows :data:`TALLY`; ``benchmarks/fluid_profile.py`` prints them).

:func:`cycles` is LLVM's ``llvm.readcyclecounter`` in compiled code (the CPU's time-stamp
counter: a few nanoseconds a read) and :func:`time.perf_counter_ns` in Python. A reading changes
no state the run's results depend on. Units: counter ticks (compare shares, or scale by the wall
time of the calls that counted them).
"""

from __future__ import annotations

import time

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from uno.core.layout import layout

#: the parts of a step the tally counts (:func:`uno.fluid.kernels.advance`): the flows starting,
#: the feedback arriving, the sends, the links' step (:func:`uno.fluid.forward.forward`: its
#: lists, the links no entry reaches, the links' levels and grids, the entries' departures),
#: the block holding and ACKs, the filing of sends, drops and deliveries; in the hybrid
#: (:mod:`uno.fluid.hybrid_loop`) also the packet events the kernel ran between the steps, the
#: packets' bytes into the fluid links and the links' state out to the ports; ``steps`` counts
#: steps, ``entries`` the route entries the departures walked
TALLY = layout(
    "Tally",
    ("start", "feedback", "sends", "enlist", "lone_links", "links", "depart", "carry",
     "file_sends", "file_drops", "file_deliveries", "packet_events", "packets_in",
     "state_out", "steps", "entries"),
)  # fmt: skip


def cycles() -> int:
    """The cycle counter now (ticks)."""
    return time.perf_counter_ns()


@intrinsic
def _read_cycle_counter(typingctx):
    sig = types.int64()

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter"
        )
        return builder.call(fn, [])

    return sig, codegen


@overload(cycles, jit_options={"cache": True})
def _cycles_impl():
    def impl():
        return _read_cycle_counter()

    return impl


@njit(cache=True, inline="always")
def tick(tally, part, since):
    """Add the ticks from ``since`` to now to ``tally[part]``; returns now."""
    now = cycles()
    tally[part] += now - since
    return now
