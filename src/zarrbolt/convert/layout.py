"""The destination layout of a copy: the source's chunks, shards, codecs, fill value, attributes
and dimension names, changed by the user's options, turned into the destination's metadata.

The metadata is built by the ordinary creation path (:func:`zarrbolt.create_array` into a
throw-away in-memory store), so every rule of chunk grids, codecs and shard multiples is checked
in its usual place; this module adds the one check users meet first and deserve a good message
for: chunks that do not divide the shards (the message lists the valid choices)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import MetadataError

# --compressor NAME[:LEVEL] shorthands -> v3 bytes->bytes codec JSON (typesize filled in by creation)
_COMPRESSORS: dict[str, Callable[[int | None], dict[str, Any] | None]] = {
    "zstd": lambda lvl: {"name": "zstd", "configuration": {"level": 3 if lvl is None else lvl, "checksum": False}},
    "gzip": lambda lvl: {"name": "gzip", "configuration": {"level": 5 if lvl is None else lvl}},
    "blosc-lz4": lambda lvl: _blosc("lz4", 5 if lvl is None else lvl),
    "blosc-zstd": lambda lvl: _blosc("zstd", 3 if lvl is None else lvl),
    "blosc-lz4hc": lambda lvl: _blosc("lz4hc", 5 if lvl is None else lvl),
    "blosc-zlib": lambda lvl: _blosc("zlib", 5 if lvl is None else lvl),
    "none": lambda lvl: None,
}
COMPRESSOR_NAMES = tuple(_COMPRESSORS)


def _blosc(cname: str, level: int) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": level, "shuffle": "shuffle", "blocksize": 0}}


def parse_compressor(spec: str) -> list[dict[str, Any]]:
    """``"zstd:3"``, ``"blosc-lz4"``, ``"none"`` ... as a list of codec JSON (empty for none)."""
    name, _, level = spec.partition(":")
    name = name.strip().lower()
    if name not in _COMPRESSORS:
        raise MetadataError(f"unknown compressor {spec!r}; valid: {', '.join(COMPRESSOR_NAMES)} "
                            "(optionally with :LEVEL, e.g. zstd:3)")
    lvl = None
    if level:
        try:
            lvl = int(level)
        except ValueError:
            raise MetadataError(f"compressor level must be an integer, got {level!r} in {spec!r}") from None
    codec = _COMPRESSORS[name](lvl)
    return [] if codec is None else [codec]


def parse_codec_json(text: str) -> list[Any]:
    """``--codec`` JSON: one codec (v3 ``{"name": ...}`` or numcodecs ``{"id": ...}``) or a list."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise MetadataError(f"--codec is not valid JSON ({e}): {text!r}") from None
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list) or not all(isinstance(c, (dict, str)) for c in obj):
        raise MetadataError(f"--codec must be a codec object or a list of them, got {text!r}")
    return obj


def parse_shape(text: Any, ndim: int, what: str) -> tuple[int, ...] | None:
    """``"64,64,64"`` / ``"64"`` (every dimension) / a sequence; None for ``None``/``"none"``."""
    if text is None:
        return None
    if isinstance(text, str):
        if text.strip().lower() in ("", "none"):
            return None
        try:
            parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
        except ValueError:
            raise MetadataError(f"{what} must be integers separated by commas, got {text!r}") from None
    else:
        parts = [int(p) for p in text]
    if len(parts) == 1 and ndim > 1:
        parts = parts * ndim
    if len(parts) != ndim:
        raise MetadataError(f"{what} {tuple(parts)} has {len(parts)} dimensions; the array has {ndim}")
    if any(p < 1 for p in parts):
        raise MetadataError(f"{what} must be positive, got {tuple(parts)}")
    return tuple(parts)


def _divisors(n: int, limit: int = 12) -> str:
    ds = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    words = [str(d) for d in sorted(set(ds + [n // d for d in ds]))]
    if len(words) > limit:
        words = words[: limit // 2] + ["..."] + words[-limit // 2:]
    return ", ".join(words)


def check_chunks_in_shards(chunks: tuple[int, ...], shards: tuple[int, ...]) -> None:
    """A :class:`MetadataError` naming the valid choices when ``chunks`` do not divide ``shards``."""
    bad = [i for i, (c, s) in enumerate(zip(chunks, shards)) if s % c]
    if not bad:
        return
    lines = [f"chunks {chunks} do not divide shards {shards}: each shard size must be a multiple of the chunk size."]
    for i in bad:
        c, s = chunks[i], shards[i]
        lines.append(f"  dimension {i}: shard {s} / chunk {c}; valid chunk sizes for shard {s}: {_divisors(s)}; "
                     f"valid shard sizes for chunk {c}: {c}, {2 * c}, {3 * c}, ... (e.g. {max(1, round(s / c)) * c})")
    raise MetadataError("\n".join(lines))


@dataclass
class LayoutOptions:
    """What to change in the destination (None everywhere: an exact copy of the layout)."""

    chunks: Any = None          # shape, "64,64,64" or None (the source's)
    shards: Any = "keep"        # shape, "none" (unsharded) or "keep" (the source's)
    codecs: Any = None          # bytes->bytes codecs (list of JSON) replacing the source's compressors
    zarr_format: int | None = None   # 2 or 3 (None: the source's)
    dtype: Any = None           # a new data type (values are converted, checked)


def sharding_asked(opts: LayoutOptions) -> bool:
    """Whether the options ask for a shard shape (which only Zarr v3 has)."""
    shards = opts.shards
    if shards is None:
        return False
    return not (isinstance(shards, str) and shards.strip().lower() in ("keep", "none", ""))


def destination_metadata(src: Any, opts: LayoutOptions) -> Any:
    """The metadata of a copy of ``src`` with the layout ``opts`` (nothing written anywhere)."""
    from ..api.creation import create_array, layout_settings
    from ..storage import MemoryStore

    lay = layout_settings(src)
    ndim = src.ndim
    # sharding needs Zarr v3: asking for shards without a format converts a v2 source to v3
    fmt = opts.zarr_format or (3 if sharding_asked(opts) else src.metadata.zarr_format)
    if fmt not in (2, 3):
        raise MetadataError(f"--format must be 2 or 3, got {fmt!r}")
    chunks = parse_shape(opts.chunks, ndim, "chunks") or tuple(lay["chunks"])
    if isinstance(opts.shards, str) and opts.shards == "keep":
        shards = None if fmt == 2 else lay["shards"]
    else:
        shards = parse_shape(opts.shards, ndim, "shards")
    if shards is not None:
        if fmt == 2:
            raise MetadataError("Zarr v2 has no sharding: drop --shards (or write --format 3)")
        check_chunks_in_shards(chunks, shards)
    dtype = np.dtype(opts.dtype) if opts.dtype is not None else src.dtype
    compressors = lay["compressors"] if opts.codecs is None else opts.codecs
    filters = lay["filters"]
    serializer = lay["serializer"]
    fill = src.fill_value
    if opts.dtype is not None:
        fill = convert_fill(fill, src.dtype, dtype)
        filters, serializer = [], "auto"   # the source's filters and serializer belong to its dtype
        compressors = [_with_typesize(c, dtype.itemsize) for c in compressors]
    kw: dict[str, Any] = {"shape": src.shape, "dtype": dtype, "chunks": chunks, "fill_value": fill,
                          "attributes": dict(src.attrs), "zarr_format": fmt}
    if fmt == 2:
        if len(compressors) > 1:
            raise MetadataError(f"a Zarr v2 array has one compressor; got {len(compressors)}: give --compressor")
        kw.update(compressors=list(compressors), filters=[f for f in filters] or None)
        if src.metadata.zarr_format == 2:
            kw["order"] = src.metadata.order
    else:
        kw.update(shards=shards, filters=list(filters), serializer=serializer, compressors=list(compressors),
                  dimension_names=getattr(src.metadata, "dimension_names", None))
        if src.metadata.zarr_format == 3:
            kw["chunk_key_encoding"] = src.metadata.chunk_key_encoding.to_json()
    return create_array(MemoryStore(), **kw).metadata


def _with_typesize(codec: Any, itemsize: int) -> Any:
    """A compressor's JSON with blosc's ``typesize`` set to the new data type's item size."""
    doc = codec.to_json() if hasattr(codec, "to_json") else codec
    if isinstance(doc, dict) and doc.get("name") == "blosc" and isinstance(doc.get("configuration"), dict):
        doc = {**doc, "configuration": {**doc["configuration"], "typesize": itemsize}}
    return doc


def convert_fill(fill: Any, src: np.dtype, dst: np.dtype) -> Any:
    """The source's fill value in the new data type; an error when it does not fit."""
    value = np.asarray(fill, dtype=src)
    out = cast_values(value.reshape(1), dst, "the fill value")
    return out[0].item()


def cast_values(block: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    """``block`` as ``dtype``: exact for safe casts; otherwise every value must fit (integers:
    within the range, floats to integers: finite and rounded to the nearest); a
    :class:`~zarrbolt.errors.InvalidValueError` naming ``where`` when one does not."""
    from ..errors import InvalidValueError

    src = block.dtype
    if src == dtype:
        return block
    if np.can_cast(src, dtype, "safe"):
        return block.astype(dtype)
    if dtype.kind in "iu" and src.kind in "iufb":
        info = np.iinfo(dtype)
        data = block
        if src.kind == "f":
            if block.size and not np.isfinite(block).all():
                raise InvalidValueError(f"{where}: NaN or infinity cannot be converted to {dtype}")
            data = np.rint(block)
        if data.size:
            lo, hi = data.min(), data.max()
            if lo < info.min or hi > info.max:
                raise InvalidValueError(f"{where}: values {lo}..{hi} do not fit {dtype} ({info.min}..{info.max})")
        return data.astype(dtype)
    if dtype.kind == "f" and src.kind in "iuf":
        with np.errstate(over="ignore"):
            out = block.astype(dtype)
        if src.kind == "f":
            overflow = np.isinf(out) & np.isfinite(block)
        else:
            overflow = np.isinf(out)
        if overflow.any():
            raise InvalidValueError(f"{where}: values overflow {dtype}")
        return out
    raise InvalidValueError(f"{where}: cannot convert {src} to {dtype}")
