"""asv benchmarks of vlen-utf8 / vlen-bytes on one chunk of 1M variable-length items (up to 40
characters, a tenth with a non-ASCII one; about 24 MB encoded), beside numcodecs' VLenUTF8 /
VLenBytes when numcodecs is installed (the reference venv).

Measured 2026-11 (this machine, shared, best of 5; ``PYTHONPATH=src .venv-ref/bin/python``):
encode 1M str: numcodecs 78 ms, zarrbolt 17 ms (object array) / 18 ms (StringDType); decode:
numcodecs 78 ms to an object array (149 ms with the ``astype(StringDType)`` zarr-python needs),
zarrbolt 77 ms to an object array, 34 ms straight to StringDType (no Python object per item,
GIL released); bytes: encode 34 vs 18 ms, decode 53 vs 47 ms."""

import numpy as np

from zarrbolt.codecs import parse_codec
from zarrbolt.codecs.abc import ChunkSpec
from zarrbolt.metadata.dtypes import DataType

try:
    import numcodecs
except ImportError:  # the main venv
    numcodecs = None

N = 1_000_000


def _words() -> np.ndarray:
    lens = np.random.default_rng(0).integers(0, 40, N)
    return np.array(["".join(chr(97 + (i * 7 + j) % 26) for j in range(k)) + ("é" if i % 10 == 0 else "")
                     for i, k in enumerate(lens)], dtype=object)


class VLenUTF8:
    params = [["zarrbolt-stringdtype", "zarrbolt-object", "numcodecs"]]
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        if impl == "numcodecs" and numcodecs is None:
            raise NotImplementedError  # asv: skipped
        self.words = _words()
        self.values = self.words.astype(DataType("string").numpy_dtype) if impl.endswith("stringdtype") else self.words
        self.spec = ChunkSpec((N,), DataType("string"), "")
        self.codec = numcodecs.VLenUTF8() if impl == "numcodecs" else parse_codec("vlen-utf8")
        self.impl = impl
        self.enc = bytes(self.encode())

    def encode(self):
        if self.impl == "numcodecs":
            return self.codec.encode(self.values)
        return self.codec.encode(self.values, self.spec)

    def time_encode(self, impl):
        self.encode()

    def time_decode(self, impl):
        if impl == "numcodecs":
            self.codec.decode(self.enc)
        elif impl == "zarrbolt-object":
            from zarrbolt._ext import _vlen

            _vlen.decode(memoryview(self.enc), N, "str")
        else:
            self.codec.decode(self.enc, self.spec)


class VLenBytes:
    params = [["zarrbolt", "numcodecs"]]
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        if impl == "numcodecs" and numcodecs is None:
            raise NotImplementedError
        self.values = np.array([w.encode() for w in _words()], dtype=object)
        self.spec = ChunkSpec((N,), DataType("variable_length_bytes"), b"")
        self.codec = numcodecs.VLenBytes() if impl == "numcodecs" else parse_codec("vlen-bytes")
        self.enc = bytes(self.codec.encode(self.values) if impl == "numcodecs" else self.codec.encode(self.values,
                                                                                                        self.spec))

    def time_encode(self, impl):
        if impl == "numcodecs":
            self.codec.encode(self.values)
        else:
            self.codec.encode(self.values, self.spec)

    def time_decode(self, impl):
        if impl == "numcodecs":
            self.codec.decode(self.enc)
        else:
            self.codec.decode(self.enc, self.spec)
