"""Where a result came from: the code (package version, git commit and whether the checkout
had uncommitted changes), the software around it, the machine, when it ran, and a hash of the
resolved config that identifies what was simulated."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from uno.config.compose import resolved_container
from uno.config.schema import RUN_CONTROL_KEYS

#: distributions whose versions every summary records
LIBRARIES = ("numpy", "pandas", "pyarrow", "simpy", "hydra-core", "omegaconf", "numba")


def config_hash(cfg) -> str:
    """SHA-256 of the resolved config without run-control keys (where and how to run: see
    :data:`uno.config.schema.RUN_CONTROL_KEYS`), as canonical JSON. Two runs with equal hashes
    simulate the same thing and, the engine being deterministic, give the same tables."""
    data = resolved_container(cfg)
    for dotted in RUN_CONTROL_KEYS:
        *parents, leaf = dotted.split(".")
        node = data
        for key in parents:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(leaf, None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def _version(dist: str) -> str | None:
    """The installed version of ``dist``, read once per process: the modules a process has
    imported do not change under it, and reading package metadata costs ~0.5 ms a package."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def git_state() -> dict | None:
    """Commit and dirtiness of the checkout ``uno`` is imported from; None when it is not
    imported from a git checkout (e.g. installed from a wheel). One ``git status`` call (the
    branch header holds the commit): a run's summary pays for each git process it starts."""
    package = Path(__file__).resolve().parents[1]  # (the uno package)
    # the checkout's top holds the package: a venv inside some repository would otherwise
    # report that repository
    if not (package.parent / ".git").exists():
        return None
    status = ["status", "--porcelain=v2", "--branch", "--untracked-files=no"]
    try:
        out = subprocess.run(
            ["git", "-C", str(package.parent), *status],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.splitlines()
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if commit is None or commit == "(initial)":
        return None
    return {"commit": commit, "dirty": any(not line.startswith("#") for line in lines)}


def provenance(cfg_hash: str, started_at: datetime, wall_s: float) -> dict:
    """The ``provenance`` block of ``summary.json``."""
    from uno.version import __version__

    return {
        "uno_version": __version__,
        "git": git_state(),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "argv": list(sys.argv),
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": wall_s,
        "config_hash": cfg_hash,
    }


def utc_now() -> datetime:
    return datetime.now(UTC)
