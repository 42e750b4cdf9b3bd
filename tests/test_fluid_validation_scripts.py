"""experiments/fluid_validation's scripts: compare.py's ``--fluid`` overrides reach the fluid runs
only, sweep.py refuses an unknown case naming it, seeds.py reads its seeds or refuses them,
settled.py runs its settings, and the diagnostics (loss_spread.py, law_events.py) count what
they say."""

from __future__ import annotations

import collections
import importlib.util
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "experiments" / "fluid_validation"


def load(name: str):
    spec = importlib.util.spec_from_file_location(
        f"fluid_validation_{name}", SCRIPTS / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_applies_fluid_overrides_to_the_fluid_runs_only(monkeypatch):
    compare = load("compare")
    _, default, _, _ = compare.run("dumbbell", "fluid")
    monkeypatch.setattr(compare, "FLUID_OVERRIDES", ["engine.fluid_step_intra_rtt=0.25"])
    _, coarse, _, _ = compare.run("dumbbell", "fluid")
    step = coarse["run"]["fluid_step_us"] / default["run"]["fluid_step_us"]
    assert step == pytest.approx(2.0)  # the default step is 1/8 of the intra-DC RTT
    composed: list[str] = []

    def compose_only(overrides):
        composed.extend(overrides)
        raise Composed

    monkeypatch.setattr(compare.uno, "compose", compose_only)
    with pytest.raises(Composed):
        compare.run("dumbbell", "packet")
    assert "engine.kind=packet" in composed
    assert "engine.fluid_step_intra_rtt=0.25" not in composed


class Composed(Exception):
    """What the packet run was composed from has been seen."""


def test_sweep_refuses_an_unknown_case(monkeypatch, capsys):
    sweep = load("sweep")
    monkeypatch.setattr(sys, "argv", ["sweep.py", "--cases", "load0.2,nosuch"])
    with pytest.raises(SystemExit):
        sweep.main()
    assert "nosuch" in capsys.readouterr().err
    assert set(sweep.DEFAULT_CASES) < set(sweep.CASES)


def test_seeds_reads_a_range_or_a_list_and_refuses_anything_else(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(SCRIPTS))  # seeds.py imports compare.py beside it
    seeds = load("seeds")
    assert seeds.seed_list("1-4") == [1, 2, 3, 4]
    assert seeds.seed_list("2,5") == [2, 5]
    monkeypatch.setattr(sys, "argv", ["seeds.py", "--seeds", "one-two"])
    with pytest.raises(SystemExit):
        seeds.main()
    assert "--seeds" in capsys.readouterr().err


def test_settled_runs_each_setting_against_packets_and_the_default_steps(monkeypatch, capsys):
    """settled.py's two-flow case at one setting: the packet, default-step and settled runs,
    the settled one in fewer steps; an unknown case or a setting that is not a number is
    refused, naming it."""
    monkeypatch.syspath_prepend(str(SCRIPTS))  # settled.py imports sweep.py beside it
    settled = load("settled")
    monkeypatch.setattr(sys, "argv", ["settled.py", "--cases", "qa2", "--settled", "0.25"])
    settled.main()
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("qa2: packet") and out[2].startswith("  settled 0.25:")
    steps = [int(re.search(r"([\d,]+) steps,", line)[1].replace(",", "")) for line in out[1:3]]
    assert 0 < steps[1] < steps[0]
    for argv, named in ((["--cases", "qa2,nosuch"], "nosuch"), (["--settled", "half"], "half")):
        monkeypatch.setattr(sys, "argv", ["settled.py", *argv])
        with pytest.raises(SystemExit):
            settled.main()
        assert named in capsys.readouterr().err


def test_settled_applies_fluid_overrides_to_the_fluid_runs(monkeypatch, capsys):
    """settled.py's ``--fluid`` reaches its fluid runs: ACKs filed by arrival change the
    two-flow case at 0.5 (Quick Adapt no longer fires on an empty step), not its packet run."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    settled = load("settled")
    lines = []
    for extra in ([], ["--fluid", "engine.fluid_ack_spread=true"]):
        monkeypatch.setattr(sys, "argv", ["settled.py", "--cases", "qa2", *extra])
        settled.main()
        lines.append(capsys.readouterr().out.splitlines())
    packet = [re.search(r"packet ([\d.]+) s", out[1]) is not None for out in lines]
    assert packet == [True, True]
    gaps = [float(re.search(r"vs packet intra ([+-][\d.]+)", out[2])[1]) for out in lines]
    assert abs(gaps[1]) < abs(gaps[0])


def test_drops_by_port_counts_every_data_drop_once(monkeypatch):
    """drops_by_port.py's counts, over every flow of a short run, add up to the data packets
    the run's ports dropped, in the packet engine and in the hybrid (whose fluid flows lose no
    packet); the hybrid's packets meet the fluid bytes at shared ports."""
    monkeypatch.syspath_prepend(str(SCRIPTS))  # drops_by_port.py imports compare.py beside it
    drops = load("drops_by_port")
    args = type("Args", (), {"scheme": "uno_ecmp", "cls": "all", "max_bytes": 10**12,
                             "override": ["workload.n_flows=300"]})()  # fmt: skip
    counted = []
    for engine in (["engine.kind=packet"], ["engine.kind=hybrid", *drops.HYBRID["mixed40"]]):
        result, ids, by_port, shared, near, sized = drops.counted_run(engine, None, args)
        dropped = result.summary["packets"]["dropped"].get("buffer_full/data", 0)
        assert len(ids) == 300
        assert sum(by_port.values()) == dropped
        sizes = drops.by_size(sized, ids)
        assert sizes[("full", "dropped")] + sizes[("shorter", "dropped")] == dropped
        counted.append(dropped)
        if engine == ["engine.kind=packet"]:  # a drop-tail port drops only when nearly full
            near_drops = sum(n for key, n in near.items() if key[2] == "drops")
            near_arrivals = sum(n for key, n in near.items() if key[2] == "arrivals")
            assert near_drops == dropped and near_arrivals > dropped
            at_full = sizes[("full", "drops")] + sizes[("shorter", "drops")]
            arrived = sizes[("full", "arrivals")] + sizes[("shorter", "arrivals")]
            assert at_full == dropped and arrived > dropped
    assert counted[0] > 0
    assert shared["arrivals"] > 0 and shared["arrivals"] >= shared["full"]


def test_ack_room_finds_acks_refused_only_at_a_level_within_reach():
    """ack_room.py's dumbbell: a full port refuses an ACK only when the ACKs it holds sit at a
    level of its buffer's remainder (every 65 ACKs from it). With a remainder of 2,496 B
    (levels at 39, 104, 169 ACKs, ~133 held) the ACKs stop at 104 and some are refused; with
    832 B (levels 78 and 143, out of their reach) none is, though as many arrive while no data
    packet fits; every data packet that arrives then is dropped."""
    ack_room = load("ack_room")
    shares = []
    for buffer_bytes in (1_050_816, 1_049_152):
        overrides = [*ack_room.BASE, f"topo.buffer_bytes={buffer_bytes}",
                     ack_room.flows_override(0, 1)]  # fmt: skip
        counts, full_bytes, ack_bytes = ack_room.counted_run(overrides)
        port = counts["left->right"]
        assert port["data_full"] > 0 and port["data_dropped"] == port["data_full"]
        assert port["ack_full"] > 0
        assert (buffer_bytes % full_bytes) % ack_bytes == 0
        shares.append(port["ack_dropped"] / port["ack_full"])
    assert shares[0] > 0.1
    assert shares[1] == 0.0


def test_incast_grid_prints_each_class_against_packets_and_refuses_bad_sizes(monkeypatch, capsys):
    """incast_grid.py: 100-kB flows lose nothing, so the fluid's class means are the packet
    run's within half a percent; sizes that are not byte counts are refused, naming the
    option."""
    grid = load("incast_grid")
    line = grid.row("dctcp", 100_000, "fluid", [])
    gaps = [float(g) for g in re.findall(r"([+-]\d+\.\d)%", line)]
    assert len(gaps) == 2 and all(abs(g) <= 0.5 for g in gaps)
    assert "timeouts 0/0" in line
    monkeypatch.setattr(sys, "argv", ["incast_grid.py", "--sizes", "1MB"])
    with pytest.raises(SystemExit):
        grid.main()
    assert "--sizes" in capsys.readouterr().err


def test_loss_spread_windows_add_up_and_leave_the_fluid_run_as_it_is(monkeypatch):
    """loss_spread.py's window-by-window counts add up to its whole-span counts in both
    engines, a port drops no more than reaches it, and stepping the fluid run one step at a
    time to count leaves its flows' results as a plain run's."""
    monkeypatch.syspath_prepend(str(SCRIPTS))  # loss_spread.py imports compare.py beside it
    spread = load("loss_spread")
    args = SimpleNamespace(port="dc0/border->dc1/border#1", from_ms=0.2, to_ms=1.0,
                           scheme="uno_ecmp", scenario="mixed40", window_us=100.0, fluid=[],
                           override=["workload.n_flows=300"])  # fmt: skip
    for counts in (spread.packet_counts, spread.fluid_counts):
        arrivals, drops = counts(args)
        whole_args = SimpleNamespace(**{**vars(args), "window_us": 0.0})
        whole_arrivals, whole_drops = counts(whole_args)
        assert {w for (_, w) in whole_arrivals} == {0}
        assert len({w for (_, w) in arrivals}) > 1
        by_flow = spread.per_flow(arrivals)
        assert by_flow.keys() == spread.per_flow(whole_arrivals).keys()
        for fid, got in spread.per_flow(whole_arrivals).items():
            assert by_flow[fid] == pytest.approx(got)
        assert sum(drops.values()) == pytest.approx(sum(whole_drops.values()))
        assert sum(arrivals.values()) > 0
        assert all(drops[key] <= arrivals[key] + 1e-9 for key in drops)
    import uno
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose([*spread.scenario(args), "engine.kind=fluid",
                                     f"engine.max_sim_time_ms={args.to_ms}"]))  # fmt: skip
    plain = build_simulation(cfg).run().flows
    stepped = spread.fluid_counted(args)[0].flows
    assert plain["fct_ps"].equals(stepped["fct_ps"])
    assert plain["sent_bytes"].equals(stepped["sent_bytes"])


def test_loss_spread_lockout_runs_count_windows_lost_back_to_back(monkeypatch):
    """loss_spread.py's lock-outs: a window counts where the flow brought enough packets to the
    port, it is a lock-out where it lost at least the share, and a run ends at a window that
    is not one, or at a window the flow sent too little in."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    spread = load("loss_spread")
    arrivals = {("a", 1, 0): 30, ("a", 1, 1): 30, ("a", 1, 2): 30, ("a", 1, 4): 30,
                ("a", 2, 0): 10, ("b", 3, 0): 25, ("b", 3, 2): 25}  # fmt: skip
    drops = {("a", 1, 0): 30, ("a", 1, 1): 29, ("a", 1, 2): 0, ("a", 1, 4): 30,
             ("a", 2, 0): 10, ("b", 3, 0): 25, ("b", 3, 2): 25}  # fmt: skip
    sending, locked, runs, starts = spread.lockout_runs(arrivals, drops, 20, 0.95)
    assert sending == 6  # flow 2's 10 packets do not count
    assert locked == 5
    assert sorted(zip(starts.tolist(), runs.tolist(), strict=True)) == [
        (0, 1),
        (0, 2),
        (2, 1),
        (4, 1),
    ]
    _, locked, runs, _ = spread.lockout_runs(arrivals, drops, 20, 1.0)
    assert locked == 4 and sorted(runs.tolist()) == [1, 1, 1, 1]


def test_loss_spread_ports_count_each_port_as_the_one_port_count_does(monkeypatch):
    """With ``--ports`` the counts at each matching port are those of that port counted alone,
    in both engines, and a pattern that matches no port is refused naming the option."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    spread = load("loss_spread")
    one = "dc0/border->dc1/border#1"
    args = SimpleNamespace(port=one, ports="", from_ms=0.2, to_ms=0.8, scheme="uno_ecmp",
                           scenario="mixed40", window_us=100.0, fluid=[],
                           override=["workload.n_flows=300"])  # fmt: skip
    many = SimpleNamespace(**{**vars(args), "ports": r"dc0/border->dc1/border#[01]$"})
    for alone, counted in ((spread.packet_counts, spread.packet_port_counts),
                           (spread.fluid_counts, lambda a: spread.fluid_port_counted(a)[1:])):  # fmt: skip
        arrivals, drops = alone(args)
        both_arrivals, both_drops = counted(many)
        assert {port for (port, _, _) in both_arrivals} == {one, one[:-1] + "0"}
        mine = collections.Counter({k[1:]: n for k, n in both_arrivals.items() if k[0] == one})
        assert mine == pytest.approx({k: n for k, n in arrivals.items() if n > 0})
        lost = {k[1:]: n for k, n in both_drops.items() if k[0] == one}
        assert sum(lost.values()) == pytest.approx(sum(drops.values()))
    nowhere = SimpleNamespace(**{**vars(args), "ports": "no-such-port"})
    with pytest.raises(SystemExit, match="--ports .no-such-port.: no such link"):
        spread.fluid_port_counted(nowhere)


def test_law_events_keeps_the_least_value_and_the_window_around_the_first_rise():
    """law_events.py's record of one flow: the least watched value over the calls, and the
    watched value around the first call in which the split column rose, kept once."""
    events = load("law_events")
    watch = events.Watch(2)
    watch.saw(1, 100.0, 90.0, False)
    watch.saw(1, 90.0, 40.0, True)
    watch.saw(1, 40.0, 60.0, False)
    watch.saw(1, 60.0, 20.0, True)  # (a second rise is not the first)
    record = watch.records([7, 8], [None, None])[8]
    assert (record.least, record.before, record.after) == (20.0, 90.0, 40.0)
    table = pd.DataFrame(
        {
            "fct_p": [1.0, 2.0, 4.0, np.nan],
            "fct_f": [1.0, 1.0, 3.0, 5.0],
            "qa_p": [0.0, 1.0, 2.0, 1.0],
            "qa_f": [0.0, 1.0, 1.0, 0.0],
        }  # fmt: skip
    )
    split = events.split_gaps(table, "qa").set_index(["packet", "fluid"])
    assert split.loc[("0", "0"), "flows"] == 1 and split.loc[("0", "0"), "gap_pct"] == 0.0
    assert split.loc[(">0", ">0"), "flows"] == 2
    assert split.loc[(">0", ">0"), "gap_pct"] == pytest.approx(100.0 * (4.0 / 6.0 - 1.0))
    # (the flow unfinished in packets counts, and has no FCT to average)
    assert split.loc[(">0", "0"), "flows"] == 1 and np.isnan(split.loc[(">0", "0"), "gap_pct"])


def test_law_events_reads_quick_adapt_as_the_law_takes_it_in_both_engines(monkeypatch, capsys):
    """law_events.py on UnoCC's k=4 permutation: where a flow's first Quick Adapt came, its
    window after it is under beta = 0.5 of the window before (Alg. 1 OnQA: the window becomes
    the bytes acknowledged in the period, below beta x cwnd), in the packet run at the call and
    in the fluid run at the step; the least window is at most that; a column no law keeps is
    refused, naming the option."""
    events = load("law_events")
    overrides = ["topo=fat_tree", "topo.k=4", "workload=permutation", "workload.start_us=0",
                 "workload.size_bytes=1048576", "scheme=uno_ecmp"]  # fmt: skip
    columns = ["qa_events", "md_events"]
    flows_p, laws_p = events.packet_states(overrides, columns, "cwnd", "qa_events")
    flows_f, laws_f = events.fluid_states(overrides, [], columns, "cwnd", "qa_events")
    table = events.events_table(flows_p, laws_p, flows_f, laws_f, columns)
    assert len(table) == 16
    for eng in ("p", "f"):
        adapted = table[table[f"qa_events_{eng}"] > 0]
        assert len(adapted) >= 4  # (flows that share a link adapt: the law's threshold)
        # (the fluid's step also adds the additive increase of the step's other batches)
        assert (adapted[f"after_{eng}"] < 0.52 * adapted[f"before_{eng}"]).all()
        assert (adapted[f"least_{eng}"] <= adapted[f"after_{eng}"]).all()
        assert table.loc[table[f"qa_events_{eng}"] == 0, f"after_{eng}"].isna().all()
    monkeypatch.setattr(sys, "argv", ["law_events.py", *overrides, "--columns", "alpha"])
    with pytest.raises(SystemExit, match="--columns: no law of this run"):
        events.main()
