"""xarray datasets written as Zarr v2 (xarray's default in many setups: consolidated ``.zmetadata``,
``_ARRAY_DIMENSIONS``, ``_FillValue`` encodings, string and datetime coordinates) read by zarrbolt
directly and through its codec pipeline; edited by zarrbolt in mode ``a`` and read again by
xarray; converted with ``zarrbolt.migrate`` and opened by xarray as Zarr v3."""

import os

import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")

import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402

from ecosystem_helpers import through_pipeline  # noqa: E402

REFERENCE = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


def _dataset():
    rng = np.random.default_rng(7)
    t, y, x = 5, 40, 30
    temp = rng.normal(20, 4, (t, y, x)).astype("float32")
    temp[0, :3, :3] = np.nan
    return xr.Dataset(
        {
            "image": (("t", "y", "x"), rng.integers(0, 65000, (t, y, x)).astype("uint16")),
            "temperature": (("t", "y", "x"), temp),
            "station": (("x",), np.array([f"st-{i}" for i in range(x)], dtype=object)),
            "code": (("y",), np.array([f"c{i % 7}" for i in range(y)], dtype="<U3")),
        },
        coords={
            "t": np.array("2024-01-01T00:00", dtype="M8[ns]") + np.arange(t) * np.timedelta64(6, "h"),
            "y": np.linspace(0, 1, y),
            "x": np.arange(x, dtype="int32"),
            "lag": ("t", np.arange(t) * np.timedelta64(90, "s")),
        },
        attrs={"title": "zarrbolt v2 test"},
    )


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("xr2") / "ds.zarr")
    encoding = {"image": {"chunks": (2, 16, 16)}, "temperature": {"chunks": (1, 20, 30), "_FillValue": -999.0}}
    with zarr.config.set(REFERENCE):
        _dataset().to_zarr(path, zarr_format=2, encoding=encoding, mode="w")  # consolidated by default
    assert os.path.exists(os.path.join(path, ".zmetadata")) and os.path.exists(os.path.join(path, "image", ".zarray"))
    return path


def _expected(path):
    with zarr.config.set(REFERENCE):
        return xr.open_zarr(path, zarr_format=2).load()


def test_zarrbolt_reads_every_variable(store_path):
    want = _expected(store_path)
    g = zarrbolt.open_group(store_path, mode="r")
    assert g.metadata.zarr_format == 2 and g.attrs["title"] == "zarrbolt v2 test"
    for name in ("image", "station", "code", "x", "y"):
        arr = g[name]
        assert arr.metadata.zarr_format == 2
        assert arr.attrs["_ARRAY_DIMENSIONS"] == list(want[name].dims)
        assert arr[...].tolist() == want[name].values.tolist(), name
    # encoded values: the raw stored numbers (xarray decodes times and _FillValue itself)
    raw_t = g["t"][...]
    with zarr.config.set(REFERENCE):
        z = zarr.open_group(store_path, mode="r")
        np.testing.assert_array_equal(raw_t, z["t"][...])
        np.testing.assert_array_equal(g["temperature"][...], z["temperature"][...])
        np.testing.assert_array_equal(g["lag"][...], z["lag"][...])


def test_open_zarr_through_the_pipeline(store_path):
    want = _expected(store_path)
    with through_pipeline():
        got = xr.open_zarr(store_path, zarr_format=2).load()
    xr.testing.assert_identical(got, want)
    assert np.isnan(got["temperature"].values[0, 0, 0])


def test_zarrbolt_edits_stay_readable_by_xarray(tmp_path, store_path):
    import shutil

    path = str(tmp_path / "edit.zarr")
    shutil.copytree(store_path, path)
    g = zarrbolt.open(path)  # mode "a"
    g["image"][0, :5, :5] = 1
    g["station"][0] = "renamed"
    g.attrs["edited"] = "yes"
    assert not any(f == "zarr.json" for _, _, files in os.walk(path) for f in files)
    with zarr.config.set(REFERENCE):
        got = xr.open_zarr(path, zarr_format=2).load()  # through the consolidated .zmetadata
    assert got.attrs["edited"] == "yes"
    assert (got["image"].values[0, :5, :5] == 1).all() and got["station"].values[0] == "renamed"


def test_migrated_dataset_opens_as_v3(tmp_path, store_path):
    want = _expected(store_path)
    out = str(tmp_path / "v3.zarr")
    zarrbolt.migrate(store_path, out)
    g = zarrbolt.open_group(out, mode="r")
    assert g.metadata.zarr_format == 3 and g["image"].metadata.dimension_names == ("t", "y", "x")
    with zarr.config.set(REFERENCE):
        got = xr.open_zarr(out, zarr_format=3).load()
    xr.testing.assert_identical(got, want)
