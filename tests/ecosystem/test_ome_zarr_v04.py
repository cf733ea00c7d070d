"""A real OME-Zarr 0.4 image (Zarr v2: a multiscales group of ``.zarray`` levels, ``/``-separated
chunk keys, blosc) written by ome-zarr-py, opened and read by zarrbolt the ways a microscopy
user opens one, and edited in place without turning it into Zarr v3."""

import json
import os

import pytest

zarr = pytest.importorskip("zarr")
da = pytest.importorskip("dask.array")
pytest.importorskip("ome_zarr")

import numpy as np  # noqa: E402
from ome_zarr.format import FormatV04  # noqa: E402
from ome_zarr.io import parse_url  # noqa: E402
from ome_zarr.reader import Multiscales, Reader  # noqa: E402
from ome_zarr.scale import Methods  # noqa: E402
from ome_zarr.writer import write_image  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.pipeline import read as planner  # noqa: E402

SHAPE = (2, 6, 90, 70)  # c, z, y, x: edge chunks on y and x
REFERENCE = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(path, level paths, the pixels of every level as zarr-python's own pipeline reads them)."""
    path = str(tmp_path_factory.mktemp("ome04") / "image.ome.zarr")
    rng = np.random.default_rng(3)
    data = (rng.integers(0, 2000, SHAPE) + np.arange(SHAPE[3]) * 30).astype("uint16")
    with zarr.config.set(REFERENCE):
        root = zarr.open_group(path, mode="w", zarr_format=2)
        write_image(data, root, scale_factors=[2, 4], fmt=FormatV04(), axes="czyx", method=Methods.NEAREST,
                    storage_options={"chunks": (1, 2, 32, 32)})
        attrs = dict(zarr.open_group(path, mode="r").attrs)
        paths = [d["path"] for d in attrs["multiscales"][0]["datasets"]]
        levels = [zarr.open_array(path, path=p, mode="r")[...] for p in paths]
    np.testing.assert_array_equal(levels[0], data)
    return path, paths, levels


def test_written_as_ome_zarr_04_in_zarr_v2(image):
    path, paths, _ = image
    assert os.path.exists(os.path.join(path, ".zgroup")) and not os.path.exists(os.path.join(path, "zarr.json"))
    g = zarrbolt.open_group(path, mode="r")
    assert g.metadata.zarr_format == 2
    ms = g.attrs["multiscales"][0]
    assert ms["version"] == "0.4" and [a["name"] for a in ms["axes"]] == ["c", "z", "y", "x"]
    assert sorted(g.keys()) == sorted(paths)
    for p in paths:
        zarray = json.loads(open(os.path.join(path, p, ".zarray")).read())
        assert zarray["dimension_separator"] == "/"
        assert g[p].metadata.zarr_format == 2 and g[p].chunks == (1, 2, 32, 32)


def test_zarrbolt_reads_every_level(image):
    path, paths, levels = image
    g = zarrbolt.open_group(path, mode="r")
    before = dict(planner.strategy_counts)
    for p, want in zip(paths, levels):
        arr = g[p]
        np.testing.assert_array_equal(arr[...], want)
        np.testing.assert_array_equal(arr[1, 2:5, 7:80, ::3], want[1, 2:5, 7:80, ::3])
        np.testing.assert_array_equal(zarrbolt.to_dask(arr).compute(), want)
        np.testing.assert_array_equal(da.from_array(arr, chunks=arr.chunks).max(axis=1).compute(), want.max(axis=1))
    after = dict(planner.strategy_counts)
    assert sum(after.get(k, 0) - before.get(k, 0) for k in after if k.startswith("fused")) > 0


def test_ome_zarr_reader_agrees(image):
    path, paths, levels = image
    with zarr.config.set(REFERENCE):
        nodes = list(Reader(parse_url(path))())
    node = next(n for n in nodes if any(isinstance(s, Multiscales) for s in n.specs))
    g = zarrbolt.open_group(path, mode="r")
    for level, p in zip(node.data, paths):
        np.testing.assert_array_equal(level.compute(), g[p][...])


def test_edit_in_place_stays_ome_zarr_04(tmp_path, image):
    """A user opens the image with the default mode and writes a region and a label attribute:
    ome-zarr-py and zarr-python still read a v2 OME-Zarr 0.4 image with the new pixels."""
    import shutil

    path, paths, levels = image
    copy = str(tmp_path / "edit.ome.zarr")
    shutil.copytree(path, copy)
    g = zarrbolt.open(copy)
    g[paths[0]][0, 0, :10, :10] = 7
    g.attrs["edited"] = True
    assert not any(f == "zarr.json" for _, _, files in os.walk(copy) for f in files)
    with zarr.config.set(REFERENCE):
        zg = zarr.open_group(copy, mode="r")
        assert zg.metadata.zarr_format == 2 and zg.attrs["edited"] is True
        assert zg.attrs["multiscales"][0]["version"] == "0.4"
        want = levels[0].copy()
        want[0, 0, :10, :10] = 7
        np.testing.assert_array_equal(zg[paths[0]][...], want)
        nodes = list(Reader(parse_url(copy))())
    node = next(n for n in nodes if any(isinstance(s, Multiscales) for s in n.specs))
    np.testing.assert_array_equal(node.data[0].compute(), want)
