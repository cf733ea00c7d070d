"""zarr-python's own store objects (``zarr.storage.ObjectStore`` on obstore, ``FsspecStore`` on
s3fs) given to zarrbolt, on moto's S3 server on loopback: unwrapped to zarrbolt's stores (same
location, same read-only flag) without zarrbolt importing zarr-python.  Arrays written by one
library and read by the other: tests/ecosystem/test_remote_interop.py."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

import zarrbolt  # noqa: E402
from zarrbolt.storage import make_store  # noqa: E402
from zarrbolt.storage.object_store import ObjectStore  # noqa: E402

def _zarr_obstore(moto, bucket, prefix=""):
    raw = obstore.store.S3Store(bucket, endpoint=moto.endpoint, access_key_id="testing", secret_access_key="testing",
                                region="us-east-1", client_options={"allow_http": True}, prefix=prefix or None)
    return zarr.storage.ObjectStore(raw)


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
