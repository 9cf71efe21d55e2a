/* SPDX-License-Identifier: ISC */
/* One daemon per state dir: an exclusive lock held for mcpd's whole life. */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "mcpd.h"

#define LOCK_FILE "mcpd.lock"

/* The pid the holder wrote into the lock file, or 0. */
static long
lock_holder(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

int
lock_state_dir(const char *dir, char **cause)
{
	char *path, pid[32];
	long holder;
	int fd, len;

	xasprintf(&path, "%s/%s", dir, LOCK_FILE);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		errors_cause(cause, -errno, "cannot open %s: %s", path,
		    strerror(errno));
		free(path);
		return -EIO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		holder = lock_holder(fd);
		if (err == EWOULDBLOCK && holder > 0)
			errors_cause(cause, -EBUSY,
			    "another mcpd (pid %ld) holds the state directory %s (lock %s); stop it first (mcpctl shutdown), or give this one another state directory with -S",
			    holder, dir, path);
		else if (err == EWOULDBLOCK)
			errors_cause(cause, -EBUSY,
			    "another mcpd holds the state directory %s (lock %s); stop it first (mcpctl shutdown), or give this one another state directory with -S",
			    dir, path);
		else
			errors_cause(cause, -err, "cannot lock %s: %s", path,
			    strerror(err));
		close(fd);
		free(path);
		return err == EWOULDBLOCK ? -EBUSY : -err;
	}
	len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		errors_cause(cause, -errno, "cannot write %s: %s", path,
		    strerror(errno));
		close(fd);
		free(path);
		return -EIO;
	}
	free(path);
	return fd; /* held open (and locked) until mcpd exits */
}
