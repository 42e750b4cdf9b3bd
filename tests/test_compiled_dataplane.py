"""The compiled data plane (uno/net/compiled/, ``engine.dataplane=compiled``).

* Identity: on the same config and seed it gives the Python data plane's results bit for bit —
  the flows table, the sampled rates, windows and queues, the ports table and the packet
  counts — for DCTCP, UnoCC (phantom queues, spraying), Gemini and MP-RDMA+BBR, with the
  artifact's ACK priority lane, and on reduced scenarios of the existing experiments.
* Every per-packet kernel agrees with its pure-Python twin (``.py_func``) and with the Python
  data plane's own function on random inputs: the ECMP hash, PCG64 draws (numpy's sequence),
  serialisation, RED, the phantom queue, the event heap.
* What it does not model is refused, naming the setting.
"""

from __future__ import annotations

import heapq

import numba
import numpy as np
import pandas as pd
import pytest
from conftest import SCHEME_OVERRIDES, SMALL_INCAST, run

import uno
from uno.cc.law import INT_FIELDS
from uno.core import units
from uno.core.errors import ConfigError
from uno.core.units import serialization_ps as serialization_python
from uno.net import hashing
from uno.net.compiled import dataplane, event_port, events, faults, loop, pcg, pfc, ports, queue
from uno.net.compiled.layout import EID_SHIFT, HEAP_ROOM, ING, KI, PF, H, K, P
from uno.net.hashing import ecmp_index

PORT_COLS = ["port", "arrivals", "tx_packets", "tx_bytes", "drops", "fault_drops", "ecn_marks",
             "max_queue_bytes", "queue_bytes_at_end"]  # fmt: skip


def _both(overrides: list[str]):
    return {dp: run([*overrides, f"engine.dataplane={dp}"]) for dp in ("python", "compiled")}


def _assert_identical(results) -> None:
    py, comp = results["python"], results["compiled"]
    pd.testing.assert_frame_equal(py.flows, comp.flows)
    assert set(py.tables) == set(comp.tables)
    for name in py.tables:
        if name == "ports":
            pd.testing.assert_frame_equal(py.tables[name][PORT_COLS], comp.tables[name][PORT_COLS])
        else:
            pd.testing.assert_frame_equal(py.tables[name], comp.tables[name])
    assert py.summary["packets"] == comp.summary["packets"]
    assert py.summary.get("faults") == comp.summary.get("faults")
    assert py.summary["run"]["packet_hops"] == comp.summary["run"]["packet_hops"]


# ---- identity with the Python data plane ------------------------------------------------------
@pytest.mark.parametrize(
    "overrides",
    [
        *SCHEME_OVERRIDES,
        ["cc=uno", "switch=phantom_artifact"],  # ACKs in a control lane of their own
        # receivers that stay in Python: erasure-coded flows (NACKs), DCQCN's CNP coalescing
        ["cc=uno", "lb=unolb", "ec=mds", "ec.scope=all", "ec.payload=false"],
        ["cc=dcqcn", "lb=ecmp"],
    ],
    ids=["dctcp", "uno", "gemini", "mprdma_bbr", "uno_ack_lane", "unorc_coded", "dcqcn_cnp"],
)
def test_same_results_as_the_python_data_plane(overrides):
    # queues, rates and windows sampled every 5 us, every busy port: the samplers read the
    # compiled ports mid-run, which must not change what they decide
    base = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=5",
            "engine.queue_ports=[busy]"]  # fmt: skip
    results = _both([*base, *overrides])
    _assert_identical(results)
    # the scenario exercised the data plane: queues built, packets were marked or dropped
    ports = results["compiled"].tables["ports"]
    assert ports["ecn_marks"].sum() + ports["drops"].sum() > 0
    assert ports["max_queue_bytes"].max() > 0


@pytest.mark.parametrize(
    "overrides",
    [
        # realistic mixed traffic on the two-DC topology, the artifact's switches (ACK lane)
        ["experiment=fig10_load", "workload=mixed_artifact", "workload.n_flows=400",
         "scheme=uno_ecmp", "engine.max_sim_time_ms=40"],
        pytest.param(["experiment=fig10_load", "workload.n_flows=60", "scheme=gemini",
                      "engine.max_sim_time_ms=20"], marks=pytest.mark.slow),
        ["experiment=fig8_incast", "workload.size_bytes=8000000", "engine.max_sim_time_ms=40"],
        # phantom queues marking (UnoCC's marks come from them here)
        ["experiment=fig4_phantom", "workload.size_bytes=20000000", "engine.max_sim_time_ms=40"],
    ],
    ids=["fig10_uno_ecmp", "fig10_gemini", "fig8", "fig4"],
)  # fmt: skip
def test_same_results_on_reduced_experiments(overrides):
    results = _both(overrides)
    _assert_identical(results)
    ports = results["compiled"].tables["ports"]
    assert ports["ecn_marks"].sum() + ports["drops"].sum() > 0
    if "experiment=fig4_phantom" in overrides:
        assert ports["ecn_marks"].sum() > 0


# the WAN down for a while (every link, both ways: whatever the hash, flows lose packets, then
# get through again) and, on every WAN link, i.i.d. plus correlated block loss often enough to
# hit a few-MB run many times (Table 1's rates would hit it rarely)
LOSSY_WAN = [
    "faults.link_failures=[{ports:['dc0/border->dc1/border#*'],both_directions:true,"
    "at_us:30.0,until_us:900.0}]",
    "faults.losses=[{ports:['dc*/border->dc*/border#*'],both_directions:false,probability:0.002,"
    "block_probabilities:[0.02,0.01,0.005],block_packets:10}]",
]


@pytest.mark.parametrize(
    "overrides",
    [
        [*SMALL_INCAST, "cc=dctcp", "lb=ecmp", *LOSSY_WAN],
        [*SMALL_INCAST, "cc=uno", "lb=unolb", "ec=mds", "ec.payload=false", *LOSSY_WAN],
        ["experiment=fig13_linkfail", "lb=spray", "ec=none"],
        ["experiment=fig13_random_loss", "faults=link_down_and_table1", "lb=plb"],
    ],
    ids=["dctcp_ecmp", "unorc", "fig13_linkfail", "fig13_loss_and_down"],
)
def test_same_results_with_link_faults(overrides):
    """Failed links and random and correlated losses, in the kernel: the same drops (by
    reason), the same per-block loss counts, the same flows as the Python data plane."""
    results = _both([*overrides, "engine.sample_interval_us=0"])
    _assert_identical(results)
    faults = results["compiled"].summary["faults"]
    assert faults["fault_drops"] > 0
    dropped = results["compiled"].summary["packets"]["dropped"]
    assert any(key.startswith("link_down/") for key in dropped)
    if "lb=ecmp" in overrides:
        assert any(key.startswith("random_loss/") for key in dropped)
        assert any(key.startswith("block_loss/") for key in dropped)
        assert sum(faults["block_losses"][1:]) > 0


@pytest.mark.parametrize(
    "overrides",
    [
        ["cc=hpcc", "lb=ecmp"],
        # Gear's replacement: the hop with the longest drain time kept, in one or two records
        ["cc=hpcc", "lb=ecmp", "switch.int_telemetry.replacement=gear",
         "switch.int_telemetry.max_records=1"],
        ["cc=hpcc", "lb=spray", "switch.int_telemetry.replacement=gear",
         "switch.int_telemetry.max_records=2", "switch.int_telemetry.tiers=[tor,agg]"],
        # coded flows: Python receivers echo the records in ACKs that go back through the kernel
        ["cc=hpcc", "lb=unolb", "ec=mds", "ec.scope=all", "ec.payload=false"],
        # every host sends and receives: ports carry data one way and ACKs too (txBytes counts
        # both, as the event port's)
        ["topo.k=4", "workload=permutation", "workload.size_bytes=300000", "cc=hpcc",
         "lb=ecmp"],
    ],
    ids=["hpcc", "gear_1", "gear_2_tor_agg", "hpcc_coded", "hpcc_permutation"],
)  # fmt: skip
def test_same_results_with_int(overrides):
    """INT records written in the kernel (the Python data plane writes them in its event
    ports): HPCC's windows, sampled every 5 us, and its flows are the same."""
    sampling = ["engine.sample_interval_us=5", "engine.queue_ports=[busy]"]
    workload = (
        []
        if "workload=permutation" in overrides
        else [*SMALL_INCAST, "workload.size_bytes=1500000"]
    )
    results = _both([*workload, *sampling, *overrides])
    _assert_identical(results)
    assert "cwnd" in results["compiled"].tables


# the hpcc_incast scenario (k = 4 fat tree, PFC on every link) with DCTCP and no ECN: twelve
# senders fill the receiver's ToR, whose pauses climb to the aggregation switches and on to the
# senders' NICs (hosts' senders then wait for the RESUME)
PFC_HOSTS_PAUSED = ["experiment=hpcc_incast", "cc=dctcp", "switch.ecn.enabled=false",
                    "workload.n_intra=12"]  # fmt: skip


@pytest.mark.parametrize(
    "overrides",
    [
        ["experiment=hpcc_incast"],  # HPCC: INT records at event ports, a few pauses
        ["experiment=hpcc_incast", "cc=dcqcn"],  # DCQCN: CNPs from Python receivers
        PFC_HOSTS_PAUSED,
        # RESUME only once an ingress queue is empty: Xon reached exactly
        [*PFC_HOSTS_PAUSED, "switch.pfc.xon_bytes=0", "workload.size_bytes=1000000"],
        # the control queue served first on the data's transmitter (strict priority), INT too
        ["experiment=hpcc_incast", "switch.ack_priority=true", "cc=dctcp",
         "switch.ecn.enabled=false"],
        # two DCs, PFC inside them (border and core switches lossy), DCQCN, the WAN failing and
        # losing packets
        [*SMALL_INCAST, "workload.size_bytes=1500000", "workload.n_intra=3", "workload.n_inter=3",
         "switch.pfc.enabled=true", "switch.pfc.port_kinds=[host,fabric]", "cc=dcqcn", "lb=ecmp",
         *LOSSY_WAN],
        pytest.param(["experiment=pfc_spreading"], marks=pytest.mark.slow),
    ],
    ids=["hpcc", "dcqcn", "hosts_paused", "xon_zero", "ack_priority_int", "two_dc_faults",
         "spreading"],
)  # fmt: skip
def test_same_results_with_pfc(overrides):
    """PFC in the kernel (event ports, ingress queues, PAUSE and RESUME): the same pause
    intervals, flows, samples, ports and PFC summary as the Python event ports."""
    results = _both(overrides)
    _assert_identical(results)
    py, comp = results["python"], results["compiled"]
    assert py.summary["pfc"] == comp.summary["pfc"]
    assert comp.summary["pfc"]["pause_frames"] > 0
    if overrides is PFC_HOSTS_PAUSED:
        assert (comp.tables["pauses"]["kind"] == "host").sum() > 0
    if "cc=dctcp" in overrides or "cc=dcqcn" in overrides:  # the kernel's senders, paused
        assert comp.summary["dataplane"]["senders"] == "in the kernel"


def test_same_pfc_violations():
    """Xoff set past what the buffers can hold: packets that entered through lossless ingress
    queues are dropped, and both data planes count the same violations (the run does not stop:
    invariant checks off)."""
    overrides = [*PFC_HOSTS_PAUSED, "switch.pfc.xoff_bytes=600000", "engine.check_invariants=false",
                 "engine.sample_interval_us=0"]  # fmt: skip
    py, comp = (uno.run(uno.compose([*overrides, f"engine.dataplane={dp}"]))
                for dp in ("python", "compiled"))  # fmt: skip
    pd.testing.assert_frame_equal(py.flows, comp.flows)
    pd.testing.assert_frame_equal(py.tables["pauses"], comp.tables["pauses"])
    assert py.summary["pfc"] == comp.summary["pfc"]
    assert comp.summary["pfc"]["lossless_violations"] > 0


@pytest.mark.parametrize(
    "overrides", SCHEME_OVERRIDES, ids=["dctcp", "uno", "gemini", "mprdma_bbr"]
)
def test_same_results_with_event_ports(overrides):
    """``engine.port_model=event`` without PFC: the kernel's event ports (two events per
    packet-hop) give the Python event ports' results."""
    base = [*SMALL_INCAST, "workload.size_bytes=1500000", "engine.sample_interval_us=5",
            "engine.queue_ports=[busy]", "engine.port_model=event"]  # fmt: skip
    _assert_identical(_both([*base, *overrides]))


def test_the_event_heap_grows_when_pfc_signals_need_room():
    """A heap started with room for one event's pushes only: the kernel stops before running
    out (``_RUN_HEAP``, or -2 from an injection), Python doubles it, and the results are those of
    the Python data plane."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    overrides = [*PFC_HOSTS_PAUSED, "workload.size_bytes=500000", "engine.sample_interval_us=0"]
    want = run([*overrides, "engine.dataplane=python"])
    sim = build_simulation(to_run_config(uno.compose([*overrides, "engine.dataplane=compiled"])))
    dp = sim.network.dataplane
    dp.ST[H.heap_cap] = HEAP_ROOM + 1
    got = sim.run()
    assert dp.ST[H.heap_cap] >= 4 * (HEAP_ROOM + 1)  # grew twice at least
    pd.testing.assert_frame_equal(want.flows, got.flows)
    pd.testing.assert_frame_equal(want.tables["pauses"], got.tables["pauses"])


def test_the_kernel_answers_data_of_plain_flows_and_python_the_rest():
    from uno.api import to_run_config
    from uno.build import build_simulation

    def receivers(extra):
        overrides = [*SMALL_INCAST, "workload.size_bytes=500000", "engine.sample_interval_us=0",
                     "engine.dataplane=compiled", *extra]  # fmt: skip
        sim = build_simulation(to_run_config(uno.compose(overrides)))
        sim.run()
        dp = sim.network.dataplane
        return dp._kernel_rx, int(dp.ST[H.rx_data]), sim

    kernel, answered, sim = receivers(["cc=dctcp", "lb=ecmp"])
    assert all(kernel)
    data = sum(f.n_packets for f in sim.flows)
    assert answered >= data  # every data packet delivered was answered in the kernel
    assert all(f.receiver.complete_ps is not None for f in sim.flows)
    assert all(f.receiver.n_got == f.n_packets for f in sim.flows)
    kernel, answered, _ = receivers(
        ["cc=uno", "ec=mds", "ec.payload=false"]
    )  # inter-DC flows coded
    assert kernel.count(False) == 2 and answered > 0
    kernel, answered, sim = receivers(["cc=dcqcn", "lb=ecmp"])  # CNPs coalesced inside
    assert all(kernel) and answered > 0
    assert sum(f.receiver.cnps_sent for f in sim.flows) > 0


def test_drops_and_pool_growth_are_accounted():
    """Tail drops inside the kernel reach the network's counters (conservation holds: the run
    helper checks it), and a pool that starts tiny grows without changing results."""
    base = [*SMALL_INCAST, "cc=dctcp", "lb=ecmp", "switch=droptail", "workload.size_bytes=3000000",
            "engine.sample_interval_us=0"]  # fmt: skip
    results = _both(base)
    _assert_identical(results)
    assert results["compiled"].tables["ports"]["drops"].sum() > 0
    # a 2-packet pool: every few sends grow it
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(uno.compose([*base, "engine.dataplane=compiled"])))
    dp = sim.network.dataplane
    dp.PK = dp.PK[:0].copy()
    dp.objs.clear()
    dp.ST[H.free] = -1
    dp._grow(2)
    small = sim.run()
    pd.testing.assert_frame_equal(small.flows, results["python"].flows)
    assert len(dp.PK) > 2


def test_invariants_run_on_the_kernel_state():
    """Mid-run (queues full of packets), the ports' kernel state passes ``check_ports`` (and
    its twin); each kind of corruption is caught and named by the run's conservation check."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.core.errors import InvariantError

    overrides = [*SMALL_INCAST, "cc=dctcp", "lb=ecmp", "engine.dataplane=compiled",
                 "engine.sample_interval_us=0"]  # fmt: skip
    sim = build_simulation(to_run_config(uno.compose(overrides)))
    sim.start()
    sim.advance(300_000_000)  # 300 us: the incast's queues are built
    dp = sim.network.dataplane
    assert ports.check_ports(dp.ST, dp.PK) == (-1, 0)
    assert ports.check_ports.py_func(dp.ST, dp.PK) == (-1, 0)
    sim.network.check_conservation()
    busiest = max(range(len(dp.views)), key=lambda i: dp.views[i].bytes)
    assert dp.views[busiest].bytes > 0
    row = dp._prow + busiest * P.size
    for col, delta, message in ((P.bytes, -10**9, "outside"), (P.bytes, -1, "not the sum"),
                                (P.held, 1, "holds")):  # fmt: skip
        dp.ST[row + col] += delta
        assert ports.check_ports(dp.ST, dp.PK)[0] == busiest
        assert ports.check_ports.py_func(dp.ST, dp.PK)[0] == busiest
        with pytest.raises(InvariantError, match=f"{dp.views[busiest].name}: .*{message}"):
            sim.network.check_conservation()
        dp.ST[row + col] -= delta
    sim.network.check_conservation()
    sim.finish()


def test_the_boundary_calls_the_compiled_kernels_directly():
    """After the first call, ``send`` and ``run`` call the compiled functions Numba chose for
    their arguments' types (no dispatch per packet); with no such overload the dispatcher
    itself is used."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(uno.compose([*SMALL_INCAST, "engine.dataplane=compiled",
                                                      "workload.size_bytes=200000"])))  # fmt: skip
    sim.run()
    dp = sim.network.dataplane
    assert dp._run is not loop.run and dp._inject is not loop.inject
    assert dp._run in [c.entry_point for c in loop.run.overloads.values()]
    assert dataplane.compiled_entry(loop.run, ("not", "the", "types")) is loop.run


def test_the_kernels_are_loaded_before_the_run_for_the_types_its_calls_pass():
    """``run`` and ``start_flow`` are loaded as the simulation starts, outside the engine's
    time; every call of the run then passes the argument types they were loaded for (else a
    call would reach a compiled entry of other types)."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose([*SMALL_INCAST, "engine.dataplane=compiled", "workload.size_bytes=200000"])
    sim = build_simulation(to_run_config(cfg))
    sim.start()
    dp = sim.network.dataplane
    kernels = {"run": loop.run, "start_flow": loop.start_flow}
    seen = {name: set() for name in kernels}
    loaded = {name: getattr(dp, "_" + name) for name in kernels}
    for name, entry in loaded.items():

        def traced(*args, entry=entry, name=name):
            seen[name].add(tuple(numba.typeof(a) for a in args))
            return entry(*args)

        setattr(dp, "_" + name, traced)
    sim.advance(sim.max_time_ps)
    sim.finish()
    for name, kernel in kernels.items():
        assert seen[name]
        for types in seen[name]:
            assert kernel.overloads[types].entry_point is loaded[name]


def test_refuses_what_it_does_not_model():
    too_long = LOSSY_WAN[1].replace("block_packets:10", "block_packets:64")
    with pytest.raises(ConfigError, match=r"faults.losses\[0\].block_packets"):
        uno.run(uno.compose([*SMALL_INCAST, "engine.dataplane=compiled", too_long]))
    with pytest.raises(ConfigError, match="engine.dataplane"):
        uno.run(uno.compose([*SMALL_INCAST, "engine.kind=fluid", "engine.dataplane=compiled"]))
    # (an experiment that pins the Python data plane for its packet runs: the line says what to set)
    with pytest.raises(ConfigError, match=r"set engine\.dataplane=auto"):
        uno.run(uno.compose(["experiment=mlcc_fig9", "engine.kind=fluid"]))


# ---- kernels against their twins ----------------------------------------------------------------
RNG = np.random.default_rng(20261123)


def _random_u64(n: int) -> list[int]:
    return [int(x) for x in RNG.integers(0, 1 << 64, size=n, dtype=np.uint64)]


def _splitmix64_finaliser(x: int) -> int:
    """SplitMix64's finaliser on Python ints (Steele, Lea and Flood, OOPSLA 2014)."""
    mask = (1 << 64) - 1
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & mask
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & mask
    return x ^ (x >> 31)


def test_the_shared_hash_is_splitmix64_and_ecmp_takes_its_remainder():
    # the reference generator's first output for seed 1234567
    assert int(hashing.mix64(np.uint64(1234567) + hashing.GOLDEN)) == 6457827717110365317
    xs = _random_u64(300)
    for x in xs:
        assert int(hashing.mix64(np.uint64(x))) == _splitmix64_finaliser(x)
    mixed = hashing.mix64(np.array(xs, dtype=np.uint64))
    assert [int(v) for v in mixed] == [_splitmix64_finaliser(x) for x in xs]
    keys, salts = _random_u64(300), _random_u64(300)
    counts = RNG.integers(1, 65, 300)
    want = [
        _splitmix64_finaliser(k ^ s) % int(n) for k, s, n in zip(keys, salts, counts, strict=True)
    ]
    assert [ecmp_index(k, s, int(n)) for k, s, n in zip(keys, salts, counts, strict=True)] == want
    got = hashing.ecmp_choices(
        np.array(keys, dtype=np.uint64), np.array(salts, dtype=np.uint64), counts.astype(np.int64)
    )
    assert got.tolist() == want
    assert hashing.flow_hash_key(3, 5, 7) == _splitmix64_finaliser((3 << 40) ^ (5 << 20) ^ 7)


def test_mul64_is_the_full_product():
    for a, b in zip(_random_u64(300), _random_u64(300), strict=True):
        for fn in (pcg.mul64, pcg.mul64.py_func):
            hi, lo = fn(np.uint64(a), np.uint64(b))
            assert (int(hi) << 64) | int(lo) == a * b


def test_pcg64_draws_are_numpys():
    with np.errstate(over="ignore"):
        for name in ("ecn/a->b#0", "ecn/x", "other"):
            from uno.core.rng import RngStreams

            buf = RngStreams(7).buffered(name)
            U = np.array(pcg.pcg64_words(buf), dtype=np.uint64)
            V = U.copy()
            want = [buf.next() for _ in range(200)]
            got = [pcg.pcg64_next_double(U, 0) for _ in range(200)]
            twin = [pcg.pcg64_next_double.py_func(V, 0) for _ in range(200)]
            assert got == want and twin == want


def test_serialization_matches_units():
    for size, rate in zip(
        RNG.integers(1, 10_000, 300), RNG.integers(10**8, 8 * 10**11, 300), strict=True
    ):
        want = serialization_python(int(size), int(rate))
        assert units.serialization_ps_kernel(int(size), int(rate)) == want
        assert units.serialization_ps_kernel.py_func(int(size), int(rate)) == want


def test_red_and_phantom_kernels_match_their_twins():
    from uno.net.phantom import PhantomQueue

    for _ in range(200):
        kmin = float(RNG.uniform(0, 1e5))
        kmax = kmin + float(RNG.uniform(0, 1e5))
        span = kmax - kmin
        occ = float(RNG.uniform(0, 3e5))
        seed = _random_u64(4)
        U1 = np.array(seed, dtype=np.uint64)
        U2 = U1.copy()
        with np.errstate(over="ignore"):
            a = queue.red_decide(U1, 0, kmin, kmax, span, occ)
            b = queue.red_decide.py_func(U2, 0, kmin, kmax, span, occ)
        assert a == b and np.array_equal(U1, U2)
    # phantom enqueue: kernel, twin and PhantomQueue from the same random sequence of arrivals
    ph = PhantomQueue(50_000, 90e9, 1_000, 40_000, uniform=None)
    n_ports, p = 3, 1
    ST = np.zeros(H.size + n_ports * P.size, dtype=np.int64)
    ST2 = ST.copy()
    F = np.zeros((n_ports, PF.size))
    F[p, PF.ph_size] = ph.size_bytes
    F[p, PF.ph_drain] = ph.drain_bytes_per_ps
    F2 = F.copy()
    pb = H.size + p * P.size
    now = 0
    for _ in range(500):
        now += int(RNG.integers(0, 2_000_000))
        size = int(RNG.choice([64, 4160, 9000]))
        ph.enqueue(now, size)
        queue.phantom_enqueue(ST, F, p, pb, now, size)
        queue.phantom_enqueue.py_func(ST2, F2, p, pb, now, size)
        assert F[p, PF.ph_level] == ph.level_bytes == F2[p, PF.ph_level]


def test_red_kernel_decides_as_red_marker():
    from uno.core.rng import RngStreams
    from uno.net.red import RedMarker

    for name in ("ecn/p1", "ecn/p2"):
        buf = RngStreams(3).buffered(name)
        U = np.array(pcg.pcg64_words(buf), dtype=np.uint64)
        red = RedMarker(10_000, 90_000, buf, pmax=0.5)
        with np.errstate(over="ignore"):
            for occ in RNG.uniform(0, 2e5, 500):
                assert queue.red_decide(
                    U, 0, 10_000.0, 90_000.0, red._span, float(occ)
                ) == red.decide(float(occ))


def test_fault_kernel_decides_as_the_fault_models():
    """``fault_drop`` and its twin, on a WAN port with a link failure window, i.i.d. and block
    loss, give packet after packet the reason the Python models give (the first model that
    drops decides; the random ones share the port's ``fault/<port>`` stream), and the block
    counters the kernel keeps are the BlockLoss object's."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.core.rng import UniformBuffer
    from uno.faults.models import BlockLoss, IidLoss, LinkDown

    lossy = [LOSSY_WAN[0].replace("at_us:30.0,until_us:900.0", "at_us:2.0,until_us:5.0"),
             LOSSY_WAN[1].replace("probability:0.002", "probability:0.05").replace(
                 "[0.02,0.01,0.005]", "[0.2,0.1,0.05]")]  # fmt: skip
    sim = build_simulation(
        to_run_config(uno.compose([*SMALL_INCAST, "engine.dataplane=compiled", *lossy]))
    )
    dp = sim.network.dataplane
    port, faulty, blocks = next(t for t in dp._faulty if "dc0/border->dc1/border#0" in
                                dp.views[t[0]].name)  # fmt: skip
    models = faulty.models
    assert [type(m) for m in models] == [LinkDown, IidLoss, BlockLoss]
    # the Python models draw from a fresh copy of the stream the kernel took
    stream = models[1]._uniform
    fresh = UniformBuffer(entropy=stream._entropy, spawn_key=stream._spawn_key)
    for m in models[1:]:
        m._uniform = fresh
    pb = dp._prow + port * P.size
    ST2, U2 = dp.ST.copy(), dp.U.copy()
    times = np.sort(RNG.integers(0, 8_000_000, 3000))  # ps: before, during, after the failure
    reasons = {"link_down": 1, "random_loss": 2, "block_loss": 3}
    seen = set()
    for now in times.tolist():
        want = next((reasons[m.reason] for m in models if m.drops(None, now)), 0)
        assert faults.fault_drop(dp.ST, dp.F, dp.U, pb, now) == want
        assert faults.fault_drop.py_func(ST2, dp.F, U2, pb, now) == want
        seen.add(want)
    assert seen == {0, 1, 2, 3}
    python_counts = (models[2].blocks, list(models[2].losses_per_block))
    models[2].blocks, models[2].losses_per_block = 0, []
    dp.sync_network()  # the kernel's counters onto the same object
    assert blocks[0][0] is models[2]
    assert (models[2].blocks, models[2].losses_per_block) == python_counts
    assert python_counts[0] > 0 and sum(python_counts[1][1:]) > 0
    assert (ST2 == dp.ST).all() and (U2 == dp.U).all()


@pytest.mark.parametrize("rule", ["none", "gear", "qlen"])
def test_int_stamp_kernel_writes_the_records_the_stamper_writes(rule):
    """``int_stamp`` and its twin, on random records (queues from a small set, so ties are
    common), leave in a packet's row the records :class:`uno.net.int.IntStamper` leaves in
    ``int_hops``: appended up to the limit, then replaced by the rule, coins included."""
    from uno.core.packet import Packet
    from uno.net.int import REPLACEMENTS, IntStamper

    max_records, salt = 3, 12345
    stamper = IntStamper(max_records, rule, salt)
    code = REPLACEMENTS.index(rule)
    width = KI.n_records + 1 + INT_FIELDS * max_records
    replaced = 0
    for _trial in range(60):
        pkt = Packet(0, 0, 0, 4096, 4000, 0, 1, 0, 0, 0, False)
        rows = np.zeros((2, width), dtype=np.int64)
        for _hop in range(int(RNG.integers(1, 8))):
            record = (int(RNG.integers(0, 10**9)), int(RNG.choice([0, 0, 4096, 8192])),
                      int(RNG.integers(0, 10**12)), int(RNG.choice([10**11, 4 * 10**11])))  # fmt: skip
            before = list(getattr(pkt, "int_hops", []))
            stamper.stamp(pkt, *record)
            replaced += len(before) == max_records and pkt.int_hops != before
            queue.int_stamp(rows, 0, max_records, code, salt, *record)
            queue.int_stamp.py_func(rows, 1, max_records, code, salt, *record)
        n = int(rows[0, KI.n_records])
        got = [
            tuple(rows[0, KI.n_records + 1 + 4 * i : KI.n_records + 5 + 4 * i]) for i in range(n)
        ]
        assert got == pkt.int_hops
        assert (rows[0] == rows[1]).all()
    assert (replaced > 0) == (rule != "none")


def twin_runner(state: list, twin: list, arrays_of: dict | None = None):
    """A function running a kernel of uno.net.compiled on ``state`` and its pure-Python twin on
    ``twin`` (copies of (ST, F, U, PK); ``arrays_of[kernel]``: which of them the kernel takes
    first, all four if absent) with the same further arguments, and checking that both return
    the same and leave the same arrays; it returns the kernel's result."""

    def both(kernel, *args):
        which = (arrays_of or {}).get(kernel, (0, 1, 2, 3))
        name = kernel.py_func.__name__
        with np.errstate(over="ignore"):
            a = kernel(*(state[i] for i in which), *args)
            b = kernel.py_func(*(twin[i] for i in which), *args)
        assert a == b, name
        for x, y in zip(state, twin, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)
        return a

    return both


def test_event_port_and_pfc_kernels_match_their_twins():
    """The event port's and PFC's kernels (receive with tail drop and lossless violations, end
    of serialisation, start, PAUSE / RESUME, the ingress counts, the drain time) against their
    pure-Python twins, from a paused mid-run state, on random arrivals, signals and events: the
    same state and the same return values after every step."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(uno.compose(
        [*PFC_HOSTS_PAUSED, "engine.dataplane=compiled", "engine.sample_interval_us=0"])))  # fmt: skip
    sim.start()
    sim.advance(40_000_000)  # 40 us: queues built, ports paused
    dp = sim.network.dataplane
    state = [dp.ST.copy(), dp.F.copy(), dp.U.copy(), dp.PK.copy()]
    twin = [a.copy() for a in state]
    ST = state[0]
    n_ports, n_ing = int(ST[H.n_ports]), int(ST[H.n_ingress])
    assert any(ST[int(ST[H.off_ports]) + p * P.size + P.paused] for p in range(n_ports))
    now = int(ST[H.now])
    eid = 1 << 30

    both = twin_runner(state, twin, _KERNEL_ARRAYS)

    seen = set()
    for _ in range(1500):
        op = RNG.random()
        p = int(RNG.integers(n_ports))
        pb = int(ST[H.off_ports]) + p * P.size
        if op < 0.4 and ST[H.free] >= 0:
            # a packet arrives (from a host, or from a switch's ingress queue)
            now += int(RNG.integers(0, 200_000))
            kind = int(RNG.integers(2))
            ing = -1 if RNG.random() < 0.5 or not n_ing else int(RNG.integers(n_ing))
            slot = int(ST[H.free])
            for arr_st, arr_pk in ((state[0], state[3]), (twin[0], twin[3])):
                arr_st[H.free] = arr_pk[slot, K.next]
                arr_st[H.in_pool] += 1
                arr_pk[slot, :] = 0
                arr_pk[slot, K.kind] = kind
                arr_pk[slot, K.bytes] = 64 if kind else 4160
                arr_pk[slot, K.ingress] = ing
                arr_st[H.eid] = eid << EID_SHIFT
            both(event_port.eport_receive, p, pb, slot, now)
            seen.add("receive")
        elif op < 0.55:
            tx = int(ST[pb + P.tx])
            if tx >= 0:
                both(event_port.eport_tx_done, p, pb, tx)
                seen.add("tx_done")
        elif op < 0.7:
            resume = bool(RNG.random() < 0.5)
            seen.add(("resume" if resume else "pause", both(event_port.pfc_signal, p, resume, now)))
        elif op < 0.8:
            both(event_port.eport_drain_end, pb, now)
        elif op < 0.9 and n_ing:
            i = int(RNG.integers(n_ing))
            size = int(RNG.choice([64, 4160]))
            if ST[int(ST[H.off_ingress]) + i * ING.size + ING.bytes] >= size:
                both(pfc.ingress_release, i, size, now)
                seen.add("release")
        else:
            eid += 1
            out = both(loop.run, now, 1, eid, eid)
            now = max(now, int(out[4]))
            seen.add("run")
    assert {"receive", "tx_done", "run", "release", ("pause", True), ("resume", True)} <= seen


#: which of (ST, F, U, PK) each kernel above takes first
_KERNEL_ARRAYS = {event_port.eport_receive: (0, 1, 2, 3), event_port.eport_tx_done: (0, 1, 2, 3),
                  event_port.pfc_signal: (0, 1, 3), event_port.eport_drain_end: (0, 3), pfc.ingress_release: (0,),
                  loop.run: (0, 1, 2, 3)}  # fmt: skip


def test_event_heap_orders_as_heapq():
    n_ports = 50
    cap = 2 * n_ports + 1
    for fn_push, fn_pop in ((events.heap_push, events.heap_pop),
                            (events.heap_push.py_func, events.heap_pop.py_func)):  # fmt: skip
        ST = np.zeros(H.size + 3 * cap, dtype=np.int64)
        ST[H.off_heap_t], ST[H.off_heap_e], ST[H.off_heap_p] = (H.size + k * cap for k in range(3))
        ST[H.heap_cap] = cap
        ref: list = []
        eid = 0
        out, want = [], []
        for _ in range(2000):
            if ref and (len(ref) >= cap or RNG.random() < 0.45):
                want.append(heapq.heappop(ref)[2])
                out.append(fn_pop(ST))
            else:
                t = int(RNG.integers(0, 30))  # many equal times: the eid decides
                eid += 1
                heapq.heappush(ref, (t, eid, eid))
                fn_push(ST, t, eid, eid)
        assert out == want


def test_stepping_gives_the_same_results():
    """advance() in 50-us increments and SimPy-style step() give the one-call results: the kernel
    stops at each increment's sentinel and resumes where it stopped."""
    from simpy.core import StopSimulation

    from uno.api import to_run_config
    from uno.build import build_simulation

    base = [*SMALL_INCAST, "cc=dctcp", "lb=ecmp", "workload.size_bytes=1000000",
            "engine.sample_interval_us=0"]  # fmt: skip
    want = run([*base, "engine.dataplane=python"]).flows

    def build():
        return build_simulation(to_run_config(uno.compose([*base, "engine.dataplane=compiled"])))

    sim = build()
    sim.start()
    t = 0
    while not sim.advance(t):
        t += 50_000_000
    pd.testing.assert_frame_equal(sim.finish().flows, want)

    sim = build()
    sim.start()
    try:
        while True:
            sim.engine.step()
    except StopSimulation:
        pass
    pd.testing.assert_frame_equal(sim.flows_table(), want)
