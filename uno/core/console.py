"""Command-line output that ends quietly when its reader goes away.

``uno-collect DIR | head -1`` closes the pipe after one line; the next write to it fails with a
broken pipe. :func:`quiet_broken_pipes` wraps stdout and stderr so that such a write points the
stream's file descriptor at the null device and everything after is dropped: the command goes on
(a run still writes its result folder) and ends without a traceback or an error at exit.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


class QuietStream:
    """A text stream that turns a broken pipe into silence (see the module docstring)."""

    def __init__(self, stream):
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def _silence(self) -> None:
        self.broken = True
        try:
            # what the stream still buffers goes to the null device at the next flush (at exit)
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # a stream without a file descriptor: nothing is written to it any more

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextmanager
def quiet_broken_pipes() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` are :class:`QuietStream` wrappers."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = QuietStream(out), QuietStream(err)
    try:
        yield
    finally:
        # a pipe that broke with output still buffered: found here, not at interpreter exit
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = out, err
