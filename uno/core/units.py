"""Unit conversions. The engine counts time in integer picoseconds, sizes in integer bytes and
rates in bits per second; configs use human units (the unit is in the field's name). Every
conversion is one of these functions, called where a builder reads the config value."""

from __future__ import annotations

from numba import njit

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000
BITS_PER_BYTE = 8
_BITS_PS_PER_BYTE_S = BITS_PER_BYTE * PS_PER_S


def us_to_ps(us: float) -> int:
    """Microseconds (float) to integer picoseconds, rounded to nearest."""
    return int(round(us * PS_PER_US))


def ms_to_ps(ms: float) -> int:
    """Milliseconds (float) to integer picoseconds, rounded to nearest."""
    return int(round(ms * PS_PER_MS))


def gbps_to_bps(gbps: float) -> int:
    """Gigabits per second to integer bits per second."""
    return int(round(gbps * 1e9))


@njit(cache=True)
def serialization_ps_kernel(size_bytes, rate_bps):
    """Time to put ``size_bytes`` on a wire of ``rate_bps``, in integer picoseconds (rounded
    up). Compiled, for the kernels; Python code calls :func:`serialization_ps`, the same
    function interpreted (exact for any size)."""
    return (size_bytes * _BITS_PS_PER_BYTE_S + rate_bps - 1) // rate_bps


serialization_ps = serialization_ps_kernel.py_func


def rate_bps(size_bytes: float, duration_ps: int) -> float:
    """Average rate in bits per second of ``size_bytes`` carried over ``duration_ps``."""
    return size_bytes * BITS_PER_BYTE * PS_PER_S / duration_ps if duration_ps > 0 else 0.0
