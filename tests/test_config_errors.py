"""Bad configuration stops before the run with one message naming the field."""

from __future__ import annotations

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigKeyError, ValidationError

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.errors import ConfigError


def build(overrides):
    return build_simulation(to_run_config(uno.compose(overrides)))


@pytest.mark.parametrize(
    "override,key",
    [("cc.dctcp.gg=0.1", "gg"), ("topo.kk=8", "kk"), ("switch.ecn.kmn_frac=0.1", "kmn_frac")],
)
def test_misspelt_key_is_refused(override, key):
    with pytest.raises((ConfigCompositionException, ConfigKeyError)) as err:
        uno.compose([override])
    assert key in str(err.value) + str(err.value.__cause__)


@pytest.mark.parametrize("override", ["topo.k=eight", "seed=one", "engine.max_sim_time_ms=[1]"])
def test_wrong_type_is_refused(override):
    with pytest.raises((ConfigCompositionException, ValidationError)) as err:
        uno.compose([override])
    field = override.split("=")[0].split(".")[-1]
    assert field in str(err.value) + str(err.value.__cause__)


@pytest.mark.parametrize(
    "overrides,field",
    [
        (["workload.size_bytes=-5"], "workload.size_bytes"),
        (["topo.buffer_bytes=0"], "topo.buffer_bytes"),
        (["switch.ecn.kmin_frac=0.8", "switch.ecn.kmax_frac=0.5"], "switch.ecn.kmin_frac"),
        (["switch.ecn.kmin_bytes=5000", "switch.ecn.kmax_bytes=1000"], "switch.ecn.kmin_bytes"),
        (["workload.receiver=999"], "workload.receiver"),
        (
            ["workload=flows", "workload.flows=[{src:0,dst:300,size_bytes:10}]"],
            "workload.flows[0].dst",
        ),
        (["topo.link_rate_gbps=0"], "topo.link_rate_gbps"),
        (["topo=dumbbell", "topo.bottleneck_rate_gbps=0"], "topo.bottleneck_rate_gbps"),
        (["topo.k=7"], "topo.k"),
        (["cc.algo=reno"], "cc.algo"),
        (["cc.inter=nope"], "cc.inter"),
        (["lb.algo=magic"], "lb.algo"),
        (["cc.dctcp.g=1.5"], "cc.dctcp.g"),
        (["switch.phantom.drain_frac=0"], "switch.phantom.drain_frac"),
        (["switch.port_kinds=[nonsense]"], "switch.port_kinds"),
        (["topo=dumbbell", "workload.n_inter=2"], "workload.n_inter"),
        (["workload.n_intra=500"], "workload.n_intra"),
        (["transport.mtu_bytes=0"], "transport.mtu_bytes"),
        (["engine.max_sim_time_ms=0"], "engine.max_sim_time_ms"),
    ],
)
def test_out_of_range_values_stop_before_the_run(overrides, field):
    with pytest.raises(ConfigError) as err:
        build(overrides)
    assert err.value.field == field
    assert str(err.value).startswith(field + ":")
