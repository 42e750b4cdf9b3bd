"""Cache hints for the fluid kernels: ask the CPU for a row's cache lines ahead of use.

A hint only: it changes no value and never faults, so a kernel's results and its ``py_func``
twin's are the same with it. Units: byte offsets within a row, columns of float64.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload


def prefetch(a, row, byte_offset):
    """Ask the CPU to bring the cache line holding byte ``byte_offset`` of row ``row`` of the
    2-D C-contiguous array ``a`` into its caches ahead of use: in compiled code LLVM's
    ``llvm.prefetch`` (for writing, kept in every level), in Python nothing. A hint only: it
    changes no value and never faults, so a kernel's results and its ``py_func`` twin's are
    the same with it."""


@intrinsic
def _prefetch(typingctx, a, row, byte_offset):
    sig = types.void(a, row, byte_offset)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer2(
            context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
            strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
            inds=[args[1], zero], wraparound=False, boundscheck=False,
        )  # fmt: skip
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # (the typed-pointer name: LLVM 14, numba 0.59's, knows only it; later LLVMs upgrade
        # it to their opaque-pointer "llvm.prefetch.p0")
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8",
        )  # fmt: skip
        offset = context.cast(builder, args[2], signature.args[2], types.intp)
        at = builder.gep(builder.bitcast(ptr, i8p), [offset])
        builder.call(fn, [at, i32(1), i32(3), i32(1)])  # (write, keep in every level, data)
        return context.get_dummy_value()

    return sig, codegen


@overload(prefetch, jit_options={"cache": True})
def _prefetch_impl(a, row, byte_offset):
    def impl(a, row, byte_offset):
        _prefetch(a, row, byte_offset)

    return impl


@njit(cache=True, error_model="numpy", inline="always")
def prefetch_row(a, row, n_cols) -> None:
    """:func:`prefetch` every cache line of the first ``n_cols`` columns of row ``row`` of the
    2-D float64 array ``a`` (a row need not start on a line: its last byte's line too).

    Why, for the delay line: a flow's slots are touched once per step each, one slot after the
    other, while ~1,000 other flows' slots are touched in between (the 40%-load Fig. 10 run's
    ring spans ~200 MB), so each slot's first touch misses every cache. A slot asked for a
    step ahead is often gone again by its turn (a step touches more than the core's caches
    hold), so the walks that read or write most slots ask a few flows or route entries ahead
    in the same walk (:func:`uno.fluid.arrivals.take_feedback`,
    :func:`uno.fluid.forward.depart_level`); the filing, whose slot depends on the RTT it is
    about to sample, asks for the flow's next slot a step (or a block) ahead. On that run with
    ``engine=fluid_fast`` the in-walk hints took the steps from ~6.3 to ~5.3 s, with the same
    results."""
    n_bytes = n_cols * 8
    for off in range(0, n_bytes, 64):
        prefetch(a, row, off)
    prefetch(a, row, n_bytes - 1)
