"""zarrbolt's napari reader plugin: drop or open a ``.zarr`` path in napari and zarrbolt reads it
(OME-Zarr 0.4/0.5 images, their labels, plates and wells; plain Zarr v2/v3 arrays), lazily, a
plane at a time, through its own pipeline.  Installed with the ``napari`` extra
(``pip install "zarrbolt[napari]"``); napari finds it through the ``napari.manifest`` entry
point (``napari.yaml`` here).  Nothing here imports napari.  See docs/napari.md.
"""

from __future__ import annotations

from .plugin import get_reader, kind_of, read_layers
from .views import BlockCache, LazyArray, default_cache

__all__ = ["BlockCache", "LazyArray", "default_cache", "get_reader", "kind_of", "read_layers"]
