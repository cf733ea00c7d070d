#include "zarrbolt/shard_index.h"

#include <string.h>

#include "zarrbolt/crc32c.h"

static inline uint64_t load_le64(const unsigned char *p) {
  return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) | ((uint64_t)p[3] << 24) |
         ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) | ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);
}

static inline uint32_t load_le32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

zb_status zb_shard_index_parse(const void *raw, size_t n, uint64_t data_begin, uint64_t data_end,
                               uint64_t *pairs, int64_t *bad_entry) {
  if (!pairs || (n && !raw && !pairs) || data_begin > data_end) return ZB_EINVAL;
  if (bad_entry) *bad_entry = -1;
  const unsigned char *p = (const unsigned char *)raw;
  for (size_t i = 0; i < n; i++) {
    uint64_t off, nb;
    if (p) {
      off = load_le64(p + 16 * i);
      nb = load_le64(p + 16 * i + 8);
      pairs[2 * i] = off;
      pairs[2 * i + 1] = nb;
    } else {
      off = pairs[2 * i];
      nb = pairs[2 * i + 1];
    }
    int e_off = off == ZB_SHARD_EMPTY, e_nb = nb == ZB_SHARD_EMPTY;
    if (e_off && e_nb) continue;
    /* one sentinel without the other; overflow; outside the data region */
    if (e_off || e_nb || nb > UINT64_MAX - off || off < data_begin || off + nb > data_end) {
      if (bad_entry) *bad_entry = (int64_t)i;
      return ZB_ECORRUPT;
    }
  }
  return ZB_OK;
}

zb_status zb_shard_index_parse_crc(const void *raw, size_t n, int has_crc, uint64_t data_begin,
                                   uint64_t data_end, uint64_t *pairs, int64_t *bad_entry) {
  if (!raw && n) return ZB_EINVAL;
  if (has_crc) {
    uint32_t crc = 0;
    zb_status s = zb_crc32c(&crc, raw, 16 * n);
    if (s != ZB_OK) return s;
    if (crc != load_le32((const unsigned char *)raw + 16 * n)) return ZB_ECHECKSUM;
  }
  return zb_shard_index_parse(raw, n, data_begin, data_end, pairs, bad_entry);
}

/* The offset of idx's entry: idx is an entry number, or with ents a position in ents. */
static inline uint64_t key_of(const uint64_t *pairs, const int64_t *ents, int64_t idx) {
  return pairs[2 * (ents ? ents[idx] : idx)];
}

/* Sort idx[0..m) (entry numbers, or with ents positions in ents) by their entries' offsets with
 * a non-recursive bottom-up merge sort (stable, O(m log m), no comparator callbacks); `tmp`
 * holds m int64.  Already sorted input (writers usually store inner chunks in C order) is
 * left as it is after one pass. */
static void sort_by_offset(const uint64_t *pairs, const int64_t *ents, int64_t *idx, int64_t *tmp, size_t m) {
  size_t k = 1;
  while (k < m && key_of(pairs, ents, idx[k]) >= key_of(pairs, ents, idx[k - 1])) k++;
  if (k >= m) return;
  for (size_t width = 1; width < m; width *= 2) {
    for (size_t lo = 0; lo < m; lo += 2 * width) {
      size_t mid = lo + width < m ? lo + width : m;
      size_t hi = lo + 2 * width < m ? lo + 2 * width : m;
      size_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        if (key_of(pairs, ents, idx[j]) < key_of(pairs, ents, idx[i]))
          tmp[o++] = idx[j++];
        else
          tmp[o++] = idx[i++];
      }
      while (i < mid) tmp[o++] = idx[i++];
      while (j < hi) tmp[o++] = idx[j++];
    }
    memcpy(idx, tmp, m * sizeof(int64_t));
  }
}

int zb_shard_index_find_overlap(const uint64_t *pairs, size_t n, int64_t *scratch, int64_t *a, int64_t *b) {
  int64_t *idx = scratch, *tmp = scratch + n;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (pairs[2 * i] != ZB_SHARD_EMPTY && pairs[2 * i + 1] != 0) idx[m++] = (int64_t)i;
  sort_by_offset(pairs, NULL, idx, tmp, m);
  int found = 0;
  /* the entry reaching furthest so far; an overlap exists iff some start is below it */
  uint64_t reach = 0;
  int64_t reach_entry = -1;
  for (size_t k = 0; k < m; k++) {
    uint64_t off = pairs[2 * idx[k]], end = off + pairs[2 * idx[k] + 1];
    if (reach_entry >= 0 && off < reach) {
      int64_t x = reach_entry, y = idx[k];
      *a = x < y ? x : y;
      *b = x < y ? y : x;
      found = 1;
      break;
    }
    if (end > reach) {
      reach = end;
      reach_entry = idx[k];
    }
  }
  return found;
}

/* Merge the k byte ranges of idx (sorted by offset; entry numbers, or with ents positions in
 * ents) into reads numbered from r0 (see zb_shard_coalesce); returns the next read number. */
static size_t merge_reads(const uint64_t *pairs, const int64_t *ents, const int64_t *idx, size_t k, uint64_t max_gap,
                          uint64_t max_read, int64_t *range_of, uint64_t *range_begin, uint64_t *range_end, size_t r0) {
  size_t r = r0;
  for (size_t i = 0; i < k; i++) {
    int64_t e = ents ? ents[idx[i]] : idx[i];
    uint64_t off = pairs[2 * e], end = off + pairs[2 * e + 1];
    /* sorted by offset, so off >= range_begin[r-1]: merge when inside or within max_gap, and
     * while the read stays within max_read bytes (0: no limit) */
    if (r > r0 && (off <= range_end[r - 1] || off - range_end[r - 1] <= max_gap) &&
        (max_read == 0 || (end > range_end[r - 1] ? end : range_end[r - 1]) - range_begin[r - 1] <= max_read)) {
      if (end > range_end[r - 1]) range_end[r - 1] = end;
    } else {
      range_begin[r] = off;
      range_end[r] = end;
      r++;
    }
    range_of[i] = (int64_t)(r - 1);
  }
  return r;
}

zb_status zb_shard_coalesce(const uint64_t *pairs, size_t n, const int64_t *wanted, size_t m,
                            uint64_t max_gap, uint64_t max_read, int64_t *order, int64_t *range_of, uint64_t *range_begin,
                            uint64_t *range_end, size_t *nchunks, size_t *nranges, int64_t *scratch) {
  if (!nchunks || !nranges || (m && (!wanted || !order || !range_of || !range_begin || !range_end || !scratch)))
    return ZB_EINVAL;
  size_t k = 0;
  for (size_t i = 0; i < m; i++) {
    int64_t e = wanted[i];
    if (e < 0 || (uint64_t)e >= n) return ZB_EINVAL;
    if (pairs[2 * e] == ZB_SHARD_EMPTY) continue;
    order[k++] = e;
  }
  sort_by_offset(pairs, NULL, order, scratch, k);
  *nchunks = k;
  *nranges = merge_reads(pairs, NULL, order, k, max_gap, max_read, range_of, range_begin, range_end, 0);
  return ZB_OK;
}

zb_status zb_shard_windows(const uint64_t *pairs, size_t n, const int64_t *entries, size_t m, uint64_t arena_cap,
                           uint64_t max_gap, int64_t *window_ends, size_t *nwindows, int64_t *order, int64_t *read_of,
                           size_t *norder, uint64_t *begins, uint64_t *ends, size_t *nreads, int64_t *scratch) {
  if (!nwindows || !norder || !nreads ||
      (m && (!pairs || !entries || !window_ends || !order || !read_of || !begins || !ends || !scratch)))
    return ZB_EINVAL;
  *nwindows = *norder = *nreads = 0;
  for (size_t i = 0; i < m; i++)
    if (entries[i] < 0 || (uint64_t)entries[i] >= n) return ZB_EINVAL;
  size_t nw = 0, k = 0, r = 0;
  for (size_t w0 = 0, w1; w0 < m; w0 = w1) {
    /* the window: w0 and what follows while the sizes add up to at most arena_cap */
    uint64_t tot = 0;
    size_t k0 = k;
    for (w1 = w0; w1 < m; w1++) {
      int64_t e = entries[w1];
      uint64_t size = pairs[2 * e] == ZB_SHARD_EMPTY ? 0 : pairs[2 * e + 1];
      if (w1 > w0 && (tot > arena_cap || size > arena_cap - tot)) break;
      tot += size;
      if (pairs[2 * e] != ZB_SHARD_EMPTY) order[k++] = (int64_t)w1;
    }
    window_ends[nw++] = (int64_t)w1;
    sort_by_offset(pairs, entries, order + k0, scratch, k - k0);
    r = merge_reads(pairs, entries, order + k0, k - k0, max_gap, arena_cap, read_of + k0, begins, ends, r);
  }
  *nwindows = nw;
  *norder = k;
  *nreads = r;
  return ZB_OK;
}
