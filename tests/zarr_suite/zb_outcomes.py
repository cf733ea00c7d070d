"""pytest plugin (``-p zb_outcomes``): writes one outcome per test node id to a JSON file.

``ZB_OUTCOMES_JSON`` names the file.  ``ZB_PRELOAD`` names a module imported first (zarrbolt's
pipeline module, which registers its pipeline with zarr-python in every pytest process, xdist
workers included, even where the installed zarrbolt carries no entry point).  Under pytest-xdist the controller receives every worker's
reports, so only the controller writes.  Outcomes: passed, failed (the test body failed or an xfail
test passed under ``strict``), error (setup or teardown failed), skipped, xfailed, xpassed.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

if os.environ.get("ZB_PRELOAD"):
    importlib.import_module(os.environ["ZB_PRELOAD"])

_RANK = {"passed": 0, "xpassed": 1, "skipped": 2, "xfailed": 3, "failed": 4, "error": 5}
_outcomes: dict[str, str] = {}


def _outcome(report) -> str | None:
    if getattr(report, "wasxfail", None) is not None:
        if report.skipped:
            return "xfailed"
        return "xpassed" if report.passed else "failed"
    if report.skipped:
        return "skipped"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    if report.passed and report.when == "call":
        return "passed"
    return None


def pytest_runtest_logreport(report) -> None:
    outcome = _outcome(report)
    if outcome is None:
        return
    old = _outcomes.get(report.nodeid)
    if old is None or _RANK[outcome] > _RANK[old]:
        _outcomes[report.nodeid] = outcome


def pytest_collectreport(report) -> None:
    if report.failed:  # a module that does not import: every test in it is lost
        _outcomes[report.nodeid or "<collection>"] = "error"


def _dump_counters(path: str, session) -> None:
    """Beside the outcomes, the counters of zarrbolt's pipeline in this process (an xdist worker runs
    tests, the controller does not): shows how much ran on zarrbolt's paths and how much fell back."""
    mod = sys.modules.get("zarrbolt.codec_pipeline")
    if mod is None:
        return
    names = ("fallback_counts", "delegated_counts", "strategy_counts")
    counters = {n: dict(getattr(mod, n)) for n in names if hasattr(mod, n)}
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    with open(f"{path}.counters-{worker}", "w") as f:
        json.dump(counters, f)


def pytest_sessionfinish(session) -> None:
    path = os.environ.get("ZB_OUTCOMES_JSON")
    if not path:
        return
    _dump_counters(path, session)
    if hasattr(session.config, "workerinput"):
        return
    with open(path, "w") as f:
        json.dump(_outcomes, f, indent=0, sort_keys=True)
