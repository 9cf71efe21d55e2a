/* SPDX-License-Identifier: ISC */
/*
 * doc/states.md draws each state machine from its table (mcpd-fsm.c): the
 * blocks between "<!-- states:NAME -->" and "<!-- /states:NAME -->" must
 * be what the table prints now, so the picture cannot drift. Run with
 * MCPD_WRITE_STATES=1 (make states-doc) to write them anew. And the moves
 * the tables allow are checked as fsm_move checks them.
 */
#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "mcpd-stubs.h"
#include "tap.h"

#define STATES_DOC "doc/states.md"

/* The block of machine m as doc/states.md holds it (new). */
static char *
states_block(const struct fsm *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		abort();
	fprintf(f, "<!-- states:%s -->\n```text\n", m->name);
	fsm_print(m, f);
	fprintf(f, "```\n\n```dot\n");
	fsm_print_dot(m, f);
	fprintf(f, "```\n<!-- /states:%s -->", m->name);
	fclose(f);
	return text;
}

/* Where machine m's block is in doc (begin, end past it), or false. */
static bool
states_find(const char *doc, const struct fsm *m, const char **begin,
    const char **end)
{
	char open[64], close[64];

	snprintf(open, sizeof open, "<!-- states:%s -->", m->name);
	snprintf(close, sizeof close, "<!-- /states:%s -->", m->name);
	if ((*begin = strstr(doc, open)) == NULL ||
	    (*end = strstr(*begin, close)) == NULL)
		return false;
	*end += strlen(close);
	return true;
}

static void
test_doc_is_the_tables(void)
{
	bool is_write = getenv("MCPD_WRITE_STATES") != NULL;
	char *doc = NULL, *block, *out;
	const char *begin, *end;
	size_t len;

	TAP_REQUIRE(fileio_read_all(STATES_DOC, 1 << 20, FILEIO_REGULAR, &doc,
			&len) == 0,
	    "cannot read %s (run from the top of the tree)", STATES_DOC);
	for (size_t i = 0; fsm_all[i] != NULL; i++) {
		block = states_block(fsm_all[i]);
		if (!states_find(doc, fsm_all[i], &begin, &end))
			TAP_CHECK(false, "%s has no block for %s", STATES_DOC,
			    fsm_all[i]->name);
		else if (is_write) {
			TAP_REQUIRE(asprintf(&out, "%.*s%s%s",
					(int)(begin - doc), doc, block,
					end) >= 0,
			    "asprintf");
			free(doc);
			doc = out;
		} else
			TAP_CHECK((size_t)(end - begin) == strlen(block) &&
				memcmp(begin, block, strlen(block)) == 0,
			    "%s: the block of %s is not its table now; run make states-doc:\n%s",
			    STATES_DOC, fsm_all[i]->name, block);
		free(block);
	}
	if (is_write)
		TAP_CHECK(fileio_write_atomic(STATES_DOC, doc, strlen(doc),
			      0644, NULL) == 0,
		    "cannot write %s", STATES_DOC);
	free(doc);
}

static void
test_moves(void)
{
	for (size_t i = 0; fsm_all[i] != NULL; i++) {
		const struct fsm *m = fsm_all[i];

		TAP_CHECK(m->n <= 16, "%s has %u states", m->name, m->n);
		for (unsigned s = 0; s < m->n; s++) {
			TAP_CHECK(m->states[s] != NULL && *m->states[s] != '\0',
			    "%s: state %u has no name", m->name, s);
			/* Staying is no move: always allowed. */
			TAP_CHECK(fsm_move(m, (int)s, (int)s, "test") == (int)s,
			    "%s: %s to itself", m->name, m->states[s]);
		}
	}
}

/* The machine called name, or NULL. */
static const struct fsm *
states_machine(const char *name)
{
	for (size_t i = 0; fsm_all[i] != NULL; i++)
		if (strcmp(fsm_all[i]->name, name) == 0)
			return fsm_all[i];
	return NULL;
}

/* A few moves each way, as the code relies on them. */
static void
test_known_moves(void)
{
	const struct fsm *session = states_machine("session");
	const struct fsm *server = states_machine("server");

	TAP_REQUIRE(session != NULL && server != NULL, "machines missing");
	TAP_CHECK(fsm_allows(session, 0, 1), "session new -> initializing");
	TAP_CHECK(!fsm_allows(session, 3, 2), "session ready -> listing");
	TAP_CHECK(!fsm_allows(server, 5, 0), "server stopped -> starting");
	TAP_CHECK(strcmp(fsm_state_name(server, 2), "ready") == 0,
	    "server state 2 is %s", fsm_state_name(server, 2));
	TAP_CHECK(strcmp(fsm_state_name(server, 99), "?") == 0, "no state 99");
}

/*
 * A release build logs each illegal move once and goes on; once per
 * machine: the same move by number in another machine is logged too.
 */
static void
test_release_logs_each_machine(void)
{
#ifdef MCPD_STRICT_STATES
	TAP_CHECK(true, "a strict build stops at the first illegal move");
#else
	const struct fsm *server = states_machine("server");
	const struct fsm *container = states_machine("container");
	int fds[2], status;
	char buf[2048];
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	TAP_REQUIRE(server != NULL && container != NULL, "machines missing");
	TAP_REQUIRE(pipe(fds) == 0, "pipe");
	if ((pid = fork()) == 0) {
		dup2(fds[1], 2);
		unsetenv("MCPD_STRICT_STATES");
		/* idle -> connecting and dead -> named: both 7 -> 1. */
		fsm_move(server, 7, 1, "s");
		fsm_move(server, 7, 1, "s");
		fsm_move(container, 7, 1, "c");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof buf - 1 &&
	    (n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fds[0]);
	TAP_CHECK_INT(waitpid(pid, &status, 0), pid);
	TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x",
	    status);
	TAP_CHECK(
	    strstr(buf,
		"BUG: server s: illegal state transition idle -> connecting") !=
		    NULL &&
		strstr(strstr(buf, "idle -> connecting") + 1,
		    "idle -> connecting") == NULL,
	    "the server's move once: %s", buf);
	TAP_CHECK(
	    strstr(buf,
		"BUG: container c: illegal state transition dead -> named") !=
		NULL,
	    "the container's move: %s", buf);
#endif
}

static const struct tap_test tests[] = {
	{ "doc/states.md draws every machine's table", test_doc_is_the_tables },
	{ "the tables name every state", test_moves },
	{ "known moves are allowed or not", test_known_moves },
	{ "a release build logs an illegal move once per machine",
	    test_release_logs_each_machine },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
