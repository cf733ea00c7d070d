/* Thin, thread-safe wrappers over the compression libraries (zstd, libdeflate, c-blosc 1.x for
 * encoding, c-blosc2 for decoding).  Pointers and sizes in, a zb_status out; no global library
 * state is ever touched, so every function may run concurrently from any number of threads.
 *
 * Size conventions: `cap` is the capacity of `dst`; on success `*out_n` receives the number of
 * bytes written.  A decoder never writes more than `cap` bytes; encoded data that would decode
 * to more than `cap` bytes yields ZB_ETOOSMALL, malformed data ZB_ECORRUPT (and ZB_ECHECKSUM
 * where the format carries a checksum that fails).
 *
 * The implementations live in csrc/codecs/ and are compiled into the extension module that links
 * the library (zstd: _zstd, libdeflate: _deflate, c-blosc 1.x: _blosc1, c-blosc2: _blosc2), never into zbcore,
 * so c-blosc 1.x and c-blosc2 (both bundling zstd and lz4) never meet in one binary.
 *
 * Each codec also has its steps for the fused plans (zarrbolt/stage.h): the *_step functions,
 * with the parameter structs zb_*_params (the opaque parameter blocks its module builds). */
#ifndef ZARRBOLT_CODECS_H
#define ZARRBOLT_CODECS_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/stage.h"
#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------- zstd */
/* Worst-case encoded size of n bytes (0 if n is too large for zstd). */
size_t zb_zstd_compress_bound(size_t n);
/* level 0 = zstd's default; negative levels are the fast modes; values outside zstd's range are
 * clamped.  checksum != 0 appends the frame's XXH64 content checksum.  content_size != 0 records
 * the decoded size in the frame header (always, except to produce test data). */
zb_status zb_zstd_compress(const void *src, size_t n, void *dst, size_t cap, int level, int checksum,
                           int content_size, size_t *out_n);
/* Decoded size of the (possibly concatenated, possibly skippable) frames in src.  *known = 1 and
 * *size = total when every frame records its size; *known = 0 otherwise.  ZB_ECORRUPT if src
 * does not start with a valid frame header. */
zb_status zb_zstd_decoded_size(const void *src, size_t n, uint64_t *size, int *known);
/* Decode every frame of src (concatenated and skippable frames included; frames with or without
 * a recorded content size).  ZB_ETOOSMALL if the output exceeds cap, ZB_ECHECKSUM on a content
 * checksum mismatch, ZB_ECORRUPT otherwise.  Nothing larger than cap is ever allocated. */
zb_status zb_zstd_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n);
/* Decode the first `want` bytes of a zstd buffer whose whole decoded size is cap into dst (room
 * for cap bytes): *out_n = want after decoding only the blocks that hold them (one frame whose
 * header records cap as its size; the frame checksum, if any, is not checked), or cap after a
 * whole zb_zstd_decompress (ZB_ECORRUPT unless it decodes to exactly cap bytes) otherwise. */
zb_status zb_zstd_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                    size_t *out_n);
const char *zb_zstd_version(void);
/* The steps (zarrbolt/stage.h): zb_zstd_compress with zb_zstd_params (content size recorded),
 * zb_zstd_decompress (no parameters). */
typedef struct {
    int level;
    int checksum;
} zb_zstd_params;
zb_status zb_zstd_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);
zb_status zb_zstd_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);

/* ----------------------------------------------------------------------------- gzip (libdeflate) */
size_t zb_gzip_compress_bound(size_t n, int level);
/* RFC 1952 gzip, one member; level 0..12 (0 = stored blocks). */
zb_status zb_gzip_compress(const void *src, size_t n, void *dst, size_t cap, int level, size_t *out_n);
/* Decode one or more concatenated gzip members, each with its CRC-32 and ISIZE checked.  Trailing
 * bytes that are not a complete member are an error (ZB_ECORRUPT).  ZB_ETOOSMALL if the output
 * exceeds cap. */
zb_status zb_gzip_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n);
/* Decode the first `want` bytes of a gzip buffer whose whole decoded size is cap: *out_n = want
 * when only a prefix was decoded (without the CRC-32 check, which needs the whole member), or the
 * whole size cap after a zb_gzip_decompress (ZB_ECORRUPT unless it decodes to exactly cap bytes) when the prefix is most of the buffer, the buffer holds
 * more than one member, or its ISIZE is not cap (mod 2^32).  dst must have room for cap bytes. */
zb_status zb_gzip_decompress_prefix(const void *src, size_t n, void *dst, size_t cap, size_t want,
                                    size_t *out_n);
const char *zb_deflate_version(void);
/* The steps: zb_gzip_compress with zb_gzip_params, zb_gzip_decompress (no parameters). */
typedef struct {
    int level;
} zb_gzip_params;
zb_status zb_gzip_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);
zb_status zb_gzip_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                              size_t *out_n);

/* ----------------------------------------------------------------------------- c-blosc 1.x (encode) */
enum { ZB_BLOSC_MAX_OVERHEAD = 16, ZB_BLOSC_HEADER = 16, ZB_BLOSC_MAX_TYPESIZE = 255 };
/* Largest input c-blosc accepts (INT_MAX - 16). */
size_t zb_blosc1_max_input(void);
/* cname: blosclz, lz4, lz4hc, zlib, zstd, snappy.  ZB_EINVAL for an unknown name or a parameter out
 * of range (clevel 0..9, shuffle 0..2, typesize >= 1, blocksize >= 0); ZB_EUNSUPPORTED for a
 * known compressor this c-blosc build lacks or an input larger than zb_blosc1_max_input().
 * typesize > 255 is encoded as 1 (the header stores it in one byte; c-blosc does the same).
 * cap >= n + ZB_BLOSC_MAX_OVERHEAD always suffices.  Single-threaded, context API only. */
zb_status zb_blosc1_compress(const void *src, size_t n, void *dst, size_t cap, int clevel, int shuffle,
                             size_t typesize, const char *cname, size_t blocksize, size_t *out_n);
/* 1 if cname is a compressor name c-blosc knows, whether or not it is compiled in. */
int zb_blosc1_known_cname(const char *cname);
const char *zb_blosc1_version(void);
/* The encode step: zb_blosc1_compress with zb_blosc1_params (cap clamped to n + 16, as every
 * other caller's, so that the chunks are the same). */
typedef struct {
    int clevel;
    int shuffle;       /* 0 none, 1 byte, 2 bit */
    size_t typesize;   /* the header's type size */
    size_t blocksize;  /* 0: automatic */
    char cname[16];    /* NUL-terminated */
} zb_blosc1_params;
zb_status zb_blosc1_encode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                size_t *out_n);
const char *zb_blosc1_compressors(void);
/* 1 when c-blosc's per-block ZSTD_compress calls reuse a context per thread (blosc1_codec.c). */
int zb_blosc1_zstd_reuse(void);

/* ----------------------------------------------------------------------------- c-blosc2 (decode) */
/* Parse and validate the 16-byte c-blosc chunk header of src against n: the header must be
 * complete, cbytes must fit in n, nbytes/blocksize must be consistent, and the chunk must use the
 * c-blosc 1.x layout (c-blosc2's extended header and plugin codecs are refused: ZB_EUNSUPPORTED).
 * Never reads past src[n-1]. */
zb_status zb_blosc2_cbuffer_sizes(const void *src, size_t n, size_t *nbytes, size_t *cbytes,
                                  size_t *blocksize, size_t *typesize);
/* Decode a whole chunk into dst (cap >= nbytes required, else ZB_ETOOSMALL). */
zb_status zb_blosc2_decompress(const void *src, size_t n, void *dst, size_t cap, size_t *out_n);
/* Decode items [start, start + nitems) (items of the header's typesize) into dst. */
zb_status zb_blosc2_getitem(const void *src, size_t n, int64_t start, int64_t nitems, void *dst,
                            size_t cap, size_t *out_n);
/* Testing hook: 0 makes bit-shuffled chunks decode entirely in c-blosc2 (1, the default: with
 * zarrbolt's unshuffle kernel).  Returns the previous setting.  Not synchronised. */
int zb_blosc2_set_fast_bitshuffle(int on);
/* zb_blosc2_cbuffer_sizes, and *in_block = 1 when zb_blosc2_getitem decodes only the part of a
 * block it needs (LZ4 chunks with byte shuffle or none): then a range inside one block costs less
 * than the block. */
zb_status zb_blosc2_partial_sizes(const void *src, size_t n, size_t *nbytes, size_t *cbytes, size_t *blocksize,
                                  size_t *typesize, int *in_block);
/* Testing hook: 0 makes getitem of LZ4 chunks decode whole blocks in c-blosc2 (1, the default
 * where the linked c-blosc2 exports LZ4's partial decoder: stop streams after the wanted bytes).
 * Returns the previous setting. */
int zb_blosc2_set_fast_lz4(int on);
/* The decode step: zb_blosc2_decompress (no parameters). */
zb_status zb_blosc2_decode_step(const void *params, const void *src, size_t n, void *dst, size_t cap,
                                size_t *out_n);
/* Must be called once (not thread-safe) before the other zb_blosc2_* functions. */
void zb_blosc2_global_init(void);
const char *zb_blosc2_version(void);

#ifdef __cplusplus
}
#endif
#endif
