"""Every congestion control in every engine: each law runs a small incast in the Python data
plane, the compiled data plane and the fluid engine, or the engine refuses it before the run,
naming the signal the law reads that the engine does not compute (the fluid engine's INT
records: on single paths, so a law reading them runs there with ECMP)."""

from __future__ import annotations

from pathlib import Path

import pytest

import uno
from uno.cc import registry
from uno.core.errors import ConfigError
from uno.fluid.support import FLUID_SIGNALS

PRESETS = Path(__file__).parents[1] / "conf" / "cc"
#: two intra-DC senders and one inter-DC sender of 200 KB each into one receiver
SMALL = [
    "workload=incast", "workload.n_intra=2", "workload.n_inter=1", "workload.size_bytes=200000",
    "engine.progress=false",
]  # fmt: skip
ENGINES = {
    "python": ["engine.dataplane=python"],
    "compiled": ["engine.dataplane=compiled"],
    "fluid": ["engine.kind=fluid"],
}


def _cc(name: str) -> list[str]:
    """The algorithm's own preset where it has one (its settings and switch configuration),
    else the algorithm with its defaults for every flow."""
    if (PRESETS / f"{name}.yaml").exists():
        return [f"cc={name}"]
    return [f"cc.algo={name}", "cc.intra=null", "cc.inter=null"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("algo", registry.CC_NAMES)
def test_every_algorithm_runs_in_every_engine_or_is_refused_naming_the_signal(algo, engine):
    cfg = uno.compose([*_cc(algo), *SMALL, *ENGINES[engine]])
    lacks = set(registry.LAW_BY_NAME[algo].signals) - set(FLUID_SIGNALS)
    if engine == "fluid" and lacks:
        with pytest.raises(ConfigError) as err:
            uno.run(cfg)
        assert err.value.field == "cc.algo"
        assert all(signal in str(err.value) for signal in lacks)
        return
    if engine == "fluid" and "int" in registry.LAW_BY_NAME[algo].signals:
        # INT records on single paths only: the default spraying is refused, naming lb.algo
        with pytest.raises(ConfigError) as err:
            uno.run(cfg)
        assert err.value.field == "lb.algo"
        cfg = uno.compose([*_cc(algo), *SMALL, *ENGINES[engine], "lb=ecmp"])
    result = uno.run(cfg)
    assert len(result.flows) == 3
    assert result.flows["finish_ps"].notna().all(), f"{algo} in {engine}: unfinished flows"
    assert (result.flows["fct_ps"] > 0).all()


def test_the_laws_interpreted_give_the_same_run_and_need_the_python_data_plane():
    small = [*SMALL, "cc=uno", "engine.dataplane=python"]
    compiled_laws = uno.run(uno.compose(small))
    interpreted = uno.run(uno.compose([*small, "engine.cc_py_func=true"]))
    assert interpreted.flows.equals(compiled_laws.flows)
    with pytest.raises(ConfigError, match="engine.cc_py_func"):
        uno.run(uno.compose([*SMALL, "engine.cc_py_func=true", "engine.dataplane=compiled"]))
