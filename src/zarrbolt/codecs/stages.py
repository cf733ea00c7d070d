"""What a codec contributes to the fused C plans (:mod:`zarrbolt.pipeline.plan`).

The plan compiler asks each codec of a bound chain for its part and knows no codec itself:

* bytes->bytes codecs: ``c_decode_step(spec)`` / ``c_encode_step(spec)`` return a :data:`CStep`
  ``(kind, capsule, params)`` and ``c_partial(spec)`` a partial decoder (see
  :class:`~zarrbolt.codecs.abc.BytesToBytesCodec`);
* the array->bytes codec: ``c_byteswap(spec)``, the unit to byte-swap (0: none);
* array->array codecs: ``c_stage(spec_in, spec_out)``, one of the stages below.

Every method returns None where the codec has no C form for that spec; the chain then takes the
per-codec path.  The C side of every step is in ``csrc/include/zarrbolt/stage.h``: function
pointers in capsules exported by the codec's own extension module, with parameter blocks (at most
``zarrbolt._ext._plans.STEP_PARAMS_MAX`` bytes) that its module builds and the plans copy.

A chain compiles when its array->array stages are, in chain order, permutations and elementwise
stages (at most one permutation, the elementwise ones merging into one with
:meth:`ElementwiseStage.then`) followed by array kernels.  Decoding then runs the bytes->bytes
steps last to first, the byte swap, the array kernels last to first on the chunk in stored
order, the elementwise map, and the copy into the output with the permutation folded in;
encoding mirrors it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: ``(kind, capsule, params)``: kind ``"transform"`` with a ``"zarrbolt.bb_fn"`` capsule, or
#: ``"inplace"`` with a ``"zarrbolt.bb_inplace_fn"`` capsule; params the step's parameter block.
CStep = tuple[str, Any, bytes]


@dataclass(frozen=True)
class PermuteStage:
    """A transpose: stored order = decoded.transpose(order).  Folded into the copy between the
    chunk and the array (the gather when encoding, the scatter when decoding)."""

    order: tuple[int, ...]


class ElementwiseStage:
    """An order-independent map of each element (scale_offset, cast_value).  Subclasses (see
    :mod:`zarrbolt.codecs.numeric`) produce the plans' ``elem`` description: a dict with
    ``kind``, ``src`` / ``dst`` dtypes and the map's parameters (``zarrbolt._ext._plans``)."""

    def then(self, other: ElementwiseStage) -> ElementwiseStage | None:
        """This stage followed (in chain order) by ``other`` as one stage, or None when the two
        do not merge (the chain then has no fused plan)."""
        return None

    def decode_elem(self) -> dict[str, Any] | None:
        """The decode plan's elementwise step (from the encoded dtype ``src`` to the decoded one
        ``dst``), or None."""
        return None

    def encode_elem(self) -> dict[str, Any] | None:
        """The encode plan's elementwise step (from the decoded dtype ``src`` to the encoded one
        ``dst``), or None."""
        return None


@dataclass(frozen=True)
class ArrayKernelStage:
    """An order-dependent kernel over a chunk's elements, one contiguous C-order buffer in
    stored order (e.g. a delta filter).  ``decode_fn`` / ``encode_fn``: capsules named
    ``"zarrbolt.aa_fn"`` holding ``zb_status fn(const void *params, const void *src, void *dst,
    size_t nelem)`` (decode: src of ``encoded_dtype``, dst of ``decoded_dtype``; encode the
    reverse; src == dst only when the item sizes are equal); ``params``: their parameter block.
    The chunk's shape is unchanged.  A chain with array kernels decodes whole chunks only."""

    decode_fn: Any
    encode_fn: Any
    params: bytes
    decoded_dtype: Any
    encoded_dtype: Any

    @property
    def decoded_itemsize(self) -> int:
        return as_numpy_dtype(self.decoded_dtype).itemsize

    @property
    def encoded_itemsize(self) -> int:
        return as_numpy_dtype(self.encoded_dtype).itemsize


def as_numpy_dtype(dt: Any) -> np.dtype:
    """A numpy dtype from a numpy dtype (or its spelling) or a zarrbolt DataType."""
    out: np.dtype = np.dtype(getattr(dt, "numpy_dtype", dt))
    return out
