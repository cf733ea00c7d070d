/* Fused chunk decode (see zarrbolt/decode.h). */
#include "zarrbolt/decode.h"

#include <stdlib.h>
#include <string.h>

#include "zarrbolt/crc32c.h"
#include "zarrbolt/numeric.h"
#include "zarrbolt/strided.h"

void zb_byteswap_inplace(uint8_t *p, size_t nbytes, size_t itemsize) {
    size_t n = nbytes / itemsize;
    switch (itemsize) {
    case 2:
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            v = (uint16_t)((v >> 8) | (v << 8));
            memcpy(p + 2 * i, &v, 2);
        }
        return;
    case 4:
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            v = ((v & 0xFF000000u) >> 24) | ((v & 0x00FF0000u) >> 8) | ((v & 0x0000FF00u) << 8) | (v << 24);
            memcpy(p + 4 * i, &v, 4);
        }
        return;
    case 8:
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            v = ((v & 0xFF00000000000000ull) >> 56) | ((v & 0x00FF000000000000ull) >> 40) |
                ((v & 0x0000FF0000000000ull) >> 24) | ((v & 0x000000FF00000000ull) >> 8) |
                ((v & 0x00000000FF000000ull) << 8) | ((v & 0x0000000000FF0000ull) << 24) |
                ((v & 0x000000000000FF00ull) << 40) | (v << 56);
            memcpy(p + 8 * i, &v, 8);
        }
        return;
    default:
        for (size_t i = 0; i < n; i++) {
            uint8_t *e = p + itemsize * i;
            for (size_t a = 0, b = itemsize - 1; a < b; a++, b--) {
                uint8_t t = e[a];
                e[a] = e[b];
                e[b] = t;
            }
        }
    }
}

/* Strides (bytes) of the stored chunk, indexed by decoded dimension. */
static void source_strides(const zb_plan *plan, int64_t *dec_strides) {
    int nd = plan->ndim;
    int64_t enc_shape[ZB_PLAN_MAXDIM], enc_strides[ZB_PLAN_MAXDIM];
    for (int i = 0; i < nd; i++) enc_shape[i] = plan->transposed ? plan->chunk_shape[plan->perm[i]] : plan->chunk_shape[i];
    int64_t s = (int64_t)plan->itemsize;
    for (int i = nd - 1; i >= 0; i--) {
        enc_strides[i] = s;
        s *= enc_shape[i];
    }
    for (int i = 0; i < nd; i++) {
        if (plan->transposed)
            dec_strides[plan->perm[i]] = enc_strides[i];
        else
            dec_strides[i] = enc_strides[i];
    }
}

/* True when the whole chunk lands in one C-contiguous run of the output. */
static int direct_target(const zb_plan *plan, const zb_decode_task *t, const int64_t *out_strides) {
    if (plan->transposed || plan->byteswap || plan->naa || plan->elem.kind != ZB_ELEM_NONE) return 0;
    int64_t expect = (int64_t)plan->itemsize;
    for (int d = plan->ndim - 1; d >= 0; d--) {
        if (t->chunk_start[d] != 0 || t->shape[d] != plan->chunk_shape[d]) return 0;
        if (plan->chunk_shape[d] != 1 && out_strides[d] != expect) return 0;
        expect *= plan->chunk_shape[d];
    }
    return 1;
}

/* Elementwise decode steps over n contiguous stored elements at src into dst. */
static zb_status elem_convert(const zb_elem *e, const uint8_t *src, uint8_t *dst, size_t n) {
    size_t bad = 0;
    switch (e->kind) {
    case ZB_ELEM_CAST: return zb_cast_value(src, e->src_type, dst, e->dst_type, n, &e->opts, &bad);
    case ZB_ELEM_SCALE_OFFSET: return zb_scale_offset_decode(src, dst, e->dst_type, n, e->offset, e->scale, &bad);
    case ZB_ELEM_CAST_SCALE_OFFSET:
        return zb_cast_scale_offset_decode(src, e->src_type, dst, e->dst_type, n, e->offset, e->scale, &e->opts, &bad);
    default: return ZB_EINVAL;
    }
}

typedef zb_copy_group copy_group; /* see zarrbolt/decode.h */

static int g_fused_convert = 1;

int zb_plan_set_fused_convert(int on) {
    int old = g_fused_convert;
    g_fused_convert = on != 0;
    return old;
}

static void group_init(copy_group *q, const zb_scratch *sc, const zb_plan *plan) {
    memset(q, 0, sizeof *q);
    q->sc = sc;
    const zb_elem *e = &plan->elem;
    if (g_fused_convert && e->kind == ZB_ELEM_CAST_SCALE_OFFSET &&
        zb_cso_fast_init(e->src_type, e->dst_type, e->offset, e->scale, &e->opts, &q->cso_store))
        q->cso_plan = &q->cso_store;
}

/* Slot s's first buffer, and its second: the first buffers of all slots come one after another,
 * then the second ones (see zb_scratch). */
static uint8_t *slot_buffer(const zb_scratch *sc, int slot) { return sc->base + (size_t)slot * sc->cap; }
static uint8_t *slot_other(const zb_scratch *sc, int slot) {
    return sc->base + ((size_t)sc->nslots + (size_t)slot) * sc->cap;
}

/* Copy with the one-pass numeric conversion: dst[i] = f(src[i]) over shape, whose last
 * dimension is contiguous in both (callers check).  The other dimensions are walked with the
 * smallest destination stride innermost.  Where that one continues the rows in dst (a group of
 * chunks: one more dimension, a row's length apart), the rows it joins are converted into a small
 * buffer and written from there as one run, streamed like zb_strided_copy_ex's long runs. */
#define CONVERT_TMP 16384
static void convert_copy(uint8_t *dst, const int64_t *dst_strides, const uint8_t *src, const int64_t *src_strides,
                         const int64_t *shape, int ndim, size_t di, unsigned flags, const zb_cso_fast *cso) {
    for (int d = 0; d < ndim; d++)
        if (shape[d] <= 0) return;
    if (ndim == 0) {
        zb_cso_fast_run(cso, src, (float *)dst, 1);
        return;
    }
    int order[ZB_STRIDED_MAXDIM + 1], no = ndim - 1;
    for (int d = 0; d < no; d++) { /* outer dimensions by destination stride, largest first */
        int j = d;
        for (; j > 0 && dst_strides[order[j - 1]] < dst_strides[d]; j--) order[j] = order[j - 1];
        order[j] = d;
    }
    const size_t len = (size_t)shape[ndim - 1], row = len * di;
    /* rows joined: the innermost outer dimension when it continues the row in dst */
    size_t join = 1;
    int64_t join_ss = 0;
    if (no > 0 && dst_strides[order[no - 1]] == (int64_t)row && row <= CONVERT_TMP) {
        join = (size_t)shape[order[no - 1]];
        join_ss = src_strides[order[no - 1]];
        no--;
    }
    size_t per = CONVERT_TMP / row; /* rows per buffer-full */
    float tmp[CONVERT_TMP / sizeof(float)];
    int stream = (flags & ZB_COPY_STREAM) != 0 && join * row >= ZB_STREAM_MIN_RUN;
    int64_t idx[ZB_STRIDED_MAXDIM + 1];
    for (int i = 0; i < no; i++) idx[i] = 0;
    for (;;) {
        if (join == 1) {
            zb_cso_fast_run(cso, src, (float *)dst, len);
        } else {
            for (size_t r0 = 0; r0 < join; r0 += per) {
                size_t nr = join - r0 < per ? join - r0 : per;
                for (size_t r = 0; r < nr; r++)
                    zb_cso_fast_run(cso, src + (int64_t)(r0 + r) * join_ss, tmp + r * len, len);
                zb_copy_row(dst + r0 * row, tmp, nr * row, stream);
            }
        }
        int i = no - 1;
        for (; i >= 0; i--) {
            int d = order[i];
            if (++idx[i] < shape[d]) {
                src += src_strides[d];
                dst += dst_strides[d];
                break;
            }
            src -= src_strides[d] * (shape[d] - 1);
            dst -= dst_strides[d] * (shape[d] - 1);
            idx[i] = 0;
        }
        if (i < 0) break;
    }
    if (stream) zb_copy_fence();
}

/* One (grouped) copy: converting (q->cso) or plain. */
static zb_status copy_or_convert(uint8_t *dst, const int64_t *dst_strides, const uint8_t *src,
                                 const int64_t *src_strides, const int64_t *shape, int ndim, size_t itemsize,
                                 unsigned flags, const zb_cso_fast *cso) {
    if (cso == NULL) return zb_strided_copy_ex(dst, dst_strides, src, src_strides, shape, ndim, itemsize, flags);
    convert_copy(dst, dst_strides, src, src_strides, shape, ndim, itemsize, flags, cso);
    return ZB_OK;
}

static zb_status group_flush(copy_group *q) {
    if (q->n == 0) return ZB_OK;
    zb_status st;
    if (q->n == 1) {
        st = copy_or_convert(q->dst0, q->dst_strides, q->src0, q->src_strides, q->shape, q->ndim, q->itemsize,
                             q->flags, q->cso);
    } else {
        int64_t shape[ZB_PLAN_MAXDIM + 1], ds[ZB_PLAN_MAXDIM + 1], ss[ZB_PLAN_MAXDIM + 1];
        shape[0] = q->n;
        ds[0] = (int64_t)q->ddst;
        ss[0] = (int64_t)q->dsrc;
        for (int d = 0; d < q->ndim; d++) {
            shape[d + 1] = q->shape[d];
            ds[d + 1] = q->dst_strides[d];
            ss[d + 1] = q->src_strides[d];
        }
        st = copy_or_convert(q->dst0, ds, q->src0, ss, shape, q->ndim + 1, q->itemsize, q->flags, q->cso);
    }
    q->n = 0;
    return st;
}

static int same_shape(const copy_group *q, int ndim, size_t itemsize, unsigned flags, const int64_t *shape,
                      const int64_t *dst_strides) {
    if (q->ndim != ndim || q->itemsize != itemsize || q->flags != flags) return 0;
    for (int d = 0; d < ndim; d++)
        if (q->shape[d] != shape[d] || q->dst_strides[d] != dst_strides[d]) return 0;
    return 1;
}

/* Whether a copy to dst would continue the pending group (its source not yet known). */
static int group_continues(const copy_group *q, const uint8_t *dst, int ndim, size_t itemsize, unsigned flags,
                           const int64_t *shape, const int64_t *dst_strides) {
    if (q->n == 0 || q->slot0 + q->n >= q->sc->nslots) return 0;
    if (!same_shape(q, ndim, itemsize, flags, shape, dst_strides)) return 0;
    if (q->n == 1) return dst != q->dst0;
    return dst == q->dst0 + (ptrdiff_t)q->n * q->ddst;
}

/* The slot the next chunk decodes into (its copy to dst may join the group); flushes the
 * group when it cannot. */
static zb_status group_next_slot(copy_group *q, const uint8_t *dst, const zb_plan *plan, size_t out_itemsize,
                                 unsigned flags, const int64_t *shape, const int64_t *out_strides, int *slot) {
    if (q->sc->nslots > 1 && group_continues(q, dst, plan->ndim, out_itemsize, flags, shape, out_strides)) {
        *slot = q->slot0 + q->n;
        return ZB_OK;
    }
    *slot = 0;
    return group_flush(q);
}

/* Copy src (in scratch slot `slot`, or elsewhere) to dst now or as part of the group; cso: not
 * NULL to convert (itemsize is then the destination's). */
static zb_status group_copy(copy_group *q, int slot, uint8_t *dst, const int64_t *dst_strides, const uint8_t *src,
                            const int64_t *src_strides, const int64_t *shape, int ndim, size_t itemsize,
                            unsigned flags, const zb_cso_fast *cso) {
    const zb_scratch *sc = q->sc;
    const uint8_t *a = slot_buffer(sc, slot), *b = slot_other(sc, slot);
    int in_slot = (src >= a && src < a + sc->cap) || (src >= b && src < b + sc->cap);
    if (sc->nslots <= 1 || !in_slot || ndim + 1 > ZB_STRIDED_MAXDIM) {
        zb_status st = group_flush(q);
        if (st != ZB_OK) return st;
        return copy_or_convert(dst, dst_strides, src, src_strides, shape, ndim, itemsize, flags, cso);
    }
    if (q->n > 0 && slot == q->slot0 + q->n && q->cso == cso && same_shape(q, ndim, itemsize, flags, shape, dst_strides)) {
        int ok = 1;
        for (int d = 0; d < ndim && ok; d++) ok = q->src_strides[d] == src_strides[d];
        if (ok && q->n == 1) {
            ok = dst != q->dst0 && src != q->src0;
            if (ok) {
                q->ddst = dst - q->dst0;
                q->dsrc = src - q->src0;
            }
        } else if (ok) {
            ok = dst == q->dst0 + (ptrdiff_t)q->n * q->ddst && src == q->src0 + (ptrdiff_t)q->n * q->dsrc;
        }
        if (ok) {
            q->n++;
            return ZB_OK;
        }
    }
    zb_status st = group_flush(q);
    if (st != ZB_OK) return st;
    q->n = 1;
    q->slot0 = slot;
    q->ndim = ndim;
    q->itemsize = itemsize;
    q->flags = flags;
    q->cso = cso;
    q->dst0 = dst;
    q->src0 = src;
    for (int d = 0; d < ndim; d++) {
        q->shape[d] = shape[d];
        q->dst_strides[d] = dst_strides[d];
        q->src_strides[d] = src_strides[d];
    }
    return ZB_OK;
}

/* Copy the region of a decoded chunk (region: its first element, strides in stored-element
 * bytes) into out, through the elementwise steps when the plan has them: the span of stored
 * elements [region, region + span) is converted into conv first (conv_cap bytes), whose layout
 * is the chunk's with the array's item size. */
static zb_status copy_region(const zb_plan *plan, uint8_t *out, const int64_t *out_strides, const uint8_t *region,
                             size_t span, const int64_t *dec_strides, const int64_t *shape, uint8_t *conv,
                             size_t conv_cap, unsigned copy_flags, copy_group *q, int slot) {
    if (plan->elem.kind == ZB_ELEM_NONE)
        return group_copy(q, slot, out, out_strides, region, dec_strides, shape, plan->ndim, plan->itemsize, copy_flags,
                          NULL);
    size_t si = plan->itemsize, di = plan->elem.dst_itemsize;
    const zb_cso_fast *cso = q->cso_plan;
    int nd = plan->ndim;
    if (cso != NULL && (nd == 0 || (dec_strides[nd - 1] == (int64_t)si && out_strides[nd - 1] == (int64_t)di)))
        /* converted on the way into out: no pass through conv */
        return group_copy(q, slot, out, out_strides, region, dec_strides, shape, nd, di, copy_flags, cso);
    size_t n = span / si;
    if (span % si != 0 || di == 0 || n > conv_cap / di) return ZB_EINVAL;
    zb_status st = elem_convert(&plan->elem, region, conv, n);
    if (st != ZB_OK) return st;
    int64_t conv_strides[ZB_PLAN_MAXDIM];
    for (int d = 0; d < plan->ndim; d++) conv_strides[d] = dec_strides[d] / (int64_t)si * (int64_t)di;
    return group_copy(q, slot, out, out_strides, conv, conv_strides, shape, plan->ndim, di, copy_flags, NULL);
}

/* Least number of decoded bytes a prefix decode must leave out to be used. */
#define PREFIX_MIN_SAVED (128 * 1024)

/* Decode only the part of a chunk that holds its bytes [first, last), when the plan can and it
 * saves work: *region = where byte `first` landed in dst, or NULL (nothing done) when the whole
 * chunk is to be decoded instead. */
static zb_status decode_part(const zb_plan *plan, const zb_decode_task *t, size_t first, size_t last, uint8_t *dst,
                             size_t cap, const uint8_t **region) {
    *region = NULL;
    size_t whole = plan->chunk_nbytes;
    if (last - first >= whole) return ZB_OK;
    if (plan->getitem && plan->sizes) {
        size_t nbytes = 0, cbytes = 0, bsize = 0, ts = 0;
        int in_block = 0;
        zb_status st = plan->sizes(t->src, t->n, &nbytes, &cbytes, &bsize, &ts, &in_block);
        if (st != ZB_OK) return st;
        if (nbytes != whole || cbytes != t->n) return ZB_ECORRUPT;
        if (ts == 0 || nbytes % ts != 0 || bsize == 0) return ZB_OK;
        /* worth it only when the region's items leave at least one blosc block out, or (when
         * getitem stops inside a block) at least a quarter of the last block they touch */
        size_t i0 = first / ts, i1 = (last + ts - 1) / ts;
        size_t nblocks = (nbytes + bsize - 1) / bsize;
        size_t b0 = i0 * ts / bsize, b1 = (i1 * ts - 1) / bsize;
        size_t b1_end = (b1 + 1) * bsize < nbytes ? (b1 + 1) * bsize : nbytes;
        if (b1 - b0 + 1 >= nblocks && !(in_block && (b1_end - i1 * ts) * 4 >= bsize)) return ZB_OK;
        size_t got = 0;
        st = plan->getitem(t->src, t->n, (int64_t)i0, (int64_t)(i1 - i0), dst, cap, &got);
        if (st != ZB_OK) return st;
        if (got != (i1 - i0) * ts) return ZB_ECORRUPT;
        *region = dst + (first - i0 * ts);
        return ZB_OK;
    }
    if (plan->prefix && whole - last >= PREFIX_MIN_SAVED) {
        if (cap < whole) return ZB_EINVAL;
        size_t got = 0;
        zb_status st = plan->prefix(t->src, t->n, dst, whole, last, &got);
        if (st != ZB_OK) return st;
        if (got != last && got != whole) return ZB_ECORRUPT;
        *region = dst + first;
    }
    return ZB_OK;
}

/* The bytes->bytes steps of a chunk, last to first: *data / *n = the stored chunk's bytes, at
 * target (not NULL: the output, which the last transform writes directly), in one of the two
 * scratch buffers, or at t->src itself (in-place steps only read when decoding). */
static zb_status run_steps(const zb_plan *plan, const zb_decode_task *t, uint8_t *target, uint8_t *scratch_a,
                           uint8_t *scratch_b, size_t scratch_cap, const uint8_t **data, size_t *n) {
    const uint8_t *cur = t->src;
    size_t len = t->n;
    uint8_t *bufs[2] = {scratch_a, scratch_b};
    int which = 0;
    for (int s = plan->nsteps - 1; s >= 0; s--) {
        const zb_step *step = &plan->steps[s];
        size_t outn = 0;
        zb_status st;
        if (step->kind == ZB_STEP_INPLACE && step->inplace != NULL) {
            st = step->inplace(step->params, (uint8_t *)cur, len, len, &outn);
            if (st == ZB_OK && outn > len) st = ZB_EINVAL;
        } else if (step->kind == ZB_STEP_TRANSFORM && step->fn != NULL) {
            int final = (s == 0); /* the first codec's decoded output is the stored chunk itself */
            uint8_t *dst = (final && target) ? target : bufs[which];
            size_t cap = final ? plan->chunk_nbytes : scratch_cap;
            if (cap > scratch_cap && dst != target) return ZB_EINVAL;
            st = step->fn(step->params, cur, len, dst, cap, &outn);
            cur = dst;
            which ^= 1;
        } else {
            return ZB_EINVAL;
        }
        if (st != ZB_OK) return st;
        len = outn;
    }
    *data = cur;
    *n = len;
    return ZB_OK;
}

/* The array kernels, last to first, over the whole stored chunk at *data (chunk_nbytes bytes,
 * in scratch_a or scratch_b after the byte swap, or elsewhere): *data = their output, in one of
 * the scratch buffers (in place where the item sizes allow). */
static zb_status run_kernels(const zb_plan *plan, const uint8_t **data, uint8_t *scratch_a, uint8_t *scratch_b,
                             size_t scratch_cap) {
    size_t nelem = 1;
    for (int d = 0; d < plan->ndim; d++) nelem *= (size_t)plan->chunk_shape[d];
    const uint8_t *cur = *data;
    for (int k = plan->naa - 1; k >= 0; k--) {
        const zb_aa_stage *a = &plan->aa[k];
        int own = cur == scratch_a || cur == scratch_b;
        uint8_t *dst = (own && a->enc_itemsize == a->dec_itemsize) ? (uint8_t *)cur
                                                                  : (cur == scratch_a ? scratch_b : scratch_a);
        if (nelem && a->dec_itemsize > scratch_cap / nelem) return ZB_EINVAL;
        zb_status st = a->fn(a->params, cur, dst, nelem);
        if (st != ZB_OK) return st;
        cur = dst;
    }
    *data = cur;
    return ZB_OK;
}

static zb_status decode_one(const zb_plan *plan, const zb_decode_task *t, uint8_t *out, const int64_t *out_strides,
                            const int64_t *dec_strides, copy_group *q, unsigned copy_flags) {
    for (int d = 0; d < plan->ndim; d++) {
        if (t->shape[d] < 0 || t->chunk_start[d] < 0 || t->chunk_start[d] + t->shape[d] > plan->chunk_shape[d])
            return ZB_EINVAL;
        if (t->shape[d] == 0) return ZB_OK;
    }
    const size_t out_itemsize = plan->elem.kind == ZB_ELEM_NONE ? plan->itemsize : plan->elem.dst_itemsize;
    int slot = 0;
    zb_status st = group_next_slot(q, out + t->out_offset, plan, out_itemsize, copy_flags, t->shape, out_strides,
                                   &slot);
    if (st != ZB_OK) return st;
    const size_t scratch_cap = q->sc->cap;
    uint8_t *scratch_a = slot_buffer(q->sc, slot), *scratch_b = slot_other(q->sc, slot);
    if ((plan->getitem || plan->prefix) && plan->nsteps == 1 && plan->naa == 0) {
        /* The byte span [first, last) of the region inside the stored (C-order, possibly
         * transposed) chunk: all dec_strides are positive. */
        int64_t first = 0, last = 0;
        for (int d = 0; d < plan->ndim; d++) {
            first += t->chunk_start[d] * dec_strides[d];
            last += (t->chunk_start[d] + t->shape[d] - 1) * dec_strides[d];
        }
        last += (int64_t)plan->itemsize;
        const uint8_t *region = NULL;
        st = decode_part(plan, t, (size_t)first, (size_t)last, scratch_a, scratch_cap, &region);
        if (st != ZB_OK) return st;
        if (region != NULL) {
            if (plan->byteswap) zb_byteswap_inplace((uint8_t *)region, (size_t)(last - first), (size_t)plan->byteswap);
            return copy_region(plan, out + t->out_offset, out_strides, region, (size_t)(last - first), dec_strides,
                               t->shape, scratch_b, scratch_cap, copy_flags, q, slot);
        }
    }
    const uint8_t *data = NULL;
    size_t n = 0;
    int direct = direct_target(plan, t, out_strides);
    uint8_t *target = out + t->out_offset;
    st = run_steps(plan, t, direct ? target : NULL, scratch_a, scratch_b, scratch_cap, &data, &n);
    if (st != ZB_OK) return st;
    if (n != plan->chunk_nbytes) return ZB_ECORRUPT;
    if (data == target) return ZB_OK;
    if (plan->byteswap) {
        if (data != scratch_a && data != scratch_b) {
            if (scratch_cap < n) return ZB_EINVAL;
            memcpy(scratch_a, data, n);
            data = scratch_a;
        }
        zb_byteswap_inplace((uint8_t *)data, n, (size_t)plan->byteswap);
    }
    if (plan->naa) {
        st = run_kernels(plan, &data, scratch_a, scratch_b, scratch_cap);
        if (st != ZB_OK) return st;
    }
    const uint8_t *src = data;
    for (int d = 0; d < plan->ndim; d++) src += t->chunk_start[d] * dec_strides[d];
    if (plan->elem.kind == ZB_ELEM_NONE)
        return group_copy(q, slot, target, out_strides, src, dec_strides, t->shape, plan->ndim, plan->itemsize,
                          copy_flags, NULL);
    /* convert the stored elements from the region's first to its last (dec_strides are all
     * positive: the first element is the lowest address) */
    int64_t span = (int64_t)plan->itemsize;
    for (int d = 0; d < plan->ndim; d++) span += (t->shape[d] - 1) * dec_strides[d];
    uint8_t *conv = (data == scratch_a) ? scratch_b : scratch_a;
    return copy_region(plan, target, out_strides, src, (size_t)span, dec_strides, t->shape, conv, scratch_cap,
                       copy_flags, q, slot);
}

zb_status zb_plan_check(const zb_plan *plan, const zb_scratch *scratch) {
    if (!plan || plan->ndim < 0 || plan->ndim > ZB_PLAN_MAXDIM || plan->itemsize == 0 || plan->nsteps < 0 ||
        plan->nsteps > ZB_PLAN_MAXSTEPS)
        return ZB_EINVAL;
    if (!scratch || !scratch->base || scratch->nslots < 1 || scratch->cap < plan->chunk_nbytes) return ZB_EINVAL;
    for (int s = 0; s < plan->nsteps; s++) {
        const zb_step *st = &plan->steps[s];
        if (st->kind == ZB_STEP_TRANSFORM ? st->fn == NULL : (st->kind != ZB_STEP_INPLACE || st->inplace == NULL))
            return ZB_EINVAL;
    }
    if (plan->naa < 0 || plan->naa > ZB_PLAN_MAXKERNELS) return ZB_EINVAL;
    if (plan->naa) {
        size_t nelem = 1, cap = scratch->cap, sz = plan->itemsize;
        for (int d = 0; d < plan->ndim; d++) nelem *= (size_t)plan->chunk_shape[d];
        for (int k = 0; k < plan->naa; k++) { /* chain order: each kernel's decoded side feeds the one before */
            const zb_aa_stage *a = &plan->aa[k];
            if (!a->fn || a->dec_itemsize != sz || !a->enc_itemsize) return ZB_EINVAL;
            if (nelem && (a->dec_itemsize > cap / nelem || a->enc_itemsize > cap / nelem)) return ZB_EINVAL;
            sz = a->enc_itemsize;
        }
        if (nelem && sz > SIZE_MAX / nelem) return ZB_EINVAL;
        if (sz * nelem != plan->chunk_nbytes) return ZB_EINVAL;
    }
    return ZB_OK;
}

zb_status zb_decoder_init(zb_decoder *d, const zb_plan *plan, const zb_scratch *scratch, uint8_t *out,
                          const int64_t *out_strides, unsigned copy_flags) {
    if (zb_plan_check(plan, scratch) != ZB_OK || (plan->ndim && !out_strides)) return ZB_EINVAL;
    d->plan = plan;
    d->scratch = *scratch;
    d->out = out;
    d->out_strides = out_strides;
    d->copy_flags = copy_flags;
    source_strides(plan, d->dec_strides);
    group_init(&d->group, &d->scratch, plan);
    return ZB_OK;
}

zb_status zb_decoder_put(zb_decoder *d, const zb_decode_task *t) {
    return decode_one(d->plan, t, d->out, d->out_strides, d->dec_strides, &d->group, d->copy_flags);
}

zb_status zb_decoder_finish(zb_decoder *d) { return group_flush(&d->group); }

zb_status zb_plan_decode(const zb_plan *plan, const zb_decode_task *tasks, size_t ntasks, uint8_t *out,
                         const int64_t *out_strides, const zb_scratch *scratch, unsigned copy_flags, size_t *failed) {
    zb_decoder d;
    zb_status st = zb_decoder_init(&d, plan, scratch, out, out_strides, copy_flags);
    if (st != ZB_OK || (!tasks && ntasks)) return ZB_EINVAL;
    for (size_t i = 0; i < ntasks; i++) {
        st = zb_decoder_put(&d, &tasks[i]);
        if (st != ZB_OK) {
            if (failed) *failed = i;
            return st;
        }
    }
    st = zb_decoder_finish(&d);
    if (st != ZB_OK && failed) *failed = ntasks ? ntasks - 1 : 0;
    return st;
}
