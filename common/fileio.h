/* SPDX-License-Identifier: ISC */
/* Files replaced whole and durably: write aside, fsync, rename, dir fsync. */
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

#endif
