/* Self-test of the plain-C kernels in csrc/ with no Python: built natively and, cross-compiled,
 * on aarch64 under qemu (`make armcheck`), so the ARMv8 CRC32C path, the pool's spin loop and
 * the portable kernels run on a CPU the project's machines do not have.
 *
 * Every check compares against a slow obvious reference written here.  Prints one line per
 * group and exits 1 on the first mismatch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarrbolt/bitshuffle.h"
#include "zarrbolt/checksum32.h"
#include "zarrbolt/crc32c.h"
#include "zarrbolt/downsample.h"
#include "zarrbolt/encode.h"
#include "zarrbolt/fileio.h"
#include "zarrbolt/local_io.h"
#include "zarrbolt/pool.h"
#include "zarrbolt/shard_index.h"
#include "zarrbolt/strided.h"
#include "zarrbolt/vlen.h"

#ifndef _WIN32
#  include <unistd.h>
#endif

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* ------------------------------------------------------------------------------- crc32c */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void test_crc32c(void) {
    int impls[ZB_CRC32C_NIMPL], nimpl = 0;
    for (int i = 0; i < ZB_CRC32C_NIMPL; i++)
        if (zb_crc32c_available(i)) impls[nimpl++] = i;
    size_t cap = (1u << 20) + 64;
    uint8_t *buf = (uint8_t *)malloc(cap);
    CHECK(buf, "out of memory");
    for (size_t i = 0; i < cap; i++) buf[i] = (uint8_t)rnd();
    size_t lens[] = {0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097, 8191, 24577, 65536,
                     100003, (1u << 20)};
    int checked = 0;
    for (int k = 0; k < nimpl; k++) {
        uint32_t c = 0;
        CHECK(zb_crc32c_impl(impls[k], &c, "123456789", 9) == ZB_OK && c == 0xE3069283u,
              "%s: check value %08x", zb_crc32c_impl_name(impls[k]), c);
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            for (size_t off = 0; off < 8; off++) {
                size_t n = lens[li];
                uint32_t want = crc_bitwise(0x12345678u, buf + off, n);
                c = 0x12345678u;
                CHECK(zb_crc32c_impl(impls[k], &c, buf + off, n) == ZB_OK && c == want,
                      "%s: n=%zu off=%zu got %08x want %08x", zb_crc32c_impl_name(impls[k]), n, off, c, want);
                checked++;
            }
        }
        for (int t = 0; t < 200; t++) { /* random lengths, offsets and split points */
            size_t n = rnd() % 20000, off = rnd() % 64, cut = n ? rnd() % n : 0;
            uint32_t want = crc_bitwise(0, buf + off, n);
            c = 0;
            CHECK(zb_crc32c_impl(impls[k], &c, buf + off, cut) == ZB_OK &&
                      zb_crc32c_impl(impls[k], &c, buf + off + cut, n - cut) == ZB_OK && c == want,
                  "%s: chained n=%zu cut=%zu", zb_crc32c_impl_name(impls[k]), n, cut);
            checked++;
        }
    }
    free(buf);
    printf("crc32c: %d implementation(s) (auto: %s), %d checks\n", nimpl, zb_crc32c_impl_name(zb_crc32c_selected()),
           checked);
}

/* --------------------------------------------------------------------------------- pool */
typedef struct {
    long next, total, hits[64];
} pool_ctx;

static void pool_fn(void *arg, int w) {
    pool_ctx *c = (pool_ctx *)arg;
    for (;;) {
        long k = zb_pool_next(&c->next);
        if (k >= 64) break;
        c->hits[k]++; /* each item taken exactly once */
    }
    (void)w;
}

static void test_pool(void) {
    int runs = 0;
    for (int r = 0; r < 300; r++) {
        pool_ctx c;
        memset(&c, 0, sizeof c);
        int n = 1 + (int)(rnd() % 6);
        int ran = zb_pool_run(n, pool_fn, &c);
        CHECK(ran >= 1 && ran <= n, "pool ran %d of %d", ran, n);
        for (int k = 0; k < 64; k++) CHECK(c.hits[k] == 1, "item %d taken %ld times", k, c.hits[k]);
        runs++;
    }
    printf("pool: %d jobs, %d threads held\n", runs, zb_pool_threads());
}

/* ------------------------------------------------------------------------------ strided */
static void test_strided(void) {
    int checked = 0;
    for (int t = 0; t < 300; t++) {
        int nd = 1 + (int)(rnd() % 4);
        size_t isz = (size_t[]){1, 2, 4, 8, 3}[rnd() % 5];
        int64_t shape[4], n = 1;
        for (int d = 0; d < nd; d++) {
            shape[d] = 1 + rnd() % 19;
            n *= shape[d];
        }
        int perm[4] = {0, 1, 2, 3};
        for (int d = nd - 1; d > 0; d--) { /* random destination axis order */
            int e = (int)(rnd() % (unsigned)(d + 1)), x = perm[d];
            perm[d] = perm[e];
            perm[e] = x;
        }
        int64_t sst[4], dst_st[4], s = (int64_t)isz;
        for (int d = nd - 1; d >= 0; d--) {
            sst[d] = s;
            s *= shape[d];
        }
        s = (int64_t)isz;
        for (int k = nd - 1; k >= 0; k--) {
            dst_st[perm[k]] = s;
            s *= shape[perm[k]];
        }
        uint8_t *src = (uint8_t *)malloc((size_t)n * isz), *dst = (uint8_t *)calloc((size_t)n, isz);
        CHECK(src && dst, "out of memory");
        for (int64_t i = 0; i < n * (int64_t)isz; i++) src[i] = (uint8_t)rnd();
        CHECK(zb_strided_copy(dst, dst_st, src, sst, shape, nd, isz) == ZB_OK, "strided copy failed");
        for (int64_t i = 0; i < n; i++) { /* element i of src (C order) */
            int64_t rem = i, so = 0, dof = 0;
            for (int d = nd - 1; d >= 0; d--) {
                int64_t c = rem % shape[d];
                rem /= shape[d];
                so += c * sst[d];
                dof += c * dst_st[d];
            }
            CHECK(memcmp(src + so, dst + dof, isz) == 0, "strided copy: element %lld differs", (long long)i);
        }
        free(src);
        free(dst);
        checked++;
    }
    printf("strided: %d copies\n", checked);
}

/* --------------------------------------------------------------------------- bitshuffle */
static void test_bitunshuffle(void) {
    int checked = 0;
    size_t sizes[] = {1, 2, 4, 8, 3};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t ts = sizes[si];
        for (size_t nelem = 8; nelem <= 1024; nelem += 8 * (1 + rnd() % 9)) {
            size_t nb = nelem * ts;
            uint8_t *elems = (uint8_t *)malloc(nb), *shuf = (uint8_t *)calloc(nb, 1);
            uint8_t *out = (uint8_t *)malloc(nb), *tmp = (uint8_t *)malloc(nb);
            CHECK(elems && shuf && out && tmp, "out of memory");
            for (size_t i = 0; i < nb; i++) elems[i] = (uint8_t)rnd();
            /* the layout zarrbolt/bitshuffle.h documents: row 8*b + j, bit i of byte k of the row
             * = bit j of byte b of element 8*k + i */
            size_t rowlen = nelem / 8;
            for (size_t e = 0; e < nelem; e++)
                for (size_t b = 0; b < ts; b++)
                    for (size_t j = 0; j < 8; j++)
                        if (elems[e * ts + b] >> j & 1) shuf[(8 * b + j) * rowlen + e / 8] |= (uint8_t)(1u << (e % 8));
            CHECK(zb_bitunshuffle(shuf, out, nelem, ts, tmp) == ZB_OK, "bitunshuffle failed");
            CHECK(memcmp(out, elems, nb) == 0, "bitunshuffle: typesize %zu nelem %zu", ts, nelem);
            free(elems);
            free(shuf);
            free(out);
            free(tmp);
            checked++;
        }
    }
    printf("bitunshuffle: %d blocks\n", checked);
}

/* ------------------------------------------------------------------------------- encode */
static void test_encode_chunk(void) {
    /* a transposed, fill-padded gather plus crc32c against the obvious loops */
    zb_eplan plan;
    memset(&plan, 0, sizeof plan);
    plan.ndim = 3;
    int64_t cs[3] = {5, 6, 7};
    int perm[3] = {2, 0, 1};
    for (int d = 0; d < 3; d++) {
        plan.chunk_shape[d] = cs[d];
        plan.perm[d] = perm[d];
    }
    plan.transposed = 1;
    plan.itemsize = 2;
    plan.fill[0] = 0x34;
    plan.fill[1] = 0x12;
    plan.nsteps = 1;
    plan.steps[0].kind = ZB_STEP_INPLACE;
    plan.steps[0].inplace = zb_crc32c_append_step;
    plan.buf_cap = 5 * 6 * 7 * 2 + 4;
    CHECK(zb_eplan_check(&plan) == ZB_OK, "plan rejected");
    uint16_t src[9][8][10];
    for (int a = 0; a < 9; a++)
        for (int b = 0; b < 8; b++)
            for (int c = 0; c < 10; c++) src[a][b][c] = (uint16_t)rnd();
    int64_t st[3] = {8 * 10 * 2, 10 * 2, 2}, shape[3] = {4, 6, 3}; /* sticks out along 0 and 2 */
    uint8_t *work = (uint8_t *)malloc(zb_eplan_work_bytes(&plan));
    CHECK(work, "out of memory");
    const uint8_t *out;
    size_t n;
    int is_fill;
    CHECK(zb_encode_chunk(&plan, (const uint8_t *)&src[2][1][4], st, shape, work, &out, &n, &is_fill) == ZB_OK,
          "encode failed");
    CHECK(n == 5 * 6 * 7 * 2 + 4 && !is_fill, "encoded size %zu", n);
    uint16_t want[7][5][6]; /* stored axes: chunk axes 2, 0, 1 */
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 7; k++)
                want[k][i][j] = (i < 4 && k < 3) ? src[2 + i][1 + j][4 + k] : 0x1234;
    CHECK(memcmp(out, want, sizeof want) == 0, "gathered chunk differs");
    uint32_t crc = crc_bitwise(0, (const uint8_t *)want, sizeof want);
    CHECK(out[n - 4] == (uint8_t)crc && out[n - 1] == (uint8_t)(crc >> 24), "crc32c suffix differs");
    free(work);
    printf("encode: transposed, padded chunk + crc32c\n");
}

/* ------------------------------------------------------------------------ the batch runner */
typedef struct {
    const uint8_t *fail;
    uint8_t ran[64];
} batches_ctx;

static zb_status batch_fn(void *ctx, size_t k, int w, void **state, zb_batch_error *err) {
    batches_ctx *c = (batches_ctx *)ctx;
    (void)w;
    if (*state == NULL) *state = malloc(8);
    c->ran[k] = 1;
    if (!c->fail[k]) return ZB_OK;
    err->failed = 100 + k;
    return ZB_ECORRUPT;
}

static void batch_free(void *ctx, void *state) {
    (void)ctx;
    free(state);
}

static void test_pool_batches(void) {
    int checks = 0;
    for (int r = 0; r < 300; r++) {
        uint8_t fail[64];
        size_t n = 1 + rnd() % 64, low = n;
        for (size_t k = 0; k < n; k++) {
            fail[k] = rnd() % 16 == 0;
            if (fail[k] && low == n) low = k;
        }
        batches_ctx c;
        memset(&c, 0, sizeof c);
        c.fail = fail;
        zb_batch_error err;
        zb_status st = zb_pool_batches(n, 1 + (int)(rnd() % 6), batch_fn, batch_free, &c, &err);
        CHECK(st == (low < n ? ZB_ECORRUPT : ZB_OK) && err.st == st, "batches: status %d", st);
        CHECK(low == n || err.failed == 100 + low, "batches: failed %zu, lowest failing %zu", err.failed, low);
        for (size_t k = 0; k <= low && k < n; k++) CHECK(c.ran[k], "batch %zu below the failing one did not run", k);
        checks++;
    }
    printf("pool batches: %d runs, lowest failing batch wins\n", checks);
}

/* ------------------------------------------------------------------ a shard file, local_io */
static void test_shard_read(void) {
    /* 6 inner chunks of 40 bytes (entry 4 empty) stored in entry order with 12-byte gaps, the
     * index at the end; an arena of 130 bytes: windows of 3 tasks whose coalesced reads (92 +
     * 40 bytes) do not fit with their gaps, so they are read without them */
    enum { N = 6, CH = 40, GAP = 12 };
    uint64_t pairs[2 * N];
    uint8_t file[N * (CH + GAP) + 16 * N], want[N * CH];
    size_t pos = 0;
    for (int e = 0; e < N; e++) {
        pos += GAP;
        for (int i = 0; i < CH; i++) file[pos + i] = want[e * CH + i] = (uint8_t)rnd();
        pairs[2 * e] = e == 4 ? ZB_SHARD_EMPTY : pos;
        pairs[2 * e + 1] = e == 4 ? ZB_SHARD_EMPTY : CH;
        pos += CH;
    }
    for (int k = 0; k < 2 * N; k++)
        for (int b = 0; b < 8; b++) file[pos + 8 * k + b] = (uint8_t)(pairs[k] >> (8 * b));
    pos += 16 * N;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/zb_selftest_shard_%ld.bin", dir, (long)rnd());
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(file, 1, pos, f) == pos && fclose(f) == 0, "cannot write %s", path);

    int64_t wend[N], order[N], read_of[N], scratch[N], entries[N] = {0, 1, 2, 3, 4, 5};
    uint64_t begins[N], ends[N];
    size_t nw, no, nr;
    CHECK(zb_shard_windows(pairs, N, entries, N, 130, 1 << 20, wend, &nw, order, read_of, &no, begins, ends, &nr,
                           scratch) == ZB_OK && nw == 2 && no == 5 && wend[0] == 3 && nr == 4 &&
              begins[0] == GAP && ends[0] == 2 * (CH + GAP),
          "shard windows");

    zb_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.itemsize = 1;
    plan.ndim = 1;
    plan.chunk_shape[0] = CH;
    plan.chunk_nbytes = CH;
    uint8_t out[N * CH], arena[130], scr[2 * CH];
    memset(out, 0xEE, sizeof out);
    zb_scratch sc = {scr, CH, 1};
    zb_decode_task tasks[N];
    uint8_t skipped[N];
    zb_shard_room room = {NULL, NULL, 0};
    int64_t work[ZB_SHARD_WORK(N)], ostr[1] = {1};
    for (int i = 0; i < N; i++) {
        memset(&tasks[i], 0, sizeof tasks[i]);
        tasks[i].out_offset = i * CH;
        tasks[i].shape[0] = CH;
    }
    zb_shard_spec spec = {N, 1, 0, 1 << 20, 0};
    zb_shard_read rd = {path, 0, N};
    size_t failed;
    int os_error;
    zb_status st = zb_plan_read_shards(&plan, &spec, &rd, 1, entries, tasks, N, arena, sizeof arena, &room, work, out,
                                       ostr, &sc, 0, skipped, &failed, &os_error);
    CHECK(st == ZB_OK, "read shards: status %d", st);
    for (int e = 0; e < N; e++) {
        CHECK(skipped[e] == (e == 4 ? ZB_SKIPPED_MISSING : 0), "task %d skipped %d", e, skipped[e]);
        CHECK(e == 4 || memcmp(out + e * CH, want + e * CH, CH) == 0, "inner chunk %d differs", e);
    }
#ifndef _WIN32
    /* a link to the shard: followed, or with nofollow left to the caller (every task to retry;
     * a whole-file read reports it and reads nothing) */
    char link[600];
    snprintf(link, sizeof link, "%s.link", path);
    CHECK(symlink(path, link) == 0, "cannot link %s", link);
    rd.path = link;
    st = zb_plan_read_shards(&plan, &spec, &rd, 1, entries, tasks, N, arena, sizeof arena, &room, work, out, ostr, &sc,
                             0, skipped, &failed, &os_error);
    CHECK(st == ZB_OK && skipped[0] == 0 && skipped[4] == ZB_SKIPPED_MISSING, "a link followed");
    spec.nofollow = 1;
    st = zb_plan_read_shards(&plan, &spec, &rd, 1, entries, tasks, N, arena, sizeof arena, &room, work, out, ostr, &sc,
                             0, skipped, &failed, &os_error);
    CHECK(st == ZB_OK, "a link not followed: status %d", st);
    for (int e = 0; e < N; e++) CHECK(skipped[e] == ZB_SKIPPED_RETRY, "a link not followed: task %d", e);
    zb_file_read items[2] = {{link, 0, 0, 1}, {path, 0, 0, 1}};
    size_t done = 0;
    st = zb_read_files(items, 2, arena, sizeof arena, &done, &os_error);
    CHECK(st == ZB_OK && items[0].size == ZB_FILE_LINK && items[1].size == (int64_t)pos && done == 1,
          "whole-file reads: a link not followed (%d, %lld, %zu)", st, (long long)items[0].size, done);
    remove(link);
#endif
    CHECK(room.nentries == N && room.pairs != NULL && room.seen != NULL, "the index room of a shard read");
    for (int e = 0; e < N; e++) CHECK(room.seen[e] == -1, "seen[%d] left at %lld", e, (long long)room.seen[e]);
    zb_shard_room_free(&room);
    /* an index size from metadata is believed only once a file holds that many bytes: a shard
     * smaller than its index and an absent one allocate no room, whatever nentries claims */
    zb_shard_spec huge = {SIZE_MAX / 64, 1, 1, 1 << 20, 0};
    zb_shard_read one = {path, 0, 1};
    st = zb_plan_read_shards(&plan, &huge, &one, 1, entries, tasks, 1, arena, sizeof arena, &room, work, out, ostr,
                             &sc, 0, skipped, &failed, &os_error);
    CHECK(st == ZB_OK && skipped[0] == ZB_SKIPPED_RETRY && room.pairs == NULL && room.nentries == 0,
          "a shard smaller than its index: status %d, skipped %d", st, skipped[0]);
    char absent[600];
    snprintf(absent, sizeof absent, "%s.absent", path);
    one.path = absent;
    st = zb_plan_read_shards(&plan, &huge, &one, 1, entries, tasks, 1, arena, sizeof arena, &room, work, out, ostr,
                             &sc, 0, skipped, &failed, &os_error);
    CHECK(st == ZB_OK && skipped[0] == ZB_SKIPPED_MISSING && room.pairs == NULL && room.nentries == 0,
          "an absent shard: status %d, skipped %d", st, skipped[0]);
    remove(path);
    printf("shard read: windows without their gaps, an empty inner chunk, links, no index room before a file holds it\n");
}

/* ------------------------------------------------------------------- vlen, checksums */
static void test_vlen(void) {
    enum { N = 200 };
    const char *ptrs[N];
    uint64_t lens[N], starts[N];
    uint32_t got[N];
    static char pool[N * 40];
    for (size_t i = 0; i < N; i++) {
        lens[i] = rnd() % 40;
        ptrs[i] = pool + i * 40;
        for (size_t k = 0; k < lens[i]; k++) pool[i * 40 + k] = (char)('a' + rnd() % 26);
    }
    size_t total = zb_vlen_encoded_size(N, lens);
    CHECK(total > 4 + 4 * N, "vlen size");
    uint8_t *buf = malloc(total);
    CHECK(buf, "out of memory");
    CHECK(zb_vlen_write(buf, N, ptrs, lens) == ZB_OK, "vlen write");
    size_t bad = N;
    CHECK(zb_vlen_index(buf, total, N, 1, starts, got, &bad) == ZB_OK, "vlen index");
    for (size_t i = 0; i < N; i++)
        CHECK(got[i] == lens[i] && memcmp(buf + starts[i], ptrs[i], lens[i]) == 0, "vlen item %zu", i);
    /* every truncation, a wrong count and trailing bytes are errors, never reads past the end */
    for (size_t cut = 0; cut < total; cut++)
        CHECK(zb_vlen_index(buf, cut, N, 0, starts, got, &bad) != ZB_OK, "vlen truncated to %zu accepted", cut);
    CHECK(zb_vlen_index(buf, total, N + 1, 0, starts, got, &bad) != ZB_OK, "vlen wrong count accepted");
    free(buf);
    CHECK(zb_utf8_valid((const uint8_t *)"h\xc3\xa9llo \xf0\x9f\x98\x80", 11), "utf8 valid");
    CHECK(!zb_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3), "utf8 surrogate accepted");
    CHECK(!zb_utf8_valid((const uint8_t *)"\xc0\x80", 2), "utf8 overlong accepted");
    CHECK(!zb_utf8_valid((const uint8_t *)"ab\xe2\x82", 4), "utf8 truncated accepted");
    printf("vlen: ok\n");
}

static void test_checksum32(void) {
    const char *s = "Four score and seven years ago";
    CHECK(zb_jenkins_lookup3((const uint8_t *)"", 0, 0) == 0xdeadbeefu, "lookup3 empty");
    CHECK(zb_jenkins_lookup3((const uint8_t *)s, 30, 0) == 0x17770551u, "lookup3 vector 0");
    CHECK(zb_jenkins_lookup3((const uint8_t *)s, 30, 1) == 0xcd628161u, "lookup3 vector 1");
    /* values numcodecs' Fletcher32 gives */
    CHECK(zb_fletcher32((const uint8_t *)"abcde", 5) == 0x4ff029c7u, "fletcher32 abcde");
    CHECK(zb_fletcher32((const uint8_t *)"abcdef", 6) == 0x50562a2du, "fletcher32 abcdef");
    uint8_t big[1025];
    for (int i = 0; i < 1024; i++) big[i] = (uint8_t)(i % 256);
    big[1024] = 1;
    CHECK(zb_fletcher32(big, 1025) == 0x171501ffu, "fletcher32 1025 bytes");
    printf("checksum32: ok\n");
}

/* 2x downsampling (downsample.h): odd edges take partial windows, integer means round half to
 * even, and a kept axis between halved ones; then the 8-thread result equals the 1-thread one. */
static void test_downsample(void) {
    const uint8_t a[3][3] = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}};
    uint8_t out[2][2];
    size_t shape2[2] = {3, 3};
    unsigned char both[2] = {1, 1};
    CHECK(zb_downsample2(a, ZB_DS_U8, 0, 2, shape2, both, ZB_DS_MEAN, out, 1) == ZB_OK, "downsample mean");
    CHECK(out[0][0] == 30 && out[0][1] == 45 && out[1][0] == 75 && out[1][1] == 90, "partial windows");
    const int16_t t[4] = {-3, -2, 1, 2}; /* means -2.5 -> -2, 1.5 -> 2 */
    int16_t to[2];
    size_t shape1[1] = {4};
    CHECK(zb_downsample2(t, ZB_DS_I16, 0, 1, shape1, both, ZB_DS_MEAN, to, 1) == ZB_OK && to[0] == -2 && to[1] == 2,
          "ties to even: %d %d", to[0], to[1]);
    CHECK(zb_downsample2(t, ZB_DS_I64, 0, 1, shape1, both, ZB_DS_MEAN, to, 1) == ZB_EUNSUPPORTED, "int64 mean");
    CHECK(zb_downsample2(t, ZB_DS_F32, 0, 1, shape1, both, ZB_DS_MODE, to, 1) == ZB_EUNSUPPORTED, "float mode");
    unsigned char nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    size_t shape9[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
    CHECK(zb_downsample2(t, ZB_DS_U8, 0, 9, shape9, nine, ZB_DS_MEAN, to, 1) == ZB_EINVAL, "9 halved axes");
    size_t shape3[3] = {33, 65, 270}; /* 1.1 MiB: several batches on the pool */
    unsigned char mid[3] = {1, 0, 1};
    size_t n = 33 * 65 * 270, nout = 17 * 65 * 135;
    uint16_t *src = malloc(n * 2), *o1 = malloc(nout * 2), *o8 = malloc(nout * 2);
    CHECK(src && o1 && o8, "out of memory");
    for (size_t i = 0; i < n; i++) src[i] = (uint16_t)(i * 2654435761u >> 7);
    for (int m = ZB_DS_MEAN; m <= ZB_DS_MODE; m++) {
        CHECK(zb_downsample2(src, ZB_DS_U16, 0, 3, shape3, mid, m, o1, 1) == ZB_OK, "method %d", m);
        CHECK(zb_downsample2(src, ZB_DS_U16, 0, 3, shape3, mid, m, o8, 8) == ZB_OK, "method %d, 8 threads", m);
        CHECK(memcmp(o1, o8, nout * 2) == 0, "method %d: threads change the result", m);
    }
    /* the last output element: the window {src[32][64][268], src[32][64][269]} (odd z edge) */
    CHECK(zb_downsample2(src, ZB_DS_U16, 0, 3, shape3, mid, ZB_DS_MAX, o1, 2) == ZB_OK, "max");
    uint16_t x = src[n - 2], y = src[n - 1];
    CHECK(o1[nout - 1] == (x > y ? x : y), "max at the corner");
    free(src);
    free(o1);
    free(o8);
}

int main(void) {
    test_crc32c();
    test_pool();
    test_strided();
    test_bitunshuffle();
    test_encode_chunk();
    test_pool_batches();
    test_shard_read();
    test_vlen();
    test_checksum32();
    test_downsample();
    printf("selftest: ok\n");
    return 0;
}
