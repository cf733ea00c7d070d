"""What zarrbolt.ome.write_image / write_label write, read by the ecosystem: valid NGFF 0.5 for
ome-zarr-models, the same pixels and scales through ome-zarr-py's reader and napari's viewer
model, and pyramids written from dask arrays."""

import shutil

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
da = pytest.importorskip("dask.array")

import zarrbolt  # noqa: E402
from zarrbolt.ome import open_image, write_image, write_label  # noqa: E402

SHAPE = (2, 9, 70, 90)  # c, z, y, x: odd z, edge shards on y and x


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("zbome") / "img.ome.zarr")
    rng = np.random.default_rng(11)
    data = (rng.integers(0, 3000, SHAPE) + np.arange(SHAPE[3]) * 11).astype(np.uint16)
    img = write_image(path, data, axes="czyx", units={"z": "micrometer", "y": "micrometer", "x": "micrometer"},
                      scale=(1, 2.0, 0.5, 0.5), chunks=(1, 4, 32, 32), shards=(1, 8, 64, 64), levels=3,
                      omero={"channels": [{"label": "dapi", "color": "0000FF", "active": True,
                                           "window": {"start": 0, "end": 4000, "min": 0, "max": 65535}},
                                          {"label": "gfp", "color": "00FF00", "active": True,
                                           "window": {"start": 0, "end": 4000, "min": 0, "max": 65535}}]})
    seg = (data[0] > 2000).astype(np.uint8)[np.newaxis].repeat(2, axis=0)
    write_label(img, "cells", seg, colors={1: [255, 0, 0, 255]})
    levels = [lvl[...] for lvl in open_image(path).levels]
    return path, data, levels


def test_ome_zarr_models_validates_image_and_labels(image):
    models = pytest.importorskip("ome_zarr_models.v05")
    path, _, _ = image
    group = zarr.open_group(path, mode="r")
    m = models.Image.from_zarr(group)
    ms = m.ome_attributes.multiscales[0]
    assert [a.name for a in ms.axes] == ["c", "z", "y", "x"]
    assert len(ms.datasets) == 3
    labels = models.Labels.from_zarr(group["labels"])
    assert labels.ome_attributes.labels == ["cells"]
    models.ImageLabel.from_zarr(group["labels"]["cells"])


def test_ome_zarr_models_is_not_vacuous(tmp_path, image):
    """The validator rejects what NGFF forbids: the same image with its space axes first."""
    models = pytest.importorskip("ome_zarr_models.v05")
    path, _, _ = image
    bad = str(tmp_path / "bad.ome.zarr")
    shutil.copytree(path, bad)
    g = zarr.open_group(bad, mode="a")
    ome = dict(g.attrs["ome"])
    ms = dict(ome["multiscales"][0])
    ms["axes"] = ms["axes"][1:] + ms["axes"][:1]
    ome["multiscales"] = [ms]
    g.attrs["ome"] = ome
    with pytest.raises(ValueError):
        models.Image.from_zarr(zarr.open_group(bad, mode="r"))


def test_ome_zarr_py_reads_pixels_and_scales(image):
    pytest.importorskip("ome_zarr")
    from ome_zarr.io import parse_url
    from ome_zarr.reader import Label, Multiscales, Reader

    path, data, levels = image
    nodes = list(Reader(parse_url(path))())
    node = next(n for n in nodes if any(isinstance(s, Multiscales) for s in n.specs)
                and not any(isinstance(s, Label) for s in n.specs))
    assert len(node.data) == 3
    for lvl, want in zip(node.data, levels):
        np.testing.assert_array_equal(lvl.compute(), want)
    np.testing.assert_array_equal(node.data[0].compute(), data)
    assert [a["name"] for a in node.metadata["axes"]] == ["c", "z", "y", "x"]
    scales = [t[0]["scale"] for t in node.metadata["coordinateTransformations"]]
    assert scales[1] == [1.0, 4.0, 1.0, 1.0]
    assert node.metadata["channel_names"] == ["dapi", "gfp"]  # the omero channel labels
    assert node.metadata["contrast_limits"] == [[0, 4000], [0, 4000]]
    label_nodes = [n for n in nodes if any(isinstance(s, Label) for s in n.specs)]
    assert label_nodes and label_nodes[0].data[0].shape == SHAPE


def test_napari_viewer_model_loads_the_pyramid(image):
    components = pytest.importorskip("napari.components")
    path, _, levels = image
    img = open_image(path)
    viewer = components.ViewerModel()
    layers = viewer.add_image([zarrbolt.to_dask(lvl) for lvl in img.levels], channel_axis=0, multiscale=True,
                              scale=img.scales[0][1:])
    assert len(layers) == 2
    viewer.dims.set_point(0, 4 * 2.0)
    for c, layer in enumerate(layers):
        assert tuple(layer.scale) == (2.0, 0.5, 0.5)
        shown = np.asarray(layer._slice.image.raw)
        level = levels[layer.data_level][c]
        # napari maps the world point to a plane of the level it shows: one of its planes
        assert shown.shape == level.shape[1:]
        assert any(np.array_equal(shown, level[z]) for z in range(level.shape[0]))


def test_write_image_from_dask(tmp_path, image):
    _, data, levels = image
    src = da.from_array(data, chunks=(1, 3, 35, 45))
    img = write_image(str(tmp_path / "d"), src, axes="czyx", chunks=(1, 4, 32, 32), shards=(1, 8, 64, 64), levels=3)
    for lvl, want in zip(img.levels, levels):
        np.testing.assert_array_equal(lvl[...], want)
    # and zarr-python reads the sharded levels
    z = zarr.open_group(str(tmp_path / "d"), mode="r")
    np.testing.assert_array_equal(z["2"][...], levels[2])
    assert z.attrs["ome"]["version"] == "0.5"


def test_napari_builtin_zarr_reader(tmp_path, image):
    """napari's own zarr reader (napari_builtins) opens an image group without labels as the
    list of its levels (with labels it opens the first subgroup: napari's rule, not ours)."""
    read = pytest.importorskip("napari_builtins.io._read")
    _, data, levels = image
    write_image(str(tmp_path / "n.ome.zarr"), data, axes="czyx", chunks=(1, 4, 32, 32), shards=(1, 8, 64, 64),
                levels=3)
    arrays, shape = read.read_zarr_dataset(str(tmp_path / "n.ome.zarr"))
    assert shape == SHAPE and len(arrays) == 3
    for arr, want in zip(arrays, levels):
        np.testing.assert_array_equal(np.asarray(arr), want)
