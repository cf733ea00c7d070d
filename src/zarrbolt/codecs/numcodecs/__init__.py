"""numcodecs' codecs: the codecs zarr-python 3 writes as ``numcodecs.<id>``
(``zarr.codecs.numcodecs``), which Zarr v2 metadata names by their numcodecs id (see
:mod:`zarrbolt.codecs.v2_ids`), grouped by what they are:

* :mod:`~zarrbolt.codecs.numcodecs.compressors`: zstd, gzip, blosc, zlib, lz4, bz2, lzma;
* :mod:`~zarrbolt.codecs.numcodecs.checksums`: crc32, crc32c, adler32, fletcher32,
  jenkins_lookup3;
* :mod:`~zarrbolt.codecs.numcodecs.filters`: delta, fixedscaleoffset, bitround, quantize,
  astype, packbits, categorize (array -> array) and shuffle (bytes -> bytes).

JSON: ``{"name": "numcodecs.<id>", "configuration": {...}}`` with numcodecs' own configuration
(numcodecs' ``"id"`` may be present and must name the codec).  This module holds what they
share: that ``id`` member, numpy data type strings as configuration members, and configurations
kept as given."""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import MetadataError


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
        from .._util import config_dict

        conf = config_dict(configuration, cls.name, set(cls._members) | {"id"})
        check_numcodecs_id(conf, cls.name)
        return cls(**{k: v for k, v in conf.items() if k != "id"})

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": dict(self.config)}
