"""``zarrbolt.fsck``: strays, orphaned temporary files, torn chunks, bad shard indexes; the
command line face (``zarrbolt.cli.fsck``: ``add_parser`` / ``run``) as the ``zarrbolt`` command
calls it; the fsync policy of LocalStore."""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import pytest

import zarrbolt
from zarrbolt import config
from zarrbolt.errors import MetadataError, StoreError
from zarrbolt.cli.fsck import add_parser, run
from zarrbolt.fsck import FsckReport, fsck
from zarrbolt.storage import LocalStore
from zarrbolt.storage import _local_safety as safety


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zarrbolt")
    add_parser(p.add_subparsers(dest="command"))
    return p


@pytest.fixture
def hierarchy(tmp_path):
    root = tmp_path / "h"
    store = LocalStore(root)
    g = zarrbolt.open_group(store, mode="w")
    a = g.create_array("plain", shape=(16, 16), dtype="int32", chunks=(8, 8))
    a[:] = np.arange(256, dtype="int32").reshape(16, 16)
    s = g.create_array("sharded", shape=(16, 16), dtype="int32", chunks=(4, 4), shards=(8, 8))
    s[:] = 1
    v2 = zarrbolt.create_array(store, name="v2", shape=(10,), dtype="int16", chunks=(5,), zarr_format=2)
    v2[:] = 3
    return root


def test_clean_hierarchy_is_ok(hierarchy, capsys):
    rep = fsck(hierarchy)
    assert rep.ok
    assert sorted(rep.arrays) == ["plain", "sharded", "v2"] and rep.groups == ["/"]
    assert rep.chunks_checked == 4 + 4 + 2
    assert run(_parser().parse_args(["fsck", str(hierarchy)])) == 0
    assert "ok" in capsys.readouterr().out


def test_finds_every_kind_of_problem(hierarchy, capsys):
    root = hierarchy
    (root / "plain" / "c" / "0" / "1").write_bytes(b"\x28\xb5\x2f\xfd garbage")  # a torn zstd chunk
    shard = root / "sharded" / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    data[-10] ^= 0xFF  # the index (with its crc32c) at the end
    shard.write_bytes(bytes(data))
    (root / "plain" / "c" / "9").mkdir()
    (root / "plain" / "c" / "9" / "9").write_bytes(b"x")  # a key outside the grid
    (root / "plain" / "notes.txt").write_bytes(b"x")
    (root / "stray-at-root").write_bytes(b"x")
    orphan = f"{safety.TMP_PREFIX}{safety.HOST}-{2 ** 22 + 1}-0123456789abcdef"
    (root / "plain" / "c" / "0" / orphan).write_bytes(b"half")
    rep = fsck(root)
    assert not rep.ok
    assert [k for k, _ in rep.torn] == ["plain/c/0/1"]
    assert [k for k, _ in rep.bad_shards] == ["sharded/c/0/0"]
    assert sorted(rep.strays) == ["plain/c/9/9", "plain/notes.txt", "stray-at-root"]
    assert rep.temp_orphans == [f"plain/c/0/{orphan}"] and rep.removed == []
    # the command line: exit status 1, a JSON report; --clean removes the orphan only
    assert run(_parser().parse_args(["fsck", str(root), "--json"])) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["strays"] == sorted(rep.strays)
    assert run(_parser().parse_args(["fsck", str(root), "--clean"])) == 1
    assert "(removed)" in capsys.readouterr().out
    assert not (root / "plain" / "c" / "0" / orphan).exists()
    assert (root / "stray-at-root").exists()  # strays are reported, never deleted


@pytest.mark.parametrize("where", ["zarr.json", "sub/zarr.json", "plain/zarr.json", "v2/.zarray", "g2/.zgroup"])
def test_metadata_document_that_is_a_directory(hierarchy, where):
    """A node whose document is a directory is reported, not passed over as absent."""
    path = hierarchy / where
    if path.exists():
        path.unlink()
    path.mkdir(parents=True)
    report = fsck(hierarchy)
    assert not report.ok
    assert (where, "a directory where a metadata document should be") in report.unreadable
    assert "PROBLEMS FOUND" in report.summary()


def test_old_temp_of_another_host_is_an_orphan_after_older_than(hierarchy):
    name = f"{safety.TMP_PREFIX}ffffffff-1-0123456789abcdef"
    p = hierarchy / "plain" / name
    p.write_bytes(b"x")
    assert fsck(hierarchy).temp_live == [f"plain/{name}"]
    os.utime(p, (1, 1))
    rep = fsck(hierarchy, clean=True, older_than=60)
    assert rep.removed == [f"plain/{name}"] and rep.ok


def test_bad_path(tmp_path, capsys):
    with pytest.raises(StoreError):
        fsck(tmp_path / "missing")
    assert run(_parser().parse_args(["fsck", str(tmp_path / "missing")])) == 2
    assert isinstance(FsckReport(path="x").ok, bool)


def test_a_missing_path_and_a_file_are_told_apart(tmp_path, capsys):
    with pytest.raises(StoreError, match="does not exist"):
        fsck(tmp_path / "missing")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a Zarr store"):
        fsck(tmp_path / "f.txt")
    assert run(_parser().parse_args(["fsck", str(tmp_path / "f.txt")])) == 2
    assert capsys.readouterr().out.strip() == f"zarrbolt fsck: {str(tmp_path / 'f.txt')!r} is a file, not a Zarr store"


def test_a_node_with_both_formats_is_reported(hierarchy, capsys):
    (hierarchy / "plain" / ".zattrs").write_text('{"a": 1}')
    (hierarchy / ".zgroup").write_text('{"zarr_format": 2}')
    rep = fsck(hierarchy)
    assert rep.mixed == ["/", "plain"] and not rep.ok and not rep.strays
    assert "node plain has metadata of both Zarr v2 and v3" in rep.summary()


def test_an_interrupted_copy_points_to_resume(tmp_path, capsys):
    from zarrbolt.convert import Progress

    class Stop(Progress):
        def advance(self, nbytes, nunits):
            if nunits:
                raise KeyboardInterrupt

    src = zarrbolt.create_array(str(tmp_path / "s.zarr"), shape=(32, 16), chunks=(8, 16), dtype="int32")
    src[:] = 5
    g = zarrbolt.open_group(str(tmp_path / "d.zarr"), mode="w")
    g.create_group("sub")
    with pytest.raises(KeyboardInterrupt):
        zarrbolt.copy(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr" / "sub" / "img"), max_memory=8 * 16 * 4,
                      progress=Stop())
    rep = fsck(tmp_path / "d.zarr")
    assert rep.unfinished == [("/sub/img", 1)] and not rep.strays and not rep.ok
    assert run(_parser().parse_args(["fsck", str(tmp_path / "d.zarr")])) == 1
    out = capsys.readouterr().out
    assert "unfinished array /sub/img" in out and "--resume" in out and "stray" not in out


@pytest.mark.parametrize(("arg", "policy"), [(None, "none"), (False, "none"), (True, "dir"), ("file", "file")])
def test_fsync_policy(tmp_path, arg, policy):
    s = LocalStore(tmp_path / "r", fsync=arg)
    assert s.fsync_policy == policy
    s.set("a/b", b"123")
    assert s.get("a/b") == b"123"
    assert s.with_read_only().fsync_policy == policy


def test_fsync_policy_from_config(tmp_path):
    s = LocalStore(tmp_path / "r")
    with config.set(write_fsync="dir"):
        assert s.fsync_policy == "dir" and s.fsync
        a = zarrbolt.create_array(s, shape=(8,), dtype="int32", chunks=(4,))
        a[:] = 1  # (the C file batches fsync the files and the directory)
        assert (a[:] == 1).all()
    assert s.fsync_policy == "none" and not s.fsync
    assert LocalStore(tmp_path / "r", fsync="file").fsync_policy == "file"
    with pytest.raises(MetadataError):
        config.set(write_fsync="always")
    with pytest.raises(StoreError):
        LocalStore(tmp_path, fsync="always")
