"""Every command on remote stores: S3 (moto_server on loopback, through obstore), HTTP (a real
Range-capable server, read-only) and fsspec's memory://; and clean interpreter exits after S3
writes (obstore's tokio threads)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from cli_helpers import cli, cli_subprocess, make_v2, make_v3, volume

import zarrbolt as zb

pytest.importorskip("obstore")


def _opts(moto) -> str:
    return json.dumps(moto.storage_options())


def test_s3_round_trip_every_command(tmp_path, moto_server, capsys):
    data = volume()
    make_v2(tmp_path / "v2.zarr", data, chunks=(8, 16, 16))
    bucket = moto_server.make_bucket()
    url = f"s3://{bucket}/vol.zarr"
    opts = _opts(moto_server)
    rc, out, err = cli("cp", tmp_path / "v2.zarr", url, "--format", "3", "--shards", "16,32,64",
                       "--dst-storage-options", opts, capsys=capsys)
    assert rc == 0, err
    rc, out, err = cli("info", url, "--json", "--storage-options", opts, capsys=capsys)
    assert rc == 0, err
    info = json.loads(out)
    assert info["shards"] == [16, 32, 64] and info["shards_stored"] == 6 and info["attributes"] == {"origin": "v2"}
    rc, out, _ = cli("tree", f"s3://{bucket}", "--storage-options", opts, capsys=capsys)
    assert rc == 0 and "vol.zarr (40, 64, 64) uint16" in out and "no group document" in out
    rc, out, _ = cli("bench", url, "--repeat", "1", "--json", "--storage-options", opts, capsys=capsys)
    assert rc == 0 and json.loads(out)["full"]["GBps"] > 0
    rc, out, _ = cli("verify", tmp_path / "v2.zarr", url, "--dst-storage-options", opts, capsys=capsys)
    assert rc == 0 and "EQUAL" in out
    # and back, re-chunked, from S3 to a local v2 array
    rc, _, err = cli("cp", url, tmp_path / "back.zarr", "--format", "2", "--chunks", "20,32,32",
                     "--storage-options", opts, capsys=capsys)
    assert rc == 0, err
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "back.zarr"), mode="r")[...], data)
    # the destination exists now
    rc, _, err = cli("cp", tmp_path / "v2.zarr", url, "--dst-storage-options", opts, capsys=capsys)
    assert rc == 1 and "already holds" in err


def test_s3_resume_reads_shard_indexes(tmp_path, moto_server):
    from test_cp_failures import StopAfter

    data = volume((64, 64, 64))
    make_v3(tmp_path / "s.zarr", data, chunks=(16, 16, 16))
    url = f"s3://{moto_server.make_bucket()}/d.zarr"
    so = moto_server.storage_options()
    unit = 16 * 64 * 64 * 2
    with pytest.raises(KeyboardInterrupt):
        zb.copy(str(tmp_path / "s.zarr"), url, shards=(16, 64, 64), max_memory=3 * unit, progress=StopAfter(3),
                dst_storage_options=so)
    store, _ = zb.storage.make_store(url, storage_options=so)
    keys = sorted(store.list_prefix(""))
    assert "zarr.json" not in keys and len(keys) == 3
    store.set(keys[0], bytes(store.get(keys[0]))[:-7])   # damage one shard's index
    rep = zb.copy(str(tmp_path / "s.zarr"), url, shards=(16, 64, 64), resume=True, dst_storage_options=so)
    assert rep.units_skipped == 2 and rep.units_written == 2
    np.testing.assert_array_equal(zb.open_array(url, mode="r", storage_options=so)[...], data)


def test_http_source_is_read_only(tmp_path, http_server, capsys):
    data = volume()
    make_v3(tmp_path / "a.zarr", data, chunks=(8, 16, 16), shards=(16, 32, 64))
    shutil.copytree(tmp_path / "a.zarr", http_server.root / "a.zarr")
    url = f"{http_server.url}/a.zarr"
    rc, out, err = cli("info", url, capsys=capsys)
    assert rc == 0, err
    assert "(40, 64, 64)" in out
    rc, out, err = cli("cp", url, tmp_path / "copy.zarr", "--shards", "none", capsys=capsys)
    assert rc == 0, err
    np.testing.assert_array_equal(zb.open_array(str(tmp_path / "copy.zarr"), mode="r")[...], data)
    rc, out, _ = cli("verify", url, tmp_path / "copy.zarr", capsys=capsys)
    assert rc == 0 and "EQUAL" in out
    rc, out, _ = cli("bench", url, "--repeat", "1", "--blocks", "2", "--planes", "2", capsys=capsys)
    assert rc == 0 and "random blocks" in out
    rc, _, err = cli("cp", tmp_path / "a.zarr", f"{http_server.url}/new.zarr", capsys=capsys)
    assert rc == 1 and "read-only" in err


def test_memory_url(tmp_path):
    pytest.importorskip("fsspec")
    data = volume((16, 32, 32))
    make_v3(tmp_path / "a.zarr", data, chunks=(8, 16, 16))
    url = f"memory://zb-cli-{tmp_path.name}/x.zarr"
    rep = zb.copy(str(tmp_path / "a.zarr"), url, shards=(16, 32, 32))
    assert rep.units_written == 1
    np.testing.assert_array_equal(zb.open_array(url, mode="r")[...], data)


def test_processes_writing_to_s3_exit_cleanly(tmp_path, moto_server):
    """obstore completes requests on tokio threads that take the GIL; the exit drain makes the
    interpreter wait for them (a process used to abort at exit now and then)."""
    make_v3(tmp_path / "a.zarr", volume((16, 32, 32)), chunks=(8, 16, 16))
    bucket = moto_server.make_bucket()
    for i in range(3):
        r = cli_subprocess("cp", tmp_path / "a.zarr", f"s3://{bucket}/run{i}.zarr", "--shards", "16,32,32",
                           env=moto_server.env())
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert "Fatal Python error" not in r.stderr


def test_exit_drain_waits_for_pending_tasks():
    import asyncio

    from zarrbolt.storage import _async

    done = []

    async def slow():
        await asyncio.sleep(0.2)
        done.append(1)

    loop = _async.event_loop()
    asyncio.run_coroutine_threadsafe(slow(), loop)
    assert _async.drain_at_exit(grace=5.0) is True and done == [1]
    asyncio.run_coroutine_threadsafe(asyncio.sleep(10), loop)
    assert _async.drain_at_exit(grace=0.1) is False   # bounded
