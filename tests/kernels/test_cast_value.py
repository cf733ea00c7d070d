"""cast_value / scale_offset kernels against an exact (fractions.Fraction) reference of the spec."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt import kernels
from zarrbolt.errors import CodecError

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
ALL = ["bool", *INTS, *FLOATS]
MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


class OutOfRange(Exception):
    pass


def round_fraction(q: Fraction, mode: str) -> int:
    fl = math.floor(q)
    if q == fl:
        return fl
    if mode == "towards-zero":
        return math.trunc(q)
    if mode == "towards-positive":
        return fl + 1
    if mode == "towards-negative":
        return fl
    frac = q - fl
    if frac > Fraction(1, 2):
        return fl + 1
    if frac < Fraction(1, 2):
        return fl
    if mode == "nearest-away":
        return fl + 1 if q > 0 else fl
    return fl if fl % 2 == 0 else fl + 1


def float_params(name):
    fi = np.finfo(name)
    return fi.nmant + 1, int(fi.minexp), Fraction(float(fi.max))


def round_to_float(q: Fraction, name: str, mode: str) -> Fraction:
    """Correct rounding of q to the format, exponent unbounded above; OutOfRange beyond max."""
    p, emin, fmax = float_params(name)
    if q == 0:
        return q
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    r = round_fraction(q / ulp, mode) * ulp
    if abs(r) > fmax:
        raise OutOfRange
    return r


def ref_cast(value, src: str, dst: str, mode: str, oor):
    """The spec's procedure for one value; returns a numpy scalar of dst (or raises)."""
    dt = np.dtype(dst)
    if src in FLOATS and (math.isnan(value) or math.isinf(value)):
        if dst in FLOATS:
            return dt.type(value)
        if math.isinf(value) and oor == "clamp":
            info = np.iinfo(dst) if dst != "bool" else None
            if dst == "bool":
                return np.bool_(value > 0)
            return dt.type(info.max if value > 0 else info.min)
        raise OutOfRange
    q = Fraction(int(value)) if src not in FLOATS else Fraction(float(value))
    if dst in FLOATS:
        try:
            r = round_to_float(q, dst, mode)
        except OutOfRange:
            if oor != "clamp":
                raise
            r = float_params(dst)[2] * (1 if q > 0 else -1)
        out = dt.type(float(r))
        if r == 0 and src in FLOATS:
            out = dt.type(math.copysign(0.0, float(value)))
        return out
    lo, hi = (0, 1) if dst == "bool" else (int(np.iinfo(dst).min), int(np.iinfo(dst).max))
    r = round_fraction(q, mode)
    if lo <= r <= hi:
        return dt.type(r)
    if oor == "clamp":
        return dt.type(hi if r > hi else lo)
    if oor == "wrap" and dst != "bool":
        bits = dt.itemsize * 8
        w = r % (1 << bits)
        if lo < 0 and w >= 1 << (bits - 1):
            w -= 1 << bits
        return dt.type(w)
    raise OutOfRange


def values_for(name):
    if name == "bool":
        return st.booleans()
    if name in INTS:
        info = np.iinfo(name)
        specials = [int(info.min), int(info.max), 0, 1, -1, 2**53 + 1, 2**63 - 1, 2**64 - 1, 255, 256, 65535, 65536, -129]
        specials = [v for v in specials if info.min <= v <= info.max]
        return st.one_of(st.sampled_from(specials), st.integers(int(info.min), int(info.max)))
    width = {"float16": 16, "float32": 32, "float64": 64}[name]
    specials = [0.5, 1.5, 2.5, -2.5, -0.5, -0.0, 0.0, 65504.0, 65520.0, 2.0**63, 2.0**64, -(2.0**63), 127.5, 255.5,
                -128.5, 1e-8, 5.96e-8, 2.0**-149, float("inf"), float("-inf"), float("nan"), 3.4e38, 1e300]
    return st.one_of(st.sampled_from(specials), st.floats(width=width, allow_nan=True, allow_infinity=True),
                     st.integers(-70000, 70000).map(lambda i: i / 4))


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" and np.isnan(a) and np.isnan(b):
        return True
    return a.tobytes() == b.tobytes()


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(ALL), st.sampled_from(ALL), st.sampled_from(MODES),
       st.sampled_from([None, "clamp", "wrap"]))
def test_cast_matches_exact_reference(data, src, dst, mode, oor):
    if oor == "wrap" and dst not in INTS:
        with pytest.raises(ValueError):
            kernels.cast_value(np.zeros(1, src), dst, out_of_range="wrap")
        return
    vals = data.draw(st.lists(values_for(src), min_size=1, max_size=8))
    arr = np.array(vals, dtype=src) if src != "bool" else np.array(vals, dtype=bool)
    expected = []
    failed_at = None
    for i, v in enumerate(arr.tolist()):
        v_exact = arr[i].item()
        try:
            expected.append(ref_cast(v_exact, src, dst, mode, oor))
        except OutOfRange:
            failed_at = i
            break
    if failed_at is not None:
        with pytest.raises(CodecError, match=f"element {failed_at}"):
            kernels.cast_value(arr, dst, rounding=mode, out_of_range=oor)
        return
    got = kernels.cast_value(arr, dst, rounding=mode, out_of_range=oor)
    assert got.dtype == np.dtype(dst)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert same(g, e), (src, dst, mode, oor, arr[i], g, e)


@pytest.mark.parametrize("src,dst", [("float32", "uint16"), ("float32", "uint8"), ("float64", "int16"),
                                     ("float32", "int8"), ("float64", "int32"), ("float64", "uint8")])
def test_fast_paths_agree_with_reference(src, dst):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-1e5, 1e5, 5000), np.arange(-300, 300) + 0.5, [0.5, 1.5, 2.5, -0.0, 1e10, -1e10,
                                                                                     np.inf, -np.inf]]).astype(src)
    got = kernels.cast_value(x, dst, out_of_range="clamp")
    exp = np.array([ref_cast(v, src, dst, "nearest-even", "clamp") for v in x.tolist()], dtype=dst)
    np.testing.assert_array_equal(got, exp)
    # the same values through the error mode: first out-of-range element is reported
    with pytest.raises(CodecError):
        kernels.cast_value(x, dst)
    with pytest.raises(CodecError, match="element 1"):
        kernels.cast_value(np.array([1, np.nan], dtype=src), dst, out_of_range="clamp")


def test_wide_integers_to_float_directed():
    x = np.array([2**53 + 1, 2**63 - 1, -(2**63), 2**62 + 2**38 + 1], dtype=np.int64)
    for mode in MODES:
        got = kernels.cast_value(x, np.float32, rounding=mode)
        exp = [ref_cast(v, "int64", "float32", mode, None) for v in x.tolist()]
        assert all(same(g, e) for g, e in zip(got, exp)), mode
    u = np.array([2**64 - 1], dtype=np.uint64)
    assert kernels.cast_value(u, np.float64, rounding="towards-zero")[0] == np.float64(2**64 - 2048)
    with pytest.raises(CodecError):
        kernels.cast_value(u, np.float16)


def test_scalar_map_first_and_nan_propagation():
    x = np.array([np.nan, 0.0, -0.0, 7.0, np.inf])
    got = kernels.cast_value(x, np.uint8, scalar_map=[(float("nan"), 255), (float("inf"), 254)])
    assert got.tolist() == [255, 0, 0, 7, 254]
    back = kernels.cast_value(np.array([255, 3], np.uint8), np.float32, scalar_map=[(255, float("nan"))])
    assert np.isnan(back[0]) and back[1] == 3
    payload = np.array([0x7FF8000000000123], np.uint64).view(np.float64)
    assert np.isnan(kernels.cast_value(payload, np.float32)[0])
    z = kernels.cast_value(np.array([-0.0]), np.float16)
    assert np.signbit(z[0])


def test_argument_errors():
    with pytest.raises(ValueError):
        kernels.cast_value(np.zeros(2), np.uint8, rounding="up")
    with pytest.raises(ValueError):
        kernels.cast_value(np.zeros(2), np.float32, out_of_range="wrap")
    with pytest.raises(ValueError):
        kernels.cast_value(np.zeros(2), np.uint8, out_of_range="saturate")
    with pytest.raises(TypeError):
        kernels.cast_value(np.zeros(2, complex), np.uint8)
    with pytest.raises(ValueError):
        kernels.cast_value(np.zeros(2), np.uint8, out=np.zeros(3, np.uint8))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(INTS), st.data())
def test_integer_scale_offset_exact(name, data):
    info = np.iinfo(name)
    x = np.array(data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=6)), dtype=name)
    off = data.draw(st.integers(int(info.min), int(info.max)))
    sc = data.draw(st.integers(1, 1000).filter(lambda v: v <= info.max))
    ref = []
    ok = True
    for v in x.tolist():
        t = v - off
        r = t * sc
        if not (info.min <= t <= info.max and info.min <= r <= info.max):
            ok = False
            break
        ref.append(r)
    if not ok:
        with pytest.raises(CodecError):
            kernels.scale_offset_encode(x, off, sc)
        return
    enc = kernels.scale_offset_encode(x, off, sc)
    assert enc.tolist() == ref
    np.testing.assert_array_equal(kernels.scale_offset_decode(enc, off, sc), x)
    if sc > 1:
        odd = np.array([1], dtype=name) if info.min <= 1 else None
        with pytest.raises(CodecError):
            kernels.scale_offset_decode(odd, 0, sc)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["float32", "float64"]), st.data())
def test_float_scale_offset_matches_numpy(name, data):
    width = 32 if name == "float32" else 64
    fl = st.one_of(st.floats(width=width, min_value=-1e6, max_value=1e6), st.just(float("nan")))
    x = np.array(data.draw(st.lists(fl, min_size=1, max_size=10)), dtype=name)
    off = np.dtype(name).type(data.draw(st.floats(-1024.0, 1024.0, width=width)))
    sc = np.dtype(name).type(data.draw(st.floats(0.0009765625, 1024.0, width=width)))
    with np.errstate(all="ignore"):
        exp = (x - off) * sc
        dec = x / sc + off
    assert kernels.scale_offset_encode(x, off, sc).tobytes() == exp.tobytes()
    assert kernels.scale_offset_decode(x, off, sc).tobytes() == dec.tobytes()


def test_float_overflow_and_float16():
    with pytest.raises(CodecError, match="element 1"):
        kernels.scale_offset_encode(np.array([1.0, 3e38], np.float32), 0, 10)
    h = np.array([1.5, 2.0, 60000.0], np.float16)
    got = kernels.scale_offset_encode(h[:2], np.float16(0.5), np.float16(3))
    assert got.tolist() == [3.0, 4.5]
    with pytest.raises(CodecError):
        kernels.scale_offset_encode(h, 0, 2)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fused_equals_composition(data):
    src = data.draw(st.sampled_from(["float32", "float64", "int32"]))
    dst = data.draw(st.sampled_from(["uint8", "uint16", "int16", "float16"]))
    mode = data.draw(st.sampled_from(MODES))
    oor = data.draw(st.sampled_from([None, "clamp"]))
    n = data.draw(st.integers(1, 9000))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = (rng.uniform(-500, 70000, n)).astype(src)
    off, sc = (np.dtype(src).type(100), np.dtype(src).type(4))
    try:
        two = kernels.cast_value(kernels.scale_offset_encode(x, off, sc), dst, rounding=mode, out_of_range=oor)
    except CodecError as e:
        with pytest.raises(CodecError) as ei:
            kernels.scale_offset_cast(x, off, sc, dst, rounding=mode, out_of_range=oor)
        assert str(e).split("element ")[1].split(" ")[0] == str(ei.value).split("element ")[1].split(" ")[0]
        return
    one = kernels.scale_offset_cast(x, off, sc, dst, rounding=mode, out_of_range=oor)
    assert one.tobytes() == two.tobytes()
    try:
        back_two = kernels.scale_offset_decode(kernels.cast_value(one, src, rounding=mode), off, sc)
    except CodecError:  # e.g. integer division that is not exact
        with pytest.raises(CodecError):
            kernels.cast_scale_offset_decode(one, src, off, sc, rounding=mode)
        return
    back_one = kernels.cast_scale_offset_decode(one, src, off, sc, rounding=mode)
    assert back_one.tobytes() == back_two.tobytes()
