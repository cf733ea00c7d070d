"""OME-Zarr plates (HCS) both ways between zarrbolt.ome and ome-zarr-py: plates ome-zarr-py writes
(NGFF 0.4 on Zarr v2, 0.5 on Zarr v3) read through zarrbolt.ome with their layout, acquisitions and
pixels; plates zarrbolt writes (sharded NGFF 0.5) read by ome-zarr-py's reader as the same mosaic
and validated by ome-zarr-models."""

import json

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
pytest.importorskip("ome_zarr")

from ome_zarr.format import FormatV04, FormatV05  # noqa: E402
from ome_zarr.io import parse_url  # noqa: E402
from ome_zarr.reader import Plate as OzPlate  # noqa: E402
from ome_zarr.reader import Reader  # noqa: E402
from ome_zarr.reader import Well as OzWell  # noqa: E402
from ome_zarr.writer import write_image, write_plate_metadata, write_well_metadata  # noqa: E402

import zarrbolt.ome as ome  # noqa: E402

ROWS, COLS = ["A", "B"], ["1", "2", "3"]
WELLS = ["A/1", "A/3", "B/2"]  # three of six: the mosaic has empty places
FIELD = (2, 5, 48, 40)  # c, z, y, x
ACQS = [{"id": 0, "name": "first pass", "maximumfieldcount": 2, "starttime": 1700000000},
        {"id": 1, "name": "second pass"}]


def _fields():
    rng = np.random.default_rng(7)
    out = {}
    for i, w in enumerate(WELLS):
        n = 2 if i != 2 else 1
        out[w] = [(rng.integers(0, 4000, FIELD) + 100 * (3 * i + f)).astype(np.uint16) for f in range(n)]
    return out


FIELDS = _fields()


def _write_with_ome_zarr_py(path, fmt):
    root = zarr.open_group(path, mode="w", zarr_format=3 if fmt.version == "0.5" else 2)
    write_plate_metadata(root, ROWS, COLS, WELLS, fmt=fmt, acquisitions=ACQS, name="screen", field_count=2)
    for w, fields in FIELDS.items():
        row, col = w.split("/")
        well = root.require_group(row).require_group(col)
        write_well_metadata(well, [{"path": str(f), "acquisition": f} for f in range(len(fields))], fmt=fmt)
        for f, data in enumerate(fields):
            opts = {"chunks": (1, 5, 24, 20)} if fmt.version == "0.4" else {"chunks": (1, 5, 24, 20),
                                                                            "shards": (1, 5, 48, 40)}
            write_image(data, well.require_group(str(f)), axes="czyx", fmt=fmt, scale_factors=[2],
                        storage_options=opts)


@pytest.fixture(scope="module", params=["0.4", "0.5"])
def oz_plate(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ozplate") / f"plate{request.param}.ome.zarr")
    fmt = FormatV04() if request.param == "0.4" else FormatV05()
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        _write_with_ome_zarr_py(path, fmt)
    return request.param, path


def test_zarrbolt_reads_a_plate_ome_zarr_py_wrote(oz_plate):
    version, path = oz_plate
    plate = ome.open_plate(path)
    assert plate.version == version and plate.name == "screen"
    assert plate.rows == tuple(ROWS) and plate.columns == tuple(COLS)
    assert list(plate) == WELLS and len(plate) == 3
    assert plate.field_count == 2
    assert [a.to_json() for a in plate.acquisitions] == ACQS
    assert plate.grid() == [["A/1", None, "A/3"], [None, "B/2", None]]
    assert plate.position("B/2").row_index == 1 and plate.position("B/2").column_index == 1
    for w, fields in FIELDS.items():
        well = plate[w]
        assert well.version == version
        assert len(well) == len(fields)
        assert well.acquisitions == {f: (str(f),) for f in range(len(fields))}
        for f, data in enumerate(fields):
            img = well[f]
            assert img.axis_names == ("c", "z", "y", "x") and img.version == version
            np.testing.assert_array_equal(img.levels[0][...], data)
            assert img.shapes[1] == (2, 5, 24, 20)
    assert [(w, f) for w, f, _ in plate.images()] == [("A/1", "0"), ("A/1", "1"), ("A/3", "0"), ("A/3", "1"),
                                                      ("B/2", "0")]
    assert plate["B", "2"] is plate.well("B", "2")


def test_info_summarises_a_plate_ome_zarr_py_wrote(oz_plate, capsys):
    from zarrbolt.__main__ import main

    version, path = oz_plate
    assert main(["info", path, "--json"]) == 0
    hcs = json.loads(capsys.readouterr().out)["hcs"]
    assert hcs["kind"] == "plate" and hcs["version"] == version and hcs["wells"] == 3
    assert hcs["layout"] == [[2, None, 2], [None, 1, None]]
    assert hcs["fields_per_well"] == [1, 2] and hcs["problems"] == []
    assert hcs["image"]["path"] == "A/1/0" and hcs["image"]["shape"] == list(FIELD)
    assert main(["info", path]) == 0
    text = capsys.readouterr().out
    assert f"'screen', NGFF {version}, 2 rows x 3 columns, 3 wells, 1-2 fields per well" in text
    assert "0 'first pass'; 1 'second pass'" in text


def _zarrbolt_plate(path):
    wells = {w: [{"data": d, "acquisition": f} for f, d in enumerate(fields)] for w, fields in FIELDS.items()}
    return ome.write_plate(path, wells, rows=ROWS, columns=COLS, name="screen", acquisitions=ACQS, axes="czyx",
                           chunks=(1, 5, 24, 20), levels=2, method="nearest",
                           downsample_axes=["y", "x"])


def _mosaic(level):
    """The plate as ome-zarr-py shows it: each well's first field at ``level`` in its row/column
    place, zeros where there is no well."""
    tiles = {w: f[0][:, :, ::2 ** level, ::2 ** level] for w, f in FIELDS.items()}
    shape = next(iter(tiles.values())).shape
    rows = [np.concatenate([tiles.get(f"{r}/{c}", np.zeros(shape, np.uint16)) for c in COLS], axis=-1) for r in ROWS]
    return np.concatenate(rows, axis=-2)


def test_ome_zarr_py_reads_a_plate_zarrbolt_wrote(tmp_path):
    path = str(tmp_path / "zb.ome.zarr")
    plate = _zarrbolt_plate(path)
    assert plate["A/1"][0].levels[0].shards is not None
    nodes = list(Reader(parse_url(path))())
    node = nodes[0]
    assert node.first(OzPlate) is not None
    assert len(node.data) == 2
    for level in range(2):
        np.testing.assert_array_equal(np.asarray(node.data[level]), _mosaic(level))
    meta = zarr.open_group(path, mode="r").attrs["ome"]["plate"]
    assert [w["path"] for w in meta["wells"]] == WELLS
    # a well on its own: ome-zarr-py shows its fields side by side
    well_node = next(iter(Reader(parse_url(f"{path}/A/1"))()))
    assert well_node.first(OzWell) is not None
    f0, f1 = FIELDS["A/1"]
    np.testing.assert_array_equal(np.asarray(well_node.data[0]), np.concatenate([f0, f1], axis=-1))


def test_ome_zarr_models_validates_a_plate_zarrbolt_wrote(tmp_path):
    hcs = pytest.importorskip("ome_zarr_models.v05.hcs")
    path = str(tmp_path / "zb.ome.zarr")
    _zarrbolt_plate(path)
    m = hcs.HCS.from_zarr(zarr.open_group(path, mode="r"))
    assert m.n_wells == 3
    assert [w.ome_attributes.well.images[-1].acquisition for w in m.well_groups] == [1, 1, 0]
