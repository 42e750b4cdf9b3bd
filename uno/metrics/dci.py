"""The DCI switches' per-flow queues read from a run's ``queues`` table (the rows the recorder
writes for them: ``<switch>/pfq``, all flows together, and ``<switch>/pfq/flow<id>``, each
non-empty flow queue; :mod:`uno.net.dci`)."""

from __future__ import annotations

import pandas as pd


def pfq_levels(queues: pd.DataFrame, switch: str, from_ps: int) -> dict:
    """Switch ``switch``'s per-flow queues: the peak of their total (bytes, and when: ms) and
    of each flow's (the mean of the flows' peaks), the mean from ``from_ps`` on (the settled
    level) of the total and of a flow's queue (the mean over the flows that held any then; an
    empty queue counts as 0), and the first time after the peak the total came within 20% of
    its settled level (ms; None: never)."""
    name = f"{switch}/pfq"
    total = queues[queues["port"] == name].sort_values("time_ps")
    if total.empty:
        raise ValueError(f"the queues table has no samples of {name} (switch.dci.enabled?)")
    per_flow = queues[queues["port"].str.startswith(name + "/flow")]
    late_times = total.loc[total["time_ps"] >= from_ps, "time_ps"]
    late = per_flow[per_flow["time_ps"] >= from_ps]
    grid = late.pivot_table(index="time_ps", columns="port", values="queue_bytes", aggfunc="sum")
    grid = grid.reindex(late_times).fillna(0.0)
    peak_flow = per_flow.groupby("port")["queue_bytes"].max()
    settled = float(total.loc[total["time_ps"] >= from_ps, "queue_bytes"].mean())
    peak_at = int(total.loc[total["queue_bytes"].idxmax(), "time_ps"])
    after = total[(total["time_ps"] > peak_at) & (total["queue_bytes"] <= 1.2 * settled)]
    return {
        "peak_ms": peak_at / 1e9,
        # the first sample after the peak within 20% of the settled level (None: never)
        "settle_ms": float(after["time_ps"].iloc[0]) / 1e9 if not after.empty else None,
        "peak_total_bytes": float(total["queue_bytes"].max()),
        "settled_total_bytes": settled,
        "peak_flow_bytes": float(peak_flow.mean()) if not peak_flow.empty else 0.0,
        "settled_flow_bytes": float(grid.mean().mean()) if not grid.empty else 0.0,
    }
