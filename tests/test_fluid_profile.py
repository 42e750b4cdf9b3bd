"""``benchmarks/fluid_profile.py``: each part of a fluid step in seconds of the cycle counter, and
the wall time outside them, adding up to the run's wall time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from uno.fluid.cycles import TALLY

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "fluid_profile.py"


def test_the_parts_and_the_time_outside_them_add_up_to_the_wall_time():
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--bare", "--case", "engine.kind=fluid"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    wall = float(re.search(r"in ([\d.]+) s wall", run.stdout).group(1))
    rows = dict(re.findall(r"^  (\w[\w ]*?) +(-?[\d.]+) +-?[\d.]+% ", run.stdout, re.M))
    parts = [p for p in TALLY._fields if p not in ("steps", "entries", "size")]
    assert set(rows) == {*parts, "outside the parts"}
    seconds = {name: float(s) for name, s in rows.items()}
    # (each printed to the millisecond)
    assert abs(sum(seconds.values()) - wall) <= 0.001 * len(seconds) + 0.01
    # the kernels' parts are timed by the counter, not scaled to the wall: a fluid run spends
    # most of its time in them, and no hybrid part runs
    fluid_parts = sum(seconds[p] for p in parts)
    assert 0.3 * wall < fluid_parts <= wall * 1.05
    assert seconds["packet_events"] == seconds["packets_in"] == seconds["state_out"] == 0.0
