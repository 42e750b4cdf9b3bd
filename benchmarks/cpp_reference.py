"""Wall time of our packet engine against the Uno authors' C++ simulator (htsim, in their artifact
spcl/Uno_SC25) on the artifact's own incast scenarios: 10^9-B flows to host 240, all from t = 0.

Scenarios (the artifact's traffic matrix and variant in artifact_scripts/fig3_run_all.py and
fig8_comparison.py, whose flags are copied below; our matching configs):

    uno_4_4         4_4_1000MB.cm, "uno"     experiment=artifact_check incast_mix=artifact_intra4_inter4 cc=uno_artifact
    gemini_4_4      4_4_1000MB.cm, "gemini"  experiment=artifact_check incast_mix=artifact_intra4_inter4 cc=gemini_artifact
    mprdma_bbr_4_4  4_4_1000MB.cm, "bbr"     experiment=artifact_check incast_mix=artifact_intra4_inter4 cc=mprdma_bbr_artifact
    uno_8_0         8_0_1000MB.cm, "uno"     experiment=artifact_check incast_mix=artifact_intra8 cc=uno_artifact

and the Figs. 10-12 traffic at 40% load (websearchIntra_AlibabaInter_5000f_40l.cm, the four lines
of sc25_fig10_realistic_40_load.sh): fig10_uno_ecmp, fig10_gemini, fig10_mprdma_bbr, fig10_uno,
against ``experiment=artifact_fig10 scheme=artifact_<scheme>``. For these the flows are also
compared one by one (matched by the matrix's flow ids): per class, the median of our FCT over the
artifact's and how many flows differ by more than 2x.

Per scenario and repetition, the artifact's binary (sim/datacenter/htsim_lcp_entry_modern, run
from the artifact's root with the authors' command line; only -logging-folder points to a
temporary folder, deleted after the run: with -collect_data 1 it fills ~0.5 GB of per-event logs)
and then ``uno-run`` (``python -m uno.cli``, a subprocess of this interpreter, results into a
temporary folder) run one after the other. Before timing, each scenario of ours runs once briefly
(2-MB flows; Figs. 10-12: 0.2 ms simulated) so that Numba's kernels are compiled or loaded from
its cache (warm-up wall time printed).

The artifact is not built here: ``--artifact`` names a checkout built as its own README says
(the binary above must exist; the script stops with a message naming it otherwise).

Prints, per run: wall time of each process (and its CPU time, user + sys, less sensitive to other
load on the machine), our engine loop's own wall time (summary ``run.wall_s``), simulated time of
each (ours: ``run.sim_time_us``, the run stops when all flows are done; the artifact: its
``-end_time`` of 2860 ms, since its retransmission-timer scanners reschedule themselves every
1-4 us and keep its event list busy until then; the last flow completion time of each is printed
beside it), flows done, mean completion time per class, and our packet-hops per second of engine
loop. A last table gives, per scenario, the median over repetitions and the ratio ours / C++.

    python benchmarks/cpp_reference.py --artifact /path/to/Uno_SC25
        [--scenarios uno_4_4,gemini_4_4,mprdma_bbr_4_4,uno_8_0] [--repeat 1] [--timeout 1800]
        [--cpp-collect-data 1] [--cpp-until-done]
    python benchmarks/cpp_reference.py --ours-only [--scenarios mprdma_bbr_4_4] [--repeat 3]

``--ours-only`` runs our side alone (no artifact needed), to compare two versions of this
package on the artifact's scenarios: run it with each version's interpreter.

``--cpp-collect-data 0`` runs the artifact without its per-event logs (the authors' scripts
run with 1, whose writing is 40-60% of its wall time on these scenarios): the fairer engine
against engine comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BINARY = "sim/datacenter/htsim_lcp_entry_modern"
TM_DIR = "lcp/configs/tms/simple"
TM_WORKLOADS = "lcp/configs/tms/workloads"
ARTIFACT_END_MS = 2860.0  # -end_time of every incast variant below
FIG10_END_MS = 5000.0  # the Figs. 10-12 scripts set no -end_time: the simulator's default
HOSTS_PER_DC = 128  # -nodes 128 per datacenter (the traffic matrices use hosts 0..255)

# The authors' flags per variant (artifact_scripts/fig3_run_all.py, run_benchmark), in their order;
# {tm} and {log} are filled in.
# (the baselines' runs share their first flags)
_BASELINE_FLAGS = [
    "-o", "uec_entry", "-queue_type", "composite", "-hop_latency", "1000",
    "-switch_latency", "0", "-nodes", "128", "-collect_data", "1", "-topology", "interdc",
    "-os_border", "16", "-strat", "rand", "-linkspeed", "100000",
    "-topo", "lcp/configs/topos/fat_tree_100Gbps.topo", "-tm", "{tm}",
    "-logging-folder", "{log}", "-seed", "15", "-noFi", "-noQaInter", "-noQaIntra",
    "-forceQueueSize", "1000000",
]  # fmt: skip
CPP_FLAGS = {
    "uno": [
        "-o", "uec_entry", "-seed", "215", "-queue_type", "composite", "-hop_latency", "1000",
        "-switch_latency", "0", "-nodes", "128", "-collect_data", "1", "-topology", "interdc",
        "-os_border", "16", "-strat", "rand", "-linkspeed", "100000",
        "-topo", "lcp/configs/topos/fat_tree_100Gbps.topo", "-tm", "{tm}", "-noRto",
        "-queueSizeRatio", "1", "-IntraFiT", "100", "-InterFiT", "2500", "-interKmax", "60",
        "-interKmin", "20", "-ecnAlpha", "0.65", "-usePacing", "1", "-end_time", "2860",
        "-lcpK", "6", "-interEcn", "-mdRTT", "0.0003515625", "-interdcDelay", "886500",
        "-kmin", "10", "-kmax", "80", "-lcpAlgo", "aimd_phantom", "-use_phantom", "1",
        "-phantom_size", "22400515", "-phantom_slowdown", "5", "-phantom_kmin", "2",
        "-phantom_kmax", "60", "-forceQueueSize", "1000000", "-logging-folder", "{log}", "-noFi",
    ],
    "gemini": [
        *_BASELINE_FLAGS,
        "-interKmin", "25", "-interKmax", "75", "-kmin", "25",
        "-kmax", "75", "-ecnAlpha", "0.5", "-usePacing", "1", "-end_time", "2860", "-lcpK", "6",
        "-interAlgo", "gemini", "-intraAlgo", "gemini", "-geminiH", "0.00024",
        "-geminiBeta", "0.1", "-geminiT", "0.1", "-interdcDelay", "886500",
    ],
    "bbr": [
        *_BASELINE_FLAGS,
        "-interKmin", "25", "-interKmax", "75",
        "-end_time", "2860", "-kmin", "25", "-kmax", "75", "-ecnAlpha", "0.5", "-usePacing", "1",
        "-lcpK", "6", "-interAlgo", "bbr", "-intraAlgo", "mprdma", "-interdcDelay", "886500",
        "-interEcn",
    ],
}  # fmt: skip

# The Figs. 10-12 scripts (sc25_fig10_realistic_40_load.sh; its "Uno" line is cut short there and
# whole in the artifact's first commit, with the flags of the 60% and 80% lines)
_FIG10_FLAGS = [
    "-o", "uec_entry", "-seed", "15", "-queue_type", "composite", "-hop_latency", "1000",
    "-switch_latency", "0", "-nodes", "128", "-collect_data", "1", "-topology", "interdc",
    "-os_border", "16", "-strat", "{strat}", "-linkspeed", "100000",
    "-topo", "lcp/configs/topos/fat_tree_100Gbps.topo", "-tm", "{tm}", "-noFi",
]  # fmt: skip
_FIG10_UNO = [
    "-noRto", "-forceQueueSize", "1000000", "-interKmin", "25", "-interKmax", "75", "-kmin", "25",
    "-kmax", "75", "-lcpAlgo", "aimd_phantom", "-use_phantom", "1", "-phantom_size", "22400515",
    "-phantom_slowdown", "10", "-phantom_kmin", "2", "-phantom_kmax", "60", "-ecnAlpha", "0.5",
    "-usePacing", "1", "-interEcn", "-lcpK", "6", "-interdcDelay", "886500",
    "-logging-folder", "{log}",
]  # fmt: skip
CPP_FLAGS.update({
    "fig10_gemini": [
        *_FIG10_FLAGS, "-noQaInter", "-noQaIntra", "-forceQueueSize", "1000000", "-kmin", "25",
        "-kmax", "75", "-ecnAlpha", "0.5", "-usePacing", "1", "-lcpK", "6", "-interAlgo",
        "gemini", "-intraAlgo", "gemini", "-geminiH", "0.00024", "-geminiBeta", "0.1",
        "-geminiT", "5", "-interdcDelay", "886500", "-logging-folder", "{log}",
    ],
    "fig10_mprdma_bbr": [
        *_FIG10_FLAGS, "-noQaInter", "-noQaIntra", "-noRto", "-forceQueueSize", "1000000",
        "-interKmin", "25", "-interKmax", "75", "-kmin", "25", "-kmax", "75", "-ecnAlpha", "0.5",
        "-usePacing", "1", "-lcpK", "6", "-interAlgo", "bbr", "-ccAlgoIntra", "mprdma",
        "-interdcDelay", "886500", "-logging-folder", "{log}",
    ],
    "fig10_uno_ecmp": [*_FIG10_FLAGS, *_FIG10_UNO],
    "fig10_uno": [*_FIG10_FLAGS, *_FIG10_UNO],
})  # fmt: skip
_STRAT = {"fig10_uno": "simple_subflow"}  # the others: ecmp_classic

WARMUP_BYTES = 2_000_000
_INCAST_WARMUP = [f"workload.size_bytes={WARMUP_BYTES}"]
_FIG10_TM = f"{TM_WORKLOADS}/websearchIntra_AlibabaInter_5000f_40l.cm"
_FIG10_WARMUP = ["engine.max_sim_time_ms=0.2"]  # (compiles the kernels; the run stops early)

# name: (traffic matrix, artifact variant, our overrides, our warm-up overrides)
SCENARIOS = {
    "uno_4_4": (f"{TM_DIR}/4_4_1000MB.cm", "uno", ["experiment=artifact_check",
                "incast_mix=artifact_intra4_inter4", "cc=uno_artifact"], _INCAST_WARMUP),
    "gemini_4_4": (f"{TM_DIR}/4_4_1000MB.cm", "gemini", ["experiment=artifact_check",
                   "incast_mix=artifact_intra4_inter4", "cc=gemini_artifact"], _INCAST_WARMUP),
    "mprdma_bbr_4_4": (f"{TM_DIR}/4_4_1000MB.cm", "bbr", ["experiment=artifact_check",
                       "incast_mix=artifact_intra4_inter4", "cc=mprdma_bbr_artifact"],
                       _INCAST_WARMUP),
    "uno_8_0": (f"{TM_DIR}/8_0_1000MB.cm", "uno", ["experiment=artifact_check",
                "incast_mix=artifact_intra8", "cc=uno_artifact"], _INCAST_WARMUP),
    **{
        f"fig10_{scheme}": (_FIG10_TM, f"fig10_{scheme}",
                            ["experiment=artifact_fig10", f"scheme=artifact_{scheme}"],
                            _FIG10_WARMUP)
        for scheme in ("uno_ecmp", "gemini", "mprdma_bbr", "uno")
    },
}  # fmt: skip

FLOW_LINE = re.compile(
    r"Flow id=(\d+) Completion time is ([0-9.e+\-]+)us - Flow Finishing Time ([0-9.e+\-]+)us"
    r".*? - From (\d+) - To (\d+)"
)


def cpp_command(artifact: Path, variant: str, tm: str, log_dir: Path, collect: str) -> list[str]:
    fill = {"tm": tm, "log": str(log_dir), "strat": _STRAT.get(variant, "ecmp_classic")}
    flags = [f.format(**fill) if "{" in f else f for f in CPP_FLAGS[variant]]
    i = flags.index("-collect_data")
    flags[i + 1] = collect
    return [str(artifact / BINARY), *flags]


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _timed(
    cmd: list[str], cwd: Path, timeout: float, stop_at_flows: int = 0
) -> tuple[float, float, str, int | None, bool]:
    """Wall and CPU seconds of one child process, its combined output, its return code (None on
    timeout) and whether it was stopped: with ``stop_at_flows``, once that many flow-completion
    lines were printed (the flows' times are then known; the artifact's scanners would run on to
    its end time)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    if not stop_at_flows:
        try:
            p = subprocess.run(
                cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                timeout=timeout, check=False,
            )  # fmt: skip
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            rc = None
        return time.perf_counter() - t0, _children_cpu() - cpu0, out, rc, False
    lines, seen, stopped, rc = [], 0, False, None
    with subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        for line in proc.stdout:
            lines.append(line)
            seen += "Completion time is" in line
            if seen >= stop_at_flows or time.perf_counter() - t0 > timeout:
                stopped = seen >= stop_at_flows
                proc.kill()
                break
        rc = proc.wait()
    rc = 0 if stopped else (None if time.perf_counter() - t0 > timeout else rc)
    return time.perf_counter() - t0, _children_cpu() - cpu0, "".join(lines), rc, stopped


def _class_stats(fct_us: dict[int, tuple[str, float]]) -> dict[str, tuple[float, float]]:
    """Per class: the mean and p99 (linear) FCT in µs of the flows ``{id: (class, fct_us)}``."""
    import numpy as np

    by_cls: dict[str, list[float]] = {}
    for cls, fct in fct_us.values():
        by_cls.setdefault(cls, []).append(fct)
    return {c: (float(np.mean(v)), float(np.quantile(v, 0.99))) for c, v in by_cls.items()}


def _class_means(stats: dict[str, tuple[float, float]]) -> str:
    parts = [
        f"{cls} {stats[cls][0] / 1000:.3f} (p99 {stats[cls][1] / 1000:.3f})"
        for cls in ("intra", "inter")
        if cls in stats
    ]
    return ", ".join(parts) if parts else "-"


def run_cpp(artifact: Path, name: str, collect: str, timeout: float, until_done: bool) -> dict:
    tm, variant, _, _ = SCENARIOS[name]
    n_flows = sum(1 for line in (artifact / tm).read_text().splitlines() if "->" in line)
    log_dir = Path(tempfile.mkdtemp(prefix=f"cpp_ref_{name}_"))
    try:
        wall, cpu, out, rc, stopped = _timed(
            cpp_command(artifact, variant, tm, log_dir, collect), artifact, timeout,
            n_flows if until_done else 0,
        )  # fmt: skip
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    flows: dict[int, tuple[str, float]] = {}
    last_ms = 0.0
    for m in FLOW_LINE.finditer(out):
        src, dst = int(m.group(4)), int(m.group(5))
        cls = "intra" if src // HOSTS_PER_DC == dst // HOSTS_PER_DC else "inter"
        flows[int(m.group(1))] = (cls, float(m.group(2)))
        last_ms = max(last_ms, float(m.group(3)) / 1000)
    if rc != 0:
        tail = "\n".join(out.splitlines()[-5:])
        status = "timed out" if rc is None else f"exit status {rc}"
        print(f"  C++ {name}: {status} after {wall:.1f} s; last output:\n{tail}")
    end_ms = FIG10_END_MS if variant.startswith("fig10") else ARTIFACT_END_MS
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "sim_ms": float("nan") if rc != 0 else (last_ms if stopped else end_ms),
        "stopped": stopped,
        "last_fct_ms": last_ms,
        "done": f"{len(flows)}/{n_flows}",
        "flows": flows,
        "fct": _class_means(_class_stats(flows)),
        "ok": rc == 0,
    }


def run_ours(name: str, extra: list[str], timeout: float) -> dict:
    _, _, overrides, _ = SCENARIOS[name]
    tmp = Path(tempfile.mkdtemp(prefix=f"uno_ref_{name}_"))
    cmd = [
        sys.executable, "-m", "uno.cli", *overrides, *extra,
        f"out_dir={tmp / 'run'}", f"hydra.run.dir={tmp / 'hydra'}",
    ]  # fmt: skip
    try:
        wall, cpu, out, rc, _ = _timed(cmd, Path.cwd(), timeout)
        summary_path = tmp / "run" / "summary.json"
        if rc != 0 or not summary_path.exists():
            tail = "\n".join(out.splitlines()[-5:])
            status = "timed out" if rc is None else f"exit status {rc}"
            print(f"  ours {name}: {status} after {wall:.1f} s; last output:\n{tail}")
            return {"wall_s": wall, "cpu_s": cpu, "ok": False}
        summary = json.loads(summary_path.read_text())
        import pandas as pd

        table = pd.read_parquet(tmp / "run" / "flows.parquet")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    run, classes = summary["run"], summary["classes"]
    done = table[table["fct_ps"].notna()]
    # the flows of a connection matrix carry its ids as tags "id<k>"
    ids = done["tag"].str.removeprefix("id")
    keys = ids.astype(int) if ids.str.isdigit().all() else done["flow_id"]
    flows = {
        int(k): (c, float(f) / 1e6)
        for k, c, f in zip(keys, done["cls"], done["fct_ps"], strict=True)
    }
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "engine_s": run["wall_s"],
        "hops": run["packet_hops"],
        "sim_ms": run["sim_time_us"] / 1000,
        "last_fct_ms": classes["all"].get("fct_max_us", float("nan")) / 1000,
        "done": f"{classes['all']['finished']}/{classes['all']['flows']}",
        "flows": flows,
        "fct": _class_means(_class_stats(flows)),
        "ok": True,
    }


def per_flow(cpp: dict[int, tuple[str, float]], ours: dict[int, tuple[str, float]]) -> str:
    """Flow by flow (the flows both finished, matched by the matrix's flow id): per class the
    median of ours / C++ FCT and how many flows differ by more than 2x either way."""
    import numpy as np

    parts = []
    for cls in ("intra", "inter"):
        r = np.array([ours[k][1] / v for k, (c, v) in cpp.items() if c == cls and k in ours])
        if len(r):
            far = int(np.sum((r > 2) | (r < 0.5)))
            parts.append(f"{cls} {len(r)} flows, median ours/C++ {np.median(r):.3f}, {far} off >2x")
    return "; ".join(parts) or "-"


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--artifact", type=Path, help="a built Uno_SC25 checkout")
    ap.add_argument("--ours-only", action="store_true", help="run our side alone")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds allowed to each run (either side)"
    )
    ap.add_argument(
        "--cpp-collect-data",
        choices=("0", "1"),
        default="1",
        help="the artifact's -collect_data (1 as the authors' scripts; 0 skips its per-event logs)",
    )
    ap.add_argument(
        "--cpp-until-done",
        action="store_true",
        help="stop the artifact once every flow of its matrix has finished (its timer scanners "
        "otherwise run to its end time: 5 s simulated for Figs. 10-12); its wall time is then "
        "that of the flows alone",
    )
    ap.add_argument("overrides", nargs="*", help="extra overrides for our runs")
    args = ap.parse_args()

    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        sys.exit(f"cpp_reference: unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}")
    if args.ours_only:
        artifact = None
    elif args.artifact is None:
        sys.exit("cpp_reference: --artifact names a built Uno_SC25 checkout (or --ours-only)")
    else:
        artifact = args.artifact.resolve()
        binary = artifact / BINARY
        if not binary.is_file() or not os.access(binary, os.X_OK):
            sys.exit(
                f"cpp_reference: no executable {binary}: --artifact must name a built checkout "
                "of spcl/Uno_SC25 (built as its README says)"
            )
        for n in names:
            tm = artifact / SCENARIOS[n][0]
            if not tm.is_file():
                sys.exit(f"cpp_reference: the artifact has no traffic matrix {tm}")

    import uno

    print(f"uno package: {Path(uno.__file__).parent}; artifact: {artifact or '-'}")
    print(
        f"cores: {os.cpu_count()}; C++ -collect_data {args.cpp_collect_data}; repeat {args.repeat}"
    )
    for n in names:  # (a short run of each scenario: Numba compiles or loads its kernels)
        _, _, overrides, warm = SCENARIOS[n]
        tmp = Path(tempfile.mkdtemp(prefix="uno_warm_"))
        cmd = [
            sys.executable, "-m", "uno.cli", *overrides, *warm, *args.overrides,
            f"out_dir={tmp / 'run'}", f"hydra.run.dir={tmp / 'hydra'}",
        ]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"warm-up {n} ({' '.join(warm)}): {time.perf_counter() - t0:.1f} s wall")

    rows: dict[str, list[tuple[dict, dict]]] = {n: [] for n in names}
    for rep in range(args.repeat):
        for n in names:
            print(f"\n{n} run {rep + 1}/{args.repeat}")
            c = {"ok": False}
            if artifact is not None:
                print(f"  load (1/5/15 min) before C++: {_load()}")
                c = run_cpp(artifact, n, args.cpp_collect_data, args.timeout, args.cpp_until_done)
                stop = ", stopped once every flow finished" if c["stopped"] else ""
                print(
                    f"  C++  wall {c['wall_s']:8.1f} s, cpu {c['cpu_s']:8.1f} s; simulated "
                    f"{c['sim_ms']:.0f} ms{stop} (last FCT {c['last_fct_ms']:.1f} ms); done "
                    f"{c['done']}; mean FCT ms: {c['fct']}"
                )
            print(f"  load (1/5/15 min) before ours: {_load()}")
            o = run_ours(n, args.overrides, args.timeout)
            if o["ok"]:
                print(
                    f"  ours wall {o['wall_s']:8.1f} s, cpu {o['cpu_s']:8.1f} s, engine loop "
                    f"{o['engine_s']:.1f} s; simulated {o['sim_ms']:.1f} ms (last FCT "
                    f"{o['last_fct_ms']:.1f} ms); done {o['done']}; mean FCT ms: {o['fct']}; "
                    f"{o['hops']:,} packet-hops, {o['hops'] / o['engine_s']:,.0f}/s of engine loop"
                )
                if c["ok"] and SCENARIOS[n][0].startswith(TM_WORKLOADS):
                    print(f"  per flow: {per_flow(c['flows'], o['flows'])}")
            rows[n].append((c, o))

    def med(vals: list[float]) -> float:
        return statistics.median(vals) if vals else float("nan")

    if artifact is None:
        print(f"\n{'scenario':<15} {'ours s':>8} {'engine s':>9} {'hops/s':>11}")
        for n in names:
            ok = [o for _, o in rows[n] if o["ok"]]
            if ok:
                ow = med([o["wall_s"] for o in ok])
                ew = med([o["engine_s"] for o in ok])
                hops = med([o["hops"] / o["engine_s"] for o in ok])
                print(f"{n:<15} {ow:8.1f} {ew:9.1f} {hops:11,.0f}")
            else:
                print(f"{n:<15} (no complete run)")
        return

    print(
        f"\n{'scenario':<15} {'C++ s':>8} {'ours s':>8} {'engine s':>9} {'ours/C++':>9} "
        f"{'eng/C++':>8} {'C++ sim ms':>11} {'ours sim ms':>12} {'hops/s':>11}"
    )
    for n in names:
        ok = [(c, o) for c, o in rows[n] if c["ok"] and o["ok"]]
        if not ok:
            print(f"{n:<15} (no complete pair of runs)")
            continue
        cw = med([c["wall_s"] for c, _ in ok])
        ow = med([o["wall_s"] for _, o in ok])
        ew = med([o["engine_s"] for _, o in ok])
        hops = med([o["hops"] / o["engine_s"] for _, o in ok])
        print(
            f"{n:<15} {cw:8.1f} {ow:8.1f} {ew:9.1f} {ow / cw:9.2f} {ew / cw:8.2f} "
            f"{ok[0][0]['sim_ms']:11.0f} {med([o['sim_ms'] for _, o in ok]):12.1f} {hops:11,.0f}"
        )


if __name__ == "__main__":
    main()
