"""The compiled data plane (``engine.dataplane=compiled``): every packet's journey between two
hosts — NIC port, switch ports, links, the ECMP hash, the overflow policy, RED/ECN at dequeue,
the phantom queue, the control lane of ``switch.ack_priority`` — runs inside
``@njit(cache=True)`` kernels over struct-of-arrays state, and Python sees only what an endpoint
must see: a packet arriving at a host. It is the lazy port model of :mod:`uno.net.port` (the
Python data plane, kept as the reference implementation and test oracle), translated statement
by statement over the shared network primitives (:mod:`uno.net.hashing`, :mod:`uno.net.red`,
:mod:`uno.net.phantom`, :mod:`uno.net.overflow`, :func:`uno.core.units.serialization_ps_kernel`),
so both give the same results bit for bit (``tests/test_compiled_dataplane.py``).

Its rooms:

- :mod:`~uno.net.compiled.layout`: the state's named columns and the codes kernels exchange;
- :mod:`~uno.net.compiled.events`, :mod:`~uno.net.compiled.packets`,
  :mod:`~uno.net.compiled.pcg`: the event heap and eids, the packet pool and its FIFOs, the
  random streams;
- :mod:`~uno.net.compiled.queue`, :mod:`~uno.net.compiled.ports`,
  :mod:`~uno.net.compiled.event_port`, :mod:`~uno.net.compiled.pfc`: the ports (admission and
  marking shared by the lazy and the event port; PFC's ingress queues);
- :mod:`~uno.net.compiled.faults`, :mod:`~uno.net.compiled.delivery`: the links' faults,
  switching and the kernel's receivers;
- :mod:`~uno.net.compiled.senders`, :mod:`~uno.net.compiled.sender_acks`,
  :mod:`~uno.net.compiled.sender_rings`, :mod:`~uno.net.compiled.law_calls`,
  :mod:`~uno.net.compiled.nic`, :mod:`~uno.net.compiled.nic_turns`: the kernel senders (sending,
  ACKs and timers, their rings, their laws) and the hosts' NIC turn-taking;
- :mod:`~uno.net.compiled.loop`: the kernels Python calls (``run``, ``inject``, ...);
- :mod:`~uno.net.compiled.support`, :mod:`~uno.net.compiled.build_state`,
  :mod:`~uno.net.compiled.build_ports`, :mod:`~uno.net.compiled.build_flows`,
  :mod:`~uno.net.compiled.dataplane`, :mod:`~uno.net.compiled.views`: the Python side — what it
  models, building the state, the boundary and the port views.

Events: a port has at most one pending delivery event per lane (data, control), keyed like the
Python engine's ``(time, priority 1, eid)``; kernel eids sort with the engine's
(:mod:`~uno.net.compiled.events`), so kernel events and Python events (timers, NIC wakes, SimPy
processes) interleave exactly as in the Python data plane: :meth:`uno.core.engine.Engine.
run_until` runs the kernel up to the key of the next Python event, and the kernel returns early
at the first delivery to a Python endpoint (one at a time: the receiving endpoint may send at
once). A host's NIC port receiving a packet from Python (:meth:`CompiledPort.receive`) takes the
eid the Python port would take.

Link faults, INT (a stamping port writes its record into a data packet's row when the packet
leaves; the records are set on the Python packet as ``int_hops`` when it reaches Python, and
written back from ``int_hops`` when a Python receiver's ACK enters the kernel), event ports and
PFC (built from the network's EventPorts when ``engine.port_model`` picks them: PFC, INT with
ACK priority, or ``event``) run in the kernel too; a PAUSE or RESUME that changes a port returns
to Python, which logs the interval (:class:`uno.net.pfc.PauseLog`) and wakes a resumed NIC's
Python senders; the counters are copied back to the Python objects for the summary.

Endpoints: a flow without erasure coding has its receiver in the kernel (DCQCN's CNP
coalescing included). A flow whose sender has a compiled form (:func:`kernel_sender_supported`:
its congestion control a law of :mod:`uno.cc.law`, over ECMP or packet spraying, no coding) has
its sender in the kernel too, with the hosts' NIC turn-taking
(:class:`uno.net.nic.NicScheduler`), so Python sees only flow starts
(:meth:`CompiledDataplane.start_flow`) and completions; the Python objects get the kernel's
state whenever tables or checks read them (:meth:`CompiledDataplane.sync_senders`; samplers
read the kernel's arrays, :meth:`CompiledDataplane.sender_counters`).
The other flows keep their Python senders (the callback path: the kernel returns their ACKs),
and at a NIC they share with kernel senders they wait in the kernel's FIFO and get their turns
from it; the run's summary says which and why (docs/design.md).

Cost per packet-hop: the kernels Python calls borrow their arrays (:mod:`uno.core.borrow`), so
the small functions a packet passes through count no references, and the few on every hop
(the wire's end, switching, admission) are inlined where they are called (``inline="always"``);
``benchmarks/engine_speed.py`` and ``benchmarks/fig3_speed.py`` measure it.
"""

from uno.net.compiled.dataplane import CompiledDataplane
from uno.net.compiled.support import check_compiled_support, kernel_sender_supported
from uno.net.compiled.views import CompiledPort

__all__ = ["CompiledDataplane", "CompiledPort", "check_compiled_support", "kernel_sender_supported"]
