"""OME-Zarr metadata summed up for people: what ``zarrbolt info`` shows of an OME-Zarr group
instead of its attributes as one JSON line.

:func:`multiscales_summary` reads a group's multiscale images (NGFF 0.4 and 0.5) into a
JSON-ready summary (levels with their shapes, data type, scale and translation; axes with type
and unit), :func:`multiscales_rows` renders it as labelled rows.  Summaries of other OME-Zarr
metadata (plates, wells) sit beside these, one pair of functions each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import NodeNotFoundError, OmeMetadataError
from .metadata import multiscales_of

__all__ = ["OME_KEYS", "multiscales_rows", "multiscales_summary"]

# the attribute keys a summary stands for (0.5 keeps everything under "ome")
OME_KEYS = ("ome", "multiscales", "omero")


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def multiscales_summary(group: Any) -> dict[str, Any] | None:
    """The multiscale images of ``group``'s OME-Zarr metadata, or None when it has none.

    Parameters
    ----------
    group : Group
        Any group; one without ``multiscales`` (an OME-Zarr image's) gives None.

    Returns
    -------
    dict or None
        ``{"version", "images": [{"name", "axes": [{"name", "type", "unit"}], "levels":
        [{"path", "shape", "dtype", "scale", "translation"}], "type"}]}``; metadata that does not
        parse gives ``{"error": why}``.
    """
    attrs = dict(group.attrs)
    ome = attrs.get("ome")
    if "multiscales" not in attrs and not (isinstance(ome, Mapping) and "multiscales" in ome):
        return None
    try:
        version, multiscales, _ome = multiscales_of(attrs)
    except OmeMetadataError as e:
        return {"error": str(e)}
    images = []
    for ms in multiscales:
        levels = []
        for path, scale, translation in zip(ms.paths, ms.scales, ms.translations):
            level: dict[str, Any] = {"path": path, "scale": [_number(s) for s in scale],
                                     "translation": [_number(t) for t in translation]}
            try:
                arr = group[path]
                level.update(shape=list(arr.shape), dtype=str(arr.dtype))
            except (KeyError, NodeNotFoundError, AttributeError) as e:
                level["error"] = f"not an array: {e}"
            levels.append(level)
        images.append({"name": ms.name, "type": ms.type,
                       "axes": [{"name": a.name, "type": a.type, "unit": a.unit} for a in ms.axes],
                       "levels": levels})
    return {"version": version, "images": images}


def _tuple(xs: Any) -> str:
    """``(2, 0.65, 0.65)``: numbers shortened to 6 significant digits."""
    return "(" + ", ".join(f"{x:.6g}" for x in xs) + ("," if len(xs) == 1 else "") + ")"


def multiscales_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, text)`` rows of a :func:`multiscales_summary`, for a two-column listing."""
    if "error" in summary:
        return [("OME-Zarr", f"multiscales that do not parse: {summary['error']}")]
    rows = []
    for i, img in enumerate(summary["images"]):
        name = f" {img['name']!r}" if img.get("name") else ""
        method = f", downsampled by {img['type']}" if img.get("type") else ""
        which = f" {i}" if len(summary["images"]) > 1 else ""
        rows.append((f"OME-Zarr image{which}", f"multiscale{name}, NGFF {summary['version']}, "
                                               f"{len(img['levels'])} level(s){method}"))
        axes = []
        for a in img["axes"]:
            extra = ", ".join(x for x in (a.get("type"), a.get("unit")) if x)
            axes.append(f"{a['name']} ({extra})" if extra else a["name"])
        rows.append(("  Axes", ", ".join(axes)))
        for lv in img["levels"]:
            if "error" in lv:
                rows.append((f"  Level {lv['path']}", lv["error"]))
                continue
            rows.append((f"  Level {lv['path']}", f"shape {tuple(lv['shape'])} {lv['dtype']}, scale "
                                                  f"{_tuple(lv['scale'])}"
                         + (f", translation {_tuple(lv['translation'])}" if any(lv["translation"]) else "")))
    return rows
