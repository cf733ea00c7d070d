/* Whole-file reads for local chunk stores (see zarrbolt/fileio.h).  One open, one fstat and
 * reads until the file's size are all that a chunk costs; no Python objects, so a whole batch
 * runs without the GIL. */
#if !defined(_WIN32) && !defined(_FILE_OFFSET_BITS)
#  define _FILE_OFFSET_BITS 64 /* 64-bit offsets for pread on 32-bit systems */
#endif
#include "zarrbolt/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#else
#  include <fcntl.h>
#  include <sys/stat.h>
#  include <unistd.h>
#  ifndef O_CLOEXEC
#    define O_CLOEXEC 0
#  endif
#  ifndef O_NONBLOCK
#    define O_NONBLOCK 0
#  endif
#endif

/* One read call at most this many bytes (Windows ReadFile takes a DWORD; Linux caps near 2 GiB). */
#define ZB_READ_STEP ((size_t)1 << 30)

#if defined(_WIN32)
typedef HANDLE zb_fd;

static int missing_error(DWORD e) {
  return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND || e == ERROR_INVALID_NAME ||
         e == ERROR_DIRECTORY;
}

/* 1: opened, 0: missing, -1: error (*err set). */
static int open_file(const char *path, zb_fd *fd, int64_t *size, int *err, int nofollow) {
  (void)nofollow; /* (no O_NOFOLLOW: the caller checks links itself) */
  wchar_t small[512];
  wchar_t *w = small;
  int len = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (len <= 0) {
    *err = (int)GetLastError();
    return -1;
  }
  if (len > (int)(sizeof small / sizeof small[0])) {
    w = (wchar_t *)HeapAlloc(GetProcessHeap(), 0, (size_t)len * sizeof(wchar_t));
    if (w == NULL) {
      *err = ERROR_NOT_ENOUGH_MEMORY;
      return -1;
    }
  }
  MultiByteToWideChar(CP_UTF8, 0, path, -1, w, len);
  HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN, NULL);
  DWORD e = GetLastError();
  int is_dir = 0;
  if (h == INVALID_HANDLE_VALUE && e == ERROR_ACCESS_DENIED) {
    /* a directory cannot be opened without backup semantics: access denied may mean one */
    DWORD attr = GetFileAttributesW(w);
    is_dir = attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY);
  }
  if (w != small) HeapFree(GetProcessHeap(), 0, w);
  if (h == INVALID_HANDLE_VALUE) {
    if (missing_error(e) || is_dir) return 0;
    *err = (int)e;
    return -1;
  }
  BY_HANDLE_FILE_INFORMATION info;
  LARGE_INTEGER sz;
  if (!GetFileInformationByHandle(h, &info) || !GetFileSizeEx(h, &sz)) {
    *err = (int)GetLastError();
    CloseHandle(h);
    return -1;
  }
  if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
    CloseHandle(h);
    return 0;
  }
  *fd = h;
  *size = (int64_t)sz.QuadPart;
  return 1;
}

/* One read of at most ZB_READ_STEP bytes: the count read (0 at end of file), or -1 (*err set). */
static int64_t read_some(zb_fd fd, uint8_t *dst, size_t n, int *err) {
  DWORD r = 0;
  if (!ReadFile(fd, dst, (DWORD)n, &r, NULL)) {
    *err = (int)GetLastError();
    return -1;
  }
  return (int64_t)r;
}

static void close_file(zb_fd fd) { CloseHandle(fd); }

static int64_t pread_some(zb_fd fd, uint8_t *dst, size_t n, uint64_t offset, int *err) {
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  ov.Offset = (DWORD)(offset & 0xFFFFFFFFu);
  ov.OffsetHigh = (DWORD)(offset >> 32);
  DWORD r = 0;
  if (!ReadFile(fd, dst, (DWORD)n, &r, &ov)) {
    DWORD e = GetLastError();
    if (e == ERROR_HANDLE_EOF) return 0;
    *err = (int)e;
    return -1;
  }
  return (int64_t)r;
}

#else
typedef int zb_fd;

#  ifndef O_NOFOLLOW
#    define O_NOFOLLOW 0
#  endif
static int open_file(const char *path, zb_fd *fd, int64_t *size, int *err, int nofollow) {
  int f;
  do {
    /* O_NONBLOCK: a FIFO at a chunk's path must not block the open (it is then not a
     * regular file: missing); reads of regular files ignore the flag. */
    f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
  } while (f < 0 && errno == EINTR);
  if (f < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR || errno == ENAMETOOLONG) return 0;
    if (nofollow && O_NOFOLLOW && (errno == ELOOP || errno == EMLINK)) return 2; /* (FreeBSD: EMLINK) */
    *err = errno;
    return -1;
  }
  struct stat st;
  if (fstat(f, &st) != 0) {
    *err = errno;
    close(f);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(f);
    return 0;
  }
  *fd = f;
  *size = (int64_t)st.st_size;
  return 1;
}

static int64_t read_some(zb_fd fd, uint8_t *dst, size_t n, int *err) {
  for (;;) {
    ssize_t r = read(fd, dst, n);
    if (r >= 0) return (int64_t)r;
    if (errno != EINTR) {
      *err = errno;
      return -1;
    }
  }
}

static void close_file(zb_fd fd) { close(fd); }

static int64_t pread_some(zb_fd fd, uint8_t *dst, size_t n, uint64_t offset, int *err) {
  if (offset > (uint64_t)INT64_MAX) return 0;
  for (;;) {
    ssize_t r = pread(fd, dst, n, (off_t)offset);
    if (r >= 0) return (int64_t)r;
    if (errno != EINTR) {
      *err = errno;
      return -1;
    }
  }
}
#endif

/* Bytes read (fewer than want only at end of file), or -1 (*err set). */
static int64_t read_file(zb_fd fd, uint8_t *dst, size_t want, int *err) {
  size_t got = 0;
  while (got < want) {
    int64_t r = read_some(fd, dst + got, want - got < ZB_READ_STEP ? want - got : ZB_READ_STEP, err);
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (int64_t)got;
}

zb_status zb_read_files(zb_file_read *items, size_t n, uint8_t *buf, size_t cap, size_t *done, int *os_error) {
  if (done == NULL || os_error == NULL || (items == NULL && n) || (buf == NULL && cap)) return ZB_EINVAL;
  *done = 0;
  *os_error = 0;
  for (size_t i = 0; i < n; i++) items[i].size = ZB_FILE_NOT_READ;
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    zb_file_read *it = &items[i];
    *done = i;
    if (it->path == NULL) return ZB_EINVAL;
    zb_fd fd;
    int64_t size = 0;
    int r = open_file(it->path, &fd, &size, os_error, it->nofollow);
    if (r < 0) return ZB_EIO;
    if (r == 0 || r == 2) {
      it->size = r == 0 ? ZB_FILE_MISSING : ZB_FILE_LINK;
      continue;
    }
    if (size < 0 || (uint64_t)size > (uint64_t)(cap - pos)) {
      close_file(fd);
      it->size = size;
      return ZB_OK; /* does not fit: the caller decodes what it has and starts over */
    }
    size_t want = (size_t)size;
    int64_t got = read_file(fd, buf + pos, want, os_error);
    close_file(fd);
    if (got < 0) return ZB_EIO;
    if (got != (int64_t)want) { /* shrank while being read */
      *os_error = ZB_FILE_CHANGED;
      return ZB_EIO;
    }
    it->size = size;
    it->offset = pos;
    pos += want;
  }
  *done = n;
  return ZB_OK;
}

int zb_file_open_ex(const char *path, int nofollow, zb_file *f, int64_t *size, int *os_error) {
  if (path == NULL || f == NULL || size == NULL || os_error == NULL) return -1;
  zb_fd fd;
  int r = open_file(path, &fd, size, os_error, nofollow);
  if (r == 1) f->h = (intptr_t)fd;
  return r;
}

int zb_file_open(const char *path, zb_file *f, int64_t *size, int *os_error) {
  return zb_file_open_ex(path, 0, f, size, os_error);
}

int64_t zb_file_pread(zb_file f, uint8_t *dst, size_t n, uint64_t offset, int *os_error) {
  size_t got = 0;
  while (got < n) {
    size_t step = n - got < ZB_READ_STEP ? n - got : ZB_READ_STEP;
    int64_t r = pread_some((zb_fd)f.h, dst + got, step, offset + got, os_error);
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (int64_t)got;
}

void zb_file_close(zb_file f) { close_file((zb_fd)f.h); }

int zb_file_pwrite(zb_file f, const uint8_t *src, size_t n, uint64_t offset, int *os_error) {
  if ((src == NULL && n) || os_error == NULL || offset > (uint64_t)INT64_MAX - n) return -1;
  while (n > 0) {
    size_t step = n < ZB_READ_STEP ? n : ZB_READ_STEP;
#if defined(_WIN32)
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)(offset & 0xFFFFFFFFu);
    ov.OffsetHigh = (DWORD)(offset >> 32);
    DWORD w = 0;
    if (!WriteFile((HANDLE)f.h, src, (DWORD)step, &w, &ov) || w == 0) {
      *os_error = w == 0 ? ERROR_WRITE_FAULT : (int)GetLastError();
      return -1;
    }
    size_t done = (size_t)w;
#else
    ssize_t w = pwrite((int)f.h, src, step, (off_t)offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *os_error = w < 0 ? errno : EIO;
      return -1;
    }
    size_t done = (size_t)w;
#endif
    src += done;
    offset += done;
    n -= done;
  }
  return 0;
}

/* ------------------------------------------------------------------------------- writing */
#if defined(_WIN32)
/* path as a wide string: small, or one from the process heap (*big, to free); NULL on error. */
static wchar_t *wide_path(const char *path, wchar_t *small, int nsmall, wchar_t **big, int *err) {
  *big = NULL;
  int len = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (len <= 0) {
    *err = (int)GetLastError();
    return NULL;
  }
  wchar_t *w = small;
  if (len > nsmall) {
    w = *big = (wchar_t *)HeapAlloc(GetProcessHeap(), 0, (size_t)len * sizeof(wchar_t));
    if (w == NULL) {
      *err = ERROR_NOT_ENOUGH_MEMORY;
      return NULL;
    }
  }
  MultiByteToWideChar(CP_UTF8, 0, path, -1, w, len);
  return w;
}

static void free_wide(wchar_t *big) {
  if (big) HeapFree(GetProcessHeap(), 0, big);
}

static int write_tmp(const wchar_t *wtmp, const uint8_t *p, size_t n, int do_fsync, int *err, int *stage) {
  HANDLE h = CreateFileW(wtmp, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    *err = (int)GetLastError();
    *stage = ZB_WRITE_CREATE;
    return -1;
  }
  *stage = ZB_WRITE_DATA;
  while (n) {
    DWORD step = n < ZB_READ_STEP ? (DWORD)n : (DWORD)ZB_READ_STEP, w = 0;
    if (!WriteFile(h, p, step, &w, NULL) || w == 0) {
      *err = w == 0 ? ERROR_WRITE_FAULT : (int)GetLastError();
      CloseHandle(h);
      return -2;
    }
    p += w;
    n -= w;
  }
  if (do_fsync && !FlushFileBuffers(h)) {
    *err = (int)GetLastError();
    CloseHandle(h);
    return -2;
  }
  if (!CloseHandle(h)) {
    *err = (int)GetLastError();
    return -2;
  }
  return 0;
}

zb_status zb_write_file_atomic(const char *path, const char *tmp, const void *data, size_t n, int do_fsync,
                               int *os_error, int *stage) {
  if (!path || !tmp || (!data && n) || !os_error || !stage) return ZB_EINVAL;
  *os_error = 0;
  *stage = 0;
  wchar_t s1[260], s2[260], *b1, *b2;
  wchar_t *wtmp = wide_path(tmp, s1, 260, &b1, os_error);
  if (wtmp == NULL) {
    *stage = ZB_WRITE_CREATE;
    return ZB_EIO;
  }
  wchar_t *wpath = wide_path(path, s2, 260, &b2, os_error);
  zb_status st = ZB_OK;
  if (wpath == NULL) {
    *stage = ZB_WRITE_CREATE;
    st = ZB_EIO;
  } else {
    int r = write_tmp(wtmp, (const uint8_t *)data, n, do_fsync, os_error, stage);
    if (r == 0 && !MoveFileExW(wtmp, wpath, MOVEFILE_REPLACE_EXISTING)) {
      *os_error = (int)GetLastError();
      *stage = ZB_WRITE_RENAME;
      r = -2;
    }
    if (r == -2) DeleteFileW(wtmp);
    if (r != 0) st = ZB_EIO;
  }
  free_wide(b1);
  free_wide(b2);
  if (st == ZB_OK) *stage = 0;
  return st;
}
#else
zb_status zb_write_file_atomic(const char *path, const char *tmp, const void *data, size_t n, int do_fsync,
                               int *os_error, int *stage) {
  if (!path || !tmp || (!data && n) || !os_error || !stage) return ZB_EINVAL;
  *os_error = 0;
  *stage = ZB_WRITE_CREATE;
  int f;
  do {
    f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (f < 0 && errno == EINTR);
  if (f < 0) {
    *os_error = errno;
    return ZB_EIO;
  }
  *stage = ZB_WRITE_DATA;
  const uint8_t *p = (const uint8_t *)data;
  int err = 0;
  while (n && !err) {
    ssize_t w = write(f, p, n < ZB_READ_STEP ? n : ZB_READ_STEP);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
    } else if (w == 0) {
      err = EIO;
    } else if (errno != EINTR) {
      err = errno;
    }
  }
  if (!err && do_fsync && fsync(f) != 0) err = errno;
  if (close(f) != 0 && !err && errno != EINTR) err = errno;
  if (!err) {
    *stage = ZB_WRITE_RENAME;
    if (rename(tmp, path) != 0) err = errno;
  }
  if (err) {
    unlink(tmp);
    *os_error = err;
    return ZB_EIO;
  }
  *stage = 0;
  return ZB_OK;
}
#endif
