"""numcodecs' filters: the codecs that reshape or recode the data without compressing it.

Array -> array: ``numcodecs.delta`` (C kernels, a fused-plan array kernel),
``numcodecs.fixedscaleoffset`` (read as ``[scale_offset, cast_value(wrap)]``, the C kernels of
:mod:`zarrbolt.codecs.numeric`), ``numcodecs.bitround``, ``numcodecs.quantize``,
``numcodecs.astype``, ``numcodecs.packbits`` and ``numcodecs.categorize`` (numpy, elementwise
over the chunk in C order, as numcodecs computes them).  Bytes -> bytes: ``numcodecs.shuffle``.

The data types a filter names must be the array's at that point of the chain (numcodecs would
reinterpret the bytes of another type): a mismatch is a MetadataError when the chain is bound,
except delta's ``dtype`` of the same item size, which is read as zarr-python reads it
(:class:`DeltaCodec`)."""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np

from ...errors import CodecError, CorruptChunkError, MetadataError
from ..abc import ArrayToArrayCodec, BytesToBytesCodec, ChunkSpec
from ..numeric import CastValueCodec, ScaleOffsetCodec
from ..registry import register_codec
from .._util import as_bytes_view, config_dict, int_param
from . import KeptConfiguration, check_numcodecs_id, numpy_dtype_param

DELTA_NAME = "numcodecs.delta"
_DELTA_KINDS = "iufb"


def _delta_ext() -> Any:
    from ..._ext import _delta

    return _delta


def _delta_dtype(value: Any, what: str) -> np.dtype:
    dt: np.dtype = numpy_dtype_param(DELTA_NAME, value, what, _DELTA_KINDS,
                                     "only bool, integer and float16/32/64 types are supported")
    return dt


@register_codec
class DeltaCodec(ArrayToArrayCodec):
    """``numcodecs.delta``: numcodecs' Delta filter, as zarr-python 3 writes it
    (``zarr.codecs.numcodecs.Delta``).

    JSON: ``{"name": "numcodecs.delta", "configuration": {"dtype": "<u2", "astype": "<i4"}}`` with
    numpy type strings (``"uint16"``, ``"<u2"``, ``"u2"`` alike); ``dtype`` is required,
    ``astype`` (the stored type) defaults to ``dtype``; numcodecs' ``"id": "delta"`` may be
    present.  Encoding writes the first element of the chunk, flattened in C order, then the
    difference of each element and the one before it, computed in ``dtype`` and cast to
    ``astype``; decoding is the running sum.  The arithmetic is numpy's (zarrbolt/delta.h); what
    zarrbolt refuses:

    * a ``dtype`` other than the data type the codec receives must have its item size: as
      zarr-python 3 does, encoding takes the chunk's bytes as ``dtype`` items (numcodecs' view)
      and decoding casts the running sum back by value; between integer types (``<i2`` on a
      ``uint16`` array) that round-trips and is read and written; with a float or bool on either
      side it does not, and such arrays are read (zarr-python's values) but not written
      (CodecError).  Another item size is a MetadataError (zarr-python cannot read those either).
      A Zarr v2 array's filter whose ``dtype`` differs is read as numcodecs reads it, the chunk's
      bytes reinterpreted both ways: :mod:`zarrbolt.metadata.v2`;
    * bool, integer and float16/32/64 types only, native or little-endian (numcodecs also accepts
      complex, timedeltas and big-endian types, which no Zarr v3 data type maps to cleanly);
    * bool data is read as numcodecs decodes it, a running OR of the stored values (numcodecs
      stores the XOR of neighbours, which that does not invert): such arrays are read but never
      written (CodecError), nor created (MetadataError);
    * a float difference (or, decoding, a running sum) that does not fit an integer ``astype``
      (numcodecs stores an unspecified integer) raises CodecError.

    The C kernels (csrc/delta.c, ``zarrbolt._ext._delta``) run every (dtype, astype) pair; the
    codec owns its fused-plan array-kernel stage (``c_stage``).

    ``dtype``: the decoded type (numpy string, required); ``astype``: the encoded type (None:
    the same).  The strings are kept as given so that the JSON round-trips."""

    name = DELTA_NAME

    def __init__(self, dtype: str, astype: str | None = None):
        self.dtype_json = dtype
        self.astype_json = astype
        self.dtype = _delta_dtype(dtype, "dtype")
        self.astype = self.dtype if astype is None else _delta_dtype(astype, "astype")

    @classmethod
    def from_json(cls, configuration: Any) -> DeltaCodec:
        conf = config_dict(configuration, DELTA_NAME, {"dtype", "astype", "id"})
        check_numcodecs_id(conf, DELTA_NAME)
        if "dtype" not in conf:
            raise MetadataError(f"codec {DELTA_NAME!r}: 'dtype' is required")
        astype = conf.get("astype")
        return cls(conf["dtype"], astype)

    def to_json(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"dtype": self.dtype_json}
        if self.astype_json is not None:
            conf["astype"] = self.astype_json
        return {"name": DELTA_NAME, "configuration": conf}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        received = spec.dtype.numpy_dtype
        if received != self.dtype and (received.itemsize != self.dtype.itemsize or received.kind not in _DELTA_KINDS):
            raise MetadataError(
                f"codec {DELTA_NAME!r}: dtype {self.dtype_json!r} is not the data type the codec receives "
                f"({spec.dtype.name}) and its items are not of that size"
            )
        # The stored array's fill value: numpy's cast, as zarr-python makes it (a chunk of fill
        # values does not delta-encode to fill values; this one only fills missing inner chunks
        # when the codec sits before sharding_indexed).
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fill = np.asarray(spec.fill_value, dtype=received).view(self.dtype).astype(self.astype)[()]
        return ChunkSpec(spec.shape, DataType.from_numpy(self.astype), fill)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes // self.dtype.itemsize * self.astype.itemsize

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return self.encoded_size(decoded_nbytes)

    @property
    def _bool(self) -> bool:
        return self.dtype.kind == "b" or self.astype.kind == "b"

    def for_writing(self) -> tuple[DeltaCodec, str | None]:
        if self._bool:
            raise MetadataError(f"codec {DELTA_NAME!r} on bool data does not round-trip (numcodecs stores the XOR of "
                                "neighbours and decodes a running OR); zarrbolt reads such arrays but does not create them")
        return self, None

    def _reinterpreted(self, received: np.dtype) -> bool:
        """Whether the codec receives another type than its ``dtype`` (same item size: resolve)."""
        return received != self.dtype

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if self._bool:
            raise CodecError(f"codec {DELTA_NAME!r} on bool data does not round-trip; zarrbolt does not write it")
        received = spec.dtype.numpy_dtype
        if self._reinterpreted(received):
            if received.kind not in "iu" or self.dtype.kind not in "iu":
                raise CodecError(
                    f"codec {DELTA_NAME!r} with dtype {self.dtype_json!r} on {spec.dtype.name} data does not round-trip "
                    "(the bytes are taken as that type, the decoded sums cast back by value); zarrbolt reads such "
                    "arrays but does not write them")
            array = np.ascontiguousarray(array).view(self.dtype)  # numcodecs' view of the bytes
        return cast(np.ndarray, _delta_ext().encode(np.ascontiguousarray(array, dtype=self.dtype), self.astype))

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if self._bool:  # numcodecs: a cumulative sum into bools, i.e. a running OR
            flat = np.ascontiguousarray(array).reshape(-1).astype(bool)
            out = np.logical_or.accumulate(flat).astype(self.dtype).reshape(array.shape)
        else:
            out = cast(np.ndarray, _delta_ext().decode(np.ascontiguousarray(array, dtype=self.astype), self.dtype))
        received = spec.dtype.numpy_dtype
        if not self._reinterpreted(received):
            return out
        if received.kind in "iu" and self.dtype.kind in "iu":  # the same as the cast by value
            return out.view(received)
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # zarr-python's cast back by value
            warnings.simplefilter("ignore")
            return out.astype(received)

    # -- codec-owned fused-plan stage (contract section A)
    def c_stage(self, spec_in: ChunkSpec, spec_out: ChunkSpec) -> Any:
        """An ``ArrayKernelStage`` (order-dependent kernel over the chunk in stored order), or None
        while the plan side of the interface is not there (and for bool data: decoded in numpy)."""
        if self._bool or self._reinterpreted(spec_in.dtype.numpy_dtype):
            return None
        try:
            from ..abc import ArrayKernelStage  # type: ignore[attr-defined]
        except ImportError:
            try:
                from ..stages import ArrayKernelStage
            except ImportError:
                return None
        ext = _delta_ext()
        return ArrayKernelStage(ext.DECODE_STEP, ext.ENCODE_STEP, ext.params(self.dtype, self.astype),
                                spec_in.dtype, spec_out.dtype)


def _whole_in(value: Any, dt: np.dtype) -> int | None:
    """``value`` (a JSON number) as an integer of integer type ``dt``, or None when it is not a
    whole number in ``dt``'s range."""
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None
        value = int(value)
    info = np.iinfo(dt)
    return value if info.min <= value <= info.max else None


@register_codec
class FixedScaleOffsetCodec(ArrayToArrayCodec):
    """numcodecs' ``fixedscaleoffset`` (read and write): ``[scale_offset, cast_value(wrap)]``.

    ``offset`` and ``scale`` are numbers as numcodecs takes them: on integer data a whole float
    (``{"offset": 0.0, "scale": 1.0}``, as zarr-python writes them) is that integer; other values
    on integer data (a fraction, or beyond the type's range) are computed as numcodecs computes
    them, in float64 (numpy, per chunk)."""

    name = "numcodecs.fixedscaleoffset"

    def __init__(self, offset: float = 0, scale: float = 1, dtype: str | None = None, astype: str | None = None):
        for k, v in (("offset", offset), ("scale", scale)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MetadataError(f"codec {self.name!r}: {k} must be a number, got {v!r}")
        if scale == 0:
            raise MetadataError(f"codec {self.name!r}: scale must not be zero")
        self.offset = offset
        self.scale = scale
        self.dtype = dtype
        self.astype = astype

    @classmethod
    def from_json(cls, configuration: Any) -> FixedScaleOffsetCodec:
        conf = config_dict(configuration, "numcodecs.fixedscaleoffset", {"offset", "scale", "dtype", "astype", "id"})
        return cls(conf.get("offset", 0), conf.get("scale", 1), conf.get("dtype"), conf.get("astype"))

    def to_json(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"offset": self.offset, "scale": self.scale}
        if self.dtype is not None:
            conf["dtype"] = self.dtype
        if self.astype is not None:
            conf["astype"] = self.astype
        return {"name": "numcodecs.fixedscaleoffset", "configuration": conf}

    def _target(self, spec: ChunkSpec) -> Any:
        from ...metadata.dtypes import DataType

        try:
            return DataType.from_numpy(self.astype) if self.astype is not None else spec.dtype
        except MetadataError as e:
            raise MetadataError(f"codec {self.name!r}: astype {self.astype!r}: {e}") from None

    def _parts(self, spec: ChunkSpec) -> tuple[ScaleOffsetCodec, CastValueCodec] | None:
        """The codec as ``[scale_offset, cast_value]``; None where numcodecs' float64 arithmetic
        is needed (integer data, an offset or scale that is not a whole number of its type)."""
        target = self._target(spec)
        offset: Any = self.offset
        scale: Any = self.scale
        if spec.dtype.kind in ("int", "uint"):
            offset, scale = _whole_in(offset, spec.dtype.numpy_dtype), _whole_in(scale, spec.dtype.numpy_dtype)
            if offset is None or scale is None:
                return None
        oor = "wrap" if target.kind in ("int", "uint") else None  # wrap: integer targets only
        return ScaleOffsetCodec(offset, scale), CastValueCodec(target.name, "nearest-even", oor)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.kind not in ("int", "uint", "float"):
            raise MetadataError(f"codec {self.name!r} needs integer or floating-point data, got {spec.dtype}")
        parts = self._parts(spec)
        if parts is None:
            target = self._target(spec)
            enc = self._float64_encode(np.asarray([spec.fill_value], dtype=spec.dtype.numpy_dtype), target)[0]
            return ChunkSpec(spec.shape, target, target.normalize_fill_value(enc))
        so, cv = parts
        try:
            return cv.resolve(so.resolve(spec))
        except MetadataError:
            pass
        # numcodecs' codec knows no fill value (zarr-python and Zarr v2 fill decoded arrays): a fill
        # value the integer type cannot carry is encoded as numcodecs encodes any value (wrapping),
        # after the configuration is checked with the fill value that encodes to 0 (the offset)
        zero = ChunkSpec(spec.shape, spec.dtype, spec.dtype.normalize_fill_value(so.offset_json))
        out = cv.resolve(so.resolve(zero))
        with np.errstate(all="ignore"):
            try:
                enc = self.encode(np.asarray([spec.fill_value], dtype=spec.dtype.numpy_dtype), zero)[0]
            except CodecError:
                enc = out.fill_value
        return ChunkSpec(out.shape, out.dtype, out.dtype.normalize_fill_value(enc))

    def encoded_size(self, decoded_nbytes: int) -> int | None:
        return None

    def _float64_encode(self, array: np.ndarray, target: Any) -> np.ndarray:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = np.around((array.astype(np.float64) - self.offset) * self.scale)
            return enc.astype(target.numpy_dtype)

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        parts = self._parts(spec)
        if parts is None:
            return self._float64_encode(array, self._target(spec))
        so, cv = parts
        mid = so.resolve(spec)
        scaled = so.encode(array, spec)
        if cv.data_type.kind == "float" and spec.dtype.kind == "float":
            # numcodecs rounds to whole steps of 1/scale (half to even) for a float astype too
            scaled = np.around(scaled)
        return cv.encode(scaled, mid)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        parts = self._parts(spec)
        if parts is None:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ((array / self.scale) + self.offset).astype(spec.dtype.numpy_dtype)
        so, cv = parts
        mid = so.resolve(spec)
        return so.decode(cv.decode(array, mid), spec)


_MANTISSA = {2: 10, 4: 23, 8: 52}


class _ArrayFilter(KeptConfiguration, ArrayToArrayCodec):
    """A numcodecs array -> array codec whose configuration is kept as given (less ``id``)."""

    def _expect(self, spec: ChunkSpec, dt: np.dtype, what: str) -> None:
        if spec.dtype.numpy_dtype != dt:
            raise MetadataError(f"codec {self.name!r}: {what} {dt} is not the data type it receives ({spec.dtype})")


def _cast_fill(fill: Any, src: np.dtype, dst: np.dtype) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fill, dtype=src).astype(dst)[()]


@register_codec
class NumcodecsBitRound(_ArrayFilter):
    """``numcodecs.bitround`` ``{"keepbits": k}``: float16/32/64 mantissas rounded to ``k`` bits,
    ties to even (lossy; decoding is the identity)."""

    name = "numcodecs.bitround"
    _members = frozenset({"keepbits"})

    def _check(self) -> None:
        if "keepbits" not in self.config:
            raise MetadataError(f"codec {self.name!r}: 'keepbits' is required")
        self.keepbits = int_param(self.config["keepbits"], self.name, "keepbits", 0, 52)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        dt = spec.dtype.numpy_dtype
        if dt.kind != "f" or dt.itemsize not in _MANTISSA:
            raise MetadataError(f"codec {self.name!r} rounds float16/32/64 only, not {spec.dtype}")
        if self.keepbits > _MANTISSA[dt.itemsize]:
            raise MetadataError(f"codec {self.name!r}: keepbits {self.keepbits} is more than {spec.dtype} has")
        return spec

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        dt = array.dtype
        bits = _MANTISSA[dt.itemsize]
        if self.keepbits == bits:
            return array
        idt = np.dtype(f"i{dt.itemsize}")
        b = np.array(array, copy=True).view(idt)
        drop = bits - self.keepbits
        mask = (np.array(-1, idt) >> drop) << drop
        half = idt.type((1 << (drop - 1)) - 1)
        b += ((b >> drop) & 1) + half
        b &= mask
        return b.view(dt)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return array


@register_codec
class NumcodecsQuantize(_ArrayFilter):
    """``numcodecs.quantize`` ``{"digits": d, "dtype": "<f8", "astype": "<f4"}``: values rounded
    to a power-of-two step finer than ``10**-d`` and stored as ``astype`` (lossy)."""

    name = "numcodecs.quantize"
    _members = frozenset({"digits", "dtype", "astype"})

    def _check(self) -> None:
        for k in ("digits", "dtype"):
            if k not in self.config:
                raise MetadataError(f"codec {self.name!r}: {k!r} is required")
        self.digits = int_param(self.config["digits"], self.name, "digits", -300, 300)
        self.dtype = numpy_dtype_param(self.name, self.config["dtype"], "dtype", "f")
        a = self.config.get("astype")
        self.astype = self.dtype if a is None else numpy_dtype_param(self.name, a, "astype", "f")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        self._expect(spec, self.dtype, "dtype")
        return ChunkSpec(spec.shape, DataType.from_numpy(self.astype),
                         _cast_fill(spec.fill_value, self.dtype, self.astype))

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        exp = math.log10(10.0 ** -self.digits)
        exp = math.floor(exp) if exp < 0 else math.ceil(exp)
        scale = 2.0 ** math.ceil(math.log2(10.0 ** -exp))
        with np.errstate(all="ignore"):
            enc = np.around(scale * array) / scale
        return enc.astype(self.astype, copy=False)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return array.astype(self.dtype)


@register_codec
class NumcodecsAsType(_ArrayFilter):
    """``numcodecs.astype`` ``{"encode_dtype": "<f4", "decode_dtype": "<f8"}``: numpy's cast each
    way."""

    name = "numcodecs.astype"
    _members = frozenset({"encode_dtype", "decode_dtype"})

    def _check(self) -> None:
        if "encode_dtype" not in self.config:
            raise MetadataError(f"codec {self.name!r}: 'encode_dtype' is required")
        self.encode_dtype = numpy_dtype_param(self.name, self.config["encode_dtype"], "encode_dtype", "biuf")
        d = self.config.get("decode_dtype")
        self.decode_dtype = None if d is None else numpy_dtype_param(self.name, d, "decode_dtype", "biuf")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        if self.decode_dtype is not None:
            self._expect(spec, self.decode_dtype, "decode_dtype")
        return ChunkSpec(spec.shape, DataType.from_numpy(self.encode_dtype),
                         _cast_fill(spec.fill_value, spec.dtype.numpy_dtype, self.encode_dtype))

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return array.astype(self.encode_dtype)

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return array.astype(spec.dtype.numpy_dtype)


@register_codec
class NumcodecsPackBits(_ArrayFilter):
    """``numcodecs.packbits`` ``{}``: a bool chunk as one byte of padding bits then
    ``numpy.packbits``; the encoded chunk is 1-d uint8."""

    name = "numcodecs.packbits"

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        if spec.dtype.kind != "bool":
            raise MetadataError(f"codec {self.name!r} packs bool arrays only, not {spec.dtype}")
        n = math.prod(spec.shape)
        return ChunkSpec((1 + math.ceil(n / 8),), DataType("uint8"), np.uint8(0))

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = np.ascontiguousarray(array).reshape(-1)
        pad = (8 - flat.size % 8) % 8
        out = np.empty(1 + (flat.size + 7) // 8, np.uint8)
        out[0] = pad
        out[1:] = np.packbits(flat)
        return out

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        n = math.prod(spec.shape)
        enc = np.ascontiguousarray(array).reshape(-1)
        if enc.size != 1 + (n + 7) // 8 or int(enc[0]) != (8 - n % 8) % 8:
            raise CorruptChunkError(f"{self.name}: {enc.size} bytes with {int(enc[0]) if enc.size else '?'} "
                                    f"padding bits do not hold {n} booleans")
        return np.unpackbits(enc[1:], count=n).view(bool).reshape(spec.shape)


MAX_LABELS = 2**16


@register_codec
class NumcodecsCategorize(_ArrayFilter):
    """``numcodecs.categorize`` ``{"labels": ["a", "b"], "dtype": "<U1" | "|O", "astype": "|u1"}``:
    text values stored as integers, label i as i + 1, anything else as 0 (decoded as ""); for
    ``fixed_length_utf32`` arrays (``dtype`` their ``<U n``) and ``string`` arrays (``"|O"``,
    numcodecs' object arrays of text; Zarr v2's categorize filter)."""

    name = "numcodecs.categorize"
    _members = frozenset({"labels", "dtype", "astype"})

    def _check(self) -> None:
        c = self.config
        for k in ("labels", "dtype"):
            if k not in c:
                raise MetadataError(f"codec {self.name!r}: {k!r} is required")
        labels = c["labels"]
        if not isinstance(labels, list) or len(labels) > MAX_LABELS or not all(isinstance(x, str) for x in labels):
            raise MetadataError(f"codec {self.name!r}: labels must be a list of at most {MAX_LABELS} strings")
        self.labels = labels
        if not isinstance(c["dtype"], str):
            raise MetadataError(f"codec {self.name!r}: dtype must be a numpy data type string, got {c['dtype']!r}")
        try:
            self.dtype = np.dtype(c["dtype"])
        except TypeError:
            raise MetadataError(f"codec {self.name!r}: dtype {c['dtype']!r} is not a numpy data type") from None
        if self.dtype.kind not in "UO":
            raise MetadataError(f"codec {self.name!r}: dtype must be a unicode ('<U n') or object type")
        self.astype = numpy_dtype_param(self.name, c.get("astype", "|u1"), "astype", "iu")
        if len(labels) > np.iinfo(self.astype).max:
            raise MetadataError(f"codec {self.name!r}: {len(labels)} labels do not fit {self.astype}")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        dt = spec.dtype
        ok = dt.kind == "string" if self.dtype.kind == "O" else dt.numpy_dtype == self.dtype.newbyteorder("=")
        if not ok:
            raise MetadataError(f"codec {self.name!r}: dtype {self.config['dtype']!r} does not fit the data type {dt}")
        fill = str(spec.fill_value)
        code = self.labels.index(fill) + 1 if fill in self.labels else 0
        return ChunkSpec(spec.shape, DataType.from_numpy(self.astype), self.astype.type(code))

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        enc = np.zeros(array.shape, dtype=self.astype)
        for i, label in enumerate(self.labels):
            enc[array == label] = i + 1
        return enc

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        dec = np.full(array.shape, "", dtype=spec.dtype.numpy_dtype)
        for i, label in enumerate(self.labels):
            dec[array == i + 1] = label
        return dec


@register_codec
class NumcodecsShuffle(KeptConfiguration, BytesToBytesCodec):
    """``numcodecs.shuffle``: the bytes of ``elementsize``-byte elements (default 4) grouped by
    position (all first bytes, then all second bytes, ...); the chunk's size must be a multiple
    of it."""

    name = "numcodecs.shuffle"
    _members = frozenset({"elementsize"})

    def _check(self) -> None:
        self.elementsize = int_param(self.config.get("elementsize", 4), self.name, "elementsize", 0, 2**31 - 1)

    def with_array_dtype(self, itemsize: int) -> NumcodecsShuffle:
        """As zarr-python: an ``elementsize`` left out is the array's item size at creation."""
        if "elementsize" in self.config:
            return self
        return NumcodecsShuffle(**self.config, elementsize=itemsize)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def _split(self, data: Any) -> np.ndarray | None:
        a = np.frombuffer(as_bytes_view(data), np.uint8)
        if self.elementsize <= 1:
            return None
        if a.size % self.elementsize:
            raise CorruptChunkError(f"{self.name}: {a.size} bytes are not whole elements of {self.elementsize}")
        return a

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        a = self._split(data)
        if a is None:
            return bytes(as_bytes_view(data))
        return np.ascontiguousarray(a.reshape(-1, self.elementsize).T).reshape(-1).data

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        a = self._split(data)
        if a is None:
            return as_bytes_view(data)
        return np.ascontiguousarray(a.reshape(self.elementsize, -1).T).reshape(-1).data


REINTERPRET_NAME = "zarrbolt.reinterpret"


class ReinterpretCodec(ArrayToArrayCodec):
    """The chunk's bytes taken as items of another fixed-size type (numpy's ``view``), as numcodecs'
    filters take their input: a Zarr v2 filter whose ``dtype`` (``astype``'s ``decode_dtype``)
    is not the type of the data it receives reinterprets the chunk's bytes as that type, and the
    decoded bytes are taken back as the array's type (zarr-python's v2 pipeline).  Not a codec of
    any metadata: :mod:`zarrbolt.metadata.v2` puts it in front of such a filter.  Items of another
    size make the chunk a 1-d run of items of ``target``."""

    name = REINTERPRET_NAME

    def __init__(self, target: np.dtype):
        self.target = np.dtype(target)

    @classmethod
    def from_json(cls, configuration: Any) -> ReinterpretCodec:
        raise MetadataError(f"{REINTERPRET_NAME!r} is not a codec of Zarr metadata")

    def to_json(self) -> dict[str, Any]:
        return {"name": REINTERPRET_NAME, "configuration": {"dtype": self.target.str}}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ...metadata.dtypes import DataType

        src = spec.dtype.numpy_dtype
        if src.hasobject or src.itemsize == 0 or src.kind not in "biufcmM":
            raise MetadataError(f"the bytes of {spec.dtype} items cannot be taken as {self.target}")
        if src.itemsize == self.target.itemsize:
            shape = spec.shape
            fill = np.asarray(spec.fill_value, dtype=src).view(self.target)[()]
        else:
            if spec.nbytes % self.target.itemsize:
                raise MetadataError(f"a chunk of {spec.nbytes} bytes is not whole {self.target} items")
            shape = (spec.nbytes // self.target.itemsize,)
            fill = self.target.type(0)
        return ChunkSpec(shape, DataType.from_numpy(self.target), fill)

    def encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        flat = np.ascontiguousarray(array).reshape(-1).view(self.target)
        return flat.reshape(array.shape) if array.dtype.itemsize == self.target.itemsize else flat

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return np.ascontiguousarray(array).reshape(-1).view(spec.dtype.numpy_dtype).reshape(spec.shape)
