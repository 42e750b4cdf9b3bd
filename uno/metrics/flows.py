"""The flows table every engine writes (``flows.parquet``): one row per flow, the same columns and
types whichever engine ran. Times in ps, sizes in bytes, rates in Gb/s. Columns an engine has no
notion of hold their documented neutral value (0 for counters, NaN for measurements) and the run
summary names the engine, so a reader can tell a packet run from a fluid one."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: column -> (pandas dtype, meaning)
FLOW_COLUMNS: dict[str, tuple[str, str]] = {
    "flow_id": ("int64", "flow id (workload order)"),
    "src": ("int64", "source host"),
    "dst": ("int64", "destination host"),
    "cls": ("object", "intra or inter (datacenter)"),
    "tag": ("object", "workload tag (e.g. incast, rpc)"),
    "size_bytes": ("int64", "message payload, bytes"),
    "start_ps": ("int64", "start time, ps"),
    "stop_ps": ("Int64", "time the sender stops, finished or not, ps; <NA>: runs to its end"),
    "finish_ps": ("Int64", "time the sender learnt the last byte arrived, ps; <NA>: unfinished"),
    "fct_ps": ("Int64", "finish - start, ps"),
    "ideal_fct_ps": ("int64", "base RTT + serialisation of the message at the bottleneck, ps"),
    "slowdown": ("float64", "fct / ideal fct"),
    "mean_rate_gbps": ("float64", "payload bits / fct, Gb/s"),
    "base_rtt_ps": ("int64", "base RTT of the flow's path, ps"),
    "bdp_bytes": ("float64", "bottleneck rate x base RTT, bytes"),
    "hops": ("int64", "links on the path"),
    "packets": ("int64", "data packets of the message (coded: with parity)"),
    "sent_packets": ("int64", "data packets sent, retransmissions included"),
    "retransmits": ("int64", "data packets sent again"),
    "timeouts": ("int64", "retransmission timeouts (fluid: loss episodes detected by timer)"),
    "fast_retransmits": ("int64", "losses found by duplicate ACKs"),
    "coded": ("bool", "erasure-coded"),
    "nacks": ("int64", "NACKs received (fluid: coded loss episodes)"),
    "notices": ("int64", "switches' congestion notices received (switch.qcn)"),
    "trims": ("int64", "NACKs of trimmed copies received (switch.trimming)"),
    "sent_bytes": ("int64", "wire bytes sent"),
    "ecn_acks": ("int64", "ACKs carrying an ECN echo (fluid: marked bytes / packet size)"),
    "bytes_delivered": ("int64", "payload bytes the receiver got"),
    "cc": ("object", "congestion control"),
    "lb": ("object", "load balancer"),
    "seed": ("int64", "run seed"),
}


def flows_frame(columns: dict) -> pd.DataFrame:
    """A flows table from ``columns`` (name -> sequence), checked against :data:`FLOW_COLUMNS`:
    every column present, none extra, each cast to its type."""
    missing = [c for c in FLOW_COLUMNS if c not in columns]
    extra = [c for c in columns if c not in FLOW_COLUMNS]
    if missing or extra:
        raise ValueError(f"flows table: missing columns {missing}, unknown columns {extra}")
    df = pd.DataFrame({c: columns[c] for c in FLOW_COLUMNS})
    for col, (dtype, _) in FLOW_COLUMNS.items():
        if dtype == "Int64":
            df[col] = _nullable_ints(df[col])
        elif dtype != "object":
            df[col] = df[col].astype(dtype)
    return df


def _nullable_ints(column: pd.Series):
    """``column`` as pandas' nullable Int64: None and NaN missing, numbers truncated to ints
    (numeric columns converted as arrays; others value by value)."""
    if column.dtype.kind in "iu":
        return pd.array(column.to_numpy(), dtype="Int64")
    if column.dtype.kind == "f":
        values = column.to_numpy()
        missing = np.isnan(values)
        if np.isinf(values).any():
            raise ValueError(f"flows table: {column.name} holds an infinite value")
        return pd.arrays.IntegerArray(np.where(missing, 0.0, values).astype(np.int64), missing)
    return pd.array(
        [None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v) for v in column],
        dtype="Int64",
    )
