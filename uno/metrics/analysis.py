"""Analysis helpers shared by ``experiments/*/analyze.py`` and notebooks. They read only the
result tables (``flows``, ``rates``, ``queues``...) of runs, never the simulator."""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from uno.core.units import ms_to_ps, us_to_ps
from uno.metrics.io import SUMMARY_FILE, read_run
from uno.metrics.summary import jain_index


def windowed_flow_rates(
    rates: pd.DataFrame, window_ps: int, value: str = "sent_gbps"
) -> pd.DataFrame:
    """Mean rate of each flow in consecutive windows of ``window_ps``: columns window_start_ps,
    flow_id, rate_gbps. A sample at time t covers (t - interval, t]; it goes to the window
    holding its interval."""
    df = rates[["time_ps", "flow_id", value]].copy()
    df["window_start_ps"] = ((df["time_ps"] - 1) // window_ps) * window_ps
    out = df.groupby(["window_start_ps", "flow_id"], as_index=False)[value].mean()
    return out.rename(columns={value: "rate_gbps"})


def jain_over_windows(
    rates: pd.DataFrame,
    flows: pd.DataFrame,
    window_ps: int,
    until_ps: int | None = None,
    value: str = "sent_gbps",
) -> pd.DataFrame:
    """Jain's fairness index of the flows' mean rates in each window (flows with no sample in a
    window count as rate 0 there). Only windows that end by ``until_ps`` (default: the first
    flow completion) are kept. Columns: window_start_ps, window_end_ps, jain, total_gbps."""
    if until_ps is None:
        finished = flows["finish_ps"].dropna()
        until_ps = int(finished.min()) if len(finished) else int(rates["time_ps"].max())
    per = windowed_flow_rates(rates, window_ps, value)
    table = per.pivot(index="window_start_ps", columns="flow_id", values="rate_gbps")
    table = table.reindex(columns=flows["flow_id"].to_numpy()).fillna(0.0)
    table = table[table.index + window_ps <= until_ps]
    return pd.DataFrame(
        {
            "window_start_ps": table.index.to_numpy(dtype=np.int64),
            "window_end_ps": table.index.to_numpy(dtype=np.int64) + window_ps,
            "jain": [jain_index(row) for row in table.to_numpy()],
            "total_gbps": table.sum(axis=1).to_numpy(),
        }
    )


def first_time_at_or_above(series_time_ps, series_value, threshold: float) -> int | None:
    """First time (ps) at which the value reaches ``threshold``, or None if it never does."""
    for t, v in zip(series_time_ps, series_value, strict=True):
        if v >= threshold:
            return int(t)
    return None


def class_mean_rates(
    rates: pd.DataFrame,
    flows: pd.DataFrame,
    start_ps: int,
    end_ps: int | None = None,
    value: str = "sent_gbps",
) -> dict[str, float]:
    """Mean per-flow rate of each class (intra/inter) over samples in (start_ps, end_ps]."""
    df = rates[rates["time_ps"] > start_ps]
    if end_ps is not None:
        df = df[df["time_ps"] <= end_ps]
    df = df.merge(flows[["flow_id", "cls"]], on="flow_id")
    per_flow = df.groupby(["cls", "flow_id"])[value].mean()
    return {cls: float(per_flow[cls].mean()) for cls in per_flow.index.get_level_values(0).unique()}


def foreground(flows: pd.DataFrame) -> pd.DataFrame:
    """The workload's flows of a flows table, without the ``background.*`` traffic's (tagged
    ``background_*``)."""
    return flows[~flows["tag"].astype(str).str.startswith("background_")]


def class_throughput(
    rates: pd.DataFrame,
    flows: pd.DataFrame,
    start_ps: int = -1,
    end_ps: int | None = None,
    foreground_only: bool = False,
) -> pd.DataFrame:
    """Aggregate acknowledged throughput (Gb/s) of each class at every sample in
    (start_ps, end_ps]: index time_ps, columns intra, inter; with ``foreground_only``, of the
    workload's flows alone (not the ``background.*`` traffic's, tagged ``background_*``)."""
    if foreground_only:
        flows = foreground(flows)
    df = rates[rates["time_ps"] > start_ps]
    if end_ps is not None:
        df = df[df["time_ps"] <= end_ps]
    df = df.merge(flows[["flow_id", "cls"]], on="flow_id")
    table = df.pivot_table(index="time_ps", columns="cls", values="acked_gbps", aggfunc="sum")
    return table.reindex(columns=["intra", "inter"]).fillna(0.0)


def phase_windows_ps(flows: pd.DataFrame, end_ps: int) -> list[tuple[int, int]]:
    """The settled half of every phase of a run whose flows start and stop at set times: the
    phases lie between consecutive start and stop times (``start_ps``, ``stop_ps`` when the
    flows table has it) and the run's end ``end_ps``; each window is a phase's second half (ps)."""
    times = set(flows["start_ps"].astype("int64"))
    if "stop_ps" in flows:
        times |= set(flows["stop_ps"].dropna().astype("int64"))
    edges = sorted(t for t in times | {end_ps} if 0 <= t <= end_ps)
    if edges[0] != 0:
        edges.insert(0, 0)
    return [((a + b) // 2, b) for a, b in itertools.pairwise(edges) if b > a]


def flow_throughput(
    rates: pd.DataFrame, flows: pd.DataFrame, start_ps: int, end_ps: int
) -> pd.Series:
    """The mean acknowledged throughput (Gb/s) over (start_ps, end_ps] of each flow that runs
    all that time (started by ``start_ps``, not stopped before ``end_ps``), by flow id."""
    stop = flows["stop_ps"] if "stop_ps" in flows else pd.Series(pd.NA, index=flows.index)
    active = flows.loc[(flows["start_ps"] <= start_ps) & (stop.isna() | (stop >= end_ps)),
                       "flow_id"]  # fmt: skip
    df = rates[(rates["time_ps"] > start_ps) & (rates["time_ps"] <= end_ps)]
    df = df[df["flow_id"].isin(active)]
    return df.groupby("flow_id")["acked_gbps"].mean()


def largest_share_deviation(throughput: pd.Series) -> float:
    """How far the flows are from equal shares: the largest |x / mean - 1| over their
    throughputs ``throughput`` (0: all equal)."""
    mean = float(throughput.mean())
    if not mean > 0:
        raise ValueError("no flow delivered anything")
    return float((throughput / mean - 1.0).abs().max())


def normalised_throughput_ratio(
    rates: pd.DataFrame, flows: pd.DataFrame, start_ps: int | None = None
) -> dict[str, float]:
    """Gear's normalised throughput ratio (Han et al., IEEE/ACM ToN, §IV-B1): (intra-DC /
    inter-DC acknowledged throughput) / (intra-DC / inter-DC bytes generated). Throughput is each
    class's summed sampled rate over the samples in (start_ps, last arrival]; ``start_ps``
    defaults to the longest inter-DC base RTT (when the first inter-DC ACKs return). Returns the
    window (ps), both throughputs (Gb/s), the generated ratio and the normalised ratio."""
    if start_ps is None:
        start_ps = int(flows.loc[flows["cls"] == "inter", "base_rtt_ps"].max())
    end_ps = int(flows["start_ps"].max())
    per_class = class_throughput(rates, flows, start_ps, end_ps)
    if per_class.empty:
        raise ValueError(f"no rate sample between {start_ps} ps and the last arrival ({end_ps} ps)")
    generated = flows.groupby("cls")["size_bytes"].sum()
    intra, inter = float(per_class["intra"].mean()), float(per_class["inter"].mean())
    gen_ratio = float(generated.get("intra", 0) / generated.get("inter", np.nan))
    return {
        "start_ps": start_ps,
        "end_ps": end_ps,
        "intra_gbps": intra,
        "inter_gbps": inter,
        "generated_ratio": gen_ratio,
        "normalised_ratio": (intra / inter) / gen_ratio if inter > 0 else float("inf"),
    }


def bottleneck_utilisation(tables: dict[str, pd.DataFrame], interval_us: float) -> float | None:
    """Steady-state utilisation of the shared bottleneck (the port that sent the most bytes):
    the flows' summed acknowledged rate, sampled every ``interval_us``, over the middle 80% of
    the time all flows run (from the last start to the first finish), divided by the port's
    rate. Samples are binned to the nearest multiple of the interval (the fluid engine samples
    at its step boundaries, the hybrid's two parts each at their own). None if the engine
    samples no rates (max-min). ``tables``: a run's tables (``RunResult.tables``, :func:`read_run`)."""
    rates = tables.get("rates")
    ports = tables.get("ports")
    flows = tables["flows"]
    if rates is None or ports is None or rates.empty or flows["finish_ps"].isna().all():
        return None
    capacity_gbps = ports.loc[ports["tx_bytes"].idxmax(), "rate_gbps"]
    first, last = flows["start_ps"].max(), flows["finish_ps"].min()
    lo, hi = first + 0.1 * (last - first), first + 0.9 * (last - first)
    window = rates[(rates["time_ps"] >= lo) & (rates["time_ps"] <= hi)]
    if window.empty:
        return None
    sample = (window["time_ps"] / (interval_us * 1e6)).round()
    return float(window.groupby(sample)["acked_gbps"].sum().mean() / capacity_gbps)


def collective_times(flows: pd.DataFrame) -> pd.DataFrame:
    """Per collective (the flows sharing a workload tag, e.g. one all-reduce iteration): its
    completion time (the last flow's finish from the first flow's start; NaN when a flow did not
    finish), its ideal (the slowest flow's ideal FCT, all flows in parallel) and their ratio.
    Columns ``tag``, ``cct_ps``, ``ideal_ps``, ``ratio``."""
    rows = []
    for tag, group in flows.groupby("tag"):
        done = bool(group["finish_ps"].notna().all())
        cct = float(group["finish_ps"].max() - group["start_ps"].min()) if done else np.nan
        ideal = float(group["ideal_fct_ps"].max())
        rows.append({"tag": tag, "cct_ps": cct, "ideal_ps": ideal, "ratio": cct / ideal})
    return pd.DataFrame(rows, columns=["tag", "cct_ps", "ideal_ps", "ratio"])


def runs_in(path: str | Path) -> list[Path]:
    """Complete run directories at or below ``path`` (those holding ``summary.json``), sorted."""
    path = Path(path)
    if (path / SUMMARY_FILE).exists():
        return [path]
    runs = sorted(p.parent for p in path.rglob(SUMMARY_FILE))
    if not runs:
        raise FileNotFoundError(f"no complete run (with {SUMMARY_FILE}) under {path}")
    return runs


def load_runs(path: str | Path) -> list[dict]:
    """Every complete run under ``path``: its tables, summary and resolved config (dict)."""
    out = []
    for run_dir in runs_in(path):
        run = read_run(run_dir)
        cfg_path = run_dir / "config.yaml"
        if cfg_path.exists():
            run["config"] = yaml.safe_load(cfg_path.read_text())
        run["dir"] = run_dir
        out.append(run)
    return out


def scheme_label(run: dict) -> str:
    """A short label for a run's scheme: the Hydra ``cc`` option it was launched with (e.g.
    ``uno_artifact``) if known, else the algorithms (``mprdma+bbr``)."""
    meta = run["summary"]["run"]
    choices = meta.get("choices") or {}
    return choices.get("cc") or meta["cc"]


def write_json(obj, path: str | Path) -> None:
    Path(path).write_text(json.dumps(obj, indent=2, default=float) + "\n")


def analysis_parser(doc: str | None, steady_state: bool = False) -> argparse.ArgumentParser:
    """The command line every ``experiments/*/analyze.py`` shares: a run or sweep directory
    and ``--out`` for the figure and JSON (default: that directory). ``steady_state`` adds
    ``--from-ms``, the start of a long run's steady-state window (see
    :func:`steady_state_window_ps`)."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("path", help="a run directory or a multirun sweep directory")
    ap.add_argument("--out", help="where to write the figure and JSON (default: path)")
    if steady_state:
        ap.add_argument(
            "--from-ms",
            type=float,
            default=None,
            help="start of the steady-state window in ms (default: half the simulated time)",
        )
    return ap


def steady_state_window_ps(summary: dict, from_ms: float | None) -> tuple[int, int]:
    """(start, end) in ps of a run's steady-state window: from ``from_ms`` (default: half the
    simulated time) to the end of the run, read from the run's ``summary``."""
    end_ps = us_to_ps(summary["run"]["sim_time_us"])
    return (ms_to_ps(from_ms) if from_ms is not None else end_ps // 2), end_ps


def output_dir(args: argparse.Namespace) -> Path:
    """``--out`` (or the analysed directory), created if needed."""
    out = Path(args.out or args.path)
    out.mkdir(parents=True, exist_ok=True)
    return out
