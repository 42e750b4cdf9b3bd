"""Where Numba keeps uno's compiled kernels, so that a cached kernel is never stale.

Numba's cache (``@njit(cache=True)``) checks only the source file of the function it loads: a
kernel that calls a function of another module keeps that function's old code, compiled into
it, after the other module changes. So uno's kernels are cached in a folder named after a hash
of the package's sources: any change to them gives a new folder, and the kernels compile once
again there. The folder is ``$NUMBA_CACHE_DIR/uno-<hash>``, or ``~/.cache/uno/numba/uno-<hash>``
when ``NUMBA_CACHE_DIR`` is not set (``$XDG_CACHE_HOME`` is respected); the folders of older
sources beyond the newest few are removed, and so is the folder of a process whose sources
changed while it ran (its kernels may have come from either version).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
from pathlib import Path

#: folders of other source versions kept beside the current one (e.g. other checkouts)
KEEP_OTHERS = 3


def source_hash(package_dir: Path) -> str:
    """SHA-256 (first 16 hex digits) of every ``.py`` file under ``package_dir``, by path."""
    h = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        h.update(str(path.relative_to(package_dir)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "uno" / "numba"


def configure(package_dir: Path) -> Path | None:
    """Point Numba's cache at this source version's folder (before any kernel is defined).
    Returns the folder, or None when no writable folder could be made (Numba then uses its
    default places)."""
    import numba

    root = cache_root()
    folder = root / f"uno-{source_hash(package_dir)}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)  # (its age says when a process last used it)
    except OSError:
        return None
    numba.config.CACHE_DIR = str(folder)
    _prune(root, folder)
    atexit.register(_drop_if_changed, package_dir, folder)
    return folder


def _drop_if_changed(package_dir: Path, folder: Path) -> None:
    """At exit: if the sources changed while the process ran, kernels compiled from the new
    ones may sit in the folder named after the old: remove it."""
    try:
        if folder.name != f"uno-{source_hash(package_dir)}":
            shutil.rmtree(folder, ignore_errors=True)
    except OSError:
        pass


def _prune(root: Path, current: Path) -> None:
    try:
        others = [p for p in root.glob("uno-*") if p.is_dir() and p != current]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[KEEP_OTHERS:]:
        shutil.rmtree(old, ignore_errors=True)


def cached(dispatcher) -> bool:
    """Whether ``dispatcher`` (an ``@njit(cache=True)`` kernel) is compiled already: loaded in
    this process, or in the cache folder on disk. Unknown (a Numba without these internals)
    counts as cached."""
    if dispatcher.overloads:
        return True
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return True


def announce_compile(dispatchers, what: str, log) -> None:
    """Log one line to ``log`` before the first call of kernels that are in no cache: compiling
    them takes minutes, once per version of the sources, while the progress stays at 0%."""
    if not all(cached(d) for d in dispatchers):
        log.info(f"compiling {what} (once per version of uno: a few minutes at 0% progress)")
