/* Blosc decoding with c-blosc2, which reads the c-blosc 1.x chunk format that zarrbolt (and every
 * other Zarr implementation) writes, and is faster and better fuzzed than c-blosc 1.x's decoder.
 *
 * Untrusted chunks are checked here before c-blosc2 sees them:
 *  - the 16-byte header must be present and its sizes consistent with the buffer, so callers can
 *    size their output from it without trusting it blindly;
 *  - only the c-blosc 1.x layout is accepted.  c-blosc2's extended header (flags with both shuffle
 *    bits set) can name plugin codecs and filters that c-blosc2 loads dynamically (dlopen, even a
 *    `python -c` probe), lazy chunks and special-value chunks; none of that is part of the Zarr
 *    `blosc` codec, and no Zarr reader but c-blosc2 could read such chunks anyway.
 * Only context functions are called (blosc2_create_dctx / blosc2_decompress_ctx /
 * blosc2_getitem_ctx with one thread), so calls run concurrently without locks.  Each thread
 * keeps one decompression context (thread-specific storage, freed when the thread exits): a
 * context owns c-blosc2's block buffers, and making a new one per chunk costs an allocation and
 * fresh pages for every chunk.  A context that saw an error is dropped, never reused. */
#include <limits.h>
#include <string.h>
#include <blosc2.h>
#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#else
#  include <pthread.h>
#endif

#include "zarrbolt/codecs.h"

#define HDR_FLAGS_SHUFFLE 0x01
#define HDR_FLAGS_MEMCPYED 0x02
#define HDR_FLAGS_BITSHUFFLE 0x04
#define HDR_MAX_COMPFORMAT 4 /* blosclz, lz4(hc), snappy, zlib, zstd */

static int32_t rd_i32le(const unsigned char *p) {
  uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  return (int32_t)v;
}

typedef struct {
  int32_t nbytes, blocksize, cbytes;
  int typesize, flags;
} hdr_t;

static zb_status parse_header(const void *src, size_t n, hdr_t *h) {
  if (src == NULL && n) return ZB_EINVAL;
  if (n < ZB_BLOSC_HEADER) return ZB_ETOOSMALL;
  const unsigned char *p = (const unsigned char *)src;
  int version = p[0];
  h->flags = p[2];
  h->typesize = p[3];
  h->nbytes = rd_i32le(p + 4);
  h->blocksize = rd_i32le(p + 8);
  h->cbytes = rd_i32le(p + 12);
  if (version < 1 || version > BLOSC2_VERSION_FORMAT) return ZB_ECORRUPT;
  if ((h->flags & (HDR_FLAGS_SHUFFLE | HDR_FLAGS_BITSHUFFLE)) == (HDR_FLAGS_SHUFFLE | HDR_FLAGS_BITSHUFFLE))
    return ZB_EUNSUPPORTED; /* c-blosc2 extended header: not the Zarr blosc format */
  if ((h->flags >> 5) > HDR_MAX_COMPFORMAT) return ZB_ECORRUPT;
  if (h->nbytes < 0 || h->blocksize < 0 || h->cbytes < ZB_BLOSC_HEADER) return ZB_ECORRUPT;
  if (h->nbytes > INT_MAX - BLOSC2_MAX_OVERHEAD) return ZB_ECORRUPT;
  if ((size_t)h->cbytes > n) return ZB_ETOOSMALL;
  if (h->nbytes > 0 && h->blocksize == 0) return ZB_ECORRUPT;
  if ((h->flags & HDR_FLAGS_MEMCPYED) && h->cbytes != h->nbytes + ZB_BLOSC_HEADER) return ZB_ECORRUPT;
  return ZB_OK;
}

zb_status zb_blosc2_cbuffer_sizes(const void *src, size_t n, size_t *nbytes, size_t *cbytes,
                                  size_t *blocksize, size_t *typesize) {
  hdr_t h;
  zb_status st = parse_header(src, n, &h);
  if (st != ZB_OK) return st;
  if (nbytes) *nbytes = (size_t)h.nbytes;
  if (cbytes) *cbytes = (size_t)h.cbytes;
  if (blocksize) *blocksize = (size_t)h.blocksize;
  if (typesize) *typesize = (size_t)h.typesize;
  return ZB_OK;
}

static blosc2_context *new_dctx(void) {
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  return blosc2_create_dctx(dp);
}

#if defined(_WIN32)
static DWORD g_tls = FLS_OUT_OF_INDEXES;
static INIT_ONCE g_tls_once = INIT_ONCE_STATIC_INIT;
static VOID WINAPI ctx_release(PVOID p) {
  if (p) blosc2_free_ctx((blosc2_context *)p);
}
static BOOL CALLBACK tls_init(PINIT_ONCE once, PVOID param, PVOID *c) {
  (void)once;
  (void)param;
  (void)c;
  g_tls = FlsAlloc(ctx_release);
  return TRUE;
}
static blosc2_context *tls_get(void) {
  InitOnceExecuteOnce(&g_tls_once, tls_init, NULL, NULL);
  return g_tls == FLS_OUT_OF_INDEXES ? NULL : (blosc2_context *)FlsGetValue(g_tls);
}
static int tls_set(blosc2_context *c) {
  return g_tls != FLS_OUT_OF_INDEXES && FlsSetValue(g_tls, c);
}
#else
static pthread_key_t g_tls;
static int g_tls_ok;
static pthread_once_t g_tls_once = PTHREAD_ONCE_INIT;
static void ctx_release(void *p) {
  if (p) blosc2_free_ctx((blosc2_context *)p);
}
static void tls_init(void) { g_tls_ok = pthread_key_create(&g_tls, ctx_release) == 0; }
static blosc2_context *tls_get(void) {
  pthread_once(&g_tls_once, tls_init);
  return g_tls_ok ? (blosc2_context *)pthread_getspecific(g_tls) : NULL;
}
static int tls_set(blosc2_context *c) { return g_tls_ok && pthread_setspecific(g_tls, c) == 0; }
#endif

/* This thread's context (created on first use), or NULL when out of memory. */
static blosc2_context *acquire_dctx(void) {
  blosc2_context *c = tls_get();
  if (c) return c;
  c = new_dctx();
  if (c) tls_set(c); /* when no slot holds it, release_dctx frees it after the call */
  return c;
}

/* After a call: keep the context for this thread, or free it when the call failed (its state is
 * then unknown) or it could not be stored. */
static void release_dctx(blosc2_context *c, int failed) {
  if (c == NULL) return;
  if (tls_get() != c) {
    blosc2_free_ctx(c);
    return;
  }
  if (failed) {
    tls_set(NULL);
    blosc2_free_ctx(c);
  }
}

zb_status zb_blosc2_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n) {
  if (out_n == NULL || (dst == NULL && cap)) return ZB_EINVAL;
  *out_n = 0;
  hdr_t h;
  zb_status st = parse_header(src, n, &h);
  if (st != ZB_OK) return st;
  /* A stored chunk is exactly one blosc buffer: trailing bytes mean corruption. */
  if ((size_t)h.cbytes != n) return ZB_ECORRUPT;
  if ((size_t)h.nbytes > cap) return ZB_ETOOSMALL;
  if (h.nbytes == 0) return ZB_OK;
  blosc2_context *ctx = acquire_dctx();
  if (ctx == NULL) return ZB_ENOMEM;
  int32_t destsize = cap > (size_t)INT32_MAX ? INT32_MAX : (int32_t)cap;
  int r = blosc2_decompress_ctx(ctx, src, h.cbytes, dst, destsize);
  release_dctx(ctx, r < 0 || r != h.nbytes);
  if (r < 0 || r != h.nbytes) return ZB_ECORRUPT;
  *out_n = (size_t)r;
  return ZB_OK;
}

zb_status zb_blosc2_getitem(const void *src, size_t n, int64_t start, int64_t nitems, void *dst,
                            size_t cap, size_t *out_n) {
  if (out_n == NULL || (dst == NULL && cap)) return ZB_EINVAL;
  *out_n = 0;
  hdr_t h;
  zb_status st = parse_header(src, n, &h);
  if (st != ZB_OK) return st;
  if (h.typesize == 0) return ZB_ECORRUPT;
  if (start < 0 || nitems < 0) return ZB_EINVAL;
  int64_t nitems_total = h.nbytes / h.typesize;
  if (start > nitems_total || nitems > nitems_total - start) return ZB_EINVAL;
  size_t need = (size_t)nitems * (size_t)h.typesize;
  if (cap < need) return ZB_EINVAL;
  if (nitems == 0) return ZB_OK;
  blosc2_context *ctx = acquire_dctx();
  if (ctx == NULL) return ZB_ENOMEM;
  int32_t destsize = cap > (size_t)INT32_MAX ? INT32_MAX : (int32_t)cap;
  int r = blosc2_getitem_ctx(ctx, src, h.cbytes, (int)start, (int)nitems, dst, destsize);
  release_dctx(ctx, r < 0 || (size_t)r != need);
  if (r < 0 || (size_t)r != need) return ZB_ECORRUPT;
  *out_n = (size_t)r;
  return ZB_OK;
}

void zb_blosc2_global_init(void) { blosc2_init(); }

const char *zb_blosc2_version(void) { return BLOSC2_VERSION_STRING; }
