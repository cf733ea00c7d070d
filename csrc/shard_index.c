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

/* Sort entry numbers by (offset, entry) with a non-recursive bottom-up merge sort (stable,
 * O(m log m), no comparator callbacks). `tmp` holds m int64. */
static void sort_by_offset(const uint64_t *pairs, int64_t *idx, int64_t *tmp, size_t m) {
  for (size_t width = 1; width < m; width *= 2) {
    for (size_t lo = 0; lo < m; lo += 2 * width) {
      size_t mid = lo + width < m ? lo + width : m;
      size_t hi = lo + 2 * width < m ? lo + 2 * width : m;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (pairs[2 * idx[j]] < pairs[2 * idx[i]])
          tmp[k++] = idx[j++];
        else
          tmp[k++] = idx[i++];
      }
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, m * sizeof(int64_t));
  }
}

/* True when the offsets are already non-decreasing in entry order (the common case: writers
 * store inner chunks in C order), which lets us skip the sort. */
static int already_sorted(const uint64_t *pairs, const int64_t *idx, size_t m) {
  for (size_t k = 1; k < m; k++)
    if (pairs[2 * idx[k]] < pairs[2 * idx[k - 1]]) return 0;
  return 1;
}

int zb_shard_index_find_overlap(const uint64_t *pairs, size_t n, int64_t *scratch, int64_t *a, int64_t *b) {
  int64_t *idx = scratch, *tmp = scratch + n;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (pairs[2 * i] != ZB_SHARD_EMPTY && pairs[2 * i + 1] != 0) idx[m++] = (int64_t)i;
  if (!already_sorted(pairs, idx, m)) sort_by_offset(pairs, idx, tmp, m);
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
  if (!already_sorted(pairs, order, k)) sort_by_offset(pairs, order, scratch, k);
  size_t r = 0;
  for (size_t i = 0; i < k; i++) {
    uint64_t off = pairs[2 * order[i]], end = off + pairs[2 * order[i] + 1];
    /* sorted by offset, so off >= range_begin[r-1]: merge when inside or within max_gap, and
     * while the read stays within max_read bytes (0: no limit) */
    if (r > 0 && (off <= range_end[r - 1] || off - range_end[r - 1] <= max_gap) &&
        (max_read == 0 || (end > range_end[r - 1] ? end : range_end[r - 1]) - range_begin[r - 1] <= max_read)) {
      if (end > range_end[r - 1]) range_end[r - 1] = end;
    } else {
      range_begin[r] = off;
      range_end[r] = end;
      r++;
    }
    range_of[i] = (int64_t)(r - 1);
  }
  *nchunks = k;
  *nranges = r;
  return ZB_OK;
}
