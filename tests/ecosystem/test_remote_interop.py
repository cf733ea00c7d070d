"""zarr-python and zarrbolt on the same S3 bucket (moto's server on loopback): arrays written by
one are read byte-exact by the other, and zarr-python's own store objects (``ObjectStore`` on
obstore, ``FsspecStore`` on s3fs) are accepted by zarrbolt as they are."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

import zarrbolt  # noqa: E402
from zarrbolt.storage import make_store  # noqa: E402
from zarrbolt.storage.object_store import ObjectStore  # noqa: E402

DATA = (np.arange(48 * 40, dtype="<u2").reshape(48, 40) * 7) % 1000


def _zarr_obstore(moto, bucket, prefix=""):
    raw = obstore.store.S3Store(bucket, endpoint=moto.endpoint, access_key_id="testing", secret_access_key="testing",
                                region="us-east-1", client_options={"allow_http": True}, prefix=prefix or None)
    return zarr.storage.ObjectStore(raw)


def _objects(moto, bucket):
    raw = obstore.store.S3Store(bucket, endpoint=moto.endpoint, access_key_id="testing", secret_access_key="testing",
                                region="us-east-1", client_options={"allow_http": True})
    out = {}
    for chunk in obstore.list(raw):
        for meta in chunk:
            out[meta["path"]] = bytes(obstore.get(raw, meta["path"]).bytes())
    return out


@pytest.mark.parametrize("shards", [None, (24, 20)])
def test_zarr_python_writes_zarrbolt_reads_the_bucket(moto_server, monkeypatch, shards):
    for k, v in moto_server.env().items():
        monkeypatch.setenv(k, v)
    bucket = moto_server.make_bucket()
    z = zarr.create_array(_zarr_obstore(moto_server, bucket), name="v.zarr", shape=DATA.shape, chunks=(8, 10),
                          shards=shards, dtype=DATA.dtype, fill_value=3)
    z[:40] = DATA[:40]  # the last rows stay unwritten: fill value
    expected = DATA.copy()
    expected[40:] = 3
    arr = zarrbolt.open_array(f"s3://{bucket}/v.zarr", mode="r")
    np.testing.assert_array_equal(arr[:], expected)
    np.testing.assert_array_equal(arr[5:30:3, 7], expected[5:30:3, 7])


@pytest.mark.parametrize("shards", [None, (24, 20)])
def test_zarrbolt_writes_zarr_python_reads_byte_exact(moto_server, monkeypatch, shards):
    for k, v in moto_server.env().items():
        monkeypatch.setenv(k, v)
    b1, b2 = moto_server.make_bucket(), moto_server.make_bucket()
    kw = dict(shape=DATA.shape, chunks=(8, 10), shards=shards, dtype=DATA.dtype, fill_value=0,
              compressors=None)
    zarrbolt.create_array(f"s3://{b1}/v.zarr", **kw)[:] = DATA
    zarr.create_array(_zarr_obstore(moto_server, b2), name="v.zarr", **kw)[:] = DATA
    z = zarr.open_array(_zarr_obstore(moto_server, b1), path="v.zarr", mode="r")
    np.testing.assert_array_equal(z[:], DATA)
    mine, theirs = _objects(moto_server, b1), _objects(moto_server, b2)
    chunks = sorted(k for k in mine if not k.endswith("zarr.json"))
    assert chunks and chunks == sorted(k for k in theirs if not k.endswith("zarr.json"))
    for key in chunks:
        if shards is None:
            assert mine[key] == theirs[key], key  # the same bytes, chunk for chunk
        else:  # the same inner chunks and index size (the spec leaves their order in a shard open)
            assert len(mine[key]) == len(theirs[key]), key


def test_zarr_python_store_objects_are_accepted(moto_server):
    bucket = moto_server.make_bucket()
    zstore = _zarr_obstore(moto_server, bucket, prefix="objs")
    zarr.create_array(zstore, name="a", shape=(5,), dtype="i4")[:] = np.arange(5)
    st, _ = make_store(zstore)
    assert isinstance(st, ObjectStore) and st.url == f"s3://{bucket}/objs"
    np.testing.assert_array_equal(zarrbolt.open_array(zstore, path="a", mode="r")[:], np.arange(5))
    ro, _ = make_store(zarr.storage.ObjectStore(zstore.store, read_only=True))
    assert ro.read_only
    s3fs = pytest.importorskip("s3fs")
    from zarrbolt.storage.fsspec_store import FsspecStore

    opts = moto_server.storage_options()
    fs = s3fs.S3FileSystem(key="testing", secret="testing", endpoint_url=opts["endpoint_url"],
                           client_kwargs=opts["client_kwargs"], asynchronous=True, skip_instance_cache=True)
    zfs = zarr.storage.FsspecStore(fs, path=f"{bucket}/objs", read_only=True)
    st, _ = make_store(zfs)
    assert isinstance(st, FsspecStore) and st.read_only
    np.testing.assert_array_equal(zarrbolt.open_array(zfs, path="a")[:], np.arange(5))
    z = zarr.storage.FsspecStore.from_url(f"s3://{bucket}/objs", storage_options=opts)
    np.testing.assert_array_equal(zarrbolt.open_array(z, path="a", mode="r")[:], np.arange(5))
