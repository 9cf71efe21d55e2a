/* SPDX-License-Identifier: ISC */
/* Closing descriptors from a number up: close_range, else one by one. */
#define _GNU_SOURCE 1
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "fdclose.h"

/* The records getdents64(2) returns (glibc names it only with dirent.h). */
struct fdclose_dirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A decimal descriptor number, or -1 for ".", ".." and anything else. */
static int
fdclose_number(const char *s)
{
	int n = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || n > (INT32_MAX - 9) / 10)
			return -1;
		n = n * 10 + (*s - '0');
	}
	return n;
}

/*
 * Closes what /proc/self/fd lists at or above lowfd. Closing while the
 * directory is read is safe: its offset is a descriptor number, so the
 * listing goes on after the one closed.
 */
static int
fdclose_proc(int lowfd)
{
	char buf[4096];
	long n;
	int dir, fd;

	dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct fdclose_dirent *d =
			    (struct fdclose_dirent *)(buf + off);

			off += d->d_reclen;
			if ((fd = fdclose_number(d->d_name)) >= lowfd &&
			    fd != dir)
				close(fd);
		}
	close(dir);
	return n < 0 ? -EIO : 0;
}

int
fdclose_walk(int lowfd)
{
	struct rlimit rl;

	if (fdclose_proc(lowfd) == 0)
		return 0;
	/*
	 * No /proc: every number the limit allows (the hard one: a soft
	 * limit lowered since may hide descriptors above it).
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > INT32_MAX)
		return -EMFILE;
	for (rlim_t fd = (rlim_t)lowfd; fd < rl.rlim_max; fd++)
		close((int)fd);
	return 0;
}

int
fdclose_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return 0;
#endif
	return fdclose_walk(lowfd);
}
