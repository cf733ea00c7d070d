"""``zarrbolt cp`` and ``zarrbolt.copy`` on local stores: conversions, layouts, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import cli, make_v2, make_v3, volume

import zarrbolt as zb
from zarrbolt.convert.copier import SHARD_SCRATCH
from zarrbolt.errors import DestinationExistsError, InvalidValueError, MetadataError


def test_v2_to_sharded_v3_keeps_values_and_attributes(tmp_path, capsys):
    data = volume()
    make_v2(tmp_path / "v2.zarr", data, chunks=(8, 16, 16))
    rc, out, err = cli("cp", tmp_path / "v2.zarr", tmp_path / "v3.zarr", "--format", "3", "--shards", "16,32,64",
                       capsys=capsys)
    assert rc == 0, err
    assert "copied 1 array(s)" in out and "6 shard(s)/chunk(s) stored" in out
    assert err == ""  # not a terminal: no progress bar
    a = zb.open_array(str(tmp_path / "v3.zarr"), mode="r")
    assert a.metadata.zarr_format == 3 and a.shards == (16, 32, 64) and a.chunks == (8, 16, 16)
    inner = a.metadata.codecs[0].to_json()["configuration"]["codecs"]
    assert inner[-1]["name"] == "blosc" and inner[-1]["configuration"]["cname"] == "lz4"
    assert dict(a.attrs) == {"origin": "v2"}
    np.testing.assert_array_equal(a[...], data)


def test_rechunk_recompress_unshard_and_back_to_v2(tmp_path, capsys):
    data = volume()
    make_v3(tmp_path / "s.zarr", data, chunks=(8, 16, 16), shards=(16, 32, 64))
    assert cli("cp", tmp_path / "s.zarr", tmp_path / "u.zarr", "--shards", "none", "--chunks", "20,32,32",
               "--compressor", "zstd:5")[0] == 0
    u = zb.open_array(str(tmp_path / "u.zarr"), mode="r")
    assert u.shards is None and u.chunks == (20, 32, 32)
    assert [c.to_json() for c in u.compressors] == [{"name": "zstd", "configuration": {"level": 5, "checksum": False}}]
    assert u.metadata.dimension_names == ("z", "y", "x")
    np.testing.assert_array_equal(u[...], data)
    codec = json.dumps({"name": "gzip", "configuration": {"level": 1}})
    assert cli("cp", tmp_path / "u.zarr", tmp_path / "v2.zarr", "--format", "2", "--codec", codec)[0] == 0
    v2 = zb.open_array(str(tmp_path / "v2.zarr"), mode="r")
    assert v2.metadata.zarr_format == 2 and v2.metadata.to_json()["compressor"] == {"id": "gzip", "level": 1}
    np.testing.assert_array_equal(v2[...], data)
    assert dict(v2.attrs) == {"scale": [1.0, 0.5, 0.5]}


def test_dtype_conversion_checked(tmp_path, capsys):
    data = volume()
    make_v3(tmp_path / "s.zarr", data)
    assert cli("cp", tmp_path / "s.zarr", tmp_path / "f.zarr", "--dtype", "float32")[0] == 0
    f = zb.open_array(str(tmp_path / "f.zarr"), mode="r")
    assert f.dtype == np.float32 and f.compressors[0].to_json()["configuration"]["typesize"] == 4
    np.testing.assert_array_equal(f[...], data.astype(np.float32))
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "b.zarr", "--dtype", "uint8", capsys=capsys)
    assert rc == 1 and "do not fit uint8" in err
    assert not (tmp_path / "b.zarr" / "zarr.json").exists()  # nothing left that looks complete
    small = zb.create_array(str(tmp_path / "small.zarr"), shape=(10,), dtype="float64", chunks=(5,))
    small[...] = np.linspace(0, 200, 10)
    zb.copy(str(tmp_path / "small.zarr"), str(tmp_path / "small8.zarr"), dtype="uint8")
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "small8.zarr"))[...],
                                  np.rint(np.linspace(0, 200, 10)).astype(np.uint8))
    small[3] = np.nan
    with pytest.raises(InvalidValueError, match="NaN"):
        zb.copy(str(tmp_path / "small.zarr"), str(tmp_path / "nan8.zarr"), dtype="uint8")


def test_hierarchy_copy_groups_arrays_attributes(tmp_path):
    root = zb.create_group(str(tmp_path / "h.zarr"), attributes={"multiscales": [{"version": "0.5"}]})
    data = volume()
    root.create_group("labels", attributes={"labels": ["cells"]})
    for name, d in (("0", data), ("1", data[::2, ::2, ::2].copy()), ("labels/cells", (data > 300).astype("uint8"))):
        a = root.create_array(name, shape=d.shape, dtype=d.dtype, chunks=(8, 16, 16), attributes={"n": name})
        a[...] = d
    rep = zb.copy(str(tmp_path / "h.zarr"), str(tmp_path / "o.zarr"), shards=(16, 32, 32))
    assert isinstance(rep, zb.CopyReport)
    assert sorted(rep.arrays) == ["0", "1", "labels/cells"] and sorted(rep.groups) == ["", "labels"]
    out = zb.open_group(str(tmp_path / "o.zarr"), mode="r")
    assert dict(out.attrs) == {"multiscales": [{"version": "0.5"}]}
    assert dict(out["labels"].attrs) == {"labels": ["cells"]}
    assert out["0"].shards == (16, 32, 32) and dict(out["1"].attrs) == {"n": "1"}
    np.testing.assert_array_equal(out["labels/cells"][...], (data > 300).astype("uint8"))


def test_destination_exists_refused_unless_overwrite(tmp_path, capsys):
    data = volume()
    make_v3(tmp_path / "s.zarr", data)
    make_v3(tmp_path / "d.zarr", data[:, :10, :10].copy())
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", capsys=capsys)
    assert rc == 1 and "already holds a node" in err and "--overwrite" in err
    with pytest.raises(DestinationExistsError):
        zb.copy_array(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr"))
    assert cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--overwrite")[0] == 0
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "d.zarr"))[...], data)


def test_incompatible_chunks_and_shards_list_valid_choices(tmp_path, capsys):
    make_v3(tmp_path / "s.zarr", volume(), chunks=(8, 16, 16), shards=(16, 32, 64))
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--chunks", "10,16,16", capsys=capsys)
    assert rc == 1
    assert "do not divide shards (16, 32, 64)" in err and "valid chunk sizes for shard 16: 1, 2, 4, 8, 16" in err
    assert "valid shard sizes for chunk 10: 10, 20, 30" in err
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--format", "2", "--shards", "16",
                     capsys=capsys)
    assert rc == 1 and "Zarr v2 has no sharding" in err
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--compressor", "zip", capsys=capsys)
    assert rc == 1 and "valid: zstd, gzip, blosc-lz4" in err
    rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--chunks", "8,8", capsys=capsys)
    assert rc == 1 and "has 2 dimensions; the array has 3" in err
    with pytest.raises(MetadataError):
        zb.copy(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr"), codecs="{not json")
    assert not (tmp_path / "d.zarr").exists()


def test_blocks_respect_max_memory(tmp_path):
    data = volume((64, 64, 64))
    make_v3(tmp_path / "s.zarr", data, chunks=(16, 16, 16))
    unit = 16 * 64 * 64 * 2  # one destination shard of (16, 64, 64) uint16
    # the model of zarrbolt.convert.copier: the block, per shard in flight 3.5 shards of scratch,
    # and per thread (2 here) two source chunks (16^3 uint16)
    per_shard = int(SHARD_SCRATCH * unit)
    reader = 2 * 2 * 16**3 * 2
    src = str(tmp_path / "s.zarr")
    rep = zb.copy_array(src, str(tmp_path / "d.zarr"), shards=(16, 64, 64), max_memory=reader + unit + per_shard,
                        threads=2)
    assert rep.max_block_bytes == unit and rep.units_written == 4 and not rep.notes
    rep = zb.copy_array(src, str(tmp_path / "e.zarr"), shards=(16, 64, 64),
                        max_memory=reader + 2 * (unit + per_shard), threads=2)
    assert rep.max_block_bytes == 2 * unit
    rep = zb.copy_array(src, str(tmp_path / "f.zarr"), shards=(64, 64, 64), max_memory=1000, threads=2)
    assert rep.max_block_bytes == data.nbytes and "needs about 2.3 MiB" in rep.notes[0]
    assert "max_memory 1000 B" in rep.notes[0]
    for name in "def":
        np.testing.assert_array_equal(zb.open_array(str(tmp_path / f"{name}.zarr"))[...], data)


def test_progress_bar_with_tqdm(tmp_path, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    from zarrbolt.cli import _common
    from zarrbolt.cli._common import Bar

    monkeypatch.setattr(_common, "_is_terminal", lambda: True)  # tqdm draws on terminals only

    make_v3(tmp_path / "s.zarr", volume(), chunks=(8, 16, 16))
    bar = Bar("shards", enabled=True)
    zb.copy(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr"), shards=(8, 32, 64), progress=bar)
    err = capsys.readouterr().err
    assert "shards 10/10]" in err and "100%" in err and "320k/320k" in err and "B/s" in err


def test_works_without_tqdm(tmp_path, capsys, monkeypatch):
    import sys

    from zarrbolt.cli._common import Bar

    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    make_v3(tmp_path / "s.zarr", volume(), chunks=(8, 16, 16))
    bar = Bar("shards", enabled=True)
    rep = zb.copy(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr"), progress=bar)
    # not a terminal (capsys): the plain progress line, once a second and at the end
    assert rep.units_written == 80 and capsys.readouterr().err.splitlines()[-1].startswith("/: 100% ")


def test_shards_on_a_v2_source_mean_v3(tmp_path):
    data = volume()
    make_v2(tmp_path / "v2.zarr", data, chunks=(8, 16, 16))
    rep = zb.copy(str(tmp_path / "v2.zarr"), str(tmp_path / "s.zarr"), shards=(16, 32, 64))
    a = zb.open_array(str(tmp_path / "s.zarr"), mode="r")
    assert rep.units_written == 6 and a.metadata.zarr_format == 3 and a.shards == (16, 32, 64)
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(MetadataError, match="Zarr v2 has no sharding"):
        zb.copy(str(tmp_path / "v2.zarr"), str(tmp_path / "t.zarr"), shards=(16, 32, 64), zarr_format=2)


def test_dtype_change_of_a_v2_blosc_array(tmp_path):
    data = (volume() // 16).astype("uint16")
    make_v2(tmp_path / "v2.zarr", data, chunks=(8, 16, 16))
    zb.copy(str(tmp_path / "v2.zarr"), str(tmp_path / "u8.zarr"), dtype="uint8")
    out = zb.open_array(str(tmp_path / "u8.zarr"), mode="r")
    assert out.metadata.zarr_format == 2 and out.dtype == np.uint8
    np.testing.assert_array_equal(out[...], data.astype(np.uint8))


def test_destination_overlapping_the_source_is_refused(tmp_path, capsys):
    data = volume((16, 32, 32))
    make_v3(tmp_path / "s.zarr", data)
    for dst in ("s.zarr", "s.zarr/inner", "."):
        rc, _, err = cli("cp", tmp_path / "s.zarr", tmp_path / dst, "--overwrite", capsys=capsys)
        assert rc == 1 and "is the source" in err
    with pytest.raises(DestinationExistsError):
        zb.copy_array(f"file://{tmp_path / 's.zarr'}", str(tmp_path / "s.zarr"), overwrite=True)
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "s.zarr"), mode="r")[...], data)


def _v2_hierarchy(root):
    g = zb.open_group(str(root), mode="w", zarr_format=2)
    g.attrs["experiment"] = "e1"
    raw = g.create_group("raw")
    raw.attrs["kind"] = "raw"
    vol = raw.create_array("vol", shape=(32, 64, 64), chunks=(16, 32, 32), dtype="uint16")
    vol[:16] = volume((16, 64, 64))   # the second half of the array stays fill
    vol.attrs["units"] = "um"
    return g


@pytest.mark.parametrize("flags", [["--shards", "16,64,64", "--compressor", "blosc-zstd:3"], ["--shards", "32,64,64"],
                                   ["--format", "3"]])
def test_a_v2_hierarchy_becomes_pure_v3_with_its_attributes(tmp_path, capsys, flags):
    _v2_hierarchy(tmp_path / "exp_v2.zarr")
    dst = tmp_path / "out" / "exp_v3.zarr"
    rc, out, err = cli("cp", tmp_path / "exp_v2.zarr", dst, *flags, capsys=capsys)
    assert rc == 0, err
    names = {p.name for p in dst.rglob("*") if p.is_file()}
    assert not names & {".zgroup", ".zattrs", ".zarray", ".zmetadata"}
    for doc in dst.rglob("zarr.json"):
        assert json.loads(doc.read_text())["zarr_format"] == 3
    assert json.loads((dst / "zarr.json").read_text())["attributes"] == {"experiment": "e1"}
    assert json.loads((dst / "raw" / "zarr.json").read_text())["attributes"] == {"kind": "raw"}
    g = zb.open_group(str(dst), mode="r")
    assert g.metadata.zarr_format == 3 and dict(g["raw"].attrs) == {"kind": "raw"}
    np.testing.assert_array_equal(g["raw/vol"][:16], volume((16, 64, 64)))
    assert dict(g["raw/vol"].attrs) == {"units": "um"}
    from zarrbolt.fsck import fsck

    assert fsck(dst).ok


def test_the_count_tells_stored_from_left_out_as_fill(tmp_path, capsys):
    _v2_hierarchy(tmp_path / "exp_v2.zarr")
    rc, out, err = cli("cp", tmp_path / "exp_v2.zarr", tmp_path / "v3.zarr", "--shards", "16,64,64", "--json",
                       capsys=capsys)
    assert rc == 0, err
    rep = json.loads(out)
    # 2 shards: the first holds data, the second only the fill value (not stored, as zarr-python does)
    assert rep["units_written"] == 2 and rep["units_stored"] == 1 and rep["units_fill"] == 1
    assert sorted(p.name for p in (tmp_path / "v3.zarr" / "raw" / "vol" / "c").iterdir()) == ["0"]
    rc, out, err = cli("cp", tmp_path / "exp_v2.zarr", tmp_path / "v3b.zarr", "--shards", "16,64,64", capsys=capsys)
    assert "1 shard(s)/chunk(s) stored, 1 left out as all fill value" in out


def test_a_v2_hierarchy_copied_as_v2_stays_v2(tmp_path, capsys):
    _v2_hierarchy(tmp_path / "exp_v2.zarr")
    rc, out, err = cli("cp", tmp_path / "exp_v2.zarr", tmp_path / "copy.zarr", "--compressor", "zstd:1", capsys=capsys)
    assert rc == 0, err
    assert not list((tmp_path / "copy.zarr").rglob("zarr.json"))
    assert zb.open_group(str(tmp_path / "copy.zarr"), mode="r").metadata.zarr_format == 2
