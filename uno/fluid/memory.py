"""The fluid engine's delay-line memory, kept from one run to the next in a process.

A fluid run's largest array by far is the ring of delay lines (:mod:`uno.fluid.engine`,
``rings.ring_take``): address space for every line the pool can hand out, lines growing with
the delays their flows meet (``rings.fit_lag``), of which only the rows handed out are touched:
on the 40%-load Fig. 10 run (5,000 flows, ``scheme=uno_ecmp``) 549 MiB reserved and 176 MiB
handed out (its inter-DC flows, up to 993 running at once, each with a line of 1,794 steps of
104 bytes, their longest from the start; its intra-DC flows' lines start at 32 steps). Fresh
memory costs its first touch, and on a virtual machine that hands freed memory back to its host
(free page reporting) that first touch can be slow: 187 MiB take 17 ms to fault in when the
guest still holds the pages, and 0.41 s when the host has to back them again. Without this
cache the per-run system time of that run varies from 0.02 to 0.35 s (0.8-1.4 s of engine
time) for that reason.

So a process keeps the memory of its last finished run (one buffer, the larger of the last
two) and hands it to the next run, with every byte zero, the state a fresh line has
(``rings.ring_take``): a run takes the buffer when it builds its engine (nothing else may
hold it meanwhile) and gives it back when it ends, after zeroing the rows it handed out. A run
that fails midway gives nothing back (its buffer is freed with it), and a buffer whose
touched part is over ``max_kept_bytes`` is not kept, so a very large run does not leave a
process that large. The cache changes no result: a run sees all-zero memory either way
(tests/test_fluid_memory.py checks it, and the flows table of a run on reused memory against
one on fresh memory). :func:`release` frees the kept buffer (a notebook's kernel, say)."""

from __future__ import annotations

import mmap
import os
import sys
import threading

import numpy as np

# below this size the page faults of a first touch cost little, and an mmap per array would
# waste most of a huge page
_HUGE_MIN_BYTES = 4 << 20

# Linux's MAP_NORESERVE (the mmap module names it from Python 3.13): the delay lines reserve
# address space for the longest lines their flows may grow to and touch only what they reach,
# so the reservation is not charged against the system's commit limit up front
_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


def zeros_huge(rows: int, cols: int, dtype=np.float64) -> np.ndarray:
    """A C-contiguous zero array of ``rows`` x ``cols`` in anonymous memory advised for
    transparent huge pages (``MADV_HUGEPAGE``), page-aligned.

    Why: the fluid run's largest array (the delay-line ring, up to a few hundred MiB) is zero
    until touched, and the first touch of each 4 KiB page is a fault: on a virtual machine a
    first touch of 129 MiB can take 0.11-0.17 s in 4 KiB pages against 0.02 s in 2 MiB pages
    once the host backs the memory (0.5 s either way when it does not yet). The contents are
    the same as ``np.zeros``; only the page size differs. Small arrays, and systems without
    ``MADV_HUGEPAGE``, get :func:`zeros_aligned`."""
    size_bytes = rows * cols * np.dtype(dtype).itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if size_bytes < _HUGE_MIN_BYTES or advice is None:
        return zeros_aligned(rows, cols, dtype)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _NORESERVE
    buf = mmap.mmap(-1, size_bytes, flags=flags)
    try:
        buf.madvise(advice)
    except OSError:  # THP disabled in this kernel: 4 KiB pages, still zero
        pass
    # the array holds the mmap alive; it is unmapped when the array is collected
    return np.frombuffer(buf, dtype=dtype, count=rows * cols).reshape(rows, cols)


def zeros_aligned(rows: int, cols: int, dtype=np.float64) -> np.ndarray:
    """A C-contiguous zero array of ``rows`` x ``cols`` whose data starts on a 64-byte
    boundary, so that rows of 64 bytes (or a multiple) lie in whole cache lines: a step reads a
    link's or an entry's hot fields with one line (numpy aligns to 16 bytes only)."""
    itemsize = np.dtype(dtype).itemsize
    buf = np.zeros(rows * cols + 64 // itemsize, dtype=dtype)
    skip = (-buf.ctypes.data % 64) // itemsize
    return buf[skip : skip + rows * cols].reshape(rows, cols)


class DelayLineMemory:
    """All-zero float64 memory for delay lines, one buffer kept between runs (see the module
    docstring). Thread-safe: two runs at once in one process each get their own buffer."""

    def __init__(self, max_kept_bytes: int = 1 << 30):
        self.max_kept_bytes = max_kept_bytes
        self._lock = threading.Lock()
        self._kept: np.ndarray | None = None  # flat float64, every element zero

    def take(self, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        """(the buffer, a zero ``rows`` x ``cols`` float64 view of its start). The buffer is
        the caller's until :meth:`give`; the kept one if it is large enough, else new
        (:func:`zeros_huge`)."""
        n = rows * cols
        with self._lock:
            buf = self._kept
            if buf is not None and buf.size >= n:
                self._kept = None
            else:
                buf = None
        if buf is None:
            buf = zeros_huge(1, max(n, 1)).reshape(-1)
        return buf, buf[:n].reshape(rows, cols)

    def give(self, buf: np.ndarray, used_elements: int) -> None:
        """Return ``buf`` (from :meth:`take`), of which only the first ``used_elements`` may be
        non-zero: they are zeroed, and the buffer is kept unless that part is over
        ``max_kept_bytes`` or the buffer kept now is larger."""
        if used_elements * buf.itemsize > self.max_kept_bytes:
            return
        buf[:used_elements] = 0.0
        with self._lock:
            if self._kept is None or self._kept.size < buf.size:
                self._kept = buf

    def release(self) -> None:
        """Free the kept buffer (if no run holds it, its memory goes back to the system)."""
        with self._lock:
            self._kept = None

    @property
    def kept_bytes(self) -> int:
        """Address space of the kept buffer (0: none)."""
        buf = self._kept
        return 0 if buf is None else buf.nbytes


#: the process's delay-line memory (what :class:`uno.fluid.engine.FluidSimulation` uses)
DELAY_LINES = DelayLineMemory()


def release() -> None:
    """Free the delay-line memory this process keeps between fluid runs."""
    DELAY_LINES.release()


def line_memory_limit_bytes() -> int:
    """The most memory a fluid run's delay lines may touch: 4/5 of what the system has
    available as the run is built (``MemAvailable``; the physical memory where that is not
    known)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 * 4 // 5
    except OSError:
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 4 // 5
