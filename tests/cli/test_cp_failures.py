"""``cp`` when things go wrong: Ctrl-C, --resume, unreadable source nodes, a full disk."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import cli, cli_subprocess, make_v3, volume

import zarrbolt as zb
from zarrbolt.convert import Progress
from zarrbolt.errors import CopyError, CorruptChunkError, DestinationExistsError


class StopAfter(Progress):
    """Ctrl-C (KeyboardInterrupt) after ``n`` destination units (shards) are written, as a user
    pressing it mid-copy (progress within a unit, nunits 0, does not count)."""

    def __init__(self, n: int):
        self.n = n

    def advance(self, nbytes: int, nunits: int) -> None:
        if not nunits:
            return
        self.n -= nunits
        if self.n <= 0:
            raise KeyboardInterrupt


def _shards(root: Path) -> list[Path]:
    return sorted(p for p in (root / "c").rglob("*") if p.is_file())


def _interrupted_copy(tmp_path: Path) -> tuple[np.ndarray, Path]:
    data = volume((64, 64, 64))
    make_v3(tmp_path / "s.zarr", data, chunks=(16, 16, 16))
    unit = 16 * 64 * 64 * 2
    with pytest.raises(KeyboardInterrupt):
        zb.copy(str(tmp_path / "s.zarr"), str(tmp_path / "d.zarr"), shards=(16, 64, 64), max_memory=3 * unit,
                progress=StopAfter(2))
    return data, tmp_path / "d.zarr"


def test_ctrl_c_leaves_complete_shards_and_no_metadata(tmp_path):
    data, dst = _interrupted_copy(tmp_path)
    assert not (dst / "zarr.json").exists()          # not openable as if it were complete
    with pytest.raises(zb.errors.NodeNotFoundError):
        zb.open_array(str(dst), mode="r")
    shards = _shards(dst)
    assert len(shards) == 2 and not any(p.name.startswith(".zb-tmp") for p in dst.rglob("*"))
    # plain cp refuses the leftovers; --resume keeps the complete shards and finishes
    with pytest.raises(DestinationExistsError, match="interrupted copy"):
        zb.copy(str(tmp_path / "s.zarr"), str(dst), shards=(16, 64, 64))
    before = {p: p.stat().st_mtime_ns for p in shards}
    rep = zb.copy(str(tmp_path / "s.zarr"), str(dst), shards=(16, 64, 64), resume=True)
    assert rep.units_skipped == 2 and rep.units_written == 2
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    np.testing.assert_array_equal(zb.open_array(str(dst), mode="r")[...], data)


def test_resume_rewrites_damaged_shards(tmp_path, capsys):
    data, dst = _interrupted_copy(tmp_path)
    first = _shards(dst)[0]
    raw = first.read_bytes()
    first.write_bytes(raw[: len(raw) // 2])  # a truncated shard: its index does not validate
    rc, out, err = cli("cp", tmp_path / "s.zarr", dst, "--shards", "16,64,64", "--resume", capsys=capsys)
    assert rc == 0, err
    assert "1 already complete (resumed)" in out and "3 shard(s)/chunk(s) stored" in out
    np.testing.assert_array_equal(zb.open_array(str(dst), mode="r")[...], data)
    # a finished copy resumed again: nothing to do; another layout: refused
    rc, out, _ = cli("cp", tmp_path / "s.zarr", dst, "--shards", "16,64,64", "--resume", capsys=capsys)
    assert rc == 0 and "0 shard(s)/chunk(s) stored, 4 already complete" in out
    rc, _, err = cli("cp", tmp_path / "s.zarr", dst, "--shards", "32,64,64", "--resume", capsys=capsys)
    assert rc == 1 and "another layout" in err


def test_unreadable_source_nodes_stop_or_are_skipped(tmp_path, capsys):
    root = zb.create_group(str(tmp_path / "h.zarr"))
    data = volume((16, 32, 32))
    for name in ("good", "corrupt"):
        a = root.create_array(name, shape=data.shape, dtype=data.dtype, chunks=(8, 32, 32))
        a[...] = data
    chunk = next(p for p in (tmp_path / "h.zarr" / "corrupt" / "c").rglob("*") if p.is_file())
    chunk.write_bytes(b"\x28\xb5\x2f\xfd garbage that is not zstd")
    bad = tmp_path / "h.zarr" / "unknown"
    bad.mkdir()
    (bad / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "array", "shape": [2],
                                               "data_type": "no-such-type", "fill_value": 0,
                                               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                                               "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "bytes"}]}))
    rc, _, err = cli("cp", tmp_path / "h.zarr", tmp_path / "o.zarr", capsys=capsys)
    assert rc == 1 and "cannot read" in err
    assert not (tmp_path / "o.zarr" / "zarr.json").exists()
    rc, out, _ = cli("cp", tmp_path / "h.zarr", tmp_path / "o2.zarr", "--skip-errors", capsys=capsys)
    assert rc == 0
    assert "skipped /corrupt:" in out and "skipped /unknown:" in out and "no-such-type" in out
    out_g = zb.open_group(str(tmp_path / "o2.zarr"), mode="r")
    assert sorted(out_g.keys()) == ["good"]
    assert not (tmp_path / "o2.zarr" / "corrupt").exists()   # no partial data of the skipped array
    np.testing.assert_array_equal(out_g["good"][...], data)
    with pytest.raises(CopyError) as e:
        zb.copy(str(tmp_path / "h.zarr"), str(tmp_path / "o3.zarr"))
    assert isinstance(e.value.__cause__, (CorruptChunkError, zb.errors.MetadataError))


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_disk_full_is_a_typed_error_and_leaves_nothing_complete(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 60000, size=(64, 64, 64), dtype=np.uint16)  # incompressible: 512 KiB stored
    make_v3(tmp_path / "s.zarr", data, chunks=(16, 64, 64))
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))\n"
        "from zarrbolt.cli import main\n"
        f"sys.exit(main(['cp', {str(tmp_path / 's.zarr')!r}, {str(tmp_path / 'd.zarr')!r}, '--shards', '16,64,64']))\n"
    )
    import subprocess

    from cli_helpers import SRC

    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode == 1, r.stderr
    assert "no space left on the destination" in r.stderr and "--resume" in r.stderr
    dst = tmp_path / "d.zarr"
    assert not (dst / "zarr.json").exists()
    assert not [p for p in dst.rglob("*") if p.name.startswith(".zb-tmp")]
    for shard in _shards(dst):   # whatever was written is a complete shard
        assert shard.stat().st_size < 100_000
    rep = zb.copy(str(tmp_path / "s.zarr"), str(dst), shards=(16, 64, 64), resume=True)
    assert rep.units_skipped == len(_shards(dst)) - rep.units_written or rep.units_written == 4
    np.testing.assert_array_equal(zb.open_array(str(dst), mode="r")[...], data)


def test_cli_subprocess_interrupt_status(tmp_path):
    # a real SIGINT in a child: exit status 130, a message pointing at --resume
    import signal
    import subprocess
    import time

    from cli_helpers import SRC

    make_v3(tmp_path / "s.zarr", volume((64, 64, 64)), chunks=(16, 16, 16))
    code = (
        # (SIGINT as in a terminal, even where this test run was started with it ignored)
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import time, zarrbolt.convert.copier as c\n"
        "orig = c._read\n"
        "def slow(*a):\n"
        "    time.sleep(0.3)\n"
        "    return orig(*a)\n"
        "c._read = slow\n"
        "import sys; from zarrbolt.cli import main\n"
        "print('started', flush=True)\n"
        f"sys.exit(main(['cp', {str(tmp_path / 's.zarr')!r}, {str(tmp_path / 'd.zarr')!r}, '--shards', "
        "'16,64,64', '--max-memory', '300K']))\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=SRC))
    assert p.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while not (tmp_path / "d.zarr" / "c").exists() and time.monotonic() < deadline:  # the copy is under way
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "--resume" in err
    assert not (tmp_path / "d.zarr" / "zarr.json").exists()
    r = cli_subprocess("cp", tmp_path / "s.zarr", tmp_path / "d.zarr", "--shards", "16,64,64", "--resume")
    assert r.returncode == 0 and "already complete" in r.stdout or "4 shard(s)" in r.stdout
