"""``uno-claims``: run the claim ledger and write its table.

    uno-claims [--reduced | --full] [--only ID,PREFIX.*] [--out DIR] [--jobs N]
               [--markdown PATH [--check]]

Every run the selected claims need is run once (claims sharing a configuration share its run)
into ``DIR/runs/<hash of its overrides>``, a run folder that a later call reuses when its
configuration is unchanged (``uno-run``'s ``if_complete=skip``); ``--jobs`` runs that many at a
time. Then each claim's measure reads its runs and its rule says whether our value agrees with
the paper's. ``DIR/claims.parquet`` and ``DIR/claims.md`` hold the table: per claim, the paper
and place, the claim, what we measure, the rule, our value and the status — "agrees",
"disagrees", "no value" (the measure could not be taken, the reason in ``note``), "not yet" (no
measure in the ledger yet) or "not run" (no runs in this form). ``--markdown PATH`` writes the
Markdown table there too (``docs/claims.md`` is this with ``--reduced``); with ``--check`` it
compares instead and exits 1 when the file differs. The full form is the experiments at the
paper's scale (hours); on a cluster run its runs as a Hydra multirun (``uno-run -m`` with
``hydra/launcher=submitit_slurm``) into the same folders and call ``uno-claims --full`` after.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import sys
from pathlib import Path

import pandas as pd

from uno.claims.ledger import Claim, load_claims
from uno.claims.measures import MeasureError

#: the table's columns
COLUMNS = ("id", "paper", "where", "claim", "basis", "experiment", "measure", "rule", "form",
           "ours", "status", "note")  # fmt: skip


def run_folder(out: Path, overrides: tuple[str, ...]) -> Path:
    """Where the run of ``overrides`` is kept: a hash of them under ``out/runs``."""
    key = hashlib.sha256("\n".join(overrides).encode()).hexdigest()[:16]
    return out / "runs" / key


def run_claims(claims: list[Claim], form: str, out: Path, jobs: int = 1) -> dict:
    """Run (or reuse) every run of ``claims`` in ``form``, ``jobs`` at a time in worker
    processes that each run many (:func:`uno.runs.run_jobs`); returns overrides ->
    RunResult."""
    from uno.api import load_result
    from uno.runs import Job, run_jobs

    wanted = sorted({tuple(o) for c in claims for o in c.runs(form).values()})
    folders = {o: run_folder(out, o) for o in wanted}

    def report(outcome, done: int, total: int) -> None:
        print(f"uno-claims: run {done}/{total} done", file=sys.stderr)

    outcomes = run_jobs([Job(o, str(folders[o])) for o in wanted], jobs, report)
    failed = [x for x in outcomes if x.status == "failed"]
    if failed:
        raise SystemExit(f"uno-claims: {len(failed)} run(s) failed, e.g. "
                         f"{' '.join(failed[0].job.overrides)}: {failed[0].error}")  # fmt: skip
    return {o: load_result(folders[o]) for o in wanted}


def evaluate(claims: list[Claim], form: str, results: dict) -> pd.DataFrame:
    """The table: one row per claim (see the module docstring)."""
    rows = []
    for c in claims:
        row = {
            "id": c.id, "paper": c.paper, "where": c.where, "claim": c.claim, "basis": c.basis,
            "experiment": c.experiment, "measure": c.measure_doc,
            "rule": c.expect.describe() if c.expect else "", "form": form, "ours": float("nan"),
            "status": "", "note": "",
        }  # fmt: skip
        runs = c.runs(form)
        if c.measure is None:
            row["status"] = "not yet"
        elif not runs:
            row["status"] = "not run"
        elif any(tuple(o) not in results for o in runs.values()):
            row["status"], row["note"] = "not run", "its runs are not among those given"
        else:
            try:
                ours = float(c.measure({name: results[tuple(o)] for name, o in runs.items()}))
            except MeasureError as e:
                row["status"], row["note"] = "no value", str(e)
            else:
                row["ours"] = ours
                row["status"] = "agrees" if c.expect.agrees(ours) else "disagrees"
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def markdown(table: pd.DataFrame, generated_by: str | None = None) -> str:
    """The table as the Markdown of ``docs/claims.md``; ``generated_by``: the command it names
    as its source (``uno-claims --<form> --markdown docs/claims.md`` unless given)."""
    form = table["form"].iloc[0] if len(table) else "reduced"
    counts = table["status"].value_counts()
    summary = ", ".join(f"{counts[s]} {s}" for s in ("agrees", "disagrees", "no value",
                                                     "not yet", "not run") if s in counts)  # fmt: skip
    lines = [
        "# The claim ledger",
        "",
        "Every headline claim of the papers that an experiment here can check, with the value our",
        "runs give and whether it agrees with the paper by the rule stated beside it (the rules",
        "are fixed in `uno/claims/`, one module per paper, before any run). Generated by",
        f"`{generated_by or f'uno-claims --{form} --markdown docs/claims.md'}`.",
        "",
        ("The reduced form runs the experiments at a reduced scale (fewer or shorter flows, fewer "
         "seeds) in minutes, so its values show direction more than the papers' magnitudes; "
         "`uno-claims --full` runs them at the papers' scale."
         if form == "reduced" else "The full form runs the experiments at the papers' scale."),
        "",
        f"{len(table)} claims: {summary}.",
        "",
        "| claim | paper, where | claim (the paper's number) | we measure | rule | ours | status |",
        "|---|---|---|---|---|---:|---|",
    ]  # fmt: skip
    for r in table.itertuples():
        ours = "" if pd.isna(r.ours) else f"{r.ours:.3g}"
        status = r.status + (f" ({r.note})" if r.note else "")
        cells = (f"`{r.id}`", f"{r.paper}, {r.where}", r.claim, r.measure, r.rule, ours, status)
        lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines) + "\n"


def select(claims: tuple[Claim, ...], only: str | None) -> list[Claim]:
    """The claims whose id matches one of the comma-separated patterns ``only`` (all: None)."""
    if not only:
        return list(claims)
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    chosen = [c for c in claims if any(fnmatch.fnmatch(c.id, p) for p in patterns)]
    if not chosen:
        raise SystemExit(f"uno-claims: --only {only!r} matches no claim id")
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="uno-claims", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    form = ap.add_mutually_exclusive_group()
    form.add_argument("--reduced", action="store_true", help="the reduced form (the default)")
    form.add_argument("--full", action="store_true", help="the papers' scale (hours)")
    ap.add_argument("--only", help="comma-separated claim ids or patterns (fnmatch)")
    ap.add_argument("--out", default="results/claims", help="folder for runs and the table")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time")
    ap.add_argument("--markdown", help="also write the Markdown table to this file")
    ap.add_argument("--check", action="store_true", help="compare --markdown's file instead")
    args = ap.parse_args(argv)
    if args.check and not args.markdown:
        ap.error("--check needs --markdown")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    chosen = select(load_claims(), args.only)
    form_name = "full" if args.full else "reduced"
    out = Path(args.out) / form_name
    results = run_claims(chosen, form_name, out, args.jobs)
    table = evaluate(chosen, form_name, results)
    out.mkdir(parents=True, exist_ok=True)
    table.to_parquet(out / "claims.parquet", index=False)
    text = markdown(table)
    (out / "claims.md").write_text(text, encoding="utf-8")
    for r in table.itertuples():
        ours = "" if pd.isna(r.ours) else f"{r.ours:.3g}"
        print(f"{r.id:<40} {r.status:<10} {ours:>8}  {r.note}".rstrip())
    print(f"uno-claims: table in {out / 'claims.md'}")
    if args.markdown:
        target = Path(args.markdown)
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                print(f"uno-claims: {target} differs from the ledger's table (regenerate it "
                      f"with uno-claims --{form_name} --markdown {target})", file=sys.stderr)  # fmt: skip
                return 1
        else:
            target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
