"""zarrbolt.kernels.scale_offset_encode/decode and the fused scale_offset + cast_value kernels.

Spec (shared/spec/v3/codecs/scale_offset-cast_value.md): encode ``(x - offset) * scale``, decode
``x / scale + offset``, arithmetic in the array's own dtype, any unrepresentable intermediate or
final value is an error.  References: Python ints for integer types (exact; a division with a
remainder is unrepresentable), numpy scalar arithmetic of the same dtype for floats (IEEE, correctly
rounded; numpy's float16 ops round once from float32, which is exact), where an operation that
overflows to +-inf from finite operands or makes NaN from non-NaN operands is an error, while NaN
and +-inf inputs propagate.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt import kernels
from zarrbolt._ext import _numeric
from zarrbolt.errors import CodecError

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]


class Err(Exception):
    pass


def ref_int(x: int, off: int, sc: int, dt: str, decode: bool) -> int:
    info = np.iinfo(dt)

    def chk(v):
        if not info.min <= v <= info.max:
            raise Err
        return v

    if decode:
        q, r = divmod(x, sc)
        if r:
            raise Err
        return chk(chk(q) + off)
    return chk(chk(x - off) * sc)


def ref_float_op(a, b, op):
    with np.errstate(all="ignore"):
        r = op(a, b)
    if np.isinf(r) and np.isfinite(a) and np.isfinite(b):
        raise Err
    if np.isnan(r) and not np.isnan(a) and not np.isnan(b):
        raise Err
    return r


def ref_float(x, off, sc, decode):
    if decode:
        return ref_float_op(ref_float_op(x, sc, lambda p, q: p / q), off, lambda p, q: p + q)
    return ref_float_op(ref_float_op(x, off, lambda p, q: p - q), sc, lambda p, q: p * q)


def check(dt, xs, off, sc, decode):
    a = np.array(xs, dtype=dt)
    t = np.dtype(dt).type
    exp, ok = [], []
    for x in a:
        try:
            if dt in INTS:
                exp.append(ref_int(int(x), int(off), int(sc), dt, decode))
            else:
                exp.append(ref_float(x, t(off), t(sc), decode))
            ok.append(True)
        except Err:
            ok.append(False)
    ok = np.array(ok, dtype=bool)
    fn = kernels.scale_offset_decode if decode else kernels.scale_offset_encode
    got = fn(a[ok], off, sc)
    e = np.array(exp, dtype=dt)
    assert got.dtype == np.dtype(dt)
    if dt in FLOATS:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(e))
        m = ~np.isnan(e)
        np.testing.assert_array_equal(got[m], e[m])
        np.testing.assert_array_equal(np.signbit(got[m]), np.signbit(e[m]))
    else:
        np.testing.assert_array_equal(got, e)
    for i in np.flatnonzero(~ok)[:4]:
        arr = np.concatenate([a[ok][:2], a[i:i + 1]])
        with pytest.raises(CodecError, match=rf"\b{len(arr) - 1}\b"):
            fn(arr, off, sc)


@pytest.mark.parametrize("dt", INTS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_integers_exact(dt, data):
    info = np.iinfo(dt)
    small = st.integers(max(int(info.min), -1000), min(int(info.max), 1000))
    full = st.integers(int(info.min), int(info.max))
    xs = data.draw(st.lists(st.one_of(full, small), min_size=1, max_size=30))
    off = data.draw(st.one_of(small, full))
    sc = data.draw(st.one_of(small, full).map(lambda v: v if v != 0 else 1))
    check(dt, xs, off, sc, decode=False)
    check(dt, xs, off, sc, decode=True)
    # values that encode fine decode back exactly
    enc = [x for x in xs if _ok(lambda: ref_int(x, off, sc, dt, False))]
    if enc:
        a = np.array(enc, dtype=dt)
        np.testing.assert_array_equal(
            kernels.scale_offset_decode(kernels.scale_offset_encode(a, off, sc), off, sc), a)


def _ok(f):
    try:
        f()
        return True
    except Err:
        return False


@pytest.mark.parametrize("dt", FLOATS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_floats_ieee(dt, data):
    width = np.dtype(dt).itemsize * 8
    anyf = st.floats(width=width, allow_nan=True, allow_infinity=True)
    fin = st.floats(width=width, allow_nan=False, allow_infinity=False)
    xs = data.draw(st.lists(anyf, min_size=1, max_size=30))
    off = data.draw(fin)
    sc = data.draw(fin.map(lambda v: v if v != 0 else 1.0))
    check(dt, xs, off, sc, decode=False)
    check(dt, xs, off, sc, decode=True)


def test_float16_rounds_once_per_operation():
    a = np.array([1.0, 3.0, 1000.0, 0.1, 65000.0, -7.5], np.float16)
    off, sc = np.float16(0.3), np.float16(1.7)
    exp = (a - off) * sc  # numpy float16 arithmetic: each op rounded to float16
    np.testing.assert_array_equal(kernels.scale_offset_encode(a[:4], off, sc), exp[:4])
    with pytest.raises(CodecError, match=r"\b4\b"):
        kernels.scale_offset_encode(a, off, sc)  # 65000 * 1.7 overflows float16


def test_specials():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float64)
    got = kernels.scale_offset_encode(a, 0.0, 2.0)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf
    assert np.signbit(got[3]) and not np.signbit(got[4])
    with pytest.raises(CodecError):
        kernels.scale_offset_encode(np.array([1e308]), -1e308, 2.0)
    with pytest.raises(CodecError):
        kernels.scale_offset_decode(np.array([1e308], np.float64), 0.0, 1e-10)
    # integer edge cases
    with pytest.raises(CodecError):
        kernels.scale_offset_encode(np.array([5], np.uint8), 10, 1)  # 5 - 10 < 0 in uint8
    with pytest.raises(CodecError):
        kernels.scale_offset_decode(np.array([7], np.int32), 0, 2)  # 7 / 2 is not an int32
    with pytest.raises(CodecError):
        kernels.scale_offset_decode(np.array([np.iinfo(np.int64).min], np.int64), 0, -1)
    with pytest.raises(CodecError):
        kernels.scale_offset_encode(np.array([2**62], np.int64), 0, 2)
    assert kernels.scale_offset_encode(np.array([2**62], np.int64), 0, -2)[0] == -(2**63)
    assert kernels.scale_offset_encode(np.array([2**64 - 1], np.uint64), 2**64 - 1, 3)[0] == 0
    with pytest.raises(CodecError, match=r"\b1\b"):
        kernels.scale_offset_decode(np.array([-6, 6], np.int8), -128, -3)  # -2 + -128 < -128
    got = kernels.scale_offset_decode(np.array([-6, 6], np.int8), 100, -3)
    np.testing.assert_array_equal(got, [102, 98])


def test_arguments_and_layout():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    got = kernels.scale_offset_encode(a, 1.5, 2.0)
    np.testing.assert_array_equal(got, (a - np.float32(1.5)) * np.float32(2.0))
    assert got.shape == a.shape
    out = np.empty(a.shape, np.float32)
    assert kernels.scale_offset_decode(a, 1.5, 2.0, out=out) is out
    b = np.arange(6, dtype=np.float64)
    kernels.scale_offset_encode(b, 1.0, 3.0, out=b)  # in place
    np.testing.assert_array_equal(b, (np.arange(6) - 1.0) * 3.0)
    be = np.arange(5, dtype=">i4")
    np.testing.assert_array_equal(kernels.scale_offset_encode(be, 1, 2), (np.arange(5) - 1) * 2)
    with pytest.raises((TypeError, ValueError)):
        kernels.scale_offset_encode(np.array([True]), 0, 1)
    with pytest.raises(ValueError):
        kernels.scale_offset_encode(a, 0, 1, out=np.empty(a.shape, np.float64))
    with pytest.raises((ValueError, CodecError)):
        kernels.scale_offset_decode(np.array([1, 2], np.int16), 0, 0)


# ------------------------------------------------------------------------------------------
# fused == composition

FUSED_CASES = [
    ("float32", "uint16", 100.0, 4.0), ("float64", "uint8", -10.0, 0.1), ("float64", "int16", 3.25, 10.0),
    ("float32", "int8", 0.0, 1.0), ("float16", "uint8", 2.0, 3.0), ("int32", "int8", 7, 3),
    ("int64", "float32", 1, 3), ("uint16", "uint8", 100, 1), ("float64", "float32", 1.0, 1e-3),
    ("float32", "float16", 0.5, 0.25),
]


def _both(f):
    try:
        return f(), None
    except CodecError as e:
        return None, e


@pytest.mark.parametrize("src,dst,off,sc,oor", [
    (*case, oor) for case in FUSED_CASES for oor in (None, "clamp", "wrap") if oor != "wrap" or case[1] in INTS
])
@pytest.mark.parametrize("rounding", ["nearest-even", "towards-zero", "nearest-away"])
def test_fused_equals_composition(src, dst, off, sc, oor, rounding):
    rng = np.random.default_rng(hash((src, dst, rounding, oor)) & 0xFFFF)
    n = 10000  # several blocks of the fused kernel
    if src in FLOATS:
        x = (rng.standard_normal(n) * 200 + 50).astype(src)
        x[::501] = np.nan
    else:
        info = np.iinfo(src)
        x = rng.integers(max(info.min, -400), min(info.max, 400), n).astype(src)
    smap = [(float("nan"), 0)] if src in FLOATS and dst in INTS else None
    kw = dict(rounding=rounding, out_of_range=oor, scalar_map=smap)
    fused, fe = _both(lambda: kernels.scale_offset_cast(x, off, sc, dst, **kw))
    comp, ce = _both(lambda: kernels.cast_value(kernels.scale_offset_encode(x, off, sc), dst, **kw))
    assert (fe is None) == (ce is None), (fe, ce)
    if fe is None:
        assert fused.dtype == comp.dtype and fused.tobytes() == comp.tobytes()
        # decode direction: cast back (NaN for the mapped 0), then scale_offset decode
        back_map = [(0, float("nan"))] if smap else None
        kwd = dict(rounding=rounding, out_of_range=None if oor == "wrap" else oor, scalar_map=back_map)
        fd, fde = _both(lambda: kernels.cast_scale_offset_decode(fused, src, off, sc, **kwd))
        cd, cde = _both(lambda: kernels.scale_offset_decode(kernels.cast_value(fused, src, **kwd), off, sc))
        assert (fde is None) == (cde is None), (fde, cde)
        if fde is None:
            assert fd.tobytes() == cd.tobytes()


def test_fused_errors_name_the_element():
    x = np.zeros(9000, np.float32)
    x[8500] = 1e6
    with pytest.raises(CodecError, match="8500"):
        kernels.scale_offset_cast(x, 0.0, 1.0, "uint16")
    y = np.zeros(9000, np.int16)
    y[7000] = 3
    with pytest.raises(CodecError, match="7000"):
        kernels.scale_offset_cast(y, 0, 20000, "int16")  # 3 * 20000 overflows int16 in scale_offset
    z = np.zeros(9000, np.uint8)
    z[6000] = 7
    with pytest.raises(CodecError, match="6000"):
        kernels.cast_scale_offset_decode(z, "int32", 0, 2)  # 7 / 2 is not an integer


def test_fused_roundtrip_quantisation():
    x = (np.arange(15000, dtype=np.float64) * 0.37) - 100.0
    enc = kernels.scale_offset_cast(x, -100.0, 10.0, "uint16", out_of_range="clamp")
    dec = kernels.cast_scale_offset_decode(enc, "float64", -100.0, 10.0)
    assert np.max(np.abs(dec - x)) <= 0.05 + 1e-9
    assert math.isclose(float(dec[10]), float(x[10]), abs_tol=0.05)


# The one-pass decode of small integers into float32 (cast exact, then x / scale + offset, the
# division by a power of two done as a multiplication by its reciprocal): bit for bit what
# numpy's float32 arithmetic gives, on every instruction set, for scales that are powers of two
# (both signs, tiny and huge) and scales that are not, and offsets up to where the exact path
# (with its overflow check) takes over.
ONE_PASS_SCALES = [4.0, 0.25, -2.0, 2.0 ** -126, 2.0 ** -149, 2.0 ** 100, 2.0 ** 127, 1.0, 3.0, -7.5, 100.0, 1e-30]
ONE_PASS_OFFSETS = [0.0, 100.0, -0.0, -1234.5, 3.0e38, float("inf"), float("nan")]


@pytest.mark.parametrize("src", ["uint8", "int8", "uint16", "int16"])
@pytest.mark.parametrize("isa", _numeric._numeric_isas())
def test_one_pass_small_int_to_float32_decode(src, isa):
    info = np.iinfo(src)
    x = np.arange(info.min, info.max + 1, dtype=np.int64).astype(src)
    xf = x.astype(np.float32)  # exact
    old = _numeric._numeric_set_isa(isa)
    try:
        for sc in ONE_PASS_SCALES:
            for off in ONE_PASS_OFFSETS:
                with np.errstate(all="ignore"):
                    q = xf / np.float32(sc)
                    want = q + np.float32(off)
                overflow = bool((np.isinf(q) | np.isinf(want)).any()) and np.isfinite(off)
                overflow |= bool(np.isinf(off))  # an infinite offset makes every result infinite
                got, err = _both(lambda: kernels.cast_scale_offset_decode(x, "float32", off, sc))
                if overflow:
                    assert err is not None, (sc, off)
                    continue
                assert err is None, (sc, off, err)
                assert got.dtype == np.float32
                if np.isnan(off):
                    assert np.isnan(got).all()
                else:
                    assert got.tobytes() == want.tobytes(), (sc, off)
                    comp = kernels.scale_offset_decode(kernels.cast_value(x, "float32"), off, sc)
                    assert comp.tobytes() == got.tobytes()
    finally:
        _numeric._numeric_set_isa(old)


def test_power_of_two_scale_decode_equals_division():
    """float scale_offset decode by a power-of-two scale (a multiplication inside) is bit for bit
    x / scale + offset, for subnormal, huge, negative, zero, infinite and NaN inputs."""
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64):
        bits = rng.integers(0, 2 ** (8 * np.dtype(dt).itemsize), 20000, dtype=np.uint64)
        x = bits.astype(np.uint32 if dt is np.float32 else np.uint64).view(dt)
        x = np.concatenate([x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45], dt)])
        x = x[np.isfinite(x) | np.isnan(x)]  # inf inputs stay inf; huge finite ones may overflow
        for sc in (2.0, 0.5, -8.0, 2.0 ** -20, 2.0 ** 60):
            with np.errstate(all="ignore"):
                want = x / dt(sc) + dt(1.5)
            if np.isinf(want[np.isfinite(x)]).any():
                x = x[~(np.isfinite(x) & np.isinf(want))]
                with np.errstate(all="ignore"):
                    want = x / dt(sc) + dt(1.5)
            got = kernels.scale_offset_decode(x, 1.5, sc)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            m = ~np.isnan(want)
            assert got[m].tobytes() == want[m].tobytes(), (dt, sc)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("isa", _numeric._numeric_isas())
def test_float_loops_on_every_instruction_set(dt, isa):
    """float32/float64 scale_offset (8 lanes with AVX2, else the compiler's 128-bit loops):
    numpy's arithmetic bit for bit on long arrays with specials among them, the same first
    overflowing element, on every instruction set."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(10_000) * 1e3).astype(dt)
    x[::97] = np.nan
    x[5::101] = np.inf
    x[7::103] = -np.inf
    x[9::107] = -0.0
    old = _numeric._numeric_set_isa(isa)
    try:
        for off, sc in ((1.5, 4.0), (-100.25, 0.3), (0.0, -2.0), (7.0, 1e-3)):
            o, s = np.asarray(off, dt), np.asarray(sc, dt)
            with np.errstate(all="ignore"):
                want_enc = (x - o) * s
                want_dec = x / s + o
            assert kernels.scale_offset_encode(x, off, sc).tobytes() == want_enc.tobytes(), (off, sc)
            assert kernels.scale_offset_decode(x, off, sc).tobytes() == want_dec.tobytes(), (off, sc)
        big = np.full(5000, np.finfo(dt).max / 2, dt)
        big[3001] = np.finfo(dt).max
        with pytest.raises(CodecError, match=r"\b3001\b"):
            kernels.scale_offset_encode(big, 0.0, 1.5)
    finally:
        _numeric._numeric_set_isa(old)
