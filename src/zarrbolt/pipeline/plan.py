"""Compiling bound codec chains to the fused C plans (``zarrbolt._ext._plans``).

Each codec contributes its own part (:mod:`zarrbolt.codecs.stages`): this module only walks the
chain and knows no codec.  A chain compiles when

* its array->array codecs give, in chain order, permutation and elementwise stages (at most one
  permutation; the elementwise ones merge into one) followed by array kernels,
* its array->bytes codec gives a byte swap (``c_byteswap``),
* each bytes->bytes codec gives a step (``c_decode_step`` / ``c_encode_step``);

anything else (``None``) takes the general per-codec path.  The fused path decodes a batch of
chunks with one GIL release, straight into the output array, and encodes likewise."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import config
from ..codecs.stages import ArrayKernelStage, ElementwiseStage, PermuteStage, as_numpy_dtype as _np_dtype
from ..errors import CodecError


class _Stages(NamedTuple):
    """A chain's array->array stages, sorted out."""

    perm: list[int] | None  # the permutation, or None
    elem: ElementwiseStage | None  # the merged elementwise stage, or None
    mid: np.dtype  # the dtype between the elementwise stage and the kernels
    kernels: list[ArrayKernelStage]  # in chain order


def _plans_module() -> Any:
    if not config.get("fused_pipeline"):
        return None
    try:
        from .._ext import _plans
    except ImportError:  # pragma: no cover - extension not built
        return None
    return _plans


def _array_stages(bound: Any) -> _Stages | None:
    """The array->array codecs' stages, or None when one has none or they are out of order."""
    chain = bound.chain
    perm: list[int] | None = None
    elem: ElementwiseStage | None = None
    mid = bound.spec.dtype.numpy_dtype
    kernels: list[ArrayKernelStage] = []
    outs = (*bound.aa_specs[1:], bound.ab_spec)
    for codec, spec_in, spec_out in zip(chain.aa, bound.aa_specs, outs):
        stage = codec.c_stage(spec_in, spec_out)
        if isinstance(stage, ArrayKernelStage):
            if (spec_in.shape != spec_out.shape or _np_dtype(stage.decoded_dtype) != spec_in.dtype.numpy_dtype
                    or _np_dtype(stage.encoded_dtype) != spec_out.dtype.numpy_dtype):
                return None
            kernels.append(stage)
            continue
        if kernels:  # permutations and elementwise maps come before the kernels
            return None
        if isinstance(stage, PermuteStage) and perm is None:
            perm = list(stage.order)
        elif isinstance(stage, ElementwiseStage):
            elem = stage if elem is None else elem.then(stage)
            if elem is None:
                return None
        else:
            return None
        mid = spec_out.dtype.numpy_dtype
    return _Stages(perm, elem, mid, kernels)


def _elem_dict(stages: _Stages, decode: bool) -> dict[str, Any] | None | bool:
    """The plan's elementwise step (None: none), or False when the stage has no C form here."""
    if stages.elem is None:
        return None
    try:
        elem = stages.elem.decode_elem() if decode else stages.elem.encode_elem()
    except (TypeError, ValueError):  # a dtype or option the numeric kernels do not handle
        return False
    if elem is None or np.dtype(elem["src" if decode else "dst"]) != stages.mid:
        return False
    return elem


def _kernel_args(stages: _Stages, decode: bool) -> list[tuple[Any, ...]]:
    return [(k.decode_fn if decode else k.encode_fn, k.params, k.decoded_itemsize, k.encoded_itemsize)
            for k in stages.kernels]


def compile_decode_plan(bound: Any) -> Any | None:
    """The C decode plan of a :class:`~zarrbolt.codecs.chain.BoundChain`, or None."""
    _plans = _plans_module()
    stages = _array_stages(bound) if _plans is not None else None
    if stages is None:
        return None
    chain, spec, stored = bound.chain, bound.spec, bound.ab_spec
    swap = chain.ab.c_byteswap(stored)
    elem = _elem_dict(stages, True)
    if swap is None or elem is False:
        return None
    steps = [c.c_decode_step(s) for c, s in zip(chain.bb, bound.bb_specs)]
    if None in steps or len(spec.shape) > _plans.MAXDIM or len(steps) > _plans.MAXSTEPS:
        return None
    scratch = max([spec.nbytes, stored.nbytes, *bound.bb_limits, *(s.nbytes for s in bound.aa_specs)])
    # partial decodes: the only bytes->bytes codec decodes the part of the chunk a region needs (a
    # transposed chunk's region spans the stored bytes from its first to its last element in
    # stored order: they apply to it as well); never through array kernels
    partial = None
    if len(chain.bb) == 1 and not stages.kernels:
        partial = chain.bb[0].c_partial(bound.bb_specs[0])
    try:
        return _plans.Plan(steps, stored.dtype.itemsize, swap, list(spec.shape), stages.perm, scratch, partial,
                              elem, _kernel_args(stages, True))
    except (ValueError, TypeError, CodecError, OverflowError):
        # OverflowError: a chunk whose size does not fit a size_t (no plan; reading or writing
        # such a chunk is a ChunkMemoryError, see zarrbolt.array)
        return None


def compile_encode_plan(bound: Any, skip_fill: bool) -> Any | None:
    """The C encode plan (``zarrbolt._ext._plans.EncodePlan``) of a bound chain, for writing
    whole chunks, or None (the chain takes the per-codec path).  ``skip_fill``: chunks equal to
    the fill value are left out (write_empty_chunks false)."""
    _plans = _plans_module()
    stages = _array_stages(bound) if _plans is not None else None
    if stages is None:
        return None
    chain, spec, stored = bound.chain, bound.spec, bound.ab_spec
    dt = spec.dtype.numpy_dtype
    if dt.kind not in "biufcmM" or dt.hasobject or dt.itemsize > _plans.ENC_MAXITEM or not dt.isnative:
        return None
    swap = chain.ab.c_byteswap(stored)
    elem = _elem_dict(stages, False)
    if swap is None or elem is False:
        return None
    steps = [c.c_encode_step(s) for c, s in zip(chain.bb, bound.bb_specs)]
    if None in steps or len(spec.shape) > _plans.ENC_MAXDIM or len(steps) > _plans.ENC_MAXSTEPS:
        return None
    # every buffer holds the chunk (as every stage's elements), each step's output and the
    # crc32c steps' 4 bytes
    n = stored.nbytes
    cap = max([n, spec.nbytes, *(s.nbytes for s in bound.aa_specs)])
    for c in chain.bb:
        n = c.max_encoded_size(n)
        cap = max(cap, n)
    fill = np.asarray(spec.fill_value, dtype=dt).tobytes()
    try:
        return _plans.EncodePlan(steps, dt.itemsize, swap, list(spec.shape), stages.perm, fill, skip_fill, cap,
                                    elem, _kernel_args(stages, False))
    except (ValueError, TypeError, OverflowError):  # OverflowError: as in compile_decode_plan
        return None
