"""The doctest-style examples of the documentation (``docs/**/*.md``), for tests/test_docs.py and
tests/ecosystem/test_docs_ecosystem.py.

Every fenced ```` ```python ```` block with ``>>>`` lines is an example.  A page's examples run
in order in one namespace, like one interactive session, inside a fresh temporary directory
(relative paths such as ``"data.zarr"`` land there), with ``doctest``'s ELLIPSIS and
NORMALIZE_WHITESPACE.  Blocks without ``>>>`` are illustrations and are not run.

A page whose examples import zarr-python or the tools built on it (dask, xarray, napari,
ome-zarr-py) needs the reference virtualenv: such pages run in tests/ecosystem."""

from __future__ import annotations

import doctest
import io
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)
# modules that live in the reference venv only
_REF_IMPORT = re.compile(r"^\s*(>>>|\.\.\.)\s*(import|from)\s+(zarr|dask|xarray|napari|ome_zarr)\b(?!bolt)", re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Block:
    text: str
    lineno: int  # of the block's first line in the page (0-based, as doctest counts)


@dataclass
class Page:
    path: Path
    blocks: list[Block]

    @property
    def name(self) -> str:
        return self.path.relative_to(DOCS).as_posix()

    @property
    def needs_reference_venv(self) -> bool:
        return any(_REF_IMPORT.search(b.text) for b in self.blocks)


def pages() -> list[Page]:
    """Every page of docs/ with at least one example, sorted by path."""
    out = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        blocks = []
        for m in _FENCE.finditer(text):
            body = textwrap.dedent(m["body"])
            if re.search(r"^>>>", body, re.MULTILINE):
                blocks.append(Block(body, text.count("\n", 0, m.start("body"))))
        if blocks:
            out.append(Page(path, blocks))
    return out


def run_page(page: Page, workdir: Path) -> str:
    """Run a page's examples in ``workdir``; the failure report, or "" when all pass."""
    import zarrbolt

    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {"__name__": "__docs__"}
    report = io.StringIO()
    old = os.getcwd()
    os.chdir(workdir)
    try:
        for block in page.blocks:
            test = parser.get_doctest(block.text, globs, page.name, str(page.path), block.lineno)
            runner.run(test, out=report.write, clear_globs=False)
            globs = test.globs  # DocTest copies its globals: carry them on to the next block
    finally:
        os.chdir(old)
        zarrbolt.config.reset()
    if runner.failures:
        return f"{page.name}: {runner.failures} of {runner.tries} examples failed\n{report.getvalue()}"
    assert runner.tries > 0, page.name
    return ""
