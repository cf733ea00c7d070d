"""The array -> array ``numcodecs.*`` codecs zarr-python 3 writes (``zarr.codecs.numcodecs``):
``numcodecs.bitround``, ``numcodecs.quantize``, ``numcodecs.astype``, ``numcodecs.packbits``; and
``numcodecs.categorize`` (Zarr v2's filter of that id; zarr-python has no v3 wrapper for it).

JSON: ``{"name": "numcodecs.<id>", "configuration": {...}}`` with numcodecs' configuration
(``"id"`` allowed), written back as given.  Each encodes exactly as numcodecs does (numpy's
arithmetic, elementwise over the chunk in C order):

* ``bitround`` ``{"keepbits": k}``: float16/32/64 mantissas rounded to ``k`` bits, ties to even
  (lossy; decoding is the identity);
* ``quantize`` ``{"digits": d, "dtype": "<f8", "astype": "<f4"}``: values rounded to a power-of-two
  step finer than ``10**-d`` and stored as ``astype`` (lossy);
* ``astype`` ``{"encode_dtype": "<f4", "decode_dtype": "<f8"}``: numpy's cast each way;
* ``packbits`` ``{}``: a bool chunk as one byte of padding bits then ``numpy.packbits``; the
  encoded chunk is 1-d uint8.

The types named must be the array's at that point of the chain (numcodecs would reinterpret the
bytes of another type): a mismatch is a MetadataError when the chain is bound."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..errors import CorruptChunkError, MetadataError
from .abc import ArrayToArrayCodec, ChunkSpec
from .registry import register_codec
from ._numcodecs import KeptConfiguration
from ._numcodecs import numpy_dtype_param as _np_dtype
from ._util import int_param

_MANTISSA = {2: 10, 4: 23, 8: 52}


class _Configured(KeptConfiguration, ArrayToArrayCodec):
    """A numcodecs array -> array codec whose configuration is kept as given (less ``id``)."""

    def _expect(self, spec: ChunkSpec, dt: np.dtype, what: str) -> None:
        if spec.dtype.numpy_dtype != dt:
            raise MetadataError(f"codec {self.name!r}: {what} {dt} is not the data type it receives ({spec.dtype})")


def _cast_fill(fill: Any, src: np.dtype, dst: np.dtype) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fill, dtype=src).astype(dst)[()]


@register_codec
class NumcodecsBitRound(_Configured):
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
class NumcodecsQuantize(_Configured):
    name = "numcodecs.quantize"
    _members = frozenset({"digits", "dtype", "astype"})

    def _check(self) -> None:
        for k in ("digits", "dtype"):
            if k not in self.config:
                raise MetadataError(f"codec {self.name!r}: {k!r} is required")
        self.digits = int_param(self.config["digits"], self.name, "digits", -300, 300)
        self.dtype = _np_dtype(self.name, self.config["dtype"], "dtype", "f")
        a = self.config.get("astype")
        self.astype = self.dtype if a is None else _np_dtype(self.name, a, "astype", "f")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ..metadata.dtypes import DataType

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
class NumcodecsAsType(_Configured):
    name = "numcodecs.astype"
    _members = frozenset({"encode_dtype", "decode_dtype"})

    def _check(self) -> None:
        if "encode_dtype" not in self.config:
            raise MetadataError(f"codec {self.name!r}: 'encode_dtype' is required")
        self.encode_dtype = _np_dtype(self.name, self.config["encode_dtype"], "encode_dtype", "biuf")
        d = self.config.get("decode_dtype")
        self.decode_dtype = None if d is None else _np_dtype(self.name, d, "decode_dtype", "biuf")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ..metadata.dtypes import DataType

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
class NumcodecsPackBits(_Configured):
    name = "numcodecs.packbits"

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ..metadata.dtypes import DataType

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
class NumcodecsCategorize(_Configured):
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
        self.astype = _np_dtype(self.name, c.get("astype", "|u1"), "astype", "iu")
        if len(labels) > np.iinfo(self.astype).max:
            raise MetadataError(f"codec {self.name!r}: {len(labels)} labels do not fit {self.astype}")

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        from ..metadata.dtypes import DataType

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
