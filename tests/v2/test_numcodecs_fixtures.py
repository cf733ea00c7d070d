"""numcodecs' own fixture files (``fixture/<id>/array.NN.npy`` and ``codec.NN/{config.json,
encoded.NN.dat}`` in its sdist: the bytes each codec produced, kept by numcodecs to test that it
still decodes them) decoded through zarrbolt's v2 path: every encoded buffer becomes the one chunk
of a v2 array whose ``.zarray`` names the codec configuration, and zarrbolt must read the array's
bytes back exactly (lossy filters: exactly numcodecs' decode formula).  Ids zarrbolt does not
implement must fail with an UnknownCodecError naming them; the ones it does must all decode.

The fixtures are fetched once, with pip, into a cache directory (``ZARRBOLT_TEST_CACHE``, default
``~/.cache/zarrbolt-tests``); the tests skip, saying so, only when that download is impossible
(offline).  ``--no-binary numcodecs`` (not ``:all:``, which would build numcodecs' build
dependencies from source too) gets the sdist."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pytest

from zarrbolt import MemoryStore, open_array
from zarrbolt.codecs import registered_codecs
from zarrbolt.errors import CorruptChunkError, MetadataError, UnknownCodecError, UnknownDataTypeError
from zarrbolt.metadata.dtypes import DataType

NUMCODECS_VERSION = "0.16.5"  # the newest whose sdist builds its metadata on Python 3.11 as well
CACHE = Path(os.environ.get("ZARRBOLT_TEST_CACHE", Path.home() / ".cache" / "zarrbolt-tests"))
COMPRESSORS = {"blosc", "zstd", "gzip", "zlib", "lz4", "bz2", "lzma", "zfpy", "pcodec"}
# codecs that see the chunk as bytes (their fixtures are checked as bytes where the build lacks the dtype)
BYTES_CODECS = COMPRESSORS | {"crc32", "adler32", "crc32c", "fletcher32", "jenkins_lookup3", "shuffle", "base64"}
# must decode in every build: zarrbolt's own codecs
CORE = {"blosc", "zstd", "gzip", "zlib", "lz4", "delta", "fixedscaleoffset"}
# (id, array dtype) pairs zarrbolt reads but does not write: numcodecs' delta over booleans
# (stored as the XOR of neighbours, decoded as a running OR: it does not round-trip)
READ_ONLY = {("delta", "|b1")}
_OFFLINE = ("(from versions: none)", "Temporary failure in name resolution", "Network is unreachable",
            "Failed to establish a new connection", "Max retries exceeded", "Connection refused", "No route to host")


def _fetch(dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-binary", "numcodecs", "--no-deps", "--quiet",
               f"numcodecs=={NUMCODECS_VERSION}", "-d", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            out = proc.stdout + proc.stderr
            if any(s in out for s in _OFFLINE):
                pytest.skip(f"numcodecs {NUMCODECS_VERSION}'s sdist cannot be downloaded (offline?): {out[-300:]}")
            raise AssertionError(f"pip download of numcodecs failed:\n{out[-2000:]}")
        sdist = next(Path(tmp).glob("numcodecs-*.tar.gz"))
        part = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))  # (test workers may race)
        try:
            with tarfile.open(sdist) as tf:
                members = [m for m in tf.getmembers() if m.name.split("/")[1:2] == ["fixture"]]
                tf.extractall(part, members=members, filter="data")
            try:
                (part / f"numcodecs-{NUMCODECS_VERSION}" / "fixture").rename(dest)
            except OSError:
                if not dest.is_dir():
                    raise
        finally:
            shutil.rmtree(part, ignore_errors=True)


@pytest.fixture(scope="module")
def fixtures() -> Path:
    dest = CACHE / f"numcodecs-{NUMCODECS_VERSION}-fixture"
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        _fetch(dest)
    return dest


def _cases(root: Path, cid: str):
    """(config, array, encoded bytes, name) of every fixture of codec ``cid``."""
    for cdir in sorted((root / cid).glob("**/codec.*")):
        config = json.loads((cdir / "config.json").read_text())
        for enc in sorted(cdir.glob("encoded.*.dat")):
            i = enc.name.split(".")[1]
            arr = np.load(cdir.parent / f"array.{i}.npy", allow_pickle=True)
            yield config, arr, enc.read_bytes(), f"{cdir.relative_to(root)}/{enc.name}"


def _zarray(config: dict, arr: np.ndarray, dtype: str) -> dict:
    comp = config["id"] in COMPRESSORS
    return {"zarr_format": 2, "shape": [arr.size], "chunks": [max(arr.size, 1)], "dtype": dtype,
            "fill_value": None, "order": "C", "filters": None if comp else [config],
            "compressor": config if comp else None, "dimension_separator": "."}


def _known(cid: str) -> bool:
    """Whether zarrbolt maps numcodecs id ``cid`` onto a codec (codecs/v2_ids.py's rule), or the
    installed numcodecs runs it for zarrbolt (the long tail: codecs/numcodecs/external.py)."""
    known = registered_codecs()
    if cid in ("blosc", "zstd", "gzip") or f"numcodecs.{cid}" in known or (cid.startswith("vlen-") and cid in known):
        return True
    if cid in ("vlen-array", "json2", "msgpack2", "pickle", "categorize"):
        return False  # object codecs (pickle: refused unless opted in)
    try:
        import numcodecs
    except ImportError:
        return False
    try:
        numcodecs.get_codec({"id": cid})
    except Exception as e:  # noqa: BLE001 - unknown id, or a configuration the codec needs
        return "not available" not in str(e) and type(e).__name__ != "UnknownCodecError"
    return True


def _dtype_for(arr: np.ndarray, config: dict) -> tuple[str, bool]:
    """The array's v2 dtype; for a bytes codec, the bytes as ``|u1`` when this build lacks the
    data type (the chunk's bytes are what the fixture checks)."""
    if arr.dtype.kind == "O" or not _known(config["id"]):
        return arr.dtype.str, False
    try:
        DataType.from_numpy(arr.dtype.newbyteorder("=") if arr.dtype.byteorder in "<>" else arr.dtype)
        return arr.dtype.str, False
    except UnknownDataTypeError:
        if config["id"] in BYTES_CODECS:
            return "|u1", True
        raise


def _expected(config: dict, arr: np.ndarray, enc: bytes) -> np.ndarray:
    """What numcodecs' decode gives (flattened in memory order)."""
    cid = config["id"]
    if cid == "fixedscaleoffset":
        stored = np.frombuffer(enc, dtype=config.get("astype") or config["dtype"])
        return (stored.astype(config["dtype"]) / config["scale"] + config["offset"]).astype(config["dtype"])
    if cid == "quantize":
        return np.frombuffer(enc, dtype=config["astype"]).astype(config["dtype"])
    if cid == "astype":
        return np.frombuffer(enc, dtype=config["encode_dtype"]).astype(config["decode_dtype"])
    if cid == "delta" and arr.dtype.kind == "b":  # numcodecs' cumulative sum into bools: a running OR
        return np.logical_or.accumulate(np.frombuffer(enc, dtype=bool))
    return arr.reshape(-1, order="A")


def _decode(config: dict, arr: np.ndarray, enc: bytes) -> tuple[np.ndarray, np.ndarray]:
    dtype, as_bytes = _dtype_for(arr, config)
    store = MemoryStore()
    store.set(".zarray", json.dumps(_zarray(config, arr, dtype if not as_bytes else dtype)).encode())
    want = _expected(config, arr, enc)
    if as_bytes:
        store.set(".zarray", json.dumps({**_zarray(config, arr, "|u1"), "shape": [arr.nbytes],
                                         "chunks": [max(arr.nbytes, 1)]}).encode())
        want = np.frombuffer(arr.tobytes(order="A"), dtype="|u1")
    store.set("0", enc)
    return open_array(store, mode="r")[...], want


@pytest.mark.parametrize("cid", sorted({*CORE, "bz2", "shuffle", "crc32", "adler32", "crc32c", "astype", "packbits",
                                         "quantize", "vlen-utf8", "vlen-bytes", "vlen-array", "base64", "categorize",
                                         "json2", "msgpack2", "pickle", "lzma", "zfpy", "pcodec"}))
def test_fixtures_decode_byte_exact(fixtures, cid):
    if not (fixtures / cid).is_dir():
        pytest.fail(f"numcodecs {NUMCODECS_VERSION} has no fixtures for {cid!r}")
    known = _known(cid)
    n = 0
    for config, arr, enc, name in _cases(fixtures, cid):
        if not known:
            # pickle: refused unless the user opts in (zarrbolt.config allow_unsafe_pickle)
            with pytest.raises(MetadataError if cid == "pickle" else UnknownCodecError, match=repr(config["id"])):
                _decode(config, arr, enc)
            continue
        if cid == "blosc" and enc[0] == 2 and (enc[2] >> 5) & 7 == 2 and not enc[2] & 2:
            # compressed with snappy, which c-blosc2 (zarrbolt's blosc decoder) does not include
            with pytest.raises(CorruptChunkError):
                _decode(config, arr, enc)
            continue
        got, want = _decode(config, arr, enc)
        if want.dtype.kind == "O":
            assert got.tolist() == want.tolist(), name
        else:
            assert got.dtype == want.dtype.newbyteorder("=") or got.dtype == want.dtype, name
            assert got.tobytes() == want.astype(got.dtype).tobytes(), name
        n += 1
    assert n > 0 or not known
    if cid in CORE:
        assert known and n > 0


@pytest.mark.parametrize("cid", ["delta", "fixedscaleoffset"])
def test_filters_encode_to_the_fixture_bytes(fixtures, cid):
    """Deterministic filters: zarrbolt's encoding is numcodecs' byte for byte."""
    n = 0
    for config, arr, enc, name in _cases(fixtures, cid):
        if (cid, arr.dtype.str) in READ_ONLY:
            continue
        store = MemoryStore()
        store.set(".zarray", json.dumps({**_zarray(config, arr, arr.dtype.str), "fill_value": None}).encode())
        a = open_array(store, mode="r+")
        a[...] = arr.reshape(-1, order="A")
        stored = store.get("0")
        if stored is None:  # a chunk of only fill values is not written
            assert (arr == a.fill_value).all(), name
            continue
        assert bytes(stored) == enc, name
        n += 1
    assert n > 0
