"""Record the golden trajectories of ``tests/test_cc_laws.py`` from the current laws:
``python tests/golden/record_cc.py [VARIANT ...]`` (default: every variant). Run it only when a
law's arithmetic changes on purpose, and say why in the commit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cc_events import VARIANTS, sequences, trajectory, variant_params  # noqa: E402

from uno.cc import registry  # noqa: E402
from uno.cc.adapter import LawControl  # noqa: E402


def main(names: list[str]) -> None:
    for variant in names or list(VARIANTS):
        algo, params = variant_params(variant)
        law, kind = registry.LAW_BY_NAME[algo], registry.KIND[algo]
        runs = [
            trajectory(LawControl(law, kind, params, ctx), evs) for ctx, evs in sequences(variant)
        ]
        np.savez_compressed(Path(__file__).parent / "cc" / f"{variant}.npz", *runs)
        print(f"{variant}: {len(runs)} trajectories")


if __name__ == "__main__":
    main(sys.argv[1:])
