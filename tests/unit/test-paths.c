/* SPDX-License-Identifier: ISC */
/* Unit tests of common/paths.c: the running program's own path. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "paths.h"
#include "tap.h"

static const char *test_self;

static void
test_self_exe(void)
{
	char *exe = paths_self_exe(), real[PATH_MAX];

	TAP_REQUIRE(realpath(test_self, real) != NULL, "realpath %s",
	    test_self);
	TAP_CHECK_STR(exe, real);
	free(exe);
}

/*
 * A copy of this test that deletes itself, then says where it runs: the
 * path it had, without the kernel's " (deleted)".
 */
static void
test_self_exe_deleted(void)
{
	char copy[] = "/tmp/test-paths.XXXXXX", *text = NULL;
	char got[PATH_MAX + 16] = "";
	int fd = mkstemp(copy), out[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	TAP_REQUIRE(fd >= 0, "mkstemp");
	TAP_REQUIRE(fileio_read_all(test_self, 64 << 20, 0, &text, &len) == 0,
	    "read %s", test_self);
	TAP_REQUIRE(write(fd, text, len) == (ssize_t)len, "write the copy");
	free(text);
	fchmod(fd, 0755);
	close(fd);
	TAP_REQUIRE(pipe(out) == 0, "pipe");
	if ((pid = fork()) == 0) {
		dup2(out[1], STDOUT_FILENO);
		execl(copy, copy, "--deleted", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	n = read(out[0], got, sizeof got - 1);
	close(out[0]);
	waitpid(pid, &status, 0);
	got[n > 0 ? n : 0] = '\0';
	TAP_CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	TAP_CHECK_STR(got, copy);
	unlink(copy);
}

static const struct tap_test tests[] = {
	{ "paths_self_exe names the running program", test_self_exe },
	{ "... without \" (deleted)\" once it was replaced on disk",
	    test_self_exe_deleted },
};

int
main(int argc, char **argv)
{
	char *exe;

	if (argc == 2 && strcmp(argv[1], "--deleted") == 0) {
		if (unlink(argv[0]) < 0 || (exe = paths_self_exe()) == NULL)
			return 1;
		fputs(exe, stdout);
		free(exe);
		return 0;
	}
	test_self = argv[0];
	return tap_run(tests, TAP_COUNT(tests));
}
