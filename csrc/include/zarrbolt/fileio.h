/* Whole-file reads into one caller buffer, many files per call (local chunk stores), and
 * positioned reads of one open file (shards). */
#ifndef ZARRBOLT_FILEIO_H
#define ZARRBOLT_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "zarrbolt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_FILE_MISSING (-1)  /* zb_file_read.size: no regular file at this path */
#define ZB_FILE_NOT_READ (-2) /* zb_file_read.size: not reached (or did not fit) */
#define ZB_FILE_LINK (-3)     /* zb_file_read.size: a symbolic link, not followed (nofollow) */
#define ZB_FILE_CHANGED (-1)  /* *os_error of zb_read_files: a file shrank while it was read */

typedef struct {
  const char *path; /* NUL-terminated; UTF-8 on Windows, the file system's bytes elsewhere */
  int64_t size;     /* out: the file's size, ZB_FILE_MISSING, ZB_FILE_LINK or ZB_FILE_NOT_READ */
  size_t offset;    /* out: where in buf the file's bytes start */
  int nofollow;     /* in: a symbolic link at path is not followed but reported (ZB_FILE_LINK;
                       POSIX O_NOFOLLOW: the last component only; ignored on Windows) */
} zb_file_read;

/* Read items[0..n) one after another, each whole file at the next free position of
 * buf[0..cap), and stop before the first file that does not fit in the space left:
 * *done is then its index and its size is set (offset unspecified); a file larger than cap
 * itself can never fit and is the caller's to read another way.  Missing files (no such
 * path, a directory, not a regular file) get ZB_FILE_MISSING and take no space, as do the
 * symbolic links of nofollow items (ZB_FILE_LINK: the caller resolves them by its policy).
 * Errors: ZB_EIO, *done the failing item and *os_error errno / GetLastError(), or
 * ZB_FILE_CHANGED when the file shrank while it was read (a concurrent writer). */
zb_status zb_read_files(zb_file_read *items, size_t n, uint8_t *buf, size_t cap, size_t *done, int *os_error);

/* An open file for positioned reads (the handle or descriptor, whatever the platform's is). */
typedef struct {
  intptr_t h;
} zb_file;

/* Open path for reading: 1 (opened, *size its size), 0 (no regular file there: missing, a
 * directory, a FIFO...), or -1 (*os_error set). */
int zb_file_open(const char *path, zb_file *f, int64_t *size, int *os_error);

/* zb_file_open; with nofollow, 2 (not opened) when path's last component is a symbolic link
 * (POSIX O_NOFOLLOW; on Windows nofollow is ignored). */
int zb_file_open_ex(const char *path, int nofollow, zb_file *f, int64_t *size, int *os_error);

/* Read n bytes at offset into dst: the count read (fewer than n only at end of file), or -1
 * (*os_error set).  Does not move a file position that other readers share. */
int64_t zb_file_pread(zb_file f, uint8_t *dst, size_t n, uint64_t offset, int *os_error);

void zb_file_close(zb_file f);

/* Write all n bytes of src at offset of an open file (f.h: a descriptor opened for writing, a
 * HANDLE on Windows): 0, or -1 (*os_error set). */
int zb_file_pwrite(zb_file f, const uint8_t *src, size_t n, uint64_t offset, int *os_error);

/* Write n bytes to a new file at path, atomically: they go to a new file at tmp (created
 * exclusively: it must not exist; mode 0666 less the umask), which is flushed to the device
 * when do_fsync, closed and renamed over path.  Readers see the old file or the new one, never
 * part of one.  On failure the temporary file is removed and ZB_EIO returned with *os_error
 * the errno / GetLastError() and *stage where it failed: ZB_WRITE_CREATE (creating tmp: e.g. a
 * missing directory), ZB_WRITE_DATA (writing, flushing or closing it) or ZB_WRITE_RENAME.
 * Paths are file-system bytes (UTF-8 on Windows). */
enum { ZB_WRITE_CREATE = 1, ZB_WRITE_DATA = 2, ZB_WRITE_RENAME = 3 };
zb_status zb_write_file_atomic(const char *path, const char *tmp, const void *data, size_t n, int do_fsync,
                               int *os_error, int *stage);

#ifdef __cplusplus
}
#endif
#endif
