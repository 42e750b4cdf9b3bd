"""What the flow-level engines can model, checked before a run: the fluid engine's controllers
(the laws whose signals it computes), and :func:`check_fluid_support`, which refuses what the
fluid, hybrid and max-min engines cannot model with one line naming the setting; and
:func:`step_intra_rtt`, the first step a run's mechanisms allow."""

from __future__ import annotations

import math

import numpy as np

from uno.cc.registry import KIND, LAW_BY_NAME
from uno.core.errors import ConfigError
from uno.fluid import columns as C
from uno.fluid.balance import MAX_SUBFLOWS
from uno.fluid.routes import SINGLE_PATH_LB, SPLIT_LB, SUBFLOW_LB

#: the signals a law may read (uno.cc.law.Law.signals) that the fluid engine computes
FLUID_SIGNALS = (
    "ecn", "rtt", "rtt_min", "delivery_rate", "queueing", "int", "cnp", "timers", "qcn", "dci",
)  # fmt: skip
#: controllers the fluid engine runs: the laws whose signals it computes
FLUID_CC = {name: C.CC_LAW + KIND[name] for name, law in LAW_BY_NAME.items()
            if set(law.signals) <= set(FLUID_SIGNALS)}  # fmt: skip


def check_fluid_support(cfg, engine: str = "fluid", with_cc: bool = True, plans=None) -> None:
    """Refuse, naming the setting, what the flow-level engines cannot model (``with_cc``: the
    engine runs the congestion controllers; ``plans``: the flows it runs, by default all of
    them, whose controllers' packet-only settings are refused: UnoCC's epoch resume, which the
    hybrid's packet flows keep)."""
    where = f"engine.kind={engine}"
    for cls_field in ("algo", "intra", "inter") if with_cc else ():
        name = getattr(cfg.cc, cls_field)
        if name in LAW_BY_NAME and name not in FLUID_CC:
            lacks = sorted(set(LAW_BY_NAME[name].signals) - set(FLUID_SIGNALS))
            raise ConfigError(
                f"cc.{cls_field}",
                f"{where} cannot run {name!r}: it reads {', '.join(lacks)}, which the fluid "
                "engine does not compute; use engine.kind=packet",
            )
        if name is not None and name not in FLUID_CC:
            raise ConfigError(
                f"cc.{cls_field}",
                f"{where} has fluid laws for {sorted(FLUID_CC)}, not {name!r}; use engine.kind=packet",
            )
    classes = {cfg.cc.algo, cfg.cc.intra, cfg.cc.inter} if with_cc else set()
    # (the controllers of the flows it runs)
    used = classes if plans is None or not with_cc else {p.cc_name for p in plans}
    as_packets = {
        "hybrid": "; run those flows as packets (engine.hybrid_packet_tags)",
        "fluid": "; engine.kind=hybrid can run those flows as packets",
    }.get(engine, "")
    if "uno" in used and cfg.cc.uno.qa_epoch_resume != "ack":
        raise ConfigError(
            "cc.uno.qa_epoch_resume",
            f"{where} has no packet sends to count the window after a Quick Adapt by in its "
            f"fluid flows{as_packets}",
        )
    routed = SINGLE_PATH_LB + SPLIT_LB + SUBFLOW_LB
    if cfg.lb.algo not in routed:
        raise ConfigError(
            "lb.algo",
            f"{where} routes {list(routed)}, not {cfg.lb.algo!r} "
            "(it moves traffic away from congested or lossy paths; no fluid model of that yet)",
        )
    # (max-min runs no congestion control and its rates never exceed a link's capacity: no
    # queue builds, so nothing is lost, trimmed or noticed, and the balancers' reactions to
    # losses and the switches' congestion notices have nothing to act on)
    if cfg.lb.algo == "unolb":
        u = cfg.lb.unolb
        if u.subflows > MAX_SUBFLOWS:
            raise ConfigError("lb.unolb.subflows", f"{where} keeps at most {MAX_SUBFLOWS}")
    if engine == "maxmin":  # (its rates never see a loss: a failed link's flows never finish)
        if cfg.faults.link_failures:
            raise ConfigError("faults.link_failures", f"{where} does not model link failures")
        if cfg.faults.losses:
            raise ConfigError("faults.losses", f"{where} does not model random packet losses")
    if cfg.switch.trimming.enabled and with_cc:
        if cfg.ec.kind != "none":
            raise ConfigError(
                "switch.trimming.enabled",
                f"{where} trims uncoded flows only (ec={cfg.ec.kind}: a coded flow's losses "
                "are found by its blocks)",
            )
    if cfg.engine.record_rtts and not with_cc:
        raise ConfigError("engine.record_rtts", f"{where} has no RTT samples to count (no queues)")
    # (max-min's rates never exceed a link's capacity: no ingress queue builds, and PFC, which
    # acts on queues, never pauses; its summary counts none)
    if engine == "hybrid" and cfg.switch.pfc.enabled and cfg.lb.algo in SUBFLOW_LB:
        raise ConfigError(
            "switch.pfc.enabled",
            f"{where} does not pause links for the fluid subflows of UnoLB, PLB or REPS (pauses "
            "the packets' ingress queues share with moving subflows stay on); engine.kind=fluid "
            "and engine.kind=packet do",
        )

    # (every class's: the hybrid's packets read their INT records at the fluid links too)
    reads_int = any(law_reads_int(name) for name in classes)
    if reads_int and cfg.switch.int_telemetry.enabled:
        if engine not in ("fluid", "hybrid"):
            raise ConfigError(
                "switch.int_telemetry.enabled",
                f"{where} has no INT records for the packets that cross its fluid links",
            )
        if cfg.lb.algo not in SINGLE_PATH_LB:
            raise ConfigError(
                "lb.algo",
                f"{where} computes INT records on single paths {list(SINGLE_PATH_LB)}, not "
                f"{cfg.lb.algo!r} (a split flow's packets carry the records of the path each took)",
            )
    if cfg.ec.kind != "none" and with_cc:  # (max-min has no losses to find)
        check_coded_loss_detection(cfg.transport, cfg.ec.scope, where)
    if cfg.engine.port_model != "auto":
        raise ConfigError(
            "engine.port_model", f"{where} has no packet ports; leave port_model at 'auto'"
        )


def check_coded_loss_detection(transport, scope: str, where: str) -> None:
    """Refuse fast retransmit for erasure-coded flows (the classes ``scope`` codes): the fluid
    engine finds a coded flow's losses by its blocks only (a block that cannot decode, at the
    receiver's timer), where the packet sender also reveals them by the duplicate-ACK rule."""
    for cls in ("intra", "inter") if scope == "all" else ("inter",):
        own = getattr(transport, cls).dupack_threshold
        field = "transport.dupack_threshold" if own is None else f"transport.{cls}.dupack_threshold"
        if (transport.dupack_threshold if own is None else own) > 0:
            raise ConfigError(
                field,
                f"{where} finds a coded flow's losses by its blocks only, not by fast "
                f"retransmit; set it to 0 for the coded {cls}-DC flows, or use engine.kind=packet",
            )


def law_reads_int(cc_name: str) -> bool:
    """Whether the congestion-control law ``cc_name`` reads INT records."""
    return cc_name in LAW_BY_NAME and "int" in LAW_BY_NAME[cc_name].signals


def law_batches_ps(
    plans, cp, base_rtt_ps, dt_ps: float, step_intra_rtt: float, batch_rtt: float, may_split
) -> np.ndarray:
    """Each flow's longest batch of ACKs its law hears at once (ps, ``FS_BATCH_PS``;
    :func:`uno.fluid.control.law_batch` splits a longer step's): the longest step (``dt_ps``
    times a power of two) within its law's period (:attr:`uno.cc.law.Law.period_ps`: its base
    RTT where the law names none; one intra-DC RTT for a flow without a law), and at most
    ``batch_rtt`` of its base RTT (``engine.fluid_batch_rtt``; 0: no such bound) where
    ``may_split``: not a law that reads INT, whose batch carries one packet's records, which
    each piece would hear again. ``cp``: the flows' law constants (None: no law runs, as in
    the max-min engine); ``base_rtt_ps``: their base RTTs."""
    batch = np.full(len(plans), dt_ps * pow2_at_most(1.0 / step_intra_rtt))
    for f, plan in enumerate(plans):
        law = None if cp is None else LAW_BY_NAME.get(plan.cc_name)
        if law is not None:
            period = base_rtt_ps[f] if law.period_ps is None else law.period_ps(cp[f])
            batch[f] = dt_ps * pow2_at_most(period / dt_ps)
    if batch_rtt > 0.0:
        batch[may_split] = np.minimum(batch[may_split], batch_rtt * base_rtt_ps[may_split])
    return batch


def pow2_at_most(x: float) -> int:
    """The largest power of two at most ``x`` (at least 1)."""
    return 1 << max(0, int(math.floor(math.log2(x) + 1e-9)))


def step_intra_rtt(cfg, flows) -> float:
    """A run's first step, as a fraction of the intra-DC base RTT: ``engine.fluid_step_intra_rtt``,
    at most ``engine.fluid_step_fine_intra_rtt`` (when set) where a flow's law reads INT or PFC
    pauses links. An INT law reacts to each ACK's records of the queues and a pause acts on the
    next step, both of which a coarser step coarsens (at half an intra-DC RTT, Gear's incast and
    ``pfc_spreading``: experiments/fluid_validation)."""
    engine = cfg.engine
    step = engine.fluid_step_intra_rtt
    fine = engine.fluid_step_fine_intra_rtt
    if fine > 0.0 and (
        cfg.switch.pfc.enabled or any(law_reads_int(p.cc_name) for p in flows)
    ):  # fmt: skip
        step = min(step, fine)
    return step


#: the hybrid's settled step (engine.fluid_step_settled_rtt null), as a fraction of a settled
#: flow's base RTT
HYBRID_SETTLED_RTT = 0.5


def settled_step_rtt(engine) -> float:
    """A run's settled step as a fraction of a settled flow's base RTT (0: off):
    ``engine.fluid_step_settled_rtt``, its null the kind's. The hybrid's packet flows carry the
    study and its fluid flows are their background, so its steps follow the flows as they
    settle: its long fluid flows then cost two steps per intra-DC RTT, not eight. At a whole
    RTT a law's per-ACK rules hear a window's ACKs at once (SMaRTT's Wait-to-Decrease, which
    averages their marks, then cuts too seldom: experiments/fluid_validation). The fluid and
    the max-min engines: off."""
    value = engine.fluid_step_settled_rtt
    if value is None:
        return HYBRID_SETTLED_RTT if engine.kind == "hybrid" else 0.0
    return value
