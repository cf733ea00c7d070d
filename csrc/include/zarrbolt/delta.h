/* numcodecs' Delta filter (the v3 codec "numcodecs.delta") over a chunk's elements, flattened in
 * C order: encode y[0] = x[0], y[i] = x[i] - x[i-1] with the arithmetic of the decoded type D,
 * each result then cast to the encoded type A; decode the running sum.
 *
 * Types are the ZB_T_* codes of numeric.h: the integers and float16/32/64 (not bool).  Buffers are
 * native-endian, any alignment.  src and dst may be the same buffer when D and A have the same
 * size; otherwise they must not overlap.  Pure functions, thread-safe.
 *
 * The arithmetic is numpy's, as numcodecs runs it:
 *  - encode: x[i] - x[i-1] in D (integers wrap; float16 is computed in float32 and rounded once to
 *    float16, which equals float16 arithmetic), then the value cast to A: integers wrap
 *    (two's complement low bits), integers to floats round to nearest even, floats narrow with
 *    round to nearest even (overflow to infinity), floats to integers truncate toward zero;
 *  - decode: numpy's cumsum into a D array: the running sum is kept in P = numpy's promotion of D
 *    and A (e.g. int16 + float16 -> float32) and each partial sum cast to D as above.
 * Deviations from numpy, both for values numpy mangles: a float that is NaN, infinite or out of
 * the range of an integer target is ZB_ERANGE (numpy stores an unspecified integer), with
 * *err_index its element; and integer pairs numpy promotes to float64 (uint64 with a signed type)
 * are summed exactly in modular arithmetic, as every other integer pair is (numpy loses the low
 * bits above 2^53), so data numcodecs wrote reads back as written. */
#ifndef ZARRBOLT_DELTA_H
#define ZARRBOLT_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameter block of the fused-plan steps: the ZB_T_* codes of D (decoded) and A (encoded). */
typedef struct {
  int32_t dtype;
  int32_t astype;
} zb_delta_params;

/* 1 when the pair is supported (both integer or float16/32/64 types), else 0. */
int zb_delta_supported(int dtype, int astype);
/* n elements of type dtype at src -> n elements of type astype at dst.  ZB_EINVAL for an
 * unsupported pair; ZB_ERANGE (*err_index set) for a float not representable in an integer A. */
zb_status zb_delta_encode(const void *src, int dtype, void *dst, int astype, size_t n, size_t *err_index);
/* n elements of type astype at src -> n elements of type dtype at dst (the running sum). */
zb_status zb_delta_decode(const void *src, int astype, void *dst, int dtype, size_t n, size_t *err_index);
/* The fused-plan array-kernel steps ("zarrbolt.aa_fn"): params is a zb_delta_params; encode reads
 * D elements from src and writes A elements to dst, decode the reverse. */
zb_status zb_delta_encode_step(const void *params, const void *src, void *dst, size_t nelem);
zb_status zb_delta_decode_step(const void *params, const void *src, void *dst, size_t nelem);

#ifdef __cplusplus
}
#endif
#endif
