"""The C downsampling kernels (csrc/downsample.c via zarrbolt.ome.downsample) against a numpy
reference: every method and dtype, odd edges (partial windows), any set of halved axes."""

import threading
import zlib

import numpy as np
import pytest
from ds_reference import reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrbolt.errors import CodecError
from zarrbolt.ome import downsample
from zarrbolt.ome.downsample import output_shape

INT_TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32"]
ALL_TYPES = INT_TYPES + ["uint64", "int64", "float32", "float64"]
METHOD_TYPES = [("mean", t) for t in INT_TYPES + ["float32", "float64"]] + [
    (m, t) for m in ("nearest", "min", "max") for t in ALL_TYPES] + [("mode", t) for t in INT_TYPES + ["uint64", "int64"]]


@pytest.fixture(params=["dispatched", "portable"], autouse=True)
def isa(request):
    """Every test runs with the kernels the CPU gets (AVX2 where it has it) and the portable ones."""
    from zarrbolt._ext import _downsample

    _downsample._set_portable(request.param == "portable")
    yield request.param
    _downsample._set_portable(False)


def _random(rng, shape, dtype, small=False):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dt)
    info = np.iinfo(dt)
    if small:  # few distinct values: modes with real ties and majorities
        return rng.integers(max(info.min, -2), min(info.max, 3), shape, endpoint=True).astype(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dt)


def _check(a, halve, method):
    got = downsample(a, halve, method, threads=2)
    want = reference(a, halve, method)
    assert got.shape == want.shape == output_shape(a.shape, halve)
    assert got.dtype == a.dtype
    if a.dtype.kind == "f" and method == "mean":
        # summation order differs from the reference's: a few ulps of the window's magnitude
        eps = np.finfo(a.dtype).eps
        scale = float(np.nanmax(np.abs(a))) if a.size and not np.isnan(a).all() else 1.0
        np.testing.assert_allclose(got, want, rtol=4 * eps, atol=8 * eps * scale)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("method,dtype", METHOD_TYPES)
@pytest.mark.parametrize("shape,halve", [
    ((8, 10, 12), (True, True, True)),
    ((7, 9, 11), (True, True, True)),        # odd edges on every axis
    ((3, 5, 7, 9), (False, True, True, True)),  # a kept leading axis (channels)
    ((6, 5, 4), (True, False, True)),        # a kept axis between halved ones
    ((5, 33), (True, False)),                # the line axis kept
    ((1, 1, 9), (True, True, True)),         # axes of size 1
    ((17,), (True,)),
])
def test_matches_numpy_reference(method, dtype, shape, halve):
    rng = np.random.default_rng(zlib.crc32(repr((method, dtype, shape)).encode()))
    _check(_random(rng, shape, dtype, small=method == "mode"), halve, method)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "uint32", "int32"])
def test_integer_mean_rounds_half_to_even_at_the_extremes(dtype):
    info = np.iinfo(dtype)
    # windows of 2 whose exact means are k + 0.5: ties go to the even neighbour
    a = np.array([info.min, info.min + 1, info.max - 1, info.max, 0, 1, 1, 2, -1 if info.min else 3, 0],
                 dtype=dtype)
    _check(a, (True,), "mean")
    # the extremes everywhere: a wide accumulator, no overflow
    for v in (info.min, info.max):
        a = np.full((4, 4, 4), v, dtype=dtype)
        np.testing.assert_array_equal(downsample(a, (True,) * 3, "mean"), np.full((2, 2, 2), v, dtype=dtype))


def test_partial_windows_use_only_real_pixels():
    a = np.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]], dtype=np.uint8)
    got = downsample(a, (True, True), "mean")
    # [[mean(10,20,40,50), mean(30,60)], [mean(70,80), 90]]
    np.testing.assert_array_equal(got, [[30, 45], [75, 90]])


def test_float_nan_propagates_in_mean_min_max():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    a[0, 0] = np.nan
    for m in ("mean", "min", "max"):
        got = downsample(a, (True, True), m)
        assert np.isnan(got[0, 0]) and not np.isnan(got[1:, :]).any() and not np.isnan(got[0, 1])
        _check(a, (True, True), m)


def test_float16_and_bool():
    rng = np.random.default_rng(1)
    h = rng.standard_normal((6, 6)).astype(np.float16)
    np.testing.assert_array_equal(downsample(h, (True, True), "mean"),
                                  downsample(h.astype(np.float32), (True, True), "mean").astype(np.float16))
    b = rng.integers(0, 2, (5, 6)).astype(bool)
    for m in ("nearest", "min", "max", "mode"):
        got = downsample(b, (True, True), m)
        assert got.dtype == bool
        np.testing.assert_array_equal(got, reference(b.view(np.uint8), (True, True), m).view(bool))


def test_nearest_any_dtype():
    a = np.arange(30, dtype=np.complex128).reshape(5, 6) * (1 + 2j)
    np.testing.assert_array_equal(downsample(a, (True, True), "nearest"), a[::2, ::2])
    s = np.array([[b"ab", b"cd", b"ef"]] * 3, dtype="S2")
    np.testing.assert_array_equal(downsample(s, (True, True), "nearest"), s[::2, ::2])


def test_non_contiguous_and_big_endian_input():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 60000, (20, 30), dtype=np.uint16)
    _check(np.asarray(a[::-1, 1::2]), (True, True), "mean")
    got = downsample(a.T, (True, True), "mean")
    np.testing.assert_array_equal(got, reference(np.ascontiguousarray(a.T), (True, True), "mean"))
    np.testing.assert_array_equal(downsample(a.astype(">u2"), (True, False), "max"), reference(a, (True, False), "max"))


def test_empty_and_size_one():
    assert downsample(np.zeros((0, 4), np.uint8), (True, True), "mean").shape == (0, 2)
    np.testing.assert_array_equal(downsample(np.array([[7]], np.int16), (True, True), "mean"), [[7]])


def test_errors_are_typed():
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match="unknown downsampling method"):
        downsample(a, (True, True), "median")
    with pytest.raises(CodecError, match="mode"):
        downsample(a, (True, True), "mode")
    with pytest.raises(CodecError, match="mean"):
        downsample(np.zeros(4, np.int64), (True,), "mean")
    with pytest.raises(ValueError, match="halve flags"):
        downsample(a, (True,), "mean")
    with pytest.raises(ValueError, match="at most 8"):
        downsample(np.zeros((2,) * 9, np.uint8), (True,) * 9, "mean")
    with pytest.raises(ValueError, match="threads"):
        downsample(a, (True, True), "mean", threads=0)


def test_many_threads_and_concurrent_callers_agree():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4096, (64, 128, 130), dtype=np.uint16)
    want = reference(a, (True, True, True), "mean")
    results = []

    def run():
        results.append(downsample(a, (True, True, True), "mean", threads=8))

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_array_equal(r, want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=4),
    data=st.data(),
    method=st.sampled_from(["mean", "nearest", "min", "max", "mode"]),
    dtype=st.sampled_from(["uint8", "int16", "int32", "float32", "float64"]),
)
def test_property_matches_reference(shape, data, method, dtype):
    if method == "mode" and dtype.startswith("float"):
        dtype = "int16"
    halve = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    seed = data.draw(st.integers(0, 2**32 - 1))
    a = _random(np.random.default_rng(seed), tuple(shape), dtype, small=method == "mode")
    _check(a, tuple(halve), method)


@pytest.mark.parametrize("method", ["mode", "mean", "min", "max"])
def test_large_windows_of_five_halved_axes(method):
    """Windows of 32 values (the mode's sorting path) and partial ones along every odd edge."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 4, (4, 3, 4, 5, 6)).astype(np.int16)
    _check(a, (True,) * 5, method)


def test_mode_of_uniform_and_mixed_windows():
    a = np.zeros((4, 4), np.uint16)
    a[0, 0] = 5  # one odd value: the background wins
    a[2:, 2:] = [[7, 7], [3, 3]]  # a tie: the smaller value
    np.testing.assert_array_equal(downsample(a, (True, True), "mode"), [[0, 0], [0, 3]])


def test_releases_the_gil():
    """A Python thread runs while the kernel works (method of tests/kernels/test_gil.py)."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "kernels"))
    from test_gil import progress_during

    a = np.random.default_rng(3).integers(0, 60000, (64, 512, 512), dtype=np.uint16)
    assert progress_during(lambda: downsample(a, (True, True, True), "mode", threads=1)) > 0
