"""zarr-python's ``ObjectStore`` (obstore) through zarrbolt's codec pipeline, on a real moto S3
server: the pipeline serves it with zarrbolt's own :class:`~zarrbolt.storage.ObjectStore`
(``zarr_python.stores.native_store``), so a write into part of a shard is conditional on the
object's ETag and writers in several processes lose no update."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
obstore = pytest.importorskip("obstore")

from zarrbolt.storage import ObjectStore  # noqa: E402
from zarrbolt.zarr_python.stores import native_store  # noqa: E402

PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
WRITERS = 4
INNER = 64  # inner chunks of the one shard, each written by one writer
ELEMS = 8  # elements per inner chunk


def _s3(endpoint: str, bucket: str) -> object:
    return obstore.store.S3Store(bucket, endpoint=endpoint, access_key_id="testing", secret_access_key="testing",
                                 region="us-east-1", client_options={"allow_http": True})


def test_zarr_object_store_is_served_by_zarrbolts_object_store(moto_server, s3_bucket):
    zs = zarr.storage.ObjectStore(_s3(moto_server.endpoint, s3_bucket))
    native = native_store(zs)
    assert isinstance(native, ObjectStore) and native.store is zs.store
    assert native.supports_conditional_writes and not native.read_only
    assert native_store(zs) is native  # one per obstore store and mode
    ro = native_store(zarr.storage.ObjectStore(zs.store, read_only=True))
    assert isinstance(ro, ObjectStore) and ro.read_only and ro is not native
    # obstore's LocalStore cannot update on an ETag: served, but last writer wins
    local = native_store(zarr.storage.ObjectStore(obstore.store.LocalStore()))
    assert isinstance(local, ObjectStore) and not local.supports_conditional_writes


def test_pipeline_reads_and_writes_through_it(moto_server, s3_bucket, zarr_config):
    zs = zarr.storage.ObjectStore(_s3(moto_server.endpoint, s3_bucket))
    z = zarr.create_array(zs, name="a", shape=(40, 30), chunks=(5, 10), shards=(20, 30), dtype="int32",
                          fill_value=-1)
    data = np.arange(1200, dtype="int32").reshape(40, 30)
    z[:] = data
    z[3:7, 4:9] = 7  # parts of shards: conditional updates
    data[3:7, 4:9] = 7
    np.testing.assert_array_equal(z[:], data)
    np.testing.assert_array_equal(zarr.open_array(zs, path="a", mode="r")[2:9, 3:11], data[2:9, 3:11])
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        np.testing.assert_array_equal(zarr.open_array(zs, path="a", mode="r")[:], data)


_WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    import obstore, zarr
    endpoint, bucket, k, writers, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    zarr.config.set({"codec_pipeline.path": "%s"})
    s3 = obstore.store.S3Store(bucket, endpoint=endpoint, access_key_id="testing", secret_access_key="testing",
                               region="us-east-1", client_options={"allow_http": True})
    z = zarr.open_array(zarr.storage.ObjectStore(s3), path="a", mode="r+")
    z[0:1]  # (everything imported and connected before the start)
    while time.time() < start:
        time.sleep(0.001)
    for i in range(k, %d, writers):  # this writer's inner chunks, one partial shard write each
        z[i * %d: (i + 1) * %d] = i + 1
""") % (PIPELINE, INNER, ELEMS, ELEMS)


def test_four_processes_writing_one_shard_lose_no_update(moto_server, s3_bucket):
    zs = zarr.storage.ObjectStore(_s3(moto_server.endpoint, s3_bucket))
    with zarr.config.set({"codec_pipeline.path": PIPELINE}):
        zarr.create_array(zs, name="a", shape=(INNER * ELEMS,), chunks=(ELEMS,), shards=(INNER * ELEMS,),
                          dtype="uint8", fill_value=0)
    start = time.time() + 5.0  # the writers start their writes together
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, moto_server.endpoint, s3_bucket, str(k), str(WRITERS),
                               repr(start)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for k in range(WRITERS)]
    outs = [p.communicate(timeout=240)[0].decode(errors="replace") for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    with zarr.config.set({"codec_pipeline.path": PIPELINE}):
        got = zarr.open_array(zs, path="a", mode="r")[:].reshape(INNER, ELEMS)
    lost = [i for i in range(INNER) if not (got[i] == i + 1).all()]
    assert lost == [], f"{len(lost)} of {INNER} inner chunks lost: {lost}"
