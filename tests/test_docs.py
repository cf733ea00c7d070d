"""The documentation's examples run (tests/docs_examples.py): every ```python block with >>> lines
in docs/**/*.md.  Pages that need zarr-python, dask, xarray, napari or ome-zarr-py run in
tests/ecosystem/test_docs_ecosystem.py, under the reference virtualenv."""

from __future__ import annotations

import docs_examples
import pytest

PAGES = docs_examples.pages()
LOCAL = [p for p in PAGES if not p.needs_reference_venv]


@pytest.mark.parametrize("page", LOCAL, ids=[p.name for p in LOCAL])
def test_examples_of_page(page, tmp_path):
    failures = docs_examples.run_page(page, tmp_path)
    assert not failures, failures


def test_the_guide_has_examples():
    # the user guide and getting started are written as runnable sessions: each has examples,
    # and the examples are found by the collector (a fence it cannot parse would drop them)
    names = {p.name for p in PAGES}
    guide = {p.relative_to(docs_examples.DOCS).as_posix() for p in (docs_examples.DOCS / "guide").glob("*.md")}
    assert "getting-started.md" in names
    assert guide and guide <= names, sorted(guide - names)


def test_reference_venv_pages_are_collected_by_the_ecosystem_tests():
    # no example is left unrun: the pages that need the reference venv are exactly the ones the
    # ecosystem test runs (which skips only where zarr-python is absent, like every ecosystem test)
    ref = [p.name for p in PAGES if p.needs_reference_venv]
    assert "guide/zarr-python.md" in ref
    assert len(ref) + len(LOCAL) == len(PAGES)
