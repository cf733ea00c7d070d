"""The ``>>>`` examples of docs/ome.md run as written (in a temporary directory)."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "ome.md"


def test_ome_md_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                           raise_on_error=False, verbose=False)
    assert res.attempted > 10
    assert res.failed == 0
