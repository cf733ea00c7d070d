"""The napari reader contribution (``napari.yaml``: command ``zarrbolt.get_reader``).

napari calls :func:`get_reader` with the dropped or opened path(s); it answers None for what is
not a Zarr node zarrbolt reads (so napari tries its other readers) and otherwise a function giving
the layers (see :mod:`zarrbolt.napari.layers`).  Nothing of napari is imported here.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from typing import Any

from ..errors import MetadataError, NodeNotFoundError, OmeMetadataError, StoreError
from ..ome.metadata import ome_attributes
from ..ome.plate import Plate, Well
from ..ome.reader import image_from_group
from .layers import LayerData, array_layers, image_layers, label_group_layers, plate_layers, well_layers
from .views import BlockCache, default_cache

__all__ = ["get_reader", "kind_of", "read_layers"]

Reader = Callable[[Any], list[LayerData]]


def _clean(path: Any) -> str:
    p = str(os.fspath(path))
    return p if "://" in p else (p.rstrip("/") or p)


def _display_name(path: str) -> str:
    name = posixpath.basename(path.rstrip("/").replace("\\", "/")) or path
    for suffix in (".zarr", ".ome"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def kind_of(node: Any) -> str | None:
    """What the plugin makes of an opened zarrbolt node: ``"array"``, ``"image"``, ``"labels"``
    (a labels group), ``"plate"``, ``"well"``, ``"series"`` (a bioformats2raw layout) or None
    (not something it shows)."""
    if hasattr(node, "shape"):
        return "array" if len(node.shape) >= 2 and hasattr(node, "metadata") else None
    try:
        _, ome = ome_attributes(node.attrs.asdict())
    except OmeMetadataError:
        return None
    if "plate" in ome:
        return "plate"
    if "well" in ome:
        return "well"
    if "multiscales" in ome:
        return "image"
    if "bioformats2raw.layout" in ome:
        return "series"
    if "labels" in ome:
        return "labels"
    return None


def _series_layers(group: Any, cache: BlockCache | None, name: str) -> list[LayerData]:
    """The images ``0``, ``1``, ... of a bioformats2raw layout, until one is missing."""
    out: list[LayerData] = []
    i = 0
    while True:
        try:
            child = group[str(i)]
        except (KeyError, NodeNotFoundError):
            break
        out += image_layers(image_from_group(child), cache, name=f"{name} {i}")
        i += 1
    return out


def read_layers(node: Any, *, name: str = "zarr", cache: BlockCache | None = None) -> list[LayerData]:
    """The napari layer data of an opened zarrbolt node (see :func:`kind_of`)."""
    cache = default_cache() if cache is None else cache
    kind = kind_of(node)
    if kind == "array":
        return array_layers(node, cache, name=name)
    if kind == "image":
        return image_layers(image_from_group(node), cache, name=name)
    if kind == "plate":
        return plate_layers(Plate(node), cache, name=name)
    if kind == "well":
        return well_layers(Well(node), cache, name=name)
    if kind == "labels":
        return label_group_layers(node, cache)
    if kind == "series":
        return _series_layers(node, cache, name)
    raise OmeMetadataError(f"{node!r} is neither an array nor an OME-Zarr image, plate, well or labels group")


def _open(path: str) -> Any:
    """The node at ``path``, None when there is no Zarr node there zarrbolt can open."""
    from ..api.opening import open as open_node

    try:
        return open_node(path, mode="r")
    except (NodeNotFoundError, StoreError, FileNotFoundError, NotADirectoryError):
        return None


def get_reader(path: Any) -> Reader | None:
    """napari's reader hook: a function reading ``path`` (a path or URL, or a list of them) into
    layers, or None when zarrbolt does not read it.  Metadata that is there but broken is not
    None: the reader raises the typed error, so napari reports it."""
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    if not paths:
        return None
    opened: list[tuple[str, Any]] = []
    for p in paths:
        p = _clean(p)
        try:
            node = _open(p)
        except MetadataError as e:
            return _raiser(e)
        if node is None or kind_of(node) is None:
            return None
        opened.append((p, node))

    def read(_path: Any = None) -> list[LayerData]:
        return [layer for p, node in opened for layer in read_layers(node, name=_display_name(p))]

    return read


def _raiser(error: Exception) -> Reader:
    def read(_path: Any = None) -> list[LayerData]:
        raise error

    return read
