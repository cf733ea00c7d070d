"""Imports every built-in codec module so that each registers itself."""

from . import blosc, bytes_codec, crc32c, gzip, numeric, reshape, sharding, transpose, zstd  # noqa: F401
from . import delta, lz4, zlib  # noqa: F401  (numcodecs.delta, numcodecs.lz4, numcodecs.zlib)
from . import vlen  # noqa: F401  (vlen-utf8, vlen-bytes)
from . import numcodecs_aa, numcodecs_bb  # noqa: F401  (the other numcodecs.* codecs zarr-python writes)
