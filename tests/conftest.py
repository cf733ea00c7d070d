"""Shared test helpers live beside the tests (numeric_chains.py): make them importable under
pytest's importlib import mode."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# the remote-store fixtures (moto_server, s3_bucket, s3_proxy, http_server): real servers on
# loopback, started only by the tests that use them
from remote_helpers import http_server, moto_server, s3_bucket, s3_proxy  # noqa: E402,F401
