"""zarrbolt.napari without napari: the lazy views napari's layers hold (numpy's basic indexing,
composed, read only when materialised), the chunk-block cache behind them, plate mosaics, and the
layer data the reader hook gives for zarrbolt-written images, labels, plates, wells and arrays.
(In napari itself, headless: tests/ecosystem/test_napari_plugin.py.)"""

import itertools
import warnings

import numpy as np
import pytest

import zarrbolt
import zarrbolt.ome as ome
from zarrbolt.errors import OmeMetadataError
from zarrbolt.napari import BlockCache, LazyArray, get_reader, kind_of, read_layers
from zarrbolt.napari.views import ArraySource, MosaicSource, Tile

RNG = np.random.default_rng(12)


class Counting:
    """A zarrbolt array that records the boxes read from it."""

    def __init__(self, arr):
        self.arr, self.shape, self.dtype, self.chunks, self.reads = arr, arr.shape, arr.dtype, arr.chunks, []

    def __getitem__(self, key):
        self.reads.append(key)
        return self.arr[key]


@pytest.fixture
def volume(tmp_path):
    data = RNG.integers(0, 60000, (2, 24, 50, 40)).astype(np.uint16)
    arr = zarrbolt.create_array(str(tmp_path / "v.zarr"), shape=data.shape, dtype=data.dtype, chunks=(1, 8, 16, 16),
                                shards=(1, 24, 32, 32))
    arr[...] = data
    return arr, data


KEYS = [(), (0,), (1, 5), (-1, -3, slice(2, 40, 3)), (Ellipsis, 7), (slice(None, None, -1),), (0, slice(20, 3, -2)),
        (slice(1, 2), Ellipsis, slice(None, None, 5)), (np.int64(1), 23, 49, 39), (0, slice(30, 40))]


@pytest.mark.parametrize("k1, k2", list(itertools.product(KEYS, [(), (0,), (Ellipsis, slice(1, None, 2)), (-1,)])))
def test_views_index_like_numpy(volume, k1, k2):
    arr, data = volume
    view = LazyArray(ArraySource(arr, None))
    a, v = data[k1], view[k1]
    if np.ndim(a) == 0:
        assert v == a
        return
    assert isinstance(v, LazyArray) and v.shape == a.shape and v.dtype == a.dtype and v.ndim == a.ndim
    np.testing.assert_array_equal(np.asarray(v), a)
    try:
        b = a[k2]
    except IndexError:
        with pytest.raises(IndexError):
            v[k2]
        return
    w = v[k2]
    np.testing.assert_array_equal(np.asarray(w) if isinstance(w, LazyArray) else w, b)


def test_view_errors_and_fancy_indexing(volume):
    arr, data = volume
    view = LazyArray(ArraySource(arr, None))
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        view[0, 24]
    with pytest.raises(IndexError, match="too many indices"):
        view[0, 0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        view[..., 0, ...]
    np.testing.assert_array_equal(view[1, 3][[0, 5, 7]], data[1, 3][[0, 5, 7]])  # read, then numpy indexes
    np.testing.assert_array_equal(view[0, 0][data[0, 0] > 30000], data[0, 0][data[0, 0] > 30000])
    assert np.asarray(view[0, :, 5:5]).shape == (24, 0, 40)
    assert np.asarray(view[0, 0], dtype=np.float32).dtype == np.float32
    assert len(view) == 2 and view.size == data.size and view.nbytes == data.nbytes
    assert view.chunks == (1, 8, 16, 16) and view[1].chunks == (8, 16, 16)
    assert view[1, :, 3:].chunks is None and view[:, ::2].chunks is None  # not on chunk boundaries


def test_nothing_is_read_until_materialised(volume):
    arr, data = volume
    src = Counting(arr)
    view = LazyArray(ArraySource(src, None))
    sub = view[1][:, 10:30][5]
    assert src.reads == [] and sub.shape == (20, 40)
    np.testing.assert_array_equal(np.asarray(sub), data[1, 5, 10:30])
    assert len(src.reads) == 1


def test_planes_of_a_chunk_are_decoded_once(volume):
    arr, data = volume
    src, cache = Counting(arr), BlockCache(64 << 20)
    view = LazyArray(ArraySource(src, cache))[0]
    region = (slice(4, 20), slice(0, 33))
    for z in range(24):  # three chunks along z
        np.testing.assert_array_equal(np.asarray(view[(z,) + region]), data[(0, z) + region])
    # a first look reads what is asked for; the first step reads the whole chunks of that plane;
    # the chunks of the next planes are read ahead, each once
    assert src.reads[0] == (0, 0, slice(4, 20, 1), slice(0, 33, 1))
    assert src.reads[1] == (slice(0, 1), slice(0, 8), slice(0, 32), slice(0, 40))
    assert {str(r) for r in src.reads[2:]} == {str((slice(0, 1), slice(8, 16), slice(0, 32), slice(0, 40))),
                                               str((slice(0, 1), slice(16, 24), slice(0, 32), slice(0, 40)))}
    assert len(src.reads) == 4 and cache.hits >= 21
    # a region inside a kept block is served from it too, and so is the step back down
    np.testing.assert_array_equal(np.asarray(view[17, 16:30, 20:40]), data[0, 17, 16:30, 20:40])
    np.testing.assert_array_equal(np.asarray(view[16, 16:30, 20:40]), data[0, 16, 16:30, 20:40])
    assert len(src.reads) == 4
    # what is returned is a copy, not a view of the kept block
    plane = np.asarray(view[3, 4:20])
    plane[...] = 0
    np.testing.assert_array_equal(np.asarray(view[3, 4:20]), data[0, 3, 4:20])


def test_panning_is_a_first_look(volume):
    arr, data = volume
    src, cache = Counting(arr), BlockCache(64 << 20)
    view = LazyArray(ArraySource(src, cache))[1]
    for x0 in (0, 10, 20):  # the view moves in the plane: no step along z, nothing widened or kept
        np.testing.assert_array_equal(np.asarray(view[5, :, x0:x0 + 16]), data[1, 5, :, x0:x0 + 16])
    assert [r[3] for r in src.reads] == [slice(0, 16, 1), slice(10, 26, 1), slice(20, 36, 1)]
    assert cache.nbytes == 0
    np.asarray(view[4, :, 20:36])  # a step down: the chunks of z 0..7, then those of nothing below
    assert src.reads[-1] == (slice(1, 2), slice(0, 8), slice(0, 50), slice(16, 40)) and cache.nbytes > 0


def test_cache_bound(volume):
    arr, data = volume
    src = Counting(arr)
    block = 8 * 50 * 40 * 2  # one chunk row along z over a whole plane
    cache = BlockCache(2 * block)
    view = LazyArray(ArraySource(src, cache))[0]
    for z in range(24):
        np.asarray(view[z])
    assert cache.nbytes <= 2 * block  # three blocks were kept, one at most two at a time
    tiny = BlockCache(100)  # blocks larger than half the cache go straight through
    src2 = Counting(arr)
    v2 = LazyArray(ArraySource(src2, tiny))
    for z in (2, 3):
        np.testing.assert_array_equal(np.asarray(v2[1, z, 3:9]), data[1, z, 3:9])
    assert src2.reads == [(1, z, slice(3, 9, 1), slice(0, 40, 1)) for z in (2, 3)] and tiny.nbytes == 0
    cache.clear()
    assert cache.nbytes == 0


def test_mosaic(volume):
    arr, data = volume
    th, tw = 20, 16
    small = np.arange(15 * 10, dtype=np.uint16).reshape(15, 10)  # smaller than the tile: padded
    parts = {(0, 0): data[0, 0, :20, :16], (0, 2): data[1, 3, 20:40, 10:26], (1, 1): small}

    def tile(a):
        return Tile(lambda: ArraySource(a, BlockCache(1 << 20)), "t")

    def broken():
        raise OmeMetadataError("nope")

    tiles = [[tile(parts[0, 0]), None, tile(parts[0, 2])], [Tile(broken, "well B/1"), tile(small), None]]
    src = MosaicSource(tiles, (th, tw), np.uint16)
    want = np.zeros((2 * th, 3 * tw), np.uint16)
    for (r, c), p in parts.items():
        want[r * th:r * th + p.shape[0], c * tw:c * tw + p.shape[1]] = p
    view = LazyArray(src)
    assert view.shape == (40, 48) and view.chunks is None
    with pytest.warns(UserWarning, match="well B/1 cannot be read and shows empty: .*nope"):
        np.testing.assert_array_equal(np.asarray(view), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a broken tile warns once
        for key in [(slice(5, 37, 3), slice(1, 47, 5)), (slice(None, None, -1), slice(30, 2, -7)), (25, slice(None)),
                    (slice(None), 17), (33, 21), (slice(19, 21), slice(15, 33))]:
            got = view[key]
            np.testing.assert_array_equal(np.asarray(got) if isinstance(got, LazyArray) else got, want[key])


OMERO = {"rdefs": {"model": "color"}, "channels": [
    {"label": "dapi", "color": "0000FF", "window": {"start": 5, "end": 900}, "active": True},
    {"label": "", "color": "#00ff00", "window": {"start": 7, "end": 7}, "active": False},
    {"color": "not a colour", "window": {"start": "a", "end": 3}}]}


@pytest.fixture
def image(tmp_path):
    path = str(tmp_path / "img.ome.zarr")
    data = RNG.integers(0, 1000, (3, 10, 64, 48)).astype(np.uint16)
    ome.write_image(path, data, axes="czyx", chunks=(1, 5, 32, 32), levels=3, units="micrometer",
                    scale=(1, 3.0, 0.5, 0.5), translation=(0, 10, 0, 2), omero=OMERO, name="cells")
    ome.write_label(path, "nuclei", (data > 800).astype(np.uint8), colors={1: [0, 255, 0, 255]})
    return path, data


def test_image_layer_data(image):
    path, data = image
    reader = get_reader(path)
    layers = reader(path)
    assert [t[2] for t in layers] == ["image"] * 3 + ["labels"] * 3
    (d0, k0, _), (d1, k1, _), (d2, k2, _) = layers[:3]
    assert k0["name"] == "dapi" and k0["colormap"] == "#0000ff" and k0["contrast_limits"] == [5.0, 900.0]
    assert k0["visible"] is True and k0["multiscale"] and k0["blending"] == "additive" and k0["rgb"] is False
    assert k0["scale"] == [3.0, 0.5, 0.5] and k0["translate"] == [10.0, 0.0, 2.0]
    assert k0["axis_labels"] == ["z", "y", "x"] and k0["units"] == ["micrometer"] * 3
    # what omero does not give well is left to napari
    assert k1["name"] == "cells [1]" and k1["colormap"] == "#00ff00" and "contrast_limits" not in k1
    assert k1["visible"] is False
    assert k2["name"] == "cells [2]" and "colormap" not in k2 and "contrast_limits" not in k2
    assert [d.shape for d in d0] == [(10, 64, 48), (5, 32, 24), (3, 16, 12)]
    np.testing.assert_array_equal(np.asarray(d2[0]), data[2])
    np.testing.assert_array_equal(np.asarray(d1[1]), ome.open_image(path).levels[1][1])
    ld, lk, _ = layers[3]
    assert lk["name"] == "nuclei [0]" and lk["colormap"][1] == [0.0, 1.0, 0.0, 1.0]
    assert lk["colormap"][0] == [0.0, 0.0, 0.0, 0.0] and lk["scale"] == [3.0, 0.5, 0.5]
    np.testing.assert_array_equal(np.asarray(ld[0]), (data[0] > 800).astype(np.uint8))
    # greyscale rendering
    g = zarrbolt.open_group(path, mode="r+")
    attrs = g.attrs.asdict()
    attrs["ome"]["omero"]["rdefs"]["model"] = "greyscale"
    g.update_attributes(attrs)
    assert {k["colormap"] for _, k, t in get_reader(path)(path) if t == "image"} == {"gray"}


def test_kinds_and_what_is_refused(image, tmp_path):
    path, _ = image
    assert kind_of(zarrbolt.open_group(path, mode="r")) == "image"
    assert kind_of(zarrbolt.open_group(path + "/labels", mode="r")) == "labels"
    assert kind_of(zarrbolt.open_array(path + "/0", mode="r")) == "array"
    assert [t[2] for t in get_reader(path + "/labels/nuclei")(None)] == ["labels"] * 3
    assert get_reader(str(tmp_path / "missing.zarr")) is None
    assert get_reader([]) is None
    one_d = zarrbolt.create_array(str(tmp_path / "1d.zarr"), shape=(10,), dtype="u1")
    assert kind_of(one_d) is None and get_reader(str(tmp_path / "1d.zarr")) is None
    g = zarrbolt.open_group(str(tmp_path / "v06.zarr"), mode="w")
    g.update_attributes({"ome": {"version": "0.6", "multiscales": []}})
    assert get_reader(str(tmp_path / "v06.zarr")) is None  # another plugin may read it
    (tmp_path / "junk.zarr").mkdir()
    (tmp_path / "junk.zarr" / "zarr.json").write_text("{not json")
    with pytest.raises(zarrbolt.errors.MetadataError):
        get_reader(str(tmp_path / "junk.zarr"))(None)
    with pytest.raises(OmeMetadataError, match="neither"):
        read_layers(zarrbolt.open_group(str(tmp_path / "plain.zarr"), mode="w"))


def test_labels_group_without_version(tmp_path, image):
    """ome-zarr-py 0.21 writes a labels group as {"ome": {"labels": [...]}} without a version."""
    path, _ = image
    g = zarrbolt.open_group(path + "/labels", mode="r+")
    g.update_attributes({"ome": {"labels": ["nuclei"]}})
    assert list(ome.open_image(path).labels) == ["nuclei"]
    assert kind_of(g) == "labels"


def test_plain_arrays_v2_and_v3(tmp_path):
    data = RNG.random((6, 30, 20)).astype(np.float32)
    for fmt in (2, 3):
        path = str(tmp_path / f"a{fmt}.zarr")
        kw = {"dimension_names": ["t", "y", "x"]} if fmt == 3 else {}
        zarrbolt.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(2, 16, 16), zarr_format=fmt,
                              **kw)[...] = data
        ((view, kw2, kind),) = get_reader([path])(path)
        assert kind == "image" and kw2["name"] == f"a{fmt}" and isinstance(view, LazyArray)
        assert kw2.get("axis_labels") == (["t", "y", "x"] if fmt == 3 else None)
        np.testing.assert_array_equal(np.asarray(view[4]), data[4])
    assert len(get_reader([str(tmp_path / "a2.zarr"), str(tmp_path / "a3.zarr")])(None)) == 2


def test_plate_and_well_mosaics(tmp_path):
    path = str(tmp_path / "plate.ome.zarr")
    f = {w: [RNG.integers(1, 100, (2, 30, 20)).astype(np.uint8) for _ in range(3)] for w in ("A/1", "B/2")}
    ome.write_plate(path, f, axes="cyx", chunks=(1, 16, 16), levels=2, method="nearest",
                    omero={"channels": [{"label": "a", "color": "FF0000"}, {"label": "b"}]})
    layers = get_reader(path)(path)
    assert [(k["name"], t) for _, k, t in layers] == [("plate: a", "image"), ("plate: b", "image")]
    data, kw, _ = layers[1]
    assert kw["multiscale"] and [d.shape for d in data] == [(60, 40), (30, 20)]
    want = np.zeros((60, 40), np.uint8)
    want[:30, :20], want[30:, 20:] = f["A/1"][0][1], f["B/2"][0][1]
    np.testing.assert_array_equal(np.asarray(data[0]), want)
    np.testing.assert_array_equal(np.asarray(data[1]), want[::2, ::2])
    assert kw["metadata"]["zarrbolt"]["plate"]["wells"] == ["A/1", "B/2"]
    # a well: three fields in a 2 x 2 grid, the fourth place empty
    ((wdata, wkw, _), _) = get_reader(path + "/B/2")(None)
    grid = np.zeros((60, 40), np.uint8)
    grid[:30, :20], grid[:30, 20:], grid[30:, :20] = (x[0] for x in f["B/2"])
    assert wkw["name"] == "2: a"
    np.testing.assert_array_equal(np.asarray(wdata[0]), grid)


def test_default_cache_size(monkeypatch):
    import zarrbolt.napari.views as views

    monkeypatch.setattr(views, "_default", None)
    monkeypatch.setenv("ZARRBOLT_NAPARI_CACHE_BYTES", "12345")
    assert views.default_cache().max_bytes == 12345
    monkeypatch.setattr(views, "_default", None)
    monkeypatch.setenv("ZARRBOLT_NAPARI_CACHE_BYTES", "lots")
    with pytest.raises(ValueError, match="ZARRBOLT_NAPARI_CACHE_BYTES"):
        views.default_cache()
    monkeypatch.setattr(views, "_default", None)
    monkeypatch.delenv("ZARRBOLT_NAPARI_CACHE_BYTES")
    assert 0 < views.default_cache().max_bytes <= 1 << 30
