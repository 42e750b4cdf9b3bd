"""Permutation traffic: every host sends one flow and receives one flow."""

from __future__ import annotations

import numpy as np

from uno.config.parts import declare_choices
from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.hosts import HostFacts

SCOPES = ("all", "intra", "inter")
declare_choices("workload.scope", SCOPES)


def _derangement(items: list[int], rng: np.random.Generator) -> list[int]:
    """A uniformly random permutation of ``items`` with no fixed point (rejection sampling)."""
    if len(items) < 2:
        raise ValueError("a derangement needs at least two items")
    arr = np.asarray(items)
    while True:
        perm = rng.permutation(arr)
        if not np.any(perm == arr):
            return [int(x) for x in perm]


def permutation_flows(cfg, hosts: HostFacts, rng: np.random.Generator) -> list[FlowSpec]:
    n = hosts.n_hosts
    dst = [-1] * n
    if cfg.scope == "all":
        for src, d in zip(range(n), _derangement(list(range(n)), rng), strict=True):
            dst[src] = d
    elif cfg.scope == "intra":
        for dc in sorted(set(hosts.dc)):
            members = hosts.in_dc(dc)
            for src, d in zip(members, _derangement(members, rng), strict=True):
                dst[src] = d
    else:
        dcs = sorted(set(hosts.dc))
        if len(dcs) != 2 or len(hosts.in_dc(dcs[0])) != len(hosts.in_dc(dcs[1])):
            raise ConfigError(
                "workload.scope", "'inter' needs exactly two datacenters of equal size"
            )
        a, b = hosts.in_dc(dcs[0]), hosts.in_dc(dcs[1])
        for src, d in zip(a, rng.permutation(b), strict=True):
            dst[src] = int(d)
        for src, d in zip(b, rng.permutation(a), strict=True):
            dst[src] = int(d)
    start = us_to_ps(cfg.start_us)
    return [FlowSpec(i, i, dst[i], int(cfg.size_bytes), start) for i in range(n)]
