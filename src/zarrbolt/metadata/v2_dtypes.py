"""Zarr v2 data types (numpy type strings and structured field lists) and fill values: parsed
from and written to their ``.zarray`` JSON forms.  Errors name the document and member."""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import numpy as np

from ..errors import MetadataError, UnknownDataTypeError
from .dtypes import DataType

# <byteorder><kind><size>[unit]; numpy's datetime units
_DTYPE_RE = re.compile(r"^([<>|=])([biufcmMSUVO])([0-9]*)(?:\[([0-9]*)(Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)\])?$")
_NUMERIC_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16), "m": (8,), "M": (8,)}
MAX_ITEMSIZE = 2**16  # |S, <U, |V and structured items: small records, never a huge allocation per item
_MAX_STRUCT_DEPTH = 8


def _simple_dtype(s: str, where: str) -> np.dtype:
    m = _DTYPE_RE.match(s)
    if m is None:
        raise MetadataError(f"{where}: {s!r} is not a Zarr v2 data type (e.g. '<f8', '|u1', '<M8[ns]', '|S4')")
    order, kind, size, scale, unit = m.groups()
    if order == "=":
        raise MetadataError(f"{where}: data type {s!r} must give its byte order ('<', '>' or '|')")
    if kind in "mM":
        if unit is None or size != "8":
            raise MetadataError(f"{where}: data type {s!r}: datetime64/timedelta64 need size 8 and a unit, e.g. '<M8[ns]'")
        if scale and int(scale) == 0:
            raise MetadataError(f"{where}: data type {s!r}: the unit's multiplier must be positive")
    elif unit is not None:
        raise MetadataError(f"{where}: data type {s!r}: only datetime64/timedelta64 take a unit")
    if kind == "O":
        if size not in ("", "8") or order != "|":
            raise MetadataError(f"{where}: the object data type is spelled '|O', got {s!r}")
        return np.dtype("O")
    if not size:
        raise MetadataError(f"{where}: data type {s!r} needs a size in bytes")
    n = int(size)
    if kind in _NUMERIC_SIZES:
        if n not in _NUMERIC_SIZES[kind]:
            raise MetadataError(f"{where}: data type {s!r}: {kind!r} has no {n}-byte type")
    elif n < 1 or n * (4 if kind == "U" else 1) > MAX_ITEMSIZE:
        raise MetadataError(f"{where}: data type {s!r}: the size must be 1..{MAX_ITEMSIZE} bytes")
    if n > 1 and kind in "SV" and order != "|":
        raise MetadataError(f"{where}: data type {s!r}: byte strings and void types have byte order '|'")
    if order == "|" and kind in "iufcmMU" and n * (4 if kind == "U" else 1) > 1:
        raise MetadataError(f"{where}: data type {s!r}: a multi-byte type must give its byte order ('<' or '>')")
    try:
        return np.dtype(s)
    except (TypeError, ValueError, SyntaxError) as e:  # pragma: no cover - the pattern above admits only numpy's forms
        raise MetadataError(f"{where}: data type {s!r}: {e}") from None


def _structured_dtype(fields: list[Any], where: str, depth: int = 0) -> np.dtype:
    if depth > _MAX_STRUCT_DEPTH:
        raise MetadataError(f"{where}: structured data type nested deeper than {_MAX_STRUCT_DEPTH} levels")
    if not fields:
        raise MetadataError(f"{where}: a structured data type needs at least one field")
    out, names = [], set()
    total = 0  # the record's bytes so far: checked before numpy is asked (it refuses huge shapes its own way)
    for f in fields:
        if not isinstance(f, list) or len(f) not in (2, 3) or not isinstance(f[0], str):
            raise MetadataError(f"{where}: structured field {f!r} must be [name, dtype] or [name, dtype, shape]")
        name, ft = f[0], f[1]
        if not name or name in names:
            raise MetadataError(f"{where}: structured field names must be unique and non-empty, got {name!r}")
        names.add(name)
        sub = _structured_dtype(ft, where, depth + 1) if isinstance(ft, list) else None
        if sub is None:
            if not isinstance(ft, str):
                raise MetadataError(f"{where}: the type of field {name!r} must be a string or a list, got {ft!r}")
            sub = _simple_dtype(ft, where)
            if sub.kind == "O":
                raise MetadataError(f"{where}: field {name!r}: object fields are not supported")
        if len(f) == 3:
            shape = f[2]
            if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
                raise MetadataError(f"{where}: the shape of field {name!r} must be a list of positive integers, got {shape!r}")
            out.append((name, sub, tuple(shape)))
            total += sub.itemsize * math.prod(shape)
        else:
            out.append((name, sub))  # type: ignore[arg-type]  # numpy takes 2- and 3-tuples
            total += sub.itemsize
        if total > MAX_ITEMSIZE:
            raise MetadataError(f"{where}: structured data type of more than {MAX_ITEMSIZE} bytes (field {name!r} "
                                f"ends at byte {total})")
    try:
        dt = np.dtype(out)
    except (TypeError, ValueError) as e:
        raise MetadataError(f"{where}: structured data type {fields!r}: {e}") from None
    if dt.itemsize > MAX_ITEMSIZE:
        raise MetadataError(f"{where}: structured data type of {dt.itemsize} bytes (at most {MAX_ITEMSIZE})")
    return dt


def parse_v2_dtype(obj: Any, where: str = "'.zarray' dtype") -> np.dtype:
    """The numpy dtype (with its byte order) of a v2 ``dtype`` member."""
    if isinstance(obj, str):
        return _simple_dtype(obj, where)
    if isinstance(obj, list):
        return _structured_dtype(obj, where)
    raise MetadataError(f"{where} must be a string or a list of fields, got {obj!r}")


def v2_dtype_to_json(dt: np.dtype) -> Any:
    """The v2 ``dtype`` member for a numpy dtype (the inverse of :func:`parse_v2_dtype`)."""
    if dt.fields is not None:
        out = []
        for name in dt.names or ():
            ft = dt.fields[name][0]
            if ft.subdtype is not None:
                base, shape = ft.subdtype
                out.append([name, v2_dtype_to_json(base), list(shape)])
            else:
                out.append([name, v2_dtype_to_json(ft)])
        return out
    if dt.kind == "O":
        return "|O"
    return dt.str


def _orders(dt: np.dtype) -> set[str]:
    if dt.fields is not None:
        return set().union(*(_orders(dt.fields[n][0]) for n in dt.names or ()))
    if dt.subdtype is not None:
        return _orders(dt.subdtype[0])
    if dt.kind in "SVbO" or dt.itemsize == 1:
        return set()
    return {">" if dt.str.startswith(">") else "<"}


def byte_order(dt: np.dtype, where: str) -> str | None:
    """The bytes codec's ``endian`` for a stored v2 dtype: 'little', 'big' or None (no multi-byte
    numbers: one-byte items, byte strings, void); a record's fields must agree."""
    orders = _orders(dt)
    if len(orders) > 1:
        raise MetadataError(f"{where}: the fields of {v2_dtype_to_json(dt)!r} mix byte orders, which is not supported")
    if not orders:
        return None
    return "big" if orders == {">"} else "little"


def native_dtype(dt: np.dtype) -> np.dtype:
    """``dt`` in native byte order (the decoded chunks' dtype; a record's fields too)."""
    if dt.fields is not None:
        return np.dtype([(n, native_dtype(dt.fields[n][0])) for n in dt.names or ()])
    if dt.subdtype is not None:
        return np.dtype((native_dtype(dt.subdtype[0]), dt.subdtype[1]))
    if dt.kind in "OSVb":
        return dt
    return dt.newbyteorder("=")


def data_type_for(dt: np.dtype, object_codec: str | None, where: str) -> DataType:
    """The zarrbolt data type of the values of a v2 array of numpy type ``dt``."""
    try:
        if dt.kind == "O":
            if object_codec is None:
                raise MetadataError(f"{where}: an object ('|O') array needs a vlen-utf8 or vlen-bytes filter")
            name = {"vlen-utf8": "string", "vlen-bytes": "variable_length_bytes", "categorize": "string"}.get(object_codec)
            if name is None:
                raise UnknownDataTypeError(f"{where}: object arrays with the {object_codec!r} codec are not supported")
            return DataType.parse(name)
        return DataType.from_numpy(native_dtype(dt))
    except UnknownDataTypeError as e:
        if where in str(e):
            raise
        raise UnknownDataTypeError(f"{where}: data type {v2_dtype_to_json(dt)!r} is not supported: {e}") from None


# ---------------------------------------------------------------------------- fill values
def _b64(obj: Any, where: str) -> bytes:
    if not isinstance(obj, str):
        raise MetadataError(f"{where}: expected a base64 string, got {obj!r}")
    try:
        return base64.b64decode(obj.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MetadataError(f"{where}: {obj!r} is not valid base64") from None


def _float(obj: Any, where: str) -> float:
    if isinstance(obj, str):
        special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if obj not in special:
            raise MetadataError(f"{where}: {obj!r} is not a number, 'NaN', 'Infinity' or '-Infinity'")
        return special[obj]
    if isinstance(obj, bool) or not isinstance(obj, (int, float)):
        raise MetadataError(f"{where}: expected a number, got {obj!r}")
    try:
        return float(obj)
    except OverflowError:
        return math.inf if obj > 0 else -math.inf


def _integer(obj: Any, dt: np.dtype, where: str) -> int:
    if isinstance(obj, float) and obj.is_integer():
        obj = int(obj)  # some writers spell integer fill values as 0.0
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise MetadataError(f"{where}: expected an integer for {dt.str}, got {obj!r}")
    info = np.iinfo(dt)
    if not info.min <= obj <= info.max:
        raise MetadataError(f"{where}: {obj} is out of range for {dt.str} [{info.min}, {info.max}]")
    return obj


def parse_v2_fill_value(obj: Any, dt: np.dtype, object_codec: str | None, where: str) -> Any:
    """The fill value (a numpy scalar of the native dtype, ``str`` / ``bytes`` for object arrays)
    of a non-null v2 ``fill_value`` member."""
    k = dt.kind
    nat = native_dtype(dt)
    if k == "b":
        if isinstance(obj, bool) or (isinstance(obj, int) and obj in (0, 1)):
            return np.bool_(bool(obj))
        raise MetadataError(f"{where}: expected true or false for {dt.str}, got {obj!r}")
    if k in "iu":
        return nat.type(_integer(obj, dt, where))
    if k == "f":
        with np.errstate(over="ignore"):
            return nat.type(_float(obj, where))
    if k == "c":
        if not isinstance(obj, list) or len(obj) != 2:
            raise MetadataError(f"{where}: expected [real, imag] for {dt.str}, got {obj!r}")
        return nat.type(complex(_float(obj[0], where), _float(obj[1], where)))
    if k in "mM":
        if obj == "NaT":
            return nat.type("NaT")
        return np.array(_integer(obj, np.dtype("i8"), where), dtype="i8").view(nat)[()]
    if k == "U":
        if not isinstance(obj, str) or len(obj) > dt.itemsize // 4:
            raise MetadataError(f"{where}: expected a string of at most {dt.itemsize // 4} characters, got {obj!r}")
        return np.str_(obj)
    if k == "O":
        if object_codec in ("vlen-utf8", "categorize"):
            if isinstance(obj, (int, float)):  # zarr-python 2 wrote 0: read as its text, as zarr-python reads it
                return str(obj)
            if not isinstance(obj, str):
                raise MetadataError(f"{where}: expected a string (or a number, read as its text) for a vlen-utf8 array, got {obj!r}")
            return obj
        return _b64(obj, where)
    raw = _b64(obj, where)  # |S, |V, structured
    if k == "S":
        if len(raw) > dt.itemsize:
            raise MetadataError(f"{where}: {len(raw)} bytes do not fit {dt.str}")
        return np.bytes_(raw)
    if len(raw) != dt.itemsize:
        raise MetadataError(f"{where}: {len(raw)} bytes, {v2_dtype_to_json(dt)!r} items have {dt.itemsize}")
    if dt.fields is not None:
        return np.frombuffer(raw, dtype=dt).astype(native_dtype(dt))[0]
    return np.void(raw)


def _float_json(x: float) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def v2_fill_value_to_json(value: Any, dt: np.dtype, object_codec: str | None) -> Any:
    """The v2 JSON form of a fill value (the inverse of :func:`parse_v2_fill_value`)."""
    k = dt.kind
    if k == "O":
        if object_codec in ("vlen-utf8", "categorize"):
            return str(value)
        return base64.b64encode(bytes(value)).decode("ascii")
    if dt.fields is not None:  # the record's bytes in the stored byte order
        return base64.b64encode(np.asarray(value).astype(dt).tobytes()).decode("ascii")
    arr = np.asarray(value, dtype=native_dtype(dt)) if dt.kind != "V" else np.asarray(value)
    if k == "b":
        return bool(arr)
    if k in "iu":
        return int(arr)
    if k == "f":
        return _float_json(float(arr))
    if k == "c":
        c = complex(arr)
        return [_float_json(c.real), _float_json(c.imag)]
    if k in "mM":
        return int(arr.view("i8"))
    if k == "U":
        return str(arr)
    raw = arr.tobytes()
    if k == "S":
        raw = raw.rstrip(b"\x00")
    return base64.b64encode(raw).decode("ascii")


