"""Borrowed arrays: a kernel's view of an array it neither owns nor outlives.

Numba counts references to every array a compiled function holds: each function that takes an
array increments its owner's count on entry and decrements it on return, an atomic operation
each, and a kernel whose event path passes four arrays through a dozen small functions spends a
third of its time there. :func:`borrowed` gives the same array (data, shape, strides) without an
owner, so those counts are skipped (Numba checks for no owner before counting). Use it only at a
kernel's entry from Python, on arguments the caller keeps alive for the call, and never let a
borrowed array (or a view of it) outlive the call: no return to Python, no store into an object
that does.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload


def borrowed(a):
    """``a`` without its owner's reference count in compiled code (in Python: ``a``)."""
    return a


@intrinsic
def _borrowed(typingctx, a):
    if not isinstance(a, types.Array):
        return None
    sig = a(a)

    def codegen(context, builder, signature, args):
        src = context.make_array(a)(context, builder, value=args[0])
        view = context.make_array(a)(context, builder)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        view.nitems = src.nitems
        view.itemsize = src.itemsize
        view.data = src.data
        view.shape = src.shape
        view.strides = src.strides
        return view._getvalue()

    return sig, codegen


@overload(borrowed)
def _borrowed_overload(a):
    if isinstance(a, types.Array):
        return lambda a: _borrowed(a)
    return None
