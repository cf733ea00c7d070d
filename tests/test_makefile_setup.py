"""The set-up the README's two commands do (Makefile): ``make demo`` installs only what building
and running zarrbolt needs, never a test, lint, fuzz, wheel or benchmark tool; ``make test`` says
what it installs before it does; both time their steps.  Read from the Makefile's rules as make
itself expands them (``make -pn``, nothing run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = ROOT / "Makefile"
pytestmark = [pytest.mark.skipif(not MAKEFILE.is_file(), reason="no Makefile beside tests/"),
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]
TOOLS = ("pytest", "hypothesis", "mypy", "ruff", "cibuildwheel", "atheris", "moto", "s3fs", "asv", "auditwheel",
         "mkdocs", "tqdm", "obstore", "fsspec")


@pytest.fixture(scope="module")
def database() -> str:
    out = subprocess.run(["make", "-pnrR", "-f", str(MAKEFILE), "--no-print-directory", "__nothing__"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    return out.stdout


def _var(db: str, name: str) -> str:
    m = re.search(rf"^{name} :?= (.*)$", db, re.MULTILINE)
    assert m, name
    return m.group(1)


def _rule(db: str, target: str) -> tuple[str, str]:
    """(prerequisites, recipe) of ``target`` in make's database."""
    m = re.search(rf"^{re.escape(target)}:(.*)\n((?:#.*\n)*)((?:\t.*\n)*)", db, re.MULTILINE)
    assert m, target
    return m.group(1), m.group(3)


def test_demo_installs_the_build_tools_only(database):
    build = _var(database, "BUILD_DEPS")
    assert not [t for t in TOOLS if re.search(rf'"?\b{t}\b', build)]
    demo_pre, demo = _rule(database, "demo")
    assert "install" in demo and "zarrbolt demo" in demo and "[time]" in demo
    install_pre, install = _rule(database, "install")
    assert install_pre.split() == ["sysdeps", "buildenv"] and "--no-deps" in install
    buildenv_pre, _ = _rule(database, "buildenv")
    assert "venv" not in buildenv_pre.replace("venv-python", "").split()
    _, build_stamp = _rule(database, _var(database, "BUILD_STAMP").replace("$(VENV)", ".venv"))
    assert "$(BUILD_DEPS)" in build_stamp and "TEST_DEPS" not in build_stamp


def test_test_says_what_it_installs_first_and_times_its_steps(database):
    pre, recipe = _rule(database, "test")
    assert pre.split() == ["test-announce"]
    _, announce = _rule(database, "test-announce")
    for what in ("Chromium", ".venv-ref", "pytest", "reference virtualenv"):
        assert what in announce
    assert recipe.count("$(call TIMED,") + recipe.count("[time]") >= 7

