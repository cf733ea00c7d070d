"""zarrbolt's door into zarr-python 3 (the only package of zarrbolt that imports zarr; needs
zarr-python: ``pip install zarrbolt[zarr]``): zarrbolt as zarr-python's codec pipeline, under
its public name :mod:`zarrbolt.codec_pipeline`.

::

    import zarr
    zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"})

(or ``ZARR_CODEC_PIPELINE__PATH=zarrbolt.codec_pipeline.ZarrboltCodecPipeline``).  zarr-python
finds the class through the ``zarr.codec_pipeline`` entry point of an installed zarrbolt; this
module also registers it when imported.  Reads and writes of zarr-python arrays then run through
zarrbolt's read and write planners and C plans; arrays zarrbolt cannot serve use zarr-python's
own pipeline, counted in :data:`fallback_counts` (reason -> arrays) and logged at DEBUG level
on the ``zarrbolt.codec_pipeline`` logger.  :data:`strategy_counts` is the read planner's count of
the strategies it used.
"""

from __future__ import annotations

from .versions import check_zarr_version

check_zarr_version()  # one clear line, before anything of zarr-python's an old release lacks

from zarr.registry import register_pipeline  # noqa: E402

from ..pipeline.read import strategy_counts  # noqa: E402
from .pipeline import ZarrboltCodecPipeline, delegated_counts, fallback_counts  # noqa: E402

register_pipeline(ZarrboltCodecPipeline)

__all__ = ["ZarrboltCodecPipeline", "delegated_counts", "fallback_counts", "strategy_counts"]
