"""Realistic mixed traffic (Uno paper §5.2.2): Poisson flow arrivals, sources and destinations
uniform at random, a share of intra-DC flows with sizes from one empirical CDF and inter-DC flows
with sizes from another (the paper: web search inside the DC, Alibaba WAN across, 4:1).

Offered load (the definition used throughout): the bytes the flows carry per second, divided by
the hosts' total access capacity (the sum of every host's link rate). For a target load L the
arrivals form one Poisson process of rate

    lambda = L x sum(host rates) / (8 x E[size]),  E[size] = f x E[intra size] + (1 - f) x E[inter size]

(f = ``intra_fraction``, by flow count; E[.] the means of the piecewise-linear CDFs), which is the
same as every host sending at L of its link rate on average. With ``load_of: wan`` the load is
the WAN's instead: the inter-DC flows carry L of the WAN links' capacity (both directions),
lambda = L x sum(WAN link rates) / (8 x (1 - f) x E[inter size]), and the intra-DC flows come
with them in the share f — for topologies whose WAN is far narrower than the hosts' access
capacity (Gear's evaluation sets "the average link loads to 30%" on such a topology). Each flow is intra-DC with
probability f; its source is uniform over all hosts and its destination uniform over the other
hosts of the source's datacenter (intra) or over the hosts of the other datacenters (inter).
With ``inter_load`` the two classes have loads of their own (``load`` the intra-DC flows', as
MLCC §4.4's "50% intra-DC + 20% cross-DC"): the share by count follows from the loads and the
CDFs' means, and the total is their sum. The trace ends after ``n_flows`` flows or at
``duration_us``. Everything is drawn from the run's
``workload`` stream: same seed, same trace.

The Uno artifact generated its Fig. 10 traffic differently from the paper's text: intra-DC sizes
from Alibaba storage, inter-DC sizes from web search, 4:1 by count, per-source Poisson arrivals at
the load fraction of each 100 Gb/s NIC (the superposition is the pooled process above), and the
first 5000 flows: ``workload=mixed_artifact``. About 90 % of its bytes cross the border.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from uno.core.errors import ConfigError
from uno.core.units import PS_PER_US
from uno.transport.flow import FlowSpec
from uno.workload.cdf import load_cdf
from uno.workload.hosts import HostFacts


def arrival_rate_per_s(cfg, hosts: HostFacts, intra_mean: float, inter_mean: float) -> float:
    """Flows per second that offer ``cfg.load`` of the hosts' access capacity (``load_of:
    hosts``) or of the WAN links' capacity (``wan``, by the inter-DC flows)."""
    f = cfg.intra_fraction
    if cfg.load_of == "wan":
        if hosts.wan_bps <= 0:
            raise ConfigError("workload.load_of", "'wan' needs a topology with WAN links")
        if f >= 1.0:
            raise ConfigError("workload.load_of", "'wan' needs inter-DC flows (intra_fraction < 1)")
        return cfg.load * hosts.wan_bps / (8.0 * (1.0 - f) * inter_mean)
    mean_bytes = f * intra_mean + (1.0 - f) * inter_mean
    return cfg.load * sum(hosts.rate_bps) / (8.0 * mean_bytes)


def per_class_loads(cfg, intra_mean: float, inter_mean: float):
    """``cfg`` with ``load`` the total and ``intra_fraction`` the share by count that offer
    ``load`` of intra-DC and ``inter_load`` of inter-DC traffic (``inter_load`` set):
    f E_intra / ((1 - f) E_inter) = load / inter_load."""
    if getattr(cfg, "inter_load", None) is None:
        return cfg
    li, lx = cfg.load, cfg.inter_load
    f = li * inter_mean / (li * inter_mean + lx * intra_mean)
    return SimpleNamespace(**{**vars(cfg), "load": li + lx, "intra_fraction": f,
                              "inter_load": None})  # fmt: skip


def mixed_flows(cfg, hosts: HostFacts, rng: np.random.Generator) -> list[FlowSpec]:
    intra_cdf = load_cdf(cfg.intra_cdf, field="workload.intra_cdf")
    inter_cdf = load_cdf(cfg.inter_cdf, field="workload.inter_cdf")
    cfg = per_class_loads(cfg, intra_cdf.mean_bytes(), inter_cdf.mean_bytes())
    dcs = sorted(set(hosts.dc))
    if cfg.intra_fraction < 1.0 and len(dcs) < 2:
        raise ConfigError(
            "workload.intra_fraction", "the topology has one datacenter: inter-DC flows need two"
        )
    rate = arrival_rate_per_s(cfg, hosts, intra_cdf.mean_bytes(), inter_cdf.mean_bytes())
    if cfg.n_flows is not None:
        n = cfg.n_flows
        gaps_s = rng.exponential(1.0 / rate, size=n)
    else:
        expected = int(rate * cfg.duration_us / 1e6 * 1.2) + 16
        gaps_s = rng.exponential(1.0 / rate, size=expected)
        while gaps_s.sum() < cfg.duration_us / 1e6:  # rare: draw more
            gaps_s = np.concatenate([gaps_s, rng.exponential(1.0 / rate, size=expected)])
    starts_us = cfg.start_us + np.cumsum(gaps_s) * 1e6 - gaps_s[0] * 1e6  # first flow at start
    if cfg.n_flows is None:
        starts_us = starts_us[starts_us < cfg.start_us + cfg.duration_us]
        n = len(starts_us)
    intra = rng.random(n) < cfg.intra_fraction
    sizes = np.where(intra, intra_cdf.sample(rng, n), inter_cdf.sample(rng, n))
    n_hosts = hosts.n_hosts
    srcs = rng.integers(0, n_hosts, size=n)
    u = rng.random(n)
    # destinations, per source datacenter (vectorised; the same draws as one flow at a time)
    host_dc = np.asarray(hosts.dc)
    src_dc = host_dc[srcs]
    dsts = np.empty(n, dtype=np.int64)
    for dc in dcs:
        here = src_dc == dc
        sel = here & intra
        if sel.any():
            pool = np.asarray(hosts.in_dc(dc))
            if len(pool) < 2:
                raise ConfigError("workload.intra_fraction", "a datacenter has a single host")
            j = (u[sel] * (len(pool) - 1)).astype(np.int64)
            # uniform over the others: the j-th host of the pool below the source, else the next
            dsts[sel] = np.where(pool[j] < srcs[sel], pool[j], pool[j + 1])
        sel = here & ~intra
        if sel.any():
            pool = np.flatnonzero(host_dc != dc)
            dsts[sel] = pool[(u[sel] * len(pool)).astype(np.int64)]
    starts_ps = np.rint(starts_us * PS_PER_US).astype(np.int64).tolist()
    tags = np.where(intra, "intra", "inter").tolist()
    sizes = sizes.astype(np.int64).tolist()
    columns = zip(srcs.tolist(), dsts.tolist(), sizes, starts_ps, tags, strict=True)
    return [FlowSpec(i, *row) for i, row in enumerate(columns)]


def background_flows(cfg, hosts: HostFacts, rng: np.random.Generator, first_id: int) -> list:
    """The flows of ``background`` (``uno.config.schema.BackgroundTraffic``; none at load 0):
    :func:`mixed_flows` over ``duration_us``, numbered from ``first_id``, tagged
    ``background_intra`` / ``background_inter``."""
    if cfg.load <= 0:
        return []
    mixed = SimpleNamespace(
        load=cfg.load, load_of=cfg.load_of, n_flows=None, duration_us=cfg.duration_us,
        intra_fraction=cfg.intra_fraction, intra_cdf=cfg.intra_cdf, inter_cdf=cfg.inter_cdf,
        start_us=cfg.start_us,
    )  # fmt: skip
    try:
        flows = mixed_flows(mixed, hosts, rng)
    except ConfigError as err:  # (its fields are background's)
        raise ConfigError(err.field.replace("workload.", "background."), err.reason) from None
    return [replace(f, flow_id=first_id + f.flow_id, tag=f"background_{f.tag}") for f in flows]
