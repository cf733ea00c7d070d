"""What the documentation site is built from, checked without mkdocs: the griffe extension that
turns the docstrings' Sphinx roles into links (docs/hooks/sphinx_roles.py), and the generator of
the performance page (docs/perf/make_plots.py: its figures and table from one set of medians,
every cell where zarrbolt is not ahead named with a reason), and no page citing files outside
the repository."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
pytestmark = pytest.mark.skipif(not (DOCS / "hooks").is_dir(), reason="no docs/ beside tests/")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_page_cites_a_path_outside_the_repository():
    for page in [*DOCS.rglob("*.md"), ROOT / "README.md", *(ROOT / "benchmarks").glob("*.py")]:
        assert "../shared" not in page.read_text(encoding="utf-8"), page


def test_every_docstring_role_becomes_a_link_or_code():
    griffe = pytest.importorskip("griffe")
    roles = _load(DOCS / "hooks" / "sphinx_roles.py", "sphinx_roles")
    pkg = griffe.load("zarrbolt", search_paths=[str(ROOT / "src")], allow_inspection=False)
    before = {}

    def walk(obj, seen):
        if id(obj) in seen or obj.is_alias:
            return
        seen.add(id(obj))
        if obj.docstring is not None:
            before[obj.path] = obj.docstring.value
        for m in obj.members.values():
            walk(m, seen)

    walk(pkg, set())
    assert sum(len(roles.ROLE.findall(v)) for v in before.values()) > 100
    roles.SphinxRoles().on_package(pkg=pkg)
    after = {}

    def collect(obj, seen):
        if id(obj) in seen or obj.is_alias:
            return
        seen.add(id(obj))
        if obj.docstring is not None:
            after[obj.path] = obj.docstring.value
        for m in obj.members.values():
            collect(m, seen)

    collect(pkg, set())
    left = {p: roles.ROLE.findall(v) for p, v in after.items() if roles.ROLE.search(v)}
    assert not left
    copy = after["zarrbolt.convert.copy"]
    assert '<autoref identifier="zarrbolt.convert.copy_array" optional><code>copy_array</code></autoref>' in copy
    # a target resolved through the module's imports, shown by its last name (~)
    assert re.search(r'identifier="zarrbolt\.errors\.CopyError" optional><code>CopyError</code>', copy)


def _plots():
    pytest.importorskip("matplotlib")
    return _load(DOCS / "perf" / "make_plots.py", "make_plots")


def _run(systems_times):
    """A harness result with one workload (block64, layout a) and the given medians."""
    return {"workloads": [{"layout": "a", "workload": "block64", "system": s, "stats": {"median": t}}
                          for s, t in systems_times.items()], "writes": []}


def test_the_table_and_the_speedup_figure_share_their_numbers():
    mp = _plots()
    med = mp.medians(_run({"zarrbolt": 2.0, "zarr-python": 5.0, "tensorstore": 3.0}))
    assert mp.ratio(med, "block64", "a") == (1.5, "tensorstore")
    assert mp.speedups(med)[0][2] == 1.5
    assert "| 64³ block at a random position | a | 2 s | 5 s | 3 s | 1.50 |" in mp.table(med)
    assert mp.not_ahead(med, {}) == "In this run zarrbolt is ahead in every cell.\n"


def test_a_cell_where_zarrbolt_is_behind_needs_a_reason():
    mp = _plots()
    behind = mp.medians(_run({"zarrbolt": 2.0, "tensorstore": 1.0}))
    with pytest.raises(SystemExit, match="block64:a"):
        mp.not_ahead(behind, {})
    text = mp.not_ahead(behind, {"block64": "per-call work"})
    assert "| 64³ block at a random position | a | tensorstore | 0.50 | per-call work |" in text
    tie = mp.medians(_run({"zarrbolt": 1.0, "tensorstore": 0.97}))
    assert "a tie" in mp.not_ahead(tie, {})


def test_the_stored_run_renders_with_its_reasons(tmp_path):
    mp = _plots()
    assert mp.main([str(DOCS / "perf" / "anchors-results.json"), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "not_ahead.md").read_text().startswith(("| workload", "In this run"))
    run = (tmp_path / "run.md").read_text()
    assert "python benchmarks/anchors_bench.py" in run and "/work/" not in run
