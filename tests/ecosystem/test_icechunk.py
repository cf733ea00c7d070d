"""icechunk repositories through zarr-python 3.4.2 with zarrbolt's codec pipeline: arrays written
and read in an icechunk session (a local filesystem repository and S3 on moto), committed, read
back at their snapshot (also after later commits changed them), the same values as zarr-python's
own pipeline gives, and no array handed to zarr-python's pipeline that zarrbolt serves elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
icechunk = pytest.importorskip("icechunk")
cp = pytest.importorskip("zarrbolt.codec_pipeline", reason="zarrbolt.codec_pipeline is not built")

ZARRBOLT = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
ZARR_OWN = "zarr.core.codec_pipeline.BatchedCodecPipeline"
SHAPE = (40, 96, 72)
DATA = (np.random.default_rng(21).integers(0, 4096, SHAPE) + np.arange(SHAPE[2]) * 7).astype(np.uint16)
# what zarrbolt serves elsewhere: sharded and unsharded, the usual compressors
ARRAYS = {
    "sharded_zstd": dict(chunks=(8, 32, 24), shards=(40, 64, 48), compressors=[zarr.codecs.ZstdCodec(level=3)]),
    "sharded_blosc": dict(chunks=(8, 32, 24), shards=(16, 96, 72),
                          compressors=[zarr.codecs.BloscCodec(cname="zstd", clevel=5, shuffle="shuffle")]),
    "chunked_gzip": dict(chunks=(10, 48, 36), compressors=[zarr.codecs.GzipCodec(level=5)]),
    "chunked_raw_f32": dict(chunks=(20, 32, 72), compressors=None, dtype="float32"),
}


def _data(spec):
    return DATA.astype(spec.get("dtype", "uint16")) / (3 if spec.get("dtype") == "float32" else 1)


@pytest.fixture(params=["local", "s3"])
def repo(request, tmp_path):
    if request.param == "local":
        storage = icechunk.local_filesystem_storage(str(tmp_path / "repo"))
    else:
        moto = request.getfixturevalue("moto_server")
        storage = icechunk.s3_storage(bucket=moto.make_bucket(), prefix="repo", endpoint_url=moto.endpoint,
                                      allow_http=True, region="us-east-1", access_key_id="testing",
                                      secret_access_key="testing", force_path_style=True)
    return icechunk.Repository.create(storage)


@pytest.fixture
def counts():
    """Asserts afterwards that zarrbolt's pipeline served everything (no fallback, no delegation)."""
    before = dict(cp.fallback_counts), dict(cp.delegated_counts), sum(cp.strategy_counts.values())
    yield
    assert dict(cp.fallback_counts) == before[0], "an array fell back to zarr-python's pipeline"
    assert dict(cp.delegated_counts) == before[1], "a call was handed to zarr-python's pipeline"
    assert sum(cp.strategy_counts.values()) > before[2], "zarrbolt's read planner did not run"


def _pipeline(z):
    return type(z._async_array.codec_pipeline).__name__


def _write_all(store, pipeline):
    with zarr.config.set({"codec_pipeline.path": pipeline}):
        root = zarr.group(store)
        for name, spec in ARRAYS.items():
            spec = dict(spec)
            dtype = spec.pop("dtype", "uint16")
            z = root.create_array(name, shape=SHAPE, dtype=dtype, fill_value=0, **spec)
            assert _pipeline(z) == pipeline.rsplit(".", 1)[1]
            z[...] = _data(ARRAYS[name])


def _read_all(store, pipeline):
    with zarr.config.set({"codec_pipeline.path": pipeline}):
        root = zarr.open_group(store, mode="r")
        out = {}
        for name in ARRAYS:
            z = root[name]
            assert _pipeline(z) == pipeline.rsplit(".", 1)[1]
            out[name] = (z[...], z[3:37, 5:90:3, 17], z[11])
        return out


def _check(got, want_full):
    for name, (full, part, plane) in got.items():
        w = want_full[name]
        np.testing.assert_array_equal(full, w)
        np.testing.assert_array_equal(part, w[3:37, 5:90:3, 17])
        np.testing.assert_array_equal(plane, w[11])


def test_round_trip_at_a_snapshot(repo, counts):
    session = repo.writable_session("main")
    _write_all(session.store, ZARRBOLT)
    want = {name: _data(spec) for name, spec in ARRAYS.items()}
    _check(_read_all(session.store, ZARRBOLT), want)  # the session reads its own uncommitted writes
    snap = session.commit("zarrbolt writes")
    # reopened read-only at the snapshot: zarrbolt's pipeline gives zarr-python's own values
    ro = repo.readonly_session(snapshot_id=snap)
    ours, theirs = _read_all(ro.store, ZARRBOLT), _read_all(ro.store, ZARR_OWN)
    _check(ours, want)
    _check(theirs, want)
    # a later commit changes parts of the arrays (read-modify-write of shards and chunks)
    s2 = repo.writable_session("main")
    with zarr.config.set({"codec_pipeline.path": ZARRBOLT}):
        root = zarr.open_group(s2.store, mode="r+")
        for name in ARRAYS:
            root[name][5:9, 30:70, 10:20] = 1
            root[name][39, :, :] = 0  # whole chunks of fill value: deleted in the new snapshot
    snap2 = s2.commit("zarrbolt partial writes")
    want2 = {}
    for name, w in want.items():
        w2 = w.copy()
        w2[5:9, 30:70, 10:20] = 1
        w2[39] = 0
        want2[name] = w2
    _check(_read_all(repo.readonly_session(snapshot_id=snap2).store, ZARRBOLT), want2)
    _check(_read_all(repo.readonly_session(branch="main").store, ZARR_OWN), want2)
    # the first snapshot still reads as it was
    _check(_read_all(repo.readonly_session(snapshot_id=snap).store, ZARRBOLT), want)
    assert [s.message for s in repo.ancestry(branch="main")][:2] == ["zarrbolt partial writes", "zarrbolt writes"]


def test_zarrbolt_reads_what_zarr_python_committed(repo, counts):
    session = repo.writable_session("main")
    _write_all(session.store, ZARR_OWN)
    snap = session.commit("zarr-python writes")
    want = {name: _data(spec) for name, spec in ARRAYS.items()}
    _check(_read_all(repo.readonly_session(snapshot_id=snap).store, ZARRBOLT), want)


def test_branches_and_tags(repo, counts):
    """A branch written through zarrbolt's pipeline and a tag on main: each reads its own state."""
    s = repo.writable_session("main")
    _write_all(s.store, ZARRBOLT)
    base = s.commit("base")
    repo.create_tag("v1", snapshot_id=base)
    repo.create_branch("edit", snapshot_id=base)
    s = repo.writable_session("edit")
    with zarr.config.set({"codec_pipeline.path": ZARRBOLT}):
        zarr.open_group(s.store, mode="r+")["sharded_zstd"][:8] = 9
    s.commit("edit")
    with zarr.config.set({"codec_pipeline.path": ZARRBOLT}):
        edited = zarr.open_group(repo.readonly_session(branch="edit").store, mode="r")["sharded_zstd"][...]
        tagged = zarr.open_group(repo.readonly_session(tag="v1").store, mode="r")["sharded_zstd"][...]
    np.testing.assert_array_equal(tagged, DATA)
    assert (edited[:8] == 9).all()
    np.testing.assert_array_equal(edited[8:], DATA[8:])


def test_read_only_session_refuses_writes(repo):
    s = repo.writable_session("main")
    _write_all(s.store, ZARRBOLT)
    snap = s.commit("base")
    with zarr.config.set({"codec_pipeline.path": ZARRBOLT}):
        z = zarr.open_array(repo.readonly_session(snapshot_id=snap).store, path="chunked_gzip", mode="r")
        with pytest.raises(Exception, match="(?i)read.only|read-only|readonly"):
            z[0] = 1
        np.testing.assert_array_equal(z[0], DATA[0])
