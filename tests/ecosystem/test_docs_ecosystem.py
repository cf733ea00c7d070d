"""The documentation's examples that need zarr-python (or dask, xarray, napari, ome-zarr-py):
the pages tests/test_docs.py leaves to the reference virtualenv (see tests/docs_examples.py)."""

from __future__ import annotations

import importlib.util
import re

import docs_examples
import pytest

pytest.importorskip("zarr")

PAGES = [p for p in docs_examples.pages() if p.needs_reference_venv]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_examples_of_page(page, tmp_path):
    # every module the page imports must be there: a missing one is a failure, not a skip
    for block in page.blocks:
        for mod in re.findall(r"^\s*(?:>>>|\.\.\.)\s*(?:import|from)\s+(\w+)", block.text, re.MULTILINE):
            assert importlib.util.find_spec(mod) is not None, f"{page.name} imports {mod}"
    failures = docs_examples.run_page(page, tmp_path)
    assert not failures, failures
