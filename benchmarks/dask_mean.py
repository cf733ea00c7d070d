"""Time a dask reduction (``x.mean().compute()``, dask's threaded scheduler) over a Zarr v3 array read
the ways docs/ecosystem.md shows:

  zarr-python            da.from_zarr(path)                                  (zarr's own pipeline)
  zarr-python+zarrbolt   da.from_zarr(path) with codec_pipeline.path = zarrbolt's pipeline
  (both also with chunks=<the shard shape> when the array is sharded)
  zarrbolt.to_dask       zarrbolt.to_dask(zarrbolt.open_array(path))         (blocks of whole shards/chunks)
  zarrbolt da.from_array  da.from_array(zarrbolt.open_array(path), chunks=arr.chunks)

With ``--eager``: no dask, ``zarr.open_array(path)[...].mean()`` through each pipeline and
``zarrbolt.open_array(path)[...].mean()`` (what xarray's ``.load()`` without dask does).

Run under the reference venv (zarr-python, dask) with zarrbolt importable, e.g.::

  PYTHONPATH=src .venv-ref/bin/python benchmarks/dask_mean.py /tmp/bench_data/256x1024x1024_seed42/layout_b.zarr

Prints the median of ``--repeat`` runs of each (after one warm-up run that fills the page cache)."""

from __future__ import annotations

import argparse
import statistics
import time

ZB_PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
ZARR_DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"


def _ways(path: str) -> dict:
    import dask.array as da
    import zarr

    import zarrbolt

    shards = zarrbolt.open_array(path, mode="r").shards

    def zarr_python(pipeline: str, chunks: tuple | None = None):
        def run() -> float:
            with zarr.config.set({"codec_pipeline.path": pipeline}):
                kw = {"chunks": chunks} if chunks else {}
                return float(da.from_zarr(path, **kw).mean().compute())

        return run

    pipelines = {"zarr-python": ZARR_DEFAULT}
    try:
        import zarrbolt.codec_pipeline  # noqa: F401

        pipelines["zarr-python+zarrbolt"] = ZB_PIPELINE
    except ImportError:
        pass
    ways = {}
    for name, pipeline in pipelines.items():
        ways[name] = zarr_python(pipeline)
        if shards:
            ways[name + ", chunks=shards"] = zarr_python(pipeline, shards)
    ways["zarrbolt.to_dask"] = lambda: float(zarrbolt.to_dask(zarrbolt.open_array(path, mode="r")).mean().compute())

    def from_array() -> float:
        arr = zarrbolt.open_array(path, mode="r")
        return float(da.from_array(arr, chunks=arr.chunks).mean().compute())

    ways["zarrbolt da.from_array"] = from_array
    return ways


def _eager_ways(path: str) -> dict:
    import zarr

    import zarrbolt

    def zarr_python(pipeline: str):
        def run() -> float:
            with zarr.config.set({"codec_pipeline.path": pipeline}):
                return float(zarr.open_array(path, mode="r")[...].mean())

        return run

    ways = {"zarr-python z[...]": zarr_python(ZARR_DEFAULT)}
    try:
        import zarrbolt.codec_pipeline  # noqa: F401

        ways["zarr-python+zarrbolt z[...]"] = zarr_python(ZB_PIPELINE)
    except ImportError:
        pass
    ways["zarrbolt z[...]"] = lambda: float(zarrbolt.open_array(path, mode="r")[...].mean())
    return ways


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--eager", action="store_true", help="whole-array reads without dask")
    args = ap.parse_args()
    ways = _eager_ways(args.path) if args.eager else _ways(args.path)
    results = {}
    for name, run in ways.items():
        if args.only and name not in args.only:
            continue
        value = run()  # warm-up (page cache, imports, plans)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            got = run()
            times.append(time.perf_counter() - t0)
            assert got == value, (name, got, value)
        results[name] = (statistics.median(times), min(times), value)
    base = next(iter(results.values()))[0]
    print(f"{'reader':<36} {'median s':>9} {'min s':>7} {'speedup':>8}  mean")
    for name, (med, best, value) in results.items():
        speed = f"{base / med:7.2f}x" if base else "       -"
        print(f"{name:<36} {med:9.3f} {best:7.3f} {speed}  {value:.4f}")


if __name__ == "__main__":
    main()
