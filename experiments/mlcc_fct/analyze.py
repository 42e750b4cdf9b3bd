"""MLCC's Figs. 11-15 from run tables: mixed traffic, the average FCT per class and scheme and
MLCC's reduction against each baseline (Figs. 11-12), and the 99.9th-percentile FCT by flow
size (Figs. 13-14).

    python experiments/mlcc_fct/analyze.py SWEEP_DIR [--out DIR]

Runs are grouped by their workload (CDF, intra-DC and cross-DC loads) and long-distance links'
delay (Fig. 15: 1 ms). For each group: per
scheme and class the flows finished / started, the mean and the 99.9th-percentile FCT (ms), and
MLCC's reduction of the mean, 1 - FCT_mlcc / FCT_scheme (the paper's percentages); then the
99.9th percentile in flow-size bins. Writes mlcc_fct.png (the bars of Figs. 11-12) and
mlcc_fct.json.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    output_dir,
    scheme_label,
    write_json,
)

#: flow-size bins of the percentile table (bytes): Figs. 13-14 split at 5 MB
SIZE_EDGES = (0, 100_000, 1_000_000, 5_000_000, float("inf"))
CLASSES = ("intra", "inter")


def workload_label(run: dict) -> str:
    w = run["config"]["workload"]
    wan_ms = run["config"]["topo"]["wan_delay_us"] / 1000
    return f"{w['intra_cdf']} {w['load']:g}+{w['inter_load']:g} wan {wan_ms:g} ms"


def class_fcts(run: dict) -> dict:
    flows = run["flows"]
    out = {}
    for cls in CLASSES:
        sel = flows[flows["cls"] == cls]
        done = sel[sel["finish_ps"].notna()]
        fct_ms = (done["finish_ps"] - done["start_ps"]) / 1e9
        bins = {}
        for lo, hi in zip(SIZE_EDGES[:-1], SIZE_EDGES[1:], strict=True):
            in_bin = fct_ms[(done["size_bytes"] >= lo) & (done["size_bytes"] < hi)]
            bins[f"{lo:g}-{hi:g}"] = float(np.quantile(in_bin, 0.999)) if len(in_bin) else None
        out[cls] = {
            "flows": int(len(sel)),
            "finished": int(len(done)),
            "mean_ms": float(fct_ms.mean()) if len(done) else float("nan"),
            "p999_ms": float(np.quantile(fct_ms, 0.999)) if len(done) else float("nan"),
            "p999_by_size_ms": bins,
        }
    return out


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    groups: dict[str, dict[str, dict]] = {}
    for run in load_runs(args.path):
        groups.setdefault(workload_label(run), {})[scheme_label(run)] = class_fcts(run)
    out = output_dir(args)
    for label, schemes in sorted(groups.items()):
        print(f"\n{label}")
        print(f"{'scheme':11s} {'class':5s} {'done':>9s} {'mean ms':>8s} {'p99.9 ms':>8s} "
              f"{'MLCC cut':>8s}")  # fmt: skip
        ours = schemes.get("mlcc")
        for scheme, per_cls in sorted(schemes.items()):
            for cls in CLASSES:
                r = per_cls[cls]
                cut = ""
                if ours is not None and scheme != "mlcc" and r["mean_ms"] > 0:
                    cut = f"{1 - ours[cls]['mean_ms'] / r['mean_ms']:8.0%}"
                print(f"{scheme:11s} {cls:5s} {r['finished']:>4d}/{r['flows']:<4d} "
                      f"{r['mean_ms']:8.3f} {r['p999_ms']:8.2f} {cut:>8s}")  # fmt: skip
        print("p99.9 FCT (ms) by flow size (bytes):")
        for scheme, per_cls in sorted(schemes.items()):
            for cls in CLASSES:
                cells = " ".join(
                    f"{k}:{'-' if v is None else f'{v:.2f}'}"
                    for k, v in per_cls[cls]["p999_by_size_ms"].items()
                )
                print(f"  {scheme:11s} {cls:5s} {cells}")
    write_json(groups, out / "mlcc_fct.json")
    _plot(groups, out / "mlcc_fct.png")


def _plot(groups: dict, path) -> None:
    fig, axes = plt.subplots(1, max(1, len(groups)), figsize=(4.5 * len(groups), 3.5),
                             squeeze=False)  # fmt: skip
    for ax, (label, schemes) in zip(axes[0], sorted(groups.items()), strict=False):
        names = sorted(schemes)
        x = np.arange(len(names))
        for k, cls in enumerate(CLASSES):
            ax.bar(x + 0.4 * k, [schemes[n][cls]["mean_ms"] for n in names], 0.4, label=cls)
        ax.set_xticks(x + 0.2, names, rotation=30, fontsize=7)
        ax.set_ylabel("mean FCT (ms)")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
