"""The ``reshape`` codec (array -> array): same elements in C order, a different shape.

Encoding and decoding are numpy views (no copy): decoded chunks are C-contiguous."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import CorruptChunkError, MetadataError
from .abc import ArrayToArrayCodec, ChunkSpec
from .registry import register_codec
from ._util import config_dict


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@register_codec
class ReshapeCodec(ArrayToArrayCodec):
    name = "reshape"

    def __init__(self, shape: Any):
        if isinstance(shape, (str, bytes)) or not isinstance(shape, (list, tuple)):
            raise MetadataError(f"codec 'reshape': shape must be an array, got {shape!r}")
        items: list[int | tuple[int, ...]] = []
        n_auto = 0
        last_dim = -1
        for s in shape:
            if _is_int(s):
                s = int(s)
                if s == -1:
                    n_auto += 1
                elif s < 1:
                    raise MetadataError(f"codec 'reshape': sizes must be positive integers or -1, got {s}")
                items.append(s)
            elif isinstance(s, (list, tuple)):
                dims = []
                for d in s:
                    if not _is_int(d) or d < 0:
                        raise MetadataError(f"codec 'reshape': input_dims must hold non-negative integers, got {list(s)!r}")
                    d = int(d)
                    if d <= last_dim:
                        raise MetadataError(
                            f"codec 'reshape': input dimensions must appear in increasing order over the whole shape, got {list(shape)!r}"
                        )
                    last_dim = d
                    dims.append(d)
                items.append(tuple(dims))
            else:
                raise MetadataError(f"codec 'reshape': each shape entry must be an integer or an array of integers, got {s!r}")
        if n_auto > 1:
            raise MetadataError(f"codec 'reshape': -1 may occur at most once, got {list(shape)!r}")
        self.shape = tuple(items)

    @classmethod
    def from_json(cls, configuration: Any) -> ReshapeCodec:
        conf = config_dict(configuration, "reshape", {"shape"})
        if "shape" not in conf:
            raise MetadataError("codec 'reshape': 'shape' is required")
        return cls(conf["shape"])

    def to_json(self) -> dict[str, Any]:
        return {"name": "reshape", "configuration": {"shape": [list(s) if isinstance(s, tuple) else s for s in self.shape]}}

    def output_shape(self, a_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape an array of shape ``a_shape`` is reshaped to (MetadataError when the
        configuration does not fit it)."""
        nd = len(a_shape)
        out: list[int | None] = []
        for s in self.shape:
            if isinstance(s, tuple):
                for d in s:
                    if d >= nd:
                        raise MetadataError(
                            f"codec 'reshape': input dimension {d} does not exist in a {nd}-dimensional chunk"
                        )
                out.append(math.prod(a_shape[d] for d in s))
            else:
                out.append(None if s == -1 else s)
        total = math.prod(a_shape)
        known = math.prod(v for v in out if v is not None)
        if None in out:
            if known == 0 or total % known:
                raise MetadataError(f"codec 'reshape': cannot infer -1 in {self._desc()} for input shape {list(a_shape)}")
            out[out.index(None)] = total // known
        b_shape = tuple(int(v) for v in out)  # type: ignore[arg-type]
        if math.prod(b_shape) != total:
            raise MetadataError(
                f"codec 'reshape': output shape {list(b_shape)} does not have the {total} elements of input shape {list(a_shape)}"
            )
        for i, s in enumerate(self.shape):
            if isinstance(s, tuple) and s:
                # the coordinates along input_dims must be the raveled index along output dim i
                if math.prod(b_shape[:i]) != math.prod(a_shape[: s[0]]) or math.prod(b_shape[i + 1:]) != math.prod(
                    a_shape[s[-1] + 1:]
                ):
                    raise MetadataError(
                        f"codec 'reshape': output dimension {i} from input dims {list(s)} is inconsistent with the other "
                        f"dimensions ({list(a_shape)} -> {list(b_shape)})"
                    )
        return b_shape

    def _desc(self) -> str:
        return repr(self.to_json()["configuration"]["shape"])

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self.output_shape(tuple(spec.shape)), spec.dtype, spec.fill_value)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.ascontiguousarray(array).reshape(self.output_shape(tuple(spec.shape)))

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if array.size != math.prod(spec.shape):
            raise CorruptChunkError(f"reshape: chunk has {array.size} elements, expected {math.prod(spec.shape)}")
        return np.ascontiguousarray(array).reshape(spec.shape)
