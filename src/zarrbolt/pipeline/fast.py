"""Compiling bound codec chains to the fused C decode plan (``zarrbolt._ext._pipeline``).

A chain ``[transpose] -> bytes -> (blosc | zstd | gzip | crc32c)*`` compiles; anything else
(``None``) takes the general per-codec path.  The fused path decodes a batch of chunks with one
GIL release, straight into the output array."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..codecs.bytes_codec import BytesCodec
from ..codecs.compressors import BloscCodec, GzipCodec, ZstdCodec
from ..codecs.crc32c import Crc32cCodec
from ..codecs.transpose import TransposeCodec
from .. import config
from ..errors import CodecError


def compile_decode_plan(bound: Any) -> Any | None:
    """The C plan for a :class:`~zarrbolt.pipeline.chain.BoundChain`, or None."""
    if not config.get("fused_pipeline"):
        return None
    try:
        from .._ext import _pipeline
    except ImportError:  # pragma: no cover - extension not built
        return None
    chain = bound.chain
    perm = None
    if chain.aa:
        if len(chain.aa) != 1 or not isinstance(chain.aa[0], TransposeCodec):
            return None
        perm = list(chain.aa[0].order)
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
    if len(spec.shape) > _pipeline.MAXDIM or len(steps) > _pipeline.MAXSTEPS:
        return None
    scratch = max([spec.nbytes, *bound.bb_limits]) if bound.bb_limits else spec.nbytes
    swap = 0
    if ab._swap(bound.ab_spec):
        swap = spec.dtype.itemsize // 2 if spec.dtype.kind == "complex" else spec.dtype.itemsize
    partial = None
    if perm is None and len(chain.bb) == 1 and isinstance(chain.bb[0], BloscCodec):
        # planes and small regions decode only the blosc blocks they need
        from .._ext import _blosc2

        partial = (_blosc2.GETITEM_FN, _blosc2.SIZES_FN)
    try:
        return _pipeline.Plan(steps, spec.dtype.itemsize, swap, list(spec.shape), perm, scratch, partial)
    except (ValueError, CodecError):
        return None


def region_offset(starts: Any, strides: Any) -> int:
    return int(np.dot(np.asarray(starts, dtype=np.int64), np.asarray(strides, dtype=np.int64)))
