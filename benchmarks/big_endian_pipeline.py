"""Big-endian data types through zarr-python: zarrbolt's pipeline (native values swapped into
zarr-python's big-endian buffer) against zarr-python's own pipeline, and against the same array
little-endian (the cost of the swap).  Median seconds of whole-array reads and writes.

    /path/to/.venv-ref/bin/python benchmarks/big_endian_pipeline.py --shape 64 1024 1024 --rounds 5

(run from a checkout with PYTHONPATH=src, or with zarrbolt installed in that interpreter).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings

import numpy as np

PIPELINES = {"zarrbolt": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline",
             "zarr-python": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


def _median(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    import zarr

    import zarrbolt.codec_pipeline as zcp

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", type=int, nargs=3, default=(16, 256, 256))
    ap.add_argument("--chunks", type=int, nargs=3, default=(8, 128, 128))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--zarr-format", type=int, default=2, choices=(2, 3))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    data = (np.arange(np.prod(args.shape)) % 4099).astype("u2").reshape(args.shape)
    print(f"shape {tuple(args.shape)} chunks {tuple(args.chunks)} zarr_format {args.zarr_format}; median s of {args.rounds}")
    print(f"{'pipeline':<12} {'dtype':<6} {'write':>8} {'read':>8}")
    with tempfile.TemporaryDirectory() as d:
        for name, path in PIPELINES.items():
            for dtype in (">u2", "<u2"):
                zcp.fallback_counts.clear()
                with zarr.config.set({"codec_pipeline.path": path}):
                    a = zarr.create_array(f"{d}/{name}{dtype}", shape=args.shape, chunks=args.chunks, dtype=dtype,
                                          zarr_format=args.zarr_format, overwrite=True)
                    values = data.astype(dtype)
                    w = _median(lambda: a.__setitem__(Ellipsis, values), args.rounds)  # noqa: B023
                    r = _median(lambda: a[...], args.rounds)  # noqa: B023
                    assert np.array_equal(a[...], data)
                if name == "zarrbolt" and zcp.fallback_counts:
                    raise SystemExit(f"zarrbolt fell back: {dict(zcp.fallback_counts)}")
                print(f"{name:<12} {dtype:<6} {w:8.4f} {r:8.4f}")


if __name__ == "__main__":
    main()
