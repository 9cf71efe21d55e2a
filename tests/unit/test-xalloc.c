/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of common/xalloc.c: after xalloc_json(), jansson out of
 * memory ends the program the way xmalloc does, instead of a NULL that a
 * caller would take for bad input. malloc fails on demand (malloc-spy.h):
 * a real machine cannot be made to run out of memory at one call.
 */
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "malloc-spy.h"
#include "tap.h"
#include "xalloc.h"

/* fatalx's message ends the child at once, with a status that says so. */
static void
test_sink(int priority, const char *server, const char *msg)
{
	(void)server;
	_exit(priority == LOG_CRIT && strcmp(msg, "out of memory") == 0 ? 42 :
									  43);
}

/* In a child: json_object() with malloc failing; its exit status. */
static int
run_child(bool is_hooked)
{
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		json_t *j;

		log_init(test_sink, 0, "test");
		if (is_hooked)
			xalloc_json();
		malloc_spy_is_failing = true;
		j = json_object();
		malloc_spy_is_failing = false;
		_exit(j == NULL ? 2 : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
test_json_out_of_memory_is_fatal(void)
{
	if (!MALLOC_SPY) {
		printf("# skipped: built with AddressSanitizer, whose malloc "
		       "cannot be made to fail here\n");
		return;
	}
	/* Without it: a NULL, as a parse error or a bad value would give. */
	TAP_CHECK_INT(run_child(false), 2);
	/* With it: fatalx("out of memory"). */
	TAP_CHECK_INT(run_child(true), 42);
}

static const struct tap_test tests[] = {
	{ "jansson out of memory is fatal after xalloc_json",
	    test_json_out_of_memory_is_fatal },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
