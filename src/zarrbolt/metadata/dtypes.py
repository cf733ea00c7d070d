"""Zarr v3 core data types and their fill values (``data-types.rst``).

A :class:`DataType` maps a Zarr identifier (``"uint16"``, ``"r24"``, ...) to the numpy dtype used
for decoded chunks (always native byte order; byte order on disk is the ``bytes`` codec's job),
and converts fill values between their JSON form and numpy scalars *bit-exactly*: NaN payloads,
signed zeros and raw byte patterns survive a parse/serialise round trip unchanged.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from ..errors import MetadataError, UnknownDataTypeError
from . import dtypes_ext as _ext
from ._ext_obj import parse_extension

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
_FLOATS = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_COMPLEX = {"complex64": ("float32", np.complex64), "complex128": ("float64", np.complex128)}
_RAW_RE = re.compile(r"^r([1-9][0-9]*)$")
# The bit patterns of the NaN the spec names "NaN": sign 0, mantissa MSB 1, other mantissa bits 0.
_CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# Raw types wider than this are refused: they only make sense as small opaque records, and a
# huge "r..." in untrusted metadata must not turn into a huge allocation per element.
MAX_RAW_BITS = 8 * 2**16


class DataType:
    """One Zarr v3 data type.  Instances are interned per name, so ``is`` and ``==`` agree."""

    __slots__ = ("name", "kind", "numpy_dtype", "itemsize", "configuration", "swap_unit", "_ext")
    _cache: dict[Any, DataType] = {}

    name: str  # the Zarr identifier, e.g. "float32", "r24" or "numpy.datetime64"
    # "bool", "int", "uint", "float", "complex", "raw", or an extension's (dtypes_ext): "string",
    # "vbytes", "fixed_utf32", "nt_bytes", "raw_bytes", "datetime", "timedelta", "struct"
    kind: str
    numpy_dtype: np.dtype  # native byte order (np.void of itemsize bytes for raw types)
    itemsize: int
    configuration: dict[str, Any] | None  # an extension type's configuration (None: a bare name)
    _ext: Any  # the extension type's handler (dtypes_ext), or None
    swap_unit: int | None  # bytes reversed as one unit by a byte swap (1: none; None: per field / n.a.)

    def __new__(cls, name: str, configuration: dict[str, Any] | None = None) -> DataType:
        key: Any = name if not configuration else (name, _conf_key(configuration))
        try:
            return cls._cache[key]
        except (KeyError, TypeError):
            pass
        if name in _ext.HANDLERS:
            return cls._new_ext(key, name, configuration)
        if configuration:
            raise UnknownDataTypeError(f"data type {name!r} with configuration {configuration!r} is not supported")
        self = object.__new__(cls)
        npdt: np.dtype
        if name == "bool":
            kind, npdt = "bool", np.dtype(np.bool_)
        elif name in _INT_RANGES:
            kind = "uint" if name.startswith("u") else "int"
            npdt = np.dtype(name)
        elif name in _FLOATS:
            kind, npdt = "float", np.dtype(_FLOATS[name])
        elif name in _COMPLEX:
            kind, npdt = "complex", np.dtype(_COMPLEX[name][1])
        else:
            m = _RAW_RE.match(name)
            if m is None:
                raise UnknownDataTypeError(f"unknown data type {name!r}")
            bits = int(m.group(1))
            if bits % 8:
                raise UnknownDataTypeError(f"raw data type {name!r}: the number of bits must be a multiple of 8")
            if bits > MAX_RAW_BITS:
                raise UnknownDataTypeError(f"raw data type {name!r} is wider than {MAX_RAW_BITS} bits")
            kind, npdt = "raw", np.dtype(f"V{bits // 8}")
        self.name = name
        self.kind = kind
        self.numpy_dtype = npdt.newbyteorder("=") if npdt.byteorder not in ("|", "=") else npdt
        self.itemsize = npdt.itemsize
        self.configuration = None
        self.swap_unit = 1 if kind == "raw" else npdt.itemsize // 2 if kind == "complex" else npdt.itemsize
        self._ext = None
        cls._cache[name] = self
        return self

    @classmethod
    def _new_ext(cls, key: Any, name: str, configuration: dict[str, Any] | None) -> DataType:
        handler, info = _ext.build(name, configuration)
        nkey = name if info.configuration is None else (name, _conf_key(info.configuration))
        if nkey in cls._cache:  # the normalised form of an equivalent configuration
            return cls._cache[nkey]
        self = object.__new__(cls)
        self.name = name
        self.kind = info.kind
        self.numpy_dtype = info.numpy_dtype
        self.itemsize = info.numpy_dtype.itemsize
        self.configuration = info.configuration
        self.swap_unit = info.swap_unit
        self._ext = handler
        if len(cls._cache) < 4096:
            cls._cache[nkey] = self
            cls._cache[key] = self
        return self

    @property
    def variable_length(self) -> bool:
        """True for the types whose elements are Python objects (``string``, ``variable_length_bytes``)."""
        return self.kind in ("string", "vbytes")

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, DataType) and self.to_json() == other.to_json())

    def __hash__(self) -> int:
        return hash(self.name if self.configuration is None else (self.name, _conf_key(self.configuration)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (DataType, (self.name, self.configuration))

    def __repr__(self) -> str:
        return f"DataType({self.name!r})"

    def __str__(self) -> str:
        if self.configuration is None:
            return self.name
        return f"{self.name}{json.dumps(self.configuration, separators=(',', ':'))}"

    # ------------------------------------------------------------------ parsing
    @classmethod
    def parse(cls, obj: Any) -> DataType:
        """Parse the ``data_type`` member of array metadata (a name or an extension object).

        ``must_understand: false`` is not supported for data types: an unknown one always fails."""
        if obj.__class__ is str and obj in cls._cache:  # a known name (the common case)
            return cls._cache[obj]
        name, conf, _ = parse_extension(obj, "data_type", ignorable=False, unknown=UnknownDataTypeError)
        return cls(name, conf or None)

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The data type for a numpy dtype (or anything ``np.dtype`` accepts, or a Zarr name)."""
        if isinstance(dtype, DataType):
            return dtype
        if isinstance(dtype, str):
            if dtype in cls._cache or dtype in _INT_RANGES or dtype in _FLOATS or dtype in _COMPLEX or dtype == "bool":
                return cls(dtype)
            if _RAW_RE.match(dtype):
                return cls(dtype)
            if dtype in _ext.PY_NAMES:
                return cls(_ext.PY_NAMES[dtype])
        if dtype is str or dtype is bytes:
            return cls(_ext.PY_NAMES[dtype.__name__])
        if isinstance(dtype, dict):
            return cls.parse(dtype)
        try:
            dt = np.dtype(dtype)
        except (TypeError, ValueError, SyntaxError) as e:  # (numpy parses comma strings as Python)
            raise UnknownDataTypeError(f"not a data type: {dtype!r} ({e})") from None
        k, n = dt.kind, dt.itemsize
        if k == "b":
            return cls("bool")
        if k in "iu" and n in (1, 2, 4, 8):
            return cls(f"{'u' if k == 'u' else ''}int{8 * n}")
        if k == "f" and n in (2, 4, 8):
            return cls(f"float{8 * n}")
        if k == "c" and n in (8, 16):
            return cls(f"complex{8 * n}")
        ext = _ext.from_numpy(dt)
        if ext is not None:
            return cls(*ext)
        raise UnknownDataTypeError(f"numpy dtype {dt} has no Zarr v3 core data type")

    def to_json(self) -> Any:
        if self.configuration is None:
            return self.name
        return {"name": self.name, "configuration": self.configuration}

    # ------------------------------------------------------------------ fill values
    def default_fill_value(self) -> Any:
        """The fill value used when the user gives none (zero / false / all-zero bytes; an
        extension type's is zarr-python's: "", b"", NaT...)."""
        if self._ext is not None:
            return self._ext.default(self)
        if self.kind == "raw":
            return np.void(bytes(self.itemsize))
        return self.numpy_dtype.type(0)

    def parse_fill_value(self, obj: Any) -> Any:
        """The numpy scalar for a JSON ``fill_value``; MetadataError when it is not permitted."""
        if self._ext is not None:
            return self._ext.parse_fill(self, obj)
        k = self.kind
        if k == "bool":
            if not isinstance(obj, bool):
                raise MetadataError(f"fill_value for bool must be true or false, got {obj!r}")
            return np.bool_(obj)
        if k in ("int", "uint"):
            if isinstance(obj, bool) or not isinstance(obj, int):
                raise MetadataError(f"fill_value for {self.name} must be an integer JSON number, got {obj!r}")
            lo, hi = _INT_RANGES[self.name]
            if not lo <= obj <= hi:
                raise MetadataError(f"fill_value {obj} is out of range for {self.name} [{lo}, {hi}]")
            return self.numpy_dtype.type(obj)
        if k == "float":
            return self._parse_float(obj, self.name)
        if k == "complex":
            if not isinstance(obj, (list, tuple)) or len(obj) != 2:
                raise MetadataError(f"fill_value for {self.name} must be a two-element array, got {obj!r}")
            comp = _COMPLEX[self.name][0]
            re_, im = self._parse_float(obj[0], comp), self._parse_float(obj[1], comp)
            out = np.zeros((), dtype=self.numpy_dtype)
            pair = out.reshape(1).view(re_.dtype)
            pair[0], pair[1] = re_, im  # element-wise assignment keeps NaN payloads
            return out[()]
        # raw
        if not isinstance(obj, (list, tuple)) or len(obj) != self.itemsize:
            raise MetadataError(
                f"fill_value for {self.name} must be an array of {self.itemsize} integers in [0, 255], got {obj!r}"
            )
        for b in obj:
            if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= 255:
                raise MetadataError(f"fill_value for {self.name}: {b!r} is not an integer in [0, 255]")
        return np.void(bytes(obj))

    @staticmethod
    def _parse_float(obj: Any, name: str) -> Any:
        t = _FLOATS[name]
        size = np.dtype(t).itemsize
        if isinstance(obj, str):
            if obj == "NaN":
                return _from_bits(_CANONICAL_NAN[size], t)
            if obj == "Infinity":
                return t(np.inf)
            if obj == "-Infinity":
                return t(-np.inf)
            if obj.startswith("0x"):
                digits = obj[2:]
                if not digits or len(digits) > 2 * size or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise MetadataError(f"fill_value {obj!r} is not a {8 * size}-bit hex pattern for {name}")
                return _from_bits(int(digits, 16), t)
            raise MetadataError(
                f"fill_value {obj!r} for {name} must be a number, 'NaN', 'Infinity', '-Infinity' or '0x...'"
            )
        if isinstance(obj, bool) or not isinstance(obj, (int, float)):
            raise MetadataError(f"fill_value for {name} must be a number or a string, got {obj!r}")
        try:
            v = float(obj)
        except OverflowError:  # an integer beyond float64: rounds to infinity
            v = math.inf if obj > 0 else -math.inf
        with np.errstate(over="ignore"):
            return t(v)

    def fill_value_to_json(self, value: Any) -> Any:
        """The JSON form of a fill value (a numpy scalar of this type), bit-exact."""
        if self._ext is not None:
            return self._ext.fill_to_json(self, value)
        k = self.kind
        arr = np.asarray(value, dtype=self.numpy_dtype) if k != "raw" else np.asarray(value)
        if k == "bool":
            return bool(arr)
        if k in ("int", "uint"):
            return int(arr)
        if k == "float":
            return _float_to_json(arr)
        if k == "complex":
            parts = arr.reshape(1).view(np.dtype(_FLOATS[_COMPLEX[self.name][0]]))
            return [_float_to_json(parts[0]), _float_to_json(parts[1])]
        raw = arr.tobytes()
        if len(raw) != self.itemsize:
            raise MetadataError(f"raw fill value has {len(raw)} bytes, expected {self.itemsize}")
        return list(raw)

    def normalize_fill_value(self, value: Any) -> Any:
        """Convert a user-given fill value to this type's numpy scalar (None → the default).

        Accepts numpy scalars (bits preserved when the dtype matches), Python numbers, the JSON
        string forms ("NaN", "0x7fc00001", ...), bytes / integer lists for raw types."""
        if value is None:
            return self.default_fill_value()
        if self._ext is not None:
            return self._ext.normalize(self, value)
        k = self.kind
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, np.generic) and value.dtype.newbyteorder("=") == self.numpy_dtype:
            return np.asarray(value).astype(self.numpy_dtype)[()]
        if isinstance(value, str):
            if k in ("float", "complex"):
                if k == "complex":
                    return self.parse_fill_value([value, 0.0])
                return self.parse_fill_value(value)
            raise MetadataError(f"fill_value {value!r} is not valid for {self.name}")
        if k == "raw":
            if isinstance(value, np.void):
                value = value.tobytes()
            if isinstance(value, (bytes, bytearray, memoryview)):
                value = list(bytes(value))
            if isinstance(value, (list, tuple)):
                return self.parse_fill_value(list(value))
            raise MetadataError(f"fill_value for {self.name} must be {self.itemsize} bytes, got {value!r}")
        if k == "bool":
            if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1)):
                return np.bool_(bool(value))
            raise MetadataError(f"fill_value for bool must be True or False, got {value!r}")
        if k in ("int", "uint"):
            if isinstance(value, (bool, np.bool_)):
                value = int(value)
            if isinstance(value, (float, np.floating)):
                if not math.isfinite(value) or value != int(value):
                    raise MetadataError(f"fill_value {value!r} is not an integer ({self.name})")
                value = int(value)
            if not isinstance(value, (int, np.integer)):
                raise MetadataError(f"fill_value for {self.name} must be an integer, got {value!r}")
            return self.parse_fill_value(int(value))
        if k == "float":
            if isinstance(value, np.floating):
                with np.errstate(over="ignore"):
                    return self.numpy_dtype.type(value)
            if isinstance(value, (bool, np.bool_)):
                value = float(value)
            if isinstance(value, (int, float, np.integer)):
                return self.parse_fill_value(value if isinstance(value, (int, float)) else int(value))
            raise MetadataError(f"fill_value for {self.name} must be a real number, got {value!r}")
        # complex
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return self.parse_fill_value(list(value))
        if isinstance(value, (int, float, complex, np.number)) and not isinstance(value, (bool, np.bool_)):
            with np.errstate(over="ignore"):
                return self.numpy_dtype.type(value)
        raise MetadataError(f"fill_value for {self.name} must be a number or a [real, imag] pair, got {value!r}")


def _conf_key(conf: dict[str, Any]) -> str:
    return json.dumps(conf, sort_keys=True, separators=(",", ":"))


def _from_bits(bits: int, t: type) -> Any:
    size = np.dtype(t).itemsize
    return np.array([bits], dtype=_UINT_OF_SIZE[size]).view(t)[0]


def _float_to_json(x: Any) -> Any:
    arr = np.asarray(x)
    size = arr.dtype.itemsize
    bits = int(arr.reshape(1).view(_UINT_OF_SIZE[size])[0])
    f = float(arr)
    if math.isnan(f):
        if bits == _CANONICAL_NAN[size]:
            return "NaN"
        return f"0x{bits:0{2 * size}x}"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    # float(x) is exact for float16/32 and json.dumps(float) round-trips: the shortest repr of
    # the float64 value parses back to the same float16/32 after rounding.
    return f


ALL_CORE_NAMES = ("bool", *_INT_RANGES, *_FLOATS, *_COMPLEX)
