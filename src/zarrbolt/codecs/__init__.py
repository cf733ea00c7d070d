"""Zarr v3 codecs."""

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
