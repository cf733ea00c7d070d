"""The release-wheel configuration ([tool.cibuildwheel] in pyproject.toml, docs/wheels.md):
exactly the promised wheels (CPython 3.12-3.14, what requires-python admits, on manylinux_2_28 x86_64/aarch64, musllinux
x86_64, macOS x86_64/arm64 at deployment target 11.0, Windows AMD64; no free-threaded builds),
statically linked dependencies, and the test suite run against every wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
VERSIONS = ("cp312", "cp313", "cp314")
EXPECTED = {
    "linux": {f"{v}-{p}" for v in VERSIONS for p in ("manylinux_x86_64", "manylinux_aarch64", "musllinux_x86_64")},
    "macos": {f"{v}-{p}" for v in VERSIONS for p in ("macosx_x86_64", "macosx_arm64")},
    "windows": {f"{v}-win_amd64" for v in VERSIONS},
}

pytestmark = pytest.mark.skipif(not PYPROJECT.is_file(), reason="no pyproject.toml beside tests/")


@pytest.fixture(scope="module")
def project() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def test_the_wheels_are_those_requires_python_admits(project):
    """Every CPython release requires-python admits gets a wheel, and no other; the zarr extra
    pins the zarr-python releases the codec pipeline supports (zarrbolt/zarr_python/versions.py)."""
    assert project["requires-python"] == ">=3.12"
    oldest = int(project["requires-python"].split(".")[1])
    assert VERSIONS == tuple(f"cp3{m}" for m in range(oldest, 15))
    workflow = PYPROJECT.parent / ".github" / "workflows" / "wheels.yml"
    if workflow.is_file():
        assert 'CIBW_BUILD: "cp3{12,13,14}-' in workflow.read_text()
    src = PYPROJECT.parent / "src" / "zarrbolt" / "zarr_python" / "versions.py"
    if src.is_file():
        assert f'"zarr{_supported(src)}"' in str(project["optional-dependencies"]["zarr"]).replace("'", '"')


def _supported(path: Path) -> str:
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # the module imports nothing of zarrbolt's at its top
    return ns["SUPPORTED_TEXT"]


@pytest.fixture(scope="module")
def cibw() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["cibuildwheel"]


def test_images_targets_and_no_free_threading(cibw):
    assert cibw["manylinux-x86_64-image"] == "manylinux_2_28"
    assert cibw["manylinux-aarch64-image"] == "manylinux_2_28"
    assert cibw["musllinux-x86_64-image"] == "musllinux_1_2"
    assert sorted(cibw["build"]) == [f"{v}-*" for v in VERSIONS]
    assert "cpython-freethreading" not in cibw.get("enable", [])
    assert cibw["macos"]["environment"]["MACOSX_DEPLOYMENT_TARGET"] == "11.0"
    triplets = Path(PYPROJECT.parent, "tools", "vcpkg-triplets")
    if triplets.is_dir():  # the vcpkg triplets build the static libraries for the same target
        for t in triplets.glob("*-osx-zb.cmake"):
            assert "set(VCPKG_OSX_DEPLOYMENT_TARGET 11.0)" in t.read_text()
            assert "set(VCPKG_LIBRARY_LINKAGE static)" in t.read_text()


def test_static_dependencies_and_tests_of_every_wheel(cibw):
    assert cibw["config-settings"] == {"cmake.define.ZB_STATIC_DEPS": "ON"}
    assert "x64-windows-static-md" in cibw["windows"]["before-all"]
    assert "wheel_deps.sh" in cibw["before-all"]
    assert "wheel_needed.py" in " ".join(cibw["linux"]["repair-wheel-command"])
    assert "pytest" in cibw["test-command"] and "tests" in cibw["test-sources"]
    for env in (cibw["environment"], cibw["macos"]["environment"], cibw["windows"]["environment"]):
        assert env["ZARRBOLT_TEST_INSTALLED"] == "1"  # tests/wheel_check.py guards the run


@pytest.mark.parametrize("platform", sorted(EXPECTED))
def test_cibuildwheel_selects_exactly_the_promised_wheels(platform, tmp_path):
    exe = shutil.which("cibuildwheel") or shutil.which("cibuildwheel", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("cibuildwheel is not installed (pip install cibuildwheel)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    out = subprocess.run([exe, "--print-build-identifiers", "--platform", platform, str(PYPROJECT.parent)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == EXPECTED[platform]
