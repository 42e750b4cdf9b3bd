"""Shipped flow-size CDFs: loading, validation of malformed files, sampling."""

from __future__ import annotations

import numpy as np
import pytest

from uno.core.errors import ConfigError
from uno.workload.cdf import load_cdf

SHIPPED = ["web_search", "alibaba_interdc", "google_rpc", "fb_hadoop", "alibaba_storage"]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_cdfs_load_and_match_their_source(name):
    cdf = load_cdf(name)
    assert cdf.cum_prob[-1] == 1.0
    assert np.all(np.diff(cdf.sizes_bytes) > 0)


def test_web_search_points_and_sampling():
    cdf = load_cdf("web_search")
    # shared/data/cdf/WebSearch_distribution.txt: "80000 53" and "30000000 100"
    assert dict(zip(cdf.sizes_bytes, cdf.cum_prob, strict=True))[80000] == pytest.approx(0.53)
    sizes = cdf.sample(np.random.default_rng(0), 200_000)
    assert np.mean(sizes <= 80000) == pytest.approx(0.53, abs=0.01)
    assert sizes.max() <= 30_000_000
    assert np.mean(sizes) == pytest.approx(cdf.mean_bytes(), rel=0.02)


@pytest.mark.parametrize(
    "body,needle",
    [
        ("size,prob\n0,0\n10,1\n", "expected header"),
        ("size_bytes,cum_prob\n0,0\n10,abc\n", ":3:"),
        ("size_bytes,cum_prob\n0,0\n10,0.5\n5,1\n", "sizes must increase"),
        ("size_bytes,cum_prob\n0,0\n10,0.5\n20,0.9\n", "last cum_prob must be 1"),
        ("size_bytes,cum_prob\n0,0\n10,1.5\n", "cum_prob in [0, 1]"),
    ],
)
def test_malformed_cdf_is_refused_with_field_file_and_line(tmp_path, body, needle):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with pytest.raises(ConfigError) as err:
        load_cdf(str(path), field="workload.rpc_cdf")
    assert err.value.field == "workload.rpc_cdf"
    assert needle in str(err.value)
    assert "bad.csv" in str(err.value)


def test_unknown_cdf_name_lists_shipped_ones():
    with pytest.raises(ConfigError) as err:
        load_cdf("nope")
    assert "web_search" in str(err.value)
