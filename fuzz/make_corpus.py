"""Seed corpora for the harnesses in fuzz/, made from valid encodings (nothing binary is committed).

    python fuzz/make_corpus.py OUT_DIR

writes OUT_DIR/<harness>/seed-NNNN for every harness (fuzz_<harness>.py) and OUT_DIR/<harness>.dict
(libFuzzer dictionaries) for the JSON harnesses.  Deterministic: the same files on every run.
Each seed has the layout its harness reads (control bytes first; see the harness docstrings).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import sys
import zlib
from collections.abc import Iterator

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zarrbolt  # noqa: E402
from zarrbolt._ext import _blosc1, _deflate, _lz4, _zstd  # noqa: E402
from zarrbolt.kernels import crc32c  # noqa: E402

RNG = random.Random(20261127)
NPRNG = np.random.default_rng(20261127)


def payloads() -> Iterator[bytes]:
    """Typical chunk contents: smooth integers, noise, zeros, text, mixed."""
    yield b""
    yield bytes(64)
    yield np.arange(1000, dtype=np.uint16).tobytes()
    yield (np.arange(4096, dtype=np.float32) / 7).tobytes()
    yield NPRNG.bytes(700)
    yield b"zarrbolt " * 300
    yield (np.arange(20000, dtype=np.int32) % 300).tobytes()


def seeds_blosc() -> Iterator[bytes]:
    data = list(payloads())
    for cname in _blosc1.compressors():
        for shuffle in (0, 1, 2):
            for ts in (1, 2, 4, 8):
                for raw in data[1:6]:
                    for bs in (0, 256):
                        ctl = RNG.randrange(32)
                        yield bytes([ctl, 3, 200]) + _blosc1.compress(raw, ts, 5, shuffle, cname, bs)
    try:  # chunks written by c-blosc2 (python-blosc2), the other writer of the format
        import blosc2
    except ImportError:
        return
    for codec in (blosc2.Codec.LZ4, blosc2.Codec.ZSTD, blosc2.Codec.BLOSCLZ):
        for filt in (blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE):
            for raw in data[2:5]:
                yield bytes([7, 10, 100]) + blosc2.compress(raw, typesize=4, clevel=5, filter=filt, codec=codec)


def seeds_blosc_lz4() -> Iterator[bytes]:
    for shuffle in (0, 1):
        for ts in (1, 2, 3, 4, 8, 16, 17):
            for n, bs in ((4096, 0), (6000, 512), (30000, 2048), (100, 0), (40000, 40000)):
                raw = (np.arange(n // ts * ts, dtype=np.uint64) * 2654435761 % 1000).astype(np.uint8).tobytes()
                sel = NPRNG.bytes(8)
                yield bytes([RNG.randrange(32)]) + sel + _blosc1.compress(raw, ts, 5, shuffle, "lz4", bs)


def seeds_bitunshuffle() -> Iterator[bytes]:
    for ts in (1, 2, 3, 4, 8, 16):
        for n in (8, 64, 72, 520):
            yield bytes([ts - 1]) + NPRNG.bytes(n * ts)


def _codec_seeds(encoded: Iterator[bytes]) -> Iterator[bytes]:
    for enc in encoded:
        yield bytes([255, RNG.randrange(256)]) + enc


def seeds_zstd() -> Iterator[bytes]:
    def frames() -> Iterator[bytes]:
        for raw in payloads():
            yield _zstd.compress(raw, 3)
            yield _zstd.compress(raw, 1, True)
            yield _zstd._compress_nosize(raw, 1)
        a, b = _zstd.compress(b"first frame " * 10), _zstd.compress(b"second")
        yield a + b
        yield (0x184D2A50).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"skip!" + a
    return _codec_seeds(frames())


def seeds_gzip() -> Iterator[bytes]:
    for enc in _codec_seeds(_deflate.gzip_compress(raw, 6) for raw in payloads()):
        yield b"\x00" + enc
    buf = io.BytesIO()
    with gzip.GzipFile(filename="chunk.bin", mode="wb", fileobj=buf, mtime=1) as f:
        f.write(b"named member " * 20)
    yield b"\x00\xff\x80" + buf.getvalue() + _deflate.gzip_compress(b"second member")
    yield b"\x00\xff\x10" + gzip.compress(b"a") + gzip.compress(b"") + gzip.compress(b"c" * 1000)
    for raw in payloads():
        yield b"\x01\xff\x40" + zlib.compress(raw, 6)


def seeds_lz4() -> Iterator[bytes]:
    return _codec_seeds(_lz4.compress(raw) for raw in payloads())


def seeds_crc32c() -> Iterator[bytes]:
    for raw in payloads():
        yield bytes([RNG.randrange(256)]) + raw + crc32c(raw).to_bytes(4, "little")
    yield b"\x05123456789"


def seeds_shard_index() -> Iterator[bytes]:
    for n in (1, 4, 16):
        pairs, off = [], 0
        for i in range(n):
            if i % 3 == 2:
                pairs.append((2**64 - 1, 2**64 - 1))
            else:
                pairs.append((off, 100 + i))
                off += 100 + i
        raw = b"".join(o.to_bytes(8, "little") + s.to_bytes(8, "little") for o, s in pairs)
        yield bytes([3, 0, 255, 4]) + raw + crc32c(raw).to_bytes(4, "little")
        yield bytes([0, 0, 255, 1]) + raw


def _arrays(zarr_format: int) -> Iterator[zarrbolt.Array]:
    from chunk_configs import CONFIGS, create

    for name, (_, kw) in CONFIGS.items():
        if (kw.get("zarr_format") == 2) == (zarr_format == 2):
            yield create(zarrbolt.MemoryStore(), name)[0]
    for dtype, fill in (("float64", float("nan")), ("float32", float("-inf")), ("complex64", 1 + 2j),
                        ("uint64", 2**64 - 1), ("bool", True), ("int8", -3), ("float16", 0.5)):
        yield zarrbolt.create_array(zarrbolt.MemoryStore(), shape=(7, 0, 3), chunks=(2, 1, 3), dtype=dtype,
                                    fill_value=fill, zarr_format=zarr_format, attributes={"a": [1, None, "x"]})
    if zarr_format == 2:
        yield zarrbolt.create_array(zarrbolt.MemoryStore(), shape=(4,), chunks=(2,), dtype="S5", fill_value=b"ab",
                                    zarr_format=2)
        yield zarrbolt.create_array(zarrbolt.MemoryStore(), shape=(4,), chunks=(2,),
                                    dtype=[("a", "<i4"), ("b", "<f8")], zarr_format=2)


def seeds_metadata_v3() -> Iterator[bytes]:
    for arr in _arrays(3):
        yield arr.store.get("zarr.json")
    g = zarrbolt.create_group(zarrbolt.MemoryStore(), attributes={"k": {"nested": [1.5, "NaN"]}})
    yield g.store.get("zarr.json")


def seeds_metadata_v2() -> Iterator[bytes]:
    for arr in _arrays(2):
        attrs = arr.store.get(".zattrs")
        yield (b"\x02" + arr.store.get(".zarray") + b"\x00" + attrs) if attrs else b"\x00" + arr.store.get(".zarray")
    yield b"\x03" + json.dumps({"zarr_format": 2}).encode() + b"\x00" + b'{"x": 1}'


def seeds_chunk_read() -> Iterator[bytes]:
    from chunk_configs import CONFIGS, create

    names = sorted(CONFIGS)
    for i, name in enumerate(names):
        store = zarrbolt.MemoryStore()
        _, key = create(store, name)
        yield bytes([i, 3, 5, 2, 30]) + store.get(key)
        yield bytes([i, 0, 255, 0, 255]) + store.get(key)


def seeds_numeric() -> Iterator[bytes]:
    for n in (8, 32, 64, 200, 400):
        for _ in range(6):
            yield NPRNG.bytes(n)


DICT_TOKENS = [
    "zarr_format", "node_type", "array", "group", "shape", "data_type", "chunk_grid", "regular", "chunk_shape",
    "chunk_key_encoding", "default", "v2", "separator", "fill_value", "codecs", "name", "configuration",
    "attributes", "dimension_names", "storage_transformers", "must_understand", "endian", "little", "big",
    "bytes", "transpose", "order", "blosc", "cname", "clevel", "shuffle", "bitshuffle", "noshuffle", "typesize",
    "blocksize", "gzip", "level", "zstd", "checksum", "crc32c", "sharding_indexed", "index_codecs",
    "index_location", "start", "end", "vlen-utf8", "vlen-bytes", "scale_offset", "offset", "scale", "cast_value",
    "rounding", "out_of_range", "scalar_map", "encode", "decode", "reshape", "numcodecs.delta", "numcodecs.zlib",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
    "complex64", "complex128", "bool", "string", "r16", "NaN", "Infinity", "-Infinity", "0x7fc00000",
    "chunks", "dtype", "compressor", "filters", "dimension_separator", "id", "<i4", ">f8", "|S5", "<U3", "|O",
    "|V8", "<M8[ns]", "<m8[s]", "lz4", "zlib", "delta", "fletcher32", "astype", "encode_dtype", "C", "F",
]


def write(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    gens = {k[len("seeds_"):]: v for k, v in globals().items() if k.startswith("seeds_")}
    for name, gen in gens.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        n = 0
        for n, seed in enumerate(gen(), 1):
            with open(os.path.join(d, f"seed-{n:04d}"), "wb") as f:
                f.write(seed)
        print(f"{name}: {n} seeds")
    for name in ("metadata_v3", "metadata_v2"):
        with open(os.path.join(out, f"{name}.dict"), "w") as f:
            f.writelines(f"{json.dumps(t)}\n" for t in DICT_TOKENS)


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz/seeds")
