/* Whole-file reads for local chunk stores (see zarrbolt/fileio.h).  One open, one fstat and
 * reads until the file's size are all that a chunk costs; no Python objects, so a whole batch
 * runs without the GIL. */
#if !defined(_WIN32) && !defined(_FILE_OFFSET_BITS)
#  define _FILE_OFFSET_BITS 64 /* 64-bit offsets for pread on 32-bit systems */
#endif
#include "zarrbolt/fileio.h"

#include <errno.h>
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
static int open_file(const char *path, zb_fd *fd, int64_t *size, int *err) {
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

static int open_file(const char *path, zb_fd *fd, int64_t *size, int *err) {
  int f;
  do {
    /* O_NONBLOCK: a FIFO at a chunk's path must not block the open (it is then not a
     * regular file: missing); reads of regular files ignore the flag. */
    f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (f < 0 && errno == EINTR);
  if (f < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR || errno == ENAMETOOLONG) return 0;
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
    int r = open_file(it->path, &fd, &size, os_error);
    if (r < 0) return ZB_EIO;
    if (r == 0) {
      it->size = ZB_FILE_MISSING;
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

int zb_file_open(const char *path, zb_file *f, int64_t *size, int *os_error) {
  if (path == NULL || f == NULL || size == NULL || os_error == NULL) return -1;
  zb_fd fd;
  int r = open_file(path, &fd, size, os_error);
  if (r == 1) f->h = (intptr_t)fd;
  return r;
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
