"""A real OME-Zarr 0.5 image written by ome-zarr-py (Zarr v3, sharded, a pyramid of levels), opened
the ways a microscopy user opens it: zarrbolt directly, zarr-python + dask through zarrbolt's codec
pipeline, and ome-zarr-py's own Reader under that pipeline.  Every way must give the pixels that
were written."""

import pytest

zarr = pytest.importorskip("zarr")
da = pytest.importorskip("dask.array")
pytest.importorskip("ome_zarr")

import numpy as np  # noqa: E402
from ome_zarr.format import FormatV05  # noqa: E402
from ome_zarr.io import parse_url  # noqa: E402
from ome_zarr.reader import Multiscales, Reader  # noqa: E402
from ome_zarr.scale import Methods  # noqa: E402
from ome_zarr.writer import write_image  # noqa: E402

import zarrbolt  # noqa: E402

from ecosystem_helpers import PIPELINE, through_pipeline  # noqa: E402

SHAPE = (2, 12, 160, 128)  # c, z, y, x


def _pipeline_name(z):
    return type(z._async_array.codec_pipeline).__name__


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(path, level paths, the pixels of every level as zarr-python's own pipeline reads them)."""
    path = str(tmp_path_factory.mktemp("ome") / "image.ome.zarr")
    rng = np.random.default_rng(5)
    data = (rng.integers(0, 3000, SHAPE) + np.arange(SHAPE[3]) * 400).astype("uint16")
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        root = zarr.open_group(path, mode="w", zarr_format=3)
        write_image(data, root, scale_factors=[2, 4], fmt=FormatV05(), axes="czyx", method=Methods.NEAREST,
                    storage_options={"chunks": (1, 4, 32, 32), "shards": (1, 12, 64, 128)})
        ome = zarr.open_group(path, mode="r").attrs["ome"]
        paths = [d["path"] for d in ome["multiscales"][0]["datasets"]]
        levels = [zarr.open_array(path, path=p, mode="r")[...] for p in paths]
    assert ome["version"] == "0.5" and len(paths) == 3
    np.testing.assert_array_equal(levels[0], data)
    assert levels[1].shape == (2, 12, 80, 64) and levels[2].shape == (2, 12, 40, 32)
    return path, paths, levels


def test_written_as_ome_zarr_05_with_shards(image):
    path, paths, _ = image
    g = zarrbolt.open_group(path, mode="r")
    assert g.attrs["ome"]["version"] == "0.5"
    for p in paths:
        assert g[p].shards is not None and g[p].metadata.dimension_names == ("c", "z", "y", "x")


def test_zarrbolt_opens_the_levels(image):
    path, paths, levels = image
    g = zarrbolt.open_group(path, mode="r")
    for ds, want in zip(g.attrs["ome"]["multiscales"][0]["datasets"], levels):
        arr = g[ds["path"]]
        np.testing.assert_array_equal(arr[...], want)
        np.testing.assert_array_equal(arr[1, 3:9, 5:70, ::3], want[1, 3:9, 5:70, ::3])
        np.testing.assert_array_equal(zarrbolt.to_dask(arr).compute(), want)
        np.testing.assert_array_equal(da.from_array(arr, chunks=arr.chunks).max(axis=1).compute(), want.max(axis=1))


def test_zarr_python_and_dask_through_the_pipeline(image):
    path, paths, levels = image
    with through_pipeline():
        root = zarr.open_group(path, mode="r")
        for p, want in zip(paths, levels):
            z = root[p]
            assert _pipeline_name(z) == PIPELINE.rsplit(".", 1)[1]
            np.testing.assert_array_equal(z[...], want)
            np.testing.assert_array_equal(da.from_zarr(z).compute(), want)
            np.testing.assert_array_equal(z[0, 2:11, 17:150, 3:99], want[0, 2:11, 17:150, 3:99])
            np.testing.assert_array_equal(da.from_zarr(path, component=p).mean(axis=(2, 3)).compute(),
                                          want.mean(axis=(2, 3)))


def test_ome_zarr_reader_through_the_pipeline(image):
    path, paths, levels = image
    with through_pipeline():
        reader = Reader(parse_url(path))
        nodes = list(reader())
        node = next(n for n in nodes if any(isinstance(s, Multiscales) for s in n.specs))
        assert len(node.data) == len(levels)
        for level, want in zip(node.data, levels):
            np.testing.assert_array_equal(level.compute(), want)
        assert [a["name"] for a in node.metadata["axes"]] == ["c", "z", "y", "x"]


def test_napari_style_levels(image):
    """napari takes a list of array-likes per multiscale image; zarrbolt levels wrapped in
    dask arrays (the recipe in docs/ecosystem.md) give the written pixels."""
    path, paths, levels = image
    g = zarrbolt.open_group(path, mode="r")
    pyramid = [da.from_array(g[p], chunks=g[p].shards) for p in paths]
    # napari hands arrays whose __module__ starts with "zarr" (zarrbolt's too) to da.from_zarr
    # when it splits channels; dask arrays it slices itself
    assert g[paths[0]].__module__.startswith("zarr")
    for lvl, want in zip(pyramid, levels):
        assert not lvl.__module__.startswith("zarr")
        np.testing.assert_array_equal(lvl[1, 5].compute(), want[1, 5])


def _napari_shows(layers, levels, z):
    """Each channel layer's displayed slice (at plane z) equals that plane of the level napari
    chose, over the region napari sliced."""
    for c, layer in enumerate(layers):
        shown = np.asarray(layer._slice.image.raw)
        want = levels[layer.data_level][c, z]
        assert shown.shape == want.shape
        np.testing.assert_array_equal(shown, want)


def test_napari_viewer_shows_the_pixels(image):
    """napari's viewer model (no window): the levels as zarrbolt dask arrays (the recipe in
    docs/ecosystem.md), split by channel, display the written pixels."""
    components = pytest.importorskip("napari.components")
    path, paths, levels = image
    g = zarrbolt.open_group(path, mode="r")
    viewer = components.ViewerModel()
    layers = viewer.add_image([zarrbolt.to_dask(g[p]) for p in paths], channel_axis=0, multiscale=True)
    assert len(layers) == SHAPE[0]
    for z in (0, 7):
        viewer.dims.set_point(0, z)
        _napari_shows(layers, levels, z)


def test_napari_viewer_through_the_pipeline(image):
    """A zarr-python array read through zarrbolt's pipeline handed to napari as it is (napari wraps
    it with da.from_zarr when it splits the channels)."""
    components = pytest.importorskip("napari.components")
    path, paths, levels = image
    with through_pipeline():
        root = zarr.open_group(path, mode="r")
        viewer = components.ViewerModel()
        layers = viewer.add_image([root[p] for p in paths], channel_axis=0, multiscale=True)
        viewer.dims.set_point(0, 5)
        _napari_shows(layers, levels, 5)


def test_ome_zarr_writer_through_the_pipeline(tmp_path, image):
    """ome-zarr-py writing with zarrbolt's pipeline on: zarr-python's own pipeline and zarrbolt
    read back the same levels as from the image written without it."""
    path, paths, levels = image
    out = str(tmp_path / "again.ome.zarr")
    with through_pipeline():
        root = zarr.open_group(out, mode="w", zarr_format=3)
        write_image(levels[0], root, scale_factors=[2, 4], fmt=FormatV05(), axes="czyx", method=Methods.NEAREST,
                    storage_options={"chunks": (1, 4, 32, 32), "shards": (1, 12, 64, 128)})
        # (the reads this makes keep the pipeline's read counter moving)
        np.testing.assert_array_equal(zarr.open_array(out, path=paths[0], mode="r")[...], levels[0])
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        for p, want in zip(paths, levels):
            np.testing.assert_array_equal(zarr.open_array(out, path=p, mode="r")[...], want)
    g = zarrbolt.open_group(out, mode="r")
    for p, want in zip(paths, levels):
        np.testing.assert_array_equal(g[p][...], want)
