"""The compiled data plane (``engine.dataplane=compiled``): every packet's journey between two
hosts — NIC port, switch ports, links, the ECMP hash, tail drop, RED/ECN at dequeue, the phantom
queue, the control lane of ``switch.ack_priority`` — runs inside ``@njit(cache=True)`` kernels
over struct-of-arrays state, and Python sees only what an endpoint must see: a packet arriving at
a host. It is the lazy port model of :mod:`uno.net.port` (the Python data plane, kept as the
reference implementation and test oracle), translated statement by statement, so both give the
same results bit for bit (``tests/test_compiled_dataplane.py``).

State (built by :class:`CompiledDataplane` from a configured :class:`uno.net.network.Network`):

- ``ST`` (int64, flat): a header of scalars and section offsets (``_H_*``), the ports table
  (``_P_*`` columns: busy-until, the FIFO as a linked list through the packet pool, bytes,
  counters, flags), switch forwarding (per switch and destination host an offset and count into
  a list of equal-cost ports), the node → host-id map and the event heap (time, eid, payload).
- ``F`` (float64, ports x ``_F_*``): RED thresholds, phantom queue parameters and level.
- ``U`` (uint64, flat): each marking port's PCG64 state (its ``ecn/<port>`` stream: the kernel
  draws exactly the doubles numpy's ``Generator.random`` would) and each switch's ECMP salt.
- ``PK`` (int64, packets x ``_K_*``): the packet pool. A packet in the network is a row (kind,
  wire size, destination host, ECN, departure time, next row in its port's FIFO, hash key);
  free rows are chained through the same next column. Rows never move, so a port's FIFO is a
  linked list of rows: no per-port ring buffer has to be sized for a WAN link's packets.

Events: a port has at most one pending delivery event per lane (data, control), keyed like the
Python engine's ``(time, priority 1, eid)``. Each call into the kernel reserves one eid ``e`` of
the engine's counter, and the events it schedules take ``e << EID_SHIFT`` + 0, 1, 2, ...: they
sort after every event scheduled before the call and before every event scheduled after it,
in creation order, exactly as the Python ports' eids would. So kernel events and Python events
(timers, NIC wakes, SimPy processes) interleave exactly as in the Python data plane: :meth:`uno.core.engine.Engine.run_until` runs the kernel up to the key of
the next Python event, and the kernel returns early at the first delivery to a host (one at a
time: the receiving endpoint may send at once). ``inject`` is a host's NIC port receiving a
packet from Python (:meth:`CompiledPort.receive`), taking the eid the Python port would take.

Link faults (:mod:`uno.faults.models`: a failed link, i.i.d. and correlated block loss) are
applied where a packet leaves a link's wire, before the next node, as the Python FaultyLink does:
each faulty port's models in order (``_FM_*`` rows in ST, their probabilities in rows of ``F``
after the ports'), their draws from the port's ``fault/<port>`` stream stepped in the kernel,
drops counted by reason and kind and copied back to the FaultyLink and BlockLoss objects by
:meth:`CompiledDataplane.sync_network`.

INT (:mod:`uno.net.int`): a stamping port (``_FL_INT``) counts the bytes that leave it
(``_P_TXB``, HPCC's txBytes) and writes its record into a data packet's row when the packet
leaves: the packet's departure (the end of its serialisation), the bytes behind it, the bytes
sent, the rate; the records are extra columns of the packet pool (``_K_INT_N`` and on), set on
the Python packet as ``int_hops`` when it reaches Python, and written back from ``int_hops``
when a Python receiver's ACK enters the kernel. The Python data plane writes them in its event
ports, whose unpaused results are the lazy ports' (the kernel's), except with
``switch.ack_priority`` (a strict-priority control queue on the data's transmitter against a
control lane of its own): then the builder gives the kernel event ports, as below.

Event ports and PFC (:mod:`uno.net.event_port`, :mod:`uno.net.pfc`; ``_FL_EVENT`` ports, built
from the network's EventPorts when ``engine.port_model`` picks them: PFC, INT with ACK priority,
or ``event``): the port's departures are decided one at a time, at the end of each
serialisation (an ``_EV_TXDONE`` event), from two FIFOs served by strict priority (control,
then data), with the wire a FIFO of its own (``_EV_WIRE`` deliveries); a PFC ingress queue per
link into a lossless switch (``_I_*`` rows) counts the bytes that entered through it and have
not left, and schedules a PAUSE (``_EV_PAUSE``) or RESUME (``_EV_RESUME``) for the upstream
port one signal delay later; a paused port finishes its frame and starts no data packet, its
busy-until reading ``_PAUSED_PS`` (a host's NIC scheduler then waits). A PAUSE or RESUME that
changes a port returns to Python, which logs the interval (:class:`uno.net.pfc.PauseLog`) and
wakes a resumed NIC's senders; the ingress counters are copied back to the PfcIngress objects
for the summary. Pause signals in flight have no fixed bound, so the event heap grows (the
kernel stops first when it has less than ``_HEAP_ROOM`` free entries).

Endpoints: a flow without erasure coding has its receiver in the kernel
(:func:`_receive_data`, DCQCN's CNP coalescing included). A flow whose sender has a compiled form
(:func:`kernel_sender_supported`: DCTCP, UnoCC, GEMINI, MP-RDMA, BBR, HPCC or DCQCN, laws of
:mod:`uno.cc.law`, over ECMP or packet spraying, no coding) has its
sender in the kernel too (``_S_*`` rows and per-packet arrays in ST, the controller's doubles in a row of F): the
transport of :class:`uno.transport.sender.Sender` (window, pacing, retransmission timer, fast
retransmit, delivery-rate samples) and the hosts' NIC turn-taking
(:class:`uno.net.nic.NicScheduler`), so Python sees only flow starts
(:meth:`CompiledDataplane.start_flow`) and completions (``_RUN_DONE``); the Python objects
get the kernel's state whenever samplers, tables or checks read them
(:meth:`CompiledDataplane.sync_senders`). The other flows keep their Python senders (the
callback path: the kernel returns their ACKs), and at a NIC they share with kernel senders they
wait in the kernel's FIFO and get their turns from it (``_RUN_NICPY``, :func:`nic_continue`);
the run's summary says which and why (docs/design.md).
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import njit

from uno.cc.law import LOSS_NACK, LOSS_TIMEOUT, ack_feedback, no_timer
from uno.cc.law import C as LAW_STATE
from uno.cc.registry import next_timer as cc_next_timer
from uno.cc.registry import on_feedback as cc_on_feedback
from uno.cc.registry import on_loss as cc_on_loss
from uno.cc.registry import on_send as cc_on_send
from uno.cc.registry import on_timer as cc_on_timer
from uno.cc.registry import pacing_rate as cc_pacing_rate
from uno.core.errors import ConfigError, InvariantError
from uno.core.packet import ACK, DATA, KIND_NAMES
from uno.faults.models import (
    REASON_BLOCK,
    REASON_DOWN,
    REASON_RANDOM,
    BlockLoss,
    IidLoss,
    LinkDown,
)
from uno.net.event_port import DATA_PRIORITY
from uno.net.port import DROP_BUFFER
from uno.net.switch import Switch

# ---- layout --------------------------------------------------------------------------------
# header of ST
_H_NOW, _H_HEAP_N, _H_FREE, _H_EID = 0, 1, 2, 3
_H_OFF_P, _H_N_PORTS, _H_OFF_FIBOFF, _H_OFF_FIBN, _H_OFF_FIBPORTS = 4, 5, 6, 7, 8
_H_N_HOSTS, _H_OFF_NODEHOST, _H_OFF_NODESALT = 9, 10, 11
_H_OFF_HT, _H_OFF_HE, _H_OFF_HP, _H_HEAP_CAP = 12, 13, 14, 15
_H_DROP0 = 16  # tail drops by packet kind: 16, 17, 18
_H_IN_POOL = 19  # packets held in the pool (in the network)
_H_N_HOPS = 20  # packets that entered a queue (sum of port arrivals)
_H_PUSHES = 21  # events the kernel scheduled
_H_OFF_FLOWS, _H_N_FLOWS, _H_OFF_HOSTNIC = 22, 23, 24  # flows table, host -> NIC port
_H_RX_DATA = 25  # data packets the kernel's receivers took (each answered by an ACK)
_H_ERROR, _H_ERROR_ARG = 26, 27  # what stopped the kernel (_ERR_*) and its argument
_H_OFF_FLT = 28  # the fault models' rows
_H_FDROP0 = 29  # fault drops by reason (_REASON_*) and packet kind: 29 + 3 (reason - 1) + kind
_H_INT_MAX, _H_INT_GEAR = 38, 39  # INT: records a packet holds (0: INT off), Gear's replacement
_H_OFF_ING, _H_N_ING = 40, 41  # PFC's ingress queues (rows of _NIC)
_H_OFF_SND, _H_OFF_NICS = 42, 43  # the kernel's senders (rows of _NSC), hosts' NICs (_NNC)
_H_TX_DATA, _H_RX_ACK = 44, 45  # data packets the kernel's senders sent, ACKs they took
_H_POOL_CAP = 46  # rows of the packet pool
_H_DONE_FLOW = 47  # the flow whose completion stopped the kernel
_H_CC_SW = 48  # a kernel sender's F row: the law's state in its first _H_CC_SW columns, then
#                its constants (uno.cc.law)
_H_INT_REC = 49  # the first of the F rows an ACK's INT records are copied to for its law, a
#                  record a row (as many as a packet holds)
_HEADER = 50
# errors the kernel reports (the Python side raises InvariantError)
_ERR_MISROUTED, _ERR_SEQ, _ERR_BYTES, _ERR_OUTSTANDING = 1, 2, 3, 4
# what ``run`` returns as its host besides a host id: nothing for Python (-1), an error (-2), a
# PAUSE (-3) or RESUME (-4) that changed a port (its index as the slot), no room left in the event
# heap for the next event's pushes (-5: Python grows it and calls again)
_RUN_NONE, _RUN_ERROR, _RUN_PAUSED, _RUN_RESUMED, _RUN_HEAP = -1, -2, -3, -4, -5
# ... a kernel sender's flow completed (-6, the flow as the slot), too few free packet rows for
# the next event's sends (-7: Python grows the pool and calls again)
_RUN_DONE, _RUN_POOL = -6, -7
# ... a Python sender's turn at a NIC the kernel schedules (-8: its flow as the slot, the host
# as the kind; Python calls its nic_ready, then nic_continue)
_RUN_NICPY = -8
# flows (ST rows): the kernel's receiver of a flow (ACK generation, counts) when _R_KERNEL
# (_R_CNP_INT, _R_LAST_CNP, _R_CNPS: DCQCN's notification point, the least gap between CNPs
# in ps (0: none), the last CNP's time (-1: none yet), the CNPs sent)
(_R_KERNEL, _R_N_PACKETS, _R_SIZE, _R_ACK_BYTES, _R_GOT_OFF, _R_N_GOT, _R_BYTES, _R_DUP,
 _R_ECN, _R_COMPLETE, _R_CNP_INT, _R_LAST_CNP, _R_CNPS) = range(13)  # fmt: skip
_NRC = 13

# ports (ST rows)
(_P_BUSY, _P_HEAD, _P_QHEAD, _P_TAIL, _P_PENDING, _P_BYTES, _P_BUFFER, _P_RATE, _P_DELAY,
 _P_NEXT, _P_ARRIVALS, _P_DROPS, _P_MARKS, _P_MAXB, _P_ENQB, _P_FLAGS, _P_PH_LAST,
 _P_C_BUSY, _P_C_HEAD, _P_C_TAIL, _P_C_PENDING, _P_RNG, _P_HELD, _P_FLT_OFF, _P_FLT_N,
 _P_FLT_RNG, _P_FLT_DROPS, _P_TXB,
 _P_TX, _P_TXQ, _P_W_HEAD, _P_W_TAIL, _P_W_PENDING, _P_PAUSED, _P_ING, _P_HOST) = range(36)  # fmt: skip
_NPC = 36  # (_P_HOST: a NIC's host, -1 for a switch port)
# an event port (_FL_EVENT; uno.net.event_port.EventPort, used with PFC): its FIFOs are the
# data queue (_P_HEAD/_P_TAIL) and the control queue (_P_C_HEAD/_P_C_TAIL, strict priority on the
# same transmitter when the switch has ack_priority); _P_TX is the packet in service (its lane
# _P_TXQ), the wire is a FIFO of its own (_P_W_*), _P_PAUSED has a bit per paused priority and
# _P_ING is the PFC ingress queue of the link it feeds (-1: none)
# port flags
(_FL_MARK_PHYS, _FL_MARK_PHANT, _FL_PH_ACKS, _FL_PH_DROPS, _FL_PHANTOM, _FL_CTRL, _FL_FAULT,
 _FL_INT, _FL_EVENT, _FL_NIC, _FL_KNIC) = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # fmt: skip
# (_FL_KNIC: a NIC whose host's senders are the kernel's, whose resume the kernel handles)
# event port lanes (uno.net.event_port: CONTROL, DATA_PRIORITY) and their bits in _P_PAUSED
_LANE_CONTROL, _LANE_DATA = 0, 1
# PFC ingress queues (ST rows of _NIC; uno.net.pfc.PfcIngress): the upstream port, Xoff, Xon,
# bytes in, peak bytes, pausing, PAUSEs sent, lossless violations, the signal's delay (ps),
# whether control packets bypass it (the switch's control lane)
(_I_UP, _I_XOFF, _I_XON, _I_BYTES, _I_MAX, _I_PAUSING, _I_SENT, _I_VIOL, _I_SIGNAL,
 _I_CTRL) = range(10)  # fmt: skip
_NIC = 10
# event payloads: the type in the low _EV_BITS bits, the port above them, a slot above bit 32
# (RTO: a kernel sender's timer; NICWAKE: a host's NIC turn; PACE: a paced sender's next send)
_EV_DATA, _EV_CTRL, _EV_WIRE, _EV_TXDONE, _EV_PAUSE, _EV_RESUME = range(6)
_EV_RTO, _EV_NICWAKE, _EV_PACE, _EV_RATE = 6, 7, 8, 9
_EV_BITS = 4  # (the type's bits)
_EV_TYPE_MASK = (1 << _EV_BITS) - 1
_EV_PORT_MASK = (1 << 28) - 1
#: a port's busy-until while its data priority is paused (uno.net.event_port.PAUSED_PS)
_PAUSED_PS = 1 << 62
#: pushes the heap must have room for before an event (or an injection) is processed
_HEAP_ROOM = 32
#: free packet rows the pool must have before an event is processed (an event sends at most one
#: data packet, and an ACK per data packet delivered)
_POOL_ROOM = 8
# fault models (ST rows of _NMC, in the order a port's FaultyLink consults them): the type,
# then per type: down (start ps, end ps or -1); iid (index of p among the floats); block
# (packets per block, position of the next packet, the doomed positions as a bitmask, number of
# cumulative probabilities, index of the first among the floats, offset of its counters in ST:
# blocks, then blocks that lost k = 0, 1, ... packets)
_FM_DOWN, _FM_IID, _FM_BLOCK = 1, 2, 3
_M_TYPE, _M_A, _M_B, _M_C, _M_D, _M_E, _M_F = range(7)
_NMC = 8
# why a fault model dropped a packet (uno.faults.models reasons, in this order)
_REASON_DOWN, _REASON_RANDOM, _REASON_BLOCK = 1, 2, 3
# port floats (F columns)
_F_RED_KMIN, _F_RED_KMAX, _F_RED_SPAN = 0, 1, 2
_F_PH_SIZE, _F_PH_DRAIN, _F_PH_LEVEL, _F_PH_KMIN, _F_PH_KMAX, _F_PH_SPAN = 3, 4, 5, 6, 7, 8
_NFC = 24  # (a kernel sender's controller keeps its doubles in one row)
# packet pool columns
(_K_KIND, _K_SIZE, _K_DST, _K_ECN, _K_DEP, _K_NEXT, _K_HKEY, _K_FLOW, _K_SEQ, _K_PAYLOAD,
 _K_SRC, _K_ENTROPY, _K_ING, _K_SENT, _K_TX_DELIVERED, _K_TX_DELIVERED_PS) = range(16)  # fmt: skip
_NKC = 16
# (_K_TX_DELIVERED, _K_TX_DELIVERED_PS: a rate-sampling kernel sender's delivered bytes and
# delivered clock when it sent this copy, which its ACK echoes: Packet.tx_delivered)
# with INT on, a packet's records follow: their count, then (ts ps, qlen bytes, tx bytes, rate
# bit/s) per record (uno.net.int)
_K_INT_N = _NKC
_INT_FIELDS = 4

# kernel senders (ST rows of _NSC; uno.transport.sender.Sender with a controller that has a
# compiled form, uno.cc.*_kernel): the flow's facts, its counters, the RTO timer, and the
# offsets of its per-flow arrays in ST: acknowledged flags and outstanding send times + 1 (0: not
# outstanding, so untouched memory means none) per sequence number; the RTO FIFO of (send time, seq) pairs, a ring; the
# retransmission queue, a ring; the sorted send times of acknowledged packets sent after the
# FIFO's oldest entry (fast retransmit); then the controller's ints (_S_CC on)
(_S_ON, _S_HOST, _S_SRC, _S_DST, _S_ENTROPY, _S_HKEY, _S_N, _S_LAST_SEQ, _S_FULL_WIRE,
 _S_LAST_WIRE, _S_MSS, _S_LAST_PAYLOAD, _S_NEXT_SEQ, _S_INFLIGHT, _S_N_ACKED, _S_SENT_BYTES,
 _S_SENT_PKTS, _S_ACKED_BYTES, _S_RETX, _S_TIMEOUTS, _S_LOST, _S_DUP, _S_ECN_ACKS, _S_DONE,
 _S_FINISH, _S_ARMED, _S_LAST_TIMEOUT, _S_GRAN, _S_RTO, _S_RTO_AFTER, _S_DUPTHR, _S_FAST_RETX,
 _S_LAST_FAST, _S_BASE_RTT, _S_ACKED_OFF, _S_OUT_OFF, _S_FIFO_OFF, _S_FIFO_CAP, _S_FIFO_HEAD,
 _S_FIFO_N, _S_RQ_OFF, _S_RQ_CAP, _S_RQ_HEAD, _S_RQ_N, _S_LATER_OFF, _S_LATER_N,
 _S_NIC_QUEUED, _S_NIC_NEXT, _S_FROW, _S_CCK, _S_PACED, _S_PACING_RTT, _S_NEXT_SEND, _S_WAKE,
 _S_SPRAY, _S_SPRAY_N, _S_SPRAY_RNG, _S_DUP_CC, _S_RC_SENT, _S_RC_WIRE, _S_SEND_CC,
 _S_TIMER_CC, _S_RATE, _S_DELIVERED_PS, _S_CC) = range(65)  # fmt: skip
# (_S_WAKE: the pacing wake's time + 1, 0 for none: a wake at another time is stale)
# (_S_RC_SENT, _S_RC_WIRE: the send time and wire bytes of a rate-based sender's last packet,
# whose pacing gap a rate timer may shorten: _EV_RATE)
# (_S_SEND_CC: the law hears of every data packet sent, its on_send; _S_TIMER_CC: it has timers
# of its own, next_timer / on_timer)
# (_S_RATE: the law reads delivery-rate samples; _S_DELIVERED_PS: the delivered clock, when the
# acknowledged bytes last advanced)
# the controllers with a compiled form (_S_CCK): their kernels' modules
_CC_DCTCP = 1
#: a controller that is a law (uno.cc.law): _S_CCK = _LAW_BASE + its registry kind
_LAW_BASE = 100
_NSC = _S_CC + 48  # (the controller's ints: uno.cc.*_kernel N_INTS)
# hosts' NICs (ST rows of _NNC): the NIC port, the FIFO of waiting kernel senders (a list
# through _S_NIC_NEXT), whether a wake is pending (uno.net.nic.NicScheduler)
_N_PORT, _N_HEAD, _N_TAIL, _N_PENDING = range(4)
_NNC = 4

#: a kernel sender's window: the first column of its F row (the law's state, uno.cc.law)
LAW_CWND = LAW_STATE.cwnd

#: a time after every event (an empty heap's top)
NEVER_PS = 1 << 62
#: kernel eids are (engine eid reserved by the call) << EID_SHIFT + the call's push count
EID_SHIFT = 20
_EID_ROOM = (1 << EID_SHIFT) - 4  # a call stops before it could run out of sub-eids
#: a call returns to Python after scheduling this many events (a few hundredths of a second of
#: wall time, a few tenths on a busy machine; _EID_ROOM's took up to 0.7 s): a Numba call keeps
#: the interpreter, so Ctrl-C and the progress watcher's thread wait for it. Where a call stops
#: changes no result (its events sort by the engine eid it reserved, as for any call).
_CALL_PUSHES = min(1 << 18, _EID_ROOM)
_PS_BITS_PER_S = 8 * 10**12  # bits per byte x picoseconds per second

# uint64 constants: numba types a mix of uint64 and int64 as float64, so every literal that
# meets a uint64 is a uint64 itself
_U11, _U20, _U27, _U30, _U31, _U32, _U40, _U58, _U63, _U64 = (np.uint64(k) for k in (11, 20, 27, 30, 31, 32, 40, 58, 63, 64))  # fmt: skip
_M32 = np.uint64(0xFFFFFFFF)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_PCG_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_PCG_MULT_LO = np.uint64(0x4385DF649FCCF645)
_ONE = np.uint64(1)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


# ---- per-packet kernels (each has a pure-Python twin: .py_func) --------------------------------
@njit(cache=True)
def mix64(x):
    """SplitMix64 finaliser of a uint64 (:func:`uno.core.packet.mix64`)."""
    x = (x ^ (x >> _U30)) * _MIX1
    x = (x ^ (x >> _U27)) * _MIX2
    return x ^ (x >> _U31)


@njit(cache=True)
def ecmp_pick(hkey, salt, n_ports):
    """Index in [0, n_ports) a switch with ``salt`` picks for ``hkey`` (both uint64;
    :func:`uno.net.switch.ecmp_index`)."""
    return np.int64(mix64(hkey ^ salt) % np.uint64(n_ports))


@njit(cache=True)
def _mul64(a, b):
    """Full 128-bit product of two uint64: (high, low)."""
    a0 = a & _M32
    a1 = a >> _U32
    b0 = b & _M32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _U32) + (p01 & _M32) + (p10 & _M32)
    low = (mid << _U32) | (p00 & _M32)
    high = p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    return high, low


@njit(cache=True)
def pcg64_next_double(U, base):
    """Step the PCG64 generator whose (state high, state low, increment high, increment low)
    words are ``U[base:base + 4]`` and return the double numpy's ``Generator.random`` gives:
    a 128-bit LCG step, the XSL-RR output of the new state, its top 53 bits."""
    sh = U[base]
    sl = U[base + 1]
    high, low = _mul64(sl, _PCG_MULT_LO)
    high = high + sh * _PCG_MULT_LO + sl * _PCG_MULT_HI
    new_low = low + U[base + 3]
    carry = _ONE if new_low < low else np.uint64(0)
    new_high = high + U[base + 2] + carry
    U[base] = new_high
    U[base + 1] = new_low
    xored = new_high ^ new_low
    rot = new_high >> _U58
    out = (xored >> rot) | (xored << ((_U64 - rot) & _U63))
    return np.float64(out >> _U11) * _TO_UNIT


@njit(cache=True)
def serialization_ps(size_bytes, rate_bps):
    """Integer picoseconds to serialise ``size_bytes`` at ``rate_bps``, rounded up
    (:func:`uno.core.units.serialization_ps`)."""
    bits_ps = size_bytes * _PS_BITS_PER_S
    return (bits_ps + rate_bps - 1) // rate_bps


@njit(cache=True)
def red_decide(U, rng_base, kmin, kmax, span, occupancy):
    """RED at ``occupancy`` bytes (:meth:`uno.net.red.RedMarker.decide`): one draw in the ramp."""
    if occupancy <= kmin:
        return False
    if occupancy > kmax or span <= 0.0:
        return True
    return pcg64_next_double(U, rng_base) * span < occupancy - kmin


@njit(cache=True)
def phantom_enqueue(ST, F, p, pb, now, size):
    """Phantom queue of port ``p`` (row base ``pb`` in ST): drain since its last touch, add
    ``size`` bytes, cap (:meth:`uno.net.phantom.PhantomQueue.enqueue`)."""
    level = F[p, _F_PH_LEVEL] - (now - ST[pb + _P_PH_LAST]) * F[p, _F_PH_DRAIN]
    if level < 0.0:
        level = 0.0
    level += size
    size_cap = F[p, _F_PH_SIZE]
    F[p, _F_PH_LEVEL] = level if level < size_cap else size_cap
    ST[pb + _P_PH_LAST] = now


@njit(cache=True)
def _decide_mark(ST, F, U, PK, p, pb, slot, remaining):
    """ECN for the data packet in ``slot`` leaving port ``p`` with ``remaining`` bytes behind
    it: the phantom queue's RED at its departure, then the physical queue's
    (:meth:`uno.net.port.PortBase._decide_mark`: the same draws in the same order)."""
    flags = ST[pb + _P_FLAGS]
    rng = ST[pb + _P_RNG]
    marked = False
    if flags & _FL_MARK_PHANT:
        level = F[p, _F_PH_LEVEL] - (PK[slot, _K_DEP] - ST[pb + _P_PH_LAST]) * F[p, _F_PH_DRAIN]
        if level > F[p, _F_PH_KMIN]:
            marked = red_decide(U, rng, F[p, _F_PH_KMIN], F[p, _F_PH_KMAX], F[p, _F_PH_SPAN], level)
    if not marked and flags & _FL_MARK_PHYS and remaining > F[p, _F_RED_KMIN]:
        marked = red_decide(
            U, rng, F[p, _F_RED_KMIN], F[p, _F_RED_KMAX], F[p, _F_RED_SPAN], np.float64(remaining)
        )
    if marked:
        PK[slot, _K_ECN] = 1
        ST[pb + _P_MARKS] += 1


@njit(cache=True)
def int_stamp(PK, slot, max_records, gear, ts, qlen, tx_bytes, rate):
    """Append the INT record (``ts``, ``qlen``, ``tx_bytes``, ``rate``) to the packet in
    ``slot`` (:meth:`uno.net.int.IntStamper.stamp`): while it holds fewer than ``max_records``;
    then, with ``gear``, in place of the stored record with the shortest drain time qlen / rate
    (the first such) if its own is longer."""
    n = PK[slot, _K_INT_N]
    if n < max_records:
        at = _K_INT_N + 1 + n * _INT_FIELDS
        PK[slot, _K_INT_N] = n + 1
    elif gear:
        j = 0
        shortest = PK[slot, _K_INT_N + 2] / PK[slot, _K_INT_N + 4]
        for i in range(1, n):
            base = _K_INT_N + 1 + i * _INT_FIELDS
            drain = PK[slot, base + 1] / PK[slot, base + 3]
            if drain < shortest:
                shortest = drain
                j = i
        if not qlen / rate > shortest:
            return
        at = _K_INT_N + 1 + j * _INT_FIELDS
    else:
        return
    PK[slot, at] = ts
    PK[slot, at + 1] = qlen
    PK[slot, at + 2] = tx_bytes
    PK[slot, at + 3] = rate


@njit(cache=True)
def _int_settled(ST, PK, pb, slot, remaining):
    """The packet in ``slot`` left INT port ``pb`` (its serialisation ended at its departure,
    ``remaining`` bytes behind it): the port's transmitted bytes grow by its size, and a data
    packet gets the port's record (:meth:`uno.net.event_port.EventPort._tx_done`)."""
    ST[pb + _P_TXB] += PK[slot, _K_SIZE]
    if PK[slot, _K_KIND] == DATA:
        int_stamp(PK, slot, ST[_H_INT_MAX], ST[_H_INT_GEAR], PK[slot, _K_DEP], remaining,
                  ST[pb + _P_TXB], ST[pb + _P_RATE])  # fmt: skip


@njit(cache=True)
def _settle(ST, F, U, PK, p, pb, now):
    """Settle every queued packet of port ``p`` that has left by ``now``
    (:meth:`uno.net.port.Port._settle`)."""
    slot = ST[pb + _P_QHEAD]
    remaining = ST[pb + _P_BYTES]
    marking = ST[pb + _P_FLAGS] & (_FL_MARK_PHYS | _FL_MARK_PHANT)
    stamping = ST[pb + _P_FLAGS] & _FL_INT
    while slot >= 0:
        if PK[slot, _K_DEP] > now:
            break
        remaining -= PK[slot, _K_SIZE]
        if marking and PK[slot, _K_KIND] == DATA and PK[slot, _K_ECN] == 0:
            _decide_mark(ST, F, U, PK, p, pb, slot, remaining)
        if stamping:
            _int_settled(ST, PK, pb, slot, remaining)
        slot = PK[slot, _K_NEXT]
    ST[pb + _P_QHEAD] = slot
    ST[pb + _P_BYTES] = remaining


@njit(cache=True)
def _heap_push(ST, t, eid, payload):
    """Push event (t, eid) -> ``payload`` (port * 2 + lane) on the kernel's binary heap."""
    n = ST[_H_HEAP_N]
    if n >= ST[_H_HEAP_CAP]:
        raise RuntimeError("compiled data plane: event heap full")
    ht = ST[_H_OFF_HT]
    he = ST[_H_OFF_HE]
    hp = ST[_H_OFF_HP]
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        pt = ST[ht + parent]
        if pt < t or (pt == t and ST[he + parent] < eid):
            break
        ST[ht + i] = pt
        ST[he + i] = ST[he + parent]
        ST[hp + i] = ST[hp + parent]
        i = parent
    ST[ht + i] = t
    ST[he + i] = eid
    ST[hp + i] = payload
    ST[_H_HEAP_N] = n + 1


@njit(cache=True)
def _heap_pop(ST):
    """Remove the heap's top; returns its payload (the caller read its time and eid)."""
    ht = ST[_H_OFF_HT]
    he = ST[_H_OFF_HE]
    hp = ST[_H_OFF_HP]
    payload = ST[hp]
    n = ST[_H_HEAP_N] - 1
    ST[_H_HEAP_N] = n
    if n == 0:
        return payload
    t = ST[ht + n]
    eid = ST[he + n]
    pl = ST[hp + n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        right = child + 1
        if right < n and (
            ST[ht + right] < ST[ht + child]
            or (ST[ht + right] == ST[ht + child] and ST[he + right] < ST[he + child])
        ):
            child = right
        ct = ST[ht + child]
        if t < ct or (t == ct and eid < ST[he + child]):
            break
        ST[ht + i] = ct
        ST[he + i] = ST[he + child]
        ST[hp + i] = ST[hp + child]
        i = child
    ST[ht + i] = t
    ST[he + i] = eid
    ST[hp + i] = pl
    return payload


@njit(cache=True)
def _next_eid(ST):
    """The eid of the next event this call schedules."""
    eid = ST[_H_EID]
    ST[_H_EID] = eid + 1
    ST[_H_PUSHES] += 1
    return eid


@njit(cache=True)
def _free(ST, PK, slot):
    PK[slot, _K_NEXT] = ST[_H_FREE]
    ST[_H_FREE] = slot
    ST[_H_IN_POOL] -= 1


@njit(cache=True)
def _fifo_append(ST, PK, head_at, tail_at, slot):
    """Append ``slot`` to the linked FIFO whose head and tail are ``ST[head_at]``,
    ``ST[tail_at]`` (a port's queue, control lane or wire)."""
    PK[slot, _K_NEXT] = -1
    tail = ST[tail_at]
    if tail >= 0:
        PK[tail, _K_NEXT] = slot
    else:
        ST[head_at] = slot
    ST[tail_at] = slot


@njit(cache=True)
def _tail_drop(ST, F, PK, p, pb, flags, kind, size, slot, now):
    """Port ``p``'s buffer has no room for the packet in ``slot``: a dropped data packet still
    counts in the phantom queue if it is set to, the drop is counted, a packet that entered
    through a PFC ingress queue is a lossless violation and releases its share, the row is
    freed."""
    if flags & _FL_PH_DROPS and flags & _FL_PHANTOM and kind == DATA:
        phantom_enqueue(ST, F, p, pb, now, size)
    ST[pb + _P_DROPS] += 1
    ST[_H_DROP0 + kind] += 1
    ing = PK[slot, _K_ING]
    if ing >= 0:
        PK[slot, _K_ING] = -1
        ST[ST[_H_OFF_ING] + ing * _NIC + _I_VIOL] += 1
        _ingress_release(ST, ing, size, now)
    _free(ST, PK, slot)


@njit(cache=True)
def _accepted(ST, F, p, pb, flags, kind, size, qbytes, now):
    """Port ``p`` accepted ``size`` bytes into its data queue, now ``qbytes``: the counters,
    the peak, the phantom queue (data, and control packets unless they do not count)."""
    ST[pb + _P_BYTES] = qbytes
    ST[pb + _P_ENQB] += size
    if qbytes > ST[pb + _P_MAXB]:
        ST[pb + _P_MAXB] = qbytes
    if flags & _FL_PHANTOM and (flags & _FL_PH_ACKS or kind == DATA):
        phantom_enqueue(ST, F, p, pb, now, size)


@njit(cache=True)
def _port_receive(ST, F, U, PK, p, slot, now):
    """Port ``p`` receives the packet in ``slot`` at ``now`` (:meth:`uno.net.port.Port.receive`):
    settle, tail drop, phantom accounting, FIFO append, the delivery event if none is pending."""
    pb = ST[_H_OFF_P] + p * _NPC
    flags = ST[pb + _P_FLAGS]
    if flags & _FL_EVENT:
        _eport_receive(ST, F, U, PK, p, pb, slot, now)
        return
    kind = PK[slot, _K_KIND]
    size = PK[slot, _K_SIZE]
    ST[pb + _P_ARRIVALS] += 1
    ST[_H_N_HOPS] += 1
    if kind != DATA and flags & _FL_CTRL:
        # control lane: its own FIFO at line rate, never dropped, outside buffer/RED/phantom
        busy = ST[pb + _P_C_BUSY]
        dep = (busy if busy > now else now) + serialization_ps(size, ST[pb + _P_RATE])
        ST[pb + _P_C_BUSY] = dep
        PK[slot, _K_DEP] = dep
        _fifo_append(ST, PK, pb + _P_C_HEAD, pb + _P_C_TAIL, slot)
        ST[pb + _P_HELD] += 1
        if ST[pb + _P_C_PENDING] == 0:
            ST[pb + _P_C_PENDING] = 1
            _heap_push(ST, dep + ST[pb + _P_DELAY], _next_eid(ST), (p << _EV_BITS) | _EV_CTRL)
        return
    qhead = ST[pb + _P_QHEAD]
    if qhead >= 0 and PK[qhead, _K_DEP] <= now:
        _settle(ST, F, U, PK, p, pb, now)
    qbytes = ST[pb + _P_BYTES] + size
    if qbytes > ST[pb + _P_BUFFER]:
        _tail_drop(ST, F, PK, p, pb, flags, kind, size, slot, now)
        return
    _accepted(ST, F, p, pb, flags, kind, size, qbytes, now)
    busy = ST[pb + _P_BUSY]
    dep = (busy if busy > now else now) + serialization_ps(size, ST[pb + _P_RATE])
    ST[pb + _P_BUSY] = dep
    PK[slot, _K_DEP] = dep
    _fifo_append(ST, PK, pb + _P_HEAD, pb + _P_TAIL, slot)
    if ST[pb + _P_QHEAD] < 0:
        ST[pb + _P_QHEAD] = slot
    ST[pb + _P_HELD] += 1
    if ST[pb + _P_PENDING] == 0:
        ST[pb + _P_PENDING] = 1
        _heap_push(ST, dep + ST[pb + _P_DELAY], _next_eid(ST), (p << _EV_BITS) | _EV_DATA)


# ---- the event port and PFC (uno.net.event_port, uno.net.pfc) --------------------------------
@njit(cache=True)
def _ingress_receive(ST, PK, ing, slot, now):
    """The packet in ``slot`` enters its switch through PFC ingress queue ``ing``
    (:meth:`uno.net.pfc.PfcIngress.receive`): counted (unless it is a control packet in the
    switch's control lane), and past Xoff a PAUSE for the upstream port's data priority, which
    acts there one signal delay later."""
    ib = ST[_H_OFF_ING] + ing * _NIC
    if PK[slot, _K_KIND] != DATA and ST[ib + _I_CTRL]:
        PK[slot, _K_ING] = -1
        return
    PK[slot, _K_ING] = ing
    b = ST[ib + _I_BYTES] + PK[slot, _K_SIZE]
    ST[ib + _I_BYTES] = b
    if b > ST[ib + _I_MAX]:
        ST[ib + _I_MAX] = b
    if b > ST[ib + _I_XOFF] and not ST[ib + _I_PAUSING]:
        ST[ib + _I_PAUSING] = 1
        ST[ib + _I_SENT] += 1
        _heap_push(
            ST, now + ST[ib + _I_SIGNAL], _next_eid(ST), (ST[ib + _I_UP] << _EV_BITS) | _EV_PAUSE
        )


@njit(cache=True)
def _ingress_release(ST, ing, size, now):
    """``size`` bytes that entered through PFC ingress queue ``ing`` left the switch or were
    dropped (:meth:`uno.net.pfc.PfcIngress.release`): at Xon or below, a pausing queue sends
    the RESUME."""
    ib = ST[_H_OFF_ING] + ing * _NIC
    b = ST[ib + _I_BYTES] - size
    ST[ib + _I_BYTES] = b
    if ST[ib + _I_PAUSING] and b <= ST[ib + _I_XON]:
        ST[ib + _I_PAUSING] = 0
        _heap_push(
            ST, now + ST[ib + _I_SIGNAL], _next_eid(ST), (ST[ib + _I_UP] << _EV_BITS) | _EV_RESUME
        )


@njit(cache=True)
def _eport_start(ST, PK, p, pb, now):
    """Event port ``p`` is idle: put its next unpaused packet, control first, on the link
    (:meth:`uno.net.event_port.EventPort._start`): its end of serialisation is an event, it
    joins the wire FIFO, whose delivery event is pushed now if none is pending."""
    paused = ST[pb + _P_PAUSED]
    if ST[pb + _P_C_HEAD] >= 0 and not paused & (1 << _LANE_CONTROL):
        lane = _LANE_CONTROL
        head_col = _P_C_HEAD
        tail_col = _P_C_TAIL
    elif ST[pb + _P_HEAD] >= 0 and not paused & (1 << _LANE_DATA):
        lane = _LANE_DATA
        head_col = _P_HEAD
        tail_col = _P_TAIL
    else:
        return
    slot = ST[pb + head_col]
    nxt = PK[slot, _K_NEXT]
    ST[pb + head_col] = nxt
    if nxt < 0:
        ST[pb + tail_col] = -1
    end = now + serialization_ps(PK[slot, _K_SIZE], ST[pb + _P_RATE])
    PK[slot, _K_DEP] = end
    ST[pb + _P_TX] = slot
    ST[pb + _P_TXQ] = lane
    _heap_push(ST, end, _next_eid(ST), (slot << 32) | (p << _EV_BITS) | _EV_TXDONE)
    _fifo_append(ST, PK, pb + _P_W_HEAD, pb + _P_W_TAIL, slot)
    if ST[pb + _P_W_PENDING] == 0:
        ST[pb + _P_W_PENDING] = 1
        _heap_push(ST, end + ST[pb + _P_DELAY], _next_eid(ST), (p << _EV_BITS) | _EV_WIRE)


@njit(cache=True)
def _eport_tx_done(ST, F, U, PK, p, pb, slot):
    """The serialisation of ``slot`` at event port ``p`` ended
    (:meth:`uno.net.event_port.EventPort._tx_done`): unless it was settled already, its bytes
    leave the data queue, RED / the phantom queue decide its mark on the bytes behind it, it
    releases its PFC ingress share, an INT port writes its record, and the next packet
    starts."""
    if slot != ST[pb + _P_TX]:
        return  # already settled (at the same time, by an arrival or its delivery)
    ST[pb + _P_TX] = -1
    now = PK[slot, _K_DEP]
    size = PK[slot, _K_SIZE]
    flags = ST[pb + _P_FLAGS]
    remaining = ST[pb + _P_BYTES]
    if ST[pb + _P_TXQ] == _LANE_DATA:
        remaining -= size
        ST[pb + _P_BYTES] = remaining
        if (
            flags & (_FL_MARK_PHYS | _FL_MARK_PHANT)
            and PK[slot, _K_KIND] == DATA
            and PK[slot, _K_ECN] == 0
        ):
            _decide_mark(ST, F, U, PK, p, pb, slot, remaining)
    ing = PK[slot, _K_ING]
    if ing >= 0:
        PK[slot, _K_ING] = -1
        _ingress_release(ST, ing, size, now)
    if flags & _FL_INT:
        _int_settled(ST, PK, pb, slot, remaining)
    _eport_start(ST, PK, p, pb, now)


@njit(cache=True)
def _eport_receive(ST, F, U, PK, p, pb, slot, now):
    """Event port ``p`` receives the packet in ``slot`` at ``now``
    (:meth:`uno.net.event_port.EventPort.receive`): the packet in service settles first if its
    serialisation ended now; tail drop (a packet that entered through a lossless ingress queue
    counts a violation), phantom accounting, the lane's FIFO, the projected busy-until (kept
    while paused) and a start if the link is idle."""
    tx = ST[pb + _P_TX]
    if tx >= 0 and PK[tx, _K_DEP] <= now:
        _eport_tx_done(ST, F, U, PK, p, pb, tx)
    kind = PK[slot, _K_KIND]
    size = PK[slot, _K_SIZE]
    flags = ST[pb + _P_FLAGS]
    ST[pb + _P_ARRIVALS] += 1
    ST[_H_N_HOPS] += 1
    if kind != DATA and flags & _FL_CTRL:
        head_col = _P_C_HEAD
        tail_col = _P_C_TAIL
    else:
        head_col = _P_HEAD
        tail_col = _P_TAIL
        qbytes = ST[pb + _P_BYTES] + size
        if qbytes > ST[pb + _P_BUFFER]:
            _tail_drop(ST, F, PK, p, pb, flags, kind, size, slot, now)
            return
        _accepted(ST, F, p, pb, flags, kind, size, qbytes, now)
    _fifo_append(ST, PK, pb + head_col, pb + tail_col, slot)
    ST[pb + _P_HELD] += 1
    busy = ST[pb + _P_BUSY]
    if busy != _PAUSED_PS:
        ST[pb + _P_BUSY] = (busy if busy > now else now) + serialization_ps(size, ST[pb + _P_RATE])
    if ST[pb + _P_TX] < 0:
        _eport_start(ST, PK, p, pb, now)


@njit(cache=True)
def _eport_drain_end(ST, PK, pb, now):
    """When the packets event port ``pb`` holds now will have left if nothing pauses it
    (:meth:`uno.net.event_port.EventPort._drain_end`)."""
    tx = ST[pb + _P_TX]
    t = PK[tx, _K_DEP] if tx >= 0 else now
    rate = ST[pb + _P_RATE]
    for head_col in (_P_C_HEAD, _P_HEAD):
        slot = ST[pb + head_col]
        while slot >= 0:
            t += serialization_ps(PK[slot, _K_SIZE], rate)
            slot = PK[slot, _K_NEXT]
    return t


@njit(cache=True)
def pfc_signal(ST, PK, p, resume, now):
    """A PAUSE (``resume`` false) or RESUME for the data priority reaches event port ``p`` at
    ``now`` (:meth:`uno.net.event_port.EventPort.pause` / ``resume``): paused, it finishes the
    frame in service and starts no data packet, its busy-until reads _PAUSED_PS; resumed, it
    carries on where it stopped. Returns whether the port's state changed."""
    pb = ST[_H_OFF_P] + p * _NPC
    bit = np.int64(1) << _LANE_DATA
    paused = ST[pb + _P_PAUSED]
    if not resume:
        if paused & bit:
            return False
        ST[pb + _P_PAUSED] = paused | bit
        ST[pb + _P_BUSY] = _PAUSED_PS
        return True
    if not paused & bit:
        return False
    ST[pb + _P_PAUSED] = paused & ~bit
    ST[pb + _P_BUSY] = _eport_drain_end(ST, PK, pb, now)
    if ST[pb + _P_TX] < 0:
        _eport_start(ST, PK, p, pb, now)
    return True


@njit(cache=True)
def _fault_float(ST, F, i):
    """The fault models' ``i``-th float (probabilities): they fill the rows of ``F`` after the
    ports', ``_NFC`` a row."""
    width = F.shape[1]
    return F[ST[_H_N_PORTS] + i // width, i % width]


@njit(cache=True)
def _new_block(ST, F, U, mb, rng):
    """Block loss model row ``mb`` starts a block (:meth:`uno.faults.models.BlockLoss._new_block`):
    one draw picks how many of its packets are lost (k), then positions are drawn, uniformly
    among the block's, until k distinct ones are doomed (the same draws in the same order)."""
    u = pcg64_next_double(U, rng)
    k = 0
    first = ST[mb + _M_E]
    for i in range(ST[mb + _M_D]):
        if u < _fault_float(ST, F, first + i):
            k = i + 1
            break
    n = ST[mb + _M_A]
    doomed = np.int64(0)
    count = 0
    while count < k:
        pos = np.int64(pcg64_next_double(U, rng) * n)
        bit = np.int64(1) << pos
        if not doomed & bit:
            doomed |= bit
            count += 1
    ST[mb + _M_C] = doomed
    counters = ST[mb + _M_F]
    ST[counters] += 1
    ST[counters + 1 + k] += 1


@njit(cache=True)
def fault_drop(ST, F, U, pb, now):
    """Whether the faults of the port whose row starts at ``pb`` drop the packet leaving its
    link at ``now`` (:meth:`uno.faults.models.FaultyLink.receive`): its models in order, the
    first that drops decides (so the later ones draw nothing for this packet). Returns the
    reason (``_REASON_*``), 0 to pass the packet on."""
    off = ST[pb + _P_FLT_OFF]
    rng = ST[pb + _P_FLT_RNG]
    for m in range(ST[pb + _P_FLT_N]):
        mb = off + m * _NMC
        kind = ST[mb + _M_TYPE]
        if kind == _FM_DOWN:
            if now >= ST[mb + _M_A] and (ST[mb + _M_B] < 0 or now < ST[mb + _M_B]):
                return _REASON_DOWN
        elif kind == _FM_IID:
            if pcg64_next_double(U, rng) < _fault_float(ST, F, ST[mb + _M_A]):
                return _REASON_RANDOM
        else:
            i = ST[mb + _M_B]
            if i == 0:
                _new_block(ST, F, U, mb, rng)
            ST[mb + _M_B] = i + 1 if i + 1 < ST[mb + _M_A] else 0
            if ST[mb + _M_C] & (np.int64(1) << i):
                return _REASON_BLOCK
    return 0


@njit(cache=True)
def _deliver(ST, F, U, PK, payload, now):
    """The delivery event ``payload`` (port << _EV_BITS | _EV_DATA, _EV_CTRL or _EV_WIRE) at
    ``now``: the lane's (the event port's wire's) oldest packet leaves the wire
    (:meth:`uno.net.port.Port._deliver`, :meth:`uno.net.event_port.EventPort._deliver`) into a
    switch, which counts it in the link's PFC ingress queue if it has one and forwards it at
    once, or into a host. Returns (host id, slot) for a host, (-1, -1) otherwise."""
    p = (payload >> _EV_BITS) & _EV_PORT_MASK
    pb = ST[_H_OFF_P] + p * _NPC
    typ = payload & _EV_TYPE_MASK
    if typ == _EV_WIRE:
        slot = ST[pb + _P_W_HEAD]
        nxt = PK[slot, _K_NEXT]
        ST[pb + _P_W_HEAD] = nxt
        if nxt < 0:
            ST[pb + _P_W_TAIL] = -1
        if slot == ST[pb + _P_TX]:  # zero-delay link: its end of serialisation is now too
            _eport_tx_done(ST, F, U, PK, p, pb, slot)
        # (the next packet it started, if any, joined the wire while this delivery was pending)
        nxt = ST[pb + _P_W_HEAD]
        if nxt >= 0:
            _heap_push(ST, PK[nxt, _K_DEP] + ST[pb + _P_DELAY], _next_eid(ST), payload)
        else:
            ST[pb + _P_W_PENDING] = 0
    elif typ == _EV_CTRL:
        slot = ST[pb + _P_C_HEAD]
        nxt = PK[slot, _K_NEXT]
        ST[pb + _P_C_HEAD] = nxt
        if nxt >= 0:
            _heap_push(ST, PK[nxt, _K_DEP] + ST[pb + _P_DELAY], _next_eid(ST), payload)
        else:
            ST[pb + _P_C_PENDING] = 0
            ST[pb + _P_C_TAIL] = -1
    else:
        slot = ST[pb + _P_HEAD]
        if ST[pb + _P_QHEAD] == slot:
            # not settled by a later arrival: everything behind it arrived before it left
            nxt_q = PK[slot, _K_NEXT]
            ST[pb + _P_QHEAD] = nxt_q
            remaining = ST[pb + _P_BYTES] - PK[slot, _K_SIZE]
            ST[pb + _P_BYTES] = remaining
            if (
                ST[pb + _P_FLAGS] & (_FL_MARK_PHYS | _FL_MARK_PHANT)
                and PK[slot, _K_KIND] == DATA
                and PK[slot, _K_ECN] == 0
            ):
                _decide_mark(ST, F, U, PK, p, pb, slot, remaining)
            if ST[pb + _P_FLAGS] & _FL_INT:
                _int_settled(ST, PK, pb, slot, remaining)
        nxt = PK[slot, _K_NEXT]
        ST[pb + _P_HEAD] = nxt
        if nxt >= 0:
            _heap_push(ST, PK[nxt, _K_DEP] + ST[pb + _P_DELAY], _next_eid(ST), payload)
        else:
            ST[pb + _P_PENDING] = 0
            ST[pb + _P_TAIL] = -1
            ST[pb + _P_QHEAD] = -1
    ST[pb + _P_HELD] -= 1
    if ST[pb + _P_FLAGS] & _FL_FAULT:
        # the link's faults, between the wire and the next node (uno.faults.models.FaultyLink)
        reason = fault_drop(ST, F, U, pb, now)
        if reason:
            ST[pb + _P_FLT_DROPS] += 1
            ST[_H_FDROP0 + 3 * (reason - 1) + PK[slot, _K_KIND]] += 1
            _free(ST, PK, slot)
            return -1, -1
    node = ST[pb + _P_NEXT]
    host = ST[ST[_H_OFF_NODEHOST] + node]
    if host >= 0:
        return host, slot
    ing = ST[pb + _P_ING]
    if ing >= 0:
        _ingress_receive(ST, PK, ing, slot, now)
    # a switch: forward by destination, hashing among equal-cost ports
    n_hosts = ST[_H_N_HOSTS]
    dst = PK[slot, _K_DST]
    cell = node * n_hosts + dst
    off = ST[ST[_H_OFF_FIBOFF] + cell]
    n = ST[ST[_H_OFF_FIBN] + cell]
    ports = ST[_H_OFF_FIBPORTS]
    if n == 1:
        out = ST[ports + off]
    else:
        salt = U[ST[_H_OFF_NODESALT] + node]
        out = ST[ports + off + ecmp_pick(np.uint64(PK[slot, _K_HKEY]), salt, n)]
    _port_receive(ST, F, U, PK, out, slot, now)
    return -1, -1


@njit(cache=True)
def hash_key(src, dst, entropy):
    """ECMP hash key of (src, dst, entropy) as an int64 (:func:`uno.core.packet.flow_hash_key`)."""
    key = (np.uint64(src) << _U40) ^ (np.uint64(dst) << _U20) ^ np.uint64(entropy)
    return np.int64(mix64(key))


@njit(cache=True)
def _receive_data(ST, F, U, PK, host, slot, now):
    """The kernel's receiver of the flow of data packet ``slot``, arrived at ``host`` at
    ``now`` (:meth:`uno.transport.receiver.Receiver.on_data` without coding): count the
    sequence number once, complete the flow, and send the packet back as its ACK at once
    (:meth:`uno.net.host.Host.send`). Returns an _ERR_* code, 0 when all is well."""
    if PK[slot, _K_DST] != host:
        ST[_H_ERROR_ARG] = slot
        return _ERR_MISROUTED
    fb = ST[_H_OFF_FLOWS] + PK[slot, _K_FLOW] * _NRC
    seq = PK[slot, _K_SEQ]
    if seq < 0 or seq >= ST[fb + _R_N_PACKETS]:
        ST[_H_ERROR_ARG] = slot
        return _ERR_SEQ
    word = ST[fb + _R_GOT_OFF] + (seq >> 6)
    bit = np.int64(1) << (seq & 63)
    if ST[word] & bit:
        ST[fb + _R_DUP] += 1
    else:
        ST[word] |= bit
        ST[fb + _R_N_GOT] += 1
        ST[fb + _R_BYTES] += PK[slot, _K_PAYLOAD]
        if ST[fb + _R_N_GOT] == ST[fb + _R_N_PACKETS]:
            ST[fb + _R_COMPLETE] = now
            if ST[fb + _R_BYTES] != ST[fb + _R_SIZE]:
                ST[_H_ERROR_ARG] = slot
                return _ERR_BYTES
    if PK[slot, _K_ECN]:
        ST[fb + _R_ECN] += 1
        gap = ST[fb + _R_CNP_INT]
        if gap:  # DCQCN's notification point: at most one CNP per gap
            last = ST[fb + _R_LAST_CNP]
            if last < 0 or now - last >= gap:
                ST[fb + _R_LAST_CNP] = now
                ST[fb + _R_CNPS] += 1
            else:
                PK[slot, _K_ECN] = 0  # no CNP: one went to the flow's sender within the gap
    # the data packet becomes its ACK, echoing seq, ECN, entropy (and, in Python, send time)
    src = PK[slot, _K_DST]
    dst = PK[slot, _K_SRC]
    PK[slot, _K_KIND] = ACK
    PK[slot, _K_SIZE] = ST[fb + _R_ACK_BYTES]
    PK[slot, _K_SRC] = src
    PK[slot, _K_DST] = dst
    PK[slot, _K_HKEY] = hash_key(src, dst, PK[slot, _K_ENTROPY])
    ST[_H_RX_DATA] += 1
    _port_receive(ST, F, U, PK, ST[ST[_H_OFF_HOSTNIC] + host], slot, now)
    return 0


# ---- kernel senders (uno.transport.sender.Sender, uno.net.nic.NicScheduler) ----------------
@njit(cache=True)
def _wire_of(ST, sb, seq):
    """Wire bytes of packet ``seq`` of the flow whose sender row is ``sb``."""
    return ST[sb + _S_FULL_WIRE] if seq != ST[sb + _S_LAST_SEQ] else ST[sb + _S_LAST_WIRE]


@njit(cache=True)
def _fifo_front(ST, sb):
    """Offset in ST of the RTO FIFO's oldest (send time, seq) pair."""
    return ST[sb + _S_FIFO_OFF] + 2 * ST[sb + _S_FIFO_HEAD]


@njit(cache=True)
def _fifo_pop(ST, sb):
    head = ST[sb + _S_FIFO_HEAD] + 1
    ST[sb + _S_FIFO_HEAD] = head if head < ST[sb + _S_FIFO_CAP] else 0
    ST[sb + _S_FIFO_N] -= 1


@njit(cache=True)
def _drop_acked_before(ST, sb):
    """Forget the acknowledged send times at or before the FIFO's oldest entry, all of them if
    it is empty (:meth:`uno.transport.sender.Sender._drop_acked_before`)."""
    n = ST[sb + _S_LATER_N]
    if n == 0:
        return
    off = ST[sb + _S_LATER_OFF]
    if ST[sb + _S_FIFO_N] == 0:
        ST[sb + _S_LATER_N] = 0
        return
    oldest = ST[_fifo_front(ST, sb)]
    i = 0
    while i < n and ST[off + i] <= oldest:
        i += 1
    if i:
        ST[off : off + n - i] = ST[off + i : off + n].copy()
        ST[sb + _S_LATER_N] = n - i


@njit(cache=True)
def _fifo_push(ST, sb, t, seq):
    """Append (``t``, ``seq``) to the RTO FIFO. A full ring first drops its stale entries
    (acknowledged, or retransmitted since), which every reader skips; the acknowledged send
    times at or before the new oldest entry are dropped as the reader that would have popped
    the stale ones would drop them (so the fast-retransmit counts are unchanged)."""
    n = ST[sb + _S_FIFO_N]
    cap = ST[sb + _S_FIFO_CAP]
    off = ST[sb + _S_FIFO_OFF]
    head = ST[sb + _S_FIFO_HEAD]
    if n == cap:
        out = ST[sb + _S_OUT_OFF]
        kept = 0
        for i in range(n):
            at = off + 2 * ((head + i) % cap)
            if ST[out + ST[at + 1]] == ST[at] + 1:
                to = off + 2 * ((head + kept) % cap)
                ST[to] = ST[at]
                ST[to + 1] = ST[at + 1]
                kept += 1
        n = kept
        ST[sb + _S_FIFO_N] = n
        if n == cap:  # (cannot happen: live entries are at most one per packet, cap > 2n)
            raise RuntimeError("compiled data plane: a kernel sender's RTO FIFO overflowed")
        if ST[sb + _S_DUPTHR]:
            _drop_acked_before(ST, sb)
    at = off + 2 * ((head + n) % cap)
    ST[at] = t
    ST[at + 1] = seq
    ST[sb + _S_FIFO_N] = n + 1


@njit(cache=True)
def _retx_push(ST, sb, seq):
    """Queue ``seq`` for retransmission (a ring of the flow's packet count: a packet is
    queued at most once, as it leaves the outstanding set to be queued)."""
    cap = ST[sb + _S_RQ_CAP]
    ST[ST[sb + _S_RQ_OFF] + (ST[sb + _S_RQ_HEAD] + ST[sb + _S_RQ_N]) % cap] = seq
    ST[sb + _S_RQ_N] += 1


@njit(cache=True)
def _retx_pop(ST, sb):
    seq = ST[ST[sb + _S_RQ_OFF] + ST[sb + _S_RQ_HEAD]]
    head = ST[sb + _S_RQ_HEAD] + 1
    ST[sb + _S_RQ_HEAD] = head if head < ST[sb + _S_RQ_CAP] else 0
    ST[sb + _S_RQ_N] -= 1
    return seq


@njit(cache=True)
def _declare_lost(ST, sb, seq):
    """Outstanding packet ``seq`` is lost: out of flight, queued for retransmission."""
    ST[ST[sb + _S_OUT_OFF] + seq] = 0
    ST[sb + _S_INFLIGHT] -= _wire_of(ST, sb, seq)
    _retx_push(ST, sb, seq)


@njit(cache=True)
def _nic_wait(ST, f, sb, now):
    """Kernel sender ``f`` found its host's NIC busy: it waits in the host's FIFO (once), and a
    wake is scheduled when the NIC frees (:meth:`uno.net.nic.NicScheduler.wait`)."""
    nb = ST[_H_OFF_NICS] + ST[sb + _S_HOST] * _NNC
    if not ST[sb + _S_NIC_QUEUED]:
        ST[sb + _S_NIC_QUEUED] = 1
        ST[sb + _S_NIC_NEXT] = -1
        tail = ST[nb + _N_TAIL]
        if tail >= 0:
            ST[ST[_H_OFF_SND] + tail * _NSC + _S_NIC_NEXT] = f
        else:
            ST[nb + _N_HEAD] = f
        ST[nb + _N_TAIL] = f
    busy = ST[ST[_H_OFF_P] + ST[nb + _N_PORT] * _NPC + _P_BUSY]
    if not ST[nb + _N_PENDING] and busy < _PAUSED_PS:
        ST[nb + _N_PENDING] = 1
        _heap_push(ST, busy, _next_eid(ST), (ST[sb + _S_HOST] << _EV_BITS) | _EV_NICWAKE)


@njit(cache=True)
def _law_rows(F, fr, ST):
    """A kernel sender's law rows: its state and its constants (views of its F row)."""
    sw = ST[_H_CC_SW]
    return F[fr, :sw], F[fr, sw:]


@njit(cache=True)
def _ack_records(F, ST, PK, slot):
    """The INT records of the ACK in row ``slot`` of PK as a law reads them: float64 rows
    (``uno.cc.law.INT_FIELDS`` columns), copied to the F rows kept for them (none: INT off)."""
    r0 = ST[_H_INT_REC]
    n = PK[slot, _K_INT_N] if ST[_H_INT_MAX] > 0 else 0
    for i in range(n):
        at = _K_INT_N + 1 + i * _INT_FIELDS
        for j in range(_INT_FIELDS):
            F[r0 + i, j] = PK[slot, at + j]
    return F[r0 : r0 + n, :_INT_FIELDS]


@njit(cache=True)
def _cc_on_ack(F, fr, ST, sb, PK, slot, now, acked_bytes, ecn, rtt_ps, sent_ps, duplicate,
               rate_bytes, rate_ps):  # fmt: skip
    """The sender's controller hears of the ACK in row ``slot`` of PK (its compiled form, by
    ``_S_CCK``; a law gets the ACK's INT records with it, and its delivery-rate sample:
    ``rate_bytes`` over ``rate_ps``, 0 for none)."""
    kind = ST[sb + _S_CCK]
    if kind >= _LAW_BASE:
        s, p = _law_rows(F, fr, ST)
        rec = _ack_records(F, ST, PK, slot)
        fb = ack_feedback(now, acked_bytes, ecn, rtt_ps, sent_ps, ST[sb + _S_INFLIGHT],
                          ST[sb + _S_ACKED_BYTES], rate_bytes, rate_ps, duplicate,
                          rec.shape[0])  # fmt: skip
        cc_on_feedback(kind - _LAW_BASE, s, p, fb, rec)


@njit(cache=True)
def _cc_on_timeout(F, fr, ST, sb, now):
    """The sender's controller hears of a retransmission timeout (its compiled form)."""
    kind = ST[sb + _S_CCK]
    if kind >= _LAW_BASE:
        s, p = _law_rows(F, fr, ST)
        cc_on_loss(kind - _LAW_BASE, s, p, float(now), LOSS_TIMEOUT)


@njit(cache=True)
def _cc_on_nack(F, fr, ST, sb, now):
    """The sender's controller hears of a fast-retransmit loss (its compiled form)."""
    kind = ST[sb + _S_CCK]
    if kind >= _LAW_BASE:
        s, p = _law_rows(F, fr, ST)
        cc_on_loss(kind - _LAW_BASE, s, p, float(now), LOSS_NACK)


@njit(cache=True)
def _pacing_rate(F, fr, ST, sb):
    """The sender's pacing rate (bit/s): its law's (0: it does not pace)."""
    s, p = _law_rows(F, fr, ST)
    return cc_pacing_rate(ST[sb + _S_CCK] - _LAW_BASE, s, p)


@njit(cache=True)
def _try_send(ST, F, U, PK, f, now, turn):
    """Kernel sender ``f`` sends while its bytes in flight are below the window, a packet at a
    time when its host's NIC is free and (unless ``turn``: its turn in a NIC wake) no sender
    waits there, retransmissions first (:meth:`uno.transport.sender.Sender._try_send` without
    coding; the packet's path entropy is the flow's, ECMP's, or a sprayed one). A sender whose
    law reads delivery-rate samples stamps each copy with its delivered bytes and clock."""
    sb = ST[_H_OFF_SND] + f * _NSC
    fr = ST[sb + _S_FROW]
    acked = ST[sb + _S_ACKED_OFF]
    nb = ST[_H_OFF_NICS] + ST[sb + _S_HOST] * _NNC
    nic_busy = ST[_H_OFF_P] + ST[nb + _N_PORT] * _NPC + _P_BUSY
    while ST[sb + _S_INFLIGHT] < F[fr, LAW_CWND]:
        while ST[sb + _S_RQ_N] and ST[acked + ST[ST[sb + _S_RQ_OFF] + ST[sb + _S_RQ_HEAD]]]:
            _retx_pop(ST, sb)
        if ST[sb + _S_RQ_N] == 0 and ST[sb + _S_NEXT_SEQ] >= ST[sb + _S_N]:
            break
        rate = _pacing_rate(F, fr, ST, sb)
        if rate > 0.0 and now < ST[sb + _S_NEXT_SEND]:
            if not ST[sb + _S_WAKE]:
                ST[sb + _S_WAKE] = ST[sb + _S_NEXT_SEND] + 1
                _heap_push(ST, ST[sb + _S_NEXT_SEND], _next_eid(ST), (f << _EV_BITS) | _EV_PACE)
            break
        if ST[nic_busy] > now or (not turn and ST[nb + _N_HEAD] >= 0):
            _nic_wait(ST, f, sb, now)
            break
        if ST[sb + _S_RQ_N]:
            seq = _retx_pop(ST, sb)
            ST[sb + _S_RETX] += 1
            if ST[sb + _S_RTO_AFTER] >= 0:
                ST[sb + _S_RTO] = ST[sb + _S_RTO_AFTER]
        else:
            seq = ST[sb + _S_NEXT_SEQ]
            ST[sb + _S_NEXT_SEQ] = seq + 1
        if seq != ST[sb + _S_LAST_SEQ]:
            payload = ST[sb + _S_MSS]
            wire = ST[sb + _S_FULL_WIRE]
        else:
            payload = ST[sb + _S_LAST_PAYLOAD]
            wire = ST[sb + _S_LAST_WIRE]
        if ST[sb + _S_SPRAY]:
            # packet spraying (uno.lb.spray.Spray): a fresh entropy per packet, from the flow's
            # lb/<flow> stream
            entropy = np.int64(pcg64_next_double(U, ST[sb + _S_SPRAY_RNG]) * ST[sb + _S_SPRAY_N])
            hkey = hash_key(ST[sb + _S_SRC], ST[sb + _S_DST], entropy)
        else:
            entropy = ST[sb + _S_ENTROPY]
            hkey = ST[sb + _S_HKEY]
        slot = ST[_H_FREE]  # (the run keeps _POOL_ROOM rows free before every event)
        ST[_H_FREE] = PK[slot, _K_NEXT]
        ST[_H_IN_POOL] += 1
        PK[slot, _K_KIND] = DATA
        PK[slot, _K_SIZE] = wire
        PK[slot, _K_DST] = ST[sb + _S_DST]
        PK[slot, _K_ECN] = 0
        PK[slot, _K_HKEY] = hkey
        PK[slot, _K_FLOW] = f
        PK[slot, _K_SEQ] = seq
        PK[slot, _K_PAYLOAD] = payload
        PK[slot, _K_SRC] = ST[sb + _S_SRC]
        PK[slot, _K_ENTROPY] = entropy
        PK[slot, _K_ING] = -1
        PK[slot, _K_SENT] = now
        if ST[_H_INT_MAX] > 0:
            PK[slot, _K_INT_N] = 0  # (a reused row: no records yet)
        if ST[sb + _S_RATE]:
            PK[slot, _K_TX_DELIVERED] = ST[sb + _S_ACKED_BYTES]
            # an idle period restarts the delivered clock (nothing in flight)
            PK[slot, _K_TX_DELIVERED_PS] = ST[sb + _S_DELIVERED_PS] if ST[sb + _S_INFLIGHT] else now
        ST[sb + _S_INFLIGHT] += wire
        ST[ST[sb + _S_OUT_OFF] + seq] = now + 1
        _fifo_push(ST, sb, now, seq)
        ST[sb + _S_SENT_BYTES] += wire
        ST[sb + _S_SENT_PKTS] += 1
        send_cc = ST[sb + _S_SEND_CC]  # (the law hears of every send: it may change the rate)
        if send_cc:
            s, p = _law_rows(F, fr, ST)
            cc_on_send(ST[sb + _S_CCK] - _LAW_BASE, s, p, float(now), float(wire))
            rate = _pacing_rate(F, fr, ST, sb)
        if rate > 0.0:
            ST[sb + _S_NEXT_SEND] = now + np.int64(wire * 8e12 / rate)
            if send_cc and ST[sb + _S_TIMER_CC]:
                _watch_rate(ST, F, f, sb, fr, now, wire)
        if not ST[sb + _S_ARMED]:
            ST[sb + _S_ARMED] = 1
            _heap_push(ST, now + ST[sb + _S_RTO], _next_eid(ST), (f << _EV_BITS) | _EV_RTO)
        ST[_H_TX_DATA] += 1  # (uno.net.host.Host.send)
        _port_receive(ST, F, U, PK, ST[nb + _N_PORT], slot, now)


@njit(cache=True)
def _watch_rate(ST, F, f, sb, fr, sent, wire):
    """A rate timer due before the next send time may raise the rate first: wake then
    (``_EV_RATE``) to shorten the gap after the last packet, sent at ``sent`` with ``wire``
    bytes (:meth:`uno.transport.sender.Sender._watch_rate`). A flow has at most one such wake
    pending: it is due before the next send, and only it can bring that send forward."""
    s, p = _law_rows(F, fr, ST)
    due = cc_next_timer(ST[sb + _S_CCK] - _LAW_BASE, s, p)  # (NEVER_PS: none)
    if due < ST[sb + _S_NEXT_SEND]:
        ST[sb + _S_RC_SENT] = sent
        ST[sb + _S_RC_WIRE] = wire
        # (+ 0.0: the dispatch's result is typed optional, which np.int64 does not take)
        _heap_push(ST, np.int64(due + 0.0), _next_eid(ST), (f << _EV_BITS) | _EV_RATE)


@njit(cache=True)
def _rate_changed(ST, F, U, PK, f, now):
    """A rate timer came before the next send (:meth:`uno.transport.sender.Sender.
    _rate_changed`): the gap after the last packet becomes its size at the new rate, never
    ending before now; then watch the next timer."""
    sb = ST[_H_OFF_SND] + f * _NSC
    if ST[sb + _S_DONE]:
        return
    fr = ST[sb + _S_FROW]
    s, p = _law_rows(F, fr, ST)
    cc_on_timer(ST[sb + _S_CCK] - _LAW_BASE, s, p, float(now))
    rate = _pacing_rate(F, fr, ST, sb)
    if rate <= 0.0 or ST[sb + _S_NEXT_SEND] <= now:
        return
    sent = ST[sb + _S_RC_SENT]
    wire = ST[sb + _S_RC_WIRE]
    nxt = sent + np.int64(wire * 8e12 / rate)
    if nxt < now:
        nxt = now
    if nxt < ST[sb + _S_NEXT_SEND]:
        ST[sb + _S_NEXT_SEND] = nxt
        ST[sb + _S_WAKE] = nxt + 1  # (the wake pending for later is stale now)
        _heap_push(ST, nxt, _next_eid(ST), (f << _EV_BITS) | _EV_PACE)
    _watch_rate(ST, F, f, sb, fr, sent, wire)


@njit(cache=True)
def _pace_wake(ST, F, U, PK, f, now):
    """A paced kernel sender's next send time came (:meth:`uno.transport.sender.Sender._wake`)."""
    sb = ST[_H_OFF_SND] + f * _NSC
    if ST[sb + _S_WAKE] != now + 1:
        return  # stale: the wake now due was set for another time
    ST[sb + _S_WAKE] = 0
    if not ST[sb + _S_DONE]:
        _try_send(ST, F, U, PK, f, now, False)


@njit(cache=True)
def _nic_wake(ST, F, U, PK, host, now):
    """A host's NIC wake (:meth:`uno.net.nic.NicScheduler._wake`): while the NIC is free, the
    waiting senders, in order, try to send; then a wake for those still waiting. Returns -1,
    or the flow of a Python sender whose turn it is (:func:`_nic_serve`)."""
    ST[ST[_H_OFF_NICS] + host * _NNC + _N_PENDING] = 0
    return _nic_serve(ST, F, U, PK, host, now)


@njit(cache=True)
def _nic_serve(ST, F, U, PK, host, now):
    """The body of a NIC wake from its next waiting sender on. A Python sender waiting at a NIC
    the kernel schedules (one shared with kernel senders) is taken off the FIFO and its flow
    returned: Python calls its ``nic_ready`` and then :func:`nic_continue`, which goes on here.
    Returns -1 once the wake is over."""
    nb = ST[_H_OFF_NICS] + host * _NNC
    busy_at = ST[_H_OFF_P] + ST[nb + _N_PORT] * _NPC + _P_BUSY
    snd = ST[_H_OFF_SND]
    while ST[nb + _N_HEAD] >= 0 and ST[busy_at] <= now:
        f = ST[nb + _N_HEAD]
        sb = snd + f * _NSC
        nxt = ST[sb + _S_NIC_NEXT]
        ST[nb + _N_HEAD] = nxt
        if nxt < 0:
            ST[nb + _N_TAIL] = -1
        ST[sb + _S_NIC_QUEUED] = 0
        if not ST[sb + _S_ON]:
            return f
        if not ST[sb + _S_DONE]:
            _try_send(ST, F, U, PK, f, now, True)
    busy = ST[busy_at]
    if ST[nb + _N_HEAD] >= 0 and not ST[nb + _N_PENDING] and busy < _PAUSED_PS:
        ST[nb + _N_PENDING] = 1
        _heap_push(ST, busy if busy > now else now, _next_eid(ST), (host << _EV_BITS) | _EV_NICWAKE)
    return -1


@njit(cache=True)
def _room(ST):
    """0 if the pool and the heap have room for an event's sends and pushes, else the
    ``_RUN_*`` code of the one to grow first."""
    if ST[_H_POOL_CAP] - ST[_H_IN_POOL] < _POOL_ROOM:
        return _RUN_POOL
    if ST[_H_HEAP_CAP] - ST[_H_HEAP_N] < _HEAP_ROOM:
        return _RUN_HEAP
    return 0


@njit(cache=True)
def _top(ST):
    """The kernel top's time and engine eid."""
    if ST[_H_HEAP_N] > 0:
        return ST[ST[_H_OFF_HT]], ST[ST[_H_OFF_HE]] >> EID_SHIFT
    return NEVER_PS, 0


@njit(cache=True)
def nic_wait(ST, F, U, PK, f, now, eid):
    """Python sender ``f`` found its host's NIC busy, a NIC the kernel schedules: it waits in
    the kernel's FIFO (:func:`_nic_wait`); a wake it schedules takes a sub-eid of engine eid
    ``eid``. Returns (0, or a ``_RUN_*`` code if the pool / heap needs room first, nothing
    done; kernel top time, kernel top's engine eid)."""
    code = _room(ST)
    if code:
        return code, NEVER_PS, 0
    ST[_H_EID] = eid << EID_SHIFT
    ST[_H_NOW] = now
    _nic_wait(ST, f, ST[_H_OFF_SND] + f * _NSC, now)
    top_t, top_e = _top(ST)
    return 0, top_t, top_e


@njit(cache=True)
def nic_continue(ST, F, U, PK, host, now, eid):
    """Go on with ``host``'s NIC wake after a Python sender's turn (:func:`_nic_serve`); the
    events it schedules take sub-eids of engine eid ``eid``. Returns (the next Python sender's
    flow or -1, or a ``_RUN_*`` code (< -1) if the pool / heap needs room first, nothing done;
    kernel top time, kernel top's engine eid)."""
    code = _room(ST)
    if code:
        return code, NEVER_PS, 0
    ST[_H_EID] = eid << EID_SHIFT
    ST[_H_NOW] = now
    f = _nic_serve(ST, F, U, PK, host, now)
    top_t, top_e = _top(ST)
    return f, top_t, top_e


@njit(cache=True)
def _nic_resumed(ST, host, now):
    """PFC resumed ``host``'s NIC (:meth:`uno.net.nic.NicScheduler.resumed`): its waiting
    kernel senders are woken when it is next free (while it was paused, no wake was set)."""
    nb = ST[_H_OFF_NICS] + host * _NNC
    if ST[nb + _N_HEAD] >= 0 and not ST[nb + _N_PENDING]:
        ST[nb + _N_PENDING] = 1
        busy = ST[ST[_H_OFF_P] + ST[nb + _N_PORT] * _NPC + _P_BUSY]
        _heap_push(ST, busy if busy > now else now, _next_eid(ST), (host << _EV_BITS) | _EV_NICWAKE)


@njit(cache=True)
def _on_loss_episode(F, fr, ST, sb, now, timeout):
    """The controller hears of at most one loss per base RTT (one episode)."""
    if timeout:
        if now - ST[sb + _S_LAST_TIMEOUT] >= ST[sb + _S_BASE_RTT] or ST[sb + _S_TIMEOUTS] == 0:
            ST[sb + _S_TIMEOUTS] += 1
            ST[sb + _S_LAST_TIMEOUT] = now
            _cc_on_timeout(F, fr, ST, sb, now)
    else:
        last = ST[sb + _S_LAST_FAST]
        if last < 0 or now - last >= ST[sb + _S_BASE_RTT]:
            ST[sb + _S_LAST_FAST] = now
            _cc_on_nack(F, fr, ST, sb, now)


@njit(cache=True)
def _detect_losses(ST, F, sb, now, acked_sent_ps):
    """Fast retransmit (:meth:`uno.transport.sender.Sender._detect_losses`): every outstanding
    packet with ``dupack_threshold`` or more packets sent after it acknowledged is lost, oldest
    first."""
    later = ST[sb + _S_LATER_OFF]
    if ST[sb + _S_FIFO_N] and acked_sent_ps > ST[_fifo_front(ST, sb)]:
        n = ST[sb + _S_LATER_N]
        i = n
        while i > 0 and ST[later + i - 1] > acked_sent_ps:
            ST[later + i] = ST[later + i - 1]
            i -= 1
        ST[later + i] = acked_sent_ps
        ST[sb + _S_LATER_N] = n + 1
    out = ST[sb + _S_OUT_OFF]
    lost = 0
    while ST[sb + _S_FIFO_N]:
        at = _fifo_front(ST, sb)
        seq = ST[at + 1]
        if ST[out + seq] == ST[at] + 1:
            if ST[sb + _S_LATER_N] < ST[sb + _S_DUPTHR]:
                break
            _declare_lost(ST, sb, seq)
            lost += 1
        _fifo_pop(ST, sb)
        _drop_acked_before(ST, sb)
    if lost:
        ST[sb + _S_LOST] += lost
        ST[sb + _S_FAST_RETX] += lost
        _on_loss_episode(F, ST[sb + _S_FROW], ST, sb, now, False)


@njit(cache=True)
def _on_timer(ST, F, U, PK, f, now):
    """Kernel sender ``f``'s retransmission timer (:meth:`uno.transport.sender.Sender.
    _on_timer`): every packet unacknowledged ``rto`` after its (re)transmission is lost; the
    timer re-arms for the oldest outstanding one, at most once per granularity."""
    sb = ST[_H_OFF_SND] + f * _NSC
    ST[sb + _S_ARMED] = 0
    if ST[sb + _S_DONE]:
        return
    rto = ST[sb + _S_RTO]
    out = ST[sb + _S_OUT_OFF]
    lost = 0
    while ST[sb + _S_FIFO_N]:
        at = _fifo_front(ST, sb)
        sent = ST[at]
        seq = ST[at + 1]
        if ST[out + seq] != sent + 1:
            _fifo_pop(ST, sb)
            continue
        if sent + rto > now:
            break
        _fifo_pop(ST, sb)
        _declare_lost(ST, sb, seq)
        lost += 1
    if ST[sb + _S_DUPTHR]:
        _drop_acked_before(ST, sb)
    if lost:
        ST[sb + _S_LOST] += lost
        _on_loss_episode(F, ST[sb + _S_FROW], ST, sb, now, True)
    if ST[sb + _S_FIFO_N]:
        ST[sb + _S_ARMED] = 1
        due = ST[_fifo_front(ST, sb)] + rto
        floor = now + ST[sb + _S_GRAN]
        _heap_push(ST, due if due > floor else floor, _next_eid(ST), (f << _EV_BITS) | _EV_RTO)
    _try_send(ST, F, U, PK, f, now, False)


@njit(cache=True)
def _sender_on_ack(ST, F, U, PK, f, slot, now):
    """The ACK in row ``slot`` of PK (of packet ``seq``, sent at ``sent_ps``, its ECN echo)
    reaches kernel sender ``f`` (:meth:`uno.transport.sender.Sender.on_control`); the caller
    frees the row after. Returns 1 if the flow completed, an error code (``_ERR_*`` negated)
    if its completion broke an invariant, else 0."""
    seq = PK[slot, _K_SEQ]
    ecn = PK[slot, _K_ECN]
    sent_ps = PK[slot, _K_SENT]
    sb = ST[_H_OFF_SND] + f * _NSC
    if ST[sb + _S_DONE]:
        return 0
    wire = _wire_of(ST, sb, seq)
    acked = ST[sb + _S_ACKED_OFF]
    if ST[acked + seq]:
        ST[sb + _S_DUP] += 1
        if ST[sb + _S_DUP_CC]:
            # a controller that hears duplicates (MP-RDMA as the artifact runs it: its per-ACK
            # rule, uno.cc.mprdma's update_on_duplicate_ack)
            _cc_on_ack(
                F, ST[sb + _S_FROW], ST, sb, PK, slot, now, wire, ecn, now - sent_ps, sent_ps, 1,
                0, 0,
            )  # fmt: skip
        return 0
    ST[acked + seq] = 1
    ST[sb + _S_N_ACKED] += 1
    out = ST[sb + _S_OUT_OFF]
    if ST[out + seq]:
        ST[out + seq] = 0
        ST[sb + _S_INFLIGHT] -= wire
    ST[sb + _S_ACKED_BYTES] += wire
    if ecn:
        ST[sb + _S_ECN_ACKS] += 1
    rate_bytes = rate_ps = 0
    if ST[sb + _S_RATE]:  # the delivery-rate sample since this copy's send; the clock advances
        rate_bytes = ST[sb + _S_ACKED_BYTES] - PK[slot, _K_TX_DELIVERED]
        rate_ps = now - PK[slot, _K_TX_DELIVERED_PS]
        ST[sb + _S_DELIVERED_PS] = now
    _cc_on_ack(F, ST[sb + _S_FROW], ST, sb, PK, slot, now, wire, ecn, now - sent_ps, sent_ps, 0,
               rate_bytes, rate_ps)  # fmt: skip
    if ST[sb + _S_N_ACKED] == ST[sb + _S_N]:
        # every packet acknowledged: the flow completes (Sender._finish)
        if ST[sb + _S_INFLIGHT] != 0:
            for i in range(ST[sb + _S_N]):
                if ST[out + i]:
                    return -_ERR_OUTSTANDING
        ST[sb + _S_DONE] = 1
        ST[sb + _S_INFLIGHT] = 0
        ST[sb + _S_FINISH] = now
        return 1
    if ST[sb + _S_DUPTHR]:
        _detect_losses(ST, F, sb, now, sent_ps)
    _try_send(ST, F, U, PK, f, now, False)
    return 0


@njit(cache=True)
def start_flow(ST, F, U, PK, f, now, eid):
    """Kernel sender ``f`` starts at ``now`` (:meth:`uno.transport.sender.Sender.start`); the
    events it schedules take sub-eids of engine eid ``eid``. Returns (0, or a ``_RUN_*`` code if
    the pool / heap needs room first, nothing done; kernel top time, kernel top's engine eid)."""
    code = _room(ST)
    if code:
        return code, NEVER_PS, 0
    ST[_H_EID] = eid << EID_SHIFT
    ST[_H_NOW] = now
    _try_send(ST, F, U, PK, f, now, False)
    top_t, top_e = _top(ST)
    return 0, top_t, top_e


@njit(cache=True)
def run(ST, F, U, PK, lim_t, lim_prio, lim_eid, eid):
    """Process kernel events in (time, eid) order while they come before the Python event
    keyed (``lim_t``, ``lim_prio``, ``lim_eid``) (kernel events have priority 1); the events
    this call schedules take sub-eids of the engine eid ``eid``. Stops after the first delivery
    to a host (or once it has scheduled ``_CALL_PUSHES`` events, well before its sub-eids could
    run out).

    A data packet whose flow has a kernel receiver is answered inside (:func:`_receive_data`),
    an ACK whose flow has a kernel sender is taken by it (:func:`_sender_on_ack`), and the
    kernel senders' timers, pacing and NIC wakes are events here too. A kernel error stops the
    call with host -2 (``_H_ERROR`` says which). A PFC PAUSE or RESUME that changed a port
    stops it too (-3, -4; Python logs the interval and, for the Python senders, wakes a resumed
    NIC's), and so do a heap without room for an event's pushes (-5), a kernel sender's flow
    completing (-6, its id as the slot), a pool without room for an event's sends (-7) and a
    NIC wake reaching a Python sender's turn (-8, its flow as the slot, the host as the kind).

    Returns (the host a packet was delivered to, or a ``_RUN_*`` code; its slot (the port, for
    a PAUSE or RESUME; the flow, for a completion); its kind; its ECN; the time of the last
    event; the kernel top's time and engine eid)."""
    base = eid << EID_SHIFT
    ST[_H_EID] = base
    ht = ST[_H_OFF_HT]
    he = ST[_H_OFF_HE]
    flows = ST[_H_OFF_FLOWS]
    host = -1
    slot = -1
    kind = 0
    ecn = 0
    now = ST[_H_NOW]
    while ST[_H_HEAP_N] > 0 and ST[_H_EID] - base < _CALL_PUSHES:
        t = ST[ht]
        e = ST[he] >> EID_SHIFT
        if t > lim_t or (t == lim_t and (lim_prio < 1 or (lim_prio == 1 and e > lim_eid))):
            break
        if ST[_H_HEAP_CAP] - ST[_H_HEAP_N] < _HEAP_ROOM:
            host = _RUN_HEAP
            break
        if ST[_H_POOL_CAP] - ST[_H_IN_POOL] < _POOL_ROOM:
            host = _RUN_POOL
            break
        payload = _heap_pop(ST)
        now = t
        ST[_H_NOW] = t
        typ = payload & _EV_TYPE_MASK
        if typ == _EV_RTO:
            _on_timer(ST, F, U, PK, (payload >> _EV_BITS) & _EV_PORT_MASK, t)
            continue
        if typ == _EV_NICWAKE:
            nic_host = (payload >> _EV_BITS) & _EV_PORT_MASK
            f = _nic_wake(ST, F, U, PK, nic_host, t)
            if f >= 0:  # a Python sender's turn: Python goes on with the wake (nic_continue)
                host = _RUN_NICPY
                slot = f
                kind = nic_host
                break
            continue
        if typ == _EV_PACE:
            _pace_wake(ST, F, U, PK, (payload >> _EV_BITS) & _EV_PORT_MASK, t)
            continue
        if typ == _EV_RATE:
            _rate_changed(ST, F, U, PK, (payload >> _EV_BITS) & _EV_PORT_MASK, t)
            continue
        if typ == _EV_TXDONE:
            p = (payload >> _EV_BITS) & _EV_PORT_MASK
            _eport_tx_done(ST, F, U, PK, p, ST[_H_OFF_P] + p * _NPC, payload >> 32)
            continue
        if typ >= _EV_PAUSE:
            p = (payload >> _EV_BITS) & _EV_PORT_MASK
            if pfc_signal(ST, PK, p, typ == _EV_RESUME, t):
                pb = ST[_H_OFF_P] + p * _NPC
                if typ == _EV_RESUME and ST[pb + _P_FLAGS] & _FL_KNIC:
                    # the kernel's senders wait at this NIC: wake them as Host.nic_resumed
                    # would (Python then only logs the interval)
                    _nic_resumed(ST, ST[pb + _P_HOST], t)
                host = _RUN_RESUMED if typ == _EV_RESUME else _RUN_PAUSED
                slot = p
                break
            continue
        host, slot = _deliver(ST, F, U, PK, payload, t)
        if host >= 0:
            kind = PK[slot, _K_KIND]
            if kind == DATA and ST[flows + PK[slot, _K_FLOW] * _NRC + _R_KERNEL]:
                err = _receive_data(ST, F, U, PK, host, slot, t)
                if err:
                    ST[_H_ERROR] = err
                    host = _RUN_ERROR
                    break
                host = _RUN_NONE
                continue
            f = PK[slot, _K_FLOW]
            if kind == ACK and ST[ST[_H_OFF_SND] + f * _NSC + _S_ON]:
                # a kernel sender's ACK (uno.net.host.Host.receive, then the sender)
                if PK[slot, _K_DST] != host:
                    ST[_H_ERROR] = _ERR_MISROUTED
                    ST[_H_ERROR_ARG] = slot
                    host = _RUN_ERROR
                    break
                ST[_H_RX_ACK] += 1
                done = _sender_on_ack(ST, F, U, PK, f, slot, t)
                _free(ST, PK, slot)
                host = _RUN_NONE
                if done == 1:
                    ST[_H_DONE_FLOW] = f
                    host = _RUN_DONE
                    slot = f
                    break
                if done < 0:
                    ST[_H_ERROR] = -done
                    ST[_H_ERROR_ARG] = f
                    host = _RUN_ERROR
                    break
                continue
            ecn = PK[slot, _K_ECN]
            _free(ST, PK, slot)  # Python takes the packet from objs[slot] before any reuse
            break
    if ST[_H_HEAP_N] > 0:
        return host, slot, kind, ecn, now, ST[ht], ST[he] >> EID_SHIFT
    return host, slot, kind, ecn, now, NEVER_PS, 0


@njit(cache=True)
def inject(ST, F, U, PK, p, kind, size, src, dst, entropy, ecn, flow, seq, payload, now, eid):
    """Host NIC port ``p`` receives a packet from Python at ``now`` (its ECMP hash key is that
    of (``src``, ``dst``, ``entropy``): :func:`uno.core.packet.flow_hash_key`); a delivery event
    it schedules takes a sub-eid of engine eid ``eid``. Returns (pool slot or -1 if the pool is
    full, -2 if the event heap has too little room; kernel top time, kernel top's engine
    eid)."""
    if ST[_H_HEAP_CAP] - ST[_H_HEAP_N] < _HEAP_ROOM:
        return -2, NEVER_PS, 0
    slot = ST[_H_FREE]
    if slot < 0:
        return -1, NEVER_PS, 0
    ST[_H_FREE] = PK[slot, _K_NEXT]
    ST[_H_IN_POOL] += 1
    PK[slot, _K_KIND] = kind
    PK[slot, _K_SIZE] = size
    PK[slot, _K_DST] = dst
    PK[slot, _K_ECN] = ecn
    PK[slot, _K_HKEY] = hash_key(src, dst, entropy)
    PK[slot, _K_FLOW] = flow
    PK[slot, _K_SEQ] = seq
    PK[slot, _K_PAYLOAD] = payload
    PK[slot, _K_SRC] = src
    PK[slot, _K_ENTROPY] = entropy
    PK[slot, _K_ING] = -1
    if ST[_H_INT_MAX] > 0:
        PK[slot, _K_INT_N] = 0  # (an ACK from a Python receiver: its records are set next)
    ST[_H_EID] = eid << EID_SHIFT
    ST[_H_NOW] = now
    _port_receive(ST, F, U, PK, p, slot, now)
    if ST[_H_HEAP_N] > 0:
        return slot, ST[ST[_H_OFF_HT]], ST[ST[_H_OFF_HE]] >> EID_SHIFT
    return slot, NEVER_PS, 0


#: what check_ports found wrong with a port
_BAD_BYTES, _BAD_QUEUE_SUM, _BAD_HELD = 1, 2, 3


@njit(cache=True)
def check_ports(ST, PK):
    """The ports' invariants on the kernel's own state: every port's queued bytes lie in
    [0, buffer] and equal the sizes of the packets queued (not yet departed at its last
    settle; an event port's data queue and its data packet in service), and its count of
    packets held equals the packets in its FIFOs (queued or on the wire, both lanes). Returns
    (the first port that breaks one, which: ``_BAD_*``), or (-1, 0)."""
    for p in range(ST[_H_N_PORTS]):
        pb = ST[_H_OFF_P] + p * _NPC
        queued = ST[pb + _P_BYTES]
        if queued < 0 or queued > ST[pb + _P_BUFFER]:
            return p, _BAD_BYTES
        event = ST[pb + _P_FLAGS] & _FL_EVENT
        total = 0
        slot = ST[pb + _P_HEAD] if event else ST[pb + _P_QHEAD]
        while slot >= 0:
            total += PK[slot, _K_SIZE]
            slot = PK[slot, _K_NEXT]
        tx = ST[pb + _P_TX]
        if event and tx >= 0 and ST[pb + _P_TXQ] == _LANE_DATA:
            total += PK[tx, _K_SIZE]
        if total != queued:
            return p, _BAD_QUEUE_SUM
        held = 0
        heads = (ST[pb + _P_HEAD], ST[pb + _P_C_HEAD], ST[pb + _P_W_HEAD] if event else -1)
        for head in heads:
            slot = head
            while slot >= 0:
                held += 1
                slot = PK[slot, _K_NEXT]
        if held != ST[pb + _P_HELD]:
            return p, _BAD_HELD
    return -1, 0


@njit(cache=True)
def settle_port(ST, F, U, PK, p, now):
    """Settle port ``p`` at ``now``; returns (queued bytes, data packets queued, control
    packets not yet departed). An event port is only read, as
    :meth:`uno.net.event_port.EventPort.occupancy_bytes` and ``tx_packets`` read it: (data
    bytes queued, packets waiting in both queues or in service, 0), a packet whose
    serialisation ended at ``now`` counting as gone."""
    pb = ST[_H_OFF_P] + p * _NPC
    if ST[pb + _P_FLAGS] & _FL_EVENT:
        tx = ST[pb + _P_TX]
        left = tx >= 0 and PK[tx, _K_DEP] <= now
        q = ST[pb + _P_BYTES]
        if left and ST[pb + _P_TXQ] == _LANE_DATA:
            q -= PK[tx, _K_SIZE]
        waiting = 1 if tx >= 0 and not left else 0
        for head_col in (_P_HEAD, _P_C_HEAD):
            slot = ST[pb + head_col]
            while slot >= 0:
                waiting += 1
                slot = PK[slot, _K_NEXT]
        return q, waiting, 0
    _settle(ST, F, U, PK, p, pb, now)
    queued = 0
    slot = ST[pb + _P_QHEAD]
    while slot >= 0:
        queued += 1
        slot = PK[slot, _K_NEXT]
    waiting = 0
    slot = ST[pb + _P_C_HEAD]
    while slot >= 0:
        if PK[slot, _K_DEP] > now:
            waiting += 1
        slot = PK[slot, _K_NEXT]
    return ST[pb + _P_BYTES], queued, waiting


# ---- Python side -----------------------------------------------------------------------------
def check_compiled_support(cfg) -> None:
    """Refuse what the compiled data plane does not model, naming the setting."""
    if cfg.engine.kind != "packet":
        raise ConfigError(
            "engine.dataplane",
            f"is the packet engine's; engine.kind={cfg.engine.kind} has no packet ports",
        )
    for i, loss in enumerate(cfg.faults.losses):
        if loss.block_probabilities and loss.block_packets > _MAX_BLOCK_PACKETS:
            raise ConfigError(
                f"faults.losses[{i}].block_packets",
                f"is {loss.block_packets}; the compiled data plane keeps a block's lost "
                f"positions in 64 bits: at most {_MAX_BLOCK_PACKETS} (engine.dataplane=python "
                "has no limit)",
            )


#: the largest block of the block loss model the kernel keeps (a bit per position, int64)
_MAX_BLOCK_PACKETS = 63
_REASON_NAMES = (REASON_DOWN, REASON_RANDOM, REASON_BLOCK)


def _fault_rows(port) -> tuple[list[list[int]], list[float], list, object]:
    """The kernel's rows (``_NMC`` ints, floats given as indices into the returned list) for
    the fault models of ``port``, in the order its FaultyLink consults them; the floats; the
    block models (to sync their counters); the random stream the random models share."""
    rows: list[list[int]] = []
    floats: list[float] = []
    blocks = []
    uniform = None
    for model in port.fault.models if port.fault is not None else ():
        row = [0] * _NMC
        if isinstance(model, LinkDown):
            row[_M_TYPE] = _FM_DOWN
            row[_M_A] = model.start_ps
            row[_M_B] = model.end_ps if model.end_ps is not None else -1
        elif isinstance(model, (IidLoss, BlockLoss)):
            if uniform is not None and model._uniform is not uniform:
                raise ValueError(f"compiled data plane: port {port.name}: faults on two streams")
            uniform = model._uniform
            if isinstance(model, IidLoss):
                row[_M_TYPE] = _FM_IID
                row[_M_A] = len(floats)
                floats.append(model.p)
            else:
                if model.block_packets > _MAX_BLOCK_PACKETS:
                    raise ValueError(
                        f"compiled data plane: port {port.name}: blocks of more than "
                        f"{_MAX_BLOCK_PACKETS} packets"
                    )
                row[_M_TYPE] = _FM_BLOCK
                row[_M_A] = model.block_packets
                row[_M_D] = len(model.cumulative)
                row[_M_E] = len(floats)
                floats.extend(model.cumulative)
                blocks.append(model)
        else:
            raise ValueError(
                f"compiled data plane: port {port.name}: fault model {type(model).__name__}"
            )
        rows.append(row)
    return rows, floats, blocks, uniform


def _pcg64_words(uniform) -> tuple[int, int, int, int]:
    """(state high, state low, increment high, increment low) of a port's not yet drawn
    :class:`uno.core.rng.UniformBuffer`, past the values it must skip."""
    if uniform._gen is not None:
        raise ValueError("compiled data plane: a port's random stream was drawn from already")
    seq = np.random.SeedSequence(entropy=uniform._entropy, spawn_key=uniform._spawn_key)
    bitgen = np.random.PCG64(seq)
    if uniform._skip:
        np.random.Generator(bitgen).random(uniform._skip)
    state = bitgen.state["state"]
    s, inc = state["state"], state["inc"]
    mask = (1 << 64) - 1
    return s >> 64, s & mask, inc >> 64, inc & mask


def _is_law(cc) -> bool:
    from uno.cc.adapter import LawControl

    return isinstance(cc, LawControl)


def _cc_kind(cc) -> int:
    """``_S_CCK`` of controller ``cc``; 0 if it has no compiled form."""
    return _LAW_BASE + cc.kind if _is_law(cc) else 0


def kernel_sender_supported(sender) -> bool:
    """Whether the kernel can run ``sender`` (a :class:`uno.transport.sender.Sender`): its
    controller is a law (DCTCP, UnoCC, GEMINI, MP-RDMA, BBR, HPCC, DCQCN: :mod:`uno.cc.law`), its
    load balancer is ECMP (one entropy per flow) or packet spraying (one per packet, from the
    flow's stream), and it needs none of coding, delivery-rate samples (but a law's, which the
    kernel takes as the Python sender does), send events (but a law's, which the kernel gives
    it), INT records (but a law's, which it hands them) or load-balancer feedback."""
    from uno.lb.ecmp import Ecmp
    from uno.lb.spray import Spray

    kind = _cc_kind(sender.cc)
    return (
        kind != 0
        and type(sender.lb) in (Ecmp, Spray)
        and sender._coding is None
        and not sender._lb_feedback
        and (not sender._rate_samples or kind >= _LAW_BASE)
        and (not sender._send_events or kind >= _LAW_BASE)
        and (not sender._int_cc or kind >= _LAW_BASE)
        and sender._entropy_of is None
    )


def _sender_plan(flows: list, kernel_rx: list, wanted: bool) -> tuple[list[bool], str]:
    """Which flows' senders the kernel runs, and the note that says so (the summary's
    ``dataplane.senders``). A flow whose sender has no compiled form, or whose receiver is
    Python's (coding), keeps its Python sender: the slower callback path, on which the
    kernel hands it its ACKs and, at a NIC it shares with kernel senders, its turns. Some
    reasons keep every sender in Python."""
    none = [False] * len(flows)
    if not flows:
        return none, "in Python (no flows)"
    if not wanted:
        return none, "in Python (engine.compiled_senders=false)"
    plan = [k and kernel_sender_supported(f.sender) for f, k in zip(flows, kernel_rx, strict=True)]
    ints = sum(_sender_array_ints(f.n_packets) for f, k in zip(flows, plan, strict=True) if k)
    if ints > _SENDER_ARRAYS_MAX_INTS:
        return none, (
            f"in Python (the kernel senders' per-packet arrays would take {ints * 8 / 2**30:.1f} "
            f"GiB, over {_SENDER_ARRAYS_MAX_INTS * 8 / 2**30:.0f} GiB: flows of up to "
            f"{max(f.n_packets for f in flows):,} packets)"
        )
    if all(plan):
        return plan, "in the kernel"
    why = []
    for flow, k, ok in zip(flows, kernel_rx, plan, strict=True):
        if ok:
            continue
        if not k:
            reason = "receiver in Python: coding"
        else:
            reason = f"{flow.cc_name} with {flow.lb_name}: no compiled form"
        if reason not in why:
            why.append(reason)
    n_py = plan.count(False)
    where = (
        "in Python" if n_py == len(flows) else f"in the kernel but {n_py} of {len(flows)} in Python"
    )
    return plan, (
        f"{where} ({'; '.join(why)}; the kernel's: DCTCP, UnoCC, GEMINI, MP-RDMA, BBR, HPCC or "
        "DCQCN with ECMP or spraying, no coding)"
    )


#: the most int64 the kernel senders' per-packet arrays may take (2 GiB; untouched pages cost no
#: memory, but the address space must exist): longer flows keep Python senders
_SENDER_ARRAYS_MAX_INTS = 2**28


def _fifo_cap(n_packets: int) -> int:
    """Entries of a kernel sender's RTO FIFO: its live entries are at most one per packet, so a
    full ring always frees half of itself by dropping its stale ones (``_fifo_push``)."""
    return 2 * n_packets + 64


def _sender_array_ints(n_packets: int) -> int:
    """ST ints a kernel sender's arrays take (``CompiledDataplane._fill_senders``)."""
    return 4 * n_packets + 2 * _fifo_cap(n_packets)


def compiled_entry(dispatcher, args):
    """The compiled function ``dispatcher`` runs for ``args`` (Numba's ``entry_point`` of the
    overload of their types), callable without the dispatcher's type resolution on every call:
    ~0.3 µs of the ~0.9 µs a call with four arrays costs, twice per packet the sender hands
    over. The boundary's arguments keep their types (the arrays', Python ints and a bool), so
    the overload stays right; if this Numba keeps no such entry, the dispatcher is returned."""
    try:
        return dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point
    except (AttributeError, KeyError):
        return dispatcher


class CompiledDataplane:
    """The network of one simulation as kernel state; built from a configured Network, whose
    ports it replaces by :class:`CompiledPort` views (same names and statistics)."""

    def __init__(self, engine, network, flows: list, pool_packets: int = 4096,
                 kernel_receivers: bool = True, int_stampers: dict | None = None,
                 pfc: tuple | None = None, kernel_senders: bool = True):  # fmt: skip
        """``flows``: the run's flows (flow ids 0, 1, ... in order). With ``kernel_receivers``
        the kernel answers the data packets of every flow without erasure coding
        itself (:func:`_receive_data`); the other flows' receivers stay in Python.
        ``int_stampers``: INT on, the :class:`uno.net.int.IntStamper` of each port that writes
        records, by port name (:func:`uno.net.int.int_stampers`); all share one setting.
        ``kernel_senders``: the senders with a compiled form (:func:`kernel_sender_supported`)
        whose receiver is the kernel's run in the kernel, with their hosts' NIC turn-taking;
        Python sees such a flow's start and completion (:func:`_sender_plan`).
        ``pfc``: PFC on, (the :class:`uno.net.pfc.PfcIngress` queues, the
        :class:`uno.net.pfc.PauseLog`) configured on the network's event ports: the kernel
        counts and signals, and its counters are copied back to them (:meth:`sync_network`)."""
        self.engine = engine
        self.network = network
        for i, flow in enumerate(flows):
            if flow.flow_id != i:
                raise ValueError("compiled data plane: flow ids must be 0, 1, ... in order")
        self.flows = flows
        ports = network.ports
        for port in ports:
            if type(port).__name__ not in ("Port", "EventPort"):
                raise ValueError(
                    f"compiled data plane: port {port.name} is a {type(port).__name__}"
                )
        n_ports = len(ports)
        nodes = network.node_objs
        n_nodes = len(nodes)
        n_hosts = len(network.hosts)
        index_of = {id(p): i for i, p in enumerate(ports)}
        node_index = {id(obj): i for i, obj in enumerate(nodes)}
        # forwarding: per (node, destination host) an offset and count into one port list
        fib_off = np.zeros(n_nodes * n_hosts, dtype=np.int64)
        fib_n = np.zeros(n_nodes * n_hosts, dtype=np.int64)
        fib_ports: list[int] = []
        salts = np.zeros(n_nodes, dtype=np.uint64)
        node_host = np.full(n_nodes, -1, dtype=np.int64)
        for i, obj in enumerate(nodes):
            if isinstance(obj, Switch):
                salts[i] = np.uint64(obj.salt & ((1 << 64) - 1))
                for dst, cands in enumerate(obj.fib):
                    fib_off[i * n_hosts + dst] = len(fib_ports)
                    fib_n[i * n_hosts + dst] = len(cands)
                    fib_ports.extend(index_of[id(c)] for c in cands)
            else:
                node_host[i] = obj.host_id
        ingresses, self._pause_log = pfc if pfc is not None else ([], None)
        self._ingresses = ingresses
        # pending events: a lazy port has at most one delivery per lane; an event port one end
        # of serialisation and one delivery; PFC signals in flight have no fixed bound, so the
        # heap grows when short of room (_RUN_HEAP)
        heap_cap = 3 * n_ports + 4 * len(ingresses) + 1 + _HEAP_ROOM
        n_flows = len(flows)
        self._kernel_rx = [kernel_receivers and f.coding is None for f in flows]
        got_words = [
            (f.n_packets + 63) // 64 if k else 0
            for f, k in zip(flows, self._kernel_rx, strict=True)
        ]
        # the links' faults: per port its model rows, then the block models' counters
        faults = [_fault_rows(port) for port in ports]
        n_fault_ints = sum(
            len(rows) * _NMC + sum(2 + len(b.cumulative) for b in blocks)
            for rows, _, blocks, _ in faults
        )
        # the kernel's senders: the flows whose sender has a compiled form
        int_records = max((st.max_records for st in (int_stampers or {}).values()), default=0)
        self._ktx, self.senders_note = _sender_plan(flows, self._kernel_rx, kernel_senders)
        self._kernel_tx = any(self._ktx)
        # per kernel sender: acknowledged flags, outstanding send times, the RTO FIFO's pairs,
        # the retransmission queue, the acknowledged send times (uno.transport.sender)
        arrays = [
            _sender_array_ints(f.n_packets) if k else 0
            for f, k in zip(flows, self._ktx, strict=True)
        ]
        sizes = [_HEADER, n_ports * _NPC, len(fib_off), len(fib_n), len(fib_ports), n_nodes,
                 heap_cap, heap_cap, heap_cap, n_flows * _NRC, n_hosts, sum(got_words),
                 n_fault_ints, len(ingresses) * _NIC, n_flows * _NSC, n_hosts * _NNC,
                 sum(arrays)]  # fmt: skip
        offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        ST = np.zeros(int(offs[-1]), dtype=np.int64)
        ST[_H_OFF_P] = offs[1]
        ST[_H_N_PORTS] = n_ports
        ST[_H_OFF_FIBOFF], ST[_H_OFF_FIBN], ST[_H_OFF_FIBPORTS] = offs[2], offs[3], offs[4]
        ST[offs[2] : offs[3]] = fib_off
        ST[offs[3] : offs[4]] = fib_n
        ST[offs[4] : offs[5]] = fib_ports
        ST[_H_N_HOSTS] = n_hosts
        ST[_H_OFF_NODEHOST] = offs[5]
        ST[offs[5] : offs[6]] = node_host
        ST[_H_OFF_HT], ST[_H_OFF_HE], ST[_H_OFF_HP] = offs[6], offs[7], offs[8]
        ST[_H_HEAP_CAP] = heap_cap
        ST[_H_OFF_FLOWS] = offs[9]
        ST[_H_N_FLOWS] = n_flows
        ST[_H_OFF_HOSTNIC] = offs[10]
        R = ST[offs[9] : offs[10]].reshape(n_flows, _NRC)
        got = int(offs[11])
        for i, (flow, kernel) in enumerate(zip(flows, self._kernel_rx, strict=True)):
            row = R[i]
            row[_R_KERNEL] = kernel
            row[_R_N_PACKETS] = flow.n_packets
            row[_R_SIZE] = flow.size_bytes
            row[_R_ACK_BYTES] = flow.receiver.ack_bytes
            row[_R_GOT_OFF] = got
            row[_R_COMPLETE] = -1
            row[_R_CNP_INT] = flow.receiver._cnp_interval_ps
            row[_R_LAST_CNP] = -1
            got += got_words[i]
        self._flow_rows = R
        self._got_off = offs[11]
        fault_floats = [x for _, floats, _, _ in faults for x in floats]
        # a row holds a port's floats, or a kernel sender's law: its state, then its constants
        sw = max([len(f.sender.cc.state) for f, k in zip(flows, self._ktx, strict=True)
                  if k and _is_law(f.sender.cc)], default=0)  # fmt: skip
        pw = max([len(f.sender.cc.consts) for f, k in zip(flows, self._ktx, strict=True)
                  if k and _is_law(f.sender.cc)], default=0)  # fmt: skip
        nfc = max(_NFC, sw + pw)
        n_fault_rows = -(-len(fault_floats) // nfc)
        frow0 = n_ports + n_fault_rows  # the kernel senders' controllers' rows
        # ... then, with kernel senders, a row per INT record a packet holds (_ack_records)
        rec0 = frow0 + (n_flows if self._kernel_tx else 0)
        F = np.zeros((rec0 + (int_records if self._kernel_tx else 0), nfc))
        ST[_H_INT_REC] = rec0
        F.reshape(-1)[n_ports * nfc : n_ports * nfc + len(fault_floats)] = fault_floats
        ST[_H_CC_SW] = sw
        ST[_H_OFF_FLT] = offs[12]
        flt = int(offs[12])
        n_floats = 0
        self._faulty: list[tuple[int, object, list]] = []  # (port, FaultyLink, [(block, ST off)])
        rng_words: list[int] = []
        P = ST[offs[1] : offs[2]].reshape(n_ports, _NPC)
        for i, port in enumerate(ports):
            row = P[i]
            row[[_P_HEAD, _P_QHEAD, _P_TAIL, _P_C_HEAD, _P_C_TAIL, _P_TX, _P_W_HEAD, _P_W_TAIL,
                 _P_ING, _P_HOST]] = -1  # fmt: skip
            row[_P_BUFFER] = port.buffer_bytes
            row[_P_RATE] = port.rate_bps
            row[_P_DELAY] = port.delay_ps
            row[_P_NEXT] = node_index[id(port.next_node)]
            flags = 0
            if port._mark_physical:
                flags |= _FL_MARK_PHYS
            if port._mark_phantom:
                flags |= _FL_MARK_PHANT
            if port._phantom_acks:
                flags |= _FL_PH_ACKS
            if port._phantom_drops:
                flags |= _FL_PH_DROPS
            if port.control_lane is not None and port.control_lane is not False:
                flags |= _FL_CTRL  # (a Port's ControlLane, an EventPort's True)
            if type(port).__name__ == "EventPort":
                flags |= _FL_EVENT
                if not isinstance(port.owner, Switch):
                    flags |= _FL_NIC
            uniform = None
            if port.red is not None:
                F[i, _F_RED_KMIN] = port.red.kmin_bytes
                F[i, _F_RED_KMAX] = port.red.kmax_bytes
                F[i, _F_RED_SPAN] = port.red._span
                uniform = port.red._uniform
            if port.phantom is not None:
                ph = port.phantom
                flags |= _FL_PHANTOM
                F[i, _F_PH_SIZE] = ph.size_bytes
                F[i, _F_PH_DRAIN] = ph.drain_bytes_per_ps
                F[i, _F_PH_KMIN] = ph.red.kmin_bytes
                F[i, _F_PH_KMAX] = ph.red.kmax_bytes
                F[i, _F_PH_SPAN] = ph.red._span
                if uniform is not None and ph.red._uniform is not uniform:
                    raise ValueError(f"port {port.name}: RED and phantom queue must share a stream")
                uniform = ph.red._uniform
            rows, floats, blocks, fault_uniform = faults[i]
            if rows:
                flags |= _FL_FAULT
                row[_P_FLT_OFF] = flt
                row[_P_FLT_N] = len(rows)
                counters = flt + len(rows) * _NMC
                block_counters = []
                for mrow in rows:
                    if mrow[_M_TYPE] == _FM_IID:
                        mrow[_M_A] += n_floats
                    elif mrow[_M_TYPE] == _FM_BLOCK:
                        mrow[_M_E] += n_floats
                        mrow[_M_F] = counters
                        block_counters.append((blocks[len(block_counters)], counters))
                        counters += 2 + mrow[_M_D]
                    ST[flt : flt + _NMC] = mrow
                    flt += _NMC
                flt = counters
                n_floats += len(floats)
                self._faulty.append((i, port.fault, block_counters))
            row[_P_FLAGS] = flags
            if uniform is not None:
                row[_P_RNG] = len(rng_words)
                rng_words.extend(_pcg64_words(uniform))
            if fault_uniform is not None:
                row[_P_FLT_RNG] = len(rng_words)
                rng_words.extend(_pcg64_words(fault_uniform))
        # PFC's ingress queues, each on the link its upstream port feeds
        ST[_H_OFF_ING], ST[_H_N_ING] = offs[13], len(ingresses)
        I = ST[offs[13] : offs[14]].reshape(len(ingresses), _NIC)  # noqa: E741
        for j, ing in enumerate(ingresses):
            up = index_of[id(ing.upstream)]
            I[j, [_I_UP, _I_XOFF, _I_XON, _I_SIGNAL, _I_CTRL]] = (
                up, ing.xoff_bytes, ing.xon_bytes, ing._signal_ps, int(ing._control_lane)
            )  # fmt: skip
            P[up, _P_ING] = j
        ST[_H_OFF_SND], ST[_H_OFF_NICS] = offs[14], offs[15]
        if self._kernel_tx:
            self._fill_senders(ST, F, offs, frow0, arrays, rng_words)
        n_rng = len(rng_words)
        U = np.zeros(n_rng + n_nodes, dtype=np.uint64)
        U[:n_rng] = np.array(rng_words, dtype=np.uint64)
        U[n_rng:] = salts
        ST[_H_OFF_NODESALT] = n_rng
        self.ST, self.F, self.U = ST, F, U
        self._prow = offs[1]  # ports' rows start here in ST
        # INT: the stamping ports' flag, the packets' record columns
        self._int_max = 0
        if int_stampers:
            settings = {(st.max_records, st.gear) for st in int_stampers.values()}
            if len(settings) != 1:
                raise ValueError("compiled data plane: INT stampers with different settings")
            (self._int_max, gear), = settings  # fmt: skip
            ST[_H_INT_MAX], ST[_H_INT_GEAR] = self._int_max, int(gear)
            for i, port in enumerate(ports):
                if port.name in int_stampers:
                    P[i, _P_FLAGS] |= _FL_INT
        self._pk_cols = _NKC + (1 + _INT_FIELDS * self._int_max if self._int_max else 0)
        self.PK = np.zeros((0, self._pk_cols), dtype=np.int64)
        self.objs: list = []
        ST[_H_FREE] = -1
        self._grow(pool_packets)
        self.top = (NEVER_PS, 0)  # the kernel's next event (time, engine eid)
        # the two kernels called per packet: through their dispatchers the first time, then
        # the compiled functions themselves (compiled_entry)
        self._inject = self._first_inject
        self._run = self._first_run
        self.calls = 0  # calls into the kernel: each took one engine eid
        self._hosts = network.hosts
        self._dropped_seen = [0, 0, 0]
        self._fault_dropped_seen = [0] * 9
        self._rx_seen = 0
        self.views = [CompiledPort(self, i, p) for i, p in enumerate(ports)]
        # the NICs the kernel schedules: those of hosts with a kernel sender (their Python
        # senders, if any, take their turns in the same FIFO through a _KernelNic)
        kernel_nics = {flow.src for flow, k in zip(flows, self._ktx, strict=True) if k}
        for view in self.views:
            owner = view.owner
            if not isinstance(owner, Switch):
                owner.nic = view
                owner.nic_scheduler.port = view
                ST[offs[10] + owner.host_id] = view.index
                nb = offs[15] + owner.host_id * _NNC
                ST[nb + _N_PORT] = view.index
                pb = int(offs[1]) + view.index * _NPC
                ST[pb + _P_HOST] = owner.host_id
                if owner.host_id in kernel_nics:
                    ST[pb + _P_FLAGS] |= _FL_KNIC
                    owner.nic_scheduler = _KernelNic(self, view, owner.host_id)
                ST[nb + _N_HEAD] = ST[nb + _N_TAIL] = -1
            else:
                owner.ports[owner.ports.index(view._python_port)] = view
        network.ports = self.views
        network.port_by_name = {v.name: v for v in self.views}
        network.dataplane = self
        engine.attach_dataplane(self)
        self._tx_seen = 0
        self._ack_seen = 0
        self._start_flow = self._first_start_flow
        for flow, k in zip(flows, self._ktx, strict=True):
            if k:
                flow.sender.start = functools.partial(self.start_flow, flow.flow_id)
            elif flow.src in kernel_nics:
                flow.sender._nic = self._hosts[flow.src].nic_scheduler

    def _fill_senders(self, ST, F, offs, frow0: int, arrays: list[int], rng_words: list) -> None:
        """The kernel senders' rows, arrays and controllers' state, from the Python senders
        (built and not started: their counters are zero); a spraying sender's random stream
        joins ``rng_words``. The Python senders' rows hold their host only (``_S_ON`` 0)."""
        from uno.lb.spray import Spray

        at = int(offs[16])
        for f, flow in enumerate(self.flows):
            s = flow.sender
            n = flow.n_packets
            sb = int(offs[14]) + f * _NSC
            row = ST[sb : sb + _NSC]
            row[_S_HOST] = flow.src  # (a Python sender may wait in its NIC's kernel FIFO)
            if not self._ktx[f]:
                continue
            row[_S_ON] = 1
            row[_S_SRC], row[_S_DST] = flow.src, flow.dst
            if type(s.lb) is Spray:
                row[_S_SPRAY] = 1
                row[_S_SPRAY_N] = s.lb._n
                row[_S_SPRAY_RNG] = len(rng_words)
                rng_words.extend(_pcg64_words(s.lb._uniform))
            else:  # ECMP: the flow's one entropy
                entropy = s.lb.next_entropy(0)
                row[_S_ENTROPY] = entropy
                row[_S_HKEY] = hash_key(flow.src, flow.dst, entropy)
            row[_S_N] = n
            row[_S_LAST_SEQ] = s._last_seq
            row[_S_FULL_WIRE], row[_S_LAST_WIRE] = s.full_wire_bytes, s.last_wire_bytes
            row[_S_MSS], row[_S_LAST_PAYLOAD] = s.mss_bytes, s.last_payload_bytes
            row[_S_GRAN] = s.timer_granularity_ps
            row[_S_RTO] = s.rto_ps
            after = s._rto_after_retransmit_ps
            row[_S_RTO_AFTER] = after if after is not None else -1
            row[_S_DUPTHR] = s.dupack_threshold
            row[_S_LAST_FAST] = -1
            row[_S_BASE_RTT] = flow.path.base_rtt_ps
            row[_S_ACKED_OFF] = at
            row[_S_OUT_OFF] = at + n
            cap = _fifo_cap(n)
            row[_S_FIFO_OFF], row[_S_FIFO_CAP] = at + 2 * n, cap
            row[_S_RQ_OFF] = at + 2 * n + 2 * cap
            row[_S_RQ_CAP] = n
            row[_S_LATER_OFF] = at + 3 * n + 2 * cap
            row[_S_FROW] = frow0 + f
            kind = _cc_kind(s.cc)
            row[_S_CCK] = kind
            row[_S_DUP_CC] = s._dup_ack_cc
            if kind >= _LAW_BASE:
                sw = int(ST[_H_CC_SW])
                F[frow0 + f, : len(s.cc.state)] = s.cc.state
                F[frow0 + f, sw : sw + len(s.cc.consts)] = s.cc.consts
                row[_S_SEND_CC] = s.cc.wants_send_events
                row[_S_TIMER_CC] = s.cc.law.next_timer is not no_timer
                row[_S_RATE] = s.cc.wants_rate_samples
            at += arrays[f]
        self._snd_rows = ST[offs[14] : offs[15]].reshape(len(self.flows), _NSC)

    def _grow(self, extra: int) -> None:
        """Add ``extra`` free rows to the packet pool."""
        old = self.PK
        n = len(old)
        PK = np.zeros((n + extra, self._pk_cols), dtype=np.int64)
        PK[:n] = old
        PK[n:, _K_NEXT] = np.arange(n + 1, n + extra + 1)
        PK[n + extra - 1, _K_NEXT] = self.ST[_H_FREE]
        self.ST[_H_FREE] = n
        self.ST[_H_POOL_CAP] = n + extra
        self.PK = PK
        self.objs.extend([None] * extra)

    # ---- the boundary ---------------------------------------------------------------------
    def _first_inject(self, *args):
        out = inject(*args)  # (compiles, or loads from Numba's cache, the overload)
        self._inject = compiled_entry(inject, args)
        return out

    def _first_start_flow(self, *args):
        out = start_flow(*args)
        self._start_flow = compiled_entry(start_flow, args)
        return out

    def start_flow(self, flow_id: int) -> None:
        """Kernel sender ``flow_id`` starts now (in place of its Python sender's ``start``)."""
        engine = self.engine
        while True:
            self.calls += 1
            code, top_t, top_e = self._start_flow(
                self.ST, self.F, self.U, self.PK, flow_id, engine._now, engine.next_eid()
            )
            if not self._grew(code):
                break
        self.top = (top_t, top_e)

    def _first_run(self, *args):
        out = run(*args)
        self._run = compiled_entry(run, args)
        return out

    def send(self, port: int, pkt) -> None:
        """Host NIC port ``port`` receives ``pkt`` now."""
        engine = self.engine
        self.calls += 1
        while True:
            slot, top_t, top_e = self._inject(
                self.ST, self.F, self.U, self.PK, port, pkt.kind, pkt.size_bytes, pkt.src,
                pkt.dst, pkt.entropy, pkt.ecn, pkt.flow_id, pkt.seq, pkt.payload_bytes,
                engine._now, engine.next_eid(),
            )  # fmt: skip
            if slot >= 0:
                break
            if slot == -2:
                self._grow_heap()
            else:
                self._grow(len(self.PK))
            self.calls += 1
        self.objs[slot] = pkt
        self.top = (top_t, top_e)
        if self._int_max:
            hops = getattr(pkt, "int_hops", None)
            if hops:  # an ACK from a Python receiver echoes its data packet's records
                row = self.PK[slot]
                row[_K_INT_N] = len(hops)
                row[_K_INT_N + 1 : _K_INT_N + 1 + _INT_FIELDS * len(hops)] = [
                    x for record in hops for x in record
                ]

    def run(self, lim_t: int, lim_prio: int, lim_eid: int):
        """Run the kernel up to the Python event keyed (lim_t, lim_prio, lim_eid). Returns the
        packet delivered to a host, and the host, or None."""
        engine = self.engine
        self.calls += 1
        host, slot, kind, ecn, now, top_t, top_e = self._run(
            self.ST, self.F, self.U, self.PK, lim_t, lim_prio, lim_eid, engine.next_eid()
        )
        self.top = (top_t, top_e)
        if host < 0:
            if host == _RUN_DONE:
                self._flow_done(slot, now)
            elif host == _RUN_PAUSED or host == _RUN_RESUMED:
                self._pfc_signalled(slot, host == _RUN_RESUMED, now)
            elif host == _RUN_HEAP:
                self._grow_heap()
            elif host == _RUN_POOL:
                self._grow(len(self.PK))
            elif host == _RUN_NICPY:
                self._python_turns(slot, kind, now)
            elif host == _RUN_ERROR:
                self._raise_kernel_error(now)
            return None
        engine._now = now
        pkt = self.objs[slot]
        pkt.ecn = ecn == 1
        if self._int_max:
            n = int(self.PK[slot, _K_INT_N])
            if n:
                flat = self.PK[slot, _K_INT_N + 1 : _K_INT_N + 1 + _INT_FIELDS * n].tolist()
                pkt.int_hops = [
                    tuple(flat[i : i + _INT_FIELDS]) for i in range(0, len(flat), _INT_FIELDS)
                ]
        if kind != pkt.kind:  # the kernel's receiver made it an ACK: do the same to the object
            self.flows[pkt.flow_id].receiver.turn_into_ack(pkt)
        return pkt, self._hosts[host]

    def _python_turns(self, flow_id: int, host: int, now: int) -> None:
        """A NIC wake of ``host`` came to Python sender ``flow_id``'s turn (``_RUN_NICPY``):
        it sends (``nic_ready``), then the wake goes on in the kernel (:func:`nic_continue`)
        until it is over, Python senders' turns taken here as they come."""
        engine = self.engine
        engine._now = now
        while flow_id >= 0:
            self.flows[flow_id].sender.nic_ready()
            while True:
                self.calls += 1
                flow_id, top_t, top_e = nic_continue(
                    self.ST, self.F, self.U, self.PK, host, now, engine.next_eid()
                )
                if not self._grew(flow_id):
                    break
            self.top = (top_t, top_e)

    def nic_waiting(self, host: int) -> bool:
        """Whether a sender waits at ``host``'s NIC, one the kernel schedules."""
        ST = self.ST
        return bool(ST[int(ST[_H_OFF_NICS]) + host * _NNC + _N_HEAD] >= 0)

    def nic_wait(self, flow_id: int) -> None:
        """Python sender ``flow_id`` waits for its turn at a NIC the kernel schedules."""
        engine = self.engine
        while True:
            self.calls += 1
            code, top_t, top_e = nic_wait(
                self.ST, self.F, self.U, self.PK, flow_id, engine._now, engine.next_eid()
            )
            if not self._grew(code):
                break
        self.top = (top_t, top_e)

    def _grew(self, code: int) -> bool:
        """Grow the heap or the pool if ``code`` asks (``_RUN_HEAP``, ``_RUN_POOL``)."""
        if code == _RUN_HEAP:
            self._grow_heap()
        elif code == _RUN_POOL:
            self._grow(len(self.PK))
        else:
            return False
        return True

    def _flow_done(self, flow_id: int, now: int) -> None:
        """Kernel sender ``flow_id`` received its last ACK at ``now``: the flow completes
        (:meth:`uno.transport.sender.Sender._finish`: its finish time, the simulation hears)."""
        self.engine._now = now
        flow = self.flows[flow_id]
        self._store_sender(flow_id)
        flow.finish_ps = now
        flow.sender._on_complete(flow)

    def _pfc_signalled(self, port: int, resumed: bool, now: int) -> None:
        """A PAUSE or RESUME changed port ``port`` at ``now``: log the interval and, for a
        resumed NIC, wake its waiting senders (:meth:`uno.net.event_port.EventPort.resume`)."""
        self.engine._now = now
        view = self.views[port]
        if not resumed:
            self._pause_log.paused(view, DATA_PRIORITY, now)
            return
        self._pause_log.resumed(view, DATA_PRIORITY, now)
        wake = getattr(view.owner, "nic_resumed", None)
        if wake is not None and not self.ST[self._prow + port * _NPC + _P_FLAGS] & _FL_KNIC:
            wake()  # (the kernel woke the senders at the NICs it schedules)

    def _grow_heap(self) -> None:
        """Double the event heap: a bigger ST with the heap moved to its end (the old heap's
        cells stay unused); the views of ST are renewed."""
        old = self.ST
        cap = int(old[_H_HEAP_CAP])
        new_cap = 2 * cap
        n = len(old)
        ST = np.zeros(n + 3 * new_cap, dtype=np.int64)
        ST[:n] = old
        for k, col in enumerate((_H_OFF_HT, _H_OFF_HE, _H_OFF_HP)):
            at = n + k * new_cap
            ST[at : at + cap] = old[old[col] : old[col] + cap]
            ST[col] = at
        ST[_H_HEAP_CAP] = new_cap
        self.ST = ST
        off = int(ST[_H_OFF_FLOWS])
        self._flow_rows = ST[off : off + len(self.flows) * _NRC].reshape(len(self.flows), _NRC)
        if self._kernel_tx:
            off = int(ST[_H_OFF_SND])
            self._snd_rows = ST[off : off + len(self.flows) * _NSC].reshape(len(self.flows), _NSC)
        for view in self.views:
            view._st = memoryview(ST)

    def _raise_kernel_error(self, now: int) -> None:
        err = int(self.ST[_H_ERROR])
        arg = int(self.ST[_H_ERROR_ARG])
        if err == _ERR_OUTSTANDING:
            raise InvariantError(
                f"flow {arg}: all packets acked at {now} ps but some still outstanding"
            )
        row = self.PK[arg]
        flow_id = int(row[_K_FLOW])
        where = (
            f"at {now} ps: {KIND_NAMES[int(row[_K_KIND])]} packet of flow {flow_id}, seq "
            f"{int(row[_K_SEQ])}, src {int(row[_K_SRC])}, dst {int(row[_K_DST])}"
        )
        if err == _ERR_MISROUTED:
            raise InvariantError(f"compiled data plane: misrouted {where}")
        if err == _ERR_SEQ:
            raise InvariantError(f"flow {flow_id}: received seq outside the flow {where}")
        raise InvariantError(
            f"flow {flow_id}: complete with a byte count other than its size {where}"
        )

    @property
    def events_scheduled(self) -> int:
        """Events the kernel scheduled (each call also took one engine eid, not an event)."""
        return int(self.ST[_H_PUSHES]) - self.calls

    # ---- accounting -----------------------------------------------------------------------
    def sync(self) -> None:
        """Bring the network's counters and the kernel receivers' and senders' Python objects
        up to date."""
        self.sync_network()
        self.sync_receivers()
        self.sync_senders()

    def sync_senders(self, flow_ids=None) -> None:
        """Copy the kernel senders' counters and controllers' state to their Python
        :class:`uno.transport.sender.Sender` and controller objects (what samplers, tables and
        checks read): those of ``flow_ids`` (e.g. the flows a sampler is about to read), all
        if None."""
        if self._kernel_tx:
            ktx = self._ktx
            for f in range(len(self.flows)) if flow_ids is None else flow_ids:
                if ktx[f]:
                    self._store_sender(f)

    def _store_sender(self, f: int) -> None:
        s = self.flows[f].sender
        row = self._snd_rows[f].tolist()
        s.next_seq = row[_S_NEXT_SEQ]
        s.inflight_bytes = row[_S_INFLIGHT]
        s.n_acked = row[_S_N_ACKED]
        s.sent_bytes = row[_S_SENT_BYTES]
        s.sent_packets = row[_S_SENT_PKTS]
        s.acked_bytes = row[_S_ACKED_BYTES]
        s.retransmits = row[_S_RETX]
        s.timeouts = row[_S_TIMEOUTS]
        s.lost_packets = row[_S_LOST]
        s.dup_acks = row[_S_DUP]
        s.ecn_acks = row[_S_ECN_ACKS]
        s.fast_retransmits = row[_S_FAST_RETX]
        s.done = bool(row[_S_DONE])
        s.rto_ps = row[_S_RTO]
        s._timer_armed = bool(row[_S_ARMED])
        if row[_S_CCK] >= _LAW_BASE:
            s.cc.state[:] = self.F[row[_S_FROW], : len(s.cc.state)]
        s._next_send_ps = row[_S_NEXT_SEND]
        s._wake_at = row[_S_WAKE] - 1

    def _snd_rows_base(self, f: int) -> int:
        return int(self.ST[_H_OFF_SND]) + f * _NSC

    def sync_receivers(self) -> None:
        """Copy the kernel receivers' state (counts, completion, the sequence numbers got) to
        their :class:`uno.transport.receiver.Receiver` objects."""
        rows = self._flow_rows
        for i, flow in enumerate(self.flows):
            if not self._kernel_rx[i]:
                continue
            row = rows[i]
            rx = flow.receiver
            rx.n_got = int(row[_R_N_GOT])
            rx.bytes_received = int(row[_R_BYTES])
            rx.dup_packets = int(row[_R_DUP])
            rx.ecn_packets = int(row[_R_ECN])
            rx.complete_ps = int(row[_R_COMPLETE]) if row[_R_COMPLETE] >= 0 else None
            rx.cnps_sent = int(row[_R_CNPS])
            rx._last_cnp_ps = int(row[_R_LAST_CNP]) if row[_R_LAST_CNP] >= 0 else None
            off = int(row[_R_GOT_OFF])
            words = self.ST[off : off + (flow.n_packets + 63) // 64]
            bits = np.unpackbits(words.view(np.uint8), bitorder="little")[: flow.n_packets]
            rx.got = bytearray(bits.tobytes())

    def progress_view(self) -> tuple[int, np.ndarray]:
        """The time of the kernel's last event, and each flow's bytes received so far (the
        kernel's count for its receivers, the Python receiver's own for the others). Copies
        nothing to the Python objects: the progress watcher reads it from its thread while the
        run goes on."""
        got = self._flow_rows[:, _R_BYTES].copy()
        for i, kernel in enumerate(self._kernel_rx):
            if not kernel:
                got[i] = self.flows[i].receiver.bytes_received
        return int(self.ST[_H_NOW]), got

    def sync_network(self) -> None:
        """Bring the network's packet counters up to the kernel's: its drops, and the data
        packets its receivers took and answered with ACKs."""
        net = self.network
        tx = int(self.ST[_H_TX_DATA])  # data the kernel's senders put into their NICs
        if tx != self._tx_seen:
            net.injected[DATA] += tx - self._tx_seen
            net.in_flight += tx - self._tx_seen
            self._tx_seen = tx
        acks = int(self.ST[_H_RX_ACK])  # ACKs the kernel's senders took at their hosts
        if acks != self._ack_seen:
            net.delivered[ACK] += acks - self._ack_seen
            net.in_flight -= acks - self._ack_seen
            self._ack_seen = acks
        rx = int(self.ST[_H_RX_DATA])
        new_rx = rx - self._rx_seen
        if new_rx:
            net.delivered[DATA] += new_rx
            net.injected[ACK] += new_rx
            self._rx_seen = rx
        for kind in range(3):
            n = int(self.ST[_H_DROP0 + kind])
            new = n - self._dropped_seen[kind]
            if new:
                net.dropped[(DROP_BUFFER, KIND_NAMES[kind])] += new
                net.in_flight -= new
                self._dropped_seen[kind] = n
        if self._ingresses:
            off = int(self.ST[_H_OFF_ING])
            rows = self.ST[off : off + len(self._ingresses) * _NIC].reshape(-1, _NIC)
            for ing, row in zip(self._ingresses, rows, strict=True):
                ing.bytes = int(row[_I_BYTES])
                ing.max_bytes = int(row[_I_MAX])
                ing.pausing = bool(row[_I_PAUSING])
                ing.pauses_sent = int(row[_I_SENT])
                ing.violations = int(row[_I_VIOL])
        if not self._faulty:
            return
        for i in range(9):
            n = int(self.ST[_H_FDROP0 + i])
            new = n - self._fault_dropped_seen[i]
            if new:
                net.dropped[(_REASON_NAMES[i // 3], KIND_NAMES[i % 3])] += new
                net.in_flight -= new
                self._fault_dropped_seen[i] = n
        for port, faulty_link, block_counters in self._faulty:
            faulty_link.drops = int(self.ST[self._prow + port * _NPC + _P_FLT_DROPS])
            for block, off in block_counters:
                block.blocks = int(self.ST[off])
                counts = self.ST[off + 1 : off + 2 + len(block.cumulative)]
                block.losses_per_block = [int(c) for c in counts]

    def packets_in_network(self) -> int:
        """Packets in the pool: in queues or on links (checked against the ports' counts)."""
        return int(self.ST[_H_IN_POOL])

    def check_ports(self) -> None:
        """Raise :class:`InvariantError` naming the first port whose kernel state is
        inconsistent (:func:`check_ports`: queued bytes negative, over the buffer or not the
        sum of its packets; packets held not those in its FIFOs)."""
        port, bad = check_ports(self.ST, self.PK)
        if port < 0:
            return
        view = self.views[port]
        what = {
            _BAD_BYTES: f"{view.bytes} B queued, outside [0, {view.buffer_bytes}]",
            _BAD_QUEUE_SUM: f"{view.bytes} B queued, not the sum of its queued packets' sizes",
            _BAD_HELD: f"holds {view.packets_held()} packets by its count, not what its FIFOs hold",
        }[int(bad)]
        raise InvariantError(f"compiled data plane: port {view.name}: {what}")


class _KernelNic:
    """The NIC turn-taking (:class:`uno.net.nic.NicScheduler`'s interface) of a host whose NIC
    the kernel schedules because some of its senders are the kernel's: its Python senders wait
    in the same kernel FIFO, and the kernel hands them their turns (``_RUN_NICPY``)."""

    __slots__ = ("port", "_dataplane", "_host")

    def __init__(self, dataplane, port, host: int):
        self.port = port
        self._dataplane = dataplane
        self._host = host

    def free(self, now_ps: int, turn: bool = False) -> bool:
        """(:meth:`uno.net.nic.NicScheduler.free`: no sender may pass the waiting ones.)"""
        return self.port._busy_until_ps <= now_ps and (
            turn or not self._dataplane.nic_waiting(self._host)
        )

    def wait(self, sender) -> None:
        self._dataplane.nic_wait(sender.flow.flow_id)

    def resumed(self) -> None:
        """(The kernel wakes this NIC's waiting senders on a RESUME itself.)"""


class CompiledPort:
    """A port of the compiled data plane, seen from Python: the facts and statistics a
    :class:`uno.net.port.Port` offers (read from the kernel's arrays), and ``receive`` for a
    host's NIC. ``red`` and ``phantom`` are the port's marking configuration (thresholds,
    drain rate), not its state, which lives in the kernel: read the phantom level with
    :meth:`phantom_bytes` and the queue with :meth:`occupancy_bytes`."""

    __slots__ = ("_dp", "_st", "index", "_row", "_python_port", "name", "kind", "rate_bps",
                 "delay_ps", "buffer_bytes", "owner", "next_node", "red", "phantom", "fault",
                 "control_lane")  # fmt: skip

    def __init__(self, dataplane: CompiledDataplane, index: int, port):
        self._dp = dataplane
        # the int64 state as a memoryview: indexing it gives a Python int directly, ~20x
        # cheaper than a numpy scalar (the NIC scheduler reads _busy_until_ps per data packet)
        self._st = memoryview(dataplane.ST)
        self.index = index
        self._row = dataplane._prow + index * _NPC
        self._python_port = port
        for attr in ("name", "kind", "rate_bps", "delay_ps", "buffer_bytes", "owner",
                     "next_node", "red", "phantom", "control_lane"):  # fmt: skip
            setattr(self, attr, getattr(port, attr))
        # its faults' models and counters (the kernel applies them; sync_network copies the
        # counters back for the summary and the ports table)
        self.fault = port.fault

    def receive(self, pkt) -> None:
        self._dp.send(self.index, pkt)

    def _int(self, col: int) -> int:
        return self._st[self._row + col]

    @property
    def _busy_until_ps(self) -> int:
        return self._st[self._row + _P_BUSY]

    @property
    def marks_physical(self) -> bool:
        return bool(self._int(_P_FLAGS) & _FL_MARK_PHYS)

    @property
    def arrivals(self) -> int:
        return self._int(_P_ARRIVALS)

    @property
    def drops(self) -> int:
        return self._int(_P_DROPS)

    @property
    def ecn_marks(self) -> int:
        return self._int(_P_MARKS)

    @property
    def max_bytes(self) -> int:
        return self._int(_P_MAXB)

    @property
    def enqueued_bytes(self) -> int:
        return self._int(_P_ENQB)

    @property
    def bytes(self) -> int:
        return self._int(_P_BYTES)

    @property
    def tx_bytes(self) -> int:
        return self.enqueued_bytes - self.bytes

    def _settled(self, now: int) -> tuple[int, int, int]:
        dp = self._dp
        q, queued, waiting = settle_port(dp.ST, dp.F, dp.U, dp.PK, self.index, now)
        return int(q), int(queued), int(waiting)

    def occupancy_bytes(self, now: int) -> int:
        return self._settled(now)[0]

    @property
    def tx_packets(self) -> int:
        _, queued, waiting = self._settled(self._dp.engine._now)
        return self.arrivals - self.drops - queued - waiting

    def packets_held(self) -> int:
        return self._int(_P_HELD)

    def phantom_bytes(self, now: int) -> float:
        if self.phantom is None:
            return 0.0
        dp = self._dp
        level = (
            dp.F[self.index, _F_PH_LEVEL]
            - (now - self._int(_P_PH_LAST)) * dp.F[self.index, _F_PH_DRAIN]
        )
        return float(level) if level > 0.0 else 0.0

    def serialization_ps(self, size_bytes: int) -> int:
        return int(serialization_ps(size_bytes, self.rate_bps))

    def __repr__(self) -> str:
        return f"CompiledPort({self.name}, {self.rate_bps / 1e9:g} Gb/s, {self.delay_ps} ps)"


__all__ = ["CompiledDataplane", "CompiledPort", "check_compiled_support"]
