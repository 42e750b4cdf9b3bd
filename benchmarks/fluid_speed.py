"""The flow-level engines against the compiled packet engine, side by side: wall time, peak
memory and accuracy on the same scenarios.

Suites (``--suites``, comma-separated):

- ``paper``: Uno Fig. 10 on the paper's own traffic (``experiment=fig10_load``, its default
  ``workload=mixed``: web search inside the DC, Alibaba WAN sizes across, 4:1 by count) at 40%
  load, for each scheme of ``--schemes`` (``default``: the experiment's own, UnoCC with
  spraying);
- ``permutation``: a permutation (every host one flow of ``--perm-bytes`` to another) on the
  k=16 fat tree (1,024 hosts), for each scheme;
- ``artifact``: Fig. 10 on the artifact's traffic (``workload=mixed_artifact``), 40% load;
- ``incast``: the default run (Uno's mixed incast: 4 intra-DC and 4 inter-DC senders of 200 MB,
  UnoCC with spraying), once (``--schemes`` aside); the hybrid runs its inter-DC flows as
  packets;
- ``sweep``: the paper's traffic, ``--schemes`` x loads 0.2, 0.4, 0.6, 0.8 as one Hydra
  multirun (joblib, both cores), result folders and all, once for each of ``fluid`` and
  ``fluid-fast`` among ``--engines``;
- ``reps``: the REPS paper's permutation (``experiment=reps_permutation``: 1,024 hosts, 4 MiB
  each, SMaRTT, trimming; per-packet RTTs not recorded), for each balancer of ``--reps-lbs``, on
  the 8:1 tree with ``--reps-oversubscribed``, with Fig. 4's failed links with
  ``--reps-failures``;
- ``leave``: long flows that join and leave a shared bottleneck over seconds (Gear's Fig. 10,
  ``--leave-experiment gear_fig10``, or ``gear_fig11``), for each scheme of ``--leave-schemes``;
  its accuracy is each flow's throughput over every phase's second half
  (:func:`uno.metrics.analysis.phase_windows_ps`), no flow finishing there.

Each run of a suite's engines (``--engines``: ``packet-c`` the compiled packet engine, the
reference; ``fluid``; ``fluid-fast`` (``engine=fluid_fast``: coarser steps); ``hybrid`` with
the flows of at most ``--hybrid-packet-max-bytes`` as packets, or in ``incast`` the inter-DC
ones, its steps settling as the flows do (by default); ``hybrid-fine``, the same at its first
step throughout (``engine.fluid_step_settled_rtt=0``); ``maxmin``) is a process of its own
(``python -m uno.cli``), so its peak resident memory is its own (the OS's count of the child,
``wait4``). Printed per run: the engine loop's wall time (summary ``run.wall_s``; its kernels loaded from Numba's cache before it, in the
process's), the process's, peak memory, and against the packet run the
per-class mean and p99 FCT differences in % (``leave``: the throughputs' largest difference,
and each phase's largest deviation from equal shares); for the hybrid also those of its packet flows
alone against the same flows in the packet run; then the packet engine's wall time over each
engine's. With ``--repeats N`` each engine runs N times (the same seed, so the same flows,
which is checked): its wall times are the least of the N and their range, its memory the
largest; short runs on a shared machine vary by a third from run to run. Before its first timed
run each configuration runs for 0.1 ms of simulated time in a process of its own, so that no
timed run compiles kernels.

    python benchmarks/fluid_speed.py [--suites paper,permutation,incast,reps,leave,sweep] [--schemes uno_ecmp]
        [--engines packet-c,fluid,fluid-fast,hybrid,hybrid-fine,maxmin] [--n-flows 5000] [--repeats 3] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from uno.fluid.hybrid import packet_selection
from uno.metrics.analysis import flow_throughput, largest_share_deviation, phase_windows_ps

SCHEMES = "uno,uno_ecmp,gemini,mprdma_bbr"
#: the schemes of Gear's evaluation that the fluid engine runs (not gear_annulus: QCN's notices)
LEAVE_SCHEMES = "gear_gear,gear_hpcc,gear_dctcp,gear_gemini,gear_timely,gear_annulus"
ENGINES = "packet-c,fluid,fluid-fast,hybrid,maxmin"
KNOWN_ENGINES = (*ENGINES.split(","), "hybrid-fine")
LOADS = (0.2, 0.4, 0.6, 0.8)


def suite_overrides(suite: str, args) -> list[str]:
    """The scenario of a suite (without scheme and engine)."""
    if suite == "paper":
        return ["experiment=fig10_load", "workload.load=0.4", f"workload.n_flows={args.n_flows}"]
    if suite == "artifact":
        return ["experiment=fig10_load", "workload=mixed_artifact", "workload.load=0.4",
                f"workload.n_flows={args.n_flows}"]  # fmt: skip
    if suite == "incast":
        return []
    if suite == "reps":
        tree = ["topo.tor_uplinks=2", "topo.agg_uplinks=4"] if args.reps_oversubscribed else []
        name = "reps_failures" if args.reps_failures else "reps_permutation"
        return [f"experiment={name}", "engine.record_rtts=false", *tree]
    if suite == "leave":  # (its rates sampled every ms: what its accuracy reads)
        return [f"experiment={args.leave_experiment}", "engine.sample_interval_us=1000"]
    if suite == "permutation":
        return ["topo=fat_tree", f"topo.k={args.perm_k}", "workload=permutation",
                f"workload.size_bytes={args.perm_bytes}", "workload.start_us=0",
                "engine.max_sim_time_ms=1000"]  # fmt: skip
    raise ValueError(suite)


def hybrid_packets(suite: str, args) -> SimpleNamespace:
    """Which flows the hybrid runs as packets: the engine options that say so."""
    if suite == "incast":
        return SimpleNamespace(hybrid_packet_max_bytes=None, hybrid_packet_tags=["inter"])
    return SimpleNamespace(hybrid_packet_max_bytes=args.hybrid_packet_max_bytes,
                           hybrid_packet_tags=[])  # fmt: skip


def hybrid_overrides(suite: str, args) -> list[str]:
    chosen = hybrid_packets(suite, args)
    tags = ",".join(chosen.hybrid_packet_tags)
    over = [f"engine.hybrid_packet_tags=[{tags}]"]
    if chosen.hybrid_packet_max_bytes is not None:
        over.append(f"engine.hybrid_packet_max_bytes={chosen.hybrid_packet_max_bytes}")
    return over


def engine_overrides(engine: str, suite: str, args) -> list[str]:
    return {
        "packet-c": ["engine.kind=packet", "engine.dataplane=compiled"],
        "fluid": ["engine.kind=fluid"],
        "fluid-fast": ["engine=fluid_fast"],
        "hybrid": ["engine.kind=hybrid", *hybrid_overrides(suite, args)],
        "hybrid-fine": ["engine.kind=hybrid", "engine.fluid_step_settled_rtt=0",
                        *hybrid_overrides(suite, args)],
        "maxmin": ["engine.kind=maxmin"],
    }[engine]  # fmt: skip


def run_process(overrides: list[str]) -> dict:
    """One run in a process of its own: its summary, flows (and its rates when it samples
    them), process wall time and peak RSS. Nothing is sampled unless ``overrides`` say so."""
    samples = any(o.startswith("engine.sample_interval_us=") for o in overrides)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "uno.cli", *overrides, "engine.progress=false",
               *([] if samples else ["engine.sample_interval_us=0"]), f"out_dir={out}"]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {status}"}
        summary = json.loads((Path(out) / "summary.json").read_text())
        flows = pd.read_parquet(Path(out) / "flows.parquet")
        rates = Path(out) / "rates.parquet"
        rates = pd.read_parquet(rates) if samples and rates.exists() else None
    return {"summary": summary, "flows": flows, "rates": rates, "wall_s": wall,
            "peak_mib": usage.ru_maxrss / 1024}  # fmt: skip


#: the override sets whose kernels a short run has compiled (:func:`warm_up`)
WARMED: set[tuple[str, ...]] = set()


def warm_up(overrides: list[str]) -> None:
    """A short run of the same configuration first (0.1 ms of simulated time), once per
    configuration: Numba's on-disk cache of its kernels is compiled or loaded there, so a
    timed run never pays a compile (minutes, and gigabytes of peak memory, after a change to
    the package's source)."""
    key = tuple(overrides)
    if key not in WARMED:
        WARMED.add(key)
        run_process([*overrides, "engine.max_sim_time_ms=0.1", "engine.allow_unfinished=true"])


def run_repeated(overrides: list[str], repeats: int) -> dict:
    """:func:`run_process` ``repeats`` times (after :func:`warm_up`): the first run's summary
    and flows, with the engine's wall times of every run (``engine_walls``, s), the least
    process wall time and the largest peak memory; an error if a run failed or its flows differ
    from the first's."""
    warm_up(overrides)
    first = run_process(overrides)
    if "error" in first:
        return first
    first["engine_walls"] = [first["summary"]["run"]["wall_s"]]
    for _ in range(repeats - 1):
        again = run_process(overrides)
        if "error" in again:
            return again
        if not again["flows"].equals(first["flows"]):
            return {"error": "a repeat's flows table differs from the first run's"}
        first["engine_walls"].append(again["summary"]["run"]["wall_s"])
        first["wall_s"] = min(first["wall_s"], again["wall_s"])
        first["peak_mib"] = max(first["peak_mib"], again["peak_mib"])
    return first


def engine_wall(run: dict) -> float:
    """The engine's wall time, s: the least over the repeats."""
    return min(run["engine_walls"])


def wall_text(run: dict) -> str:
    walls = run["engine_walls"]
    if len(walls) == 1:
        return f"engine {walls[0]:.2f} s"
    return f"engine {min(walls):.2f} s (least of {len(walls)}: {min(walls):.2f}-{max(walls):.2f} s)"


def fct_gaps(flows: pd.DataFrame, ref: pd.DataFrame, ids=None) -> str:
    """Per class: mean and p99 FCT of ``flows`` against ``ref``'s (same flow ids), in %."""
    if ids is not None:
        flows = flows[flows.flow_id.isin(ids)]
        ref = ref[ref.flow_id.isin(ids)]
    parts = []
    for cls, g in ref.groupby("cls"):
        mine = flows.loc[flows.cls == cls, "fct_ps"].dropna()
        theirs = g.fct_ps.dropna()
        if mine.empty or theirs.empty:
            continue
        mean = 100 * (mine.mean() / theirs.mean() - 1)
        p99 = 100 * (mine.quantile(0.99) / theirs.quantile(0.99) - 1)
        parts.append(f"{cls} mean {mean:+.1f}% p99 {p99:+.1f}%")
    return ", ".join(parts)


def share_gaps(run: dict, ref: dict) -> str:
    """Each flow's throughput (Gb/s) over the second half of every phase (between the flows'
    start and stop times) of ``run`` against ``ref``'s: the largest difference, and per phase
    the largest deviation from equal shares, ``ref``'s | ``run``'s."""
    if run["rates"] is None or ref["rates"] is None:
        return "no rate samples to compare (max-min samples none)"
    end_ps = int(ref["summary"]["run"]["sim_time_us"] * 1e6)
    largest, where, deviations = 0.0, "", []
    for lo, hi in phase_windows_ps(ref["flows"], end_ps):
        theirs = flow_throughput(ref["rates"], ref["flows"], lo, hi)
        mine = flow_throughput(run["rates"], run["flows"], lo, hi).reindex(theirs.index)
        diff = (mine - theirs).abs().fillna(float("inf"))
        if len(diff) and diff.max() > largest:
            largest, where = (
                float(diff.max()),
                f"flow {diff.idxmax()}, {lo / 1e12:.1f}-{hi / 1e12:.1f} s",
            )
        if len(theirs) > 1 and theirs.mean() > 0 and mine.mean() > 0:
            deviations.append(f"{largest_share_deviation(theirs):.2f} | "
                              f"{largest_share_deviation(mine):.2f}")  # fmt: skip
    return (
        f"throughputs within {largest:.1f} Gb/s ({where}); largest deviation from equal "
        f"shares by phase, packet | this: {', '.join(deviations)}"
    )


def unfinished(run: dict) -> str:
    flows = run["flows"]
    left = int(flows.finish_ps.isna().sum())
    return f" ({left} flows unfinished)" if left else ""


def compare(suite: str, scheme: str, engines: list[str], args) -> None:
    """One scenario in every engine, printed side by side."""
    chosen = {"incast": [], "reps": [f"lb={scheme}"]}.get(suite, [f"scheme={scheme}"])
    if scheme == "default":  # (the experiment's own scheme)
        chosen = []
    base = [*suite_overrides(suite, args), *chosen, *args.overrides]
    runs = {}
    for engine in engines:
        overrides = [*base, *engine_overrides(engine, suite, args)]
        runs[engine] = run = run_repeated(overrides, args.repeats)
        if "error" in run:
            print(f"fluid_speed {suite} {scheme} {engine:8s}: refused or failed: {run['error']}")
            continue
        r = run["summary"]["run"]
        line = (f"fluid_speed {suite} {scheme} {engine:8s}: {r['n_flows']} flows, simulated "
                f"{r['sim_time_us'] / 1000:.1f} ms, {wall_text(run)} (process "
                f"{run['wall_s']:.1f} s), peak {run['peak_mib']:.0f} MiB{unfinished(run)}")  # fmt: skip
        ref = runs.get("packet-c")
        if engine != "packet-c" and ref is not None and "error" not in ref:
            if suite == "leave":
                line += f"; vs packet: {share_gaps(run, ref)}"
            else:
                line += f"; vs packet: {fct_gaps(run['flows'], ref['flows'])}"
            if suite == "reps":  # (the permutation's completion time, and the trims)
                done = run["flows"].fct_ps.max() / ref["flows"].fct_ps.max() - 1
                line += (f", max {100 * done:+.1f}%; trimmed {run['flows'].trims.sum():,} "
                         f"against {ref['flows'].trims.sum():,}")  # fmt: skip
            if engine in ("hybrid", "hybrid-fine"):
                flows = ref["flows"]
                chosen = packet_selection(hybrid_packets(suite, args), flows.size_bytes, flows.tag)
                ids = flows.loc[chosen, "flow_id"]
                line += f"; its packet flows: {fct_gaps(run['flows'], flows, ids)}"
        print(line, flush=True)
    ref = runs.get("packet-c")
    if ref is None or "error" in ref:
        return
    ratios = []
    for engine, run in runs.items():
        if engine == "packet-c" or "error" in run:
            continue
        speed = engine_wall(ref) / max(engine_wall(run), 1e-9)
        memory = run["peak_mib"] / ref["peak_mib"]
        ratios.append(f"{engine} {speed:.1f}x faster, memory {memory:.2f}x")
    print(f"fluid_speed {suite} {scheme} vs packet-c: {'; '.join(ratios)}", flush=True)


def sweep(engine: str, args) -> None:
    """The paper's traffic, schemes x loads in fluid mode (``engine``: fluid or fluid-fast), as
    one Hydra multirun, after a short run of each scheme (:func:`warm_up`)."""
    for scheme in args.schemes.split(","):
        warm_up(["experiment=fig10_load", f"workload.n_flows={args.n_flows}",
                 *engine_overrides(engine, "sweep", args), f"scheme={scheme}", *args.overrides])  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "uno.cli", "-m", "hydra/launcher=joblib",
               "hydra.launcher.n_jobs=2", "experiment=fig10_load",
               f"workload.n_flows={args.n_flows}", *engine_overrides(engine, "sweep", args),
               "engine.progress=false",
               f"scheme={args.schemes}", f"workload.load={','.join(map(str, LOADS))}",
               f"hydra.sweep.dir={tmp}/sweep", *args.overrides]  # fmt: skip
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        summaries = [json.loads(p.read_text())["run"]
                     for p in Path(tmp, "sweep").glob("*/summary.json")]  # fmt: skip
        runs = len(summaries)
    for run in sorted(summaries, key=lambda r: -r["wall_s"]):
        overrides = " ".join(
            o for o in run["overrides"] if o.startswith(("scheme=", "workload.load"))
        )
        print(f"fluid_speed sweep {engine} run {overrides}: engine {run['wall_s']:.1f} s, "
              f"{run['fluid_steps']:,} steps, simulated {run['sim_time_us'] / 1e3:.1f} ms",
              flush=True)  # fmt: skip
    n_runs = len(args.schemes.split(",")) * len(LOADS)
    status = "" if done.returncode == 0 else f", failed: {done.stderr.strip().splitlines()[-1]}"
    print(f"fluid_speed sweep {engine}: the paper's Fig. 10 traffic, {n_runs} runs ({args.schemes} "
          f"x loads {', '.join(map(str, LOADS))}), Hydra multirun on 2 jobs: {runs} "
          f"complete in {wall:.1f} s{status}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overrides", nargs="*", help="config overrides for every run")
    ap.add_argument("--suites", default="paper,permutation,sweep")
    ap.add_argument("--schemes", default=SCHEMES)
    ap.add_argument("--engines", default=ENGINES)
    ap.add_argument("--n-flows", type=int, default=5000)
    ap.add_argument("--perm-k", type=int, default=16)
    ap.add_argument("--perm-bytes", type=int, default=4_194_304)
    ap.add_argument("--hybrid-packet-max-bytes", type=int, default=1_000_000)
    ap.add_argument(
        "--leave-experiment", default="gear_fig10", choices=["gear_fig10", "gear_fig11"]
    )
    ap.add_argument("--leave-schemes", default=LEAVE_SCHEMES)
    ap.add_argument("--reps-lbs", default="reps,spray,ecmp")
    ap.add_argument("--reps-oversubscribed", action="store_true", help="the 8:1 tree")
    ap.add_argument("--reps-failures", action="store_true",
                    help="the failed links of REPS's Fig. 4 (experiment=reps_failures)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=1, help="runs of each engine (least wall time)")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats: must be at least 1, got {args.repeats}")
    engines = args.engines.split(",")
    unknown = set(engines) - set(KNOWN_ENGINES)
    if unknown:
        ap.error(f"--engines: unknown {sorted(unknown)}; known: {','.join(KNOWN_ENGINES)}")
    for suite in args.suites.split(","):
        if suite == "sweep":
            for engine in (e for e in engines if e in ("fluid", "fluid-fast")):
                sweep(engine, args)
            continue
        if suite not in ("paper", "permutation", "artifact", "incast", "reps", "leave"):
            ap.error(f"--suites: unknown {suite!r}; known: paper, permutation, artifact, incast, "
                     "reps, leave, sweep")  # fmt: skip
        schemes = {"incast": "default", "leave": args.leave_schemes,
                   "reps": args.reps_lbs}.get(suite, args.schemes)  # fmt: skip
        for scheme in schemes.split(","):
            compare(suite, scheme, engines, args)


if __name__ == "__main__":
    main()
