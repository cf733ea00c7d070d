"""What the ``numcodecs.*`` codecs share: numcodecs' ``id`` configuration member, and the
per-codec and fused-plan faces of a compressor whose C side is one extension module."""

from __future__ import annotations

from typing import Any, ClassVar, cast

import importlib

from ..errors import MetadataError
from .abc import BytesToBytesCodec, ChunkSpec
from ._util import as_bytes_view


def check_numcodecs_id(conf: dict[str, Any], name: str) -> None:
    """numcodecs' ``id`` member, allowed when it names codec ``name`` ("numcodecs.<id>"), as
    zarr-python accepts it (and drops it when it writes)."""
    if "id" in conf and conf["id"] != name.removeprefix("numcodecs."):
        raise MetadataError(f"codec {name!r}: id {conf['id']!r} does not name this codec")


def numpy_dtype_param(name: str, value: Any, what: str, kinds: str, unsupported: str | None = None) -> Any:
    """Codec ``name``'s configuration member ``what``: a numpy data type string of one of the
    ``kinds`` (floats only float16/32/64), little-endian or native; as a native numpy dtype.
    ``unsupported``: the message for a type of another kind."""
    import numpy as np

    if not isinstance(value, str):
        raise MetadataError(f"codec {name!r}: {what} must be a numpy data type string, got {value!r}")
    try:
        dt = np.dtype(value)
    except (TypeError, ValueError, SyntaxError):  # (numpy parses comma strings as Python)
        raise MetadataError(f"codec {name!r}: {what} {value!r} is not a numpy data type") from None
    if dt.kind not in kinds or (dt.kind == "f" and dt.itemsize not in (2, 4, 8)):
        raise MetadataError(f"codec {name!r}: {what} {value!r}: {unsupported}" if unsupported
                            else f"codec {name!r}: {what} {value!r} is not supported")
    if dt.byteorder == ">" or (dt.byteorder == "=" and not dt.isnative):
        raise MetadataError(f"codec {name!r}: {what} {value!r}: big-endian types are not supported")
    return dt.newbyteorder("=")


class KeptConfiguration:
    """Mixin of numcodecs codecs whose configuration is kept as given (less ``id``): the
    configuration members a codec allows are ``_members``; ``_check()`` validates them."""

    name: ClassVar[str]
    _members: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, **config: Any):
        self.config = dict(config)
        self._check()

    def _check(self) -> None:
        pass

    @classmethod
    def from_json(cls, configuration: Any) -> Any:
        from ._util import config_dict

        conf = config_dict(configuration, cls.name, set(cls._members) | {"id"})
        check_numcodecs_id(conf, cls.name)
        return cls(**{k: v for k, v in conf.items() if k != "id"})

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": dict(self.config)}


class ExtensionCompressor(BytesToBytesCodec):
    """A bytes -> bytes codec whose C side is the extension module ``zarrbolt._ext.<_module>``
    with ``compress(data, param)``, ``decompress(data, max_size)``, the capsules ``DECODE_STEP``,
    ``ENCODE_STEP``, ``PREFIX_FN`` and ``encode_params(param)``; ``_param()`` is the codec's one
    encode parameter (zlib's level, lz4's acceleration)."""

    _module = ""

    def _ext(self) -> Any:
        return importlib.import_module(f"zarrbolt._ext.{self._module}")

    def _param(self) -> int:
        raise NotImplementedError

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        return cast(bytes, self._ext().compress(as_bytes_view(data), self._param()))

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        return cast(bytes, self._ext().decompress(as_bytes_view(data), max_size))

    # -- codec-owned fused-plan stages
    def c_decode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        return ("transform", self._ext().DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[str, Any, bytes]:
        ext = self._ext()
        return ("transform", ext.ENCODE_STEP, ext.encode_params(self._param()))

    def c_partial(self, spec: ChunkSpec) -> tuple[str, Any]:
        return ("prefix", self._ext().PREFIX_FN)
