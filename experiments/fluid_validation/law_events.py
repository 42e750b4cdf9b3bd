"""Which decisions of a congestion-control law differ between the packet and the fluid engine,
flow by flow: counters the law keeps in its state, the least value a state column takes, and
the FCT gap split by whether a flow's counter moved in each engine.

Usage::

    python experiments/fluid_validation/law_events.py [OVERRIDE ...]
        [--columns qa_events,md_events,gentle_events] [--least cwnd] [--split qa_events]
        [--fluid OVERRIDE]

    # UnoCC on the k=8 permutation (about 10 s; k=16, about 2 min):
    python experiments/fluid_validation/law_events.py topo=fat_tree topo.k=8 \\
        workload=permutation workload.size_bytes=4194304 scheme=uno_ecmp

The positional overrides make the run of both engines (the default run without any), ``--fluid``
adds one to the fluid run only (e.g. ``engine=fluid_fast``). ``--columns`` names columns of the
law's state (:mod:`uno.cc.law`, the law's ``state`` layout: e.g. UnoCC's ``qa_events``,
``md_events``, ``gentle_events``, ``epochs``), read at the end of the run; ``--least`` one whose
least value over the run is printed (a window's floor: ``cwnd``); ``--split`` one of
``--columns``: the mean FCTs of the flows where it is 0 or not, in each engine, side by side,
and the ``--least`` column just before and after it first rose above 0 (UnoCC's window around
its first Quick Adapt). Flows whose law has not every asked column are left out (their number
is printed). With ``engine.max_sim_time_ms=T engine.allow_unfinished=true`` among the
overrides the columns are read at T (the FCTs only of the flows finished in both runs).

It is a diagnostic, not part of the engines: the packet run uses the Python data plane
(``engine.dataplane=python``), where each sender's law state is a row of its controller
(:class:`uno.cc.adapter.LawControl`), read around each call of its law (an ACK batch, a
loss); the fluid engine is stepped one step at a time and its law rows (``cs``) read around
each step, for the flows that have started.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

import uno
from uno.api import to_run_config

QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]


def column_indices(law_name: str, names: list[str]) -> list[int] | None:
    """The state columns ``names`` of law ``law_name``, or None where it lacks one (or is no
    law: a controller without a shared definition)."""
    from uno.cc.registry import LAW_BY_NAME

    law = LAW_BY_NAME.get(law_name)
    if law is None or any(n not in law.state._fields for n in names):
        return None
    return [getattr(law.state, n) for n in names]


def check_columns(laws: set[str], columns: list[str], least: str) -> None:
    """Refuse, naming the option, a column that no law of the run (``laws``) keeps."""
    for option, names in (("--columns", columns), ("--least", [least])):
        for name in names:
            if all(column_indices(law, [name]) is None for law in laws):
                raise SystemExit(
                    f"{option}: no law of this run ({', '.join(sorted(laws))}) keeps {name!r}"
                )


class FlowLaw:
    """What one flow's law showed: the asked columns at the end of the run (``final``; None:
    its law lacks one), the least value of the watched column (``--least``), and that column
    just before and just after the split column (``--split``) first rose above 0 (NaN: it
    never did)."""

    def __init__(self, final, least: float, before: float, after: float):
        self.final, self.least, self.before, self.after = final, least, before, after


class Watch:
    """The watched column of ``n`` flows (by position), in both engines: its least value and
    its values around the split column's first rise (:class:`FlowLaw`)."""

    def __init__(self, n: int):
        self.least = np.full(n, np.nan)
        self.before = np.full(n, np.nan)
        self.after = np.full(n, np.nan)

    def saw(self, at, watched_before, watched_after, split_rose) -> None:
        """Flows ``at`` (a position, or an array of them) went through one call of their law
        (packets) or one step (fluid): the watched column before and after it, and whether the
        split column rose above 0 in it."""
        self.least[at] = np.fmin(self.least[at], watched_after)  # (NaN at first)
        first = split_rose & np.isnan(self.after[at])
        self.before[at] = np.where(first, watched_before, self.before[at])
        self.after[at] = np.where(first, watched_after, self.after[at])

    def records(self, ids, finals) -> dict:
        """A :class:`FlowLaw` per flow id (``ids`` by position), with its columns ``finals``."""
        return {fid: FlowLaw(final, self.least[i], self.before[i], self.after[i])
                for i, (fid, final) in enumerate(zip(ids, finals, strict=True))}  # fmt: skip


def packet_states(overrides: list[str], columns: list[str], least: str, split: str):
    """The packet run (Python data plane): its flows table and a :class:`FlowLaw` per flow id,
    read around each call of its law (an ACK batch, a loss)."""
    from uno.build import build_simulation
    from uno.cc import adapter

    cfg = to_run_config(uno.compose([*overrides, *QUIET, "engine.kind=packet",
                                     "engine.dataplane=python"]))  # fmt: skip
    sim = build_simulation(cfg)
    check_columns({getattr(f.sender.cc, "name", "") for f in sim.flows}, columns, least)
    watch = Watch(len(sim.flows))
    watched: dict[int, tuple[int, int, int]] = {}  # id(controller): its position, columns
    originals = {m: getattr(adapter.LawControl, m) for m in ("on_ack_batch", "_loss")}

    def watching(method):
        def call(self, *a, **k):
            mine = watched.get(id(self))
            if mine is None:
                return method(self, *a, **k)
            i, w, sp = mine
            w0, s0 = self.state[w], self.state[sp]
            out = method(self, *a, **k)
            watch.saw(i, w0, self.state[w], s0 <= 0.0 < self.state[sp])
            return out

        return call

    controllers = [flow.sender.cc for flow in sim.flows]
    for i, cc in enumerate(controllers):
        pair = column_indices(getattr(cc, "name", ""), [least, split])
        if pair is not None:
            watched[id(cc)] = (i, *pair)
    for name, method in originals.items():
        setattr(adapter.LawControl, name, watching(method))
    try:
        result = sim.run()
    finally:
        for name, method in originals.items():
            setattr(adapter.LawControl, name, method)
    finals = []
    for cc in controllers:
        at = column_indices(getattr(cc, "name", ""), columns)
        finals.append(None if at is None else cc.state[at].copy())
    return result.flows, watch.records([f.flow_id for f in sim.flows], finals)


def fluid_states(overrides, fluid, columns: list[str], least: str, split: str):
    """The fluid run stepped one step at a time: its flows table and a :class:`FlowLaw` per
    flow id, read around each step once the flow has started."""
    from uno.build import build_simulation
    from uno.fluid.columns import FS_START

    cfg = to_run_config(uno.compose([*overrides, *QUIET, "engine.kind=fluid", *fluid]))
    sim = build_simulation(cfg)
    laws = [plan.cc_name for plan in sim.flows]
    pairs = [column_indices(name, [least, split]) or [-1, -1] for name in laws]
    w_col, s_col = (np.array(c) for c in zip(*pairs, strict=True))
    rows = np.nonzero(w_col >= 0)[0]
    w_at, s_at = w_col[rows], s_col[rows]
    watch = Watch(len(laws))
    advance = sim.advance

    def one_step_at_a_time(k_start: int, k_stop: int) -> int:
        k = k_start
        while k < k_stop:
            w0, s0 = sim.cs[rows, w_at], sim.cs[rows, s_at]  # (copies: fancy indexing)
            reached = advance(k, k + 1)
            if reached == k:
                return k
            k = reached
            w1, s1 = sim.cs[rows, w_at], sim.cs[rows, s_at]
            on = sim.fs[rows, FS_START] <= k * sim.dt_ps  # (started)
            watch.saw(rows[on], w0[on], w1[on], (s0[on] <= 0.0) & (s1[on] > 0.0))
        return k

    sim.advance = one_step_at_a_time
    result = sim.run()
    finals = []
    for f, name in enumerate(laws):
        at = column_indices(name, columns)
        finals.append(None if at is None else sim.cs[f, at].copy())
    return result.flows, watch.records([plan.spec.flow_id for plan in sim.flows], finals)


def events_table(flows_p, laws_p, flows_f, laws_f, columns) -> pd.DataFrame:
    """One row per flow whose law keeps every column: its FCTs (us, NaN: unfinished), each
    column's final value in either engine (``<column>_p``, ``<column>_f``), the least watched
    value (``least_p``, ``least_f``) and that value just before and after the split column
    first rose (``before_*``, ``after_*``)."""
    fct_p = flows_p.set_index("flow_id")["fct_ps"].astype(float) / 1e6
    fct_f = flows_f.set_index("flow_id")["fct_ps"].astype(float) / 1e6
    rows = []
    for fid, p in laws_p.items():
        f = laws_f.get(fid)
        if p.final is None or f is None or f.final is None:
            continue
        row = {"flow_id": fid, "fct_p": fct_p[fid], "fct_f": fct_f[fid]}
        for eng, law in (("p", p), ("f", f)):
            row.update({f"least_{eng}": law.least, f"before_{eng}": law.before,
                        f"after_{eng}": law.after})  # fmt: skip
        for name, vp, vf in zip(columns, p.final, f.final, strict=True):
            row[f"{name}_p"], row[f"{name}_f"] = float(vp), float(vf)
        rows.append(row)
    return pd.DataFrame(rows).set_index("flow_id")


def split_gaps(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """The flows by whether ``column`` is 0 in the packet run and in the fluid run: their
    number, mean FCTs (us) and the fluid's gap (%)."""
    out = []
    for in_p in (False, True):
        for in_f in (False, True):
            chosen = table[
                ((table[f"{column}_p"] > 0) == in_p) & ((table[f"{column}_f"] > 0) == in_f)
            ]
            done = chosen.dropna(subset=["fct_p", "fct_f"])  # (unfinished: no FCT)
            p, f = done["fct_p"].mean(), done["fct_f"].mean()
            out.append({"packet": ">0" if in_p else "0", "fluid": ">0" if in_f else "0",
                        "flows": len(chosen), "fct_p_us": p, "fct_f_us": f,
                        "gap_pct": 100.0 * (f / p - 1.0) if len(done) else np.nan})  # fmt: skip
    return pd.DataFrame(out)


def quantiles(values: pd.Series, at=(10, 50, 90)) -> str:
    """``values``' percentiles ``at`` (NaN left out), as printed."""
    kept = values.dropna()
    if kept.empty:
        return "-"
    points = np.percentile(kept, at)
    form = ",.0f" if np.all(np.abs(points) >= 100.0) else ".3f"  # (bytes, or shares)
    return "  ".join(f"p{q} {v:{form}}" for q, v in zip(at, points, strict=True))


def report(table: pd.DataFrame, columns: list[str], least: str, split: str, left_out: int):
    done = table.dropna(subset=["fct_p", "fct_f"])
    print(f"{len(table)} flows, {len(done)} finished in both runs ({left_out} left out: their "
          "law lacks a column)")  # fmt: skip
    for name in columns:
        p, f = table[f"{name}_p"], table[f"{name}_f"]
        print(f"  {name:16s} packet {int((p > 0).sum()):5d} flows, {p.sum():9.0f} in all | "
              f"fluid {int((f > 0).sum()):5d} flows, {f.sum():9.0f} in all")  # fmt: skip
    for eng, label in (("p", "packet"), ("f", "fluid")):
        print(f"  least {least}, {label}: {quantiles(table[f'least_{eng}'], (1, 10, 50))}")
    for eng, label in (("p", "packet"), ("f", "fluid")):
        share = table[f"after_{eng}"] / table[f"before_{eng}"]
        print(
            f"  {least} just after {split} first rose, {label}: "
            f"{quantiles(table[f'after_{eng}'])}; over its value before: {quantiles(share)}"
        )
    print(f"mean FCT by {split} (0 or not) in each engine:")
    print(split_gaps(table, split).to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    p, f = done["fct_p"].mean(), done["fct_f"].mean()
    print(f"finished in both: packet {p:.1f} us, fluid {f:.1f} us ({100 * (f / p - 1):+.1f}%)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overrides", nargs="*", help="config overrides of both runs")
    ap.add_argument("--columns", default="qa_events,md_events,gentle_events",
                    help="state columns of the law read at the end (comma list)")  # fmt: skip
    ap.add_argument("--least", default="cwnd", help="a state column whose least value is kept")
    ap.add_argument("--split", default="", help="one of --columns (default: the first)")
    ap.add_argument("--fluid", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of the fluid run (repeatable)")  # fmt: skip
    args = ap.parse_args()
    columns = [c for c in args.columns.split(",") if c]
    split = args.split or (columns[0] if columns else "")
    if split not in columns:
        raise SystemExit(f"--split: {split!r} is not one of --columns {columns}")
    flows_p, laws_p = packet_states(args.overrides, columns, args.least, split)
    flows_f, laws_f = fluid_states(args.overrides, args.fluid, columns, args.least, split)
    table = events_table(flows_p, laws_p, flows_f, laws_f, columns)
    report(table, columns, args.least, split, len(flows_p) - len(table))


if __name__ == "__main__":
    main()
