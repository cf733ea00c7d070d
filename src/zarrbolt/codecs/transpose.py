"""The ``transpose`` codec (array -> array), using the cache-blocked C transpose kernel."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernels
from ..errors import MetadataError
from .abc import ArrayToArrayCodec, ChunkSpec
from .registry import register_codec
from .stages import PermuteStage
from ._util import config_dict


@register_codec
class TransposeCodec(ArrayToArrayCodec):
    name = "transpose"

    def __init__(self, order: Any):
        if isinstance(order, str) or not isinstance(order, (list, tuple)):
            raise MetadataError(f"codec 'transpose': order must be an array of integers, got {order!r}")
        for o in order:
            if isinstance(o, bool) or not isinstance(o, (int, np.integer)):
                raise MetadataError(f"codec 'transpose': order must contain integers, got {o!r}")
        order = tuple(int(o) for o in order)
        if sorted(order) != list(range(len(order))):
            raise MetadataError(f"codec 'transpose': order {list(order)} is not a permutation of 0..{len(order) - 1}")
        self.order = order
        self.inverse = tuple(int(i) for i in np.argsort(order)) if order else ()

    @classmethod
    def from_json(cls, configuration: Any) -> TransposeCodec:
        conf = config_dict(configuration, "transpose", {"order"})
        if "order" not in conf:
            raise MetadataError("codec 'transpose': 'order' is required")
        return cls(conf["order"])

    def to_json(self) -> dict[str, Any]:
        return {"name": "transpose", "configuration": {"order": list(self.order)}}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if len(self.order) != len(spec.shape):
            raise MetadataError(
                f"codec 'transpose': order {list(self.order)} has {len(self.order)} entries, chunks have {len(spec.shape)} dimensions"
            )
        return ChunkSpec(tuple(spec.shape[i] for i in self.order), spec.dtype, spec.fill_value)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> PermuteStage:
        return PermuteStage(self.order)

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if array.dtype.hasobject:  # variable-length items: numpy's copy keeps the references
            return np.ascontiguousarray(array.transpose(self.order))
        return kernels.transpose(array, self.order)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if array.dtype.hasobject:
            return np.ascontiguousarray(array.transpose(self.inverse))
        return kernels.transpose(array, self.inverse)
