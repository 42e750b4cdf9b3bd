"""Incast: ``n_intra`` senders in the receiver's datacenter and ``n_inter`` in other
datacenters, each sending ``size_bytes`` to one receiver. Senders are drawn at random (seeded),
spread round-robin over racks, or listed (``placement=explicit``, ``senders``: e.g. the hosts of
a published traffic matrix). The receiver is ``receiver``, or (null) the topology's designated
receiver: on the dumbbell the first host behind its bottleneck, elsewhere host 0. On a topology
with a bottleneck, an incast none of whose flows crosses it is refused: the bottleneck's
settings would change nothing."""

from __future__ import annotations

import numpy as np

from uno.config.parts import declare_choices
from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts

PLACEMENTS = ("random", "spread", "explicit")
declare_choices("workload.placement", PLACEMENTS)


def _spread(candidates: list[int], hosts: HostFacts, avoid_rack: int, n: int) -> list[int]:
    """Take hosts round-robin over racks (other racks first), lowest host id first in a rack."""
    racks: dict[int, list[int]] = {}
    for h in candidates:
        racks.setdefault(hosts.rack[h], []).append(h)
    order = sorted(racks, key=lambda r: (r == avoid_rack, r))
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n:
        for r in order:
            if depth < len(racks[r]) and len(chosen) < n:
                chosen.append(racks[r][depth])
        depth += 1
    return chosen


def incast_receiver(cfg, hosts: HostFacts) -> int:
    """``workload.receiver``, or when it is null the topology's designated receiver."""
    r = hosts.receiver if cfg.receiver is None else cfg.receiver
    if not 0 <= r < hosts.n_hosts:
        raise ConfigError(
            "workload.receiver", f"host {r} does not exist; hosts are 0..{hosts.n_hosts - 1}"
        )
    return r


def incast_flows(cfg, hosts: HostFacts, rng: np.random.Generator) -> list[FlowSpec]:
    r = incast_receiver(cfg, hosts)
    dc = hosts.dc[r]
    intra = [h for h in hosts.in_dc(dc) if h != r]
    inter = [h for h in range(hosts.n_hosts) if hosts.dc[h] != dc]
    if cfg.n_intra > len(intra):
        raise ConfigError(
            "workload.n_intra",
            f"must be <= {len(intra)} (other hosts in the receiver's datacenter)",
        )
    if cfg.n_inter > len(inter):
        if not inter:
            raise ConfigError(
                "workload.n_inter", "the topology has a single datacenter; use n_inter=0"
            )
        raise ConfigError(
            "workload.n_inter", f"must be <= {len(inter)} (hosts in other datacenters)"
        )
    if cfg.placement != "explicit" and cfg.senders:
        raise ConfigError("workload.senders", "is only used with workload.placement=explicit")
    if cfg.placement == "explicit":
        chosen_intra, chosen_inter = _listed(cfg, hosts, r)
    elif cfg.placement == "random":
        chosen_intra = (
            [int(h) for h in rng.choice(intra, size=cfg.n_intra, replace=False)]
            if cfg.n_intra
            else []
        )
        chosen_inter = (
            [int(h) for h in rng.choice(inter, size=cfg.n_inter, replace=False)]
            if cfg.n_inter
            else []
        )
    else:
        chosen_intra = _spread(intra, hosts, hosts.rack[r], cfg.n_intra)
        chosen_inter = _spread(inter, hosts, -1, cfg.n_inter)
    senders = chosen_intra + chosen_inter
    _check_crosses_bottleneck(cfg, hosts, r, senders)
    start = us_to_ps(cfg.start_us)
    stagger = us_to_ps(cfg.stagger_us)
    specs = []
    for i, src in enumerate(senders):
        tag = "intra" if i < len(chosen_intra) else "inter"
        specs.append(FlowSpec(i, src, r, int(cfg.size_bytes), start + i * stagger, tag))
    return specs


def _check_crosses_bottleneck(cfg, hosts: HostFacts, r: int, senders: list[int]) -> None:
    """Refuse an incast whose senders all sit on the receiver's side of the topology's
    bottleneck (the receiver on the dumbbell's senders' side): no flow would cross it."""
    side = hosts.bottleneck_side
    if not side or not senders or any(side[s] != side[r] for s in senders):
        return
    beyond = [h for h in range(hosts.n_hosts) if side[h] != side[r]]
    field = "workload.senders" if cfg.placement == "explicit" else "workload.receiver"
    hint = f"; workload.receiver=null is host {hosts.receiver}" if cfg.receiver is not None else ""
    raise ConfigError(
        field,
        f"no flow crosses the topology's bottleneck: receiver {r} and senders {senders} are on "
        f"the same side of it (the other side: hosts {_span(beyond)}{hint})",
    )


def _span(hosts: list[int]) -> str:
    """``4..7`` for a run of consecutive host ids, else the list."""
    if hosts and hosts[-1] - hosts[0] == len(hosts) - 1:
        return f"{hosts[0]}..{hosts[-1]}" if len(hosts) > 1 else str(hosts[0])
    return str(hosts)


def _listed(cfg, hosts: HostFacts, r: int) -> tuple[list[int], list[int]]:
    """The ``senders`` list split by class; the counts must be n_intra and n_inter."""
    intra, inter = [], []
    for i, h in enumerate(cfg.senders):
        if not 0 <= h < hosts.n_hosts or h == r:
            raise ConfigError(
                f"workload.senders[{i}]",
                f"host {h} is not a sender; hosts are 0..{hosts.n_hosts - 1}, receiver {r}",
            )
        (intra if hosts.dc[h] == hosts.dc[r] else inter).append(int(h))
    if len(set(cfg.senders)) != len(cfg.senders):
        raise ConfigError("workload.senders", f"lists a host twice: {list(cfg.senders)}")
    if (len(intra), len(inter)) != (cfg.n_intra, cfg.n_inter):
        raise ConfigError(
            "workload.senders",
            f"holds {len(intra)} intra-DC and {len(inter)} inter-DC senders, but n_intra="
            f"{cfg.n_intra} and n_inter={cfg.n_inter}",
        )
    return intra, inter
