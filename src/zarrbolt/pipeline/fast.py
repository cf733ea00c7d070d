"""Compiling bound codec chains to the fused C decode plan (``zarrbolt._ext._pipeline``).

A chain ``[scale_offset] [cast_value] [transpose] -> bytes -> (blosc | zstd | gzip | crc32c)*``
compiles (the transpose at any place among the array->array codecs); anything else (``None``)
takes the general per-codec path.  The fused path decodes a batch of chunks with one
GIL release, straight into the output array."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..codecs.bytes_codec import BytesCodec
from ..codecs.compressors import BloscCodec, GzipCodec, ZstdCodec
from ..codecs.crc32c import Crc32cCodec
from ..codecs.numeric import CastValueCodec, ScaleOffsetCodec
from ..codecs.transpose import TransposeCodec
from .. import config
from ..errors import CodecError


def _plan_start(bound: Any) -> tuple[Any, list[int] | None, list[tuple[Any, Any]]] | None:
    """What both plans start from: ``(zarrbolt._ext._pipeline, the transpose's order or None,
    [(scale_offset / cast_value codec, the spec on its decoded side)] in chain order)``; None when
    the fused pipeline is off (config ``fused_pipeline``) or the chain has other array->array
    codecs (or two transposes)."""
    if not config.get("fused_pipeline"):
        return None
    try:
        from .._ext import _pipeline
    except ImportError:  # pragma: no cover - extension not built
        return None
    perm = None
    numeric: list[tuple[Any, Any]] = []
    for codec, spec_i in zip(bound.chain.aa, bound.aa_specs):
        if type(codec) is TransposeCodec and perm is None:
            perm = list(codec.order)
        elif type(codec) in (ScaleOffsetCodec, CastValueCodec):
            numeric.append((codec, spec_i))
        else:
            return None
    return _pipeline, perm, numeric


def _swap_unit(bound: Any) -> int:
    """The units the bytes codec byte-swaps (0: none; complex numbers swap each half)."""
    stored = bound.ab_spec.dtype
    if not bound.chain.ab._swap(bound.ab_spec):
        return 0
    return stored.itemsize // 2 if stored.kind == "complex" else stored.itemsize


def compile_decode_plan(bound: Any) -> Any | None:
    """The C plan for a :class:`~zarrbolt.pipeline.chain.BoundChain`, or None."""
    start = _plan_start(bound)
    if start is None:
        return None
    _pipeline, perm, numeric = start
    chain = bound.chain
    try:
        elem = _elementwise(numeric, bound.ab_spec)
    except TypeError:  # a dtype the numeric kernels do not handle
        return None
    if numeric and elem is None:
        return None
    ab = chain.ab
    if not isinstance(ab, BytesCodec):
        return None
    steps: list[tuple[str, Any]] = []
    for c in chain.bb:
        if isinstance(c, Crc32cCodec):
            steps.append(("crc32c", None))
        elif isinstance(c, BloscCodec):
            from .._ext import _blosc2

            steps.append(("decompress", _blosc2.DECOMPRESS_FN))
        elif isinstance(c, ZstdCodec):
            from .._ext import _codecs

            steps.append(("decompress", _codecs.ZSTD_DECOMPRESS_FN))
        elif isinstance(c, GzipCodec):
            from .._ext import _codecs

            steps.append(("decompress", _codecs.GZIP_DECOMPRESS_FN))
        else:
            return None
    spec = bound.spec
    stored = bound.ab_spec.dtype  # the elements the bytes codec sees
    if len(spec.shape) > _pipeline.MAXDIM or len(steps) > _pipeline.MAXSTEPS:
        return None
    scratch = max([spec.nbytes, bound.ab_spec.nbytes, *bound.bb_limits])
    swap = _swap_unit(bound)
    partial = None
    # (a transposed chunk's region spans the stored bytes from its first to its last element in
    # stored order: partial decodes apply to it as well)
    if len(chain.bb) == 1 and isinstance(chain.bb[0], BloscCodec):
        # planes and small regions decode only the blosc blocks they need
        from .._ext import _blosc2

        partial = (_blosc2.GETITEM_FN, _blosc2.SIZES_FN)
    elif len(chain.bb) == 1 and isinstance(chain.bb[0], (GzipCodec, ZstdCodec)):
        # a region ending early in the chunk stops decoding soon after its last byte
        from .._ext import _codecs

        partial = (_codecs.GZIP_PREFIX_FN if isinstance(chain.bb[0], GzipCodec) else _codecs.ZSTD_PREFIX_FN,)
    try:
        return _pipeline.Plan(steps, stored.itemsize, swap, list(spec.shape), perm, scratch, partial, elem)
    except (ValueError, TypeError, CodecError):
        return None


def _elementwise(numeric: list[tuple[Any, Any]], stored_spec: Any) -> dict | None:
    """The plan's elementwise decode step for the scale_offset / cast_value codecs of a chain
    (in chain order, with the spec on each one's decoded side): None when there are none or
    they do not form scale_offset, cast_value or scale_offset followed by cast_value."""
    from .._ext import _numeric

    kinds = [type(c) for c, _ in numeric]
    if not numeric or kinds not in ([ScaleOffsetCodec], [CastValueCodec], [ScaleOffsetCodec, CastValueCodec]):
        return None
    elem: dict[str, Any] = {"src": stored_spec.dtype.numpy_dtype}
    if kinds[0] is ScaleOffsetCodec:
        so, so_spec = numeric[0]
        elem["offset"], elem["scale"] = so.params(so_spec.dtype)
        elem["dst"] = so_spec.dtype.numpy_dtype
    if kinds[-1] is CastValueCodec:
        cv, cv_spec = numeric[-1]
        target = cv_spec.dtype
        oor = cv._kernel_out_of_range()
        if oor == "wrap" and target.kind not in ("int", "uint"):
            oor = None  # as CastValueCodec.decode: wrap applies to the integer side only
        _, dec_map = cv.maps(target)
        rcode, ocode, map_in, map_out = _numeric.cast_options(
            cv.rounding, oor, dec_map, cv.data_type.numpy_dtype, target.numpy_dtype)
        elem.update(rounding=rcode, out_of_range=ocode, map_in=map_in, map_out=map_out, dst=target.numpy_dtype)
        if cv.data_type.numpy_dtype != elem["src"]:
            return None
    elem["kind"] = {(ScaleOffsetCodec,): "scale_offset", (CastValueCodec,): "cast",
                    (ScaleOffsetCodec, CastValueCodec): "cast+scale_offset"}[tuple(kinds)]
    return elem


def region_offset(starts: Any, strides: Any) -> int:
    return int(np.dot(np.asarray(starts, dtype=np.int64), np.asarray(strides, dtype=np.int64)))


def compile_encode_plan(bound: Any, skip_fill: bool) -> Any | None:
    """The C encode plan (``zarrbolt._ext._pipeline.EncodePlan``) of a ``[scale_offset]
    [cast_value] [transpose] -> bytes -> (blosc | zstd | gzip | crc32c)*`` chain bound to a chunk
    spec (the transpose at any place among the array->array codecs), for writing whole chunks;
    None for any other chain (it takes the per-codec path).
    ``skip_fill``: chunks equal to the fill value are left out (write_empty_chunks false)."""
    start = _plan_start(bound)
    if start is None:
        return None
    _pipeline, perm, numeric = start
    chain = bound.chain
    ab = chain.ab
    if type(ab) is not BytesCodec:
        return None
    spec = bound.spec
    dt = spec.dtype.numpy_dtype
    if dt.kind not in "biufcmM" or dt.hasobject or dt.itemsize > _pipeline.ENC_MAXITEM or not dt.isnative:
        return None
    elem = None
    if numeric:
        try:
            elem = _elementwise_encode(numeric, bound.ab_spec)
        except (TypeError, ValueError):  # a dtype or option the numeric kernels do not handle
            return None
        if elem is None:
            return None
    if len(spec.shape) > _pipeline.ENC_MAXDIM or len(chain.bb) > _pipeline.ENC_MAXSTEPS:
        return None
    steps: list[tuple] = []
    for c in chain.bb:
        if type(c) is Crc32cCodec:
            steps.append(("crc32c",))
        elif type(c) is BloscCodec:
            from .._ext import _blosc1

            steps.append(("compress", _blosc1.COMPRESS_FN, c.encode_params(bound.ab_spec)))
        elif type(c) is ZstdCodec:
            from .._ext import _codecs

            steps.append(("compress", _codecs.ZSTD_COMPRESS_FN, {"level": c.level, "checksum": c.checksum}))
        elif type(c) is GzipCodec:
            from .._ext import _codecs

            steps.append(("compress", _codecs.GZIP_COMPRESS_FN, {"level": c.level}))
        else:
            return None
    swap = _swap_unit(bound)
    # every buffer holds the chunk (as the array's and as the stored elements), each step's
    # output and the crc32c steps' 4 bytes
    n = bound.ab_spec.nbytes
    cap = max(n, spec.nbytes)
    for c in chain.bb:
        n = c.max_encoded_size(n)
        cap = max(cap, n)
    fill = np.asarray(spec.fill_value, dtype=dt).tobytes()
    try:
        return _pipeline.EncodePlan(steps, dt.itemsize, swap, list(spec.shape), perm, fill, skip_fill, cap, elem)
    except (ValueError, TypeError):
        return None


def _elementwise_encode(numeric: list[tuple[Any, Any]], stored_spec: Any) -> dict | None:
    """The encode plan's elementwise step for the scale_offset / cast_value codecs of a chain (in
    chain order, with the spec on each one's decoded side), from the array's dtype to the stored
    one: what ScaleOffsetCodec.encode / CastValueCodec.encode / CastValueCodec.fused_encode do.
    None when they do not form scale_offset, cast_value or scale_offset followed by cast_value."""
    from .._ext import _numeric

    kinds = [type(c) for c, _ in numeric]
    if kinds not in ([ScaleOffsetCodec], [CastValueCodec], [ScaleOffsetCodec, CastValueCodec]):
        return None
    src = numeric[0][1].dtype.numpy_dtype  # the array's elements
    elem: dict[str, Any] = {"src": src, "dst": src}
    if kinds[0] is ScaleOffsetCodec:
        so, so_spec = numeric[0]
        elem["offset"], elem["scale"] = so.params(so_spec.dtype)
    if kinds[-1] is CastValueCodec:
        cv, cv_spec = numeric[-1]
        target = cv.data_type.numpy_dtype
        oor = cv._kernel_out_of_range()
        if oor == "wrap" and target.kind not in "iu":
            oor = None  # as CastValueCodec._cast: wrap applies to the integer side only
        enc_map, _ = cv.maps(cv_spec.dtype)
        rcode, ocode, map_in, map_out = _numeric.cast_options(cv.rounding, oor, enc_map, src, target)
        elem.update(rounding=rcode, out_of_range=ocode, map_in=map_in, map_out=map_out, dst=target)
    if np.dtype(elem["dst"]) != stored_spec.dtype.numpy_dtype:
        return None
    elem["kind"] = {(ScaleOffsetCodec,): "scale_offset", (CastValueCodec,): "cast",
                    (ScaleOffsetCodec, CastValueCodec): "cast+scale_offset"}[tuple(kinds)]
    return elem
