"""zarrbolt as a zarr-python 3 codec pipeline, under the name zarr-python's configuration uses
(needs zarr-python: ``pip install zarrbolt[zarr]``)::

    import zarr
    zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"})

(or ``ZARR_CODEC_PIPELINE__PATH=zarrbolt.codec_pipeline.ZarrboltCodecPipeline``).  zarr-python
finds the class through the ``zarr.codec_pipeline`` entry point of an installed zarrbolt; this
module also registers it when imported.  The pipeline itself lives in :mod:`zarrbolt.zarr_python`
(zarrbolt's one door into zarr-python); this module is its public name.
"""

from __future__ import annotations

from .zarr_python import ZarrboltCodecPipeline, delegated_counts, fallback_counts, strategy_counts

__all__ = ["ZarrboltCodecPipeline", "delegated_counts", "fallback_counts", "strategy_counts"]
