"""``zarrbolt pyramid`` (zarrbolt.cli.pyramid) through its own argparse parser: from a Zarr v2/v3 array,
from an OME-Zarr image, over HTTP, and its errors."""

import argparse
import json

import numpy as np
import pytest
from ds_reference import reference

import zarrbolt
from zarrbolt.errors import ContainsGroupError, OmeMetadataError
from zarrbolt.cli import pyramid
from zarrbolt.ome import open_image, write_image


def _run(argv):
    parser = argparse.ArgumentParser(prog="zarrbolt")
    pyramid.add_parser(parser.add_subparsers(dest="cmd"))
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.fixture
def v2_array(tmp_path):
    rng = np.random.default_rng(7)
    data = rng.integers(0, 255, (20, 40, 50), dtype=np.uint8)
    a = zarrbolt.create_array(str(tmp_path / "src.zarr"), shape=data.shape, dtype=data.dtype, chunks=(5, 10, 10),
                              zarr_format=2)
    a[...] = data
    return str(tmp_path / "src.zarr"), data


def test_pyramid_from_a_v2_array(tmp_path, v2_array, capsys):
    src, data = v2_array
    dst = str(tmp_path / "out.ome.zarr")
    assert _run(["pyramid", src, dst, "--levels", "3", "--chunks", "8,16,16", "--shards", "16,32,32",
                 "--units", "micrometer", "--scale", "2,0.5,0.5", "--name", "vol", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 levels" in out and "shape (10, 20, 25)" in out
    img = open_image(dst)
    assert img.axis_names == ("z", "y", "x") and img.units == ("micrometer",) * 3 and img.name == "vol"
    assert img.levels[0].shards == (16, 32, 32) and img.scales[1] == (4.0, 1.0, 1.0)
    np.testing.assert_array_equal(img[0][...], data)
    np.testing.assert_array_equal(img[1][...], reference(data, (True,) * 3, "mean"))


def test_pyramid_from_an_ome_image_keeps_its_geometry(tmp_path, capsys):
    src = str(tmp_path / "a")
    write_image(src, np.arange(2 * 32 * 32, dtype=np.uint16).reshape(2, 32, 32), axes="cyx", units="nanometer",
                scale=(1, 3, 3), translation=(0, 5, 5), levels=1)
    dst = str(tmp_path / "b")
    assert _run(["pyramid", src, dst, "--method", "max", "--levels", "2", "--shards", "none", "--json",
                 "--downsample-axes", "y,x"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["axes"] == "cyx" and [lv["shape"] for lv in result["levels"]] == [[2, 32, 32], [2, 16, 16]]
    img = open_image(dst)
    assert img.units == (None, "nanometer", "nanometer") and img.scales[0] == (1.0, 3.0, 3.0)
    assert img.translations[0] == (0.0, 5.0, 5.0) and img.levels[0].shards is None
    np.testing.assert_array_equal(img[1][...], reference(img[0][...], (False, True, True), "max"))


def test_pyramid_over_http(tmp_path, http_server):
    rng = np.random.default_rng(1)
    data = rng.integers(0, 1000, (64, 48), dtype=np.int32)
    zarrbolt.create_array(str(http_server.root / "arr.zarr"), shape=data.shape, dtype=data.dtype,
                          chunks=(16, 16))[...] = data
    dst = str(tmp_path / "out")
    assert _run(["pyramid", f"{http_server.url}/arr.zarr", dst, "--levels", "2", "--method", "mode",
                 "--no-progress"]) == 0
    np.testing.assert_array_equal(open_image(dst)[1][...], reference(data, (True, True), "mode"))


def test_pyramid_errors(tmp_path, v2_array):
    src, _ = v2_array
    dst = str(tmp_path / "out")
    _run(["pyramid", src, dst, "--levels", "1"])
    with pytest.raises(ContainsGroupError):
        _run(["pyramid", src, dst, "--levels", "1"])
    assert _run(["pyramid", src, dst, "--levels", "1", "--overwrite"]) == 0
    with pytest.raises(OmeMetadataError, match="multiples of the chunks"):
        _run(["pyramid", src, str(tmp_path / "x"), "--chunks", "8", "--shards", "12"])
    zarrbolt.open_group(str(tmp_path / "g"), mode="w")
    with pytest.raises(OmeMetadataError, match="not an OME-Zarr image"):
        _run(["pyramid", str(tmp_path / "g"), str(tmp_path / "y")])
    with pytest.raises(SystemExit):
        _run(["pyramid", src, str(tmp_path / "z"), "--chunks", "a,b"])
