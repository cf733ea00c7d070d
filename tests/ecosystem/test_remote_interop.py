"""zarr-python (its obstore ObjectStore) and zarrbolt (``s3://`` URLs through the remote read and
write planners) on the same moto bucket: each reads what the other wrote, element for element,
and the stored objects are byte for byte what the other side would store."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

import zarrbolt  # noqa: E402
from zarrbolt.pipeline.shard import INDEX_CACHE  # noqa: E402

DATA = ((np.arange(48 * 96 * 80, dtype="uint16").reshape(48, 96, 80) * 13) % 4099).astype("uint16")
LAYOUTS = [dict(chunks=(16, 32, 16)), dict(chunks=(16, 32, 16), shards=(48, 64, 32))]


def _zarr_store(moto_server, bucket, read_only=False):
    s3 = obstore.store.S3Store(bucket, endpoint=moto_server.endpoint, access_key_id="testing",
                               secret_access_key="testing", region="us-east-1",
                               client_options={"allow_http": True})
    return zarr.storage.ObjectStore(s3, read_only=read_only)


def _opts(moto_server):
    return {"endpoint_url": moto_server.endpoint, "key": "testing", "secret": "testing", "region": "us-east-1"}


def _objects(moto_server, bucket, prefix):
    s3 = obstore.store.S3Store(bucket, endpoint=moto_server.endpoint, access_key_id="testing",
                               secret_access_key="testing", region="us-east-1", client_options={"allow_http": True})
    keys = [m["path"] for batch in obstore.list(s3, prefix=prefix) for m in batch]
    return {k[len(prefix):]: bytes(obstore.get(s3, k).bytes()) for k in keys if "/c/" in k}


@pytest.mark.parametrize("layout", LAYOUTS, ids=["chunked", "sharded"])
def test_zarr_python_writes_zarrbolt_reads(moto_server, s3_bucket, layout):
    z = zarr.create_array(_zarr_store(moto_server, s3_bucket), name="v", shape=DATA.shape, dtype="uint16",
                          fill_value=0, compressors=[zarr.codecs.ZstdCodec(level=3)], **layout)
    z[...] = DATA
    z[0:16, 0:32, 0:16] = 0  # an absent chunk / inner chunk
    expect = DATA.copy()
    expect[0:16, 0:32, 0:16] = 0
    INDEX_CACHE.clear()
    a = zarrbolt.open_array(f"s3://{s3_bucket}/v", mode="r", storage_options=_opts(moto_server))
    np.testing.assert_array_equal(a[...], expect)
    for sel in [(slice(3, 40), slice(10, 90), slice(5, 77)), (7, slice(None), 3), (slice(None, None, 4), 50)]:
        np.testing.assert_array_equal(a[sel], expect[sel])


@pytest.mark.parametrize("layout", LAYOUTS, ids=["chunked", "sharded"])
def test_zarrbolt_writes_zarr_python_reads(moto_server, s3_bucket, layout):
    opts = _opts(moto_server)
    a = zarrbolt.create_array(f"s3://{s3_bucket}/w", shape=DATA.shape, dtype="uint16", fill_value=0,
                              compressors=[{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
                              storage_options=opts, **layout)
    a[...] = DATA
    a[1:5, 2:40, 3:9] = 77  # partial updates: versioned read-modify-write
    expect = DATA.copy()
    expect[1:5, 2:40, 3:9] = 77
    z = zarr.open_array(_zarr_store(moto_server, s3_bucket, read_only=True), path="w", mode="r")
    np.testing.assert_array_equal(z[...], expect)
    # the same array written by zarr-python stores the same bytes
    zw = zarr.create_array(_zarr_store(moto_server, s3_bucket), name="w2", shape=DATA.shape, dtype="uint16",
                           fill_value=0, compressors=[zarr.codecs.ZstdCodec(level=3)], **layout)
    zw[...] = expect
    ours, theirs = _objects(moto_server, s3_bucket, "w/"), _objects(moto_server, s3_bucket, "w2/")
    assert sorted(ours) == sorted(theirs)
    if "shards" not in layout:  # (zarr-python orders a partially rewritten shard's chunks its own way)
        assert ours == theirs
    else:
        b = zarrbolt.open_array(f"s3://{s3_bucket}/w2", mode="r", storage_options=opts)
        np.testing.assert_array_equal(b[...], expect)
