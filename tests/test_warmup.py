"""uno.warmup: its scenarios are valid runs, a marked cache folder returns at once, a failed
group leaves the folder unmarked, and a warm-up marks it."""

from __future__ import annotations

import subprocess

import pytest

import uno
import uno.warmup as warmup
from uno.api import to_run_config


@pytest.mark.parametrize("group", sorted(warmup.GROUPS))
def test_every_scenario_is_a_valid_run(group):
    for overrides in warmup.GROUPS[group]:
        to_run_config(uno.compose(overrides))


def test_a_marked_folder_returns_without_starting_a_process(tmp_path, monkeypatch):
    (tmp_path / warmup.mark_name()).write_text("1.0 s\n")
    monkeypatch.setattr(warmup, "cache_folder", lambda: tmp_path)

    def no_process(*args, **kwargs):
        raise AssertionError("a marked folder started a process")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    assert warmup.warm(say=lambda line: None)


def test_a_failed_group_says_so_and_leaves_no_mark(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "cache_folder", lambda: tmp_path)
    monkeypatch.setattr(warmup, "GROUPS", {"no_such_group": []})  # (the child refuses the name)
    lines = []
    assert not warmup.warm(say=lines.append)
    assert not (tmp_path / warmup.mark_name()).exists()
    assert any("group no_such_group failed" in line for line in lines)


def test_a_warm_up_runs_its_groups_and_marks_the_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "cache_folder", lambda: tmp_path)
    monkeypatch.setattr(warmup, "GROUPS", {"packet": warmup.GROUPS["packet"]})
    lines = []
    assert warmup.warm(say=lines.append)
    assert (tmp_path / warmup.mark_name()).exists()
    assert lines[-1].startswith("uno warm-up: done in")
