"""PFC's ingress queues in the kernel (:class:`uno.net.pfc.PfcIngress`): a queue per link into
a lossless switch counts the bytes that entered through it and have not left, and signals a
PAUSE past Xoff, a RESUME at Xon, to the upstream port one signal delay later (events
``EV.pause`` / ``EV.resume``: :func:`uno.net.compiled.event_port.pfc_signal`)."""

from __future__ import annotations

from numba import njit

from uno.core.packet import DATA
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import EV, EV_BITS, ING, H, K


@njit(cache=True)
def ingress_receive(ST, PK, ing, slot, now):
    """The packet in ``slot`` enters its switch through PFC ingress queue ``ing`` at ``now``
    (:meth:`uno.net.pfc.PfcIngress.receive`): counted (unless it is a control packet in the
    switch's control lane), and past Xoff a PAUSE for the upstream port's data lane."""
    ib = ST[H.off_ingress] + ing * ING.size
    if PK[slot, K.kind] != DATA and ST[ib + ING.ctrl]:
        PK[slot, K.ingress] = -1
        return
    PK[slot, K.ingress] = ing
    b = ST[ib + ING.bytes] + PK[slot, K.bytes]
    ST[ib + ING.bytes] = b
    if b > ST[ib + ING.max_bytes]:
        ST[ib + ING.max_bytes] = b
    if b > ST[ib + ING.xoff] and not ST[ib + ING.pausing]:
        ST[ib + ING.pausing] = 1
        ST[ib + ING.sent] += 1
        heap_push(
            ST, now + ST[ib + ING.signal_ps], next_eid(ST), (ST[ib + ING.up] << EV_BITS) | EV.pause
        )


@njit(cache=True)
def ingress_release(ST, ing, size, now):
    """``size`` bytes that entered through PFC ingress queue ``ing`` left the switch or were
    dropped at ``now`` (:meth:`uno.net.pfc.PfcIngress.release`): at Xon or below, a pausing
    queue sends the RESUME."""
    ib = ST[H.off_ingress] + ing * ING.size
    b = ST[ib + ING.bytes] - size
    ST[ib + ING.bytes] = b
    if ST[ib + ING.pausing] and b <= ST[ib + ING.xon]:
        ST[ib + ING.pausing] = 0
        heap_push(
            ST, now + ST[ib + ING.signal_ps], next_eid(ST), (ST[ib + ING.up] << EV_BITS) | EV.resume
        )
