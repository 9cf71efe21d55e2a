/* SPDX-License-Identifier: ISC */
/* Atomic, durable replacement of a file's content. */
#define _GNU_SOURCE 1 /* asprintf */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "fileio.h"

/* The directory part of path ("." for none, "/" for the root), new. */
static char *
fileio_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

int
fileio_sync_dir(const char *path, char **cause)
{
	char *dir = fileio_dirname(path);
	int fd, err = 0;

	if (dir == NULL)
		return errors_cause(cause, -ENOMEM, "out of memory");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err != 0)
		err = errors_cause(cause, -err, "cannot sync directory %s: %s",
		    dir, strerror(err));
	free(dir);
	return err;
}

/* Writes all len bytes of buf to fd: 0 or a negative errno. */
static int
fileio_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Fills the new temporary file fd (at tmp) and closes it. */
static int
fileio_fill(int fd, const char *tmp, const void *buf, size_t len, mode_t mode,
    char **cause)
{
	int r = 0;

	/* The mode asked for, not what the umask left of it. */
	if (fchmod(fd, mode) < 0) {
		r = -errno;
		r = errors_cause(cause, r, "cannot set the mode of %s: %s", tmp,
		    strerror(-r));
	} else if ((r = fileio_write_all(fd, buf, len)) < 0)
		r = errors_cause(cause, r, "cannot write %s: %s", tmp,
		    strerror(-r));
	else if (fsync(fd) < 0) {
		r = -errno;
		r = errors_cause(cause, r, "cannot sync %s: %s", tmp,
		    strerror(-r));
	}
	if (close(fd) < 0 && r == 0) {
		r = -errno;
		r = errors_cause(cause, r, "cannot close %s: %s", tmp,
		    strerror(-r));
	}
	return r;
}

int
fileio_write_atomic(const char *path, const void *buf, size_t len, mode_t mode,
    char **cause)
{
	char *tmp;
	int fd, r;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return errors_cause(cause, -ENOMEM, "out of memory writing %s",
		    path);
	/*
	 * A file left by a crash goes; a directory in the way does not
	 * (unlink fails on it) and is not ours to remove.
	 */
	if (unlink(tmp) < 0 && errno != ENOENT)
		fd = -1;
	else
		fd = open(tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		r = -errno;
		r = errors_cause(cause, r, "cannot create %s: %s", tmp,
		    strerror(-r));
	} else if ((r = fileio_fill(fd, tmp, buf, len, mode, cause)) < 0)
		unlink(tmp);
	else if (rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		r = errors_cause(cause, r, "cannot rename %s to %s: %s", tmp,
		    path, strerror(-r));
	} else
		/* Without this the rename itself may not survive a crash. */
		r = fileio_sync_dir(path, cause);
	free(tmp);
	return r;
}
