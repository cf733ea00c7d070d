"""Shared test helpers live beside the tests (numeric_chains.py): make them importable under
pytest's importlib import mode."""

import os
import sys

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
