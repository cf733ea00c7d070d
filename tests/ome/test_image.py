"""zarrbolt.ome: writing sharded NGFF 0.5 pyramids and reading them back (levels, axes, units,
scales, translations, labels, omero), from numpy and zarrbolt arrays, streaming block by block."""

import json
import os

import numpy as np
import pytest
from ds_reference import reference

import zarrbolt
from zarrbolt.errors import ContainsGroupError, OmeMetadataError
from zarrbolt.ome import Axis, open_image, write_image, write_label


def _pyramid_ref(a, halves, method):
    out = [a]
    for h in halves:
        out.append(reference(out[-1], h, method))
    return out


@pytest.fixture(scope="module")
def volume():
    rng = np.random.default_rng(0)
    return (rng.integers(0, 3000, (37, 70, 90)) + np.arange(90) * 7).astype(np.uint16)


def test_write_image_levels_equal_repeated_downsampling(tmp_path, volume):
    path = str(tmp_path / "img.ome.zarr")
    img = write_image(path, volume, axes="zyx", units="micrometer", scale=(2.0, 0.5, 0.5), chunks=(8, 16, 16),
                      shards=(16, 32, 32), levels=4, name="vol")
    assert img.version == "0.5" and img.name == "vol"
    assert img.shapes == ((37, 70, 90), (19, 35, 45), (10, 18, 23), (5, 9, 12))
    for lvl, want in zip(img.levels, _pyramid_ref(volume, [(True,) * 3] * 3, "mean")):
        np.testing.assert_array_equal(lvl[...], want)
    assert img.levels[0].shards == (16, 32, 32) and img.levels[0].chunks == (8, 16, 16)
    assert img.levels[3].chunks == (5, 9, 12) and img.levels[3].shards == (5, 9, 12)
    assert img.axes == (Axis("z", "space", "micrometer"), Axis("y", "space", "micrometer"),
                        Axis("x", "space", "micrometer"))
    assert img.scales[2] == (8.0, 2.0, 2.0)
    # mean: the centre of a level-k pixel is the centre of its window of level-0 pixels
    assert img.translations[1] == (1.0, 0.25, 0.25) and img.translations[0] == (0.0, 0.0, 0.0)
    assert img.method == "mean"
    assert [lvl.metadata.dimension_names for lvl in img.levels] == [("z", "y", "x")] * 4


def test_metadata_document_is_ngff_05(tmp_path):
    path = tmp_path / "img.ome.zarr"
    write_image(str(path), np.zeros((4, 64, 64), np.uint8), axes="cyx", levels=3,
                omero={"channels": [{"label": f"ch{i}", "color": "FF0000", "window": {"start": 0, "end": 255,
                                                                                     "min": 0, "max": 255}}
                                    for i in range(4)]}, method="nearest")
    doc = json.loads((path / "zarr.json").read_text())
    assert doc["zarr_format"] == 3 and doc["node_type"] == "group"
    ome = doc["attributes"]["ome"]
    assert ome["version"] == "0.5" and "version" not in ome["multiscales"][0]
    ms = ome["multiscales"][0]
    assert ms["axes"] == [{"name": "c", "type": "channel"}, {"name": "y", "type": "space"},
                          {"name": "x", "type": "space"}]
    assert [d["path"] for d in ms["datasets"]] == ["0", "1", "2"]
    assert [d["coordinateTransformations"] for d in ms["datasets"]] == [
        [{"type": "scale", "scale": [1.0, s, s]}] for s in (1.0, 2.0, 4.0)]  # nearest: no translation
    assert ome["omero"]["channels"][3]["label"] == "ch3"
    assert open_image(str(path)).omero["channels"][0]["color"] == "FF0000"


def test_default_layout_and_levels(tmp_path):
    img = write_image(str(tmp_path / "a"), np.ones((2, 300, 1000), np.float32), axes="cyx")
    # chunks 256 on y/x, shards of 4 chunks clipped to the array; levels until y and x fit a chunk
    assert img.levels[0].chunks == (1, 256, 256) and img.levels[0].shards == (1, 512, 1024)
    assert img.shapes[-1] == (2, 75, 250) and len(img) == 3
    assert img.scales[-1] == (1.0, 4.0, 4.0)
    np.testing.assert_array_equal(img.levels[2][...], 1)


def test_anisotropic_axis_stops_at_one(tmp_path):
    img = write_image(str(tmp_path / "a"), np.arange(3 * 64 * 64, dtype=np.int32).reshape(3, 64, 64), levels=4,
                      chunks=8, method="max")
    assert img.shapes == ((3, 64, 64), (2, 32, 32), (1, 16, 16), (1, 8, 8))
    assert img.scales[3] == (4.0, 8.0, 8.0)  # z halved twice only
    want = _pyramid_ref(img.levels[0][...], [(True,) * 3, (True,) * 3, (False, True, True)], "max")
    for lvl, w in zip(img.levels, want):
        np.testing.assert_array_equal(lvl[...], w)


def test_unsharded_and_downsample_axes(tmp_path, volume):
    img = write_image(str(tmp_path / "a"), volume, chunks=(8, 32, 32), shards=None, levels=3,
                      downsample_axes=["y", "x"], method="min")
    assert img.levels[1].shards is None and img.shapes[2] == (37, 18, 23)
    for lvl, w in zip(img.levels, _pyramid_ref(volume, [(False, True, True)] * 2, "min")):
        np.testing.assert_array_equal(lvl[...], w)


def test_from_a_zarrbolt_array_streams_block_by_block(tmp_path, volume):
    src = zarrbolt.create_array(str(tmp_path / "src"), shape=volume.shape, dtype=volume.dtype, chunks=(10, 20, 20))
    src[...] = volume
    reads = []

    class Counting:
        shape, dtype = src.shape, src.dtype

        def __getitem__(self, sel):
            reads.append(tuple((s.stop - s.start) for s in sel))
            return src[sel]

    img = write_image(str(tmp_path / "img"), Counting(), chunks=(8, 16, 16), shards=(16, 32, 32), levels=2)
    np.testing.assert_array_equal(img.levels[1][...], reference(volume, (True,) * 3, "mean"))
    assert max(np.prod(r) for r in reads) <= 16 * 32 * 32  # never more than a shard at once
    assert len(reads) == 3 * 3 * 3


def test_progress_callback(tmp_path):
    seen = []
    write_image(str(tmp_path / "a"), np.zeros((64, 64), np.uint8), chunks=16, shards=32, levels=2,
                progress=lambda lvl, done, total: seen.append((lvl, done, total)))
    assert seen == [(0, 0, 4), (1, 0, 1)] + [(0, i, 4) for i in range(1, 5)] + [(1, 1, 1)]


def test_existing_destination_needs_overwrite(tmp_path):
    p = str(tmp_path / "a")
    write_image(p, np.zeros((16, 16), np.uint8), levels=1)
    with pytest.raises(ContainsGroupError):
        write_image(p, np.ones((16, 16), np.uint8), levels=1)
    img = write_image(p, np.ones((16, 16), np.uint8), levels=2, overwrite=True)
    assert len(img) == 2 and img.levels[0][0, 0] == 1


@pytest.mark.parametrize("kwargs,match", [
    ({"axes": "zyx"}, "3 axes"),
    ({"axes": "xy", "units": "lightyear"}, "unit 'lightyear'"),
    ({"axes": "tx"}, "2 or 3 'space'"),
    ({"axes": ["y", {"name": "q"}]}, "needs a type"),
    ({"chunks": (16, 16), "shards": (24, 24)}, "multiples of the chunks"),
    ({"chunks": (0, 4)}, "positive integers"),
    ({"levels": 0}, "levels must be"),
    ({"levels": 9}, "halved only"),
    ({"scale": (1.0, -1.0)}, "positive"),
    ({"downsample_axes": ["z"]}, "not axes"),
    ({"omero": [1]}, "omero must be a mapping"),
])
def test_bad_arguments_raise_ome_metadata_error(tmp_path, kwargs, match):
    with pytest.raises(OmeMetadataError, match=match):
        write_image(str(tmp_path / "a"), np.zeros((32, 32), np.uint8), **kwargs)
    assert not os.path.exists(tmp_path / "a")  # checked before anything is written


def test_labels_round_trip(tmp_path, volume):
    path = str(tmp_path / "img")
    img = write_image(path, volume, units="micrometer", scale=(2, 1, 1), chunks=16, levels=3)
    seg = (volume // 1000).astype(np.uint8)
    lab = write_label(path, "cells", seg, colors={1: [255, 0, 0, 255], 2: [0, 255, 0, 255]},
                      properties=[{"label-value": 1, "class": "nucleus"}])
    write_label(img, "other", np.zeros_like(seg))
    again = open_image(path)
    assert sorted(again.labels) == ["cells", "other"]
    cells = again.labels["cells"]
    assert cells.shapes == img.shapes and cells.scales == img.scales and cells.translations == img.translations
    assert cells.image_label["source"] == {"image": "../../"}
    assert cells.image_label["colors"][0] == {"label-value": 1, "rgba": [255, 0, 0, 255]}
    for lvl, w in zip(lab.levels, _pyramid_ref(seg, [(True,) * 3] * 2, "mode")):
        np.testing.assert_array_equal(lvl[...], w)
    doc = json.loads((tmp_path / "img" / "labels" / "zarr.json").read_text())
    assert doc["attributes"] == {"ome": {"version": "0.5", "labels": ["cells", "other"]}}
    with pytest.raises(OmeMetadataError, match="shape"):
        write_label(path, "bad", seg[1:])
    with pytest.raises(OmeMetadataError, match="integers"):
        write_label(path, "bad", seg.astype(np.float32))
    assert len(open_image(str(tmp_path / "img")).labels) == 2


def test_image_without_labels(tmp_path):
    img = write_image(str(tmp_path / "a"), np.zeros((8, 8), np.uint8), levels=1)
    assert len(img.labels) == 0 and list(img.labels) == []
    assert "NGFF 0.5" in repr(img) and "axes=yx" in repr(img)


@pytest.mark.parametrize("chunks,shards", [((3, 5, 5), (3, 15, 15)), ((5, 7, 9), None)])
def test_odd_blocks_fall_back_to_level_by_level(tmp_path, volume, chunks, shards):
    """Odd block sizes: windows straddle blocks, so the levels are written one after the other
    (each read back); the pixels are the same as with even blocks."""
    from zarrbolt.ome.cascade import aligned

    img = write_image(str(tmp_path / "odd"), volume, chunks=chunks, shards=shards, levels=3, method="max")
    assert not aligned([_plan_of(img, k) for k in range(3)])
    for lvl, w in zip(img.levels, _pyramid_ref(volume, [(True,) * 3] * 2, "max")):
        np.testing.assert_array_equal(lvl[...], w)


def _plan_of(img, k):
    from zarrbolt.ome.pyramid import LevelPlan

    lvl = img.levels[k]
    halve = tuple(k > 0 and a < b for a, b in zip(lvl.shape, img.levels[max(k - 1, 0)].shape))
    return LevelPlan(lvl.shape, lvl.chunks, lvl.shards, halve, img.scales[k], img.translations[k])


def test_even_blocks_take_the_one_pass_path(tmp_path, volume):
    from zarrbolt.ome.cascade import aligned

    img = write_image(str(tmp_path / "even"), volume, chunks=(4, 8, 8), shards=(8, 16, 16), levels=4)
    assert aligned([_plan_of(img, k) for k in range(4)])
    for lvl, w in zip(img.levels, _pyramid_ref(volume, [(True,) * 3] * 3, "mean")):
        np.testing.assert_array_equal(lvl[...], w)
