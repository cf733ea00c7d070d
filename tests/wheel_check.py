"""Guard for runs of the test suite against an installed zarrbolt (``make wheel-test``, and
cibuildwheel's test step): with ``ZARRBOLT_TEST_INSTALLED=1`` in the environment, tests/conftest.py
calls :func:`assert_installed` before anything is collected, so a run that would silently test a
source tree (``src/`` on ``sys.path``, an in-place build) stops instead."""

from __future__ import annotations

import importlib
import sysconfig
from pathlib import Path

# the compiled modules every build has (more may come: each one found is checked)
MODULES = ("_blosc1", "_blosc2", "_checksum32", "_deflate", "_delta", "_downsample", "_kernels", "_lz4", "_numeric",
           "_plans", "_shard", "_vlen", "_zstd")


def installed_location() -> Path:
    """The directory zarrbolt was imported from; RuntimeError unless it (and every compiled
    module) lies in this interpreter's site-packages."""
    import zarrbolt

    sites = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    where = Path(zarrbolt.__file__).resolve().parent
    if not any(where.is_relative_to(s) for s in sites):
        raise RuntimeError(f"ZARRBOLT_TEST_INSTALLED: zarrbolt was imported from {where}, not from the "
                           f"installed package in {sorted(map(str, sites))}")
    found = {p.name.split(".")[0] for p in (where / "_ext").iterdir() if p.suffix in (".so", ".pyd")}
    if set(MODULES) - found:
        raise RuntimeError(f"ZARRBOLT_TEST_INSTALLED: compiled modules missing from {where}: "
                           f"{sorted(set(MODULES) - found)}")
    for name in sorted(found):
        mod = importlib.import_module(f"zarrbolt._ext.{name}")
        path = Path(mod.__file__ or "").resolve()
        if not path.is_relative_to(where):
            raise RuntimeError(f"ZARRBOLT_TEST_INSTALLED: zarrbolt._ext.{name} was loaded from {path}")
    return where


def assert_installed() -> str:
    """A line for pytest's report header, after the check."""
    import zarrbolt

    return f"zarrbolt {zarrbolt.__version__} installed at {installed_location()}"
