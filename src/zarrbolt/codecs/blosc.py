"""The ``blosc`` codec (bytes -> bytes), run in C with the GIL released.

Blosc chunks are written with c-blosc 1.x (``zarrbolt._ext._blosc1``), whose format every Zarr
reader understands, and read with c-blosc2 (``zarrbolt._ext._blosc2``), which decodes that format
and is faster (see docs/dependencies.md); a partial read decodes only the blosc blocks it needs."""

from __future__ import annotations

from typing import Any

from ..errors import CorruptChunkError, MetadataError
from .abc import BytesToBytesCodec, ChunkSpec
from .registry import register_codec
from ._util import as_bytes_view, config_dict, int_param


BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy")
BLOSC_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
BLOSC_MAX_OVERHEAD = 16
BLOSC_MAX_TYPESIZE = 255


@register_codec
class BloscCodec(BytesToBytesCodec):
    """``blosc``.  ``typesize`` may be left ``None`` when the codec is built by hand; array
    creation then records the array's item size (the spec requires it in the metadata)."""

    name = "blosc"

    def __init__(
        self,
        cname: str = "zstd",
        clevel: int = 5,
        shuffle: str = "noshuffle",
        typesize: int | None = None,
        blocksize: int = 0,
    ):
        if cname not in BLOSC_CNAMES:
            raise MetadataError(f"codec 'blosc': cname must be one of {list(BLOSC_CNAMES)}, got {cname!r}")
        self.cname = cname
        self.clevel = int_param(clevel, "blosc", "clevel", 0, 9)
        if not isinstance(shuffle, str) or shuffle not in BLOSC_SHUFFLES:
            raise MetadataError(
                f"codec 'blosc': shuffle must be one of {list(BLOSC_SHUFFLES)}, got {shuffle!r}"
            )
        self.shuffle = shuffle
        self.typesize = None if typesize is None else int_param(typesize, "blosc", "typesize", 1)
        self.blocksize = int_param(blocksize, "blosc", "blocksize", 0, 2**31 - 1)

    @classmethod
    def from_json(cls, configuration: Any) -> BloscCodec:
        conf = config_dict(configuration, "blosc", {"cname", "clevel", "shuffle", "typesize", "blocksize"})
        for k in ("cname", "clevel", "shuffle"):
            if k not in conf:
                raise MetadataError(f"codec 'blosc': {k!r} is required")
        codec = cls(conf["cname"], conf["clevel"], conf["shuffle"], conf.get("typesize"), conf.get("blocksize", 0))
        if codec.shuffle != "noshuffle" and codec.typesize is None:
            raise MetadataError("codec 'blosc': 'typesize' is required unless shuffle is 'noshuffle'")
        return codec

    def with_array_dtype(self, itemsize: int) -> BloscCodec:
        """This codec with ``typesize`` filled in from the array's item size if it was left out."""
        if self.typesize is not None:
            return self
        return BloscCodec(self.cname, self.clevel, self.shuffle, itemsize, self.blocksize)

    def to_json(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle}
        if self.typesize is not None:
            conf["typesize"] = self.typesize
        conf["blocksize"] = self.blocksize
        return {"name": "blosc", "configuration": conf}

    def max_encoded_size(self, decoded_nbytes: int) -> int:
        return decoded_nbytes + BLOSC_MAX_OVERHEAD + 65536

    def encode_params(self, spec: ChunkSpec) -> dict[str, Any]:
        """What c-blosc is called with (zarrbolt/codecs.h zb_blosc1_params)."""
        shuffle = BLOSC_SHUFFLES[self.shuffle]
        typesize = self.typesize if self.typesize is not None else spec.dtype.itemsize
        if typesize > BLOSC_MAX_TYPESIZE:
            typesize = 1  # c-blosc's header stores typesize in one byte
        return {"cname": self.cname, "level": self.clevel, "shuffle": shuffle, "typesize": typesize,
                "blocksize": self.blocksize}

    def encode(self, data: Any, spec: ChunkSpec) -> bytes:
        from .._ext import _blosc1

        p = self.encode_params(spec)
        return _blosc1.compress(as_bytes_view(data), p["typesize"], p["level"], p["shuffle"], p["cname"],
                                p["blocksize"])

    def decode(self, data: Any, spec: ChunkSpec, max_size: int) -> bytes:
        from .._ext import _blosc2

        mv = as_bytes_view(data)
        nbytes, cbytes, _ = _blosc2.cbuffer_sizes(mv)
        if cbytes != len(mv):
            raise CorruptChunkError(f"blosc: header says the chunk has {cbytes} bytes, it has {len(mv)}")
        if nbytes > max_size:
            raise CorruptChunkError(f"blosc: header claims {nbytes} decoded bytes, at most {max_size} expected")
        return _blosc2.decompress(mv, nbytes)

    def c_decode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        from .._ext import _blosc2

        return ("transform", _blosc2.DECODE_STEP, b"")

    def c_encode_step(self, spec: ChunkSpec) -> tuple[Any, ...]:
        from .._ext import _blosc1

        p = self.encode_params(spec)
        return ("transform", _blosc1.ENCODE_STEP,
                _blosc1.encode_params(p["level"], p["shuffle"], p["typesize"], p["cname"], p["blocksize"]))

    def c_partial(self, spec: ChunkSpec) -> tuple[Any, ...]:
        from .._ext import _blosc2

        # planes and small regions decode only the blosc blocks they need
        return ("blocks", _blosc2.GETITEM_FN, _blosc2.SIZES_FN)
