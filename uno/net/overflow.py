"""What a queue does with a packet its buffer has no room for: the overflow policy every queue
form of every engine asks (the Python lazy and event ports, their compiled twins, the hybrid
engine's shared port and the fluid engine's links).

``OVERFLOW_DROP`` is tail drop: the packet is lost, and a fluid link loses the bytes above its
buffer. ``OVERFLOW_TRIM`` keeps the packet's header (NDP, Handley et al., SIGCOMM 2017; the
Ultra Ethernet transport REPS runs on): the port cuts a data packet that does not fit to
``switch.trimming.header_bytes``, makes it a ``TRIM`` packet and sends it on in its control lane,
ahead of data; the receiver NACKs it and the sender resends it at once. The packet ports of both
data planes trim (the hybrid's shared ports also a packet the fluid bytes squeeze out); the fluid
engine's links turn a trimmed flow's lost bytes into NACKs (uncoded flows); max-min never fills
a queue.
"""

from __future__ import annotations

from numba import njit

#: the packet is admitted to the queue
ADMIT = 0
#: the packet is dropped (tail drop)
OVERFLOW_DROP = 1
#: a data packet is cut to its header, which goes on at high priority (trimming)
OVERFLOW_TRIM = 2

#: overflow policies by configuration name
OVERFLOW_POLICIES = {"drop": OVERFLOW_DROP, "trim": OVERFLOW_TRIM}


@njit(cache=True)
def packet_verdict(policy, queued_bytes, size_bytes, buffer_bytes):
    """What a queue holding ``queued_bytes`` does with an arriving packet of ``size_bytes`` under
    ``policy`` with ``buffer_bytes`` of buffer: ``ADMIT`` while it fits, else the policy's code."""
    if queued_bytes + size_bytes <= buffer_bytes:
        return ADMIT
    return policy


@njit(cache=True)
def fluid_excess_bytes(level_bytes, buffer_bytes):
    """Bytes a fluid queue at ``level_bytes`` holds beyond its buffer (what overflow acts on)."""
    excess = level_bytes - buffer_bytes
    return excess if excess > 0.0 else 0.0


#: :func:`packet_verdict` for the Python data plane, interpreted (a compiled call per packet
#: costs more than the comparison); its ports ask it only about a packet that does not fit
verdict = packet_verdict.py_func
