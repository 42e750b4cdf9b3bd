"""Background incast plus small RPC messages (Uno paper §3.2, Fig. 4): long-lived senders
towards one receiver, and ``rpc_count`` RPCs to the same receiver from hosts in its datacenter,
sizes drawn from an empirical CDF (the paper names Google's RPC distribution), starting at
``rpc_start_us`` and then either every ``rpc_interval_us`` or as a Poisson process of that mean
gap."""

from __future__ import annotations

import numpy as np

from uno.config.parts import declare_choices
from uno.core.errors import ConfigError
from uno.core.units import us_to_ps
from uno.transport.flow import FlowSpec
from uno.workload.cdf import load_cdf
from uno.workload.hosts import HostFacts
from uno.workload.incast import incast_flows, incast_receiver

RPC_SOURCES = ("same_rack", "same_dc", "listed")
ARRIVALS = ("periodic", "poisson")
declare_choices("workload.rpc_sources", RPC_SOURCES)
declare_choices("workload.rpc_arrivals", ARRIVALS)


def rpc_incast_flows(cfg, hosts: HostFacts, rng: np.random.Generator) -> list[FlowSpec]:
    background = incast_flows(cfg, hosts, rng)
    r = incast_receiver(cfg, hosts)
    busy = {s.src for s in background}
    if cfg.rpc_sources != "listed" and cfg.rpc_hosts:
        raise ConfigError("workload.rpc_hosts", "is only used with workload.rpc_sources=listed")
    if cfg.rpc_sources == "listed":
        for i, h in enumerate(cfg.rpc_hosts):
            if not 0 <= h < hosts.n_hosts or h == r:
                raise ConfigError(
                    f"workload.rpc_hosts[{i}]",
                    f"host {h} cannot send RPCs; hosts are 0..{hosts.n_hosts - 1}, receiver {r}",
                )
        candidates = [int(h) for h in cfg.rpc_hosts]
    elif cfg.rpc_sources == "same_rack":
        candidates = [h for h in range(hosts.n_hosts) if hosts.rack[h] == hosts.rack[r] and h != r]
    else:
        candidates = [h for h in hosts.in_dc(hosts.dc[r]) if h != r]
    if cfg.rpc_sources != "listed":
        candidates = [h for h in candidates if h not in busy] or candidates
    if cfg.rpc_count and not candidates:
        raise ConfigError(
            "workload.rpc_sources", f"no host other than the receiver in its {cfg.rpc_sources}"
        )
    cdf = load_cdf(cfg.rpc_cdf, field="workload.rpc_cdf")
    n = cfg.rpc_count
    sizes = cdf.sample(rng, n)
    if cfg.rpc_max_bytes is not None:
        sizes = np.minimum(sizes, cfg.rpc_max_bytes)
    if cfg.rpc_arrivals == "periodic":
        gaps_us = np.full(n, cfg.rpc_interval_us)
    else:
        gaps_us = rng.exponential(cfg.rpc_interval_us, size=n)
    starts_us = cfg.rpc_start_us + np.concatenate([[0.0], np.cumsum(gaps_us[:-1])]) if n else []
    srcs = rng.choice(candidates, size=n) if n else []
    specs = list(background)
    base = len(specs)
    for i in range(n):
        specs.append(
            FlowSpec(base + i, int(srcs[i]), r, int(sizes[i]), us_to_ps(float(starts_us[i])), "rpc")
        )
    return specs
