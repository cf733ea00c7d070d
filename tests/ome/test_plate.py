"""zarrbolt.ome plates (HCS): writing sharded NGFF 0.5 plates, reading them and hand-made NGFF 0.4
plates on Zarr v2, the typed errors for bad metadata and bad arguments, and ``zarrbolt info``'s
summary.  (Interop with ome-zarr-py: tests/ecosystem/test_ome_plate.py.)"""

import json

import numpy as np
import pytest

import zarrbolt
from zarrbolt.__main__ import main
from zarrbolt.errors import OmeMetadataError
from zarrbolt.ome import Acquisition, open_plate, open_well, write_plate
from zarrbolt.ome.plate import plate_summary

RNG = np.random.default_rng(3)


def _field(i, shape=(3, 40, 36)):
    return (RNG.integers(0, 4000, shape) + 1000 * i).astype(np.uint16)


@pytest.fixture
def plate_path(tmp_path):
    path = str(tmp_path / "plate.ome.zarr")
    wells = {"B/10": [_field(0), _field(1)], ("A", "2"): _field(2), "A/10": [{"data": _field(3), "path": "f0"}]}
    write_plate(path, wells, axes="zyx", chunks=(3, 16, 16), levels=2, name="p1", units="micrometer",
                scale=(2.0, 0.5, 0.5))
    return path, wells


def test_write_and_read_back(plate_path):
    path, wells = plate_path
    plate = open_plate(path)
    assert plate.version == "0.5" and plate.name == "p1"
    # the defaults: rows and columns the wells use, columns of digits in numeric order
    assert plate.rows == ("A", "B") and plate.columns == ("2", "10")
    assert list(plate) == ["A/2", "A/10", "B/10"]  # written in row then column order
    assert plate.grid() == [["A/2", "A/10"], [None, "B/10"]]
    assert plate.field_count == 2 and plate.acquisitions == ()
    np.testing.assert_array_equal(plate["B/10"][1].levels[0][...], wells["B/10"][1])
    np.testing.assert_array_equal(plate["A/2"][0].levels[0][...], wells["A", "2"])
    np.testing.assert_array_equal(plate["A/10"]["f0"].levels[0][...], wells["A/10"][0]["data"])
    img = plate["A/10"][0]
    assert img.scales[0] == (2.0, 0.5, 0.5) and img.units == ("micrometer",) * 3 and len(img) == 2
    assert img.levels[0].shards is not None  # sharded, as write_image writes
    g = zarrbolt.open_group(path, mode="r")
    meta = g.attrs["ome"]
    assert meta["version"] == "0.5"
    assert meta["plate"]["wells"] == [{"path": "A/2", "rowIndex": 0, "columnIndex": 0},
                                      {"path": "A/10", "rowIndex": 0, "columnIndex": 1},
                                      {"path": "B/10", "rowIndex": 1, "columnIndex": 1}]
    assert g["B/10"].attrs["ome"] == {"version": "0.5", "well": {"images": [{"path": "0"}, {"path": "1"}]}}
    well = open_well(path, path="B/10")
    assert well.field_paths == ("0", "1") and well.acquisitions == {None: ("0", "1")}
    with pytest.raises(KeyError):
        plate["C/1"]
    with pytest.raises(KeyError):
        well["9"]


def test_acquisitions(tmp_path):
    path = str(tmp_path / "acq.zarr")
    wells = {"A/1": [{"data": _field(0), "acquisition": 3}, {"data": _field(1), "acquisition": 5}]}
    plate = write_plate(path, wells, axes="zyx", levels=1,
                        acquisitions=[Acquisition(3, name="day 1", starttime=10), {"id": 5, "description": "d2"}])
    assert plate.acquisitions == (Acquisition(3, "day 1", starttime=10), Acquisition(5, description="d2"))
    assert plate["A/1"].acquisitions == {3: ("0",), 5: ("1",)}
    # ids the fields name become the acquisitions when none are given
    plate = write_plate(str(tmp_path / "acq2.zarr"), {"A/1": {"data": _field(0), "acquisition": 2}}, axes="zyx",
                        levels=1)
    assert plate.acquisitions == (Acquisition(2),)


@pytest.mark.parametrize("kwargs, wells, match", [
    ({}, {}, "non-empty mapping"),
    ({}, {"A1": [_field(0)]}, "'<row>/<column>'"),
    ({}, {"A/1/2": [_field(0)]}, "'<row>/<column>'"),
    ({}, {"A-/1": [_field(0)]}, "letters and digits"),
    ({"rows": ["B"]}, {"A/1": [_field(0)]}, r"rows \['A'\] that are not in rows"),
    ({"columns": ["1", "1"]}, {"A/1": [_field(0)]}, "unique"),
    ({}, {"A/1": []}, "no fields"),
    ({}, {"A/1": [{"acquisition": 0}]}, "'data'"),
    ({}, {"A/1": [{"data": _field(0), "acquisition": -1}]}, "non-negative"),
    ({}, {"A/1": [{"data": _field(0), "path": "x"}, {"data": _field(1), "path": "x"}]}, "unique"),
    ({"acquisitions": [{"id": 0}, {"id": 1}]}, {"A/1": [{"data": _field(0), "acquisition": 0}, _field(1)]},
     "every field must name its acquisition"),
    ({"acquisitions": [{"id": 0}]}, {"A/1": [{"data": _field(0), "acquisition": 4}]}, r"acquisitions \[4\]"),
    ({"acquisitions": [{"id": 0}, {"id": 0}]}, {"A/1": [_field(0)]}, "unique"),
    ({"field_count": 1}, {"A/1": [_field(0), _field(1)]}, "field_count"),
    ({"chunks": (3, 16, 16), "shards": (3, 24, 24)}, {"A/1": [_field(0)]}, "multiples"),
    ({"axes": "yx"}, {"A/1": [_field(0)]}, "axes"),
])
def test_bad_arguments_are_refused_before_writing(tmp_path, kwargs, wells, match):
    path = tmp_path / "bad.zarr"
    with pytest.raises(OmeMetadataError, match=match):
        write_plate(str(path), wells, **kwargs)
    assert not path.exists()


def test_unknown_image_option_is_refused(tmp_path):
    with pytest.raises(TypeError, match="unknown image options"):
        write_plate(str(tmp_path / "x.zarr"), {"A/1": [_field(0)]}, chunk=(1, 2, 3))
    assert not (tmp_path / "x.zarr").exists()


def test_existing_plate_needs_overwrite(plate_path):
    path, _ = plate_path
    with pytest.raises(zarrbolt.errors.ContainsGroupError):
        write_plate(path, {"A/1": [_field(0)]}, axes="zyx")
    plate = write_plate(path, {"C/4": [_field(0)]}, axes="zyx", levels=1, overwrite=True)
    assert list(plate) == ["C/4"] and "B" not in zarrbolt.open_group(path, mode="r")


def _v04_plate(tmp_path, plate=None, well=None):
    """A hand-made NGFF 0.4 plate on Zarr v2: one well A/1 with one 2-d field."""
    path = str(tmp_path / "v04.zarr")
    root = zarrbolt.open_group(path, mode="w", zarr_format=2)
    field = root.create_group("A").create_group("1").create_group("0")
    field.create_array("0", shape=(10, 12), dtype="uint8", chunks=(5, 5))[...] = 7
    field.update_attributes({"multiscales": [{"version": "0.4", "axes": [{"name": "y", "type": "space"},
                                                                        {"name": "x", "type": "space"}],
                                              "datasets": [{"path": "0", "coordinateTransformations": [
                                                  {"type": "scale", "scale": [1.0, 1.0]}]}]}]})
    root["A/1"].update_attributes({"well": well or {"version": "0.4", "images": [{"path": "0", "acquisition": 0}]}})
    root.update_attributes({"plate": plate or {
        "version": "0.4", "name": "hand", "rows": [{"name": "A"}], "columns": [{"name": "1"}, {"name": "2"}],
        "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0}], "acquisitions": [{"id": 0}], "field_count": 1}})
    return path


def test_reads_ngff_04_on_zarr_v2(tmp_path):
    plate = open_plate(_v04_plate(tmp_path))
    assert plate.version == "0.4" and plate.group.metadata.zarr_format == 2
    assert plate.columns == ("1", "2") and list(plate) == ["A/1"]
    assert plate["A/1"].version == "0.4" and plate["A/1"].acquisitions == {0: ("0",)}
    np.testing.assert_array_equal(plate["A/1"][0].levels[0][...], 7)


def test_reads_wells_without_indices(tmp_path):
    """NGFF 0.3 plates have no rowIndex/columnIndex: the place comes from the names."""
    plate = {"version": "0.3", "rows": [{"name": "A"}, {"name": "B"}], "columns": [{"name": "1"}],
             "wells": [{"path": "A/1"}]}
    p = open_plate(_v04_plate(tmp_path, plate=plate))
    assert p.version == "0.3" and p.position("A/1").row_index == 0


_GOOD = {"rows": [{"name": "A"}], "columns": [{"name": "1"}], "wells": [{"path": "A/1", "rowIndex": 0,
                                                                          "columnIndex": 0}]}


@pytest.mark.parametrize("change, match", [
    ({"rows": []}, "'rows' must be a non-empty list"),
    ({"rows": [{"name": "A"}, {"name": "A"}]}, "unique"),
    ({"columns": [{"name": "a/b"}]}, "without '/'"),
    ({"wells": "A/1"}, "'wells' must be a list"),
    ({"wells": [{"path": "A1"}]}, "'<row>/<column>'"),
    ({"wells": [{"path": "B/1"}]}, "not in the plate's rows"),
    ({"wells": [{"path": "A/1", "rowIndex": 1}]}, "rowIndex 1 does not match"),
    ({"wells": [{"path": "A/1", "columnIndex": "0"}]}, "columnIndex '0' does not match"),
    ({"wells": [{"path": "A/1"}, {"path": "A/1"}]}, "unique"),
    ({"acquisitions": [{"name": "x"}]}, "non-negative integer 'id'"),
    ({"acquisitions": [{"id": 0, "starttime": "today"}]}, "starttime must be an integer"),
    ({"acquisitions": [{"id": 0}, {"id": 0}]}, "unique"),
    ({"field_count": 0}, "field_count"),
    ({"name": 3}, "'name' must be a string"),
    ({"version": "0.9"}, "unsupported plate version"),
])
def test_bad_plate_metadata(tmp_path, change, match):
    path = _v04_plate(tmp_path, plate={**_GOOD, **change})
    with pytest.raises(OmeMetadataError, match=match):
        open_plate(path)
    summary = plate_summary(zarrbolt.open_group(path, mode="r"))
    assert summary["kind"] == "plate" and match.split()[0].strip("'\\") in summary["error"]


@pytest.mark.parametrize("well, match", [
    ({"images": "0"}, "'images' must be a list"),
    ({"images": [{"acquisition": 0}]}, "non-empty 'path'"),
    ({"images": [{"path": "0", "acquisition": "a"}]}, "acquisition must be an integer"),
    ({"images": [{"path": "0"}, {"path": "0"}]}, "unique"),
])
def test_bad_well_metadata(tmp_path, well, match):
    plate = open_plate(_v04_plate(tmp_path, well=well))
    with pytest.raises(OmeMetadataError, match=match):
        plate["A/1"]
    s = plate_summary(plate.group)
    assert s["layout"] == [[None, None]] and match.split()[0].strip("'") in s["problems"][0]


def test_listed_well_or_field_missing(tmp_path):
    path = _v04_plate(tmp_path, well={"images": [{"path": "0"}, {"path": "9"}]})
    plate = open_plate(path)
    with pytest.raises(OmeMetadataError, match="field '9' is listed"):
        plate["A/1"][1]
    path = _v04_plate(tmp_path, plate={**_GOOD, "columns": [{"name": "1"}, {"name": "2"}],
                                        "wells": [{"path": "A/2"}]})
    with pytest.raises(OmeMetadataError, match="well 'A/2' is listed"):
        open_plate(path)["A/2"]


def test_not_a_plate(tmp_path):
    g = zarrbolt.open_group(str(tmp_path / "g.zarr"), mode="w")
    with pytest.raises(OmeMetadataError, match="not a plate"):
        open_plate(g)
    with pytest.raises(OmeMetadataError, match="not a well"):
        open_well(g)
    assert plate_summary(g) is None


def test_info_plate_and_well(plate_path, capsys):
    path, _ = plate_path
    assert main(["info", path, "--json"]) == 0
    hcs = json.loads(capsys.readouterr().out)["hcs"]
    assert hcs["layout"] == [[1, 1], [None, 2]] and hcs["wells"] == 3 and hcs["fields_per_well"] == [1, 2]
    assert hcs["image"]["path"] == "A/2/0" and hcs["image"]["levels"] == 2
    assert main(["info", path]) == 0
    text = capsys.readouterr().out
    assert "OME-Zarr plate : 'p1', NGFF 0.5, 2 rows x 2 columns, 3 wells, 1-2 fields per well" in text
    layout = [line.split(":", 1)[1] for line in text.splitlines()
              if line.startswith(("Layout", " " * 15 + ":"))]
    assert layout == ["    2 10", " A  1  1", " B  .  2"]
    assert main(["info", path + "/B/10"]) == 0
    assert "OME-Zarr well : NGFF 0.5, 2 fields: 0, 1" in capsys.readouterr().out
