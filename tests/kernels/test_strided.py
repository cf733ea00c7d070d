"""zarrbolt.kernels.strided_copy / transpose against numpy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrbolt import kernels
from zarrbolt._ext import _kernels

ISAS = _kernels._strided_isas()  # e.g. ["scalar", "sse2", "avx2"]


@pytest.fixture(params=ISAS)
def isa(request):
    """Run a test with the tiled transpose kernels limited to each instruction set."""
    old = _kernels._strided_set_isa(request.param)
    try:
        yield request.param
    finally:
        _kernels._strided_set_isa(old)

DTYPES = ["u1", "b1", "i2", "V3", "f4", "V5", "u8", "c16", "V16", "f2", "S7", "u4,u2"]


def rand_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """A C-contiguous array of `shape` filled with random bytes (any dtype, NaNs included)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = rng.integers(0, 256, n, dtype=np.uint8)
    if dtype == np.bool_:
        raw &= 1
    return raw.view(dtype).reshape(shape)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shape, dtype and bytes (bitwise, so NaNs and void types compare)."""
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    )


@st.composite
def layouts(draw, shape, dtype, rng):
    """An array of `shape` in a random memory layout: a view with steps (negative included)
    and permuted axes of a larger random base array."""
    ndim = len(shape)
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2, 3])) for _ in range(ndim)]
    perm = draw(st.permutations(range(ndim)))
    base_shape = [shape[p] * abs(steps[i]) for i, p in enumerate(perm)]
    base = rand_array(rng, base_shape, dtype)
    if draw(st.booleans()):
        base = base.copy(order="F")
    view = base[(*(slice(None, None, s) for s in steps), Ellipsis)]
    view = view.transpose(tuple(int(i) for i in np.argsort(perm)))
    assert view.shape == tuple(shape)
    return view


# Up to 3-d: dimensions long enough to reach the tiled / SIMD kernels; up to 6-d: short ones.
shapes = st.integers(0, 6).flatmap(
    lambda nd: st.lists(
        st.integers(0, 40 if nd <= 2 else 20 if nd == 3 else 5), min_size=nd, max_size=nd
    ).map(tuple)
)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES))
def test_strided_copy_random_layouts(data, shape, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = data.draw(layouts(shape, dtype, rng), label="src")
    dst = data.draw(layouts(shape, dtype, rng), label="dst")
    expected = src.copy()
    kernels.strided_copy(dst, src, stream=data.draw(st.booleans(), label="stream"),
                         src_order=data.draw(st.booleans(), label="src_order"))
    assert same(dst, expected)


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
@pytest.mark.parametrize("row_bytes", [0, 8, 15, 16, 17, 48, 63, 64, 65, 100, 127, 128, 129, 200, 1000,
                                       1024, 1025, 1039, 1040, 1087, 1088, 1089, 1153])
@pytest.mark.parametrize("misalign", [0, 1, 8, 15])
def test_stream_copy_rows(itemsize, row_bytes, misalign):
    """Row copies with stream=True: every row length and destination alignment around the
    16-byte stores and the 64-byte unroll (rows of ZB_STREAM_MIN_RUN = 1024 bytes or more are the
    ones written with non-temporal stores), bytes outside the destination rows untouched."""
    n = row_bytes // itemsize
    rows, stride = 5, (n + 9) * itemsize
    base = np.zeros(misalign + rows * stride + 64, dtype=np.uint8)
    dst = np.ndarray((rows, n), dtype=f"V{itemsize}", buffer=base, offset=misalign, strides=(stride, itemsize))
    src = np.random.default_rng(row_bytes).integers(1, 256, (rows, n * itemsize), dtype=np.uint8)
    src = src.view(f"V{itemsize}")
    kernels.strided_copy(dst, src, stream=True)
    assert dst.tobytes() == src.tobytes()
    touched = np.zeros(base.shape, bool)
    for r in range(rows):
        touched[misalign + r * stride: misalign + r * stride + n * itemsize] = True
    assert not base[~touched].any()


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES))
def test_transpose_random(data, shape, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    src = data.draw(layouts(shape, dtype, rng), label="src")
    order = data.draw(st.permutations(range(len(shape))), label="order")
    expected = src.transpose(order).copy(order="C")  # ascontiguousarray makes 0-d 1-d
    out = kernels.transpose(src, order)
    assert out.flags.c_contiguous
    assert same(out, expected)
    out2 = np.empty_like(expected)
    assert kernels.transpose(src, order, out=out2) is out2
    assert same(out2, expected)


# Larger arrays that exercise the tiled / SIMD transpose kernels with partial tiles, for each
# specialised itemsize and a few generic ones.
@pytest.mark.parametrize("dtype", ["u1", "u2", "V3", "u4", "f8", "c16", "V5"])
@pytest.mark.parametrize("shape", [(37, 70, 45), (64, 64, 16), (17, 129, 3)])
def test_transpose_tiles_all_orders(dtype, shape, isa):
    rng = np.random.default_rng(5)
    src = rand_array(rng, shape, dtype)
    for order in itertools.permutations(range(3)):
        assert same(kernels.transpose(src, order), np.ascontiguousarray(src.transpose(order)))


@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", "u8"])
@pytest.mark.parametrize("shape", [(130, 67), (64, 64), (200, 16), (16, 200), (7, 300), (129, 129)])
def test_transpose_2d_tiles(dtype, shape, isa):
    rng = np.random.default_rng(6)
    src = rand_array(rng, shape, dtype)
    assert same(kernels.transpose(src, (1, 0)), np.ascontiguousarray(src.T))
    # negative and stepped source strides through the tiled path
    for view in (src[::-1], src[:, ::-1], src[::-2, ::3], src[1:, :-1]):
        assert same(kernels.transpose(view, (1, 0)), np.ascontiguousarray(view.T))


@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", "u8", "V3"])
def test_strided_copy_into_region(dtype, isa):
    """Scatter a chunk (possibly transposed) into its region of a larger array."""
    rng = np.random.default_rng(8)
    out = rand_array(rng, (100, 90, 80), dtype)
    ref = out.copy()
    chunk = rand_array(rng, (33, 40, 21), dtype)
    region = (slice(10, 43), slice(50, 90), slice(3, 24))
    kernels.strided_copy(out[region], chunk)
    ref[region] = chunk
    assert same(out, ref)
    tchunk = rand_array(rng, (21, 40, 33), dtype).transpose(2, 1, 0)
    kernels.strided_copy(out[region], tchunk)
    ref[region] = tchunk
    assert same(out, ref)
    # negative destination strides
    kernels.strided_copy(out[region][::-1, :, ::-1], chunk)
    ref[region][::-1, :, ::-1] = chunk
    assert same(out, ref)


@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", "u8", "V3"])
@pytest.mark.parametrize("box", [(64, 64, 64), (70, 5, 67), (16, 3, 130), (1, 64, 64), (65, 2, 17)])
def test_gather_chunk_from_large_array(dtype, box, isa):
    """A chunk gathered out of a large array, as writes do: source rows far apart (planes of
    >= 128 KiB), so the copies prefetch ahead and transposes stage their tiles first; plain,
    transposed (the stored order of transpose(2, 1, 0)) and at an unaligned offset."""
    rng = np.random.default_rng(9)
    itemsize = np.dtype(dtype).itemsize
    width = 2 * box[2] + 3
    height = box[1] + -(-(128 << 10) // (width * itemsize))
    vol = rand_array(rng, (box[0] + 2, height, width), dtype)
    region = vol[1:1 + box[0], 0:box[1], 3:3 + box[2]]
    for order in [(0, 1, 2), (2, 1, 0), (1, 2, 0)]:
        dst = np.empty(tuple(box[o] for o in order), dtype=dtype)
        kernels.strided_copy(dst.transpose(np.argsort(order)), region)
        assert same(dst, np.ascontiguousarray(region.transpose(order)))


@pytest.mark.parametrize("row_bytes", [2, 64, 100, 128, 1024, 1026])
@pytest.mark.parametrize("rows", [1, 3, 200])
def test_short_rows_far_apart(row_bytes, rows):
    """Rows of at most a KiB with gaps between them (prefetched ahead), over several outer
    dimensions so that the prefetching cursor crosses them, and ending at the last row."""
    rng = np.random.default_rng(10)
    src = rand_array(rng, (3, rows, 4 * row_bytes + 64), "u1")
    view = src[:, :, 17:17 + row_bytes]
    dst = np.empty(view.shape, dtype="u1")
    kernels.strided_copy(dst, view)
    assert same(dst, view)
    dst2 = np.empty((rows, 3, row_bytes), dtype="u1")  # the outer dimensions swapped
    kernels.strided_copy(dst2.transpose(1, 0, 2), view)
    assert same(dst2, np.ascontiguousarray(view.transpose(1, 0, 2)))


def test_f_order_and_mixed_itemsize_kinds():
    rng = np.random.default_rng(9)
    a = rand_array(rng, (13, 27, 5), "f4")
    f = np.asfortranarray(a)
    dst = np.empty_like(a)
    kernels.strided_copy(dst, f)
    assert same(dst, a)
    dst_f = np.empty(a.shape, a.dtype, order="F")
    kernels.strided_copy(dst_f, a)
    assert same(dst_f, a)
    # same itemsize, different kind: a bit copy, like a view
    ints = np.empty(a.shape, np.int32)
    kernels.strided_copy(ints, a)
    assert same(ints, a.view(np.int32))


def test_bool_complex_and_special_values():
    b = np.array([[True, False, True], [False, False, True]])
    assert same(kernels.transpose(b, (1, 0)), np.ascontiguousarray(b.T))
    c = np.array([[1 + 2j, np.nan], [np.inf, -0.0 + 1j]], dtype=np.complex128)
    assert same(kernels.transpose(c, (1, 0)), np.ascontiguousarray(c.T))


def test_zero_d_and_zero_size():
    a = np.array(3.5)
    out = kernels.transpose(a, ())
    assert out.shape == () and out == 3.5
    d = np.zeros((), dtype="V5")
    s = np.frombuffer(b"abcde", dtype="V5").reshape(())
    kernels.strided_copy(d, s)
    assert d.tobytes() == b"abcde"
    for shape in [(0,), (3, 0, 4), (0, 0)]:
        z = np.empty(shape, np.uint16)
        order = tuple(reversed(range(len(shape))))
        out = kernels.transpose(z, order)
        assert out.shape == z.transpose(order).shape
        kernels.strided_copy(np.empty(shape, np.uint16), z)


def test_many_dimensions():
    rng = np.random.default_rng(10)
    shape = (2, 1, 3) * 8 + (1,) * 30  # 54 dimensions
    a = rand_array(rng, shape, "u2")
    order = list(rng.permutation(len(shape)))
    assert same(kernels.transpose(a, order), np.ascontiguousarray(a.transpose(order)))
    v = a[(slice(None, None, -1),) * len(shape)]
    dst = np.empty(shape, "u2", order="F")
    kernels.strided_copy(dst, v)
    assert same(dst, v)


def test_broadcast_source():
    src = np.broadcast_to(np.arange(5, dtype=np.int64), (4, 3, 5))
    dst = np.empty((4, 3, 5), np.int64)
    kernels.strided_copy(dst, src)
    assert same(dst, np.ascontiguousarray(src))
    assert same(kernels.transpose(src, (2, 0, 1)), np.ascontiguousarray(src.transpose(2, 0, 1)))


def test_overlapping_memory():
    a = np.arange(100, dtype=np.int32)
    ref = a.copy()
    kernels.strided_copy(a[1:], a[:-1])
    ref[1:] = ref[:-1].copy()
    assert same(a, ref)
    m = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    expected = np.ascontiguousarray(m.T)
    assert kernels.transpose(m, (1, 0), out=m) is m
    assert same(m, expected)
    # the very same view: nothing to do
    b = np.arange(10.0)
    kernels.strided_copy(b, b)
    assert same(b, np.arange(10.0))
    # reversed view of itself
    c = np.arange(10, dtype=np.uint8)
    kernels.strided_copy(c, c[::-1])
    assert same(c, np.arange(10, dtype=np.uint8)[::-1])


def test_isa_hook():
    assert ISAS[0] == "scalar"
    assert set(ISAS) <= {"scalar", "sse2", "avx2"}
    with pytest.raises(ValueError):
        _kernels._strided_set_isa("avx1024")


def test_strided_copy_errors():
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="dst"):
        kernels.strided_copy([1, 2], a)
    with pytest.raises(TypeError, match="src"):
        kernels.strided_copy(a, [[0] * 4] * 3)
    with pytest.raises(ValueError, match="shape"):
        kernels.strided_copy(a, np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="shape"):
        kernels.strided_copy(a, np.zeros((3, 4, 1), np.float32))
    with pytest.raises(TypeError, match="itemsize"):
        kernels.strided_copy(a, np.zeros((3, 4), np.float64))
    with pytest.raises(TypeError, match="object"):
        kernels.strided_copy(np.empty(2, object), np.empty(2, object))
    with pytest.raises(TypeError, match="object"):
        kernels.strided_copy(np.empty(2, "i8"), np.empty(2, object))
    ro = np.zeros((3, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.strided_copy(ro, a)
    with pytest.raises(ValueError, match="read-only"):
        kernels.strided_copy(np.broadcast_to(np.float32(0), (3, 4)), a)


def test_transpose_errors():
    a = np.zeros((2, 3, 4), np.uint16)
    with pytest.raises(TypeError, match="src"):
        kernels.transpose([[1, 2]], (1, 0))
    with pytest.raises(ValueError, match="permutation"):
        kernels.transpose(a, (0, 1))
    with pytest.raises(ValueError, match="permutation"):
        kernels.transpose(a, (0, 1, 1))
    with pytest.raises(ValueError, match="permutation"):
        kernels.transpose(a, (0, 1, 3))
    with pytest.raises(ValueError, match="permutation"):
        kernels.transpose(a, (0, 1, -1))
    with pytest.raises(TypeError, match="ints"):
        kernels.transpose(a, (0, 1, 2.0))
    with pytest.raises(TypeError, match="ints"):
        kernels.transpose(a, "012")
    with pytest.raises(TypeError, match="sequence"):
        kernels.transpose(a, 3)
    with pytest.raises(TypeError, match="object"):
        kernels.transpose(np.empty((2, 2), object), (1, 0))
    with pytest.raises(TypeError, match="out"):
        kernels.transpose(a, (2, 1, 0), out=[0])
    with pytest.raises(ValueError, match="shape"):
        kernels.transpose(a, (2, 1, 0), out=np.empty((2, 3, 4), np.uint16))
    with pytest.raises(TypeError, match="dtype"):
        kernels.transpose(a, (2, 1, 0), out=np.empty((4, 3, 2), np.int16))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.transpose(a, (2, 1, 0), out=np.empty((4, 3, 2), np.uint16, order="F"))
    ro = np.empty((4, 3, 2), np.uint16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.transpose(a, (2, 1, 0), out=ro)
    # numpy integers are accepted in `order`
    out = kernels.transpose(a, np.array([2, 0, 1]))
    assert out.shape == (4, 2, 3)
