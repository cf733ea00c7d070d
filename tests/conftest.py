"""Shared test helpers live beside the tests (numeric_chains.py): make them importable under
pytest's importlib import mode."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# `make wheel-test` / cibuildwheel: the suite must exercise the installed wheel, never a source tree
if os.environ.get("ZARRBOLT_TEST_INSTALLED") == "1":
    from wheel_check import assert_installed  # noqa: E402

    _INSTALLED = assert_installed()

    def pytest_report_header(config):
        return _INSTALLED

# the remote-store fixtures (moto_server, s3_bucket, s3_proxy, http_server): real servers on
# loopback, started only by the tests that use them
from remote_helpers import http_server, moto_server, s3_bucket, s3_proxy  # noqa: E402,F401


@pytest.fixture(autouse=True, scope="session")
def _zarrbolt_lock_dir(tmp_path_factory):
    """LocalStore's write lock files (one per array directory a test updates in part) go to the
    session's temporary directory rather than piling up in the shared default lock dir; the
    tests of the default unset it."""
    old = os.environ.get("ZARRBOLT_LOCK_DIR")
    os.environ["ZARRBOLT_LOCK_DIR"] = str(tmp_path_factory.mktemp("zarrbolt-locks"))
    yield
    if old is None:
        os.environ.pop("ZARRBOLT_LOCK_DIR", None)
    else:
        os.environ["ZARRBOLT_LOCK_DIR"] = old


@pytest.fixture
def sigint_raises():
    """Ctrl-C (SIGINT) raises KeyboardInterrupt in this test, however the test run was started: a
    process started in the background by a non-interactive shell (``cmd &`` in a script, as a CI
    runner may) inherits SIGINT ignored, and Python then leaves it ignored."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
