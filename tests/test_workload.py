"""Workload generators are pure functions of config, host facts and the seed."""

from __future__ import annotations

import numpy as np
import pytest
from omegaconf import OmegaConf

import uno
from uno.config.schema import IncastWorkload, PermutationWorkload
from uno.core.errors import ConfigError
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


# ---- listed senders, listed RPC hosts, htsim connection matrices ---------------------------
def _flows(overrides):
    from uno.api import to_run_config
    from uno.build import build_simulation

    return build_simulation(to_run_config(uno.compose(overrides))).flows


def test_explicit_incast_senders():
    listed = "workload.senders=[130,140,150,160,0,10,20,30]"
    flows = _flows(["workload.placement=explicit", listed, "workload.receiver=240"])
    assert [(f.src, f.cls) for f in flows][:5] == [
        (130, "intra"),
        (140, "intra"),
        (150, "intra"),
        (160, "intra"),
        (0, "inter"),
    ]
    with pytest.raises(ConfigError, match="n_intra=4"):
        _flows(["workload.placement=explicit", "workload.senders=[1,2]", "workload.receiver=240"])
    with pytest.raises(ConfigError) as err:
        _flows([listed])  # placement random: the list would be ignored
    assert err.value.field == "workload.senders"


def test_listed_rpc_hosts():
    flows = _flows(
        ["experiment=fig4_phantom", "workload.rpc_sources=listed", "workload.rpc_hosts=[241]"]
    )
    assert {f.src for f in flows if f.tag == "rpc"} == {241}
    with pytest.raises(ConfigError) as err:
        _flows(["experiment=fig4_phantom", "workload.rpc_hosts=[241]"])
    assert err.value.field == "workload.rpc_hosts"


def test_connection_matrix_replays_flows(tmp_path):
    cm = tmp_path / "x.cm"
    cm.write_text(
        "Nodes 32\nConnections 2\n130->240 id 1 start 0 size 1000000\n\n0->240 id 5 start 12.5 size 4096\n"
    )
    flows = _flows(["workload=trace", f"workload.path={cm}"])
    assert [(f.src, f.dst, f.size_bytes, f.start_ps, f.tag) for f in flows] == [
        (130, 240, 1_000_000, 0, "id1"),
        (0, 240, 4096, 12_500_000, "id5"),
    ]


def test_the_shipped_matrices_replay_by_name():
    """data/tms: the Uno artifact's Fig. 10-12 matrices, by name (4010 intra-DC and 990 inter-DC
    flows at 40% load, hosts 0-127 in one DC and 128-255 in the other, the last start 1,460 us)."""
    from uno.workload.trace import shipped_cms

    assert "websearchIntra_AlibabaInter_5000f_40l" in shipped_cms()
    flows = _flows(["workload=trace", "workload.path=websearchIntra_AlibabaInter_5000f_40l"])
    assert len(flows) == 5000
    inter = sum((f.src < 128) != (f.dst < 128) for f in flows)
    assert (inter, max(f.start_ps for f in flows)) == (990, 1460 * 1_000_000)
    with pytest.raises(ConfigError, match="shipped matrices"):
        _flows(["workload=trace", "workload.path=no_such_matrix"])


@pytest.mark.parametrize(
    "body,reason",
    [
        ("Nodes 2\nConnections 1\n0->1 id 1 start 0\n", ":3: expected"),
        ("Nodes 2\nConnections 2\n0->1 id 1 start 0 size 5\n", "'Connections 2' but 1"),
        ("Nodes 2\n0->1 id 1 start 0 size 5\n", "no 'Connections M'"),
        ("Connections 1\n0->1 id 1 start 0 size 0\n", ":2: size must be"),
        ("Connections 1\n3->3 id 1 start 0 size 5\n", ":2: source and destination"),
        ("Connections 1\n0->9999 id 1 start 0 size 5\n", "destination host 9999"),
    ],
)
def test_malformed_connection_matrix_is_refused_with_file_and_line(tmp_path, body, reason):
    cm = tmp_path / "bad.cm"
    cm.write_text(body)
    with pytest.raises(ConfigError) as err:
        _flows(["workload=trace", f"workload.path={cm}"])
    assert (
        err.value.field == "workload.path"
        and reason in str(err.value)
        and "bad.cm" in str(err.value)
    )
