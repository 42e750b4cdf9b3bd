"""The hybrid's packets on the compiled data plane (:mod:`uno.fluid.hybrid`): the kernels that
couple the fluid model with the data plane's ports, and :func:`hybrid_steps`, which runs the
kernel's packet events and the fluid steps in turn inside one call, as the event engine would
with the fluid step a Python event (:meth:`uno.core.engine.Engine.run_until`), while nothing in
Python is due: the steps cost no call from Python each.

``ST``, ``F``, ``U``, ``PK`` are the data plane's arrays (:mod:`uno.net.compiled.layout`);
``ls`` the fluid links (:mod:`uno.fluid.columns`), whose rows are the ports' routing edges.
Times in ps, sizes in bytes."""

from __future__ import annotations

from numba import njit

from uno.core.layout import layout
from uno.fluid.columns import (
    CT,
    LS_ARR,
    LS_LISTED,
    LS_LOSS,
    LS_NIC_SENDERS,
    LS_PH,
    LS_PKT_LOSS,
    LS_Q,
    LS_QF,
    LS_TX_AT,
    LS_TX_END,
    LS_TXF,
    LS_TXF_BEFORE,
)
from uno.fluid.cycles import TALLY, cycles, tick
from uno.fluid.hybrid_pfc import PUSHES_PER_QUEUE, fluid_in_queues, pause_shares, step_signals
from uno.fluid.kernels import advance
from uno.fluid.links import fold_packet_bytes
from uno.fluid.sampling import SK, Samples, has_room, take_sample
from uno.net.compiled.events import kernel_top
from uno.net.compiled.layout import HEAP_ROOM, PF, RUN_HEAP, RUN_NONE, H, N, P
from uno.net.compiled.loop import run
from uno.net.compiled.recording import sample_fits as packet_sample_fits
from uno.net.compiled.recording import take_kernel_sample
from uno.net.shared_link import packet_loss

#: why :func:`hybrid_steps` returned: the next step comes after Python's next event (push the
#: step's event, keyed as returned); the kernel stopped for Python before the next step (push
#: it, then take the kernel's result as from ``run``); a step is done and Python has its part
#: in what follows (flows finished, a sample due, the fluid model idle, or enough steps for one
#: call)
DRIVE_PYTHON_FIRST, DRIVE_KERNEL_STOP, DRIVE_STEP_DONE = 0, 1, 2
#: the recorder's next sample, which :func:`hybrid_steps` takes where its event comes (int64):
#: whether it does, the event's time (ps) and engine id, the interval (ps), whether the
#: fluid model is sampled with it
SC = layout("SampleClock", ("on", "t_ps", "eid", "interval_ps", "fluid"))


@njit(cache=True)
def take_touched(ST, accounted, py_waiting, links, nbytes, waiting) -> int:
    """The ports that took a packet since the last call, in the order of their first
    (``links[:n]``, returns n), the bytes each accepted (``nbytes``), and at a host's NIC
    whether a sender waits for it (``waiting``: 1, 0; -1 a switch port): one the kernel
    schedules (its FIFO) or a Python sender (``py_waiting[host]`` > 0). A new epoch starts."""
    n = ST[H.sh_touched]
    at = ST[H.off_touched]
    prow = ST[H.off_ports]
    nics = ST[H.off_nics]
    for i in range(n):
        p = ST[at + i]
        pb = prow + p * P.size
        taken = ST[pb + P.enq_bytes]
        links[i] = p
        nbytes[i] = float(taken - accounted[p])
        accounted[p] = taken
        host = ST[pb + P.host]
        if host < 0:
            waiting[i] = -1
        else:
            waiting[i] = 1 if ST[nics + host * N.size + N.head] >= 0 or py_waiting[host] > 0 else 0
    ST[H.sh_touched] = 0
    ST[H.sh_epoch] += 1
    return n


@njit(cache=True, inline="always")
def copy_link_row(F, ls, p, link) -> None:
    """Link ``link``'s state, which port ``p`` reads (its own link's, or the group's that
    link stands for: :mod:`uno.fluid.folding`), into the port's floats; the fluid flows' bytes
    sent in the link's latest step (kept where the packets write INT records,
    ``INTS.keep_sent``) are replayed over a step as long after it."""
    F[p, PF.sh_fluid_q] = ls[link, LS_QF]
    F[p, PF.sh_link_q] = ls[link, LS_Q]
    F[p, PF.sh_rate] = ls[link, LS_ARR]
    F[p, PF.sh_phantom] = ls[link, LS_PH]
    F[p, PF.sh_loss] = packet_loss(ls[link, LS_LOSS], ls[link, LS_PKT_LOSS])
    F[p, PF.sh_senders] = ls[link, LS_NIC_SENDERS]
    F[p, PF.sh_txf0] = ls[link, LS_TXF_BEFORE]
    F[p, PF.sh_txf1] = ls[link, LS_TXF]
    F[p, PF.sh_txf_at] = ls[link, LS_TX_END]
    F[p, PF.sh_txf_span] = ls[link, LS_TX_END] - ls[link, LS_TX_AT]


@njit(cache=True)
def copy_link_state(F, ls, n_ports, link_rep) -> None:
    """The fluid links' state the ports read, into their floats (the first ``n_ports`` rows of
    ``F``; the rows after them are not the ports')."""
    for p in range(n_ports):
        copy_link_row(F, ls, p, link_rep[p])


@njit(cache=True)
def copy_link_rows(F, ls, rows, n_rows, n_ports, m_ptr, m_port, skip_listed) -> None:
    """:func:`copy_link_state` for the links ``rows[:n_rows]``: to the ports each stands for
    (``m_port[m_ptr[link]:m_ptr[link + 1]]``: itself, or its folded group's links).
    ``skip_listed``: leave out the links on the busy list now (their copy comes from it)."""
    for i in range(n_rows):
        link = rows[i]
        if skip_listed and ls[link, LS_LISTED] != 0.0:
            continue
        for m in range(m_ptr[link], m_ptr[link + 1]):
            p = m_port[m]
            if p < n_ports:
                copy_link_row(F, ls, p, link)


# (without Numba's runtime, as advance: with it, each call counted a reference to each of the
# hundred-odd arrays of ``fluid`` on entry and again on return, every step)
@njit(cache=True, _nrt=False)
def fluid_step(ST, F, k, dt_ps, coupling, fluid, eid) -> None:
    """Fluid step ``k``: the packets' bytes of the last step in (:func:`take_touched`,
    :func:`uno.fluid.links.fold_packet_bytes`), the step (:func:`uno.fluid.kernels.advance`),
    its links' state out to the ports. Only a link on the busy list before or after the step
    can have changed (an idle link's state is that of :func:`uno.fluid.links.idle`, and a
    link that takes bytes joins the list), so only those rows are copied, each once
    (:func:`copy_link_rows`): the others' floats still hold their state. ``coupling``: (bytes
    each port had accepted, Python senders waiting per host, the hosts' NIC links, three
    scratch arrays of a row per port, one of a row per fluid link, per link whether a fluid
    flow can reach it, the link each stands for and the ports each stands for, CSR:
    :func:`uno.fluid.folding.members`, the PFC ingress queues the fluid flows share with the
    packets, :mod:`uno.fluid.hybrid_pfc`); ``fluid``: ``advance``'s groups after ``dt_ps``;
    ``eid``: the engine eid whose sub-eids the PFC signals the step sends take."""
    accounted, py_waiting, nic_links, links, nbytes, waiting, was_busy, reached = coupling[:8]
    link_rep, m_ptr, m_port, pfc_rows = coupling[8:]
    tally = fluid[6][8]  # (StepScratch's tally: uno.fluid.cycles)
    t = cycles()
    n = take_touched(ST, accounted, py_waiting, links, nbytes, waiting)
    ls, busy, counters = fluid[1][0], fluid[1][1], fluid[0][6]  # (Links' and Flows' fields)
    fold_packet_bytes(ls, busy, counters, links[:n], nbytes[:n], waiting[:n], nic_links, reached,
                      link_rep, dt_ps)  # fmt: skip
    n_was = int(counters[CT.busy])
    for i in range(n_was):  # (a slice assignment may allocate a copy)
        was_busy[i] = busy[i]
    pfc = fluid[1][2]
    if len(pfc_rows):
        pause_shares(ST, ls, pfc, fluid[1][6], pfc_rows, k, dt_ps)
    tick(tally, TALLY.packets_in, t)
    advance(k, k + 1, dt_ps, fluid[0], fluid[1], fluid[2], fluid[3], fluid[4], fluid[5], fluid[6],
            fluid[7])  # fmt: skip
    t = cycles()
    if len(pfc_rows):
        step_signals(ST, ls, pfc, pfc_rows, k, dt_ps, eid)
    n_ports = ST[H.n_ports]
    # those that left the list, then those on it
    copy_link_rows(F, ls, was_busy, n_was, n_ports, m_ptr, m_port, True)
    copy_link_rows(F, ls, busy, int(counters[CT.busy]), n_ports, m_ptr, m_port, False)
    tick(tally, TALLY.state_out, t)


@njit(cache=True)
def fluid_done(counters, n_flows, queues_hold_fluid) -> bool:
    """Whether the fluid model has nothing more to do: no fluid flow runs and none starts
    later. Its links then stay as the last flow left them (the steps move no byte:
    :func:`uno.fluid.kernels.advance`), and what they hold of the fluid flows, all of whose
    bytes were delivered, is their FIFO share of a queue the packets keep standing; the ports
    stop reading it (:meth:`uno.fluid.shared_ports.KernelLinks.retire`). While a PFC ingress
    queue still counts fluid bytes in its level (``queues_hold_fluid``,
    :func:`uno.fluid.hybrid_pfc.fluid_in_queues`: the fluid steps decide on its pauses) the
    model is done only once its links are empty as well."""
    if counters[CT.running] != 0 or counters[CT.next_start] < n_flows:
        return False
    return not queues_hold_fluid or counters[CT.busy] == 0


@njit(cache=True)
def heap_room(n_pfc_rows) -> int:
    """The free heap slots a step needs with ``n_pfc_rows`` shared PFC ingress queues: its
    signals and the room the kernel keeps for an event's pushes."""
    return HEAP_ROOM + PUSHES_PER_QUEUE * n_pfc_rows


@njit(cache=True)
def run_before(ST, F, U, PK, t, e, eid, tally):
    """The kernel's events keyed before (``t``, 1, ``e``), each call of ``run`` taking an
    engine id from ``eid`` on, as the engine's loop would before an entry so keyed; stops at
    a result for Python (host or ``RUN_*`` code other than ``RUN_NONE``). Returns (the next
    id, the calls, ``run``'s last result: host, slot, kind, ECN, time)."""
    calls = 0
    host, slot, kind, ecn, now = RUN_NONE, -1, 0, 0, 0
    while True:
        top_t, top_e = kernel_top(ST)
        if top_t > t or (top_t == t and top_e > e):
            break
        calls += 1
        c = cycles()
        host, slot, kind, ecn, now, top_t, top_e = run(ST, F, U, PK, t, 1, e, eid)
        tick(tally, TALLY.packet_events, c)
        eid += 1
        if host != RUN_NONE:
            break
    return eid, calls, host, slot, kind, ecn, now


@njit(cache=True)
def sample_fits(k, dt_ps, counters, sampling) -> bool:
    """Whether the recorder's next sample (:data:`SC`) fits its arrays and the fluid
    model's (taken when a step was done since the fluid's last sample: time ``k dt_ps``)."""
    clock, group, fsmp = sampling
    if not packet_sample_fits(group):
        return False
    if clock[SC.fluid] == 0 or float(int(round(k * dt_ps))) <= fsmp[1][SK.last_ps]:
        return True
    return has_room(int(counters[CT.running]), Samples(*fsmp))


@njit(cache=True)
def take_samples(ST, F, U, PK, k, dt_ps, eid, fluid, sampling) -> None:
    """The recorder's sample (:data:`SC`) at its time, as its event would take it: the
    packets' (:func:`uno.net.compiled.recording.take_kernel_sample`), the fluid flows' and
    links' at the end of the last step done (``k``; :func:`uno.fluid.sampling.take_sample`,
    none if no step was done since its last), and the next sample keyed with id ``eid``."""
    clock, group, fsmp = sampling
    take_kernel_sample(ST, F, U, PK, clock[SC.t_ps], group)
    now_ps = float(int(round(k * dt_ps)))
    if clock[SC.fluid] != 0 and now_ps > fsmp[1][SK.last_ps]:
        flows = fluid[0]
        take_sample(now_ps, flows[0], flows[1], fluid[1][0], flows[5], int(flows[6][CT.running]),
                    fsmp)  # fmt: skip
    clock[SC.eid] = eid
    clock[SC.t_ps] += clock[SC.interval_ps]


@njit(cache=True)
def hybrid_steps(ST, F, U, PK, k, due, dt_ps, eid, lim_t, lim_prio, lim_eid, max_steps,
                 finished, look_steps, coupling, fluid, sampling):  # fmt: skip
    """From fluid step ``k`` (due at round((k + 1) dt_ps)), run the kernel's events and the
    fluid steps in their order while they come before Python's next event, keyed (``lim_t``,
    ``lim_prio``, ``lim_eid``), handing out the engine's event ids from ``eid`` as the engine
    would: one to schedule each step (priority 1), one to each call of the kernel's ``run``
    and, with shared PFC ingress queues, one to each step's signals; a step for whose signals
    the heap has no room stops the call (``DRIVE_KERNEL_STOP``, ``RUN_HEAP``). ``due``: step
    ``k``'s own event is being handled (the engine ran every event before it), so it runs
    first, with no id of its own.
    Stops, besides, after a step in which flows finished (``finished``: the count before),
    which left the fluid model idle or done (:func:`fluid_done`), whose index is a multiple of
    ``look_steps`` (0: none; Python looks whether the step may grow), or the ``max_steps``-th
    (a call keeps the interpreter). ``sampling``: the recorder's next sample (:data:`SC`), its
    arrays (:meth:`uno.net.compiled.recording.KernelSamples.group`) and the fluid model's
    (:data:`uno.fluid.sampling.Samples`); with ``SC.on`` each sample keyed before a step is
    taken here, after the kernel's events before it (:func:`take_samples`), or, when its
    arrays have no room, left to Python (``DRIVE_PYTHON_FIRST``); else the samples are Python
    events, which take the fluid model's with them
    (:meth:`uno.fluid.hybrid.HybridSimulation._sample_fluid`).

    Returns (a ``DRIVE_*`` code, the next step, the next event id, the next step's time and
    event id (``DRIVE_PYTHON_FIRST``, ``DRIVE_KERNEL_STOP``), ``run``'s last result (host,
    slot, kind, ECN, time), the kernel's top (time, engine eid), the calls of ``run``)."""
    counters, tally = fluid[0][6], fluid[6][8]
    n_flows = fluid[0][0].shape[0]
    calls = 0
    steps = 0
    host, slot, kind, ecn, now = RUN_NONE, -1, 0, 0, 0
    while True:
        t_step = int(round((k + 1) * dt_ps))
        e_step = eid
        if due:
            due = False
            e_step = -1
        else:
            eid += 1
        if e_step >= 0 and (t_step > lim_t or (
            t_step == lim_t and (lim_prio < 1 or (lim_prio == 1 and e_step > lim_eid))
        )):  # fmt: skip
            top_t, top_e = kernel_top(ST)
            return (DRIVE_PYTHON_FIRST, k, eid, t_step, e_step, host, slot, kind, ecn, now, top_t,
                    top_e, calls)  # fmt: skip
        clock = sampling[0]
        # the recorder's samples before the step, each after the kernel's events before it
        while e_step >= 0 and clock[SC.on] != 0 and (clock[SC.t_ps] < t_step or (
            clock[SC.t_ps] == t_step and clock[SC.eid] < e_step
        )):  # fmt: skip
            if not sample_fits(k, dt_ps, counters, sampling):
                # (Python grows the arrays and takes it: its entry comes back with the step's)
                top_t, top_e = kernel_top(ST)
                return (DRIVE_PYTHON_FIRST, k, eid, t_step, e_step, host, slot, kind, ecn, now,
                        top_t, top_e, calls)  # fmt: skip
            eid, n, host, slot, kind, ecn, now = run_before(ST, F, U, PK, clock[SC.t_ps],
                                                            clock[SC.eid], eid, tally)  # fmt: skip
            calls += n
            if host != RUN_NONE:
                top_t, top_e = kernel_top(ST)
                return (DRIVE_KERNEL_STOP, k, eid, t_step, e_step, host, slot, kind, ecn, now,
                        top_t, top_e, calls)  # fmt: skip
            take_samples(ST, F, U, PK, k, dt_ps, eid, fluid, sampling)
            eid += 1
        if e_step >= 0:  # the kernel's events before the step's (both priority 1)
            eid, n, host, slot, kind, ecn, now = run_before(ST, F, U, PK, t_step, e_step, eid,
                                                            tally)  # fmt: skip
            calls += n
            if host != RUN_NONE:
                top_t, top_e = kernel_top(ST)
                return (DRIVE_KERNEL_STOP, k, eid, t_step, e_step, host, slot, kind, ecn, now,
                        top_t, top_e, calls)  # fmt: skip
        pfc_rows = coupling[11]
        if len(pfc_rows):
            if e_step >= 0 and ST[H.heap_cap] - ST[H.heap_n] < heap_room(len(pfc_rows)):
                # (Python grows the heap and pushes the step's event)
                top_t, top_e = kernel_top(ST)
                return (DRIVE_KERNEL_STOP, k, eid, t_step, e_step, RUN_HEAP, -1, 0, 0, now,
                        top_t, top_e, calls)  # fmt: skip
            fluid_step(ST, F, k, dt_ps, coupling, fluid, eid)
            eid += 1
        else:
            fluid_step(ST, F, k, dt_ps, coupling, fluid, -1)
        k += 1
        steps += 1
        # (the shared queues are looked at only once no fluid flow runs: not every step)
        idle = counters[CT.running] == 0 and (counters[CT.busy] == 0 or fluid_done(
            counters, n_flows, len(pfc_rows) > 0 and fluid_in_queues(ST, fluid[1][2], pfc_rows)
        ))  # fmt: skip
        look = look_steps > 0 and k % look_steps == 0
        if counters[CT.finished] != finished or idle or look or steps >= max_steps:
            top_t, top_e = kernel_top(ST)
            return (DRIVE_STEP_DONE, k, eid, t_step, e_step, host, slot, kind, ecn, now, top_t,
                    top_e, calls)  # fmt: skip
