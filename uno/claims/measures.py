"""The measures claims use: our value from the flows tables of a claim's runs.

Each function here builds a measure: a callable taking ``{run name: RunResult}`` and returning
one float, with a docstring saying what the value is. A measure that cannot give a value (a
flow it needs is unfinished, a class is empty) raises :class:`MeasureError` with the reason.
FCT statistics are over finished flows of the selected class; p99 is pandas' linear quantile.
"""

from __future__ import annotations

import pandas as pd

from uno.metrics.analysis import (
    collective_times,
    flow_throughput,
    foreground,
    largest_share_deviation,
    normalised_throughput_ratio,
)


class MeasureError(Exception):
    """A measure has no value for these runs (the message says why)."""


def _flows(results: dict, run: str, cls: str | None, tag: str | None) -> pd.DataFrame:
    flows = results[run].flows
    if cls is not None:
        flows = flows[flows["cls"] == cls]
    if tag is not None:
        flows = flows[flows["tag"] == tag]
    if flows.empty:
        which = " ".join(x for x in (cls, tag) if x)
        raise MeasureError(f"run {run!r} has no {which + ' ' if which else ''}flows")
    unfinished = int(flows["fct_ps"].isna().sum())
    if unfinished:
        raise MeasureError(f"run {run!r}: {unfinished} of the flows measured did not finish")
    return flows


def fct_stat(results: dict, run: str, stat: str, cls: str | None = None,
             tag: str | None = None) -> float:  # fmt: skip
    """The ``stat`` ("mean", "p99" or "max") FCT of run ``run``'s flows (of class ``cls``,
    workload tag ``tag``), in ps."""
    fct = _flows(results, run, cls, tag)["fct_ps"].astype("float64")
    if stat == "mean":
        return float(fct.mean())
    if stat == "p99":
        return float(fct.quantile(0.99))
    if stat == "max":
        return float(fct.max())
    raise ValueError(f"stat: {stat!r} is not mean, p99 or max")


def fct_ratio(baseline: str, ours: str, stat: str = "mean", cls: str | None = None,
              tag: str | None = None):  # fmt: skip
    """The factor by which run ``ours`` beats run ``baseline``: ``stat`` FCT of ``baseline``
    over that of ``ours`` (> 1: ours is faster)."""
    who = f"{cls}-DC " if cls else ""

    def measure(results: dict) -> float:
        return fct_stat(results, baseline, stat, cls, tag) / fct_stat(results, ours, stat, cls, tag)

    measure.__doc__ = f"{stat} FCT of {who}flows, {baseline} / {ours}"
    return measure


def mean_over_seeds_ratio(baseline: str, ours: str, stat: str = "mean"):
    """Runs named ``<name>/<seed>``: the mean over a variant's seeds of each run's ``stat`` FCT,
    ``baseline`` over ``ours``."""

    def measure(results: dict) -> float:
        def avg(name):
            runs = [r for r in results if r.startswith(f"{name}/")]
            if not runs:
                raise MeasureError(f"no runs of {name!r}")
            return sum(fct_stat(results, r, stat) for r in runs) / len(runs)

        return avg(baseline) / avg(ours)

    measure.__doc__ = f"{stat} FCT averaged over seeds, {baseline} / {ours}"
    return measure


def min_of(*measures):
    """The least of ``measures``' values (a claim that must hold against every baseline)."""

    def measure(results: dict) -> float:
        return min(m(results) for m in measures)

    measure.__doc__ = "the least of: " + "; ".join(m.__doc__ or "?" for m in measures)
    return measure


def seeded(overrides: tuple[str, ...], name: str, seeds: int) -> dict[str, tuple[str, ...]]:
    """Runs ``<name>/<i>`` of ``overrides`` with ``seed=i``, i < ``seeds``."""
    return {f"{name}/{i}": (*overrides, f"seed={i}") for i in range(seeds)}


def _steady_rates(results: dict, run: str) -> pd.DataFrame:
    """Run ``run``'s sampled per-flow rates (its ``rates`` table) over the second half of the
    run (the steady-state window of the experiments' analyses)."""
    result = results[run]
    rates = result.tables.get("rates")
    if rates is None or rates.empty:
        raise MeasureError(f"run {run!r} sampled no rates (engine.sample_interval_us)")
    end_ps = result.summary["run"]["sim_time_us"] * 1_000_000
    window = rates[rates["time_ps"] > end_ps // 2]
    if window.empty:
        raise MeasureError(f"run {run!r}: no rate sample in the second half of the run")
    return window


def steady_goodput_ratio(baseline: str, ours: str):
    """Over the second half of each run: the flows' summed acknowledged rate, averaged over the
    samples, of run ``ours`` over that of run ``baseline`` (> 1: ours delivers more)."""

    def measure(results: dict) -> float:
        def total(run):
            return float(_steady_rates(results, run).groupby("time_ps")["acked_gbps"].sum().mean())

        return total(ours) / total(baseline)

    measure.__doc__ = f"summed acknowledged rate over the run's second half, {ours} / {baseline}"
    return measure


def steady_share_ratio(run: str, cls_a: str = "intra", cls_b: str = "inter"):
    """Over the second half of run ``run``: the mean acknowledged rate of a class-``cls_a``
    flow over that of a class-``cls_b`` flow (1: equal shares), of the workload's flows (not
    background traffic)."""

    def measure(results: dict) -> float:
        flows = foreground(results[run].flows)
        per_flow = _steady_rates(results, run).groupby("flow_id")["acked_gbps"].mean()
        ids_a = flows.loc[flows["cls"] == cls_a, "flow_id"]
        ids_b = flows.loc[flows["cls"] == cls_b, "flow_id"]
        a = per_flow.reindex(ids_a).fillna(0.0)
        b = per_flow.reindex(ids_b).fillna(0.0)
        if a.empty or b.empty or b.mean() == 0:
            raise MeasureError(f"run {run!r}: no {cls_a} or no {cls_b} flow delivered")
        return float(a.mean() / b.mean())

    measure.__doc__ = (f"acknowledged rate per {cls_a}-DC flow / per {cls_b}-DC flow over the "
                       "run's second half")  # fmt: skip
    return measure


def rtt_quantile_ratio(baseline: str, ours: str, q: str = "p99"):
    """Run ``baseline``'s per-packet RTT quantile ``q`` over run ``ours``'s (the summary's
    ``rtt_us``, ``engine.record_rtts``; > 1: ours is lower)."""

    def measure(results: dict) -> float:
        values = []
        for run in (baseline, ours):
            rtt = results[run].summary.get("rtt_us")
            if not rtt:
                raise MeasureError(f"run {run!r} counted no RTT samples (engine.record_rtts)")
            values.append(rtt[q])
        return values[0] / values[1]

    measure.__doc__ = f"{q} per-packet RTT, {baseline} / {ours}"
    return measure


def unfinished_flows(run: str):
    """How many of run ``run``'s flows did not finish."""

    def measure(results: dict) -> float:
        return float(results[run].flows["fct_ps"].isna().sum())

    measure.__doc__ = f"flows of {run} that did not finish"
    return measure


def fct_ms(run: str, stat: str = "mean", cls: str | None = None):
    """The ``stat`` FCT of run ``run``'s flows (of class ``cls``), in ms."""

    def measure(results: dict) -> float:
        return fct_stat(results, run, stat, cls) / 1e9

    measure.__doc__ = f"{stat} FCT of {cls + '-DC ' if cls else ''}flows, ms"
    return measure


def convergence_ratio(baseline: str, ours: str, window_ms: float = 10.0, skip_ms: float = 10.0,
                      threshold: float = 0.9):  # fmt: skip
    """How many times sooner run ``ours`` than run ``baseline`` brings Jain's index of its flows'
    sending rates, over windows of ``window_ms`` (the first ``skip_ms`` skipped: every sender
    starts at line rate), to ``threshold`` before the first flow completes: the baseline's time
    over ours (inf: the baseline never does; 0: ours never does). Needs the ``rates`` table."""
    from uno.metrics.analysis import first_time_at_or_above, jain_over_windows

    def reached(results: dict, run: str) -> int | None:
        result = results[run]
        rates = result.tables.get("rates")
        if rates is None or rates.empty:
            raise MeasureError(f"run {run!r} sampled no rates (engine.sample_interval_us)")
        jain = jain_over_windows(rates, result.flows, int(window_ms * 1e9))
        settled = jain[jain["window_start_ps"] >= int(skip_ms * 1e9)]
        return first_time_at_or_above(settled["window_end_ps"], settled["jain"], threshold)

    def measure(results: dict) -> float:
        t_ours, t_base = reached(results, ours), reached(results, baseline)
        if t_ours is None:
            return 0.0
        return float("inf") if t_base is None else t_base / t_ours

    measure.__doc__ = (f"time until Jain's index of the sending rates ({window_ms:g}-ms windows) "
                       f"reaches {threshold:g}, {baseline} / {ours}")  # fmt: skip
    return measure


def _collective_ratio(results: dict, name: str) -> float:
    """Mean CCT / ideal over the collectives of the runs ``<name>/<seed>``."""
    runs = [r for r in results if r.startswith(f"{name}/")]
    if not runs:
        raise MeasureError(f"no runs of {name!r}")
    ratios = pd.concat([collective_times(results[r].flows)["ratio"] for r in runs])
    if ratios.isna().any():
        raise MeasureError(f"{name!r}: {int(ratios.isna().sum())} collectives did not finish")
    return float(ratios.mean())


def collective_over_ideal(name: str):
    """Runs ``<name>/<seed>``: the collectives' completion time over their ideal, averaged over
    every collective (workload tag) of every seed (1: ideal)."""

    def measure(results: dict) -> float:
        return _collective_ratio(results, name)

    measure.__doc__ = f"collective completion time / ideal, mean over iterations and seeds, {name}"
    return measure


def collective_ratio(baseline: str, ours: str):
    """The factor by which ``ours`` beats ``baseline`` in mean collective completion time over
    the ideal (> 1: ours is faster)."""

    def measure(results: dict) -> float:
        return _collective_ratio(results, baseline) / _collective_ratio(results, ours)

    measure.__doc__ = f"mean collective completion time / ideal, {baseline} / {ours}"
    return measure


def median_over_seeds_ms(name: str, stat: str = "mean", cls: str | None = None):
    """Runs named ``<name>/<seed>``: the median over the seeds of each run's ``stat`` FCT (of
    class ``cls``), in ms (one run: its value)."""

    def measure(results: dict) -> float:
        runs = [r for r in results if r.startswith(f"{name}/")]
        if not runs:
            raise MeasureError(f"no runs of {name!r}")
        return float(pd.Series([fct_stat(results, r, stat, cls) for r in runs]).median()) / 1e9

    who = f"{cls}-DC " if cls else ""
    measure.__doc__ = f"{stat} FCT of {who}flows, ms, median over seeds"
    return measure


def _pause_us(results: dict, run: str) -> float:
    """Run ``run``'s total PFC pause time (every paused port's paused time summed, us)."""
    pfc = results[run].summary.get("pfc") or {}
    if "total_pause_us" not in pfc:
        raise MeasureError(f"run {run!r} has no PFC")
    return float(pfc["total_pause_us"])


def pfc_pause_us(run: str):
    """Run ``run``'s total PFC pause time (us)."""

    def measure(results: dict) -> float:
        return _pause_us(results, run)

    measure.__doc__ = f"total PFC pause time of {run} (us)"
    return measure


def pfc_pause_ratio(baseline: str, ours: str):
    """Total PFC pause time (every paused port's paused time summed) of run ``baseline`` over
    that of run ``ours`` (> 1: ours pauses less)."""

    def measure(results: dict) -> float:
        ours_us = _pause_us(results, ours)
        if ours_us == 0:
            raise MeasureError(f"run {ours!r} never paused")
        return _pause_us(results, baseline) / ours_us

    measure.__doc__ = f"total PFC pause time, {baseline} / {ours}"
    return measure


def slowdown_stat(results: dict, run: str, q: float, half: str, cls: str = "intra") -> float:
    """The ``q`` quantile of the FCT slowdown of run ``run``'s class-``cls`` flows in size half
    ``half``: "small" (at or below the class's median size) or "large" (above it)."""
    flows = _flows(results, run, cls, None)
    median = flows["size_bytes"].median()
    part = (
        flows[flows["size_bytes"] <= median]
        if half == "small"
        else flows[flows["size_bytes"] > median]
    )
    return float(part["slowdown"].quantile(q))


def slowdown_ratio(baseline: str, ours: str, q: float = 0.99, half: str = "large"):
    """The ``q`` quantile of intra-DC flows' FCT slowdown in size half ``half``, ``baseline``
    over ``ours`` (> 1: ours is faster)."""

    def measure(results: dict) -> float:
        return slowdown_stat(results, baseline, q, half) / slowdown_stat(results, ours, q, half)

    measure.__doc__ = (f"p{round(q * 100)} FCT slowdown of the {half} half of intra-DC flows, "
                       f"{baseline} / {ours}")  # fmt: skip
    return measure


def normalised_throughput(run: str):
    """Gear's normalised throughput ratio of run ``run``
    (:func:`uno.metrics.analysis.normalised_throughput_ratio`; 1: each class gets through what
    it offers)."""

    def measure(results: dict) -> float:
        result = results[run]
        rates = result.tables.get("rates")
        if rates is None or rates.empty:
            raise MeasureError(f"run {run!r} sampled no rates (engine.sample_interval_us)")
        try:
            return normalised_throughput_ratio(rates, result.flows)["normalised_ratio"]
        except ValueError as err:
            raise MeasureError(f"run {run!r}: {err}") from err

    measure.__doc__ = (
        f"normalised throughput ratio of {run} (intra/cross throughput over generated)"
    )
    return measure


def max_of(*measures):
    """The greatest of ``measures``' values (a claim that must hold for every scheme)."""

    def measure(results: dict) -> float:
        return max(m(results) for m in measures)

    measure.__doc__ = "the greatest of: " + "; ".join(m.__doc__ or "?" for m in measures)
    return measure


def _phase_throughput(results: dict, run: str, start_ms: float, end_ms: float) -> pd.Series:
    result = results[run]
    rates = result.tables.get("rates")
    if rates is None or rates.empty:
        raise MeasureError(f"run {run!r} sampled no rates (engine.sample_interval_us)")
    gbps = flow_throughput(rates, result.flows, int(start_ms * 1e9), int(end_ms * 1e9))
    if gbps.empty or not gbps.sum() > 0:
        raise MeasureError(f"run {run!r}: no flow ran and delivered in {start_ms}-{end_ms} ms")
    return gbps


def share_deviation(run: str, start_ms: float, end_ms: float):
    """How far the flows running all of (start_ms, end_ms] in run ``run`` are from equal
    shares of their total throughput: the largest |x / mean - 1| (0: equal)."""

    def measure(results: dict) -> float:
        return largest_share_deviation(_phase_throughput(results, run, start_ms, end_ms))

    measure.__doc__ = f"largest |x / mean - 1| of {run}'s flows in {start_ms}-{end_ms} ms"
    return measure


def cross_share(run: str, start_ms: float, end_ms: float):
    """The inter-DC flows' share of the throughput of the flows running all of
    (start_ms, end_ms] in run ``run``."""

    def measure(results: dict) -> float:
        gbps = _phase_throughput(results, run, start_ms, end_ms)
        flows = results[run].flows
        inter = set(flows.loc[flows["cls"] == "inter", "flow_id"])
        return float(gbps[gbps.index.isin(inter)].sum() / gbps.sum())

    measure.__doc__ = f"inter-DC share of {run}'s throughput in {start_ms}-{end_ms} ms"
    return measure
