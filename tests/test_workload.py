"""Workload generators are pure functions of config, host facts and the seed."""

from __future__ import annotations

import numpy as np
from omegaconf import OmegaConf

from uno.config.schema import IncastWorkload, PermutationWorkload
from uno.workload.hosts import HostFacts
from uno.workload.incast import incast_flows
from uno.workload.permutation import permutation_flows

# two DCs of 16 hosts, 4 hosts per rack
HOSTS = HostFacts(tuple([0] * 16 + [1] * 16), tuple(h // 4 for h in range(32)))


def cfg(schema, **kw):
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), kw))


def test_incast_picks_intra_and_inter_senders():
    specs = incast_flows(
        cfg(IncastWorkload, receiver=3, n_intra=5, n_inter=6), HOSTS, np.random.default_rng(0)
    )
    srcs = [s.src for s in specs]
    assert len(set(srcs)) == 11 and 3 not in srcs
    assert sum(HOSTS.dc[s] == 0 for s in srcs) == 5
    assert sum(HOSTS.dc[s] == 1 for s in srcs) == 6
    assert all(s.dst == 3 for s in specs)


def test_incast_spread_uses_distinct_racks_first():
    specs = incast_flows(
        cfg(IncastWorkload, receiver=0, n_intra=3, n_inter=0, placement="spread"),
        HOSTS,
        np.random.default_rng(0),
    )
    assert [HOSTS.rack[s.src] for s in specs] == [1, 2, 3]


def test_incast_stagger():
    specs = incast_flows(
        cfg(IncastWorkload, n_intra=3, n_inter=0, stagger_us=2.0), HOSTS, np.random.default_rng(0)
    )
    assert [s.start_ps for s in specs] == [0, 2_000_000, 4_000_000]


def test_permutation_is_a_derangement_and_seeded():
    a = permutation_flows(cfg(PermutationWorkload), HOSTS, np.random.default_rng(1))
    b = permutation_flows(cfg(PermutationWorkload), HOSTS, np.random.default_rng(1))
    c = permutation_flows(cfg(PermutationWorkload), HOSTS, np.random.default_rng(2))
    assert sorted(s.dst for s in a) == list(range(32))
    assert all(s.src != s.dst for s in a)
    assert [s.dst for s in a] == [s.dst for s in b] != [s.dst for s in c]


def test_permutation_scopes():
    intra = permutation_flows(
        cfg(PermutationWorkload, scope="intra"), HOSTS, np.random.default_rng(0)
    )
    inter = permutation_flows(
        cfg(PermutationWorkload, scope="inter"), HOSTS, np.random.default_rng(0)
    )
    assert all(HOSTS.dc[s.src] == HOSTS.dc[s.dst] for s in intra)
    assert all(HOSTS.dc[s.src] != HOSTS.dc[s.dst] for s in inter)
    assert sorted(s.dst for s in inter) == list(range(32))
