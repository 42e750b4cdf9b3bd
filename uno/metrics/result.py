"""What a run produced, whatever the engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from uno.metrics.summary import format_summary


@dataclass
class RunResult:
    """What a run produced: the per-flow table, sampled tables and the summary dict."""

    flows: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    #: the run's result folder, when it was written to one
    run_dir: Path | None = None
    #: loaded from a complete folder of the same config instead of simulated again
    reused: bool = False

    def summary_text(self) -> str:
        return format_summary(self.summary)

    @property
    def status(self) -> str | None:
        """The run's status: "complete", or "incomplete" when flows it waited for were unfinished
        at its stop time (``summary["run"]["status"]``; :func:`uno.api.run_status`)."""
        return self.summary.get("run", {}).get("status")
