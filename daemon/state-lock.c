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

/*
 * What the holder wrote into the lock file: its pid (0 if none) and, into
 * sock (cut to its size), the socket it listens on ("" if none).
 */
static long
lock_holder(int fd, char *sock, size_t size)
{
	char buf[4096], *nl;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	sock[0] = '\0';
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')) != NULL) {
		nl++;
		nl[strcspn(nl, "\n")] = '\0';
		snprintf(sock, size, "%s", nl);
	}
	return strtol(buf, NULL, 10);
}

/* The cause when another mcpd holds dir, saying where it listens. */
static void
lock_busy(char **cause, int fd, const char *dir, const char *path)
{
	char sock[2048];
	long holder = lock_holder(fd, sock, sizeof sock);

	if (holder > 0 && sock[0] != '\0')
		errors_cause(cause, -EBUSY,
		    "another mcpd (pid %ld, listening on %s) holds the state directory %s (lock %s); use it (mcpctl -s %s), stop it first (mcpctl -s %s shutdown), or give this one another state directory with -S",
		    holder, sock, dir, path, sock, sock);
	else if (holder > 0)
		errors_cause(cause, -EBUSY,
		    "another mcpd (pid %ld) holds the state directory %s (lock %s); stop it first (mcpctl shutdown), or give this one another state directory with -S",
		    holder, dir, path);
	else
		errors_cause(cause, -EBUSY,
		    "another mcpd holds the state directory %s (lock %s); stop it first (mcpctl shutdown), or give this one another state directory with -S",
		    dir, path);
}

int
lock_state_dir(const char *dir, const char *socket_path, char **cause)
{
	char *path, *mine;
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

		if (err == EWOULDBLOCK)
			lock_busy(cause, fd, dir, path);
		else
			errors_cause(cause, -err, "cannot lock %s: %s", path,
			    strerror(err));
		close(fd);
		free(path);
		return err == EWOULDBLOCK ? -EBUSY : -err;
	}
	len = xasprintf(&mine, "%ld\n%s\n", (long)getpid(), socket_path);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, mine, (size_t)len, 0) != len) {
		errors_cause(cause, -errno, "cannot write %s: %s", path,
		    strerror(errno));
		close(fd);
		free(mine);
		free(path);
		return -EIO;
	}
	free(mine);
	free(path);
	return fd; /* held open (and locked) until mcpd exits */
}
