"""Standard tables and figures of a sweep of realistic-traffic runs (Uno paper Figs. 10-12):
per-class FCT statistics by scheme, FCT CDFs, slowdown per flow-size bucket (p50 and p99).

The input is the combined flows table of a sweep with a ``label`` column naming each run's scheme
(:func:`run_flows`). ``uno-plot SWEEP_DIR`` draws
the standard figures as PNG files next to the sweep.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from uno.core.console import quiet_broken_pipes

PS_PER_US = 10**6
#: bars go on a log axis only when the largest is more than this many times the smallest;
#: below that a linear axis from 0 shows every bar and keeps their lengths comparable
LOG_SPAN = 30.0
#: flow-size bucket edges in bytes (the Uno paper's Figs. 10-12 group by size class)
SIZE_EDGES = (0, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, float("inf"))


def run_flows(path: str | Path) -> pd.DataFrame:
    """Every complete run's flows under ``path``, with ``label`` (the run's scheme: the
    ``scheme`` config group it was launched with, else cc, load balancer and coding), ``load``,
    ``rtt_ratio`` and ``seed`` from its config."""
    from uno.metrics.analysis import load_runs

    frames = []
    for run in load_runs(path):
        cfg = run["config"]
        choices = run["summary"]["run"].get("choices") or {}
        label = choices.get("scheme")
        if not label or label == "null":
            ec = "+ec" if cfg["ec"]["kind"] != "none" else ""
            label = f"{choices.get('cc') or cfg['cc']['algo']}+{cfg['lb']['algo']}{ec}"
        f = run["flows"].copy()
        f["label"] = label
        f["load"] = cfg["workload"].get("load")
        f["rtt_ratio"] = cfg["topo"].get("inter_rtt_ratio")
        f["run"] = str(run["dir"])
        frames.append(f)
    if not frames:
        raise FileNotFoundError(f"{path}: no complete runs")
    return pd.concat(frames, ignore_index=True)


def class_table(flows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Finished flows' mean and p99 FCT (µs) and p99 slowdown per ``by`` groups and class."""
    done = flows[flows["finish_ps"].notna()].copy()
    done["fct_us"] = done["fct_ps"].astype(float) / PS_PER_US
    g = done.groupby([*by, "cls"])
    table = pd.DataFrame(
        {
            "flows": g.size(),
            "mean_fct_us": g["fct_us"].mean(),
            "p99_fct_us": g["fct_us"].quantile(0.99),
            "p99_slowdown": g["slowdown"].quantile(0.99),
        }
    )
    unfinished = flows[flows["finish_ps"].isna()].groupby([*by, "cls"]).size()
    table["unfinished"] = unfinished.reindex(table.index).fillna(0).astype(int)
    return table


def p99_ratios(table: pd.DataFrame, paper: dict, reference: str = "uno") -> dict:
    """For each ``(cls, baseline): paper_ratio`` in ``paper``, the ratio of the baseline's p99 FCT
    to ``reference``'s in ``table`` (a :func:`class_table` grouped by ``label`` only) beside the
    paper's. Pairs missing from the table are left out."""
    out = {}
    for (cls, base), paper_ratio in paper.items():
        try:
            ratio = table.loc[(base, cls), "p99_fct_us"] / table.loc[(reference, cls), "p99_fct_us"]
        except KeyError:
            continue
        out[f"{cls} p99 {base}/{reference}"] = {
            "ours": round(float(ratio), 2),
            "paper": paper_ratio,
        }
    return out


def slowdown_by_size(flows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """p50 and p99 slowdown per ``by`` groups, class and flow-size bucket."""
    done = flows[flows["finish_ps"].notna()].copy()
    labels = [
        f"{_size(a)}-{_size(b)}" for a, b in zip(SIZE_EDGES[:-1], SIZE_EDGES[1:], strict=True)
    ]
    done["size_bucket"] = pd.cut(done["size_bytes"], SIZE_EDGES, labels=labels, right=False)
    g = done.groupby([*by, "cls", "size_bucket"], observed=True)["slowdown"]
    return pd.DataFrame({"flows": g.size(), "p50": g.median(), "p99": g.quantile(0.99)})


def _size(b: float) -> str:
    if b == float("inf"):
        return "inf"
    for unit, div in (("MB", 1e6), ("KB", 1e3)):
        if b >= div:
            return f"{b / div:g}{unit}"
    return f"{b:g}B"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _class_panels(classes):
    """A figure with one panel per flow class: (pyplot, figure, [(axes, class), ...])."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(classes), figsize=(5 * len(classes), 3.6), squeeze=False)
    return plt, fig, list(zip(axes[0], classes, strict=True))


def plain_number(value: float, _pos=None) -> str:
    """A tick label as a plain number (``20000``, ``0.5``), never ``2×10⁴``."""
    return np.format_float_positional(value, precision=6, unique=True, trim="-")


def log_axis(ax, which: str, label: str) -> None:
    """Make ``ax``'s ``which`` ("x" or "y") axis logarithmic, say so in its label and label
    only its decades, as plain numbers (matplotlib's own labels its minor ticks ``4.2×10²``
    when a panel spans less than a decade)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_formatter(FuncFormatter(plain_number))
    axis.set_minor_formatter(NullFormatter())
    axis.set_label_text(f"{label} (log scale)")


def bar_value_axis(ax, values, label: str) -> None:
    """The value (y) axis of bars of ``values``: linear from 0, or logarithmic when the
    positive values span more than :data:`LOG_SPAN` (its bottom the decade below the
    smallest); plain-number ticks either way."""
    from matplotlib.ticker import FuncFormatter

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if len(v) and v.max() > LOG_SPAN * v.min():
        log_axis(ax, "y", label)
        ax.set_ylim(bottom=10 ** np.floor(np.log10(v.min())))
        return
    ax.set_yscale("linear")
    ax.yaxis.set_major_formatter(FuncFormatter(plain_number))
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)


def _save(plt, fig, out_png: Path, title: str) -> None:
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)


def class_bars_figure(table: pd.DataFrame):
    """Bars of mean and p99 FCT per scheme, one panel per class (the table of
    :func:`class_table` grouped by ``label`` only): (pyplot, figure)."""
    classes = sorted(set(table.index.get_level_values("cls")))
    plt, fig, panels = _class_panels(classes)
    for ax, cls in panels:
        sub = table.xs(cls, level="cls")
        x = np.arange(len(sub))
        ax.bar(x - 0.2, sub["mean_fct_us"], 0.4, label="mean")
        ax.bar(x + 0.2, sub["p99_fct_us"], 0.4, label="p99")
        ax.set_xticks(x, [str(i) for i in sub.index], rotation=20)
        bar_value_axis(ax, [*sub["mean_fct_us"], *sub["p99_fct_us"]], "FCT (µs)")
        ax.set_title(f"{cls}-DC flows")
        ax.legend()
    return plt, fig


def plot_class_bars(table: pd.DataFrame, out_png: Path, title: str = "") -> None:
    """:func:`class_bars_figure` saved as ``out_png``."""
    plt, fig = class_bars_figure(table)
    _save(plt, fig, out_png, title)


def plot_fct_cdfs(flows: pd.DataFrame, out_png: Path, title: str = "") -> None:
    done = flows[flows["finish_ps"].notna()]
    classes = sorted(done["cls"].unique())
    plt, fig, panels = _class_panels(classes)
    for ax, cls in panels:
        for label, g in done[done["cls"] == cls].groupby("label"):
            x = np.sort(g["fct_ps"].to_numpy(dtype=float) / PS_PER_US)
            ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=str(label))
        log_axis(ax, "x", "FCT (µs)")
        ax.set_ylabel("CDF")
        ax.set_title(f"{cls}-DC flows")
        ax.legend(fontsize=8)
    _save(plt, fig, out_png, title)


def plot_slowdown_by_size(table: pd.DataFrame, out_png: Path, title: str = "") -> None:
    """p50 (dashed) and p99 (solid) slowdown per size bucket, per scheme and class."""
    classes = sorted(set(table.index.get_level_values("cls")))
    plt, fig, panels = _class_panels(classes)
    for ax, cls in panels:
        sub = table.xs(cls, level="cls")
        for label in sorted(set(sub.index.get_level_values(0))):
            s = sub.xs(label, level=0)
            xs = [str(b) for b in s.index]
            (line,) = ax.plot(xs, s["p99"], marker="o", label=f"{label} p99")
            ax.plot(xs, s["p50"], ls="--", color=line.get_color())
        log_axis(ax, "y", "slowdown")
        ax.set_title(f"{cls}-DC flows by size")
        ax.tick_params(axis="x", rotation=30)
        ax.legend(fontsize=7)
    _save(plt, fig, out_png, title)


def plot_lines(
    table: pd.DataFrame, out_png: Path, xlabel: str, ylabel: str, title: str = ""
) -> None:
    """One line per column of ``table`` (e.g. schemes) over its index (e.g. RTT ratios), log y."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for col in table.columns:
        ax.plot([str(x) for x in table.index], table[col], marker="o", label=str(col))
    log_axis(ax, "y", ylabel)
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=8)
    _save(plt, fig, out_png, title)


def standard_figures(sweep_dir: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Draw a sweep's standard figures; returns the files written."""
    sweep_dir = Path(sweep_dir)
    out = Path(out_dir or sweep_dir)
    out.mkdir(parents=True, exist_ok=True)
    flows = run_flows(sweep_dir)
    if flows["finish_ps"].notna().sum() == 0:
        raise FileNotFoundError(f"{sweep_dir}: no flow finished in any run")
    files = [out / "class_bars.png", out / "fct_cdfs.png", out / "slowdown_by_size.png"]
    plot_class_bars(class_table(flows, ["label"]), files[0], sweep_dir.name)
    plot_fct_cdfs(flows, files[1], sweep_dir.name)
    plot_slowdown_by_size(slowdown_by_size(flows, ["label"]), files[2], sweep_dir.name)
    return files


def main(argv: list[str] | None = None) -> int:
    with quiet_broken_pipes():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="uno-plot", description="Draw a sweep's standard figures.")
    ap.add_argument("sweep_dir")
    ap.add_argument("--out", help="where to write the PNGs (default: the sweep directory)")
    args = ap.parse_args(argv)
    try:
        files = standard_figures(args.sweep_dir, args.out)
    except FileNotFoundError as exc:
        print(f"uno-plot: {exc}", file=sys.stderr)
        return 2
    for f in files:
        print(f"wrote {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
