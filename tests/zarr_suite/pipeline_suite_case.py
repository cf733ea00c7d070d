"""zarr-python's codec-pipeline behaviour suite, instantiated for zarrbolt's pipeline.

Not collected from here: ``run_suite.py`` copies this file into the unpacked zarr-python sdist as
``tests/test_zarrbolt_pipeline_suite.py`` at run time, next to ``test_codec_pipeline_suite.py``, whose
``CodecPipelineTests`` (every test, over both store kinds: a ``MemoryStore`` and a store without the
sync IO surface) it subclasses.  ``ZARRBOLT_SUITE_PIPELINE`` swaps the pipeline under test (the harness
validates itself against zarr-python's ``FusedCodecPipeline`` that way).
"""

from __future__ import annotations

import os

from tests.test_codec_pipeline_suite import CodecPipelineTests

ZARRBOLT_PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"

if ZARRBOLT_PIPELINE == os.environ.get("ZARRBOLT_SUITE_PIPELINE", ZARRBOLT_PIPELINE):
    import zarrbolt.codec_pipeline  # noqa: F401  (registers the pipeline, also from an in-place build)


class TestZarrbolt(CodecPipelineTests):
    pipeline_path = os.environ.get("ZARRBOLT_SUITE_PIPELINE", ZARRBOLT_PIPELINE)
