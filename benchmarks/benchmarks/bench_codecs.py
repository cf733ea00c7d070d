"""asv benchmarks of the core codec chains, one chunk at a time (no store, no chunk grid).

Each chain is one of the anchors layouts' (see ``_layouts.py``) or a single codec of them, bound to
a 64^3 chunk of the synthetic microscopy volume (512 KiB of uint16; 1 MiB of float32 for the
scale_offset/cast_value chain), or, for the sharding chains, to a 128x256x256 shard of 64^3 inner
chunks (16 MiB).  ``time_encode`` / ``time_decode`` run the bound chain's own encode / decode,
``track_encoded_size`` the encoded bytes (the compression ratio's denominator)."""

import numpy as np

from ._layouts import (
    BLOSC_LZ4, BLOSC_ZSTD_BIT, CAST_U16, GZIP5, LE, SCALE_OFFSET, SHARD, TRANSPOSE_ZYX, ZSTD3, layout_data, sharded,
    volume,
)

CHUNK = (64, 64, 64)
# name -> (codecs, dtype, chunk shape)
CHAINS = {
    "bytes": ([LE], "uint16", CHUNK),
    "crc32c": ([LE, {"name": "crc32c"}], "uint16", CHUNK),
    "blosc-lz4-shuffle": ([LE, BLOSC_LZ4], "uint16", CHUNK),
    "blosc-zstd-bitshuffle": ([LE, BLOSC_ZSTD_BIT], "uint16", CHUNK),
    "gzip-5": ([LE, GZIP5], "uint16", CHUNK),
    "zstd-3": ([LE, ZSTD3], "uint16", CHUNK),
    "transpose-zstd-3": ([TRANSPOSE_ZYX, LE, ZSTD3], "uint16", CHUNK),
    "scale_offset-cast-lz4": ([SCALE_OFFSET, CAST_U16, LE, BLOSC_LZ4], "float32", CHUNK),
    "shard-blosc-zstd": ([sharded([LE, BLOSC_ZSTD_BIT])], "uint16", SHARD),
    "shard-transpose-zstd": ([sharded([TRANSPOSE_ZYX, LE, ZSTD3])], "uint16", SHARD),
}


def bind_chain(codecs, dtype, shape, fill=0):
    """The BoundChain zarrbolt builds for an array with these codecs and this chunk shape."""
    try:
        from zarrbolt.codecs.abc import ChunkSpec
        from zarrbolt.codecs.chain import CodecChain
        from zarrbolt.codecs.registry import parse_codecs
        from zarrbolt.metadata.dtypes import DataType
    except ImportError as e:  # an older commit with another layout of the codec modules
        raise NotImplementedError(f"codec chain API not available: {e}") from e
    dt = DataType(dtype)
    return CodecChain(parse_codecs(codecs)).bind(ChunkSpec(tuple(shape), dt, dt.numpy_dtype.type(fill)))


class Chain:
    params = [list(CHAINS)]
    param_names = ["chain"]
    rounds = 1
    repeat = (1, 10, 4.0)

    def setup(self, chain):
        codecs, dtype, shape = CHAINS[chain]
        fill = 100.0 if dtype == "float32" else 0
        self.bound = bind_chain(codecs, dtype, shape, fill)
        kind = "e" if dtype == "float32" else "a"
        self.chunk = np.ascontiguousarray(layout_data(kind, volume(shape)))
        self.enc = bytes(self.bound.encode(self.chunk))
        if not np.array_equal(self.bound.decode(self.enc), self.chunk):
            raise AssertionError(f"{chain}: decode(encode(chunk)) differs from the chunk")

    def time_encode(self, chain):
        self.bound.encode(self.chunk)

    def time_decode(self, chain):
        self.bound.decode(self.enc)

    def track_encoded_size(self, chain):
        """Bytes of the encoded chunk (lower is better, like every benchmark of this suite, so
        asv's regression rule applies to it; the compression ratio is the chunk's nbytes over it)."""
        return len(self.enc)

    track_encoded_size.unit = "bytes"
