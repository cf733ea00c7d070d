"""Zarr v3 codecs: the base classes, the registry, and the built-in codecs, each in its own module
(``zarrbolt.codecs.gzip``, ``.zstd``, ``.blosc``, ``.sharding``, ...; the codec chain in
``.chain``); numcodecs' codecs (``numcodecs.<id>``) in the package ``zarrbolt.codecs.numcodecs``,
by kind: ``compressors``, ``checksums`` and ``filters``."""

from .abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from .registry import get_codec_class, parse_codec, parse_codecs, register_codec, registered_codecs

__all__ = [
    "ArrayToArrayCodec",
    "ArrayToBytesCodec",
    "BytesToBytesCodec",
    "ChunkSpec",
    "Codec",
    "get_codec_class",
    "parse_codec",
    "parse_codecs",
    "register_codec",
    "registered_codecs",
]
