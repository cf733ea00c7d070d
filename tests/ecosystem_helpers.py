"""Helpers shared by the tests in tests/ecosystem that drive zarr-python (import only after
``pytest.importorskip("zarr")``)."""

import contextlib
import os

import pytest
import zarr

ZARRBOLT_PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
# The pipeline the tests configure zarr-python with.  ZARRBOLT_TEST_CODEC_PIPELINE=
# zarr.core.codec_pipeline.BatchedCodecPipeline runs them against zarr-python's own pipeline.
PIPELINE = os.environ.get("ZARRBOLT_TEST_CODEC_PIPELINE", ZARRBOLT_PIPELINE)


@contextlib.contextmanager
def through_pipeline():
    """zarr-python configured with PIPELINE; with zarrbolt's, afterwards: no array fell back to
    zarr-python's pipeline and zarrbolt's read planner ran."""
    cp = None
    if PIPELINE == ZARRBOLT_PIPELINE:
        cp = pytest.importorskip("zarrbolt.codec_pipeline", reason="zarrbolt.codec_pipeline is not built")
        from zarrbolt.pipeline import read as zb_read

        counts = getattr(cp, "strategy_counts", zb_read.strategy_counts)
        fallbacks, reads = dict(cp.fallback_counts), sum(counts.values())
    with zarr.config.set({"codec_pipeline.path": PIPELINE}):
        yield
    if cp is not None:
        assert dict(cp.fallback_counts) == fallbacks
        assert sum(counts.values()) > reads
