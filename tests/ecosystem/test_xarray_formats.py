"""xarray datasets as xarray writes them by default (consolidated metadata, Zarr v2 or v3) with
string and datetime coordinates: zarrbolt opens the store directly and reads every variable,
and xarray reads them again through zarrbolt's codec pipeline."""

import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")

import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402

from ecosystem_helpers import through_pipeline  # noqa: E402


def _dataset():
    rng = np.random.default_rng(21)
    t, c, y, x = 5, 3, 40, 30
    return xr.Dataset(
        {
            "image": (("time", "channel", "y", "x"), rng.integers(0, 4000, (t, c, y, x)).astype("uint16")),
            "exposure": (("time",), rng.normal(10, 1, t).astype("float32")),
            "label": (("channel",), np.array(["first", "second label", ""], dtype=object)),
        },
        coords={
            "time": np.datetime64("2026-11-25T08:00:00", "ns") + np.arange(t) * np.timedelta64(90, "s"),
            "channel": np.array(["DAPI", "GFP", "mCherry"]),  # fixed-length unicode (<U7)
            "y": np.arange(y) * 0.25,
            "x": np.arange(x) * 0.25,
            "delay": (("time",), np.arange(t) * np.timedelta64(250, "ms")),
        },
        attrs={"instrument": "confocal"},
    )


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def written(request, tmp_path_factory):
    """(path, zarr format): the dataset written by xarray with zarr-python's own pipeline,
    consolidated as xarray does by default."""
    zf = request.param
    path = str(tmp_path_factory.mktemp(f"xr{zf}") / "ds.zarr")
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        _dataset().to_zarr(path, zarr_format=zf, mode="w", encoding={"image": {"chunks": (1, 1, 20, 30)}})
    return path, zf


def _stored(name, ds):
    """What xarray stored for variable ``name``: datetimes and timedeltas as integers in the
    units of the variable's CF attributes (zarr-python reads the same integers)."""
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        return zarr.open_array(ds, path=name, mode="r")[...]


def test_zarrbolt_opens_and_reads_every_variable(written):
    path, zf = written
    g = zarrbolt.open_group(path, mode="r")
    names = {"image", "exposure", "label", "time", "channel", "y", "x", "delay"}
    assert set(g.array_keys()) == names
    members = dict(g.members())
    assert all(isinstance(members[n], zarrbolt.Array) for n in names), members
    for name in sorted(names):
        a = g[name]
        assert a.metadata.zarr_format == zf
        got, want = a[...], _stored(name, path)
        assert got.dtype.kind == want.dtype.kind or {got.dtype.kind, want.dtype.kind} <= {"O", "T", "U"}, name
        np.testing.assert_array_equal(np.asarray(got, dtype=want.dtype), want, err_msg=name)
    assert g.attrs["instrument"] == "confocal"
    assert g["time"].attrs["units"].startswith(("nanoseconds", "seconds", "minutes"))


def test_xarray_reads_through_the_pipeline(written):
    path, zf = written
    want = _dataset()
    with through_pipeline():
        got = xr.open_zarr(path, zarr_format=zf).load()
    xr.testing.assert_identical(got, want)


def test_xarray_reads_what_zarrbolt_changed(written, tmp_path):
    """A copy of the store whose image zarrbolt rewrites in part: xarray (zarr-python's own
    pipeline) sees zarrbolt's values and the coordinates unchanged."""
    import shutil

    path, zf = written
    copy = str(tmp_path / "copy.zarr")
    shutil.copytree(path, copy)
    g = zarrbolt.open_group(copy, mode="a")
    g["image"][2, 1, 5:25, :] = 7
    want = _dataset()
    want["image"][2, 1, 5:25, :] = 7
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        got = xr.open_zarr(copy, zarr_format=zf).load()
    xr.testing.assert_identical(got, want)
