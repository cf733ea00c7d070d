"""zarrbolt's napari reader plugin in napari itself, headless (napari's ``ViewerModel``, no window):
npe2 finds the reader; OME-Zarr images written by ome-zarr-py (0.5 on Zarr v3 sharded, 0.4 on Zarr
v2) open as one multiscale image layer per channel with the names, colours, contrast limits, scale
and translation of their metadata and their labels as label layers; plates and wells as one mosaic;
plain Zarr arrays as image layers.  What napari shows is compared with the pixels as zarr-python
(and ome-zarr-py, for mosaics) read them."""

import importlib.metadata
import importlib.resources
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("napari", reason="napari is not installed here (it is in the reference venv)")
npe2 = pytest.importorskip("npe2")
zarr = pytest.importorskip("zarr")
pytest.importorskip("ome_zarr")

from napari.components import ViewerModel  # noqa: E402
from ome_zarr.format import FormatV04, FormatV05  # noqa: E402
from ome_zarr_models.common.omero import Omero  # noqa: E402
from ome_zarr.io import parse_url  # noqa: E402
from ome_zarr.reader import Reader  # noqa: E402
from ome_zarr.scale import Methods  # noqa: E402
from ome_zarr.writer import write_image, write_labels, write_plate_metadata, write_well_metadata  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.errors import OmeMetadataError  # noqa: E402
from zarrbolt.napari import LazyArray, get_reader  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHAPE = (2, 12, 128, 96)  # c, z, y, x
OMERO = {"channels": [
    {"label": "dapi", "color": "0000FF", "active": True, "window": {"start": 100, "end": 2500, "min": 0, "max": 65535}},
    {"label": "gfp", "color": "00FF00", "active": False, "window": {"start": 50, "end": 3000, "min": 0, "max": 65535}},
]}
ZARR_OWN = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


@pytest.fixture(scope="module")
def plugin_manager():
    """npe2's plugin manager with zarrbolt's reader: found through the installed ``napari.manifest``
    entry point when zarrbolt is installed (``make test``), else registered from the package's
    own napari.yaml (an in-place build has no entry-point metadata)."""
    pm = npe2.PluginManager.instance()
    pm.discover()
    installed = any(ep.name == "zarrbolt" for ep in importlib.metadata.entry_points(group="napari.manifest"))
    if "zarrbolt" not in {m.name for m in pm.iter_manifests()}:
        assert not installed, "zarrbolt's napari.manifest entry point is installed but npe2 did not discover it"
        pm.register(npe2.PluginManifest.from_file(importlib.resources.files("zarrbolt.napari") / "napari.yaml"))
    return pm


def _layers(path, **kw):
    viewer = ViewerModel()
    return viewer, viewer.open(str(path), plugin="zarrbolt", **kw)


def _shown(layer):
    return np.asarray(layer._slice.image.raw)


@pytest.fixture(scope="module")
def image05(tmp_path_factory):
    """A 2-channel OME-Zarr 0.5 image with labels, written by ome-zarr-py (sharded), and its levels
    as zarr-python reads them."""
    path = str(tmp_path_factory.mktemp("np05") / "cells.ome.zarr")
    rng = np.random.default_rng(9)
    data = (rng.integers(0, 3000, SHAPE) + np.arange(SHAPE[1])[:, None, None] * 50).astype(np.uint16)
    with zarr.config.set(ZARR_OWN):
        root = zarr.open_group(path, mode="w", zarr_format=3)
        write_image(data, root, scale_factors=[2, 4], fmt=FormatV05(), axes="czyx", method=Methods.NEAREST,
                    scale={"z": 2.0, "y": 0.5, "x": 0.5}, axes_units={"z": "micrometer", "y": "micrometer",
                                                                       "x": "micrometer"},
                    storage_options={"chunks": (1, 4, 32, 32), "shards": (1, 12, 64, 96)},
                    omero=Omero.model_validate(OMERO))
        mask = (data[:1] > 2800).astype(np.uint8)
        write_labels(mask, root, name="cells", fmt=FormatV05(), axes="czyx", scale_factors=[2, 4],
                     method=Methods.NEAREST, label_metadata={"colors": [{"label-value": 1, "rgba": [255, 0, 0, 255]}]})
        g = zarr.open_group(path, mode="r")
        levels = [g[d["path"]][...] for d in g.attrs["ome"]["multiscales"][0]["datasets"]]
        label_levels = [g["labels/cells"][d["path"]][...]
                        for d in g["labels/cells"].attrs["ome"]["multiscales"][0]["datasets"]]
    return path, levels, label_levels


def test_npe2_lists_zarrbolt_reader(plugin_manager, image05):
    path = image05[0]
    manifest = plugin_manager.get_manifest("zarrbolt")
    assert [r.command for r in manifest.contributions.readers] == ["zarrbolt.get_reader"]
    assert "zarrbolt" in [r.plugin_name for r in plugin_manager.iter_compatible_readers([path])]
    # pyproject.toml's entry point names the manifest npe2 reads
    import tomllib

    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["napari.manifest"]
    assert eps == {"zarrbolt": "zarrbolt.napari:napari.yaml"}
    # npe2 runs the command itself: the layer data of the image (2 channels + a label image)
    layer_data = npe2.read([path], plugin_name="zarrbolt", stack=False)
    assert [t[2] for t in layer_data] == ["image", "image", "labels"]


def test_ome_zarr_05_two_channels(plugin_manager, image05):
    path, levels, _ = image05
    viewer, layers = _layers(path)
    images = [la for la in layers if la._type_string == "image"]
    assert len(images) == 2
    for c, (layer, name, cmap, limits, visible) in enumerate(zip(images, ["dapi", "gfp"], ["blue", "green"],
                                                                 [(100, 2500), (50, 3000)], [True, False])):
        assert layer.multiscale and len(layer.data) == 3
        assert all(isinstance(d, LazyArray) for d in layer.data)
        assert layer.name == name and layer.colormap.name == cmap and layer.visible is visible
        assert tuple(layer.contrast_limits) == limits
        assert tuple(layer.scale) == (2.0, 0.5, 0.5) and tuple(layer.translate) == (0, 0, 0)
        assert [str(u) for u in layer.units] == ["micrometer"] * 3 and tuple(layer.axis_labels) == ("z", "y", "x")
        assert [d.shape for d in layer.data] == [lv.shape[1:] for lv in levels]
        # what napari shows at its level and z, plane after plane (napari slices visible layers only)
        layer.visible = True
        for z in (0, 5, 11):
            viewer.dims.set_point(0, z * 2.0)
            np.testing.assert_array_equal(_shown(layer), levels[layer.data_level][c, z])


def test_labels_are_label_layers(plugin_manager, image05):
    path, _, label_levels = image05
    viewer, layers = _layers(path)
    (labels,) = [la for la in layers if la._type_string == "labels"]
    label_ms = zarr.open_group(path, mode="r")["labels/cells"].attrs["ome"]["multiscales"][0]
    want_scale = label_ms["datasets"][0]["coordinateTransformations"][0]["scale"][1:]  # its own metadata's
    assert labels.name == "cells" and labels.multiscale and tuple(labels.scale) == tuple(want_scale)
    assert np.allclose(labels.colormap.map(np.array([1]))[0], [1, 0, 0, 1])
    viewer.dims.set_point(0, 6 * want_scale[0])
    np.testing.assert_array_equal(_shown(labels), label_levels[labels.data_level][0, 6])
    # the labels group and one label image opened on their own
    for sub in ("labels", "labels/cells"):
        _, only = _layers(f"{path}/{sub}")
        assert [la._type_string for la in only] == ["labels"] and only[0].name == "cells"


def test_full_resolution_region(plugin_manager, image05):
    """Zoomed in on a region, napari asks level 0 for that region only (the canvas, emulated by
    the draw call vispy makes): what it shows is that region of that plane."""
    path, levels, _ = image05
    viewer, layers = _layers(path)
    layer = layers[0]
    viewer.dims.set_point(0, 7 * 2.0)
    # the canvas shows world y 0..16, x 4..20 (32 x 32 level-0 pixels) on a 256-pixel screen
    layer._update_draw(scale_factor=1 / 16, corner_pixels_displayed=np.array([[0.0, 4.0], [16.0, 20.0]]),
                       shape_threshold=(256, 256))
    assert layer.data_level == 0
    (y0, x0), (y1, x1) = layer.corner_pixels[:, 1:]
    shown = _shown(layer)
    np.testing.assert_array_equal(shown, levels[0][0, 7, y0:y1 + 1, x0:x1 + 1])
    assert shown.shape[0] < SHAPE[2] or shown.shape[1] < SHAPE[3]
    viewer.dims.set_point(0, 8 * 2.0)
    np.testing.assert_array_equal(_shown(layer), levels[0][0, 8, y0:y1 + 1, x0:x1 + 1])


def test_ome_zarr_04_on_zarr_v2(plugin_manager, tmp_path):
    path = str(tmp_path / "v04.ome.zarr")
    data = np.random.default_rng(2).integers(0, 1000, (3, 64, 48)).astype(np.uint16)  # c, y, x
    with zarr.config.set(ZARR_OWN):
        root = zarr.open_group(path, mode="w", zarr_format=2)
        write_image(data, root, scale_factors=[2], fmt=FormatV04(), axes="cyx", method=Methods.NEAREST,
                    scale={"y": 0.25, "x": 0.25}, storage_options={"chunks": (1, 32, 32)})
        g = zarr.open_group(path, mode="r")
        levels = [g[d["path"]][...] for d in g.attrs["multiscales"][0]["datasets"]]
    viewer, layers = _layers(path)
    assert len(layers) == 3 and all(la.multiscale for la in layers)
    for c, layer in enumerate(layers):
        assert tuple(layer.scale) == (0.25, 0.25)
        np.testing.assert_array_equal(np.asarray(layer.data[0]), data[c])
        np.testing.assert_array_equal(np.asarray(layer.data[1]), levels[1][c])
        np.testing.assert_array_equal(_shown(layer), levels[layer.data_level][c])


def _oz_plate(path, fmt, fields, rows, cols, wells):
    root = zarr.open_group(path, mode="w", zarr_format=3 if fmt.version == "0.5" else 2)
    write_plate_metadata(root, rows, cols, wells, fmt=fmt)
    for w in wells:
        r, c = w.split("/")
        well = root.require_group(r).require_group(c)
        write_well_metadata(well, [{"path": str(i)} for i in range(len(fields[w]))], fmt=fmt)
        for i, f in enumerate(fields[w]):
            write_image(f, well.require_group(str(i)), axes="yx", fmt=fmt, scale_factors=[2, 4],
                        method=Methods.NEAREST, storage_options={"chunks": (32, 32)})


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_plate_written_by_ome_zarr_py_is_one_layer(plugin_manager, tmp_path, version):
    path = str(tmp_path / f"plate{version}.ome.zarr")
    rng = np.random.default_rng(4)
    wells = ["A/1", "A/3", "B/2", "C/3"]
    fields = {w: [rng.integers(1, 5000, (64, 80)).astype(np.uint16) for _ in range(2)] for w in wells}
    with zarr.config.set(ZARR_OWN):
        _oz_plate(path, FormatV04() if version == "0.4" else FormatV05(), fields, ["A", "B", "C"], ["1", "2", "3"],
                  wells)
        node = next(iter(Reader(parse_url(path))()))
        mosaic = [np.asarray(d) for d in node.data]  # ome-zarr-py's own stitching of the plate
    viewer, layers = _layers(path)
    (layer,) = layers
    assert layer._type_string == "image" and layer.multiscale and len(layer.data) == 3
    assert [d.shape for d in layer.data] == [m.shape for m in mosaic] and layer.data[0].shape == (192, 240)
    for d, m in zip(layer.data, mosaic):
        np.testing.assert_array_equal(np.asarray(d), m)
    np.testing.assert_array_equal(_shown(layer), mosaic[layer.data_level])
    # zoomed in on well B/2 at full resolution: only that region is read and shown
    layer._update_draw(scale_factor=1.0, corner_pixels_displayed=np.array([[64.0, 80.0], [127.0, 159.0]]),
                       shape_threshold=(512, 512))
    assert layer.data_level == 0
    (y0, x0), (y1, x1) = layer.corner_pixels
    np.testing.assert_array_equal(_shown(layer), mosaic[0][y0:y1 + 1, x0:x1 + 1])
    # one well: its fields side by side
    _, (wl,) = _layers(f"{path}/B/2")
    np.testing.assert_array_equal(np.asarray(wl.data[0]), np.concatenate(fields["B/2"], axis=1))


@pytest.mark.parametrize("fmt, shards", [(2, None), (3, None), (3, (16, 64, 64))])
def test_plain_arrays_are_image_layers(plugin_manager, tmp_path, fmt, shards):
    path = str(tmp_path / "plain.zarr")
    data = np.random.default_rng(8).random((20, 64, 96)).astype(np.float32)
    with zarr.config.set(ZARR_OWN):
        kw = {"dimension_names": ["z", "y", "x"]} if fmt == 3 else {}
        z = zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(4, 32, 32), shards=shards,
                              zarr_format=fmt, **kw)
        z[...] = data
    viewer, (layer,) = _layers(path)
    assert layer._type_string == "image" and not layer.multiscale and isinstance(layer.data, LazyArray)
    assert layer.data.shape == data.shape and layer.data.dtype == np.float32
    if fmt == 3:
        assert tuple(layer.axis_labels) == ("z", "y", "x")
    for z in (0, 13):
        viewer.dims.set_point(0, z)
        np.testing.assert_array_equal(_shown(layer), data[z])


def test_what_zarrbolt_does_not_read(plugin_manager, tmp_path):
    assert get_reader(str(tmp_path / "nothing.zarr")) is None
    zarrbolt.open_group(str(tmp_path / "plain.zarr"), mode="w").create_array("a", shape=(4, 4), dtype="u1")
    assert get_reader(str(tmp_path / "plain.zarr")) is None  # a group that is not OME-Zarr
    g = zarrbolt.open_group(str(tmp_path / "broken.zarr"), mode="w")
    g.update_attributes({"ome": {"version": "0.5", "multiscales": [{"axes": [], "datasets": []}]}})
    reader = get_reader(str(tmp_path / "broken.zarr"))
    with pytest.raises(OmeMetadataError, match="axes"):
        reader(str(tmp_path / "broken.zarr"))


def test_reads_without_zarr_python(plugin_manager, image05):
    """The plugin reads through zarrbolt alone: zarr-python is never imported."""
    script = textwrap.dedent(f"""
        import sys, numpy as np
        from napari.components import ViewerModel
        from zarrbolt.napari.plugin import get_reader
        from napari.layers import Image
        v = ViewerModel()
        for data, kw, kind in get_reader({image05[0]!r})(None):
            if kind == "image":
                kw.pop("multiscale")
                v.add_layer(Image(data, multiscale=True, **kw))
        v.dims.set_point(0, 8.0)
        assert np.asarray(v.layers[0]._slice.image.raw).size > 0
        print(sorted(m for m in sys.modules if m == "zarr" or m.startswith("zarr.")))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
