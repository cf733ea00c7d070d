"""The data types zarr-python 3 writes beyond the core spec (zarr-extensions ``data-types/``).

Each one is a :class:`~zarrbolt.metadata.dtypes.DataType` whose ``_ext`` is one of the handlers
below; a handler validates the configuration, names the numpy dtype and converts fill values.
The JSON forms are zarr-python 3.4.2's, byte for byte:

=========================  ==========================================================  =========================
Zarr name                  configuration                                               numpy / fill value JSON
=========================  ==========================================================  =========================
``string``                 none                                                        ``StringDType()`` (numpy ≥ 2, else ``object`` of ``str``) / a string
``variable_length_bytes``  none (``bytes`` is read as an alias)                         ``object`` of ``bytes`` / base64
``fixed_length_utf32``     ``{"length_bytes": 4 n}``                                   ``<U n`` / a string
``null_terminated_bytes``  ``{"length_bytes": n}``                                     ``|S n`` / base64
``raw_bytes``              ``{"length_bytes": n}``                                     ``|V n`` / base64
``numpy.datetime64``       ``{"unit": "ns", "scale_factor": 1}``                       ``M8[1ns]`` / an integer or ``"NaT"``
``numpy.timedelta64``      ``{"unit": "ms", "scale_factor": 1}``                       ``m8[1ms]`` / an integer or ``"NaT"``
``struct``                 ``{"fields": [{"name": "a", "data_type": "int32"}, ...]}``  packed record / ``{"a": 0, ...}``
``structured``             ``{"fields": [["a", "int32"], ...]}`` (read: zarr 3.0's)    packed record / base64
=========================  ==========================================================  =========================
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import MetadataError, UnknownDataTypeError

if TYPE_CHECKING:
    from .dtypes import DataType

# Fixed-width items wider than this are refused: a huge length in untrusted metadata must not
# turn into a huge allocation per element.
MAX_ITEM_BYTES = 2**24
TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic")
NAT = -(2**63)
MAX_FIELDS = 4096

try:
    STRING_DTYPE: np.dtype | None = np.dtype(np.dtypes.StringDType())  # numpy >= 2
except AttributeError:  # pragma: no cover - numpy 1.x
    STRING_DTYPE = None


class ExtInfo(NamedTuple):
    kind: str
    numpy_dtype: np.dtype
    swap_unit: int | None  # byte-order unit of the bytes codec (1: none; None: per field / n.a.)
    configuration: dict[str, Any] | None  # normalised, as written back


def _length(conf: dict[str, Any], name: str, unit: int = 1) -> int:
    if set(conf) != {"length_bytes"}:
        raise MetadataError(f"data type {name!r}: the configuration must be exactly {{'length_bytes'}}, got {conf!r}")
    n = conf["length_bytes"]
    if isinstance(n, bool) or not isinstance(n, int) or n < unit or n % unit or n > MAX_ITEM_BYTES:
        raise MetadataError(
            f"data type {name!r}: length_bytes must be a positive multiple of {unit} up to {MAX_ITEM_BYTES}, got {n!r}"
        )
    return n


def _b64(obj: Any, name: str) -> bytes:
    if not isinstance(obj, str):
        raise MetadataError(f"fill_value for {name} must be a base64 string, got {obj!r}")
    try:
        return base64.b64decode(obj.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise MetadataError(f"fill_value {obj!r} for {name} is not valid base64") from None


def _to_b64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def _scalar(value: Any) -> Any:
    """A 0-d numpy array's element; any other value as it is."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _number_text(value: Any) -> Any:
    """zarr-python's fill value for a number given to a text type: its ``str`` (``zeros`` of a
    text type is filled with "0", ``ones`` with "1", as in zarr-python)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return str(value)
    return value


def _as_bytes(value: Any, what: str) -> bytes:
    if isinstance(value, np.void):
        return value.tobytes()
    if isinstance(value, (bytes, bytearray, memoryview, np.bytes_)):
        return bytes(value)
    raise MetadataError(f"fill_value for {what} must be bytes, got {value!r}")


class _Handler:
    """One extension data type; ``build`` returns its :class:`ExtInfo`."""

    names: tuple[str, ...] = ()

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        raise NotImplementedError

    def default(self, dt: DataType) -> Any:
        return dt.numpy_dtype.type()

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        raise NotImplementedError

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        raise NotImplementedError

    def normalize(self, dt: DataType, value: Any) -> Any:
        raise NotImplementedError


class _String(_Handler):
    names = ("string",)

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        if conf:
            raise MetadataError(f"data type 'string' takes no configuration, got {conf!r}")
        return ExtInfo("string", STRING_DTYPE if STRING_DTYPE is not None else np.dtype(object), None, None)

    def default(self, dt: DataType) -> Any:
        return ""

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        # read liberally, as zarr-python reads it: zarr-python 2 wrote numbers (``0``) as the fill
        # value of text arrays; they stand for their text ("0"), which is what is written back
        if isinstance(obj, (int, float)):
            return str(obj)
        if not isinstance(obj, str):
            raise MetadataError(f"fill_value for string must be a string (or a number, read as its text), got {obj!r}")
        return obj

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return str(value)

    def normalize(self, dt: DataType, value: Any) -> Any:
        value = _scalar(value)
        value = _number_text(value)
        if not isinstance(value, str):
            raise MetadataError(f"fill_value for string must be a str, got {value!r}")
        return str(value)


class _VBytes(_Handler):
    names = ("variable_length_bytes", "bytes")

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        if conf:
            raise MetadataError(f"data type {name!r} takes no configuration, got {conf!r}")
        return ExtInfo("vbytes", np.dtype(object), None, None)

    def default(self, dt: DataType) -> Any:
        return b""

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        return _b64(obj, "variable_length_bytes")

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return _to_b64(_as_bytes(value, "variable_length_bytes"))

    def normalize(self, dt: DataType, value: Any) -> Any:
        return _as_bytes(value, "variable_length_bytes")


class _FixedUTF32(_Handler):
    names = ("fixed_length_utf32",)

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        n = _length(conf or {}, name, 4)
        return ExtInfo("fixed_utf32", np.dtype(f"U{n // 4}"), 4, {"length_bytes": n})

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        if not isinstance(obj, str):
            raise MetadataError(f"fill_value for {dt} must be a string, got {obj!r}")
        return self.normalize(dt, obj)

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return str(value)

    def normalize(self, dt: DataType, value: Any) -> Any:
        value = _scalar(value)
        value = _number_text(value)
        if not isinstance(value, str):
            raise MetadataError(f"fill_value for {dt} must be a str, got {value!r}")
        if len(value) > dt.numpy_dtype.itemsize // 4:
            raise MetadataError(f"fill_value {value!r} is longer than {dt.numpy_dtype.itemsize // 4} characters")
        return np.str_(value)


class _NTBytes(_Handler):
    names = ("null_terminated_bytes",)

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        n = _length(conf or {}, name)
        return ExtInfo("nt_bytes", np.dtype(f"S{n}"), 1, {"length_bytes": n})

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        return self.normalize(dt, _b64(obj, str(dt)))

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return _to_b64(bytes(np.bytes_(value)))

    def normalize(self, dt: DataType, value: Any) -> Any:
        value = _scalar(value)
        text = _number_text(value)
        raw = text.encode("ascii") if text is not value else _as_bytes(value, str(dt))
        if len(raw) > dt.numpy_dtype.itemsize:
            raise MetadataError(f"fill_value {raw!r} is longer than {dt.numpy_dtype.itemsize} bytes")
        return np.bytes_(raw)


class _RawBytes(_Handler):
    names = ("raw_bytes",)

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        n = _length(conf or {}, name)
        return ExtInfo("raw_bytes", np.dtype(f"V{n}"), 1, {"length_bytes": n})

    def default(self, dt: DataType) -> Any:
        return np.void(bytes(dt.itemsize))

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        return self.normalize(dt, _b64(obj, str(dt)))

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return _to_b64(np.asarray(value).tobytes())

    def normalize(self, dt: DataType, value: Any) -> Any:
        value = _scalar(value)
        if isinstance(value, (list, tuple)) and all(isinstance(b, int) and not isinstance(b, bool) for b in value):
            if not all(0 <= b <= 255 for b in value):
                raise MetadataError(f"fill_value for {dt}: {value!r} holds a value outside [0, 255]")
            value = bytes(value)
        raw = _as_bytes(value, str(dt))
        if len(raw) != dt.itemsize:
            raise MetadataError(f"fill_value for {dt} must be {dt.itemsize} bytes, got {len(raw)}")
        return np.void(raw)


class _Time(_Handler):
    names = ("numpy.datetime64", "numpy.timedelta64")

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        conf = conf or {}
        if set(conf) != {"unit", "scale_factor"}:
            raise MetadataError(f"data type {name!r}: the configuration must be exactly {{'unit', 'scale_factor'}}, "
                                f"got {conf!r}")
        unit, scale = conf["unit"], conf["scale_factor"]
        if unit not in TIME_UNITS:
            raise MetadataError(f"data type {name!r}: unit must be one of {list(TIME_UNITS)}, got {unit!r}")
        if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale < 2**31:
            raise MetadataError(f"data type {name!r}: scale_factor must be an integer in [1, 2**31), got {scale!r}")
        if unit == "μs":
            unit = "us"  # numpy's spelling (zarr-python writes it back so)
        if unit == "generic" and scale != 1:
            raise MetadataError(f"data type {name!r}: the generic unit takes no scale factor, got {scale}")
        code = "M8" if name == "numpy.datetime64" else "m8"
        npdt = np.dtype(code if unit == "generic" else f"{code}[{scale}{unit}]")
        kind = "datetime" if code == "M8" else "timedelta"
        return ExtInfo(kind, npdt, 8, {"unit": unit, "scale_factor": scale})

    def default(self, dt: DataType) -> Any:
        return np.array(NAT, np.int64).view(dt.numpy_dtype)[()]

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        if obj == "NaT":
            return self.default(dt)
        if isinstance(obj, bool) or not isinstance(obj, int) or not NAT <= obj < 2**63:
            raise MetadataError(f"fill_value for {dt} must be a 64-bit integer or 'NaT', got {obj!r}")
        return np.array(obj, dtype=np.int64).view(dt.numpy_dtype)[()]

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        return int(np.asarray(value, dtype=dt.numpy_dtype).view(np.int64))

    def normalize(self, dt: DataType, value: Any) -> Any:
        value = _scalar(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_, np.timedelta64)):
            return self.parse_fill(dt, int(value))
        if isinstance(value, (str, np.datetime64, np.timedelta64)):
            try:
                if isinstance(value, str):
                    value = dt.numpy_dtype.type(value)
                if value.dtype.kind != dt.numpy_dtype.kind:
                    raise TypeError("a datetime for a timedelta or back")
                return np.asarray(value).astype(dt.numpy_dtype, casting="same_kind")[()]
            except (TypeError, ValueError) as e:
                raise MetadataError(f"fill_value {value!r} is not valid for {dt}: {e}") from None
        raise MetadataError(f"fill_value for {dt} must be an integer, 'NaT' or a numpy time value, got {value!r}")


class _Struct(_Handler):
    names = ("struct", "structured")

    def fields(self, dt: DataType) -> list[tuple[str, DataType]]:
        from .dtypes import DataType as DT

        conf = dt.configuration or {}
        if dt.name == "struct":
            return [(f["name"], DT.parse(f["data_type"])) for f in conf["fields"]]
        return [(f[0], DT.parse(f[1])) for f in conf["fields"]]

    def build(self, name: str, conf: dict[str, Any] | None) -> ExtInfo:
        from .dtypes import DataType as DT

        conf = conf or {}
        if set(conf) != {"fields"} or not isinstance(conf["fields"], list) or not conf["fields"]:
            raise MetadataError(f"data type {name!r}: the configuration must be {{'fields': [...]}} with at least "
                                f"one field, got {conf!r}")
        if len(conf["fields"]) > MAX_FIELDS:
            raise MetadataError(f"data type {name!r}: more than {MAX_FIELDS} fields")
        parts, seen = [], set()
        for f in conf["fields"]:
            if name == "struct":
                if not isinstance(f, dict) or set(f) != {"name", "data_type"}:
                    raise MetadataError(f"data type 'struct': a field must be {{'name', 'data_type'}}, got {f!r}")
                fname, fjson = f["name"], f["data_type"]
            else:
                if not isinstance(f, list) or len(f) != 2:
                    raise MetadataError(f"data type 'structured': a field must be [name, data_type], got {f!r}")
                fname, fjson = f
            if not isinstance(fname, str) or not fname or fname in seen:
                raise MetadataError(f"data type {name!r}: field names must be distinct non-empty strings, got {fname!r}")
            seen.add(fname)
            fdt = DT.parse(fjson)
            if fdt.numpy_dtype.hasobject or fdt.kind == "string":
                raise MetadataError(f"data type {name!r}: field {fname!r} has the variable-length type {fdt}")
            parts.append((fname, fdt.numpy_dtype))
        npdt = np.dtype(parts)
        if npdt.itemsize > MAX_ITEM_BYTES:
            raise MetadataError(f"data type {name!r}: records of {npdt.itemsize} bytes are too wide")
        return ExtInfo("struct", npdt, None, {"fields": conf["fields"]})

    def default(self, dt: DataType) -> Any:
        return np.zeros((), dtype=dt.numpy_dtype)[()]

    def parse_fill(self, dt: DataType, obj: Any) -> Any:
        if isinstance(obj, str):
            raw = _b64(obj, str(dt.name))
            if len(raw) != dt.itemsize:
                raise MetadataError(f"fill_value for {dt.name} must be {dt.itemsize} bytes, got {len(raw)}")
            return np.frombuffer(raw, dtype=dt.numpy_dtype)[0]
        if not isinstance(obj, dict):
            raise MetadataError(f"fill_value for {dt.name} must be an object of field values, got {obj!r}")
        flds = self.fields(dt)
        unknown = set(obj) - {n for n, _ in flds}
        if unknown:
            raise MetadataError(f"fill_value for {dt.name}: unknown fields {sorted(unknown)}")
        out = np.zeros((), dtype=dt.numpy_dtype)
        for fname, fdt in flds:
            out[fname] = fdt.parse_fill_value(obj[fname]) if fname in obj else fdt.default_fill_value()
        return out[()]

    def fill_to_json(self, dt: DataType, value: Any) -> Any:
        arr = np.asarray(value, dtype=dt.numpy_dtype)
        if dt.name == "structured":
            return _to_b64(arr.tobytes())
        return {fname: fdt.fill_value_to_json(arr[fname][()]) for fname, fdt in self.fields(dt)}

    def normalize(self, dt: DataType, value: Any) -> Any:
        if isinstance(value, dict):
            out = np.zeros((), dtype=dt.numpy_dtype)
            flds = dict(self.fields(dt))
            for k, v in value.items():
                if k not in flds:
                    raise MetadataError(f"fill_value for {dt.name}: unknown field {k!r}")
                out[k] = flds[k].normalize_fill_value(v)
            return out[()]
        try:
            return np.asarray(value).astype(dt.numpy_dtype, casting="unsafe")[()] if not isinstance(
                value, tuple) else np.array(value, dtype=dt.numpy_dtype)[()]
        except (TypeError, ValueError) as e:
            raise MetadataError(f"fill_value {value!r} is not valid for {dt.name}: {e}") from None


HANDLERS: dict[str, _Handler] = {}
for _h in (_String(), _VBytes(), _FixedUTF32(), _NTBytes(), _RawBytes(), _Time(), _Struct()):
    for _n in _h.names:
        HANDLERS[_n] = _h


def build(name: str, conf: dict[str, Any] | None) -> tuple[_Handler, ExtInfo]:
    """The handler and facts of extension data type ``name`` (UnknownDataTypeError if unknown)."""
    h = HANDLERS.get(name)
    if h is None:
        raise UnknownDataTypeError(f"unknown data type {name!r}")
    return h, h.build(name, conf)


def from_numpy(dt: np.dtype) -> tuple[str, dict[str, Any] | None] | None:
    """zarr-python's v3 data type for a numpy dtype it is not a core type for, or None."""
    k, n = dt.kind, dt.itemsize
    if k == "U":
        if n == 0:
            raise UnknownDataTypeError("numpy dtype <U0 holds no characters: give a length (e.g. <U8)")
        return "fixed_length_utf32", {"length_bytes": n}
    if k == "S":
        if n == 0:
            raise UnknownDataTypeError("numpy dtype |S0 holds no bytes: give a length (e.g. |S8)")
        return "null_terminated_bytes", {"length_bytes": n}
    if k in "mM":
        unit, scale = np.datetime_data(dt)
        return ("numpy.datetime64" if k == "M" else "numpy.timedelta64"), {"unit": unit, "scale_factor": scale}
    if k == "T":
        if hasattr(dt, "na_object"):
            raise UnknownDataTypeError(f"numpy {dt} has an na_object, which the Zarr 'string' type cannot store")
        return "string", None
    if k == "O":
        raise UnknownDataTypeError(
            "numpy object arrays are ambiguous: give dtype='string' (variable-length text) or "
            "dtype='variable_length_bytes' (variable-length bytes)")
    if k == "V" and dt.fields is not None:
        fields = []
        for fname in dt.names or ():
            fdt, _off, *title = dt.fields[fname]
            if title or fdt.subdtype is not None:
                raise UnknownDataTypeError(f"structured dtype {dt}: field {fname!r} has a title or a subarray shape")
            from .dtypes import DataType

            fields.append({"name": fname, "data_type": DataType.from_numpy(fdt).to_json()})
        return "struct", {"fields": fields}
    if k == "V" and dt.subdtype is None and n > 0:
        return "raw_bytes", {"length_bytes": n}
    return None


PY_NAMES = {"string": "string", "str": "string", "bytes": "variable_length_bytes",
            "variable_length_bytes": "variable_length_bytes"}
