"""zarrbolt.ome reading: NGFF 0.4 on Zarr v2 (hand-made and written by ome-zarr-py in the
reference venv) and the typed errors for bad metadata."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import OmeMetadataError
from zarrbolt.ome import Axis, open_image, write_image, write_label

HERE = Path(__file__).parent


def _v04_attrs(paths=("0", "1"), scales=((1.0, 0.5, 0.5), (1.0, 1.0, 1.0))):
    return {"multiscales": [{
        "version": "0.4", "name": "hand",
        "axes": [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
                 {"name": "x", "type": "space", "unit": "micrometer"}],
        "datasets": [{"path": p, "coordinateTransformations": [{"type": "scale", "scale": list(s)},
                                                               {"type": "translation", "translation": [0, 1, 2]}]}
                     for p, s in zip(paths, scales)],
        "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 1.0]}],
    }], "omero": {"channels": [{"label": "a"}, {"label": "b"}]}}


@pytest.fixture
def v04(tmp_path):
    path = str(tmp_path / "v04.zarr")
    g = zarrbolt.open_group(path, mode="w", zarr_format=2)
    g.create_array("0", shape=(2, 20, 30), dtype="uint8", chunks=(1, 10, 10))[...] = 3
    g.create_array("1", shape=(2, 10, 15), dtype="uint8", chunks=(1, 10, 10))[...] = 4
    g.update_attributes(_v04_attrs())
    return path


def test_reads_ngff_04_on_zarr_v2(v04):
    img = open_image(v04)
    assert img.version == "0.4" and img.group.metadata.zarr_format == 2
    assert img.axis_names == ("c", "y", "x") and img.axis_types == ("channel", "space", "space")
    assert img.units == (None, "micrometer", "micrometer")
    assert img.shapes == ((2, 20, 30), (2, 10, 15)) and img.paths == ("0", "1")
    assert img.scales == ((1.0, 0.5, 0.5), (1.0, 1.0, 1.0)) and img.translations[1] == (0.0, 1.0, 2.0)
    assert img.coordinate_transformations == ({"type": "scale", "scale": [1.0, 1.0, 1.0]},)
    assert img.omero["channels"][1]["label"] == "b" and img.name == "hand"
    np.testing.assert_array_equal(img[1][...], 4)
    assert len(img.labels) == 0
    with pytest.raises(OmeMetadataError, match="NGFF 0.5 labels"):
        write_label(v04, "mask", np.zeros((2, 20, 30), np.uint8))


def test_reads_ngff_03_axis_names(tmp_path):
    g = zarrbolt.open_group(str(tmp_path / "a"), mode="w", zarr_format=2)
    g.create_array("0", shape=(4, 4), dtype="uint8")
    g.update_attributes({"multiscales": [{"version": "0.4", "axes": ["y", "x"], "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}]})
    assert open_image(str(tmp_path / "a")).axis_types == ("space", "space")


def _corrupt(path, edit):
    g = zarrbolt.open_group(path, mode="a")
    attrs = g.attrs.asdict()
    edit(attrs)
    g.attrs.put(attrs)


def _ms(a):
    return a["multiscales"][0]


@pytest.mark.parametrize("edit,match", [
    (lambda a: a.pop("multiscales"), "no 'multiscales'"),
    (lambda a: a.update(multiscales=[]), "no 'multiscales'"),
    (lambda a: _ms(a).update(version="0.1"), "unsupported NGFF version"),
    (lambda a: _ms(a).update(axes="cyx"), "axes must be a list"),
    (lambda a: _ms(a)["axes"].pop(0), "'scale' must be a list of 2 finite numbers"),
    (lambda a: [_ms(a)["axes"].pop(0)] + [d.update(coordinateTransformations=[{"type": "scale", "scale": [1, 1]}])
                                          for d in _ms(a)["datasets"]] + [_ms(a).pop("coordinateTransformations")],
     "dataset '0' has 3 dimensions but the image has 2"),
    (lambda a: _ms(a)["axes"][1].update(name="x"), "unique"),
    (lambda a: _ms(a)["axes"][2].update(type="channel"), "2 or 3 'space'"),
    (lambda a: _ms(a)["axes"].reverse(), "'space' axes must come last"),
    (lambda a: _ms(a).update(datasets=[]), "datasets must be a non-empty list"),
    (lambda a: _ms(a)["datasets"][0].pop("path"), "non-empty string 'path'"),
    (lambda a: _ms(a)["datasets"][1].update(path="9"), "path '9' is not an array"),
    (lambda a: _ms(a)["datasets"][0].update(coordinateTransformations=[]), "non-empty list"),
    (lambda a: _ms(a)["datasets"][0]["coordinateTransformations"].reverse(), "first coordinate transformation"),
    (lambda a: _ms(a)["datasets"][0]["coordinateTransformations"][0].update(scale=[1, 2]), "list of 3"),
    (lambda a: _ms(a)["datasets"][0]["coordinateTransformations"][0].update(scale=[1, "a", 2]), "finite numbers"),
    (lambda a: _ms(a)["datasets"][0]["coordinateTransformations"][0].update(scale=[1, float("nan"), 2]), "finite"),
    (lambda a: _ms(a)["datasets"][1]["coordinateTransformations"][1].update(translation=[0, 10**400, 0]), "finite"),
    (lambda a: a.update(ome=[1]), "'ome' must be an object"),
    (lambda a: a.update(ome={"multiscales": []}), "no 'version'"),
])
def test_bad_metadata_raises_typed_error(v04, edit, match):
    _corrupt(v04, edit)
    with pytest.raises(OmeMetadataError, match=match):
        open_image(v04)


def test_axis_rules():
    from zarrbolt.ome.metadata import check_axes

    sp = [Axis("y", "space"), Axis("x", "space")]
    check_axes([Axis("t", "time"), Axis("c", "channel"), *sp], strict_units=True)
    check_axes([Axis("angle", "angle"), *sp], strict_units=True)  # custom types are allowed
    for axes, match in [
        ([Axis("y", "space"), Axis("t", "time"), Axis("x", "space")], "'time' axis must come first"),
        ([Axis("c", "channel"), Axis("d", "channel"), *sp], "at most one"),
        ([Axis(n, "space") for n in "wzyx"], "2 or 3 'space'"),
        ([Axis("a", "space")] * 1 + [Axis(n, "t") for n in "bcdef"], "2 to 5 axes"),
        ([Axis("t", "time", "meter"), *sp], "unit 'meter' of time axis"),
        ([Axis("y", "space", "second"), Axis("x", "space")], "unit 'second' of space axis"),
    ]:
        with pytest.raises(OmeMetadataError, match=match):
            check_axes(axes, strict_units=True)
    check_axes([Axis("y", "space", "parsec"), Axis("x", "space", "furlong")], strict_units=False)


def test_not_an_image(tmp_path):
    zarrbolt.create_array(str(tmp_path / "arr"), shape=(4,), dtype="uint8")
    with pytest.raises(Exception) as e:
        open_image(str(tmp_path / "arr"))
    assert isinstance(e.value, (OmeMetadataError, zarrbolt.errors.ContainsArrayError))
    g = zarrbolt.open_group(str(tmp_path / "g"), mode="w")
    g.create_group("labels", attributes={"ome": {"version": "0.5", "labels": "x"}})
    g.create_array("0", shape=(4, 4), dtype="uint8")
    g.update_attributes({"ome": {"version": "0.5", "multiscales": [{"axes": [{"name": "y", "type": "space"},
        {"name": "x", "type": "space"}], "datasets": [{"path": "0", "coordinateTransformations": [
            {"type": "scale", "scale": [1, 1]}]}]}]}})
    with pytest.raises(OmeMetadataError, match="list of names"):
        _ = open_image(str(tmp_path / "g")).labels


def test_open_image_from_group_and_url_style_path(tmp_path):
    write_image(str(tmp_path / "a"), np.zeros((8, 8), np.uint8), levels=2)
    assert len(open_image(zarrbolt.open_group(str(tmp_path / "a"), mode="r"))) == 2
    assert len(open_image("file://" + str(tmp_path / "a"))) == 2


def _ref_python():
    p = os.environ.get("ZARRBOLT_REF_PYTHON")
    if p and os.path.exists(p):
        return p
    if os.environ.get("CI"):
        pytest.fail("ZARRBOLT_REF_PYTHON is not set in CI")
    pytest.skip("reference environment not available (set ZARRBOLT_REF_PYTHON)")


def test_reads_ome_zarr_py_04_image_with_labels(tmp_path):
    py = _ref_python()
    path = str(tmp_path / "omezarrpy.zarr")
    proc = subprocess.run([py, str(HERE / "write_ome04.py"), path], check=False, capture_output=True, text=True,
                          timeout=300,
                          env={**os.environ, "PYTHONPATH": ""})
    if proc.returncode != 0 and "No module named 'ome_zarr'" in proc.stderr:
        pytest.skip("ome-zarr-py is not installed in the reference environment")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    data, ms = np.array(out["data"], dtype=np.uint16), out["multiscale"]
    img = open_image(path)
    assert img.version == "0.4" and img.axis_names == ("c", "z", "y", "x")
    assert img.paths == tuple(d["path"] for d in ms["datasets"]) and len(img) == 3
    assert img.scales == tuple(tuple(d["coordinateTransformations"][0]["scale"]) for d in ms["datasets"])
    assert img.scales[1] == (1.0, 1.0, 2.0, 2.0)
    for lvl, want in zip(img.levels, out["levels"]):
        np.testing.assert_array_equal(lvl[...], np.array(want, dtype=np.uint16))
    np.testing.assert_array_equal(img[0][...], data)
    assert list(img.labels) == ["mask"]
    mask = img.labels["mask"]
    assert mask.image_label["colors"][0]["rgba"] == [255, 0, 0, 255]
    np.testing.assert_array_equal(mask[0][...], np.array(out["mask"], dtype=np.uint8))
