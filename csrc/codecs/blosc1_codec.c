/* Blosc encoding with c-blosc 1.x.  Its chunk format (version 2, 16-byte header) is the one every
 * Zarr reader understands; c-blosc2 writes a format c-blosc 1.x readers reject (DESIGN.md), so
 * zarrbolt writes with this library and reads with c-blosc2 (blosc2_codec.c).
 * Only blosc_compress_ctx is used: no global context, no environment variables, one thread. */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <blosc.h>

#include "zarrbolt/codecs.h"

static const char *const KNOWN[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy"};

int zb_blosc1_known_cname(const char *cname) {
  if (cname == NULL) return 0;
  for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
    if (strcmp(cname, KNOWN[i]) == 0) return 1;
  return 0;
}

size_t zb_blosc1_max_input(void) { return (size_t)BLOSC_MAX_BUFFERSIZE; }

zb_status zb_blosc1_compress(const void *src, size_t n, void *dst, size_t cap, int clevel, int shuffle,
                             size_t typesize, const char *cname, size_t blocksize, size_t *out_n) {
  if ((src == NULL && n) || dst == NULL || out_n == NULL) return ZB_EINVAL;
  *out_n = 0;
  if (!zb_blosc1_known_cname(cname)) return ZB_EINVAL;
  if (clevel < 0 || clevel > 9 || shuffle < 0 || shuffle > 2 || typesize < 1) return ZB_EINVAL;
  if (blocksize > (size_t)INT_MAX) return ZB_EINVAL;
  /* blosc_compname_to_compcode is a pure lookup (no global state); -1: not compiled in. */
  if (blosc_compname_to_compcode(cname) < 0) return ZB_EUNSUPPORTED;
  if (n > (size_t)BLOSC_MAX_BUFFERSIZE) return ZB_EUNSUPPORTED;
  if (cap < ZB_BLOSC_MAX_OVERHEAD) return ZB_ETOOSMALL;
  /* The header keeps typesize in one byte; c-blosc itself falls back to 1 above 255. */
  if (typesize > ZB_BLOSC_MAX_TYPESIZE) typesize = 1;
  /* c-blosc cannot write to a destination larger than INT_MAX; n + 16 always suffices. */
  size_t destsize = cap;
  if (destsize > (size_t)INT_MAX) destsize = (size_t)INT_MAX;
  char empty = 0;
  int r = blosc_compress_ctx(clevel, shuffle, typesize, n, n ? src : (const void *)&empty, dst, destsize,
                             cname, blocksize, 1);
  if (r == 0) return ZB_ETOOSMALL; /* did not fit into cap (only possible when cap < n + 16) */
  if (r < 0) return ZB_EINVAL;
  *out_n = (size_t)r;
  return ZB_OK;
}

const char *zb_blosc1_version(void) { return BLOSC_VERSION_STRING; }
const char *zb_blosc1_compressors(void) { return blosc_list_compressors(); }

zb_status zb_blosc1_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                size_t *out_n) {
  if (params == NULL) return ZB_EINVAL;
  zb_blosc1_params p;
  memcpy(&p, params, sizeof p);
  p.cname[sizeof p.cname - 1] = 0;
  /* c-blosc stores a chunk uncompressed (memcpyed) only when its compressed form does not fit the
   * destination: n + 16 bytes, as in every other caller, gives the same chunks as theirs. */
  if (n <= SIZE_MAX - ZB_BLOSC_MAX_OVERHEAD && cap > n + ZB_BLOSC_MAX_OVERHEAD) cap = n + ZB_BLOSC_MAX_OVERHEAD;
  return zb_blosc1_compress(src, n, dst, cap, p.clevel, p.shuffle, p.typesize, p.cname, p.blocksize, out_n);
}

#if defined(ZB_BLOSC1_ZSTD_REUSE)
/* ----------------------------------------------------------------------------------------
 * c-blosc 1.x compresses every block of a zstd chunk with ZSTD_compress, which makes a context on
 * the stack, detects the CPU (cpuid: a trap to the hypervisor on a virtual machine), allocates
 * and clears the match tables, and frees them again: 5-10 % of the CPU of a blosc-zstd write of
 * 64^3 uint16 chunks on a virtual machine.  Where the linker can redirect a library's calls (GNU ld / lld
 * --wrap=ZSTD_compress, set by CMakeLists.txt) they come here instead, and each thread compresses
 * with a context it keeps, from the same zstd that c-blosc links: the same parameters for the same
 * level and size, so the same bytes (zstd's output does not depend on a context's history). */
#include "zarrbolt/thread.h"

/* zstd's stable API, declared here: the definitions are those linked into c-blosc. */
typedef struct ZSTD_CCtx_s ZSTD_CCtx;
ZSTD_CCtx *ZSTD_createCCtx(void);
size_t ZSTD_freeCCtx(ZSTD_CCtx *cctx);
size_t ZSTD_sizeof_CCtx(const ZSTD_CCtx *cctx);
size_t ZSTD_compressCCtx(ZSTD_CCtx *cctx, void *dst, size_t cap, const void *src, size_t n, int level);
size_t __real_ZSTD_compress(void *dst, size_t cap, const void *src, size_t n, int level);
size_t __wrap_ZSTD_compress(void *dst, size_t cap, const void *src, size_t n, int level);

/* A context grown past this (high levels on large blocks) is freed after its call. */
#define ZB_BLOSC1_KEEP_CCTX_MAX ((size_t)16 << 20)

static void cctx_free(void *p) { ZSTD_freeCCtx((ZSTD_CCtx *)p); }

ZB_TLS_SLOT(cctx_slot, cctx_free)

size_t __wrap_ZSTD_compress(void *dst, size_t cap, const void *src, size_t n, int level) {
  ZSTD_CCtx *c = (ZSTD_CCtx *)cctx_slot_get();
  if (c == NULL) {
    c = ZSTD_createCCtx();
    if (c == NULL) return __real_ZSTD_compress(dst, cap, src, n, level);
    if (!cctx_slot_set(c)) { /* no slot on this platform / thread: one context per call */
      size_t r = ZSTD_compressCCtx(c, dst, cap, src, n, level);
      ZSTD_freeCCtx(c);
      return r;
    }
  }
  size_t r = ZSTD_compressCCtx(c, dst, cap, src, n, level);
  if (ZSTD_sizeof_CCtx(c) > ZB_BLOSC1_KEEP_CCTX_MAX) {
    cctx_slot_set(NULL);
    ZSTD_freeCCtx(c);
  }
  return r;
}

int zb_blosc1_zstd_reuse(void) { return 1; }
#else
int zb_blosc1_zstd_reuse(void) { return 0; }
#endif
