"""What the compiled data plane models: the settings it refuses before a run, and which flows'
senders its kernel can run (the others keep their Python senders beside it)."""

from __future__ import annotations

from uno.cc.adapter import LawControl
from uno.core.errors import ConfigError
from uno.lb.ecmp import Ecmp
from uno.lb.spray import Spray
from uno.net.compiled.faults import MAX_BLOCK_PACKETS

#: the most int64 the kernel senders' per-packet arrays may take (2 GiB; untouched pages cost no
#: memory, but the address space must exist): longer flows keep Python senders
SENDER_ARRAYS_MAX_INTS = 2**28


def check_compiled_support(cfg) -> None:
    """Refuse what the compiled data plane does not model, naming the setting."""
    if cfg.engine.kind not in ("packet", "hybrid"):
        raise ConfigError(
            "engine.dataplane",
            f"is for the packet and hybrid engines' packets; engine.kind={cfg.engine.kind} has "
            "no packet ports",
        )
    for i, loss in enumerate(cfg.faults.losses):
        if loss.block_probabilities and loss.block_packets > MAX_BLOCK_PACKETS:
            raise ConfigError(
                f"faults.losses[{i}].block_packets",
                f"is {loss.block_packets}; the compiled data plane keeps a block's lost "
                f"positions in 64 bits: at most {MAX_BLOCK_PACKETS} (engine.dataplane=python "
                "has no limit)",
            )


def kernel_sender_supported(sender) -> bool:
    """Whether the kernel can run ``sender`` (a :class:`uno.transport.sender.Sender`): its
    controller is a law (:mod:`uno.cc.law`: the kernel gives it everything it asks for, rate
    samples, send events, INT records), its load balancer is ECMP (one entropy per flow) or
    packet spraying (one per packet, from the flow's stream) and wants no feedback, and its
    flow has no erasure coding."""
    lb = sender.lb
    return (
        isinstance(sender.cc, LawControl)
        and type(lb) in (Ecmp, Spray)
        and sender.flow.coding is None
        and not lb.wants_ack_feedback
        and not lb.wants_loss_feedback
        and not sender.cc.hears_reports  # (a DCI switch's reports: MLCC)
    )


def fifo_cap(n_packets: int) -> int:
    """Entries of a kernel sender's RTO FIFO: its live entries are at most one per packet, so a
    full ring always frees half of itself by dropping its stale ones
    (:func:`uno.net.compiled.sender_rings.fifo_push`)."""
    return 2 * n_packets + 64


def sender_array_ints(n_packets: int) -> int:
    """ST ints a kernel sender's per-packet arrays take: acknowledged flags, outstanding send
    times, the RTO FIFO's pairs, the retransmission queue, the acknowledged send times."""
    return 4 * n_packets + 2 * fifo_cap(n_packets)


def sender_plan(flows: list, kernel_rx: list, wanted: bool) -> tuple[list[bool], str]:
    """Which flows' senders the kernel runs, and the note that says so (the summary's
    ``dataplane.senders``). A flow whose sender has no compiled form, or whose receiver is
    Python's (coding, a law's receiver part), keeps its Python sender: the slower callback path, on which the
    kernel hands it its ACKs and, at a NIC it shares with kernel senders, its turns. Some
    reasons keep every sender in Python."""
    none = [False] * len(flows)
    present = [f for f in flows if f is not None]  # (None: no flow of the packets has the id)
    if not present:
        return none, "in Python (no flows)"
    if not wanted:
        return none, "in Python (engine.compiled_senders=false)"
    plan = [k and kernel_sender_supported(f.sender) for f, k in zip(flows, kernel_rx, strict=True)]
    ints = sum(sender_array_ints(f.n_packets) for f, k in zip(flows, plan, strict=True) if k)
    if ints > SENDER_ARRAYS_MAX_INTS:
        return none, (
            f"in Python (the kernel senders' per-packet arrays would take {ints * 8 / 2**30:.1f} "
            f"GiB, over {SENDER_ARRAYS_MAX_INTS * 8 / 2**30:.0f} GiB: flows of up to "
            f"{max(f.n_packets for f in present):,} packets)"
        )
    n_py = sum(1 for f, ok in zip(flows, plan, strict=True) if f is not None and not ok)
    if n_py == 0:
        return plan, "in the kernel"
    why = []
    for flow, k, ok in zip(flows, kernel_rx, plan, strict=True):
        if ok or flow is None:
            continue
        if not k:
            reason = ("receiver in Python: coding" if flow.coding is not None
                      else f"receiver in Python: {flow.cc_name}'s credit loop")  # fmt: skip
        else:
            reason = f"{flow.cc_name} with {flow.lb_name}: no compiled form"
        if reason not in why:
            why.append(reason)
    where = (
        "in Python" if n_py == len(present)
        else f"in the kernel but {n_py} of {len(present)} in Python"
    )  # fmt: skip
    return plan, (
        f"{where} ({'; '.join(why)}; the kernel's: every congestion-control law with ECMP or "
        "spraying, no coding, no DCI reports)"
    )
