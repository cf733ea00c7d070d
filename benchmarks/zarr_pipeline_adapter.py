"""anchors_bench adapter "zarr-python+zarrbolt": zarr-python's API with zarrbolt's codec pipeline.

    /path/to/.venv-ref/bin/python benchmarks/anchors_bench.py \\
        --adapter /path/to/zarrbolt/benchmarks/zarr_pipeline_adapter.py:make_adapter \\
        --systems zarr-python,zarr-python-fused,zarrs

Reads and writes go through ``zarr.open_array`` / ``zarr.create_array`` exactly as the harness's own
"zarr-python" adapter does; only ``codec_pipeline.path`` differs.  zarrbolt (with its ``zarr`` extra)
must be installed in the harness's interpreter.  ``ZARRBOLT_BENCH_PIPELINE`` replaces the pipeline
(e.g. ``zarr.core.codec_pipeline.FusedCodecPipeline``, to check the adapter's plumbing); the adapter
is then named after it.  ``info`` reports zarrbolt's fallbacks to zarr-python's own pipeline.
"""

from __future__ import annotations

import os
import warnings

from anchors_bench import Adapter, Unsupported, _ver, _zarr_create_from_metadata  # the harness

ZARRBOLT_PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"


def _fallbacks(pipeline_module) -> int:
    counts = getattr(pipeline_module, "fallback_counts", None)
    return sum(counts.values()) if counts is not None else 0


def make_adapter(threads: int) -> Adapter:
    import zarr

    path = os.environ.get("ZARRBOLT_BENCH_PIPELINE", ZARRBOLT_PIPELINE)
    module = None
    if path == ZARRBOLT_PIPELINE:
        import zarrbolt.codec_pipeline as module  # registers the pipeline (also without entry points)
    zarr.config.set({"threading.max_workers": threads, "codec_pipeline.path": path})
    name = "zarr-python+zarrbolt" if module is not None else f"zarr-python+{path.rsplit('.', 1)[-1]}"
    state = {"write_fallbacks": 0}

    def check(arr):
        got = type(arr._async_array.codec_pipeline)
        if f"{got.__module__}.{got.__qualname__}" != path:
            raise Unsupported(f"zarr-python chose {got.__qualname__}, not {path}")
        return arr

    def open_(p, layout):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check(zarr.open_array(p, mode="r"))

    def read(h, sel):
        return h[sel]

    def write(p, layout, data):
        before = _fallbacks(module)
        a = check(_zarr_create_from_metadata(zarr, p, layout["metadata"]))
        a[...] = data
        state["write_fallbacks"] = _fallbacks(module) - before

    def info(h):
        """fallback_calls: cumulative arrays that fell back to zarr-python's own pipeline."""
        if h is None:
            return {"fallback_calls": state["write_fallbacks"]}
        return {"fallback_calls": _fallbacks(module)}

    settings = {
        "codec_pipeline.path": path,
        "threading.max_workers": threads,
        "async.concurrency": zarr.config.get("async.concurrency"),
        "note": "zarr-python front end; threading.max_workers sizes the pipeline's decode/encode threads",
    }
    versions = {"zarr": _ver("zarr"), "numcodecs": _ver("numcodecs")}
    if module is not None:
        versions["zarrbolt"] = _ver("zarrbolt")
    return Adapter(name, settings, open_, read, write, info, versions=versions)
