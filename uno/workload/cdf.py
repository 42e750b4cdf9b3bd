"""Empirical flow-size distributions (``data/cdf/*.csv``): loading with validation, sampling
by inverse transform with linear interpolation between points, and the mean size."""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from uno.core.errors import ConfigError


@dataclass(frozen=True)
class SizeCdf:
    """Piecewise-linear CDF: ``sizes_bytes`` increasing, ``cum_prob`` non-decreasing to 1."""

    name: str
    sizes_bytes: np.ndarray
    cum_prob: np.ndarray

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes in bytes (integers >= 1)."""
        u = rng.random(n)
        sizes = np.interp(u, self.cum_prob, self.sizes_bytes)
        return np.maximum(1, np.rint(sizes)).astype(np.int64)

    def mean_bytes(self) -> float:
        """Mean of the piecewise-linear distribution (trapezoids between points)."""
        dp = np.diff(self.cum_prob)
        mid = (self.sizes_bytes[1:] + self.sizes_bytes[:-1]) / 2.0
        return float(np.sum(dp * mid) + self.cum_prob[0] * self.sizes_bytes[0])


def _resolve(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".csv" or path.exists():
        return path
    return Path(str(importlib.resources.files("uno.data"))) / "cdf" / f"{name_or_path}.csv"


def load_cdf(name_or_path: str, field: str = "workload.cdf") -> SizeCdf:
    """Load a CDF by shipped name (``web_search``) or path. Malformed input raises
    :class:`ConfigError` naming ``field``, the file and the line."""
    path = _resolve(name_or_path)
    if not path.exists():
        shipped = sorted(
            p.stem for p in (Path(str(importlib.resources.files("uno.data"))) / "cdf").glob("*.csv")
        )
        raise ConfigError(field, f"no CDF file {str(path)!r}; shipped CDFs: {shipped}")
    sizes: list[float] = []
    probs: list[float] = []
    header_seen = False
    for lineno, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not header_seen:
            if line.replace(" ", "") != "size_bytes,cum_prob":
                raise ConfigError(
                    field, f"{path}:{lineno}: expected header 'size_bytes,cum_prob', got {line!r}"
                )
            header_seen = True
            continue
        parts = line.split(",")
        try:
            size, prob = float(parts[0]), float(parts[1])
            if len(parts) != 2:
                raise ValueError
        except (ValueError, IndexError):
            raise ConfigError(
                field, f"{path}:{lineno}: expected 'size_bytes,cum_prob', got {line!r}"
            ) from None
        if size < 0 or not 0.0 <= prob <= 1.0:
            raise ConfigError(
                field, f"{path}:{lineno}: size must be >= 0 and cum_prob in [0, 1], got {line!r}"
            )
        if sizes and (size <= sizes[-1] or prob < probs[-1]):
            raise ConfigError(
                field,
                f"{path}:{lineno}: sizes must increase and cum_prob must not decrease, got {line!r}",
            )
        sizes.append(size)
        probs.append(prob)
    if len(sizes) < 2:
        raise ConfigError(field, f"{path}: needs at least two points")
    if abs(probs[-1] - 1.0) > 1e-9:
        raise ConfigError(field, f"{path}: the last cum_prob must be 1, got {probs[-1]}")
    return SizeCdf(path.stem, np.asarray(sizes, dtype=float), np.asarray(probs, dtype=float))
