"""Fixtures for the cross-implementation tests.

The reference systems (zarr-python 3, tensorstore) live in their own virtualenv (``make refvenv``)
and are driven through ``ref_worker.py`` in a subprocess; ``ZARRBOLT_REF_PYTHON`` names its
interpreter.  Without it these tests are skipped, except under CI (``CI=true``), where a missing
reference environment is an error: CI must run them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from ref_env import ref_env  # noqa: E402


def _ref_python() -> str | None:
    p = os.environ.get("ZARRBOLT_REF_PYTHON")
    if p and Path(p).exists():
        return p
    return None


def run_ref(op: str, system: str, root: Path, only: list[str] | None = None) -> dict[str, str]:
    py = _ref_python()
    if py is None:
        if os.environ.get("CI"):
            pytest.fail("ZARRBOLT_REF_PYTHON is not set in CI: the compat tests must run there")
        pytest.skip("reference environment not available (set ZARRBOLT_REF_PYTHON; see `make refvenv`)")
    cmd = [py, str(HERE / "ref_worker.py"), op, system, str(root), ",".join(only or [])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=ref_env())
    if proc.returncode != 0:
        raise RuntimeError(f"reference worker failed ({' '.join(cmd)}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def ref_python() -> str:
    py = _ref_python()
    if py is None:
        if os.environ.get("CI"):
            pytest.fail("ZARRBOLT_REF_PYTHON is not set in CI: the compat tests must run there")
        pytest.skip("reference environment not available")
    return py


sys.path.insert(0, str(HERE))
