"""OME-Zarr (NGFF) images and plates: read multiscale pyramids and high-content screening plates
(NGFF 0.4 on Zarr v2, 0.5 on Zarr v3) and write sharded NGFF 0.5 pyramids, downsampled in C,
and plates of them.

    >>> import zarrbolt.ome as ome
    >>> img = ome.write_image("cells.ome.zarr", volume, axes="zyx", units="micrometer")  # doctest: +SKIP
    >>> img.levels[1].shape, img.scales[1]                                              # doctest: +SKIP

See docs/ome.md.
"""

from __future__ import annotations

from ..errors import OmeMetadataError
from .downsample import METHODS, downsample
from .metadata import Axis
from .plate import Acquisition, FieldRef, Plate, Well, WellPosition, open_plate, open_well, write_plate
from .reader import Image, Labels, open_image
from .writer import write_image, write_label

__all__ = ["METHODS", "Acquisition", "Axis", "FieldRef", "Image", "Labels", "OmeMetadataError", "Plate", "Well",
           "WellPosition", "downsample", "open_image", "open_plate", "open_well", "write_image", "write_label",
           "write_plate"]
