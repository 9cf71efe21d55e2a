/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of daemon/server-call.c: arguments that the scanner passed
 * but jansson refuses fail that one call, and mcpd goes on.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "control-int.h"
#include "log.h"
#include "mcpd-stubs.h"
#include "server-int.h"
#include "tap.h"

/* The last warning logged, for the child to check. */
static char warned[1024];

static void
test_sink(int priority, const char *server, const char *msg)
{
	(void)server;
	if (priority == LOG_WARNING)
		snprintf(warned, sizeof warned, "%s", msg);
}

/* Reads one line (the answer) from fd into buf; false on EOF first. */
static bool
read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return false;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return true;
		}
		n++;
	}
	return false;
}

/*
 * The child: one control client on a socketpair, one request of its, and
 * server_call_text with arguments jansson refuses. Exits 0 when the
 * request got the internal error and the warning was logged; 2 and 3 say
 * which check failed. (A fatalx() is exit status 1.)
 */
static void __attribute__((noreturn)) child_call(void)
{
	static const char args[] = "{\"a\":\"\\u0000\"}";
	static const char want_answer[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,"
	    "\"message\":\"mcpd could not parse the arguments it had checked: "
	    "\\\\u0000 is not allowed without JSON_ALLOW_NUL near "
	    "'\\\"\\\\u0000\\\"'\"}}";
	static const char want_warning[] =
	    "ts: call of echo: the scanner took arguments that jansson refuses (\\u0000 is not allowed without JSON_ALLOW_NUL near '\"\\u0000\"' at byte 13); the call fails";
	struct server s = { 0 };
	struct client *c;
	struct request *req;
	char answer[1024];
	json_t *id = json_integer(7);
	int sv[2];

	log_init(test_sink, 0, "mcpd");
	mcpd_opts.max_message = 1 << 20;
	mcpd_opts.max_client_output = 1 << 20;
	if ((mcpd_base = event_base_new()) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		_exit(99);
	c = control_client_new(sv[0], sv[0], "default", NULL);
	req = control_request_new(c, id);
	json_decref(id);
	/* No session: the call takes the parsing path. */
	s.name = "ts";
	server_call_text(&s, "echo", args, strlen(args), 1000,
	    control_server_reply(req, NULL), NULL);
	/* The answer goes out from the loop. */
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	if (!read_line(sv[1], answer, sizeof answer) ||
	    strcmp(answer, want_answer) != 0) {
		fprintf(stderr, "# answer: %s\n", answer);
		_exit(2);
	}
	if (strcmp(warned, want_warning) != 0) {
		fprintf(stderr, "# warning: %s\n", warned);
		_exit(3);
	}
	_exit(0);
}

/*
 * No input is known on which the scanner (common/jsonscan.c) and jansson
 * disagree: the scanner leaves \u0000, lone surrogates, long integers and
 * long exponents to the parser. So this drives the branch directly, with
 * arguments that jansson refuses as if the scanner had passed them.
 */
static void
test_refused_arguments_fail_one_call(void)
{
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) == 0)
		child_call();
	TAP_REQUIRE(pid > 0, "fork: %s", strerror(errno));
	TAP_REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the call should fail alone; the child ended with status %d (1 is fatalx, 2 a wrong answer, 3 a wrong warning)",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static const struct tap_test tests[] = {
	{ "arguments jansson refuses fail that call only",
	    test_refused_arguments_fail_one_call },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
