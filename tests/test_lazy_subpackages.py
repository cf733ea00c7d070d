"""Lazy subpackages (as SciPy has them): ``import zarrbolt`` alone makes ``zarrbolt.ome``,
``zarrbolt.fsck``, ``zarrbolt.dask``, ``zarrbolt.cli`` reachable, imported on first use, and imports
none of them (nor dask, zarr-python, numcodecs) up front."""

from __future__ import annotations

import json
import subprocess
import sys


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_alone_imports_no_subpackage_nor_optional_dependency():
    got = _run("import sys, json, zarrbolt; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
               "('dask', 'zarr', 'numcodecs', 'xarray') or m in ('zarrbolt.ome', 'zarrbolt.dask', 'zarrbolt.cli', "
               "'zarrbolt.fsck', 'zarrbolt.codec_pipeline'))))")
    assert got == []


def test_subpackages_reachable_after_import_zarrbolt():
    got = _run("import json, zarrbolt; print(json.dumps([zarrbolt.ome.open_image.__module__, "
               "zarrbolt.fsck.fsck.__name__, zarrbolt.dask.to_dask.__name__, zarrbolt.cli.__name__, "
               "'ome' in dir(zarrbolt)]))")
    assert got == ["zarrbolt.ome.reader", "fsck", "to_dask", "zarrbolt.cli", True]


def test_unknown_attribute_is_still_an_attribute_error():
    import pytest

    import zarrbolt

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        zarrbolt.nope  # noqa: B018
