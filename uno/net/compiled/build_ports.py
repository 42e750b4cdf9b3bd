"""The network's side of the kernel's state, from a configured :class:`uno.net.network.Network`:
switch forwarding, the ports' rows and marking floats (with their random streams' words), the
links' fault model rows, PFC's ingress queues and the INT stampers. Every function reads the
Python objects, never changes them."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from uno.faults.models import BlockLoss, IidLoss, LinkDown
from uno.net.compiled.faults import MAX_BLOCK_PACKETS
from uno.net.compiled.layout import FL, FM, ING, M_BLOCK, M_DOWN, M_IID, N_MODEL, PF, P
from uno.net.compiled.pcg import pcg64_words
from uno.net.switch import Switch

#: switch forwarding: per (node, destination host) an offset and a count into one list of
#: equal-cost ports (fib_off, fib_n, fib_ports); each switch's ECMP salt; each node's host id
#: (-1: a switch)
Forwarding = namedtuple("Forwarding", ("fib_off", "fib_n", "fib_ports", "salts", "node_host"))
#: a port's fault models: their rows (N_MODEL ints each, float positions relative to the
#: port's own floats), their floats, the block models (to copy their counters back), the
#: stream the random ones share
FaultRows = namedtuple("FaultRows", ("rows", "floats", "blocks", "uniform"))
#: a faulty port: its index, its FaultyLink, and each block model with the ST offset of its
#: counters
Faulty = namedtuple("Faulty", ("port", "link", "block_counters"))


def forwarding(network) -> Forwarding:
    """The forwarding tables of ``network``'s switches, in node order: its ports are its routing
    edges in edge order (:class:`uno.net.network.Network`), so a switch's equal-cost ports
    towards a host are the routing's next-hop edges (:meth:`uno.topo.routing.Routing.
    next_hop_table`); a host's rows stay empty."""
    nodes = network.node_objs
    n_nodes, n_hosts = len(nodes), len(network.hosts)
    ptr, flat = network.routing.next_hop_table()
    if len(network.ports) != len(network.routing.edges) or len(ptr) != n_nodes * n_hosts + 1:
        raise ValueError("compiled data plane: the ports are not the routing's edges")
    is_switch = np.fromiter((isinstance(o, Switch) for o in nodes), dtype=bool, count=n_nodes)
    row_is_switch = np.repeat(is_switch, n_hosts)
    counts = np.diff(ptr)
    fib_n = np.where(row_is_switch, counts, 0).astype(np.int64)
    ends = np.cumsum(fib_n)
    fib_off = np.where(row_is_switch, ends - fib_n, 0).astype(np.int64)
    fib_ports = flat[np.repeat(row_is_switch, counts)].astype(np.int64)
    salts = np.zeros(n_nodes, dtype=np.uint64)
    node_host = np.full(n_nodes, -1, dtype=np.int64)
    for i, obj in enumerate(nodes):
        if isinstance(obj, Switch):
            salts[i] = np.uint64(obj.salt & ((1 << 64) - 1))
        else:
            node_host[i] = obj.host_id
    return Forwarding(fib_off, fib_n, fib_ports, salts, node_host)


def fault_rows(port) -> FaultRows:
    """The kernel's rows for the fault models of ``port``, in the order its FaultyLink consults
    them."""
    rows: list[list[int]] = []
    floats: list[float] = []
    blocks = []
    uniform = None
    for model in port.fault.models if port.fault is not None else ():
        row = [0] * N_MODEL
        if isinstance(model, LinkDown):
            row[M_DOWN.type] = FM.down
            row[M_DOWN.start_ps] = model.start_ps
            row[M_DOWN.end_ps] = model.end_ps if model.end_ps is not None else -1
        elif isinstance(model, (IidLoss, BlockLoss)):
            if uniform is not None and model.uniform is not uniform:
                raise ValueError(f"compiled data plane: port {port.name}: faults on two streams")
            uniform = model.uniform
            if isinstance(model, IidLoss):
                row[M_IID.type] = FM.iid
                row[M_IID.p_at] = len(floats)
                floats.append(model.p)
            else:
                if model.block_packets > MAX_BLOCK_PACKETS:
                    raise ValueError(
                        f"compiled data plane: port {port.name}: blocks of more than "
                        f"{MAX_BLOCK_PACKETS} packets"
                    )
                row[M_BLOCK.type] = FM.block
                row[M_BLOCK.packets] = model.block_packets
                row[M_BLOCK.n_cumulative] = len(model.cumulative)
                row[M_BLOCK.cumulative_at] = len(floats)
                floats.extend(model.cumulative)
                blocks.append(model)
        else:
            raise ValueError(
                f"compiled data plane: port {port.name}: fault model {type(model).__name__}"
            )
        rows.append(row)
    return FaultRows(rows, floats, blocks, uniform)


def fault_ints(faults: list[FaultRows]) -> int:
    """ST ints the fault models' rows take, with the block models' counters."""
    return sum(len(f.rows) * N_MODEL + sum(2 + len(b.cumulative) for b in f.blocks) for f in faults)


def _marking(port, F_row) -> tuple[int, object]:
    """Port ``port``'s flags for its marking, phantom queue and lanes; its marking floats into
    ``F_row``. Returns (the flags, the random stream RED and the phantom queue share)."""
    flags = 0
    if port.marks_physical:
        flags |= FL.mark_phys
    if port.marks_phantom:
        flags |= FL.mark_phant
    if port.phantom_counts_control:
        flags |= FL.ph_acks
    if port.phantom_counts_drops:
        flags |= FL.ph_drops
    if port.control_lane is not None and port.control_lane is not False:
        flags |= FL.ctrl  # (a Port's ControlLane, an EventPort's True)
    if type(port).__name__ == "EventPort":
        flags |= FL.event
    uniform = None
    if port.red is not None:
        F_row[PF.red_kmin] = port.red.kmin_bytes
        F_row[PF.red_kmax] = port.red.kmax_bytes
        F_row[PF.red_span] = port.red.span_bytes
        uniform = port.red.uniform
    if port.phantom is not None:
        ph = port.phantom
        flags |= FL.phantom
        F_row[PF.ph_size] = ph.size_bytes
        F_row[PF.ph_drain] = ph.drain_bytes_per_ps
        F_row[PF.ph_kmin] = ph.red.kmin_bytes
        F_row[PF.ph_kmax] = ph.red.kmax_bytes
        F_row[PF.ph_span] = ph.red.span_bytes
        if uniform is not None and ph.red.uniform is not uniform:
            raise ValueError(f"port {port.name}: RED and phantom queue must share a stream")
        uniform = ph.red.uniform
    return flags, uniform


def _place_faults(ST, faults: FaultRows, at: int, n_floats: int) -> tuple[int, list]:
    """Write a port's fault model rows at ``at`` in ST, then their block counters, their float
    positions shifted by the ``n_floats`` floats of the ports before. Returns (the next free
    offset, each block model with the offset of its counters)."""
    counters = at + len(faults.rows) * N_MODEL
    block_counters = []
    for mrow in faults.rows:
        kind = mrow[M_DOWN.type]  # (every model's row starts with its type)
        if kind == FM.iid:
            mrow[M_IID.p_at] += n_floats
        elif kind == FM.block:
            mrow[M_BLOCK.cumulative_at] += n_floats
            mrow[M_BLOCK.counters_at] = counters
            block_counters.append((faults.blocks[len(block_counters)], counters))
            counters += 2 + mrow[M_BLOCK.n_cumulative]
        ST[at : at + N_MODEL] = mrow
        at += N_MODEL
    return counters, block_counters


def fill_ports(ST, F, P_rows, ports, node_index, faults, fault_at, rng_words) -> list[Faulty]:
    """The ports' rows (``P_rows``, a view of ST), their marking floats (rows of F) and fault
    models (in ST from ``fault_at``); their random streams' words are appended to
    ``rng_words``. Returns the faulty ports."""
    faulty: list[Faulty] = []
    n_floats = 0
    for i, port in enumerate(ports):
        row = P_rows[i]
        row[[P.head, P.qhead, P.tail, P.c_head, P.c_tail, P.tx, P.w_head, P.w_tail, P.ingress,
             P.host]] = -1  # fmt: skip
        row[P.buffer] = port.buffer_bytes
        row[P.rate] = port.rate_bps
        row[P.delay] = port.delay_ps
        row[P.next] = node_index[id(port.next_node)]
        row[P.owner] = node_index[id(port.owner)]
        row[P.overflow] = port.overflow_policy
        flags, uniform = _marking(port, F[i])
        if port.qcn is not None:  # a congestion point (uno.net.qcn)
            flags |= FL.qcn
            F[i, [PF.qcn_sample, PF.qcn_qeq, PF.qcn_w]] = (
                port.qcn.sample_bytes, port.qcn.qeq_bytes, port.qcn.w
            )  # fmt: skip
        port_faults = faults[i]
        if port_faults.rows:
            flags |= FL.fault
            row[P.flt_off] = fault_at
            row[P.flt_n] = len(port_faults.rows)
            fault_at, block_counters = _place_faults(ST, port_faults, fault_at, n_floats)
            n_floats += len(port_faults.floats)
            faulty.append(Faulty(i, port.fault, block_counters))
        row[P.flags] = flags
        if uniform is not None:
            row[P.rng] = len(rng_words)
            rng_words.extend(pcg64_words(uniform))
        if port_faults.uniform is not None:
            row[P.flt_rng] = len(rng_words)
            rng_words.extend(pcg64_words(port_faults.uniform))
    return faulty


def fill_ingress(I_rows, P_rows, ingresses: list, index_of: dict) -> None:
    """PFC's ingress queues' rows (``I_rows``), each on the link its upstream port feeds."""
    for j, ing in enumerate(ingresses):
        up = index_of[id(ing.upstream)]
        I_rows[j, [ING.up, ING.xoff, ING.xon, ING.signal_ps, ING.ctrl]] = (
            up, ing.xoff_bytes, ing.xon_bytes, ing.signal_ps, int(ing.control_lane)
        )  # fmt: skip
        P_rows[up, P.ingress] = j


def int_setting(int_stampers: dict | None) -> tuple[int, int, int]:
    """(records a packet holds, replacement rule code, the rule's coin salt) of the INT
    stampers, which share one setting; (0, 0, 0) with INT off."""
    if not int_stampers:
        return 0, 0, 0
    settings = {(st.max_records, st.rule, st.tie_salt) for st in int_stampers.values()}
    if len(settings) != 1:
        raise ValueError("compiled data plane: INT stampers with different settings")
    return settings.pop()
