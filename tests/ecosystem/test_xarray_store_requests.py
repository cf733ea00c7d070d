"""The store requests xarray makes through zarrbolt's pipeline: xarray's own
``TestInstrumentedZarrStore`` (xarray/tests/test_backends.py) allows so many gets, sets and listings
per ``to_zarr``; an append (which resizes the arrays) through zarrbolt's pipeline must stay within
them, as with zarr-python's own pipeline: no metadata read again after a resize.  The requests
are counted by a real MemoryStore that counts its calls (as xarray counts them: a request for the
root ``zarr.json`` is not counted)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrbolt.codec_pipeline as zcp  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

PIPELINES = {"zarrbolt": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline",
             "zarr-python": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


class CountingStore(MemoryStore):
    """A MemoryStore that counts ``get``, ``set``, ``list_dir`` and ``list_prefix`` calls."""

    counts: Counter[str]
    keys: list[str]

    def reset(self) -> None:
        self.counts = Counter()
        self.keys = []

    def _count(self, name: str, key: str) -> None:
        if not hasattr(self, "counts"):
            self.reset()
        if key != "zarr.json":
            self.counts[name] += 1
            self.keys.append(f"{name} {key}")

    async def get(self, key, prototype=None, byte_range=None):  # type: ignore[override]
        self._count("get", key)
        return await super().get(key, prototype, byte_range)

    async def set(self, key, value):  # type: ignore[override]
        self._count("set", key)
        return await super().set(key, value)

    async def list_dir(self, prefix):  # type: ignore[override]
        self._count("list_dir", prefix)
        async for k in super().list_dir(prefix):
            yield k

    async def list_prefix(self, prefix):  # type: ignore[override]
        self._count("list_prefix", prefix)
        async for k in super().list_prefix(prefix):
            yield k


# xarray's expected counts (TestInstrumentedZarrStore.test_append): at most these
FIRST = {"set": 5, "get": 4, "list_dir": 2, "list_prefix": 1}
APPEND = {"set": 4, "get": 9, "list_dir": 2, "list_prefix": 0}


def _append_counts(pipeline: str, zarr_format: int) -> list[Counter[str]]:
    """xarray's test_append through ``pipeline``: the requests of each ``to_zarr``."""
    original = xr.Dataset({"foo": ("x", [1])}, coords={"x": [0]})
    modified = xr.Dataset({"foo": ("x", [2])}, coords={"x": [1]})
    store = CountingStore({}, read_only=False)
    steps = []
    with zarr.config.set({"codec_pipeline.path": PIPELINES[pipeline]}):
        store.reset()
        original.to_zarr(store, zarr_format=zarr_format)
        steps.append(store.counts)
        for mode in ("a", "a-"):
            store.reset()
            modified.to_zarr(store, mode=mode, append_dim="x")
            steps.append(store.counts)
        with xr.open_dataset(store, engine="zarr") as actual:
            xr.testing.assert_identical(actual, xr.concat([original, modified, modified], dim="x"))
    return steps


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_append_requests(zarr_format):
    """Within xarray's limits (its test is of Zarr v3, its default), and never more than with
    zarr-python's own pipeline."""
    zcp.fallback_counts.clear()
    got = _append_counts("zarrbolt", zarr_format)
    assert not zcp.fallback_counts, dict(zcp.fallback_counts)
    want = _append_counts("zarr-python", zarr_format)
    for g, w, limits in zip(got, want, (FIRST, APPEND, APPEND)):
        for k in limits:
            assert g[k] <= w[k], (k, dict(g), dict(w))
            if zarr_format == 3:
                assert g[k] <= limits[k], (k, dict(g))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_resize_then_write_reads_no_metadata(zarr_format):
    """zarr-python resizes an array in place (its pipeline is not made again): a write past the
    old shape is served without reading the array's metadata again, and lands right."""
    store = CountingStore({}, read_only=False)
    with zarr.config.set({"codec_pipeline.path": PIPELINES["zarrbolt"]}):
        a = zarr.create_array(store, name="a", shape=(5, 4), chunks=(3, 3), dtype="i4", fill_value=-1,
                              zarr_format=zarr_format)
        a[:] = np.arange(20).reshape(5, 4)
        for new in ((9, 4), (9, 7), (12, 7)):
            a.resize(new)
            store.reset()
            a[new[0] - 4:, :] = 7
            assert not [k for k in store.keys if k.endswith(("zarr.json", ".zarray"))], store.keys
        want = np.full((12, 7), -1, "i4")
        want[:5, :4] = np.arange(20).reshape(5, 4)
        want[5:9, :4] = 7
        want[5:9, :] = 7
        want[8:, :] = 7
    with zarr.config.set({"codec_pipeline.path": PIPELINES["zarr-python"]}):
        np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], want)
