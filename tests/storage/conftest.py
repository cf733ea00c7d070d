"""The ``store`` fixture of the store tests: a MemoryStore and a LocalStore, and the remote
stores on real servers — an ObjectStore (obstore) on moto's S3 server and an FsspecStore on
fsspec's memory filesystem — when obstore / moto / fsspec are installed."""

from __future__ import annotations

import uuid

import pytest

from zarrbolt.storage import LocalStore, MemoryStore, Store


@pytest.fixture(params=["memory", "local", "s3-obstore", "fsspec-memory"])
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

    fs = fsspec.filesystem("memory")
    root = f"/zb-{uuid.uuid4().hex[:12]}"
    yield_store = FsspecStore(fs, path=root)
    request.addfinalizer(lambda: fs.rm(root, recursive=True) if fs.exists(root) else None)
    return yield_store
