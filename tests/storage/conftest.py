"""The ``store`` fixture of the store tests: a MemoryStore and a LocalStore, and the remote
stores on real servers — an ObjectStore (obstore) on moto's S3 server, an FsspecStore on s3fs
over the same server and one on fsspec's memory filesystem — when obstore / moto / s3fs /
fsspec are installed."""

from __future__ import annotations

import uuid

import pytest

from zarrbolt.storage import LocalStore, MemoryStore, Store


@pytest.fixture(params=["memory", "local", "s3-obstore", "s3-fsspec", "fsspec-memory"])
def store(request, tmp_path) -> Store:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "local":
        # the local root does not exist yet: it must be created on the first write
        return LocalStore(tmp_path / "root")
    if request.param == "s3-obstore":
        pytest.importorskip("obstore")
        from remote_helpers import s3_object_store

        moto = request.getfixturevalue("moto_server")
        return s3_object_store(moto.endpoint, moto.make_bucket(), "root")
    fsspec = pytest.importorskip("fsspec")
    from zarrbolt.storage.fsspec_store import FsspecStore

    if request.param == "s3-fsspec":
        s3fs = pytest.importorskip("s3fs")
        moto = request.getfixturevalue("moto_server")
        opts = moto.storage_options()
        fs = s3fs.S3FileSystem(key=opts["key"], secret=opts["secret"], endpoint_url=opts["endpoint_url"],
                               client_kwargs=opts["client_kwargs"], skip_instance_cache=True, use_listings_cache=False)
        return FsspecStore(fs, path=f"{moto.make_bucket()}/root")

    fs = fsspec.filesystem("memory")
    root = f"/zb-{uuid.uuid4().hex[:12]}"
    yield_store = FsspecStore(fs, path=root)
    request.addfinalizer(lambda: fs.rm(root, recursive=True) if fs.exists(root) else None)
    return yield_store
