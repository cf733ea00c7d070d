"""Remote store URLs: the standard AWS environment, ``storage_options`` in s3fs's and obstore's
spelling, the scheme registry, and the other libraries' store objects that ``make_store``
accepts (obstore stores, fsspec filesystems and mappers), against moto's S3 server and a
Range-honouring HTTP server on loopback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import zarrbolt
from zarrbolt.errors import ReadOnlyError, StoreError
from zarrbolt.storage import LocalStore, RangeByteRequest, make_store

pytest.importorskip("obstore")
from zarrbolt.storage.object_store import ObjectStore  # noqa: E402

DATA = np.arange(40 * 30, dtype="<i4").reshape(40, 30)


@pytest.fixture
def aws_env(monkeypatch, moto_server):
    """The standard AWS variables pointing at moto; ``(moto, bucket)``."""
    for k in ("AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_ENDPOINT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in moto_server.env().items():
        monkeypatch.setenv(k, v)
    return moto_server, moto_server.make_bucket()


def test_urls_follow_the_aws_environment(aws_env):
    _, bucket = aws_env
    url = f"s3://{bucket}/volumes/a.zarr"
    arr = zarrbolt.create_array(url, shape=DATA.shape, chunks=(8, 8), shards=(16, 16), dtype=DATA.dtype)
    arr[:] = DATA
    assert isinstance(arr.store, ObjectStore) and arr.store.url == url
    back = zarrbolt.open_array(url, mode="r")
    np.testing.assert_array_equal(back[:], DATA)
    assert back.store.read_only
    node = zarrbolt.open(url, mode="r")
    np.testing.assert_array_equal(node[3:5, 7], DATA[3:5, 7])
    g = zarrbolt.create_group(f"s3://{bucket}/g.zarr", attributes={"a": 1})
    g.create_array("x", shape=(4,), dtype="u1")[:] = 7
    assert zarrbolt.open_group(f"s3://{bucket}/g.zarr", mode="r").attrs["a"] == 1
    np.testing.assert_array_equal(zarrbolt.open_array(f"s3://{bucket}/g.zarr", path="x")[:], [7] * 4)


def test_default_region_and_http_needs_allowing(aws_env, monkeypatch):
    _, bucket = aws_env
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    st, _ = make_store(f"s3://{bucket}/r")
    st.set("k", b"v")
    assert st.get("k") == b"v"
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    st, _ = make_store(f"s3://{bucket}/r")
    with pytest.raises(StoreError, match="'k'"):
        st.get("k")  # a plain-http endpoint from the environment is refused unless allowed


@pytest.mark.parametrize("style", ["s3fs", "obstore"])
def test_storage_options_in_both_spellings(moto_server, monkeypatch, style):
    for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ALLOW_HTTP"):
        monkeypatch.delenv(k, raising=False)
    bucket = moto_server.make_bucket()
    if style == "s3fs":
        opts = moto_server.storage_options()
    else:
        opts = {"endpoint": moto_server.endpoint, "access_key_id": "testing", "secret_access_key": "testing",
                "region": "us-east-1", "allow_http": True, "timeout": "30s"}
    url = f"s3://{bucket}/o.zarr"
    zarrbolt.create_array(url, shape=(10,), dtype="f8", storage_options=opts)[:] = np.arange(10.0)
    np.testing.assert_array_equal(zarrbolt.open_array(url, mode="r", storage_options=opts)[:], np.arange(10.0))
    np.testing.assert_array_equal(zarrbolt.open(url, storage_options=opts)[2:4], [2.0, 3.0])
    assert sorted(zarrbolt.storage.make_store(f"s3://{bucket}", storage_options=opts)[0].list_dir("")) == ["o.zarr/"]


def test_bad_storage_options_are_typed_errors(moto_server, tmp_path):
    with pytest.raises(StoreError, match="storage_options"):
        zarrbolt.open_array(str(tmp_path / "x"), storage_options={"anon": True})
    with pytest.raises(StoreError, match="storage_options"):
        zarrbolt.create_array({}, shape=(2,), dtype="u1", storage_options={"key": "k"})
    with pytest.raises(StoreError, match="storage_options"):
        make_store(LocalStore(tmp_path), storage_options={"key": "k"})
    with pytest.raises(StoreError, match="dict"):
        make_store("s3://b/x", storage_options=["key"])
    with pytest.raises(StoreError, match="s3://b/x"):
        make_store("s3://b/x", storage_options={"no_such_option_zb": 1})
    make_store(str(tmp_path / "y"), storage_options={})  # empty options are no options


def test_the_scheme_registry(tmp_path):
    st, _ = make_store(tmp_path.as_uri() + "/loc")
    assert isinstance(st, LocalStore)
    gs, _ = make_store("gs://some-bucket/a/b.zarr", storage_options={"anon": True})
    assert isinstance(gs, ObjectStore) and gs.url == "gs://some-bucket/a/b.zarr"
    assert gs.store.config.get("skip_signature") in (True, "true")
    gs, _ = make_store("gs://some-bucket/x", storage_options={"token": "anon"})  # gcsfs spelling
    assert gs.store.config.get("skip_signature") in (True, "true")
    s3, _ = make_store("s3://b/x", storage_options={"anon": True, "requester_pays": False, "region_name": "eu-west-1"})
    assert s3.store.config.get("region") == "eu-west-1" and s3.store.config.get("skip_signature") in (True, "true")
    az, _ = make_store("az://container/p", storage_options={"account_name": "acct", "anon": True})
    assert isinstance(az, ObjectStore) and az.url == "az://container/p"
    http, _ = make_store("https://example.invalid/data.zarr")
    assert isinstance(http, ObjectStore) and http.read_only
    with pytest.raises(ReadOnlyError):
        http.set("zarr.json", b"{}")
    with pytest.raises(StoreError, match="unsupported store URL scheme 'zbnope'"):
        make_store("zbnope://x/y")
    fsspec = pytest.importorskip("fsspec")
    from zarrbolt.storage.fsspec_store import FsspecStore

    a, _ = make_store("memory://zb-registry/x")
    b, _ = make_store("memory://zb-registry/x", mode="r")
    assert isinstance(a, FsspecStore) and b.read_only
    a.set("k", b"shared")
    assert b.get("k") == b"shared"  # one memory filesystem per process, as in zarr-python
    fsspec.filesystem("memory").rm("/zb-registry", recursive=True)


def test_registering_a_scheme():
    from zarrbolt.storage import MemoryStore
    from zarrbolt.storage.urls import _registry, register_scheme

    seen = []

    def factory(url, options, read_only):
        seen.append((url, options, read_only))
        return MemoryStore(read_only=read_only), ""

    register_scheme("zbtest", factory)
    try:
        st, _ = make_store("zbtest://anything", mode="r", storage_options={"x": 1})
        assert isinstance(st, MemoryStore) and seen == [("zbtest://anything", {"x": 1}, True)]
    finally:
        _registry.pop("zbtest")


def test_https_urls_read_arrays_from_a_range_server(http_server, tmp_path):
    local = zarrbolt.create_array(str(http_server.root / "w.zarr"), shape=DATA.shape, chunks=(10, 10),
                                  shards=(20, 30), dtype=DATA.dtype)
    local[:] = DATA
    arr = zarrbolt.open_array(http_server.url + "/w.zarr", mode="r")
    np.testing.assert_array_equal(arr[:], DATA)
    http_server.reset()
    assert arr[25, 3] == DATA[25, 3]
    shard = (http_server.root / "w.zarr" / "c" / "1" / "0").stat().st_size
    assert http_server.bytes_out["GET"] < shard  # an inner chunk by ranges, never the whole shard
    with pytest.raises(ReadOnlyError):
        zarrbolt.open_array(http_server.url + "/w.zarr")[0, 0] = 1


def test_fsspec_mappers_and_filesystems_read_by_ranges(http_server):
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    from zarrbolt.storage.fsspec_store import FsspecStore

    zarrbolt.create_array(str(http_server.root / "m.zarr"), shape=DATA.shape, chunks=(10, 10), shards=(40, 30),
                          dtype=DATA.dtype)[:] = DATA
    mapper = fsspec.get_mapper(http_server.url + "/m.zarr")
    st, _ = make_store(mapper)
    assert isinstance(st, FsspecStore) and st.read_only
    arr = zarrbolt.open_array(mapper, mode="r")
    http_server.reset()
    assert arr[0, 0] == DATA[0, 0]
    shard = (http_server.root / "m.zarr" / "c" / "0" / "0").stat().st_size
    assert 0 < http_server.bytes_out["GET"] < shard / 4, (http_server.bytes_out, shard)
    fs = fsspec.filesystem("memory")
    st, _ = make_store(fs)
    assert isinstance(st, FsspecStore)


def test_obstore_stores_are_accepted(moto_server):
    obstore = pytest.importorskip("obstore")
    bucket = moto_server.make_bucket()
    raw = obstore.store.S3Store(bucket, endpoint=moto_server.endpoint, access_key_id="testing",
                                secret_access_key="testing", region="us-east-1", client_options={"allow_http": True},
                                prefix="raw")
    arr = zarrbolt.create_array(raw, shape=(6,), dtype="i2")
    arr[:] = np.arange(6)
    st, _ = make_store(raw, mode="r")
    assert isinstance(st, ObjectStore) and st.read_only and st.url == f"s3://{bucket}/raw"
    np.testing.assert_array_equal(zarrbolt.open_array(raw, mode="r")[:], np.arange(6))
    assert st.get("zarr.json", RangeByteRequest(0, 1)) == b"{"


def test_without_obstore_urls_fall_back_to_fsspec():
    code = ("import sys; sys.modules['obstore'] = None\n"
            "from zarrbolt.errors import StoreError\n"
            "from zarrbolt.storage import make_store\n"
            "st, _ = make_store('memory://zb-fallback/x')\n"
            "st.set('k', b'v'); print(type(st).__name__, st.get('k'))\n"
            "try:\n    make_store('gs://bucket/x')\nexcept StoreError as e:\n    print('StoreError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if "No module named 'fsspec'" in out.stderr:
        pytest.skip("fsspec is not installed")
    assert out.returncode == 0, out.stderr
    assert "FsspecStore b'v'" in out.stdout
    assert "StoreError" in out.stdout and "install" in out.stdout
