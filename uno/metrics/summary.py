"""Summary statistics: Jain's fairness index, FCT and slowdown by flow class."""

from __future__ import annotations

import numpy as np
import pandas as pd


def jain_index(values) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2) of non-negative values; nan if empty or all 0."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan")
    denom = x.size * float(np.sum(x * x))
    return float(np.sum(x)) ** 2 / denom if denom > 0 else float("nan")


def class_summary(flows: pd.DataFrame) -> dict:
    """Per class (intra, inter, all): counts, mean/p99 FCT (µs) and slowdown of finished flows."""
    out = {}
    groups = [("all", flows)] + [(c, flows[flows["cls"] == c]) for c in ("intra", "inter")]
    for name, df in groups:
        done = df[df["finish_ps"].notna()]
        entry = {"flows": int(len(df)), "finished": int(len(done))}
        if len(done):
            fct_us = done["fct_ps"].to_numpy(dtype=float) / 1e6
            slow = done["slowdown"].to_numpy(dtype=float)
            entry.update(
                {
                    "fct_mean_us": float(np.mean(fct_us)),
                    "fct_p50_us": float(np.percentile(fct_us, 50)),
                    "fct_p99_us": float(np.percentile(fct_us, 99)),
                    "fct_max_us": float(np.max(fct_us)),
                    "slowdown_mean": float(np.mean(slow)),
                    "slowdown_p99": float(np.percentile(slow, 99)),
                }
            )
        if len(df) or name == "all":
            out[name] = entry
    rates = flows.loc[flows["finish_ps"].notna(), "mean_rate_gbps"].to_numpy(dtype=float)
    out["jain_fairness_of_flow_rates"] = jain_index(rates)
    return out


def format_summary(summary: dict) -> str:
    """Readable multi-line rendering of a run summary."""
    lines = []
    run = summary.get("run", {})
    if run:
        lines.append(
            f"uno run '{run.get('name')}' seed={run.get('seed')} topo={run.get('topo')} "
            f"workload={run.get('workload')} cc={run.get('cc')} lb={run.get('lb')}"
        )
        lines.append(
            f"simulated {run.get('sim_time_us', 0):.1f} us in {run.get('wall_s', 0):.2f} s wall "
            f"({run.get('packet_hops', 0):,} packet-hops, {run.get('packet_hops_per_s', 0):,.0f}/s)"
        )
    lines.append(
        f"{'class':<6} {'flows':>6} {'done':>6} {'mean FCT us':>12} {'p99 FCT us':>12} "
        f"{'mean slowdown':>14} {'p99 slowdown':>13}"
    )
    classes = summary.get("classes", {})
    for name in ("intra", "inter", "all"):
        c = classes.get(name)
        if not c:
            continue
        if c.get("finished"):
            lines.append(
                f"{name:<6} {c['flows']:>6} {c['finished']:>6} {c['fct_mean_us']:>12.1f} "
                f"{c['fct_p99_us']:>12.1f} {c['slowdown_mean']:>14.3f} {c['slowdown_p99']:>13.3f}"
            )
        else:
            lines.append(
                f"{name:<6} {c['flows']:>6} {0:>6} {'-':>12} {'-':>12} {'-':>14} {'-':>13}"
            )
    jain = classes.get("jain_fairness_of_flow_rates")
    if jain is not None:
        lines.append(f"Jain's fairness of flow rates (finished flows): {jain:.4f}")
    pk = summary.get("packets", {})
    if pk:
        drops = pk.get("dropped", {})
        lines.append(
            f"packets: data sent {pk['injected']['data']:,}, acks {pk['injected']['ack']:,}, "
            f"dropped {sum(drops.values()):,} {drops if drops else ''}, retransmitted "
            f"{summary.get('retransmits', 0):,}, in network at end {pk.get('in_network', 0):,}"
        )
    dataplane = summary.get("dataplane")
    if dataplane:
        lines.append(f"data plane: {dataplane['kind']}, senders {dataplane['senders']}")
    pfc = summary.get("pfc")
    if pfc:
        lines.append(
            f"PFC: {pfc['pause_frames']:,} pauses at {pfc['ports_paused']} ports, "
            f"{pfc['total_pause_us']:.1f} us paused in all, peak ingress queue "
            f"{pfc['max_ingress_bytes']:,} B, lossless violations {pfc['lossless_violations']}"
        )
    return "\n".join(lines)
