"""Zarr v3 metadata: data types, chunk grid, chunk key encodings, array and group documents."""

from .chunk_grid import ChunkGrid, RegularChunkGrid, parse_chunk_grid
from .chunk_key import DefaultChunkKeyEncoding, V2ChunkKeyEncoding, parse_chunk_key_encoding
from .dtypes import DataType
from .nodes import ArrayMetadata, GroupMetadata, parse_node_metadata

__all__ = [
    "ArrayMetadata",
    "DataType",
    "DefaultChunkKeyEncoding",
    "GroupMetadata",
    "ChunkGrid",
    "RegularChunkGrid",
    "parse_chunk_grid",
    "V2ChunkKeyEncoding",
    "parse_chunk_key_encoding",
    "parse_node_metadata",
]
