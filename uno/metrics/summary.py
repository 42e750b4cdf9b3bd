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


#: the config groups a run header names by the option the user chose (Hydra's choices), not by
#: what the builder calls the result (topology two_dc_k8 for option two_dc; workload kind incast
#: for option mixed_incast). cc and lb name the algorithms run: an override such as
#: ``cc.algo=dctcp`` changes those and not the chosen option.
CHOSEN_GROUPS = ("topo", "workload")

#: engines that run no congestion controller (uno.fluid.maxmin.MaxMinSimulation.runs_cc)
ENGINES_WITHOUT_CC = ("maxmin",)

#: a fluid run's bytes unaccounted for (``fluid.unaccounted_bytes``) the report names: a data
#: packet's worth (below it, the rounding of many flows' float sums)
UNACCOUNTED_WARN_BYTES = 4096.0
#: a fluid run's bytes acknowledged after their retransmission timeout
#: (``fluid.late_ack_bytes``) the report names: a data packet's worth
LATE_ACK_WARN_BYTES = 4096.0


def option_names(run: dict) -> dict:
    """``topo`` and ``workload`` of a run (``run``: its meta, or a summary's ``run``) as the
    user chose them: the config options in ``run["choices"]``, else the builder's names. A
    builder's name that differs from the option is kept as ``topo_detail`` /
    ``workload_detail`` (two_dc_k8 for two_dc). Applying it twice changes nothing."""
    choices = run.get("choices") or {}
    out = {}
    for group in CHOSEN_GROUPS:
        built = run.get(f"{group}_detail", run.get(group))
        chosen = choices.get(group) or built
        out[group] = chosen
        if built != chosen:
            out[f"{group}_detail"] = built
    return out


def run_label(run: dict) -> str:
    """``topo=... workload=... cc=... lb=...`` of a run header, with the options as chosen
    (:func:`option_names`) and without cc on an engine that runs no controller."""
    names = option_names(run)
    label = f"topo={names['topo']} workload={names['workload']}"
    if run.get("engine") not in ENGINES_WITHOUT_CC:
        label += f" cc={run.get('cc')}"
    return f"{label} lb={run.get('lb')}"


def _work_done(run: dict) -> str:
    """What the engine did in its wall time, in its own measure (flow-level engines move no
    packets): `` (1,234 packet-hops, 5,678/s)``, or empty."""
    engine = run.get("engine", "packet")
    wall_s = run.get("wall_s", 0)
    parts = []
    if engine in ("packet", "hybrid"):
        parts.append(
            f"{run.get('packet_hops', 0):,} packet-hops, {run.get('packet_hops_per_s', 0):,.0f}/s"
        )
    if engine in ("fluid", "hybrid"):
        steps = run.get("fluid_steps", 0)
        # a hybrid's wall time is mostly its packets': a steps rate would say little
        rate = f", {steps / wall_s:,.0f}/s" if engine == "fluid" and wall_s > 0 else ""
        parts.append(f"{steps:,} fluid steps{rate}")
    if engine == "maxmin" and "maxmin_rate_computations" in run:
        n = run["maxmin_rate_computations"]
        parts.append(f"{n:,} rate computation{'' if n == 1 else 's'}")
    return f" ({'; '.join(parts)})" if parts else ""


def format_summary(summary: dict) -> str:
    """Readable multi-line rendering of a run summary."""
    lines = []
    run = summary.get("run", {})
    if run:
        lines.append(f"uno run '{run.get('name')}' seed={run.get('seed')} {run_label(run)}")
        lines.append(
            f"simulated {run.get('sim_time_us', 0):.1f} us in {run.get('wall_s', 0):.2f} s wall"
            + _work_done(run)
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
        value = f"{jain:.4f}" if jain == jain else "n/a (no flow finished)"  # nan: none did
        lines.append(f"Jain's fairness of flow rates (finished flows): {value}")
    pk = summary.get("packets", {})
    if pk:
        drops = pk.get("dropped", {})
        # by cause and kind ("buffer/data 12"), only when something was dropped
        causes = ", ".join(f"{k} {n:,}" for k, n in drops.items() if n)
        trims = summary.get("trims", 0)
        # (a hybrid's retransmits count its fluid flows' too: these are its packet flows')
        fluid_retransmits = (summary.get("hybrid") or {}).get("fluid_retransmits", 0)
        packet_retransmits = summary.get("retransmits", 0) - fluid_retransmits
        lines.append(
            f"packets: data sent {pk['injected']['data']:,}, acks {pk['injected']['ack']:,}, "
            f"dropped {sum(drops.values()):,}{f' ({causes})' if causes else ''}, "
            f"{f'trimmed {trims:,}, ' if trims else ''}retransmitted "
            f"{packet_retransmits:,}, in network at end {pk.get('in_network', 0):,}"
        )
    dataplane = summary.get("dataplane")
    if dataplane:
        lines.append(f"data plane: {dataplane['kind']}, senders {dataplane['senders']}")
    pfc = summary.get("pfc")
    if pfc:
        lines.append(
            f"PFC: {pfc['pause_frames']:,} pauses at {pfc['ports_paused']} ports, "
            f"{pfc['total_pause_us']:.1f} us paused in all, peak ingress queue "
            f"{pfc['max_ingress_bytes']:,.0f} B, lossless violations {pfc['lossless_violations']}"
        )
    queued = (summary.get("fluid") or {}).get("queued_bytes_at_end", 0.0)
    if queued >= 1.0 and run.get("all_flows_finished"):
        lines.append(
            f"fluid: {queued:,.0f} B of the flows' bytes still queued at the links after every "
            "flow finished: FCTs that end before those bytes arrive"
        )
    unaccounted = fluid_figure(summary, "unaccounted_bytes")
    if unaccounted >= UNACCOUNTED_WARN_BYTES:
        lines.append(
            f"fluid: {unaccounted:,.0f} B the finished flows sent neither acknowledged nor "
            "lost, or left in flight: their byte counts do not add up"
        )
    late = fluid_figure(summary, "late_ack_bytes")
    if late >= LATE_ACK_WARN_BYTES:
        lines.append(
            f"fluid: {late:,.0f} B came back acknowledged later than their flow's "
            "retransmission timeout after their send: their timers resent copies of them "
            "(spurious retransmissions), once each"
        )
    stalled = fluid_figure(summary, "stalled_flows")
    if stalled > 0:
        first = int(fluid_figure(summary, "stalled_flow_id"))
        lines.append(
            f"fluid: {stalled:,.0f} unfinished flows (the first: flow {first}) hold bytes in "
            "flight that no ACK and no timer will release: an accounting fault of the fluid "
            "engine, which a longer run would not finish"
        )
    for name, d in (summary.get("dci") or {}).items():
        lines.append(
            f"DCI {name}: {d['switch_int_notices']:,} Switch-INT notices, "
            f"{d['pfq_packets']:,} packets through per-flow queues (peak {d['pfq_max_bytes']:,} B, "
            f"{d['pfq_drops']:,} dropped)"
        )
    status = status_line(run)
    if status:
        lines.append(status)
    return "\n".join(lines)


def fluid_figure(summary: dict, key: str) -> float:
    """A fluid model's figure ``key`` in a summary: the fluid engine's (``fluid.<key>``) or the
    hybrid's fluid part's (``hybrid.fluid_<key>``), 0 where neither ran."""
    return max(
        (summary.get("fluid") or {}).get(key, 0.0),
        (summary.get("hybrid") or {}).get(f"fluid_{key}", 0.0),
    )


def status_line(run: dict) -> str | None:
    """Whether the run did its job, from a summary's ``run`` (None for a summary without
    ``status``): every flow it waited for finished, or how many did not by the stop time."""
    status = run.get("status")
    if status is None:
        return None
    unfinished = run.get("required_flows_unfinished", 0)
    if run.get("stopped_stalled"):
        return (
            f"run stopped at {run.get('sim_time_us', 0) / 1000:g} ms simulated, before its stop "
            f"time: {unfinished} of {run.get('required_flows')} required flows unfinished, and "
            "every flow left holds bytes in flight that no ACK and no timer will release"
            + ("" if status == "incomplete" else " (engine.allow_unfinished)")
        )
    if status == "incomplete":
        return (
            f"run incomplete: {unfinished} of {run.get('required_flows')} required flows "
            f"unfinished at the stop time (engine.max_sim_time_ms, "
            f"{run.get('sim_time_us', 0) / 1000:g} ms simulated); set "
            "engine.allow_unfinished=true if a time-bounded run is intended"
        )
    if unfinished:
        return (
            f"run ended at the stop time with {unfinished} flows unfinished "
            "(engine.allow_unfinished)"
        )
    return "run complete"
