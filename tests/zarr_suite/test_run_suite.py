"""The zarr-suite harness's own logic (no zarr-python needed): outcome classification, the
three-pipeline comparison and the sdist cache."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

HERE = Path(__file__).resolve().parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_zb_suite_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


run_suite = _load("run_suite")
zb_outcomes = _load("zb_outcomes")


def _report(when, outcome, wasxfail=None):
    r = SimpleNamespace(when=when, passed=outcome == "passed", failed=outcome == "failed",
                        skipped=outcome == "skipped")
    if wasxfail is not None:
        r.wasxfail = wasxfail
    return r


@pytest.mark.parametrize(("report", "expected"), [
    (_report("call", "passed"), "passed"),
    (_report("setup", "passed"), None),
    (_report("call", "failed"), "failed"),
    (_report("setup", "failed"), "error"),
    (_report("teardown", "failed"), "error"),
    (_report("setup", "skipped"), "skipped"),
    (_report("call", "skipped", wasxfail="why"), "xfailed"),
    (_report("call", "passed", wasxfail="why"), "xpassed"),
])
def test_outcome_classification(report, expected):
    assert zb_outcomes._outcome(report) == expected


def test_compare_flags_only_tests_passing_with_both_references(monkeypatch, tmp_path, capsys):
    refs = {
        "default": {"a": "passed", "b": "passed", "c": "passed", "d": "failed", "e": "passed"},
        "fused": {"a": "passed", "b": "passed", "c": "failed", "d": "failed", "e": "passed"},
    }
    monkeypatch.setattr(run_suite, "reference_outcomes", lambda root, cache, name, *a: (refs[name], None))

    def under_test(outcomes):
        monkeypatch.setattr(run_suite, "run_pytest", lambda *a, **k: (outcomes, 1.0))
        return run_suite.compare(tmp_path / "zarr-9.9", tmp_path, "x.Pipe", 1, tmp_path, True)

    # c and d fail with a reference pipeline too: not held against the pipeline under test
    ok, why = under_test({"a": "passed", "b": "passed", "c": "failed", "d": "error", "e": "passed"})
    assert ok and why == ("comparison: no test that passes with both of zarr-python's pipelines fails with it "
                          "(3 such tests), 2 fail with it and with a zarr-python pipeline too")
    ok, why = under_test({"a": "passed", "b": "error", "c": "passed", "d": "passed", "e": "passed"})
    assert not ok and why == "comparison: 1 test(s) fail only with the pipeline under test"
    assert not under_test({"a": "passed", "b": "passed", "c": "passed", "d": "passed"})[0]  # e not run
    out = capsys.readouterr().out
    assert "| Pipe (under test) |" in out and "not run  e" in out


def test_sdist_cache_is_reused_without_network(monkeypatch, tmp_path):
    root = tmp_path / "zarr-9.9"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_codec_pipeline_suite.py").write_text("")

    def no_network(*a, **k):
        raise AssertionError("pip download called although the sdist is cached")

    monkeypatch.setattr(subprocess, "run", no_network)
    assert run_suite.fetch_sdist(tmp_path, "9.9") == root
