"""The long tail of codecs, through numcodecs: a Zarr v2 ``compressor`` / ``filters`` id, or a Zarr
v3 ``numcodecs.<id>`` codec, that zarrbolt has no codec of is run by the installed numcodecs when
numcodecs (or a package that registers codecs with it, such as ``pcodec``, ``zfpy`` or
``imagecodecs``) knows the id, as zarr-python runs it.

numcodecs is an optional dependency (``pip install 'zarrbolt[numcodecs]'``); it is imported the
first time such a codec is met.  With nothing that knows the id, the array is refused with an
:class:`~zarrbolt.errors.UnknownCodecError` naming the package to install.

These codecs run on the per-codec path (no fused C plan), one chunk at a time, in numcodecs' own
code: zarrbolt bounds what they return (a chunk that decodes to more than the chain allows is a
:class:`~zarrbolt.errors.CorruptChunkError`) but not the memory numcodecs uses to decode it.
Every chunk they encode or decode is counted in :data:`counts` (``counts[(id, "decode")]``).

Codecs that run code from the data (numcodecs' ``pickle``) are refused unless the user opts in
with ``zarrbolt.config.set(allow_unsafe_pickle=True)`` (numcodecs' own opt-in,
``NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE=1``, is needed as well).

How they take their data is zarr-python's:

* Zarr v3: numcodecs' Zarr v3 wrappers (``numcodecs.zarr3``): ``pcodec`` and ``zfpy`` are array ->
  bytes codecs (given the chunk as a C-ordered array); another id is array -> array before the
  array -> bytes codec of the chain and bytes -> bytes after it (given the bytes as uint8);
* Zarr v2: the compressor and filters of zarr-python's v2 pipeline: after the ``bytes`` step, the
  first one is given the chunk as an array of the stored type and chunk shape (``order`` "F":
  its transpose), the next ones what the one before returned; what a decode returns is taken as
  its bytes in memory order.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from typing import Any

import numpy as np

from ...errors import CodecError, CorruptChunkError, MetadataError, UnknownCodecError
from ..abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from .._util import as_bytes_view

#: chunks encoded and decoded through numcodecs, by ``(codec id, "encode" | "decode")``
counts: Counter[tuple[str, str]] = Counter()
_counts_lock = threading.Lock()

#: ids of codecs that run code from the data when they decode (refused unless opted in)
UNSAFE_IDS = frozenset({"pickle"})
#: ids numcodecs' Zarr v3 wrappers run as array -> bytes codecs
ARRAY_TO_BYTES_IDS = frozenset({"pcodec", "zfpy"})
# the package that brings a codec numcodecs does not have itself
_PACKAGES = {"pcodec": "pcodec", "zfpy": "zfpy"}
_PREFIX = "numcodecs."


def _count(cid: str, what: str) -> None:
    with _counts_lock:
        counts[(cid, what)] += 1


def _numcodecs() -> Any:
    try:
        import numcodecs
    except ImportError:
        return None
    return numcodecs


def package_for(cid: str) -> str:
    """The package that brings codec ``cid`` to numcodecs (``numcodecs`` for its own)."""
    if cid in _PACKAGES:
        return _PACKAGES[cid]
    if cid.startswith("imagecodecs_"):
        return "imagecodecs"
    return "numcodecs"


def unknown_codec_error(cid: str, where: str) -> UnknownCodecError:
    """The error for an id neither zarrbolt nor the installed numcodecs knows, naming what to install."""
    pkg = package_for(cid)
    if _numcodecs() is None:
        hint = "install numcodecs (pip install 'zarrbolt[numcodecs]')"
        if pkg != "numcodecs":
            hint += f" and {pkg}"
    elif pkg != "numcodecs":
        hint = f"install {pkg}, which registers it with numcodecs"
    else:
        hint = "no installed package registers it with numcodecs: install the one that provides it"
    return UnknownCodecError(f"{where}: unknown codec id {cid!r}: neither zarrbolt nor numcodecs reads it ({hint})")


def check_allowed(cid: str, where: str) -> None:
    """MetadataError for a codec that runs code from the data, unless the user opted in."""
    from ... import config

    if cid in UNSAFE_IDS and config.get("allow_unsafe_pickle") is not True:
        raise MetadataError(
            f"{where}: the codec {cid!r} runs code from the data when it decodes; refusing it. If you trust this "
            "data, opt in with zarrbolt.config.set(allow_unsafe_pickle=True) (or ZARRBOLT_ALLOW_UNSAFE_PICKLE=1), "
            "and numcodecs' own opt-in, NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE=1"
        )


def numcodecs_codec(conf: dict[str, Any], where: str) -> Any:
    """numcodecs' codec object for the configuration ``{"id": ..., ...}``: UnknownCodecError
    (naming the package to install) when nothing knows the id, MetadataError when numcodecs
    refuses the configuration or the codec runs code from the data (unless opted in)."""
    cid = conf["id"]
    nc = _numcodecs()
    if nc is None:
        raise unknown_codec_error(cid, where)
    try:
        codec = nc.get_codec(dict(conf))
    except Exception as e:  # noqa: BLE001 - numcodecs' and the codec's own errors
        if type(e).__name__ == "UnknownCodecError" or "codec not available" in str(e):
            raise unknown_codec_error(cid, where) from None
        raise MetadataError(f"{where}: numcodecs refuses the configuration {conf!r}: {e}") from None
    check_allowed(cid, where)
    return codec


def _as_flat_bytes(out: Any, name: str) -> memoryview:
    """What a numcodecs decode returned, as its bytes in memory order."""
    if isinstance(out, (bytes, bytearray)):
        return memoryview(out)
    arr = np.asarray(out)
    if arr.dtype.hasobject:
        raise CorruptChunkError(f"{name}: numcodecs decoded the chunk to Python objects, not to bytes")
    flat = np.ascontiguousarray(arr.reshape(-1, order="A"))
    return memoryview(flat.view(np.uint8))


class _External:
    """What the codecs run by numcodecs share: the id, the configuration as given and
    numcodecs' codec object."""

    name: str

    def _setup(self, cid: str, config: dict[str, Any], where: str) -> None:
        self.cid = cid
        self.name = _PREFIX + cid  # (per instance: the id it runs)
        self.config = {k: v for k, v in config.items() if k != "id"}
        self.numcodec = numcodecs_codec({"id": cid, **self.config}, where)

    @classmethod
    def from_json(cls, configuration: Any) -> Codec:
        raise MetadataError("codecs run by numcodecs are made by the codec registry (zarrbolt.codecs.registry)")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": dict(self.config)}

    def _run(self, what: str, fn: Any, data: Any) -> Any:
        try:
            out = fn(data)
        except Exception as e:  # noqa: BLE001 - whatever the codec raises
            if what == "decode":
                raise CorruptChunkError(f"{self.name}: numcodecs could not decode the chunk: {e}") from None
            raise CodecError(f"{self.name}: numcodecs could not encode the chunk: {e}") from None
        _count(self.cid, what)
        return out


class NumcodecsBytesCodec(_External, BytesToBytesCodec):
    """A numcodecs codec as a bytes -> bytes codec (see the module's docstring).  ``typed``: the
    Zarr v2 form, where numcodecs is given the chunk as an array of that numpy type (with its byte
    order) and the chunk's shape, transposed when ``transposed`` (v2 ``order`` "F")."""

    def __init__(self, cid: str, config: dict[str, Any], where: str = "codec", *, typed: str | None = None,
                 transposed: bool = False):
        self._setup(cid, config, where)
        self.typed = None if typed is None else np.dtype(typed)
        self.transposed = transposed
        self.flat = False  # typed input given 1-d (after a numcodecs filter, which returns it so)

    def with_typed_input(self, dtype: np.dtype, transposed: bool) -> NumcodecsBytesCodec:
        out = NumcodecsBytesCodec.__new__(NumcodecsBytesCodec)
        out.__dict__.update(self.__dict__)
        out.typed = np.dtype(dtype)
        out.transposed = transposed
        return out

    def encode(self, data: Any, spec: ChunkSpec) -> Any:
        arr: np.ndarray = np.frombuffer(as_bytes_view(data), np.uint8)
        if self.typed is not None and arr.size == math.prod(spec.shape) * self.typed.itemsize:
            arr = arr.view(self.typed)
            if not self.flat:
                arr = arr.reshape(spec.shape).T if self.transposed else arr.reshape(spec.shape)
        out = self._run("encode", self.numcodec.encode, arr)
        return bytes(_as_flat_bytes(out, self.name))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> Any:
        out = _as_flat_bytes(self._run("decode", self.numcodec.decode, bytes(as_bytes_view(data))), self.name)
        if out.nbytes > max_size:
            raise CorruptChunkError(f"{self.name}: the chunk decodes to {out.nbytes} bytes, more than {max_size}")
        return out


def _as_chunk(out: Any, spec: ChunkSpec, name: str) -> np.ndarray:
    """An array numcodecs returned as the chunk of ``spec`` (its values, in C order: zarr-python's
    ``reshape`` and copy into the output)."""
    arr = np.asarray(out)
    if arr.dtype.hasobject or arr.size != math.prod(spec.shape):
        raise CorruptChunkError(f"{name}: numcodecs decoded {arr.size} items of {arr.dtype}, "
                                f"the chunk has {math.prod(spec.shape)}")
    arr = arr.reshape(spec.shape)
    npdt = spec.dtype.numpy_dtype
    if arr.dtype != npdt:
        try:
            arr = arr.astype(npdt)
        except (TypeError, ValueError) as e:
            raise CorruptChunkError(f"{name}: numcodecs decoded {arr.dtype} items, not {npdt}: {e}") from None
    return np.ascontiguousarray(arr)


class NumcodecsArrayBytesCodec(_External, ArrayToBytesCodec):
    """A numcodecs codec as the array -> bytes codec of a Zarr v3 chain (``pcodec``, ``zfpy``)."""

    def __init__(self, cid: str, config: dict[str, Any], where: str = "codec"):
        self._setup(cid, config, where)

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> Any:
        out = self._run("encode", self.numcodec.encode, np.ascontiguousarray(array))
        return bytes(_as_flat_bytes(out, self.name))

    def decode(self, data: Any, spec: ChunkSpec) -> np.ndarray:
        return _as_chunk(self._run("decode", self.numcodec.decode, bytes(as_bytes_view(data))), spec, self.name)


class NumcodecsArrayArrayCodec(_External, ArrayToArrayCodec):
    """A numcodecs codec as an array -> array codec of a Zarr v3 chain (the chunk keeps its shape
    and data type, as zarr-python's generic numcodecs filter takes it)."""

    def __init__(self, cid: str, config: dict[str, Any], where: str = "codec"):
        self._setup(cid, config, where)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return spec

    def encode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        out = self._run("encode", self.numcodec.encode, np.ascontiguousarray(array))
        try:
            return _as_chunk(out, spec, self.name)
        except CorruptChunkError as e:
            raise CodecError(str(e)) from None

    def decode(self, array: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return _as_chunk(self._run("decode", self.numcodec.decode, np.ascontiguousarray(array)), spec, self.name)


_KINDS = {"array_to_array": NumcodecsArrayArrayCodec, "array_to_bytes": NumcodecsArrayBytesCodec,
          "bytes_to_bytes": NumcodecsBytesCodec}


def v3_codec(name: str, configuration: Any, kind: str, where: str = "codec") -> Codec:
    """The Zarr v3 codec ``numcodecs.<id>`` of ``kind`` (see :func:`infer_kinds`) run by numcodecs."""
    from .._util import config_dict
    from . import check_numcodecs_id

    conf = config_dict(configuration, name, set(configuration or ()))
    check_numcodecs_id(conf, name)
    codec: Codec = _KINDS[kind](name.removeprefix(_PREFIX), conf, f"{where} {name!r}")
    return codec


def v2_codec(conf: dict[str, Any], where: str) -> NumcodecsBytesCodec:
    """The Zarr v2 filter or compressor ``conf`` run by numcodecs (a bytes -> bytes step)."""
    return NumcodecsBytesCodec(conf["id"], conf, where)


def is_external_name(name: str) -> bool:
    """Whether ``name`` is a Zarr v3 codec name numcodecs may know (``numcodecs.<id>``)."""
    return name.startswith(_PREFIX) and len(name) > len(_PREFIX)


def infer_kinds(names: list[str | None], kinds: list[str | None]) -> list[str | None]:
    """The kinds of the codecs of a Zarr v3 list that numcodecs runs (``kinds[i]`` None, names
    ``numcodecs.<id>``), from their place in the list: before its array -> bytes codec array ->
    array, after it bytes -> bytes.  A list without one: ``pcodec`` / ``zfpy`` is it, else the
    last of them before the first bytes -> bytes codec."""
    out = list(kinds)
    unknown = [i for i, k in enumerate(kinds) if k is None]
    if not unknown:
        return out
    if "array_to_bytes" in kinds:
        ab = kinds.index("array_to_bytes")
    else:
        firsts = [i for i in unknown if (names[i] or "").removeprefix(_PREFIX) in ARRAY_TO_BYTES_IDS]
        first_bb = next((i for i, k in enumerate(kinds) if k == "bytes_to_bytes"), len(kinds))
        before = [i for i in unknown if i < first_bb]
        ab = firsts[0] if firsts else (before[-1] if before else -1)
        if ab >= 0:
            out[ab] = "array_to_bytes"
    for i in unknown:
        if out[i] is None:
            out[i] = "array_to_array" if i < ab else "bytes_to_bytes"
    return out
