"""xarray datasets written to Zarr v3 by xarray (through zarr-python) and opened again with
zarrbolt's codec pipeline switched on: the same values, eagerly and through dask."""

import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")

import numpy as np  # noqa: E402

import zarrbolt  # noqa: E402

from ecosystem_helpers import through_pipeline  # noqa: E402


def _dataset():
    rng = np.random.default_rng(11)
    t, y, x = 6, 90, 70
    return xr.Dataset(
        {
            "image": (("t", "y", "x"), (rng.integers(0, 65000, (t, y, x))).astype("uint16")),
            "temperature": (("t", "y", "x"), rng.normal(20, 4, (t, y, x)).astype("float32")),
            "mask": (("y", "x"), rng.integers(0, 2, (y, x)).astype("uint8")),
            "counts": (("t",), np.arange(t, dtype="int64") * 1000),
        },
        coords={"t": np.arange(t) * 0.5, "y": np.linspace(0, 1, y), "x": np.arange(x, dtype="int32")},
        attrs={"title": "zarrbolt ecosystem test"},
    )


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("xr") / "ds.zarr")
    ds = _dataset()
    encoding = {
        "image": {"chunks": (1, 30, 35), "shards": (3, 90, 70)},  # sharded
        "temperature": {"chunks": (2, 45, 35)},
    }
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        ds.to_zarr(path, zarr_format=3, encoding=encoding, consolidated=False, mode="w")
    return path


def test_zarrbolt_reads_what_xarray_wrote(store_path):
    ds = _dataset()
    g = zarrbolt.open_group(store_path, mode="r")
    assert g["image"].shards == (3, 90, 70)
    for name in ("image", "temperature", "mask", "counts"):
        np.testing.assert_array_equal(g[name][...], ds[name].values)


@pytest.mark.parametrize("chunks", [None, {}], ids=["eager", "dask"])
def test_open_zarr_through_the_pipeline(store_path, chunks):
    want = _dataset()
    with through_pipeline():
        got = xr.open_zarr(store_path, chunks=chunks, consolidated=False, zarr_format=3)
        if chunks is not None:
            assert got["image"].chunks is not None
        got = got.load()
    xr.testing.assert_identical(got, want)


def test_open_dataset_engine_zarr_through_the_pipeline(store_path):
    want = _dataset()
    with through_pipeline():
        with xr.open_dataset(store_path, engine="zarr", consolidated=False, chunks={}) as ds:
            np.testing.assert_array_equal(ds["image"].isel(t=slice(1, 5), y=slice(10, 80)).values,
                                          want["image"].isel(t=slice(1, 5), y=slice(10, 80)).values)
            mean = ds["temperature"].mean("t").compute()
            np.testing.assert_allclose(mean.values, want["temperature"].mean("t").values, rtol=1e-6)
            xr.testing.assert_identical(ds.load(), want)


def test_xarray_writes_through_the_pipeline(tmp_path, store_path):
    """Written by xarray with the pipeline on, read back by zarr-python's own pipeline."""
    want = _dataset()
    out = str(tmp_path / "again.zarr")
    with through_pipeline():
        with xr.open_zarr(store_path, consolidated=False) as ds:
            ds = ds.load()
        for v in ds.variables.values():
            v.encoding.clear()
        encoding = {"image": {"chunks": (2, 30, 35), "shards": (2, 90, 70)}}
        ds.to_zarr(out, zarr_format=3, consolidated=False, mode="w", encoding=encoding)
    with zarr.config.set({"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}):
        xr.testing.assert_identical(xr.open_zarr(out, consolidated=False).load(), want)
