"""tests/wheel_check.py, the guard of ``make wheel-test``: it refuses a zarrbolt imported from
anywhere but site-packages (here: a package directory put first on PYTHONPATH)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _run(tmp_path: Path, pythonpath: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    code = "import wheel_check; print(wheel_check.assert_installed())"
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_refuses_a_source_tree(tmp_path):
    pkg = tmp_path / "src" / "zarrbolt"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '0+source'\n")
    out = _run(tmp_path, [str(TESTS), str(tmp_path / "src")])
    assert out.returncode != 0
    assert "RuntimeError: ZARRBOLT_TEST_INSTALLED: zarrbolt was imported from" in out.stderr
    assert str(pkg) in out.stderr
