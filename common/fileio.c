/* SPDX-License-Identifier: ISC */
/* Files read whole; atomic, durable replacement of a file's content. */
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

ssize_t
fileio_read_upto(int fd, void *buf, size_t size)
{
	size_t off = 0;
	ssize_t n;

	while (off < size) {
		n = read(fd, (char *)buf + off, size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

/* A first buffer: the file's size when fd is one (to the cap), else 4 KiB. */
static size_t
fileio_first_size(int fd, size_t max)
{
	struct stat st;
	size_t size = 4096;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		size = (size_t)st.st_size +
		    1; /* + 1: the end is seen at once */
	return size > max + 1 ? max + 1 : size;
}

int
fileio_read_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
	size_t len = 0, size = fileio_first_size(fd, max);
	char *buf = NULL, *bigger;
	ssize_t n;

	for (;;) {
		/* One byte more than max: a file of max bytes fits. */
		if ((bigger = realloc(buf, size + 1)) == NULL) {
			free(buf);
			return -ENOMEM;
		}
		buf = bigger;
		if ((n = fileio_read_upto(fd, buf + len, size - len)) < 0) {
			free(buf);
			return (int)n;
		}
		len += (size_t)n;
		if (len < size)
			break;
		if (len > max) {
			free(buf);
			return -EFBIG;
		}
		size = size > (max + 1) / 2 ? max + 1 : size * 2;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int
fileio_read_all(const char *path, size_t max, unsigned flags, char **ret,
    size_t *ret_len)
{
	int fd, r = 0;
	struct stat st;

	fd = open(path,
	    O_RDONLY | O_CLOEXEC |
		((flags & FILEIO_NOFOLLOW) != 0 ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	if ((flags & FILEIO_REGULAR) != 0) {
		if (fstat(fd, &st) < 0)
			r = -errno;
		else if (!S_ISREG(st.st_mode))
			r = -EINVAL;
	}
	/* After fsync the pages are clean: dropping them makes the read
	 * come from the device, not from what write() left. */
	if (r == 0 && (flags & FILEIO_UNCACHED) != 0)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (r == 0)
		r = fileio_read_fd(fd, max, ret, ret_len);
	close(fd);
	return r;
}
