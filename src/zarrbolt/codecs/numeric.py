"""``scale_offset`` and ``cast_value`` (array -> array), and their stage of the fused plans
(:class:`NumericStage`, both in one pass).  numcodecs' ``fixedscaleoffset``, read as
``[scale_offset, cast_value(wrap)]``, is built from these two
(:class:`~zarrbolt.codecs.numcodecs.filters.FixedScaleOffsetCodec`).

The arithmetic and the casts run in the C kernels of :mod:`zarrbolt.kernels` (exact rounding,
clamp/wrap, scalar maps); these classes parse and validate the configuration, transform the fill
value through the codec, and refuse a fill value that does not survive the round trip."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernels
from ..errors import CodecError, MetadataError
from .abc import ArrayToArrayCodec, ChunkSpec
from .registry import register_codec
from .stages import ElementwiseStage
from ._util import config_dict

ROUNDING_MODES = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")
OUT_OF_RANGE = ("clamp", "wrap", "error")
_REAL_KINDS = ("int", "uint", "float")


def _dtype(name_or_obj: Any) -> Any:
    from ..metadata.dtypes import DataType

    return DataType.parse(name_or_obj)


def _scalar(dt: Any, value: Any, what: str) -> Any:
    """A JSON scalar in the fill-value encoding of ``dt`` -> numpy scalar of ``dt``."""
    if value == "+Infinity":  # spelled this way in the codec's own examples
        value = "Infinity"
    try:
        return dt.parse_fill_value(value)
    except MetadataError as e:
        # the data type's message names the fill value; the value here is the codec's ``what``
        msg = str(e).removeprefix("fill_value ").removeprefix("fill_value")
        raise MetadataError(f"{what} {value!r}: a value {msg}" if msg.startswith("for ") else f"{what} {value!r}: {msg}") from None


def _same_bits(a: Any, b: Any, dtype: np.dtype) -> bool:
    return np.asarray(a, dtype=dtype).tobytes() == np.asarray(b, dtype=dtype).tobytes()


@register_codec
class ScaleOffsetCodec(ArrayToArrayCodec):
    """Encode ``(x - offset) * scale``, decode ``x / scale + offset``, in the array's own dtype."""

    name = "scale_offset"

    def __init__(self, offset: Any = None, scale: Any = None):
        for v, n in ((offset, "offset"), (scale, "scale")):
            if v is not None and (isinstance(v, (dict, list, bool)) or not isinstance(v, (int, float, str, np.number))):
                raise MetadataError(f"codec 'scale_offset': {n} must be a number (fill-value encoding), got {v!r}")
        self.offset_json = offset
        self.scale_json = scale

    @classmethod
    def from_json(cls, configuration: Any) -> ScaleOffsetCodec:
        conf = config_dict(configuration, "scale_offset", {"offset", "scale"})
        return cls(conf.get("offset"), conf.get("scale"))

    def to_json(self) -> dict[str, Any]:
        conf = {}
        if self.offset_json is not None:
            conf["offset"] = self.offset_json
        if self.scale_json is not None:
            conf["scale"] = self.scale_json
        return {"name": "scale_offset", "configuration": conf} if conf else {"name": "scale_offset"}

    def params(self, dt: Any) -> tuple[Any, Any]:
        """``(offset, scale)`` as scalars of data type ``dt``; MetadataError for a data type the
        codec does not take, a value it cannot hold or a zero scale.
        """
        if dt.kind not in _REAL_KINDS:
            raise MetadataError(f"codec 'scale_offset' needs an integer or floating-point data type, got {dt.name}")
        off = dt.numpy_dtype.type(0) if self.offset_json is None else _scalar(dt, self.offset_json, "scale_offset offset")
        sc = dt.numpy_dtype.type(1) if self.scale_json is None else _scalar(dt, self.scale_json, "scale_offset scale")
        if sc == 0:
            raise MetadataError("codec 'scale_offset': scale must not be zero")
        return off, sc

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        off, sc = self.params(spec.dtype)
        npdt = spec.dtype.numpy_dtype
        try:
            enc = kernels.scale_offset_encode(np.asarray([spec.fill_value], dtype=npdt), off, sc)[0]
            back = kernels.scale_offset_decode(np.asarray([enc], dtype=npdt), off, sc)[0]
        except CodecError as e:
            raise MetadataError(f"codec 'scale_offset': the fill value cannot be encoded: {e}") from None
        if not _same_bits(back, spec.fill_value, npdt) and not (np.isnan(back) and np.isnan(spec.fill_value)):
            raise MetadataError(
                f"codec 'scale_offset': the fill value {spec.fill_value!r} does not survive the round trip (gives {back!r})"
            )
        return ChunkSpec(spec.shape, spec.dtype, enc)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        off, sc = self.params(spec.dtype)
        return kernels.scale_offset_encode(np.ascontiguousarray(array), off, sc)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        off, sc = self.params(spec.dtype)
        return kernels.scale_offset_decode(np.ascontiguousarray(array), off, sc)

    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> NumericStage:
        return NumericStage(so=(self, spec_in))


@register_codec
class CastValueCodec(ArrayToArrayCodec):
    """Value conversion to ``data_type`` with exact rounding, out-of-range rules and scalar maps."""

    name = "cast_value"

    def __init__(
        self,
        data_type: Any,
        rounding: str = "nearest-even",
        out_of_range: str | None = None,
        scalar_map: dict[str, Any] | None = None,
    ):
        self.data_type = _dtype(data_type)
        if self.data_type.kind not in ("bool", *_REAL_KINDS):
            raise MetadataError(f"codec 'cast_value': cannot cast to {self.data_type.name}")
        if rounding not in ROUNDING_MODES:
            raise MetadataError(f"codec 'cast_value': rounding must be one of {list(ROUNDING_MODES)}, got {rounding!r}")
        if out_of_range is not None and out_of_range not in OUT_OF_RANGE:
            raise MetadataError(f"codec 'cast_value': out_of_range must be one of {list(OUT_OF_RANGE)}, got {out_of_range!r}")
        if out_of_range == "wrap" and self.data_type.kind not in ("int", "uint"):
            raise MetadataError("codec 'cast_value': out_of_range 'wrap' needs an integer target data type")
        self.rounding = rounding
        self.out_of_range = out_of_range
        if scalar_map is not None:
            if not isinstance(scalar_map, dict) or set(scalar_map) - {"encode", "decode"}:
                raise MetadataError(f"codec 'cast_value': scalar_map must be an object with 'encode'/'decode', got {scalar_map!r}")
            for k, pairs in scalar_map.items():
                if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                    raise MetadataError(f"codec 'cast_value': scalar_map.{k} must be an array of [input, output] pairs")
        self.scalar_map = scalar_map

    @classmethod
    def from_json(cls, configuration: Any) -> CastValueCodec:
        conf = config_dict(configuration, "cast_value", {"data_type", "rounding", "out_of_range", "scalar_map"})
        if "data_type" not in conf:
            raise MetadataError("codec 'cast_value': 'data_type' is required")
        return cls(conf["data_type"], conf.get("rounding", "nearest-even"), conf.get("out_of_range"), conf.get("scalar_map"))

    def to_json(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"data_type": self.data_type.to_json(), "rounding": self.rounding}
        if self.out_of_range is not None:
            conf["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            conf["scalar_map"] = self.scalar_map
        return {"name": "cast_value", "configuration": conf}

    def _kernel_out_of_range(self) -> str | None:
        return None if self.out_of_range == "error" else self.out_of_range

    def maps(self, src: Any) -> tuple[list[tuple[Any, Any]] | None, list[tuple[Any, Any]] | None]:
        """Parsed scalar maps: encode (src -> target) and decode (target -> src) pairs."""
        if not self.scalar_map:
            return None, None
        out: list[list[tuple[Any, Any]] | None] = []
        for direction, (a, b) in (("encode", (src, self.data_type)), ("decode", (self.data_type, src))):
            pairs = self.scalar_map.get(direction)
            if pairs is None:
                out.append(None)
                continue
            out.append([(_scalar(a, i, f"cast_value scalar_map.{direction}").item(),
                         _scalar(b, o, f"cast_value scalar_map.{direction}").item()) for i, o in pairs])
        return out[0], out[1]

    def _cast(self, array: np.ndarray, target: np.dtype, smap: Any, direction: str) -> np.ndarray:
        oor = self._kernel_out_of_range()
        if oor == "wrap" and np.dtype(target).kind not in "iu":
            oor = None  # wrap applies to the integer side only; the way back must be exact or error
        try:
            return kernels.cast_value(np.ascontiguousarray(array), target, rounding=self.rounding,
                                      out_of_range=oor, scalar_map=smap)
        except CodecError as e:
            raise type(e)(f"cast_value ({direction} to {np.dtype(target)}): {e}") from None

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        src = spec.dtype
        if src.kind not in ("bool", *_REAL_KINDS):
            raise MetadataError(f"codec 'cast_value' cannot cast from {src.name}")
        enc_map, dec_map = self.maps(src)
        try:
            fill = self._cast(np.asarray([spec.fill_value], dtype=src.numpy_dtype), self.data_type.numpy_dtype, enc_map, "encode")[0]
            back = self._cast(np.asarray([fill]), src.numpy_dtype, dec_map, "decode")[0]
        except CodecError as e:
            raise MetadataError(f"codec 'cast_value': the fill value cannot be cast: {e}") from None
        if not _same_bits(back, spec.fill_value, src.numpy_dtype):
            both_nan = src.kind == "float" and np.isnan(back) and np.isnan(spec.fill_value)
            if not both_nan:
                raise MetadataError(
                    f"codec 'cast_value': the fill value {spec.fill_value!r} does not survive the round trip "
                    f"through {self.data_type.name} (gives {back!r})"
                )
        return ChunkSpec(spec.shape, self.data_type, fill)

    def encoded_size(self, decoded_nbytes: int) -> int | None:
        return None

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        enc_map, _ = self.maps(spec.dtype)
        return self._cast(array, self.data_type.numpy_dtype, enc_map, "encode")

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        _, dec_map = self.maps(spec.dtype)
        return self._cast(array, spec.dtype.numpy_dtype, dec_map, "decode")

    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> NumericStage:
        return NumericStage(cv=(self, spec_in, spec_out))

    # -- fused with a preceding scale_offset (one pass over the chunk instead of two)
    def fused_encode(self, so: ScaleOffsetCodec, array: np.ndarray, so_spec: ChunkSpec) -> np.ndarray:
        """:meth:`encode` after ``so``'s (a scale_offset codec with spec ``so_spec``) in one pass."""
        off, sc = so.params(so_spec.dtype)
        enc_map, _ = self.maps(so_spec.dtype)
        try:
            return kernels.scale_offset_cast(np.ascontiguousarray(array), off, sc, self.data_type.numpy_dtype,
                                             rounding=self.rounding, out_of_range=self._kernel_out_of_range(),
                                             scalar_map=enc_map)
        except CodecError as e:
            raise type(e)(f"scale_offset + cast_value (encode to {self.data_type.name}): {e}") from None

    def fused_decode(self, so: ScaleOffsetCodec, array: np.ndarray, so_spec: ChunkSpec) -> np.ndarray:
        """``so``'s decode after :meth:`decode` (a scale_offset codec with spec ``so_spec``) in one pass."""
        off, sc = so.params(so_spec.dtype)
        _, dec_map = self.maps(so_spec.dtype)
        oor = self._kernel_out_of_range()
        if oor == "wrap" and so_spec.dtype.kind not in ("int", "uint"):
            oor = None
        try:
            return kernels.cast_scale_offset_decode(np.ascontiguousarray(array), so_spec.dtype.numpy_dtype, off, sc,
                                                    rounding=self.rounding, out_of_range=oor, scalar_map=dec_map)
        except CodecError as e:
            raise type(e)(f"cast_value + scale_offset (decode to {so_spec.dtype.name}): {e}") from None


class NumericStage(ElementwiseStage):
    """The fused plans' elementwise stage of scale_offset (``so``: the codec and its decoded
    spec), cast_value (``cv``: the codec, its decoded and its encoded spec), or scale_offset
    followed by cast_value, done in one pass."""

    def __init__(self, so: tuple[Any, ...] | None = None, cv: tuple[Any, ...] | None = None):
        self.so = so
        self.cv = cv

    def then(self, other: ElementwiseStage) -> ElementwiseStage | None:
        if (isinstance(other, NumericStage) and self.so is not None and self.cv is None
                and other.so is None and other.cv is not None):
            return NumericStage(self.so, other.cv)
        return None

    def _kind(self) -> str:
        if self.so is not None and self.cv is not None:
            return "cast+scale_offset"
        return "scale_offset" if self.so is not None else "cast"

    def decode_elem(self) -> dict[str, Any]:
        """From the stored elements (cast_value's target type, or scale_offset's own) to the
        array's: what CastValueCodec.decode / fused_decode / ScaleOffsetCodec.decode do."""
        from .._ext import _numeric

        elem: dict[str, Any] = {"kind": self._kind()}
        if self.so is not None:
            so, so_spec = self.so
            elem["offset"], elem["scale"] = so.params(so_spec.dtype)
            elem["src"] = elem["dst"] = so_spec.dtype.numpy_dtype
        if self.cv is not None:
            cv, cv_in, _ = self.cv
            target = cv_in.dtype  # the decoded side
            oor = cv._kernel_out_of_range()
            if oor == "wrap" and target.kind not in ("int", "uint"):
                oor = None  # as CastValueCodec.decode: wrap applies to the integer side only
            _, dec_map = cv.maps(target)
            rcode, ocode, map_in, map_out = _numeric.cast_options(
                cv.rounding, oor, dec_map, cv.data_type.numpy_dtype, target.numpy_dtype)
            elem.update(rounding=rcode, out_of_range=ocode, map_in=map_in, map_out=map_out,
                        src=cv.data_type.numpy_dtype, dst=target.numpy_dtype)
        return elem

    def encode_elem(self) -> dict[str, Any]:
        """From the array's elements to the stored ones: what ScaleOffsetCodec.encode /
        CastValueCodec.encode / CastValueCodec.fused_encode do."""
        from .._ext import _numeric

        first = self.so[1] if self.so is not None else self.cv[1]  # type: ignore[index]  # one is set
        src = first.dtype.numpy_dtype  # the array's elements
        elem: dict[str, Any] = {"kind": self._kind(), "src": src, "dst": src}
        if self.so is not None:
            so, so_spec = self.so
            elem["offset"], elem["scale"] = so.params(so_spec.dtype)
        if self.cv is not None:
            cv, cv_in, _ = self.cv
            target = cv.data_type.numpy_dtype
            oor = cv._kernel_out_of_range()
            if oor == "wrap" and target.kind not in "iu":
                oor = None  # as CastValueCodec._cast: wrap applies to the integer side only
            enc_map, _ = cv.maps(cv_in.dtype)
            rcode, ocode, map_in, map_out = _numeric.cast_options(cv.rounding, oor, enc_map, src, target)
            elem.update(rounding=rcode, out_of_range=ocode, map_in=map_in, map_out=map_out, dst=target)
        return elem
