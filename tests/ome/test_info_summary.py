"""``zarrbolt info`` of an OME-Zarr group: its multiscales as a readable summary (levels, shapes,
scales, axes), from zarrbolt.ome.summary; the whole metadata stays in ``--json``."""

from __future__ import annotations

import json

import numpy as np

import zarrbolt
from zarrbolt.cli import main
from zarrbolt.ome import write_image
from zarrbolt.ome.summary import multiscales_rows, multiscales_summary


def test_info_sums_up_the_multiscales(tmp_path, capsys):
    vol = np.arange(16 * 128 * 128, dtype=np.uint16).reshape(16, 128, 128)
    write_image(str(tmp_path / "img.ome.zarr"), vol, axes="zyx", units="micrometer", scale=(2.0, 0.5, 0.5),
                levels=3, chunks=(8, 32, 32), name="cells")
    group = zarrbolt.open_group(str(tmp_path / "img.ome.zarr"), mode="r")
    summary = multiscales_summary(group)
    assert summary is not None and summary["version"] == "0.5"
    levels = summary["images"][0]["levels"]
    assert [lv["shape"] for lv in levels] == [[16, 128, 128], [8, 64, 64], [4, 32, 32]]
    assert [lv["scale"] for lv in levels] == [[2, 0.5, 0.5], [4, 1, 1], [8, 2, 2]]
    assert main(["info", str(tmp_path / "img.ome.zarr")]) == 0
    out = capsys.readouterr().out
    assert "OME-Zarr image : multiscale 'cells', NGFF 0.5, 3 level(s)" in out
    assert "z (space, micrometer), y (space, micrometer), x (space, micrometer)" in out
    assert "Level 1" in out and "shape (8, 64, 64) uint16, scale (4, 1, 1)" in out
    assert '"multiscales"' not in out   # no JSON dump of the metadata
    assert max(len(line) for line in out.splitlines()) < 120
    assert main(["info", str(tmp_path / "img.ome.zarr"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["attributes"]["ome"]["multiscales"] and doc["ome_multiscales"] == summary


def test_groups_without_multiscales_and_bad_metadata(tmp_path):
    g = zarrbolt.open_group(str(tmp_path / "g.zarr"), mode="w")
    assert multiscales_summary(g) is None
    g.attrs["ome"] = {"version": "0.5", "multiscales": [{"axes": "nope"}]}
    bad = multiscales_summary(g)
    assert bad is not None and "error" in bad
    assert multiscales_rows(bad)[0][0] == "OME-Zarr"
