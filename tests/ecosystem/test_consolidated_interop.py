"""Consolidated metadata between zarrbolt and zarr-python 3: each reads what the other writes,
and zarrbolt's updates after a change read back in zarr-python as a fresh consolidation would."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

import zarrbolt as zb  # noqa: E402


def _zarr_hierarchy(path) -> None:
    g = zarr.open_group(str(path), mode="w", attributes={"root": 1})
    a = g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))
    a[...] = np.arange(4)
    s = g.create_group("s", attributes={"x": "y"})
    s.create_array("b", shape=(3, 3), dtype="f8", chunks=(2, 2), shards=(2, 2), fill_value=np.nan)
    s.create_group("t").create_array("c", shape=(2,), dtype="u1", chunks=(2,))


def _consolidate_with_zarr(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.consolidate_metadata(str(path))


def _tree_of_zarr(g) -> dict:
    return {k: (type(v).__name__, getattr(v, "shape", None), dict(v.attrs)) for k, v in g.members(max_depth=None)}


def _tree_of_zb(g) -> dict:
    return {k: (type(v).__name__, getattr(v, "shape", None), dict(v.attrs)) for k, v in g.members(max_depth=None)}


def test_zarrbolt_reads_zarr_python_consolidation(tmp_path):
    _zarr_hierarchy(tmp_path / "h")
    _consolidate_with_zarr(tmp_path / "h")
    g = zb.open_consolidated(str(tmp_path / "h"), mode="r")
    assert g.consolidated
    zg = zarr.open_consolidated(str(tmp_path / "h"), mode="r")
    assert _tree_of_zb(g) == _tree_of_zarr(zg)
    np.testing.assert_array_equal(g["a"][...], np.arange(4))
    assert np.isnan(g["s/b"].fill_value) and g["s/b"].shards == (2, 2)


def test_zarr_python_reads_zarrbolt_consolidation(tmp_path):
    _zarr_hierarchy(tmp_path / "h")
    zb.consolidate_metadata(str(tmp_path / "h"))
    zg = zarr.open_consolidated(str(tmp_path / "h"), mode="r")
    assert zg.metadata.consolidated_metadata is not None
    assert sorted(zg.metadata.consolidated_metadata.flattened_metadata) == ["a", "s", "s/b", "s/t", "s/t/c"]
    ref = _tree_of_zarr(zarr.open_group(str(tmp_path / "h"), mode="r", use_consolidated=False))
    assert _tree_of_zarr(zg) == ref
    np.testing.assert_array_equal(zg["a"][...], np.arange(4))


def test_same_document_as_zarr_python(tmp_path):
    """zarrbolt's consolidated_metadata member equals zarr-python's for the same hierarchy."""
    _zarr_hierarchy(tmp_path / "h1")
    _zarr_hierarchy(tmp_path / "h2")
    _consolidate_with_zarr(tmp_path / "h1")
    zb.consolidate_metadata(str(tmp_path / "h2"))
    d1 = json.loads((tmp_path / "h1" / "zarr.json").read_text())
    d2 = json.loads((tmp_path / "h2" / "zarr.json").read_text())
    assert d1 == d2


def test_updates_match_a_fresh_zarr_python_consolidation(tmp_path):
    _zarr_hierarchy(tmp_path / "h")
    _consolidate_with_zarr(tmp_path / "h")
    g = zb.open_group(str(tmp_path / "h"), mode="r+")
    g["s"].create_array("new", shape=(5,), dtype="f4", chunks=(5,))
    g["a"].attrs["unit"] = "m"
    del g["s/t"]
    mine = json.loads((tmp_path / "h" / "zarr.json").read_text())["consolidated_metadata"]
    _consolidate_with_zarr(tmp_path / "h")
    fresh = json.loads((tmp_path / "h" / "zarr.json").read_text())["consolidated_metadata"]
    assert mine == fresh
    zg = zarr.open_consolidated(str(tmp_path / "h"), mode="r")
    assert sorted(k for k, _ in zg.members(max_depth=None)) == ["a", "s", "s/b", "s/new"]


def _zarr_v2_hierarchy(path) -> None:
    g = zarr.open_group(str(path), mode="w", zarr_format=2, attributes={"t": 1})
    g.create_array("a", shape=(4,), dtype="<i4", chunks=(2,))[...] = np.arange(4)
    g.create_group("s").create_array("b", shape=(3,), dtype="<f8", chunks=(2,))


def test_v2_zmetadata_written_like_zarr_python(tmp_path):
    """The .zmetadata zarrbolt writes for a v2 hierarchy is the document zarr-python writes
    (byte for byte apart from the nested groups' inline member zarr-python adds), and zarr-python
    opens the hierarchy from it."""
    _zarr_v2_hierarchy(tmp_path / "v2")
    _consolidate_with_zarr(tmp_path / "v2")
    ref = json.loads((tmp_path / "v2" / ".zmetadata").read_text())
    (tmp_path / "v2" / ".zmetadata").unlink()
    from zarrbolt.metadata import consolidated

    assert consolidated.consolidate(zb.LocalStore(str(tmp_path / "v2")), "") == 2
    mine = json.loads((tmp_path / "v2" / ".zmetadata").read_text())
    ref["metadata"]["s/.zgroup"].pop("consolidated_metadata", None)  # zarr-python 3's own addition
    assert mine == ref
    zg = zarr.open_consolidated(str(tmp_path / "v2"), mode="r")
    assert sorted(k for k, _ in zg.members(max_depth=None)) == ["a", "s", "s/b"]
    np.testing.assert_array_equal(zg["a"][...], np.arange(4))


def test_v2_zmetadata_read(tmp_path):
    pytest.importorskip("zarrbolt.metadata.v2")  # Zarr v2 reading (its own branch)
    _zarr_v2_hierarchy(tmp_path / "v2")
    _consolidate_with_zarr(tmp_path / "v2")
    zgb = zb.open_group(str(tmp_path / "v2"), mode="r")
    assert zgb.consolidated and sorted(k for k, _ in zgb.members(max_depth=None)) == ["a", "s", "s/b"]
    np.testing.assert_array_equal(zgb["a"][...], np.arange(4))
    zgb = zb.open_group(str(tmp_path / "v2"), mode="r+")
    zgb["s"].create_array("c", shape=(2,), dtype="i2", chunks=(2,))  # v2 child of a v2 group
    zg = zarr.open_consolidated(str(tmp_path / "v2"), mode="r")
    assert sorted(k for k, _ in zg.members(max_depth=None)) == ["a", "s", "s/b", "s/c"]
