"""Be liberal in what you read: arrays zarr-python reads that zarrbolt once refused (issue 33), each
made here by zarr-python and numcodecs (the reference implementations, with zarr-python's own
pipeline), then read with zarrbolt's own API and compared with the values zarr-python gives; and
strict in what zarrbolt writes (what it normalises, it says).  The long tail of codecs through
numcodecs (``pcodec``, ``zfpy``, ``base64``, ``pickle`` behind its opt-in) is tested here too."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
from numcodecs import zarr3 as nz3  # noqa: E402

import zarrbolt  # noqa: E402
from zarrbolt.codecs.numcodecs import external  # noqa: E402
from zarrbolt.errors import CodecError, MetadataError, MetadataNormalizedWarning, UnknownCodecError  # noqa: E402

REFERENCE = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}


@pytest.fixture(autouse=True)
def _reference_pipeline():
    with zarr.config.set(REFERENCE), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zarr-python's notices about numcodecs in v3
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _same_as_zarr(path: Path, zarr_format: int) -> np.ndarray:
    """The array at ``path`` read by zarrbolt, asserted equal (values and data type) to zarr-python's read."""
    ref = zarr.open_array(str(path), mode="r", zarr_format=zarr_format)[...]
    got = zarrbolt.open_array(str(path), mode="r", zarr_format=zarr_format)[...]
    assert got.shape == ref.shape
    if ref.dtype.kind in "OT":
        assert [str(x) for x in got.ravel()] == [str(x) for x in ref.ravel()]
    else:
        assert got.dtype == ref.dtype.newbyteorder("=")
        np.testing.assert_array_equal(got, ref)
    return got


def _edit(path: Path, name: str, **changes) -> None:
    doc = json.loads((path / name).read_text())
    doc.update(changes)
    (path / name).write_text(json.dumps(doc))


# ---------------------------------------------------------------------------- the listed cases
def test_v2_base64_compressor(tmp_path):
    before = external.counts[("base64", "decode")]
    a = zarr.create_array(tmp_path / "a", shape=(13,), chunks=(5,), dtype="<i2", zarr_format=2,
                          compressors=numcodecs.Base64())
    a[:] = np.arange(13, dtype="i2") * 7 - 20
    _same_as_zarr(tmp_path / "a", 2)
    assert external.counts[("base64", "decode")] - before == 3  # one per chunk, through numcodecs
    # and written by zarrbolt, read by zarr-python
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    b[2:9] = -1
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[2:9], -1)


@pytest.mark.parametrize("codec, level", [(nz3.GZip, -1), (nz3.Zstd, 100), (nz3.Zstd, -200000)])
def test_v3_numcodecs_levels_the_libraries_accept(tmp_path, codec, level):
    a = zarr.create_array(tmp_path / "a", shape=(40, 3), chunks=(16, 3), dtype="f4", compressors=codec(level=level))
    a[:] = np.linspace(0, 1, 120, dtype="f4").reshape(40, 3)
    _same_as_zarr(tmp_path / "a", 3)
    # the document is kept as read when zarrbolt rewrites it (attributes), levels and all
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    b.attrs["x"] = 1
    assert json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"][1]["configuration"]["level"] == level


def test_new_arrays_get_normalised_levels_with_a_warning(tmp_path):
    with pytest.warns(MetadataNormalizedWarning, match="written as 22"):
        a = zarrbolt.create_array(str(tmp_path / "v3"), shape=(8,), chunks=(4,), dtype="u2",
                                  compressors={"name": "numcodecs.zstd", "configuration": {"level": 100}})
    assert a.metadata.to_json()["codecs"][-1]["configuration"]["level"] == 22
    with pytest.warns(MetadataNormalizedWarning, match="written as 6"):
        b = zarrbolt.create_array(str(tmp_path / "v2"), shape=(8,), chunks=(4,), dtype="u2", zarr_format=2,
                                  compressors=numcodecs.GZip(level=-1))
    assert json.loads((tmp_path / "v2" / ".zarray").read_text())["compressor"] == {"id": "gzip", "level": 6}
    b[:] = 5
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "v2", mode="r")[:], 5)


def test_v2_delta_on_bool(tmp_path):
    """numcodecs stores the XOR of neighbours and decodes a running OR: zarrbolt reads what
    zarr-python reads (not what was written), and neither writes nor creates such arrays."""
    a = zarr.create_array(tmp_path / "a", shape=(11,), chunks=(6,), dtype=bool, zarr_format=2,
                          filters=[numcodecs.Delta(dtype="|b1")], compressors=None)
    a[:] = np.arange(11) % 3 == 0
    got = _same_as_zarr(tmp_path / "a", 2)
    assert got.any()
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    with pytest.raises(CodecError, match="does not round-trip"):
        b[:] = True
    with pytest.raises(MetadataError, match="does not create them"):
        zarrbolt.create_array(str(tmp_path / "new"), shape=(4,), dtype=bool, zarr_format=2,
                              filters=[numcodecs.Delta(dtype="|b1")])


def test_v3_delta_on_bool(tmp_path):
    a = zarr.create_array(tmp_path / "a", shape=(11,), chunks=(6,), dtype=bool, filters=[nz3.Delta(dtype="|b1")],
                          compressors=None)
    a[:] = np.arange(11) % 4 == 1
    _same_as_zarr(tmp_path / "a", 3)


@pytest.mark.parametrize("dtype, delta", [("<i4", "<u4"), ("<f4", "<i4"), ("<u2", "<i2"), ("<i8", "<f8"),
                                          ("<u2", "<i4"), ("<f8", "<u2")])
def test_v2_delta_whose_dtype_differs(tmp_path, dtype, delta):
    """numcodecs takes the chunk's bytes as the filter's type (items of another size too)."""
    a = zarr.create_array(tmp_path / "a", shape=(20,), chunks=(8,), dtype=dtype, zarr_format=2,
                          filters=[numcodecs.Delta(dtype=delta)], compressors=numcodecs.Zlib(level=1), fill_value=0)
    a[:] = (np.arange(20) * 3 - 7).astype(dtype)
    _same_as_zarr(tmp_path / "a", 2)
    # zarrbolt writes what zarr-python reads back
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    new = (np.arange(20)[::-1] * 5).astype(dtype)
    b[:] = new
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[:], new)


@pytest.mark.parametrize("dtype, delta, astype", [("<u2", "<i2", None), ("<i4", "<u4", "<i2"), ("<i8", "<u8", None),
                                                  ("<f4", "<i4", None), ("<i4", "<f4", None), ("<f8", "<u8", None),
                                                  ("|u1", "|b1", None)])
@pytest.mark.parametrize("sharded", [False, True])
def test_v3_delta_whose_dtype_differs(tmp_path, dtype, delta, astype, sharded):
    """zarr-python 3 takes the chunk's bytes as the codec's type to encode and casts the decoded sums
    back by value: read with zarr-python's values, by zarrbolt's API and inside its pipeline (no
    fallback); written where that round-trips (integer types), refused where it does not."""
    import zarrbolt.codec_pipeline as zcp

    conf = {"dtype": delta} | ({"astype": astype} if astype else {})
    data = ((np.arange(40) * 7) % 90).astype(dtype)
    a = zarr.create_array(tmp_path / "a", shape=(40,), chunks=(10,), shards=(20,) if sharded else None, dtype=dtype,
                          filters=[nz3.Delta(**conf)], compressors=None)
    a[:] = data
    ref = _same_as_zarr(tmp_path / "a", 3)
    zcp.fallback_counts.clear()
    with zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"}):
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[...], ref)
    assert not zcp.fallback_counts, dict(zcp.fallback_counts)
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    new = data[::-1].copy()
    if np.dtype(dtype).kind in "iu" and np.dtype(delta).kind in "iu":
        assert np.array_equal(ref, data)  # it round-trips
        b[:] = new
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[:], new)
    else:
        with pytest.raises(CodecError, match="does not round-trip"):
            b[:] = new
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[:], ref)  # nothing written


def test_v3_delta_of_another_item_size_is_refused(tmp_path):
    """zarr-python cannot read these either (the decoded chunk has another number of items)."""
    a = zarrbolt.create_array(str(tmp_path / "a"), shape=(8,), chunks=(4,), dtype="u2")
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    doc["codecs"] = [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, *doc["codecs"]]
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    del a
    with pytest.raises(MetadataError, match="not of that size"):
        zarrbolt.open_array(str(tmp_path / "a"), mode="r")


@pytest.mark.parametrize("where", ["zarr-python 2", "zarrita.js"])
def test_vlen_utf8_with_fill_value_0(tmp_path, where):
    a = zarr.create_array(tmp_path / "a", shape=(5,), chunks=(2,), dtype=str, zarr_format=2)
    a[:2] = ["a", "bb"]
    _edit(tmp_path / "a", ".zarray", fill_value=0)
    got = _same_as_zarr(tmp_path / "a", 2)
    assert list(got) == ["a", "bb", "0", "0", "0"]
    # what zarrbolt writes back is the fill value's text
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    b.attrs["x"] = 1
    assert json.loads((tmp_path / "a" / ".zarray").read_text())["fill_value"] == "0"


def test_v3_string_fill_value_number(tmp_path):
    a = zarr.create_array(tmp_path / "a", shape=(5,), chunks=(2,), dtype=str)
    a[:2] = ["x", "yy"]
    _edit(tmp_path / "a", "zarr.json", fill_value=0)
    assert list(_same_as_zarr(tmp_path / "a", 3)) == ["x", "yy", "0", "0", "0"]


def test_dimension_names_null(tmp_path):
    a = zarr.create_array(tmp_path / "a", shape=(6,), chunks=(4,), dtype="i2")
    a[:] = np.arange(6)
    _edit(tmp_path / "a", "zarr.json", dimension_names=None)
    _same_as_zarr(tmp_path / "a", 3)
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    assert b.metadata.dimension_names is None
    b.attrs["x"] = 1  # written back absent
    assert "dimension_names" not in json.loads((tmp_path / "a" / "zarr.json").read_text())


@pytest.mark.parametrize("dtype", ["i1", "u1", "<u2", "<i4", "<i8", "<u8"])
def test_fixedscaleoffset_float_members_on_integer_arrays(tmp_path, dtype):
    a = zarr.create_array(tmp_path / "a", shape=(20,), chunks=(7,), dtype=dtype, compressors=None,
                          filters=[nz3.FixedScaleOffset(offset=0.0, scale=1.0, dtype=np.dtype(dtype).str)])
    a[:] = np.arange(20).astype(dtype)
    _same_as_zarr(tmp_path / "a", 3)
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    b[3:9] = 9
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[3:9], 9)


@pytest.mark.parametrize("offset, scale", [(0.5, 1.0), (1e12, 1.0), (3.0, 2.5)])
def test_fixedscaleoffset_float_arithmetic_on_integer_arrays(tmp_path, offset, scale):
    """Members that are no whole number of the type: numcodecs' float64 arithmetic."""
    a = zarr.create_array(tmp_path / "a", shape=(20,), chunks=(7,), dtype="<i4", compressors=None,
                          filters=[nz3.FixedScaleOffset(offset=offset, scale=scale, dtype="<i4", astype="<i8")])
    a[:] = np.arange(20, dtype="i4") * 11 - 50
    _same_as_zarr(tmp_path / "a", 3)


def test_fixedscaleoffset_errors_name_the_member():
    from zarrbolt.codecs import parse_codec

    with pytest.raises(MetadataError, match="offset must be a number") as ei:
        parse_codec({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": "x", "scale": 1}})
    assert "fill_value" not in str(ei.value)
    with pytest.raises(MetadataError, match="scale must not be zero"):
        parse_codec({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 0.0}})


# ---------------------------------------------------------------------------- the long tail
def _have(module: str) -> bool:
    try:
        numcodecs.get_codec({"id": module})
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("cid, dtype", [("pcodec", "<f4"), ("pcodec", "<i8"), ("zfpy", "<f8")])
def test_codecs_zarrbolt_runs_through_numcodecs(tmp_path, cid, dtype, zarr_format):
    if not _have(cid):
        pytest.skip(f"{cid} is not installed (pip install {cid})")
    conf = {"id": cid, "mode": 4, "tolerance": -1, "rate": -1, "precision": -1} if cid == "zfpy" else {"id": cid}
    if zarr_format == 2:
        kw = dict(compressors=numcodecs.get_codec(conf), zarr_format=2)
    else:
        cls = nz3.PCodec if cid == "pcodec" else nz3.ZFPY
        kw = dict(serializer=cls(**{k: v for k, v in conf.items() if k != "id"}), compressors=None)
    a = zarr.create_array(tmp_path / "a", shape=(30, 7), chunks=(16, 4), dtype=dtype, fill_value=0, **kw)
    a[:] = (np.arange(210).reshape(30, 7) * 1.5 - 40).astype(dtype)
    before = external.counts[(cid, "decode")]
    _same_as_zarr(tmp_path / "a", zarr_format)
    assert external.counts[(cid, "decode")] - before == 4
    # zarrbolt writes through numcodecs too; zarr-python reads it
    b = zarrbolt.open_array(str(tmp_path / "a"), mode="r+")
    b[5:20, 1:6] = 3
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a", mode="r")[5:20, 1:6], 3)
    assert external.counts[(cid, "encode")] > 0


@pytest.mark.parametrize("cid, package", [("imagecodecs_jpeg2k", "imagecodecs"), ("no-such-codec", "registers it")])
def test_unknown_codecs_name_what_to_install(tmp_path, cid, package):
    a = zarr.create_array(tmp_path / "a", shape=(4,), chunks=(4,), dtype="u1", zarr_format=2, compressors=None)
    _edit(tmp_path / "a", ".zarray", compressor={"id": cid})
    with pytest.raises(UnknownCodecError, match=package) as ei:
        zarrbolt.open_array(str(tmp_path / "a"), mode="r")
    assert repr(cid) in str(ei.value)
    del a


def test_pickle_needs_the_opt_in(tmp_path, monkeypatch):
    pickles = pytest.importorskip("numcodecs.pickles")
    a = zarr.create_array(tmp_path / "a", shape=(6,), chunks=(3,), dtype="<f8", zarr_format=2, compressors=None)
    a[:] = np.arange(6) / 4
    _edit(tmp_path / "a", ".zarray", filters=[{"id": "pickle", "protocol": 5}])
    codec = numcodecs.Pickle(protocol=5)
    for key in ("0", "1"):  # the chunks as numcodecs' pickle filter stores them
        raw = np.frombuffer((tmp_path / "a" / key).read_bytes(), "<f8")
        (tmp_path / "a" / key).write_bytes(codec.encode(raw))
    with pytest.raises(MetadataError, match="allow_unsafe_pickle"):
        zarrbolt.open_array(str(tmp_path / "a"), mode="r")
    monkeypatch.setattr(pickles, "ALLOW_UNSAFE_PICKLE_DECODE", True, raising=False)
    with zarrbolt.config.override(allow_unsafe_pickle=True):
        np.testing.assert_array_equal(zarrbolt.open_array(str(tmp_path / "a"), mode="r")[:], np.arange(6) / 4)


# ---------------------------------------------------------------------------- data nobody here wrote
def _arrays_under(root: Path):
    for p in sorted(root.rglob(".zarray")):
        yield p.parent, 2
    for p in sorted(root.rglob("zarr.json")):
        try:
            doc = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("node_type") == "array":
            yield p.parent, 3


def test_external_fixtures(tmp_path):
    """Every array under ``ZARRBOLT_EXTERNAL_FIXTURES`` (folders separated by ``:``, e.g.
    zarr-python 2's ``fixture/``, zarrita.js' ``fixtures/``, zarrs' ``tests/data``): what
    zarr-python reads, zarrbolt reads, with the same values."""
    import os

    roots = [Path(p) for p in os.environ.get("ZARRBOLT_EXTERNAL_FIXTURES", "").split(":") if p]
    if not roots:
        pytest.skip("ZARRBOLT_EXTERNAL_FIXTURES names no folders of externally written arrays")
    n = 0
    problems = []
    for root in roots:
        for path, fmt in _arrays_under(root):
            local = tmp_path / f"a{n}"  # a copy: zarr-python and zarrbolt may not write there
            shutil.copytree(path, local)
            n += 1
            try:
                zarr.open_array(str(local), mode="r", zarr_format=fmt)[...]
            except Exception:  # noqa: BLE001 - zarr-python does not read it: not zarrbolt's to read
                continue
            try:
                _same_as_zarr(local, fmt)
            except Exception as e:  # noqa: BLE001
                problems.append(f"{path}: {type(e).__name__}: {str(e)[:200]}")
    assert n > 0
    assert not problems, "\n".join(problems)


def test_codecs_run_by_numcodecs_inside_zarrbolts_pipeline(tmp_path):
    """zarrbolt's zarr-python pipeline serves such arrays too (no fallback to zarr-python's)."""
    import zarrbolt.codec_pipeline as zcp

    if not _have("pcodec"):
        pytest.skip("pcodec is not installed (pip install pcodec)")
    zcp.fallback_counts.clear()
    before = external.counts[("pcodec", "decode")], external.counts[("base64", "decode")]
    with zarr.config.set({"codec_pipeline.path": "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"}):
        a = zarr.create_array(tmp_path / "p", shape=(30,), chunks=(8,), dtype="f4", serializer=nz3.PCodec(),
                              compressors=None)
        a[:] = np.arange(30)
        b = zarr.create_array(tmp_path / "b", shape=(30,), chunks=(8,), dtype="i2", zarr_format=2,
                              compressors=numcodecs.Base64())
        b[:] = np.arange(30)
        np.testing.assert_array_equal(a[...], np.arange(30))
        np.testing.assert_array_equal(b[...], np.arange(30))
    assert not zcp.fallback_counts, dict(zcp.fallback_counts)
    assert external.counts[("pcodec", "decode")] - before[0] == 4
    assert external.counts[("base64", "decode")] - before[1] == 4
    _same_as_zarr(tmp_path / "p", 3)
    _same_as_zarr(tmp_path / "b", 2)
