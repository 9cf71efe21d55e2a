/* SPDX-License-Identifier: ISC */
/* Files read whole, and replaced whole and durably (write aside, fsync,
 * rename, dir fsync). */
#ifndef MCPD_FILEIO_H
#define MCPD_FILEIO_H

#include <sys/types.h>

#include <stddef.h>

/*
 * Replaces path by the len bytes of buf, so that after a crash path holds
 * either its old or its new content: writes them to a new file "<path>.tmp"
 * (created with O_EXCL and given exactly mode, whatever the umask; a stale
 * one left by a crash is removed first, anything else in the way is left
 * alone and fails), fsyncs it, renames it over path and fsyncs the
 * directory. Returns 0, or a negative errno with *cause naming the step
 * that failed and its path; the temporary file is gone either way. Before
 * the rename path is untouched; a failure of the last fsync comes after
 * it, when path already holds the new content.
 */
int fileio_write_atomic(const char *path, const void *buf, size_t len,
    mode_t mode, char **cause);
/*
 * fsyncs the directory that holds path, so that a file created or renamed
 * there lasts. 0, or a negative errno with *cause naming the directory.
 */
int fileio_sync_dir(const char *path, char **cause);

/*
 * Reads fd until size bytes or its end into buf, again after EINTR: the
 * number of bytes read, or a negative errno.
 */
ssize_t fileio_read_upto(int fd, void *buf, size_t size);

/*
 * Reads fd to its end into a new buffer (*ret, malloc'd, NUL-terminated
 * after its *ret_len bytes): 0, -EFBIG when it holds more than max bytes,
 * -ENOMEM, or the negative errno of a read.
 */
int fileio_read_fd(int fd, size_t max, char **ret, size_t *ret_len);

#define FILEIO_UNCACHED 0x1 /* read from the device (after an fsync) */
#define FILEIO_NOFOLLOW 0x2 /* a symbolic link is -ELOOP */
#define FILEIO_REGULAR	0x4 /* what is not a regular file is -EINVAL */

/*
 * Opens path and reads it whole as fileio_read_fd does; flags are
 * FILEIO_* above. -ENOENT when there is no file, else as open, fstat and
 * fileio_read_fd fail.
 */
int fileio_read_all(const char *path, size_t max, unsigned flags, char **ret,
    size_t *ret_len);

#endif
