"""Result folders that cannot collide or lie.

A run writes everything (``config.yaml``, ``run.log``, tables, ``summary.json`` last) into a
hidden staging folder beside its target, ``.<name>.partial-<host>-<pid>-<token>``, and renames it
onto the target only when the run is complete. So a folder named like a run either holds a
complete run or does not exist (or is an empty folder Hydra created for a run that then
stopped): a run killed at any point, or refused, leaves nothing that looks complete. The next
run that stages in the same folder removes the staging folders of this host's dead processes
(and their empty targets); those of live processes and of other hosts (a shared file system)
are left alone.

What happens when the target already holds a complete run is the caller's choice
(:class:`IfComplete`): refuse without touching it, skip the run when it simulated the same
config (same config hash — how a multirun resumes), or overwrite. A target that appears while
the run is going (another process finished into the same name first) is never overwritten
silently: a run with a generated name takes the next free name (``<name>-2``, ...); a run into
a named folder fails and says where its own complete results are.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import socket
import tempfile
from enum import StrEnum
from pathlib import Path

from uno.core.errors import ConfigError

SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.yaml"
LOG_FILE = "run.log"
_PARTIAL = ".partial-"
#: a staging folder's name: the target's name, the host and process that stage it, a token
_STAGING = re.compile(r"^\.(?P<target>.+)\.partial-(?P<host>.+)-(?P<pid>\d+)-(?P<token>[0-9a-f]+)$")


class IfComplete(StrEnum):
    """What to do when the target folder already holds a complete run."""

    REFUSE = "refuse"
    SKIP = "skip"  # if its config hash matches; refuse otherwise
    OVERWRITE = "overwrite"


class RunFolderError(ConfigError):
    """The result folder cannot be used as asked (it holds another complete run)."""


def is_complete(path: str | Path) -> bool:
    """Whether ``path`` holds a complete run (its ``summary.json`` is written last)."""
    return (Path(path) / SUMMARY_FILE).is_file()


def stored_config_hash(path: str | Path) -> str | None:
    """The config hash recorded in a complete run's summary (None if absent or unreadable)."""
    try:
        summary = json.loads((Path(path) / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        return None
    return (summary.get("provenance") or {}).get("config_hash")


#: what a run folder may hold: its own files (and Hydra's, from older versions)
_RUN_FILES = (CONFIG_FILE, LOG_FILE, SUMMARY_FILE, ".hydra")
_RUN_SUFFIXES = (".parquet", ".tmp")


def holds_only_run_files(path: Path) -> bool:
    """Whether directory ``path`` holds nothing but what a (possibly incomplete) run writes."""
    if not path.is_dir():
        return False
    return all(p.name in _RUN_FILES or p.name.endswith(_RUN_SUFFIXES) for p in path.iterdir())


def _empty_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not any(path.iterdir())
    except OSError:
        return False


class RunFolder:
    """The result folder of one run: ``target`` once complete, a staging folder meanwhile.

    ``generated_name``: the target's name was made up for this run (a timestamp), so on a
    collision the run takes the next free name instead of failing."""

    def __init__(self, target: str | Path, generated_name: bool = False):
        self.target = Path(target).absolute()
        self.generated_name = generated_name
        self.staging: Path | None = None

    # ---- before the run -----------------------------------------------------------------
    def existing_run(self, cfg_hash: str, if_complete: IfComplete) -> bool:
        """Decide about what the target holds: True if it is a complete run to reuse (skip),
        False if the run should go ahead; raises RunFolderError to refuse. A target holding
        files that are not a uno run, or that cannot be created, is refused whatever
        ``if_complete`` says."""
        check_creatable(self.target)
        if not is_complete(self.target):
            if self.target.exists() and not holds_only_run_files(self.target):
                raise RunFolderError(
                    "out_dir",
                    f"{self.target} exists and holds files that are not a uno run; choose a "
                    f"new or empty folder",
                )
            return False
        if if_complete is IfComplete.OVERWRITE:
            return False
        stored = stored_config_hash(self.target)
        if if_complete is IfComplete.SKIP and stored == cfg_hash:
            return True
        if if_complete is IfComplete.SKIP:
            raise RunFolderError(
                "out_dir",
                f"{self.target} holds a complete run of a different config (hash "
                f"{(stored or '?')[:12]} vs {cfg_hash[:12]}); use another sweep directory, or "
                f"overwrite=true to replace it",
            )
        raise RunFolderError(
            "out_dir",
            f"{self.target} already holds a complete run; choose another out_dir, or pass "
            f"overwrite=true to replace it",
        )

    def open(self) -> Path:
        """Create the staging folder (beside the target, so that the final rename is atomic),
        after removing the stale ones of dead runs there (:func:`remove_stale_staging`)."""
        parent = self.target.parent
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(parent)
        name = f".{self.target.name}{_PARTIAL}{_host()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.staging = parent / name
        self.staging.mkdir()
        return self.staging

    # ---- after the run ------------------------------------------------------------------
    def commit(self, overwrite: bool) -> Path:
        """Move the complete staging folder onto the target; returns the final path."""
        assert self.staging is not None and is_complete(self.staging), "commit a complete run"
        target = self.target
        suffix = 1
        while True:
            self._clear(target, overwrite)
            try:
                os.rename(self.staging, target)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
                    raise
                # another process completed a run into this name while we ran
                if not self.generated_name:
                    kept = self._keep_staging()
                    raise RunFolderError(
                        "out_dir",
                        f"another run completed into {target} while this one ran; this run's "
                        f"complete results are in {kept}",
                    ) from None
                suffix += 1
                target = self.target.with_name(f"{self.target.name}-{suffix}")
                continue
            self.staging = None
            self.target = target
            return target

    def _clear(self, target: Path, overwrite: bool) -> None:
        """Make way at ``target``: nothing, an empty folder, a stale incomplete folder, or (with
        ``overwrite``) a complete run are removed; another complete run is left for the rename
        to refuse."""
        if not target.exists() or _empty_dir(target):
            return  # rename(2) replaces an empty directory atomically
        if (is_complete(target) and not overwrite) or not holds_only_run_files(target):
            return
        trash = target.with_name(f".{target.name}.replaced-{os.getpid()}-{secrets.token_hex(3)}")
        try:
            os.rename(target, trash)
        except FileNotFoundError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def _keep_staging(self) -> Path:
        kept = self.target.with_name(f"{self.target.name}.conflict-{os.getpid()}")
        os.rename(self.staging, kept)
        self.staging = None
        return kept

    def abandon(self) -> None:
        """Remove the staging folder of a run that did not complete, and the target too if it
        is an empty folder (Hydra creates the run directory before the run starts)."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        remove_if_empty(self.target)


def remove_if_empty(path: Path) -> None:
    """Remove ``path`` if it is an empty directory (never anything else)."""
    if _empty_dir(path):
        try:
            path.rmdir()
        except OSError:
            pass


def remove_empty_parents(path: Path, root: Path) -> None:
    """Remove ``path`` if it is an empty directory, then each of its parents while it is one,
    up to but not including ``root`` (parents outside ``root`` are never touched)."""
    path, root = Path(path).absolute(), Path(root).absolute()
    remove_if_empty(path)
    path = path.parent
    while root in path.parents and _empty_dir(path):
        remove_if_empty(path)
        path = path.parent


def check_creatable(path: str | Path, field: str = "out_dir") -> None:
    """Refuse (:class:`RunFolderError` naming ``field``) a result folder that cannot be made: a
    path that is a file or lies under one, or whose nearest existing folder takes no new entry
    (read-only, or a pseudo file system such as /proc)."""
    target = Path(path).absolute()
    try:
        if target.exists() and not target.is_dir():
            raise RunFolderError(field, f"{target} exists and is not a folder")
        base = target.parent  # the staging folder goes beside the target
        while not base.exists():
            base = base.parent
    except OSError as exc:
        raise RunFolderError(field, f"cannot create {target}: {exc.strerror}") from None
    if not base.is_dir():
        raise RunFolderError(field, f"cannot create {target}: {base} is a file, not a folder")
    # permission bits do not tell (root ignores them, /proc refuses everyone): try it
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".uno-probe-", dir=base))
    except OSError as exc:
        raise RunFolderError(
            field, f"cannot create {target}: {base} takes no new folder ({exc.strerror})"
        ) from None


def _host() -> str:
    """This host's name as it goes in staging folder names (file-name safe)."""
    return re.sub(r"[^A-Za-z0-9._]", "_", socket.gethostname()) or "host"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (EPERM: alive, another user's)
        return True
    return True


def remove_stale_staging(parent: Path) -> list[Path]:
    """Remove the staging folders in ``parent`` left by runs of this host whose process is gone
    (killed: no chance to clean up), and their targets when those are empty folders. Returns
    what was removed. Staging folders of live processes, of other hosts and not named by this
    module are kept."""
    removed = []
    host = _host()
    try:
        entries = list(Path(parent).iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _STAGING.match(entry.name)
        if m is None or m["host"] != host or int(m["pid"]) <= 0 or not entry.is_dir():
            continue
        if _pid_alive(int(m["pid"])):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        remove_if_empty(entry.parent / m["target"])
        removed.append(entry)
    return removed
