"""The fluid engine's drops at a full drop-tail queue, input by input
(``engine.fluid_phase_drops``, ``uno.fluid.kernels.input_drop_shares``): the slot model's
analytic cases, a Monte Carlo of the slot model itself, the kernels against their Python
twins, the grids' ACK drift, and the lock-out of a line-rate flow that the packet engine shows."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.fluid import kernels as K

RNG = np.random.default_rng(11)


def drop_shares(on_grid, u, phase, arr, drop, pool_arr=0.0, pool_u=0.0, twin=False):
    """(each input's loss fraction, the pool's, a packet's at a random phase) from the kernel
    or its Python twin."""
    n = len(u)
    loss = np.zeros(n)
    fn = K.input_drop_shares.py_func if twin else K.input_drop_shares
    pool, at_random = fn(n, np.asarray(on_grid, float), np.asarray(u, float),
                         np.asarray(phase, float), np.asarray(arr, float), pool_arr, pool_u, drop,
                         loss, np.zeros(n, np.int64))  # fmt: skip
    return loss, pool, at_random


def shares(*args, **kwargs):
    """(each input's loss fraction, the pool's): :func:`drop_shares`."""
    return drop_shares(*args, **kwargs)[:2]


def test_two_back_to_back_inputs_the_earlier_phase_takes_every_slot():
    """Two links sending back to back at the full queue's own rate: each departure's slot goes
    to the one whose packets arrive first after it, every time; the other loses all it sends.
    Which one depends on the phases, not on the order the inputs are listed in."""
    loss, _ = shares([1, 1], [1, 1], [0.2, 0.6], [100.0, 100.0], 100.0)
    np.testing.assert_allclose(loss, [0.0, 1.0], atol=1e-12)
    loss, _ = shares([1, 1], [1, 1], [0.7, 0.6], [100.0, 100.0], 100.0)
    np.testing.assert_allclose(loss, [1.0, 0.0], atol=1e-12)


def test_a_random_input_beside_a_train_wins_the_slots_before_the_trains_phase():
    """A back-to-back input at phase 0.3 and an input whose packets fall at random (in half of
    the packet times): the random one's packet is first only when it lands before 0.3, so it
    is accepted with chance 0.3, and the train with 1 - 0.5 x 0.3 = 0.85. With the link's drops
    equal to those rejections the losses are the rejections themselves."""
    drop = 100.0 * 0.15 + 50.0 * 0.7
    loss, _ = shares([1, 0], [1.0, 0.5], [0.3, 0.0], [100.0, 50.0], drop)
    np.testing.assert_allclose(loss, [0.15, 0.7], rtol=1e-12)


def test_a_packet_at_a_random_phase_wins_the_slots_no_input_took_before_it():
    """Beside a back-to-back input at phase 0.3 (every packet time) and a random one (half of
    them), a packet of no input of the fluid's (the hybrid's) is first when it lands before
    0.3 and before the random input's: the mean of 1 - 0.5 psi over psi < 0.3, 0.2775. With the
    link's drops equal to the inputs' rejections its loss is 1 - 0.2775. With pool bytes at
    the link, such a packet meets the pool's odds."""
    drop = 100.0 * (1.0 - 0.85) + 50.0 * 0.7
    _, pool, at_random = drop_shares([1, 0], [1.0, 0.5], [0.3, 0.0], [100.0, 50.0], drop)
    assert pool == 0.0
    assert at_random == pytest.approx(1.0 - 0.2775, rel=1e-12)
    _, pool, at_random = drop_shares([1, 0], [1.0, 0.5], [0.3, 0.0], [100.0, 50.0], drop + 20.0,
                                     pool_arr=40.0, pool_u=0.04)  # fmt: skip
    assert pool > 0.0 and at_random == pytest.approx(pool, rel=1e-12)


def test_random_inputs_the_smoother_one_wins_more():
    """Two inputs at random phases, one in every packet time and one in half of them: the
    first wins when the second is absent or later, 1 - 0.5/2 = 0.75; the second 1 - 1/2."""
    drop = 100.0 * 0.25 + 50.0 * 0.5
    loss, _ = shares([0, 0], [1.0, 0.5], [0.0, 0.0], [100.0, 50.0], drop)
    np.testing.assert_allclose(loss, [0.25, 0.5], rtol=1e-12)


def test_inputs_that_meet_the_same_odds_lose_the_same_share():
    """Equal inputs at random phases, or no input told apart (all in the pool): every byte
    arriving loses the same share, the link's drops over its arrivals (the uniform model)."""
    loss, _ = shares([0, 0, 0], [0.6] * 3, [0.0] * 3, [60.0] * 3, 90.0)
    np.testing.assert_allclose(loss, [0.5] * 3, rtol=1e-12)
    _, pool = shares([], [], [], [], 30.0, pool_arr=120.0, pool_u=1.2)
    assert pool == pytest.approx(0.25, rel=1e-12)


def test_shares_keep_the_links_drops_and_stay_fractions_kernel_and_twin():
    """On random inputs: every loss in [0, 1], the bytes lost are the link's drops, and the
    kernel agrees with its Python twin."""
    for _ in range(300):
        n = int(RNG.integers(1, 9))
        on_grid = (RNG.random(n) < 0.5).astype(float)
        u = RNG.random(n)
        phase = RNG.random(n)
        arr = u * 1000.0
        pool_arr = float(RNG.random() * 500.0) if RNG.random() < 0.5 else 0.0
        total = arr.sum() + pool_arr
        drop = float(RNG.random() * total)
        a = drop_shares(on_grid, u, phase, arr, drop, pool_arr, pool_arr / 1000.0)
        b = drop_shares(on_grid, u, phase, arr, drop, pool_arr, pool_arr / 1000.0, twin=True)
        np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-15)
        assert a[1] == pytest.approx(b[1], rel=1e-12, abs=1e-15)
        assert a[2] == pytest.approx(b[2], rel=1e-12, abs=1e-15) and 0.0 <= a[2] <= 1.0
        assert (a[0] >= -1e-12).all() and (a[0] <= 1 + 1e-12).all() and -1e-12 <= a[1] <= 1 + 1e-12
        assert (a[0] * arr).sum() + a[1] * pool_arr == pytest.approx(drop, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("pool_u", [0.5, 0.0])
def test_the_kernel_integrates_the_slot_model(pool_u):
    """A Monte Carlo of the slot model the kernel integrates: in each packet time after a
    departure, grid inputs put a packet at their phase with chance u, random inputs at a
    uniform phase with chance u, the pool a Poisson number at uniform phases; the earliest is
    accepted. With the link's drops set to the simulated rejections, the kernel's losses are
    those rejections (factor 1), to within the Monte Carlo's error; so is that of one more
    packet at a uniform phase in every packet time, counted in no input (the hybrid's)."""
    rng = np.random.default_rng(3)
    on_grid = np.array([1.0, 1.0, 0.0, 0.0, 1.0])
    u = np.array([0.9, 0.4, 0.7, 0.3, 0.6])
    phase = np.array([0.15, 0.55, 0.0, 0.0, 0.8])
    slots = 400_000
    present = rng.random((slots, len(u))) < u
    when = np.where(on_grid > 0, phase, rng.random((slots, len(u))))
    when = np.where(present, when, np.inf)
    n_pool = rng.poisson(pool_u, slots)
    first_pool = np.full(slots, np.inf)
    some = n_pool > 0
    # the earliest of n uniform phases: 1 - U^(1/n)
    first_pool[some] = 1.0 - rng.random(some.sum()) ** (1.0 / n_pool[some])
    earliest = np.minimum(when.min(axis=1), first_pool)
    won = present & (when == earliest[:, None])
    reject = 1.0 - won.sum(axis=0) / present.sum(axis=0)
    pool_reject = 1.0 - (some & (first_pool == earliest)).sum() / max(n_pool.sum(), 1)
    tagged_reject = 1.0 - (rng.random(slots) < earliest).mean()
    arr = u * 1000.0
    pool_arr = pool_u * 1000.0
    drop = float((arr * reject).sum() + pool_arr * pool_reject)
    loss, pool, at_random = drop_shares(on_grid, u, phase, arr, drop, pool_arr, pool_u)
    np.testing.assert_allclose(loss, reject, atol=0.006)
    assert at_random == pytest.approx(tagged_reject, abs=0.006)
    if pool_u > 0.0:
        assert pool == pytest.approx(pool_reject, abs=0.006)


def test_acks_move_the_grids_of_the_links_they_cross():
    """A receiver's ACKs shift the departure grid of every back-to-back link on their way back
    by ack_bytes / packet_bytes of a packet time each (mod 1); links not back to back have no
    grid to shift."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["topo=dumbbell", "workload=incast", "workload.n_intra=2",
                       "workload.n_inter=0", "engine.kind=fluid", "lb=ecmp"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    f = 0
    back = sim.rv_link[sim.rv_ptr[f] : sim.rv_ptr[f + 1]]
    ls = sim.ls.copy()
    ls[:, K.LS_GRID] = -1.0
    ls[back[0], K.LS_GRID] = 0.9
    pkt = sim.hops[15][1]
    fs = sim.fs.copy()
    fs[f, K.FS_DELIV_NEW] = 10 * pkt  # ten data packets delivered: ten ACKs
    markers = np.array([f] + [0] * (len(fs) - 1), dtype=np.int64)
    for fn in (K.ack_drift, K.ack_drift.py_func):
        got = ls.copy()
        fn(fs, got, markers, 1, sim.rv_ptr, sim.rv_link, sim.lb, sim.hops)
        want = (0.9 + 10 * sim.scenario.ack_bytes / pkt) % 1.0
        assert got[back[0], K.LS_GRID] == pytest.approx(want, rel=1e-12)
        assert (got[back[1:], K.LS_GRID] == -1.0).all()


def test_a_line_rate_flow_is_locked_out_at_a_full_queue_as_in_the_packet_engine():
    """Two inter-DC flows open with a line-rate window each (UnoCC) into one receiver over
    ECMP: their trains meet at a full queue of the receiver's datacenter. In the packet engine
    one train takes every freed slot and the other loses its window (drop-tail lock-out, the
    phase effect of Floyd & Jacobson 1992); the fluid engine with phase drops does the same
    (which flow wins follows its random phases), and with every arrival losing the same share
    (``engine.fluid_phase_drops=false``) the two lose alike. The total lost agrees."""
    base = ["workload=incast", "workload.n_intra=0", "workload.n_inter=2", "lb=ecmp",
            "workload.size_bytes=20000000", "engine.sample_interval_us=0", "seed=3"]  # fmt: skip
    resent = {}
    for name, extra in (("packet", ["engine.kind=packet"]), ("phase", ["engine.kind=fluid"]),
                        ("even", ["engine.kind=fluid", "engine.fluid_phase_drops=false"])):  # fmt: skip
        flows = uno.run(uno.compose([*base, *extra])).flows
        resent[name] = np.sort(flows.retransmits.to_numpy(dtype=float))
    for name in ("packet", "phase"):
        low, high = resent[name]
        assert high > 4000 and low < 0.01 * high, (name, resent[name])
    low, high = resent["even"]
    assert low > 0.9 * high, resent["even"]
    for name in ("phase", "even"):
        assert resent[name].sum() == pytest.approx(resent["packet"].sum(), rel=0.05)


def test_a_packet_at_a_random_phase_beside_a_train_that_loses_everything():
    """Two trains at the link's own rate, at phases 0.2 and 0.6: the first takes every slot,
    and a packet of no input of the fluid's is first only when it lands before 0.2 (loss 0.8).
    With the drops a little above what the second train sends, that train still loses all and
    the first the rest; the packet's loss moves by as little (0.805), not to the first train's
    (0.005): its chance does not jump as the drops pass the second train's bytes."""
    for twin in (False, True):
        exact, _, at_exact = drop_shares([1, 1], [1, 1], [0.2, 0.6], [100.0, 100.0], 100.0,
                                         twin=twin)  # fmt: skip
        np.testing.assert_allclose(exact, [0.0, 1.0], atol=1e-12)
        assert at_exact == pytest.approx(0.8, rel=1e-9)
        loss, _, at_random = drop_shares([1, 1], [1, 1], [0.2, 0.6], [100.0, 100.0], 100.5,
                                         twin=twin)  # fmt: skip
        np.testing.assert_allclose(loss, [0.005, 1.0], rtol=1e-9)
        assert at_random == pytest.approx(0.805, rel=1e-9)
    # any number of trains at random phases: the packet's loss is continuous in the drops
    # where they pass what the trains after the first send
    for _ in range(20):
        n = int(RNG.integers(2, 6))
        phase = RNG.random(n)
        arr = np.full(n, 100.0)
        losers = 100.0 * (n - 1)
        at = [drop_shares([1] * n, [1] * n, phase, arr, d)[2] for d in (losers, 1.001 * losers)]
        assert at[0] == pytest.approx(1.0 - phase.min(), rel=1e-9)
        assert abs(at[1] - at[0]) < 0.01
