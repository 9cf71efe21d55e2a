/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of common/fdclose.c: everything from a number up is closed,
 * by close_range and by the fallback that walks /proc/self/fd (called
 * directly: the kernel here has close_range, and the fallback is what runs
 * where it does not; tests/integration/test_defects.py makes close_range
 * fail under a seccomp filter for the daemon).
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdclose.h"
#include "tap.h"

/* Descriptors the child opens: low ones, and one far up. */
static const int high_fds[] = { 100, 511, 1000 };

/*
 * In a child: opens descriptors, closes from 3 up with fn, and exits 0 when
 * 0-2 are still open and nothing else is (as /proc/self/fd and fcntl see
 * it); 2 when fn failed, 3 when a descriptor stayed open, 4 when 0-2 went.
 */
static int
run_child(int (*fn)(int))
{
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		int fd = open("/dev/null", O_RDONLY), p[2];

		for (size_t i = 0; i < TAP_COUNT(high_fds); i++)
			if (fd < 0 || dup2(fd, high_fds[i]) < 0)
				_exit(99);
		if (pipe(p) < 0)
			_exit(99);
		if (fn(3) < 0)
			_exit(2);
		for (int i = 3; i < 1024; i++)
			if (fcntl(i, F_GETFD) >= 0 || errno != EBADF)
				_exit(3);
		for (int i = 0; i < 3; i++)
			if (fcntl(i, F_GETFD) < 0)
				_exit(4);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
test_from_closes_all_above(void)
{
	TAP_CHECK_INT(run_child(fdclose_from), 0);
}

static void
test_walk_closes_all_above(void)
{
	TAP_CHECK_INT(run_child(fdclose_walk), 0);
}

static const struct tap_test tests[] = {
	{ "fdclose_from closes every descriptor from 3 up",
	    test_from_closes_all_above },
	{ "the fallback alone (no close_range) does the same",
	    test_walk_closes_all_above },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
