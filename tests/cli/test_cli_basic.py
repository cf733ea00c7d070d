"""The command line's commands, help, info, tree, bench and verify on local data."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from cli_helpers import cli, cli_subprocess, make_v2, make_v3, volume

import zarrbolt as zb
from zarrbolt.cli import COMMANDS, build_parser


def test_registry_and_help(capsys):
    names = [n for n, _ in COMMANDS]
    assert names[:9] == ["info", "tree", "cp", "pyramid", "fsck", "bench", "verify", "versions", "demo"]
    help_text = build_parser().format_help()
    for n in names:
        assert n in help_text
    rc, out, _ = cli(capsys=capsys)
    assert rc == 0 and "COMMAND" in out


def test_python_dash_m_and_versions():
    r = cli_subprocess("versions")
    assert r.returncode == 0 and "zarrbolt" in r.stdout and "c-blosc" in r.stdout
    r = cli_subprocess("--version")
    assert r.returncode == 0 and zb.__version__ in r.stdout


def test_info_sharded_v3(tmp_path, capsys):
    data = volume()
    make_v3(tmp_path / "a.zarr", data, chunks=(8, 16, 16), shards=(16, 32, 64))
    rc, out, _ = cli("info", tmp_path / "a.zarr", "--json", capsys=capsys)
    assert rc == 0
    info = json.loads(out)
    assert info["zarr_format"] == 3 and info["shape"] == [40, 64, 64] and info["dtype"] == "uint16"
    assert info["chunks"] == [8, 16, 16] and info["shards"] == [16, 32, 64] and info["chunks_per_shard"] == 16
    assert info["shards_stored"] == info["shards_total"] == 3 * 2 * 1
    assert info["codecs"][0]["name"] == "sharding_indexed"
    assert info["attributes"] == {"scale": [1.0, 0.5, 0.5]} and info["dimension_names"] == ["z", "y", "x"]
    assert info["bytes"] == data.nbytes and 1 < info["ratio"] < 10
    rc, out, _ = cli("info", tmp_path / "a.zarr", capsys=capsys)
    assert rc == 0
    assert "Shard shape" in out and "(16, 32, 64) (16 chunks per shard)" in out and re.search(r"Shards stored +: 6 / 6", out)
    assert "sharding_indexed(inner [bytes(endian=little), blosc(" in out


def test_info_v2_and_group(tmp_path, capsys):
    data = volume((20, 32, 32))
    g = zb.create_group(str(tmp_path / "g.zarr"), attributes={"name": "sample"})
    make_v2(tmp_path / "v2.zarr", data)
    rc, out, _ = cli("info", tmp_path / "v2.zarr", "--json", capsys=capsys)
    info = json.loads(out)
    assert info["zarr_format"] == 2 and info["codecs"]["compressor"]["id"] == "blosc"
    assert info["chunks_stored"] == 2 and info["fill_value"] == 0
    g.create_array("raw", shape=(4, 4), dtype="float32", chunks=(2, 2))
    rc, out, _ = cli("info", tmp_path / "g.zarr", capsys=capsys)
    assert rc == 0 and "Members" in out and "raw" in out and '"name": "sample"' in out


def test_tree_tolerates_nodes_it_cannot_open(tmp_path, capsys):
    root = zb.create_group(str(tmp_path / "h.zarr"))
    sub = root.create_group("labels")
    sub.create_array("cells", shape=(10, 10), dtype="uint32", chunks=(5, 5), shards=(10, 10))
    root.create_array("image", shape=(3, 8, 8), dtype="uint16", chunks=(1, 8, 8))
    bad = tmp_path / "h.zarr" / "broken"
    bad.mkdir()
    (bad / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}, {"name": "no-such-codec"}]}))
    rc, out, _ = cli("tree", tmp_path / "h.zarr", capsys=capsys)
    assert rc == 0
    assert "broken cannot open" in out and "no-such-codec" in out
    assert "image (3, 8, 8) uint16 chunks (1, 8, 8) (v3)" in out
    assert "cells (10, 10) uint32 chunks (5, 5) shards (10, 10)" in out
    assert "├── " in out and "└── " in out
    rc, out, _ = cli("tree", tmp_path / "h.zarr", "--level", "1", capsys=capsys)
    assert rc == 0 and "cells" not in out and "labels" in out


def test_missing_path_is_a_clean_error(tmp_path, capsys):
    rc, _, err = cli("info", tmp_path / "nothing.zarr", capsys=capsys)
    assert rc == 1 and "zarrbolt info: error:" in err


def test_a_missing_path_a_file_and_an_empty_directory_are_told_apart(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not zarr")
    (tmp_path / "empty.zarr").mkdir()
    cases = {"nothing.zarr": "does not exist", "notes.txt": "is a file, not a Zarr store",
             "empty.zarr": "has no zarr.json, .zarray or .zgroup"}
    for name, words in cases.items():
        for cmd in (["info"], ["tree"], ["cp", "--overwrite"], ["verify"]):
            args = [cmd[0], tmp_path / name, *([tmp_path / "out.zarr"] if cmd[0] in ("cp", "verify") else []), *cmd[1:]]
            rc, _, err = cli(*args, capsys=capsys)
            assert rc == 1 and err.strip() == f"zarrbolt {cmd[0]}: error: '{tmp_path / name}' {words}", err
    with pytest.raises(zb.errors.ArrayNotFoundError, match=r"has no zarr.json or \.zarray$"):
        zb.open_array(str(tmp_path / "empty.zarr"), mode="r")
    with pytest.raises(zb.errors.GroupNotFoundError, match=r"has no \.zgroup$"):
        zb.open_group(str(tmp_path / "empty.zarr"), mode="r", zarr_format=2)


@pytest.mark.parametrize("cmd", [name for name, _ in COMMANDS])
def test_help_is_plain_text(cmd, capsys):
    """No reStructuredText or Markdown markup of the docstrings in what --help prints."""
    with pytest.raises(SystemExit):
        cli(cmd, "--help")
    out = capsys.readouterr().out
    assert not re.search(r"``|:(func|class|meth|mod|data|attr):", out), out


def test_bench_reports_all_three(tmp_path, capsys):
    make_v3(tmp_path / "a.zarr", volume(), chunks=(8, 16, 16), shards=(16, 32, 64))
    rc, out, _ = cli("bench", tmp_path / "a.zarr", "--json", "--repeat", "1", "--threads", "2",
                     "--max-memory", "100K", capsys=capsys)
    assert rc == 0
    r = json.loads(out)
    assert r["threads"] == 2 and r["full"]["pieces"] > 1 and r["full"]["GBps"] > 0
    assert r["planes"]["count"] == 8 and r["blocks"]["shape"] == [8, 16, 16]
    rc, out, _ = cli("bench", tmp_path / "a.zarr", "--repeat", "1", capsys=capsys)
    assert rc == 0 and "full read" in out and "random blocks" in out


def test_verify_equal_and_different(tmp_path, capsys):
    data = volume()
    make_v3(tmp_path / "a.zarr", data, chunks=(8, 16, 16), shards=(16, 32, 64))
    b = make_v2(tmp_path / "b.zarr", data)
    rc, out, _ = cli("verify", tmp_path / "a.zarr", tmp_path / "b.zarr", capsys=capsys)
    assert rc == 0 and "EQUAL" in out
    b[33, 5, 7] = int(data[33, 5, 7]) + 1
    rc, out, err = cli("verify", tmp_path / "a.zarr", tmp_path / "b.zarr", capsys=capsys)
    assert rc == 1 and "DIFFERENT" in out and "first at (33, 5, 7)" in err
    f = zb.create_array(str(tmp_path / "f.zarr"), shape=data.shape, dtype="float32", chunks=(16, 32, 32))
    f[...] = data.astype(np.float32)
    rc, _, err = cli("verify", tmp_path / "a.zarr", tmp_path / "f.zarr", capsys=capsys)
    assert rc == 1 and "data types differ" in err
    rc, out, _ = cli("verify", tmp_path / "a.zarr", tmp_path / "f.zarr", "--values-only", capsys=capsys)
    assert rc == 0


@pytest.mark.parametrize("cmd", ["info", "tree", "cp", "pyramid", "fsck", "bench", "verify", "versions", "demo",
                                 "migrate"])
def test_every_command_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        cli(cmd, "--help")
    assert e.value.code == 0
    assert "usage: zarrbolt " + cmd in capsys.readouterr().out


def test_console_script_entry_point(capsys):
    """pyproject's ``zarrbolt`` script names a function that runs this command line."""
    import importlib
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("no source tree")
    target = tomllib.loads(pyproject.read_text())["project"]["scripts"]["zarrbolt"]
    module, func = target.split(":")
    entry = getattr(importlib.import_module(module), func)
    assert entry(["versions"]) == 0
    assert "zarrbolt" in capsys.readouterr().out


def test_verify_hierarchies_and_cp_json(tmp_path, capsys):
    root = zb.create_group(str(tmp_path / "h.zarr"))
    data = volume((16, 32, 32))
    for name in ("a", "sub/b"):
        arr = root.create_array(name, shape=data.shape, dtype=data.dtype, chunks=(8, 16, 16))
        arr[...] = data
    rc, out, _ = cli("cp", tmp_path / "h.zarr", tmp_path / "c.zarr", "--shards", "16,32,32", "--json", capsys=capsys)
    assert rc == 0
    rep = json.loads(out)
    assert sorted(rep["arrays"]) == ["a", "sub/b"] and rep["units_written"] == 2 and rep["interrupted"] is False
    rc, out, _ = cli("verify", tmp_path / "h.zarr", tmp_path / "c.zarr", capsys=capsys)
    assert rc == 0 and "EQUAL: 2 array(s)" in out
    zb.open_group(str(tmp_path / "c.zarr"))["sub"].create_array("extra", shape=(2,), dtype="uint8")
    rc, _, err = cli("verify", tmp_path / "h.zarr", tmp_path / "c.zarr", capsys=capsys)
    assert rc == 1 and "/sub/extra: only in the second" in err
    rc, _, err = cli("verify", tmp_path / "h.zarr", tmp_path / "c.zarr" / "a", capsys=capsys)
    assert rc == 1 and "one is an array, the other a group" in err


def test_version_lists_every_linked_library():
    r = cli_subprocess("--version")
    assert r.returncode == 0
    names = {line.split(":")[0].strip() for line in r.stdout.splitlines()}
    assert {"zstd", "libdeflate", "lz4", "c-blosc2 (decode)", "c-blosc (encode)"} <= names
