"""napari layer data (``(data, kwargs, layer_type)`` tuples) of what zarrbolt opens: OME-Zarr
images (one multiscale image layer per channel, names, colours and contrast limits from ``omero``,
scale and translation from the coordinate transformations), their label images (label layers),
plates and wells (one mosaic of the first field of each well, per channel, at every level) and
plain arrays (an image layer).  The data are :class:`~zarrbolt.napari.views.LazyArray` views:
nothing is read until napari shows a plane."""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..ome.metadata import SPACE_UNITS, TIME_UNITS
from ..ome.plate import Plate, Well
from ..ome.reader import Image, Labels
from .views import ArraySource, BlockCache, LazyArray, MosaicSource, Tile

__all__ = ["LayerData", "array_layers", "image_layers", "label_layers", "plate_layers", "well_layers"]

LayerData = tuple[Any, dict[str, Any], str]
_HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")


def _channel_axis(img: Image) -> int | None:
    for i, a in enumerate(img.axes):
        if a.type == "channel" or (a.type is None and a.name == "c"):
            return i
    return None


def _drop(values: Sequence[Any], axis: int | None) -> list[Any]:
    return [v for i, v in enumerate(values) if i != axis]


def _units(img: Image, axis: int | None) -> list[str] | None:
    units = _drop(img.units, axis)
    if all(u is None for u in units):
        return None
    known = SPACE_UNITS | TIME_UNITS
    return [u if u in known else "pixel" for u in units]


def _geometry(img: Image, axis: int | None) -> dict[str, Any]:
    kw: dict[str, Any] = {"scale": _drop(img.scales[0], axis), "translate": _drop(img.translations[0], axis),
                          "axis_labels": _drop(img.axis_names, axis)}
    units = _units(img, axis)
    if units is not None:
        kw["units"] = units
    return kw


def _number(v: Any) -> float | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def _channel_props(omero: Any, n: int) -> list[dict[str, Any]]:
    """Per channel: name, colormap, contrast limits and visibility from an ``omero`` object
    (what is missing or malformed is left to napari's defaults)."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    channels = omero.get("channels") if isinstance(omero, Mapping) else None
    if not isinstance(channels, list):
        return out
    rdefs = omero.get("rdefs")
    grey = isinstance(rdefs, Mapping) and rdefs.get("model") == "greyscale"
    for props, ch in zip(out, channels):
        if not isinstance(ch, Mapping):
            continue
        if isinstance(ch.get("label"), str) and ch["label"]:
            props["name"] = ch["label"]
        color = ch.get("color")
        m = _HEX.match(color) if isinstance(color, str) else None
        if grey:
            props["colormap"] = "gray"
        elif m:
            props["colormap"] = "#" + m.group(1).lower()
        window = ch.get("window")
        if isinstance(window, Mapping):
            lo, hi = _number(window.get("start")), _number(window.get("end"))
            if lo is not None and hi is not None and hi > lo:
                props["contrast_limits"] = [lo, hi]
        if isinstance(ch.get("active"), bool):
            props["visible"] = ch["active"]
    return out


def _base_name(img: Image, fallback: str) -> str:
    return img.name or posixpath.basename(img.group.path.rstrip("/")) or fallback


def _levels(sources: Sequence[Any], axis: int | None, index: int | None) -> list[LazyArray]:
    views = [LazyArray(s) for s in sources]
    if axis is None:
        return views
    key = (slice(None),) * axis + (index,)
    return [v[key] for v in views]


def _data(levels: list[LazyArray]) -> Any:
    return levels if len(levels) > 1 else levels[0]


def image_layers(img: Image, cache: BlockCache | None, *, name: str = "image", labels: bool = True) -> list[LayerData]:
    """One image layer per channel of ``img`` (all its levels), then a label layer per label image."""
    if img.image_label is not None:  # a label image opened on its own
        return label_layers(img, cache, name=name)
    axis = _channel_axis(img)
    nch = img.shapes[0][axis] if axis is not None else 1
    sources = [ArraySource(a, cache) for a in img.levels]
    base = _base_name(img, name)
    props = _channel_props(img.omero, nch)
    out: list[LayerData] = []
    for c in range(nch):
        kw: dict[str, Any] = {"name": base if nch == 1 else f"{base} [{c}]", "multiscale": len(sources) > 1,
                              "rgb": False, "blending": "additive" if nch > 1 else "translucent",
                              "metadata": {"zarrbolt": {"path": img.group.path, "channel": c if axis is not None
                                                        else None, "ngff": img.version}},
                              **_geometry(img, axis)}
        kw.update(props[c])
        out.append((_data(_levels(sources, axis, c if axis is not None else None)), kw, "image"))
    if labels:
        for label_name in img.labels:
            out += label_layers(img.labels[label_name], cache, name=label_name)
    return out


def _label_colors(image_label: Any) -> dict[Any, list[float]] | None:
    colors = image_label.get("colors") if isinstance(image_label, Mapping) else None
    if not isinstance(colors, list):
        return None
    out: dict[Any, list[float]] = {}
    for c in colors:
        if not isinstance(c, Mapping):
            continue
        v, rgba = c.get("label-value"), c.get("rgba")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(rgba, list) and len(rgba) == 4 \
                and all(isinstance(x, (int, float)) and 0 <= x <= 255 for x in rgba):
            out[int(v)] = [x / 255 for x in rgba]
    if not out:
        return None
    out.setdefault(0, [0.0, 0.0, 0.0, 0.0])
    out.setdefault(None, [0.5, 0.5, 0.5, 1.0])  # labels the metadata gives no colour
    return out


def label_layers(img: Image, cache: BlockCache | None, *, name: str = "labels") -> list[LayerData]:
    """A label layer per channel of a label image (usually one), with its colours."""
    axis = _channel_axis(img)
    nch = img.shapes[0][axis] if axis is not None else 1
    sources = [ArraySource(a, cache) for a in img.levels]
    base = img.name or name
    out: list[LayerData] = []
    colors = _label_colors(img.image_label)
    for c in range(nch):
        kw: dict[str, Any] = {"name": base if nch == 1 else f"{base} [{c}]", "multiscale": len(sources) > 1,
                              "metadata": {"zarrbolt": {"path": img.group.path, "ngff": img.version,
                                                        "image-label": img.image_label}},
                              **_geometry(img, axis)}
        if colors is not None:
            kw["colormap"] = colors
        out.append((_data(_levels(sources, axis, c if axis is not None else None)), kw, "labels"))
    return out


def _mosaic_layers(grid: list[list[Any]], first: Image, cache: BlockCache | None, name: str,
                   metadata: dict[str, Any]) -> list[LayerData]:
    """Image layers of a mosaic whose places ``grid[r][c]`` are callables opening the field image
    there (or None), shaped and described like ``first``."""

    def opener(open_image: Any, level: int) -> Any:
        def run() -> ArraySource | None:
            img = open_image()
            if img is None or level >= len(img):
                return None
            return ArraySource(img.levels[level], cache)
        return run

    sources = []
    for level, shape in enumerate(first.shapes):
        tiles = [[None if o is None else Tile(opener(o, level), o.label) for o in row] for row in grid]
        sources.append(MosaicSource(tiles, shape, first.dtype))
    axis = _channel_axis(first)
    nch = first.shapes[0][axis] if axis is not None else 1
    props = _channel_props(first.omero, nch)
    out: list[LayerData] = []
    for c in range(nch):
        kw: dict[str, Any] = {"name": name if nch == 1 else f"{name} [{c}]", "multiscale": len(sources) > 1,
                              "rgb": False, "blending": "additive" if nch > 1 else "translucent",
                              "metadata": metadata, **_geometry(first, axis)}
        kw.update({k: v for k, v in props[c].items() if k != "name"})
        if "name" in props[c]:
            kw["name"] = f"{name}: {props[c]['name']}"
        out.append((_data(_levels(sources, axis, c if axis is not None else None)), kw, "image"))
    return out


class _FirstField:
    """Opens the first field of one well of a plate (at most once)."""

    def __init__(self, plate: Plate, path: str):
        self.plate, self.path, self.label = plate, path, f"well {path}"

    def __call__(self) -> Image | None:
        well = self.plate[self.path]
        return well.image(0) if len(well) else None


def plate_layers(plate: Plate, cache: BlockCache | None, *, name: str = "plate") -> list[LayerData]:
    """The plate as one mosaic per channel: the first field of each well in its row and column
    (empty places where the plate has no well), at every level of the first well's first field
    (napari shows the level that fits the screen and reads only the wells in view)."""
    first = None
    for path in plate:
        well = plate[path]
        if len(well):
            first = well.image(0)
            break
    if first is None:
        return []
    grid = [[None if p is None else _FirstField(plate, p) for p in row] for row in plate.grid()]
    meta = {"zarrbolt": {"path": plate.group.path, "ngff": plate.version, "plate": {
        "rows": list(plate.rows), "columns": list(plate.columns), "wells": [w.path for w in plate.wells]}}}
    return _mosaic_layers(grid, first, cache, plate.name or _group_name(plate.group, name), meta)


class _Field:
    def __init__(self, well: Well, index: int):
        self.well, self.index, self.label = well, index, f"field {well.fields[index].path} of {well.group.name}"

    def __call__(self) -> Image:
        return self.well.image(self.index)


def well_layers(well: Well, cache: BlockCache | None, *, name: str = "well") -> list[LayerData]:
    """A well's fields side by side in a nearly square grid (row by row), as one mosaic."""
    n = len(well)
    if not n:
        return []
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    grid: list[list[Any]] = [[_Field(well, r * cols + c) if r * cols + c < n else None for c in range(cols)]
                             for r in range(rows)]
    meta = {"zarrbolt": {"path": well.group.path, "ngff": well.version, "fields": list(well.field_paths)}}
    return _mosaic_layers(grid, well.image(0), cache, _group_name(well.group, name), meta)


def _group_name(group: Any, fallback: str) -> str:
    return posixpath.basename(group.path.rstrip("/")) or fallback


def array_layers(arr: Any, cache: BlockCache | None, *, name: str = "array") -> list[LayerData]:
    """A plain array as one image layer (its dimension names as axis labels)."""
    kw: dict[str, Any] = {"name": name, "metadata": {"zarrbolt": {"path": arr.path,
                                                                   "zarr_format": arr.metadata.zarr_format}}}
    dims = getattr(arr.metadata, "dimension_names", None)
    if dims and all(isinstance(d, str) and d for d in dims) and len(set(dims)) == len(dims):
        kw["axis_labels"] = list(dims)
    return [(LazyArray(ArraySource(arr, cache)), kw, "image")]


def label_group_layers(group: Any, cache: BlockCache | None) -> list[LayerData]:
    """The label images listed by a ``labels`` group."""
    labels = Labels.of_group(group)
    out: list[LayerData] = []
    for label_name in labels:
        out += label_layers(labels[label_name], cache, name=label_name)
    return out
