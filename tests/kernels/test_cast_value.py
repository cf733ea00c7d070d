"""zarrbolt.kernels.cast_value against an arbitrary-precision reference of the spec's procedure.

Spec: shared/spec/v3/codecs/scale_offset-cast_value.md ("Casting procedure"): 1. scalar_map,
2. exact representability, 3. rounding then out_of_range, 4. otherwise error.  The reference
below implements it with Python ints and ``fractions.Fraction`` (no floating-point rounding
anywhere), so every source type x target type x rounding x out_of_range combination is checked
bit for bit.  Decisions encoded here (and documented in kernels.cast_value):

* a value is out of range when its value *rounded to the target's precision* (unbounded exponent
  for float targets) lies outside the target's finite range, so 255.4 -> uint8 is 255 and 65535 ->
  float16 with towards-zero is 65504, while 65520 -> float16 nearest-even is out of range;
* clamp saturates to the integer bounds (+-inf too) and to +-max finite for float targets;
* wrap is valid for integer targets only (not bool, not float);
* NaN/inf into integer/bool targets fail unless mapped; inf under clamp goes to min/max;
* NaN stays NaN between float types (sign kept), zeros keep their sign;
* scalar_map keys match by value (0.0 matches -0.0, a NaN key matches every NaN) and are
  applied first; a key the source type cannot hold never matches.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt import kernels
from zarrbolt.errors import CodecError

TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64"]
INTS = [t for t in TYPES if t[0] in "iu"]
FLOATS = ["float16", "float32", "float64"]
ROUNDINGS = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]
# (precision p, exponent of the smallest subnormal, largest finite value)
FLOAT_FMT = {
    "float16": (11, -24, Fraction(65504)),
    "float32": (24, -149, Fraction(int(np.finfo(np.float32).max))),
    "float64": (53, -1074, Fraction(int(np.finfo(np.float64).max))),
}


class Err(Exception):
    """The reference says: this element cannot be cast."""


def int_range(dt):
    if dt == "bool":
        return 0, 1
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def round_frac(x: Fraction, mode: str) -> int:
    if mode == "nearest-even":
        return round(x)  # Fraction.__round__: ties to even
    if mode == "towards-zero":
        return math.trunc(x)
    if mode == "towards-positive":
        return math.ceil(x)
    if mode == "towards-negative":
        return math.floor(x)
    a = math.floor(abs(x) + Fraction(1, 2))  # nearest-away
    return a if x >= 0 else -a


def exact_log2(x: Fraction) -> int:
    x = abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def py_value(a: np.ndarray, i: int):
    """Element i of a as an exact Python int (integer/bool types) or float (float types)."""
    v = a.reshape(-1)[i]
    if a.dtype.kind == "b":
        return int(bool(v))
    if a.dtype.kind in "iu":
        return int(v)
    return float(v)


def ref_cast(v, dst: str, rounding: str, oor, smap=()):
    """Expected output (Python int / float) of casting the exact value v, or raise Err."""
    for k, o in smap:
        if isinstance(v, float) and math.isnan(v):
            if isinstance(k, float) and math.isnan(k):
                return o
        elif not (isinstance(k, float) and math.isnan(k)) and k == v:
            return o
    is_float_dst = dst in FLOATS
    if isinstance(v, float) and math.isnan(v):
        if is_float_dst:
            return v
        raise Err("nan")
    if isinstance(v, float) and math.isinf(v):
        if is_float_dst:
            return v
        if oor == "clamp":
            lo, hi = int_range(dst)
            return hi if v > 0 else lo
        raise Err("inf")
    x = Fraction(v)
    if not is_float_dst:
        lo, hi = int_range(dst)
        r = round_frac(x, rounding)
        if lo <= r <= hi:
            return r
        if oor == "clamp":
            return hi if r > hi else lo
        if oor == "wrap":
            bits = np.dtype(dst).itemsize * 8
            r %= 1 << bits
            if lo < 0 and r > hi:
                r -= 1 << bits
            return r
        raise Err("range")
    p, emin, fmax = FLOAT_FMT[dst]
    if x == 0:
        return v if isinstance(v, float) else 0.0
    q = max(exact_log2(x) - p + 1, emin)
    r = round_frac(x / Fraction(2) ** q, rounding) * Fraction(2) ** q
    if abs(r) > fmax:
        if oor == "clamp":
            r = fmax if r > 0 else -fmax
        else:
            raise Err("range")
    if r == 0:
        return -0.0 if x < 0 else 0.0
    return float(r)


def to_array(values, dt):
    a = np.empty(len(values), dtype=dt)
    for i, v in enumerate(values):
        a[i] = v
    return a


def same(got: np.ndarray, exp: np.ndarray) -> bool:
    if got.dtype.kind == "f":
        gn, en = np.isnan(got), np.isnan(exp)
        if not np.array_equal(gn, en):
            return False
        if not np.array_equal(np.signbit(got), np.signbit(exp)):
            return False
        return np.array_equal(got[~gn], exp[~en])
    return np.array_equal(got, exp)


# ------------------------------------------------------------------------------------------
# inputs: special values for every type plus random bit patterns

SPECIAL_FLOATS = [
    0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999999999999994, 1.0, -1.0, 0.3, -0.7,
    math.inf, -math.inf, math.nan, -math.nan, 127.5, -128.5, 128.0, -129.0, 255.5, 255.4, 256.0,
    -0.49, 32767.5, -32768.5, 65535.5, 65535.4, 65536.0, 2147483647.5, 2147483648.0, -2147483648.5,
    4294967295.5, 4294967296.0, 2.0**53, 2.0**53 + 2, 2.0**63, -(2.0**63), 2.0**63 - 1024, 2.0**64,
    2.0**64 - 2048, 1e300, -1e300, 5e-324, -5e-324, 2.0**-1022, 1e-40, 2.0**-149, 2.0**-150,
    3 * 2.0**-150, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 6e-8, 2049.0, 2051.0, 4097.0, 65504.0, 65519.0,
    65520.0, 65535.0, 1e5, -65520.0, 1 + 2.0**-24, 1 + 2.0**-11, 1 + 3 * 2.0**-12, 16777217.0,
    float(np.finfo(np.float32).max), float(np.finfo(np.float32).max) * (1 + 2.0**-25),
    float(np.finfo(np.float32).max) * (1 + 2.0**-24), 2.0**128, 1.7976931348623157e308,
]


def special_ints(dt):
    lo, hi = int_range(dt)
    cands = {0, 1, -1, 2, 3, -3, lo, hi, lo + 1, hi - 1, 2**53 + 1, 2**53 + 3, 2**63, 2**64 - 1,
             2**63 - 1, -(2**63), 2**24 + 1, 2**24 + 3, 2049, 2051, 65504, 65519, 65520, 65535, 65536,
             -65520, 2**31, 2**32 - 1, 255, 256, -128, -129, 2**64 - 2**39, 2**64 - 2**40 + 1,
             2**63 + 2**39, 2**63 + 2**39 + 1, 2**62 + 2**38 + 2**10}
    for k in range(0, 64):
        cands |= {2**k - 1, 2**k + 1, -(2**k) + 1, -(2**k) - 1}
    return sorted(c for c in cands if lo <= c <= hi)


def inputs(dt: str, n_random: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return np.array([False, True, True, False])
    if dt in FLOATS:
        with np.errstate(all="ignore"):
            a = np.array(SPECIAL_FLOATS, dtype=np.float64).astype(dt)
        size = np.dtype(dt).itemsize
        bits = rng.integers(0, 256, n_random * size, dtype=np.uint8).view(dt)
        # values of moderate magnitude too, where most interesting rounding happens
        with np.errstate(over="ignore"):
            mod = (rng.standard_normal(n_random) * 10.0 ** rng.integers(-3, 6, n_random)).astype(dt)
        return np.concatenate([a, bits, mod])
    a = np.array(special_ints(dt), dtype=dt)
    info = np.iinfo(dt)
    r = rng.integers(info.min, info.max, n_random, dtype=dt, endpoint=True)
    small = rng.integers(max(info.min, -3000), min(info.max, 3000), n_random, dtype=dt, endpoint=True)
    return np.concatenate([a, r, small])


def oor_modes(dst):
    return [None, "clamp", "wrap"] if dst in INTS else [None, "clamp"]


def check_pair(src: str, dst: str, a: np.ndarray, roundings=ROUNDINGS, smap=(), oor_list=None):
    vals = [py_value(a, i) for i in range(a.size)]
    for rounding in roundings:
        for oor in oor_list or oor_modes(dst):
            exp, ok = [], []
            for v in vals:
                try:
                    exp.append(ref_cast(v, dst, rounding, oor, smap))
                    ok.append(True)
                except Err:
                    ok.append(False)
            ok = np.array(ok, dtype=bool)
            good = a[ok]
            got = kernels.cast_value(good, dst, rounding=rounding, out_of_range=oor,
                                     scalar_map=list(smap) or None)
            expected = to_array(exp, dst)
            assert got.dtype == np.dtype(dst)
            if not same(got, expected):
                bad = [(good[i], got[i], expected[i]) for i in range(good.size)
                       if not same(got[i:i + 1], expected[i:i + 1])]
                raise AssertionError(f"{src}->{dst} {rounding} {oor}: (input, got, expected) {bad[:8]}")
            # every element the reference rejects is rejected, and the message names its index
            for i in np.flatnonzero(~ok)[:6]:
                arr = np.concatenate([good[:3], a[i:i + 1]])
                with pytest.raises(CodecError, match=rf"\b{len(arr) - 1}\b"):
                    kernels.cast_value(arr, dst, rounding=rounding, out_of_range=oor,
                                       scalar_map=list(smap) or None)


@pytest.mark.parametrize("src", TYPES)
@pytest.mark.parametrize("dst", TYPES)
def test_every_pair_every_mode(src, dst):
    a = inputs(src, 24, seed=TYPES.index(src) * 100 + TYPES.index(dst))
    check_pair(src, dst, a)


# ------------------------------------------------------------------------------------------
# hypothesis on the pairs where exact rounding is hardest

def float_values(dt):
    width = {"float16": 16, "float32": 32, "float64": 64}[dt]
    return st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True)


HARD_PAIRS = [("int64", "float32"), ("uint64", "float32"), ("int64", "float64"), ("uint64", "float64"),
              ("int64", "float16"), ("uint64", "float16"), ("int32", "float16"), ("int32", "float32"),
              ("float64", "float32"), ("float64", "float16"), ("float32", "float16"), ("float64", "int64"),
              ("float64", "uint64"), ("float32", "int64"), ("float32", "uint64"), ("float16", "int8"),
              ("float64", "uint8"), ("float32", "uint16"), ("float32", "int16"), ("float64", "bool")]


@pytest.mark.parametrize("src,dst", HARD_PAIRS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_hypothesis_hard_pairs(src, dst, data):
    if src in FLOATS:
        vals = data.draw(st.lists(float_values(src), min_size=1, max_size=20))
        # values near the target's rounding boundaries: multiples of a quarter ulp of the target
        if dst in FLOATS:
            p = FLOAT_FMT[dst][0]
            e = data.draw(st.integers(-30, 70))
            k = data.draw(st.integers(2 ** (p + 1), 2 ** (p + 2) - 1))
            vals.append(float(Fraction(k) * Fraction(2) ** (e - p - 1)))
        else:
            vals.append(data.draw(st.integers(-(2**65), 2**65)) / 2)
    else:
        lo, hi = int_range(src)
        vals = data.draw(st.lists(st.integers(lo, hi), min_size=1, max_size=20))
        top = data.draw(st.integers(1, 64 if hi > 2**32 else 31))
        v = data.draw(st.integers(0, 2**top)) | (2 ** (top - 1) if top > 1 else 0)
        if lo <= v <= hi:
            vals.append(v)
    with np.errstate(all="ignore"):
        a = np.array(vals, dtype=np.float64 if src in FLOATS else object).astype(src)
    check_pair(src, dst, a)


# ------------------------------------------------------------------------------------------
# special cases spelled out

def test_halfway_cases_to_int():
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997], dtype=np.float32)
    expect = {
        "nearest-even": [0, 2, 2, 0, -2, -2, 0],
        "nearest-away": [1, 2, 3, -1, -2, -3, 0],
        "towards-zero": [0, 1, 2, 0, -1, -2, 0],
        "towards-positive": [1, 2, 3, 0, -1, -2, 1],
        "towards-negative": [0, 1, 2, -1, -2, -3, 0],
    }
    for mode, e in expect.items():
        np.testing.assert_array_equal(kernels.cast_value(a, "int8", rounding=mode), np.array(e, np.int8))


def test_int64_extremes_to_float32_no_double_rounding():
    # 2**62 + 2**38 + 1 lies just above a float32 halfway point; rounding through float64 first
    # would land exactly on the tie and round to even (down) -- the correct answer rounds up.
    v = 2**62 + 2**38 + 1
    got = kernels.cast_value(np.array([v], np.int64), "float32")[0]
    assert int(got) == 2**62 + 2**39
    assert int(np.float32(np.float64(v))) == 2**62  # numpy double-rounds
    got = kernels.cast_value(np.array([2**64 - 1, 2**63, 2**53 + 1], np.uint64), "float64",
                             rounding="towards-zero")
    assert [int(x) for x in got] == [2**64 - 2048, 2**63, 2**53]
    got = kernels.cast_value(np.array([2**53 + 1], np.int64), "float64", rounding="towards-positive")
    assert int(got[0]) == 2**53 + 2
    got = kernels.cast_value(np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], np.int64), "float32")
    assert [int(x) for x in got] == [-(2**63), 2**63]


def test_float_to_int64_limits():
    a = np.array([2.0**63], np.float64)
    with pytest.raises(CodecError):
        kernels.cast_value(a, "int64")
    assert kernels.cast_value(a, "int64", out_of_range="clamp")[0] == np.iinfo(np.int64).max
    assert kernels.cast_value(a, "int64", out_of_range="wrap")[0] == np.iinfo(np.int64).min
    assert kernels.cast_value(a, "uint64")[0] == 2**63
    b = np.array([2.0**64 - 2048, -(2.0**63)], np.float64)
    assert kernels.cast_value(b[:1], "uint64")[0] == 2**64 - 2048
    assert kernels.cast_value(b[1:], "int64")[0] == -(2**63)
    with pytest.raises(CodecError):
        kernels.cast_value(np.array([2.0**64]), "uint64")
    assert kernels.cast_value(np.array([2.0**64 + 4096 * 3]), "uint64", out_of_range="wrap")[0] == 4096 * 3


def test_nan_and_inf_to_integers():
    for v in (np.nan, np.inf, -np.inf):
        with pytest.raises(CodecError):
            kernels.cast_value(np.array([1.0, v]), "uint16")
        with pytest.raises(CodecError):
            kernels.cast_value(np.array([1.0, v], np.float32), "int8", out_of_range="wrap")
    with pytest.raises(CodecError):
        kernels.cast_value(np.array([np.nan], np.float32), "uint16", out_of_range="clamp")
    got = kernels.cast_value(np.array([np.inf, -np.inf, 1e30], np.float32), "uint16", out_of_range="clamp")
    np.testing.assert_array_equal(got, [65535, 0, 65535])
    got = kernels.cast_value(np.array([np.inf, -np.inf], np.float64), "int64", out_of_range="clamp")
    np.testing.assert_array_equal(got, [2**63 - 1, -(2**63)])


def test_float_targets_overflow_and_clamp():
    with pytest.raises(CodecError):
        kernels.cast_value(np.array([1e300]), "float32")
    with pytest.raises(CodecError):
        kernels.cast_value(np.array([65520.0], np.float32), "float16")
    assert kernels.cast_value(np.array([65519.0], np.float32), "float16")[0] == 65504
    assert kernels.cast_value(np.array([65535.0], np.float32), "float16", rounding="towards-zero")[0] == 65504
    got = kernels.cast_value(np.array([1e300, -1e300, np.inf, -np.inf]), "float32", out_of_range="clamp")
    m = np.finfo(np.float32).max
    np.testing.assert_array_equal(got, np.array([m, -m, np.inf, -np.inf], np.float32))
    got = kernels.cast_value(np.array([70000, -70000], np.int32), "float16", out_of_range="clamp")
    np.testing.assert_array_equal(got, np.array([65504, -65504], np.float16))


def test_signed_zero_subnormals_and_nan_payload():
    a = np.array([-0.0, 0.0, -1e-50, 1e-50, 2.0**-149, -(2.0**-149) * 1.5], np.float64)
    got = kernels.cast_value(a, "float32")
    assert list(np.signbit(got)) == [True, False, True, False, False, True]
    assert got[4] == np.float32(2.0**-149) and got[5] == -np.float32(2.0**-148)
    assert kernels.cast_value(a[2:4], "float32", rounding="towards-positive")[1] == np.float32(2.0**-149)
    assert kernels.cast_value(a[2:3], "float16", rounding="towards-negative")[0] == -np.float16(2.0**-24)
    # NaN with a payload: made quiet, sign and leading payload bits kept (as IEEE hardware does)
    nan64 = np.array([0xFFF4_0000_1234_5678], np.uint64).view(np.float64)  # negative signalling NaN
    f32 = kernels.cast_value(nan64, "float32")
    assert int(f32.view(np.uint32)[0]) == 0xFFC00000 | (0x4_0000_1234_5678 >> 29)
    f16 = kernels.cast_value(nan64, "float16")
    assert np.isnan(f16[0]) and np.signbit(f16[0]) and int(f16.view(np.uint16)[0]) & 0x200
    back = kernels.cast_value(np.array([0x7FC12345], np.uint32).view(np.float32), "float64")
    assert int(back.view(np.uint64)[0]) == (0x7FF8 << 48) | (0x12345 << 29)


def test_bool_target():
    a = np.array([0.0, -0.0, 1.0, 0.4, 0.6, 2.0, -1.0])
    with pytest.raises(CodecError, match=r"\b5\b"):
        kernels.cast_value(a, "bool")
    np.testing.assert_array_equal(kernels.cast_value(a[:5], "bool"), [False, False, True, False, True])
    np.testing.assert_array_equal(kernels.cast_value(a, "bool", out_of_range="clamp"),
                                  [False, False, True, False, True, True, False])
    with pytest.raises(ValueError):
        kernels.cast_value(a, "bool", out_of_range="wrap")
    np.testing.assert_array_equal(kernels.cast_value(np.array([True, False]), "float16"), [1.0, 0.0])


def test_wrap():
    got = kernels.cast_value(np.array([128, -129, 300, 2**31], np.int64), "int8", out_of_range="wrap")
    np.testing.assert_array_equal(got, [-128, 127, 44, 0])
    got = kernels.cast_value(np.array([-1, -256, 2**64 - 1], np.float64), "uint8", out_of_range="wrap")
    np.testing.assert_array_equal(got, [255, 0, 0])
    got = kernels.cast_value(np.array([-1.5, 255.5], np.float32), "uint8", out_of_range="wrap",
                             rounding="nearest-away")
    np.testing.assert_array_equal(got, [254, 0])


# ------------------------------------------------------------------------------------------
# scalar_map

def test_scalar_map_nan_and_order():
    a = np.array([np.nan, -np.nan, 0.0, 10.0, np.inf, 2.6], np.float64)
    smap = [(float("nan"), 0), (float("inf"), 255), (10.0, 7), (10.0, 9)]
    got = kernels.cast_value(a, "uint8", scalar_map=smap)
    np.testing.assert_array_equal(got, [0, 0, 0, 7, 255, 3])
    back = kernels.cast_value(np.array([0, 5], np.uint8), "float32", scalar_map=[(0, float("nan"))])
    assert np.isnan(back[0]) and back[1] == 5


def test_scalar_map_fast_pair_with_nan():
    a = np.arange(10000, dtype=np.float32) * 7.3
    a[::97] = np.nan
    got = kernels.cast_value(a, "uint16", out_of_range="clamp", scalar_map=[(float("nan"), 0)])
    exp = np.clip(np.rint(np.nan_to_num(a, nan=0.0)), 0, 65535).astype(np.uint16)
    np.testing.assert_array_equal(got, exp)


def test_scalar_map_matches_by_value():
    a = np.array([-0.0, 0.0, 1.0], np.float32)
    got = kernels.cast_value(a, "float64", scalar_map=[(0.0, 5.0)])
    np.testing.assert_array_equal(got, [5.0, 5.0, 1.0])
    got = kernels.cast_value(a, "float64", scalar_map=[(-0.0, 5.0)])
    np.testing.assert_array_equal(got, [5.0, 5.0, 1.0])


def test_scalar_map_key_not_in_source_type_never_matches():
    a = np.array([0, 1, 2], np.int32)
    # 0.5 is not an int32 value, so it must not capture 0 (nor 1)
    got = kernels.cast_value(a, "float32", scalar_map=[(0.5, -1.0)])
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.0])
    got = kernels.cast_value(np.array([2**24 + 1, 2**24], np.int64), "float64",
                             scalar_map=[(float(2**24 + 1), 3.0)])
    np.testing.assert_array_equal(got, [3.0, 2.0**24])
    # 16777217 is not a float32 value: the key must not capture float32(16777216)
    got = kernels.cast_value(np.array([16777216.0], np.float32), "int64", scalar_map=[(2**24 + 1, 0)])
    assert got[0] == 2**24
    # a NaN key cannot match integer input
    got = kernels.cast_value(np.array([0, 3], np.uint8), "float32", scalar_map=[(float("nan"), 1.0)])
    np.testing.assert_array_equal(got, [0.0, 3.0])


@pytest.mark.parametrize("smap", [[(1, 300)], [(1, 1.5)], [(1, -1)], [(float("nan"), float("nan"))]])
def test_scalar_map_output_must_be_representable(smap):
    with pytest.raises(ValueError):
        kernels.cast_value(np.array([1.0, np.nan]), "uint8", scalar_map=smap)


def test_scalar_map_against_reference():
    a = inputs("float64", 40, seed=7)
    smap = [(float("nan"), 0), (math.inf, 200), (-math.inf, 1), (2.5, 100), (-0.0, 42)]
    check_pair("float64", "uint8", a, smap=smap)
    b = inputs("int16", 40, seed=8)
    smap = [(0, float("nan")), (-32768, -math.inf), (300, 1.5)]
    check_pair("int16", "float16", b, smap=smap)


# ------------------------------------------------------------------------------------------
# arguments, layout, errors

def test_layouts_shapes_out():
    a = (np.arange(60, dtype=np.float64).reshape(3, 4, 5) * 1.5)[:, ::2, ::-1]
    got = kernels.cast_value(a, "int32")
    np.testing.assert_array_equal(got, np.rint(a).astype(np.int32))
    assert got.shape == a.shape
    be = np.arange(10, dtype=">f4")
    np.testing.assert_array_equal(kernels.cast_value(be, "uint16"), np.arange(10, dtype=np.uint16))
    out = np.empty((3, 2, 5), np.int32)
    assert kernels.cast_value(a, np.int32, out=out) is out
    np.testing.assert_array_equal(out, got)
    assert kernels.cast_value(np.empty(0, np.float32), "uint8").shape == (0,)
    x = np.arange(8, dtype=np.float64)
    kernels.cast_value(x, "float64", out=x)  # same buffer in and out
    np.testing.assert_array_equal(x, np.arange(8))


def test_bad_arguments():
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", rounding="up")
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", out_of_range="saturate")
    with pytest.raises(ValueError):
        kernels.cast_value(a, "float16", out_of_range="wrap")
    with pytest.raises((TypeError, ValueError)):
        kernels.cast_value(a, "complex64")
    with pytest.raises((TypeError, ValueError)):
        kernels.cast_value(a.astype(np.complex64), "float32")
    with pytest.raises((TypeError, ValueError)):
        kernels.cast_value(np.array(["a"]), "uint8")
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", out=np.empty(4, np.uint16))
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", out=np.empty(5, np.uint8))
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", out=np.empty(8, np.uint8)[::2])
    ro = np.empty(4, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        kernels.cast_value(a, "uint8", out=ro)


def test_error_message_names_index_and_value():
    a = np.zeros(5000, np.float32)
    a[4321] = 70000.0
    with pytest.raises(CodecError) as ei:
        kernels.cast_value(a, "uint16")
    assert "4321" in str(ei.value) and re.search(r"70000", str(ei.value))
    a[4321] = np.nan
    with pytest.raises(CodecError, match="4321"):
        kernels.cast_value(a, "uint16", out_of_range="clamp")


# ------------------------------------------------------------------------------------------
# the vectorised float32 -> uint8/uint16 loops, forced to each instruction set

from zarrbolt._ext import _numeric  # noqa: E402

NUMERIC_ISAS = _numeric._numeric_isas()


@pytest.fixture(params=NUMERIC_ISAS)
def numeric_isa(request):
    old = _numeric._numeric_set_isa(request.param)
    try:
        yield request.param
    finally:
        _numeric._numeric_set_isa(old)


@pytest.mark.parametrize("dst", ["uint8", "uint16"])
@pytest.mark.parametrize("n", [1, 15, 16, 33, 67, 200])
def test_vector_loops_every_isa(numeric_isa, dst, n):
    hi = float(np.iinfo(dst).max)
    rng = np.random.default_rng(n)
    edges = [0.0, -0.0, 0.5, 1.5, 2.5, -0.49, -0.5, -0.51, hi - 0.5, hi + 0.49, hi + 0.5, hi + 0.51,
             hi, -1.0, 1e30, -1e30]
    a = np.concatenate([rng.choice(np.array(edges, np.float32), n),
                        rng.uniform(-10, hi + 10, n).astype(np.float32)])
    check_pair("float32", dst, a)
    # one NaN or infinity at every position class: first, in the vector body, in the tail
    for pos in {0, n // 2, 2 * n - 1}:
        for special in (np.nan, np.inf, -np.inf):
            b = a.copy()
            b[pos] = special
            check_pair("float32", dst, b)
