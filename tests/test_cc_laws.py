"""Every congestion-control law (uno/cc/law.py), the same for every engine.

* Golden trajectories: for each algorithm and the parameter sets its presets select
  (``cc_events.VARIANTS``), fixed random sequences of ACKs, losses, sends and timer wakes give
  the window, pacing rate and next timer recorded in ``tests/golden/cc/<variant>.npz``, exactly:
  a change to a law's arithmetic shows here (``python tests/golden/record_cc.py VARIANT``
  records it anew, on purpose).
* Twins: the compiled law and its pure-Python twin (``.py_func``, what ``engine.cc_py_func``
  runs) leave the same state after every event.
* Layouts and registry: named columns, common columns first, a kind per law, and a dispatch
  that reaches every law.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cc_events import VARIANTS, feed, sequences, trajectory, variant_params

from uno.cc import registry
from uno.cc.adapter import LawControl
from uno.cc.law import COMMON_PARAMS, COMMON_STATE, P0, C, layout

GOLDEN = Path(__file__).parent / "golden" / "cc"


def make(variant: str, ctx, py_func: bool = False) -> LawControl:
    algo, params = variant_params(variant)
    return LawControl(registry.LAW_BY_NAME[algo], registry.KIND[algo], params, ctx, py_func)


#: the variants of the algorithms that are laws
LAW_VARIANTS = [v for v, (algo, _) in VARIANTS.items() if algo in registry.LAW_BY_NAME]
#: every law, each with its defaults at least (a law with no recorded variant runs by its name)
TWIN_VARIANTS = LAW_VARIANTS + sorted(set(registry.LAW_BY_NAME) - set(LAW_VARIANTS))


@pytest.mark.parametrize("variant", LAW_VARIANTS)
def test_law_gives_its_golden_trajectory(variant):
    stored = np.load(GOLDEN / f"{variant}.npz")
    for i, (ctx, evs) in enumerate(sequences(variant)):
        got = trajectory(make(variant, ctx), evs)
        want = stored[f"arr_{i}"]
        bad = np.flatnonzero((got != want).any(axis=1))
        assert not len(bad), (
            f"trial {i}: event {bad[0]} {evs[bad[0]]}: {got[bad[0]]} != {want[bad[0]]}"
        )


@pytest.mark.parametrize("variant", TWIN_VARIANTS)
def test_compiled_law_and_its_twin_agree_after_every_event(variant):
    for ctx, evs in sequences(variant):
        jit, twin = make(variant, ctx), make(variant, ctx, py_func=True)
        np.testing.assert_array_equal(jit.state, twin.state)
        for ev in evs:
            feed(jit, ev)
            feed(twin, ev)
            np.testing.assert_array_equal(jit.state, twin.state, err_msg=str(ev))
            assert jit.pacing_rate_bps == twin.pacing_rate_bps
            assert jit.next_rate_change_ps() == twin.next_rate_change_ps()


def test_every_variant_has_its_golden_trajectories():
    assert {p.stem for p in GOLDEN.glob("*.npz")} == set(VARIANTS)
    assert {algo for algo, _ in VARIANTS.values()} <= set(registry.LAW_BY_NAME)


def test_layouts_name_their_columns_and_begin_with_the_common_ones():
    for law in registry.LAWS:
        assert law.state._fields[: len(COMMON_STATE)] == COMMON_STATE
        assert law.consts._fields[: len(COMMON_PARAMS)] == COMMON_PARAMS
        assert law.state.size == len(law.state._fields) - 1
        assert [getattr(law.state, f) for f in law.state._fields[:-1]] == list(
            range(law.state.size)
        )
    assert (C.cwnd, P0.kind) == (0, 0)
    with pytest.raises(ValueError):
        layout("Bad", ("a", "a"))


def test_registry_numbers_the_laws_and_the_dispatch_reaches_each():
    assert list(registry.KIND.values()) == list(range(1, len(registry.LAWS) + 1))
    for law in registry.LAWS:
        kind = registry.KIND[law.name]
        ctx = next(sequences(law.name))[0]
        cc = make(law.name, ctx)
        assert cc.consts[P0.kind] == kind
        s = np.zeros_like(cc.state)
        registry.law_init(kind, s, cc.consts)
        np.testing.assert_array_equal(s, cc.state)  # (init is what the adapter ran)
    with pytest.raises(ValueError):
        registry.law_init(len(registry.LAWS) + 1, np.zeros(4), np.zeros(16))
