"""Unit conversions. The engine counts time in integer picoseconds, sizes in integer bytes and
rates in bits per second; configs use human units (the unit is in the field's name). Every
conversion is one of these functions, called where a builder reads the config value."""

from __future__ import annotations

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000
BITS_PER_BYTE = 8


def us_to_ps(us: float) -> int:
    """Microseconds (float) to integer picoseconds, rounded to nearest."""
    return int(round(us * PS_PER_US))


def ms_to_ps(ms: float) -> int:
    """Milliseconds (float) to integer picoseconds, rounded to nearest."""
    return int(round(ms * PS_PER_MS))


def gbps_to_bps(gbps: float) -> int:
    """Gigabits per second to integer bits per second."""
    return int(round(gbps * 1e9))


def serialization_ps(size_bytes: int, rate_bps: int) -> int:
    """Time to put ``size_bytes`` on a wire of ``rate_bps``, in integer picoseconds (rounded up)."""
    return -(-size_bytes * BITS_PER_BYTE * PS_PER_S // rate_bps)


def rate_bps(size_bytes: float, duration_ps: int) -> float:
    """Average rate in bits per second of ``size_bytes`` carried over ``duration_ps``."""
    return size_bytes * BITS_PER_BYTE * PS_PER_S / duration_ps if duration_ps > 0 else 0.0
