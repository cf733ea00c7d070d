"""Writing OME-Zarr (NGFF 0.5, Zarr v3) pyramids: :func:`write_image` and :func:`write_label`.

The pyramid is written block by block (a block is a shard, or a chunk when unsharded), so a
volume larger than memory works.  Normally every level is written in one pass over the source
(:mod:`zarrbolt.ome.cascade`): a block of level k is made from the level k - 1 blocks it covers,
produced just before and halved in C (:mod:`zarrbolt.ome.downsample`); the source is read once
(``np.asarray(data[block])``: a numpy array, a zarrbolt array, a dask array computed block by
block, or anything sliceable) and nothing is read back.  Memory: at most one block per level
(higher levels' blocks are often smaller, clipped to the level) plus the block being halved,
on top of what zarrbolt needs to write one block and the source to produce one.

When a level's blocks have an odd size along a halved axis (odd chunk/shard shapes) their
windows would straddle blocks, and the levels are written one after the other instead, each
read back in pieces of whole chunks whose input is at most one block (about 2.5 blocks).  The
group's NGFF metadata is written last: an interrupted write leaves no group that reads as a
complete image.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import OmeMetadataError
from .cascade import Cascade, aligned
from .downsample import check_method, default_threads, downsample
from .metadata import Axis, multiscale_json, parse_axes
from .pyramid import LevelPlan, blocks, normalize_layout, plan_levels, source_region
from .reader import Image, image_from_group, open_image

__all__ = ["IMAGE_OPTIONS", "check_image_options", "write_image", "write_label"]

Progress = Callable[[int, int, int], None]  # (level, blocks done, blocks of the level): (k, 0, n) first


def _shape_dtype(data: Any) -> tuple[Any, tuple[int, ...], np.dtype]:
    if not (hasattr(data, "shape") and hasattr(data, "dtype") and hasattr(data, "__getitem__")):
        data = np.asarray(data)
    return data, tuple(int(n) for n in data.shape), np.dtype(data.dtype)


def _create_level(group: Any, path: str, lp: LevelPlan, dtype: np.dtype, axes: Sequence[Axis],
                  compressors: Any, fill_value: Any) -> Any:
    return group.create_array(
        path, shape=lp.shape, dtype=dtype, chunks=lp.chunks, shards=lp.shards, compressors=compressors,
        dimension_names=[a.name for a in axes], fill_value=fill_value, overwrite=True,
    )


def _copy_level0(src: Any, dst: Any, lp: LevelPlan, progress: Progress | None) -> None:
    regions = list(blocks(lp.shape, lp.block))
    for i, region in enumerate(regions):
        dst[region] = np.asarray(src[region])
        if progress:
            progress(0, i + 1, len(regions))


def _piece_shape(lp: LevelPlan) -> tuple[int, ...]:
    """The output piece computed at once inside a block: the block cut down to one chunk along
    its first axes until the piece's input (2^h times its size) is no larger than one block (or
    every axis is one chunk).  Pieces are whole chunks, so their inputs are whole chunks of the
    level above: nothing is decoded twice."""
    piece = list(lp.block)
    factor = 2 ** sum(lp.halve)
    block_elems = math.prod(lp.block)
    for i, c in enumerate(lp.chunks):
        if factor * math.prod(piece) <= block_elems:
            break
        piece[i] = min(piece[i], c)
    return tuple(piece)


def _downsample_level(src: Any, dst: Any, lp: LevelPlan, method: str, threads: int, level: int,
                      progress: Progress | None) -> None:
    regions = list(blocks(lp.shape, lp.block))
    piece = _piece_shape(lp)
    for i, region in enumerate(regions):
        oshape = tuple(s.stop - s.start for s in region)
        if piece == lp.block:
            out = downsample(src[source_region(region, lp.halve, src.shape)], lp.halve, method, threads=threads)
        else:
            out = np.empty(oshape, dtype=dst.dtype)
            for local in blocks(oshape, piece):
                sub = tuple(slice(r.start + s.start, r.start + s.stop) for r, s in zip(region, local))
                out[local] = downsample(src[source_region(sub, lp.halve, src.shape)], lp.halve, method,
                                        threads=threads)
        dst[region] = out
        if progress:
            progress(level, i + 1, len(regions))


def _write_pyramid(group: Any, data: Any, dtype: np.dtype, axes: Sequence[Axis], plans: Sequence[LevelPlan],
                   method: str, compressors: Any, fill_value: Any, threads: int,
                   progress: Progress | None) -> list[str]:
    paths = [str(k) for k in range(len(plans))]
    arrays = [_create_level(group, paths[k], lp, dtype, axes, compressors, fill_value) for k, lp in enumerate(plans)]
    if progress:  # every level's block count first (the one-pass writer interleaves the levels)
        for k, lp in enumerate(plans):
            progress(k, 0, sum(1 for _ in blocks(lp.shape, lp.block)))
    if aligned(plans):  # one pass over the source, nothing read back
        Cascade(data, arrays, plans, method, threads, progress).run()
        return paths
    for k, lp in enumerate(plans):  # odd block sizes: level by level, each read back
        if k == 0:
            _copy_level0(data, arrays[0], lp, progress)
        else:
            _downsample_level(arrays[k - 1], arrays[k], lp, method, threads, k, progress)
    return paths


def _prepare(data: Any, axes: Any, units: Any, method: str, chunks: Any, shards: Any, levels: Any,
             downsample_axes: Any, scale: Any, translation: Any) -> tuple[Any, np.dtype, tuple[Axis, ...], list[Any]]:
    data, shape, dtype = _shape_dtype(data)
    ax = parse_axes(axes, len(shape), units)
    check_method(method, dtype)
    ch, sh = normalize_layout(shape, ax, chunks, shards)
    plans = plan_levels(shape, ax, ch, sh, levels=levels, downsample_axes=downsample_axes, scale=scale,
                        translation=translation, method=method)
    return data, dtype, ax, plans


#: The keyword arguments of :func:`write_image` that describe the image (what a plate's fields take),
#: with their defaults.
IMAGE_OPTIONS: dict[str, Any] = {
    "axes": None, "units": None, "scale": None, "translation": None, "chunks": None, "shards": "auto",
    "levels": None, "method": "mean", "downsample_axes": None, "name": None, "omero": None,
    "compressors": "auto", "fill_value": None, "threads": None,
}


def check_image_options(data: Any, options: Mapping[str, Any]) -> None:
    """Raise what :func:`write_image` (``data``, ``**options``) would refuse, before anything is
    written: unknown options (``TypeError``), bad axes, units, layout, levels or method
    (:class:`OmeMetadataError`)."""
    unknown = sorted(set(options) - set(IMAGE_OPTIONS))
    if unknown:
        raise TypeError(f"unknown image options {unknown}; known: {sorted(IMAGE_OPTIONS)}")
    o = {**IMAGE_OPTIONS, **options}
    _prepare(data, o["axes"], o["units"], o["method"], o["chunks"], o["shards"], o["levels"], o["downsample_axes"],
             o["scale"], o["translation"])
    if o["omero"] is not None and not isinstance(o["omero"], Mapping):
        raise OmeMetadataError(f"omero must be a mapping, got {type(o['omero']).__name__}")


def write_image(
    store: Any,
    data: Any,
    *,
    path: str | None = None,
    axes: Any = None,
    units: Any = None,
    scale: Any = None,
    translation: Any = None,
    chunks: Any = None,
    shards: Any = "auto",
    levels: int | None = None,
    method: str = "mean",
    downsample_axes: Sequence[str] | None = None,
    name: str | None = None,
    omero: Mapping[str, Any] | None = None,
    compressors: Any = "auto",
    fill_value: Any = None,
    overwrite: bool = False,
    threads: int | None = None,
    storage_options: Any = None,
    progress: Progress | None = None,
    _extra: Mapping[str, Any] | None = None,
) -> Image:
    """Write ``data`` (numpy, zarrbolt or dask array, or anything with shape, dtype and slicing)
    as an OME-Zarr NGFF 0.5 multiscale image (a Zarr v3 group, levels ``"0"``, ``"1"``, ...).

    ``axes``: ``"tczyx"``-style letters, names or dicts (default by dimension: ``yx``, ``zyx``,
    ``czyx``, ``tczyx``); ``units``: one unit for every space axis or a mapping name → unit;
    ``scale``/``translation``: level 0's pixel size and offset (per axis or one number).
    ``chunks`` (default 64 per space axis for 3-d, 256 for 2-d, 1 elsewhere), ``shards``
    (``"auto"``: 4 chunks per space axis; None: unsharded), ``levels`` (default: until the
    halved axes fit one chunk), ``method``: mean, nearest, min, max or mode; ``downsample_axes``
    (default the space axes).  ``path``: the image group's path in ``store`` (missing parent
    groups are created).  An existing node there is an error unless ``overwrite``.
    Returns the written image, opened."""
    from ..api.opening import create_group

    data, dtype, ax, plans = _prepare(data, axes, units, method, chunks, shards, levels, downsample_axes,
                                      scale, translation)
    if omero is not None and not isinstance(omero, Mapping):
        raise OmeMetadataError(f"omero must be a mapping, got {type(omero).__name__}")
    group = create_group(store, path=path, overwrite=overwrite, storage_options=storage_options)
    nthreads = default_threads() if threads is None else int(threads)
    paths = _write_pyramid(group, data, dtype, ax, plans, method, compressors, fill_value, nthreads, progress)
    ms = multiscale_json(ax, paths, [p.scale for p in plans], [p.translation for p in plans], name=name,
                         method=method)
    ome: dict[str, Any] = {"version": "0.5", "multiscales": [ms]}
    if omero is not None:
        ome["omero"] = dict(omero)
    if _extra:
        ome.update(_extra)
    group.update_attributes({"ome": ome})
    return image_from_group(group)


def _label_colors(colors: Any) -> list[dict[str, Any]]:
    if isinstance(colors, Mapping):
        colors = [{"label-value": k, "rgba": list(v)} for k, v in colors.items()]
    out = []
    for c in colors:
        v, rgba = c.get("label-value"), c.get("rgba")
        ok_v = isinstance(v, (int, float)) and not isinstance(v, bool)
        ok_rgba = (rgba is None or (isinstance(rgba, (list, tuple)) and len(rgba) == 4
                                    and all(isinstance(x, int) and 0 <= x <= 255 for x in rgba)))
        if not (ok_v and ok_rgba):
            raise OmeMetadataError(f"label color {c!r}: needs a numeric 'label-value' and 'rgba' of 4 ints 0-255")
        out.append({"label-value": v, "rgba": list(rgba)} if rgba is not None else {"label-value": v})
    return out


def write_label(image: Any, name: str, data: Any, *, colors: Any = None, properties: Sequence[Any] | None = None,
                method: str = "mode", chunks: Any = None, shards: Any = "auto", overwrite: bool = False,
                threads: int | None = None, storage_options: Any = None, progress: Progress | None = None) -> Image:
    """Write ``data`` (an integer array of level 0's shape) as label image ``name`` of ``image``
    (an :class:`Image`, a path or URL): ``labels/<name>``, a multiscale with the image's axes,
    scales, translations and number of levels, downsampled by ``method`` (default ``mode``);
    ``colors``: mapping value → RGBA or NGFF color dicts; ``properties``: NGFF property dicts.
    The labels group's list of names is updated."""
    img = image if isinstance(image, Image) else open_image(image, mode="a", storage_options=storage_options)
    if img.version != "0.5" or img.group.metadata.zarr_format != 3:
        raise OmeMetadataError(f"write_label writes NGFF 0.5 labels (Zarr v3); {img.group.name} is an NGFF "
                               f"{img.version} image: convert it with `zarrbolt pyramid` first")
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        raise OmeMetadataError(f"label name must be a plain non-empty name, got {name!r}")
    data, shape, dtype = _shape_dtype(data)
    if shape != img.shapes[0]:
        raise OmeMetadataError(f"label {name!r} has shape {shape}; the image's level 0 is {img.shapes[0]}")
    if dtype.kind not in "iu":
        raise OmeMetadataError(f"label {name!r} must hold integers, not {dtype}")
    from ..api.opening import open_group

    labels = open_group(img.group.store, path=_child(img.group.path, "labels"), mode="a")
    existing = labels.attrs.asdict().get("ome", {}).get("labels", [])
    extra: dict[str, Any] = {"image-label": {"source": {"image": "../../"}}}
    if colors is not None:
        extra["image-label"]["colors"] = _label_colors(colors)
    if properties is not None:
        extra["image-label"]["properties"] = [dict(p) for p in properties]
    out = _write_label_group(labels, name, data, img, extra, method, chunks, shards, overwrite, threads, progress)
    labels.update_attributes({"ome": {"version": "0.5", "labels": sorted(set(existing) | {name})}})
    return out


def _child(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _halved_axes(img: Image) -> list[str]:
    """The axes the image's pyramid halves (those whose size changes between levels 0 and 1)."""
    if len(img) < 2:
        return []
    return [a.name for a, n0, n1 in zip(img.axes, img.shapes[0], img.shapes[1]) if n1 < n0]


def _write_label_group(labels: Any, name: str, data: Any, img: Image, extra: dict[str, Any], method: str,
                       chunks: Any, shards: Any, overwrite: bool, threads: int | None,
                       progress: Progress | None) -> Image:
    from ..api.opening import create_group

    store, path = labels.store, _child(labels.path, name)
    data, shape, dtype = _shape_dtype(data)
    check_method(method, dtype)
    ax = tuple(img.axes)
    ch, sh = normalize_layout(shape, ax, chunks, shards)
    plans = plan_levels(shape, ax, ch, sh, levels=len(img), downsample_axes=_halved_axes(img),
                        scale=img.scales[0], translation=img.translations[0], method="nearest")
    # the label pyramid's geometry is the image's (its scales and translations, level by level)
    plans = [LevelPlan(p.shape, p.chunks, p.shards, p.halve, s, t)
             for p, s, t in zip(plans, img.scales, img.translations)]
    group = create_group(store, path=path, overwrite=overwrite)
    nthreads = default_threads() if threads is None else int(threads)
    paths = _write_pyramid(group, data, dtype, ax, plans, method, "auto", 0, nthreads, progress)
    ms = multiscale_json(ax, paths, [p.scale for p in plans], [p.translation for p in plans], name=name,
                         method=method)
    ome = {"version": "0.5", "multiscales": [ms], **extra}
    group.update_attributes({"ome": ome})
    return image_from_group(group)
