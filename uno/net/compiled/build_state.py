"""The kernel's arrays for one simulation, from a configured :class:`uno.net.network.Network`
and its flows: ST with its header and sections, F and U (:mod:`uno.net.compiled.layout`).
The packet pool is the data plane's (it grows)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from uno.metrics.rtts import RTT_BINS
from uno.net.compiled.build_flows import fill_receivers, fill_senders, got_words, law_widths
from uno.net.compiled.build_ports import (
    fault_ints,
    fault_rows,
    fill_ingress,
    fill_ports,
    forwarding,
    int_setting,
)
from uno.net.compiled.layout import (
    FL,
    HEAP_ROOM,
    ING,
    PF,
    D,
    H,
    N,
    P,
    Q,
    R,
    S,
    section_starts,
)
from uno.net.compiled.support import sender_array_ints, sender_plan
from uno.net.switch import Switch

#: the arrays and what the data plane keeps of their building: the sections' starts, the faulty
#: ports, which flows' receivers and senders are the kernel's (and the summary's note), INT's
#: records per packet (0: off)
KernelState = namedtuple("KernelState", ("ST", "F", "U", "starts", "faulty", "kernel_rx", "ktx",
                                         "senders_note", "int_max"))  # fmt: skip


def _section_sizes(n_ports, n_hosts, n_nodes, fwd, heap_cap, n_flows, words, faults, n_ing,
                   arrays, rtt_bins, n_dci) -> dict:  # fmt: skip
    """Every section's size in ST (ints)."""
    return dict(
        header=H.size, ports=n_ports * P.size, fib_off=len(fwd.fib_off), fib_n=len(fwd.fib_n),
        fib_ports=len(fwd.fib_ports), node_host=n_nodes, heap_t=heap_cap, heap_e=heap_cap,
        heap_p=heap_cap, flows=n_flows * R.size, host_nic=n_hosts, got=sum(words),
        faults=fault_ints(faults), ingress=n_ing * ING.size, senders=n_flows * S.size,
        nics=n_hosts * N.size, sender_arrays=sum(arrays), rtts=rtt_bins, dci=n_dci * D.size,
        pfq=n_flows * Q.size if n_dci else 0, host_dc=n_hosts, touched=n_ports,
    )  # fmt: skip


def _header(ST, starts, fwd, n_ports: int, n_hosts: int, heap_cap: int, n_ing: int) -> None:
    """The header's section offsets and sizes, and the forwarding sections."""
    ST[H.off_ports] = starts.ports
    ST[H.n_ports] = n_ports
    ST[H.off_fib_off], ST[H.off_fib_n] = starts.fib_off, starts.fib_n
    ST[H.off_fib_ports] = starts.fib_ports
    ST[starts.fib_off : starts.fib_n] = fwd.fib_off
    ST[starts.fib_n : starts.fib_ports] = fwd.fib_n
    ST[starts.fib_ports : starts.node_host] = fwd.fib_ports
    ST[H.n_hosts] = n_hosts
    ST[H.off_node_host] = starts.node_host
    ST[starts.node_host : starts.heap_t] = fwd.node_host
    ST[H.off_heap_t], ST[H.off_heap_e], ST[H.off_heap_p] = (
        starts.heap_t, starts.heap_e, starts.heap_p
    )  # fmt: skip
    ST[H.heap_cap] = heap_cap
    ST[H.off_flows] = starts.flows
    ST[H.off_host_nic] = starts.host_nic
    ST[H.off_ingress], ST[H.n_ingress] = starts.ingress, n_ing
    ST[H.off_senders], ST[H.off_nics] = starts.senders, starts.nics
    ST[H.off_touched] = starts.touched
    ST[H.sh_epoch] = 1  # (a port's P.sh_epoch starts at 0: not touched in it)


def _float_rows(ST, flows, ktx, faults, n_ports: int, int_max: int):
    """F: a row per port's marking floats, then the fault models' floats, then (with kernel
    senders) a law row per flow and a row per INT record a packet holds. Returns (F, the
    first law row)."""
    fault_floats = [x for f in faults for x in f.floats]
    sw, pw = law_widths(flows, ktx)
    width = max(PF.size, sw + pw)
    frow0 = n_ports + -(-len(fault_floats) // width)
    kernel_tx = any(ktx)
    rec0 = frow0 + (len(flows) if kernel_tx else 0)
    F = np.zeros((rec0 + (int_max if kernel_tx else 0), width))
    F.reshape(-1)[n_ports * width : n_ports * width + len(fault_floats)] = fault_floats
    ST[H.int_rec] = rec0
    ST[H.law_state_width] = sw
    return F, frow0


def _nics(ST, starts, ports: list, flows: list, ktx: list[bool]) -> None:
    """The hosts' NIC rows and host -> NIC port map; a NIC where kernel senders send is the
    kernel's to schedule (``FL.knic``)."""
    kernel_nics = {flow.src for flow, k in zip(flows, ktx, strict=True) if k}
    for i, port in enumerate(ports):
        if isinstance(port.owner, Switch):
            continue
        host = port.owner.host_id
        ST[starts.host_nic + host] = i
        nb = starts.nics + host * N.size
        ST[nb + N.port] = i
        ST[nb + N.head] = ST[nb + N.tail] = -1
        pb = starts.ports + i * P.size
        ST[pb + P.host] = host
        if host in kernel_nics:
            ST[pb + P.flags] |= FL.knic


def _dci_rows(ST, starts, network, P_rows, index_of, node_index, n_flows: int) -> None:
    """The DCI switches' element (uno.net.dci): a row per element, a per-flow queue row per
    flow, the host -> datacenter map, and each port's element (-1: none)."""
    P_rows[:, P.dci] = -1
    ST[H.off_dci], ST[H.n_dci], ST[H.off_pfq] = starts.dci, len(network.dcis), starts.pfq
    ST[H.off_host_dc] = starts.host_dc
    ST[starts.host_dc : starts.host_dc + len(network.hosts)] = [h.dc for h in network.hosts]
    row_of = {}
    for i, el in enumerate(network.dcis):
        row_of[id(el)] = i
        db = starts.dci + i * D.size
        ST[db + D.node] = node_index[id(el.switch)]
        ST[db + D.dc] = el.dc
        ST[db + D.near] = int(el.near_source)
        ST[db + D.gap] = el.notice_gap_ps
        ST[db + D.notice_bytes] = el.notice_bytes
        ST[db + D.per_flow] = int(el.per_flow_queues)
        ST[db + D.init_rate] = el.initial_rate_bps if el.initial_rate_bps is not None else -1
        ST[db + D.buffer] = el.buffer_bytes
    if network.dcis:
        Q_rows = ST[starts.pfq : starts.pfq + n_flows * Q.size].reshape(n_flows, Q.size)
        for col in (Q.head, Q.tail, Q.credit, Q.dci, Q.last_notice):
            Q_rows[:, col] = -1
    for tap in network.dci_taps.values():
        P_rows[index_of[id(tap.port)], P.dci] = row_of[id(tap.dci)]


def first_heap_cap(n_ports: int, n_ingresses: int) -> int:
    """The kernel's event heap as it starts, in events: a lazy port has at most one delivery
    pending per lane, an event port one end of serialisation and one delivery; PFC signals in
    flight have no fixed bound, so the heap doubles when short of room (``RUN_HEAP``)."""
    return 3 * n_ports + 4 * n_ingresses + 1 + HEAP_ROOM


def build_state(network, flows: list, kernel_receivers: bool, int_stampers: dict | None,
                ingresses: list, kernel_senders: bool) -> KernelState:  # fmt: skip
    """The kernel's arrays for ``network`` and ``flows`` (see
    :class:`uno.net.compiled.dataplane.CompiledDataplane` for the options)."""
    ports = network.ports
    n_ports, n_hosts, n_nodes = len(ports), len(network.hosts), len(network.node_objs)
    index_of = {id(p): i for i, p in enumerate(ports)}
    node_index = {id(obj): i for i, obj in enumerate(network.node_objs)}
    fwd = forwarding(network)
    heap_cap = first_heap_cap(n_ports, len(ingresses))
    # (a flow whose receiver computes for its law, MLCC's credit loop, keeps it in Python)
    kernel_rx = [f is not None and kernel_receivers and f.coding is None
                 and f.receiver.credit_cc is None for f in flows]  # fmt: skip
    words = got_words(flows, kernel_rx)
    faults = [fault_rows(port) for port in ports]
    int_max, int_rule, int_salt = int_setting(int_stampers)
    ktx, note = sender_plan(flows, kernel_rx, kernel_senders)
    arrays = [sender_array_ints(f.n_packets) if k else 0 for f, k in zip(flows, ktx, strict=True)]
    # engine.record_rtts: the senders count RTT samples (Python's in an array they share)
    first = next((f for f in flows if f is not None), None)
    rtt_bins = RTT_BINS if first is not None and first.sender.rtt_counts is not None else 0
    sizes = _section_sizes(n_ports, n_hosts, n_nodes, fwd, heap_cap, len(flows), words, faults,
                           len(ingresses), arrays, rtt_bins, len(network.dcis))  # fmt: skip
    starts, total = section_starts(sizes)
    ST = np.zeros(total, dtype=np.int64)
    _header(ST, starts, fwd, n_ports, n_hosts, heap_cap, len(ingresses))
    fill_receivers(ST[starts.flows : starts.host_nic].reshape(len(flows), R.size), flows,
                   kernel_rx, starts.got, words)  # fmt: skip
    F, frow0 = _float_rows(ST, flows, ktx, faults, n_ports, int_max)
    rng_words: list[int] = []
    P_rows = ST[starts.ports : starts.fib_off].reshape(n_ports, P.size)
    faulty = fill_ports(ST, F, P_rows, ports, node_index, faults, starts.faults, rng_words)
    I_rows = ST[starts.ingress : starts.senders].reshape(len(ingresses), ING.size)
    fill_ingress(I_rows, P_rows, ingresses, index_of)
    if any(ktx):
        S_rows = ST[starts.senders : starts.nics].reshape(len(flows), S.size)
        fill_senders(S_rows, F, flows, ktx, starts.sender_arrays, arrays, frow0,
                     int(ST[H.law_state_width]), rng_words)  # fmt: skip
    U = np.zeros(len(rng_words) + n_nodes, dtype=np.uint64)
    U[: len(rng_words)] = np.array(rng_words, dtype=np.uint64)
    U[len(rng_words) :] = fwd.salts
    ST[H.off_node_salt] = len(rng_words)
    ST[H.qcn_bytes] = max((p.qcn_message_bytes for p in ports if p.qcn is not None), default=0)
    ST[H.trim_bytes] = max((p.trim_bytes for p in ports), default=0)
    ST[H.off_rtt], ST[H.rtt_bins] = starts.rtts, rtt_bins
    if int_max:
        ST[H.int_max], ST[H.int_rule], ST[H.int_salt] = int_max, int_rule, int_salt
        for i, port in enumerate(ports):
            if port.name in int_stampers:
                P_rows[i, P.flags] |= FL.int
    _nics(ST, starts, ports, flows, ktx)
    _dci_rows(ST, starts, network, P_rows, index_of, node_index, len(flows))
    return KernelState(ST, F, U, starts, faulty, kernel_rx, ktx, note, int_max)
