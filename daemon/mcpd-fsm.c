/* SPDX-License-Identifier: ISC */
/*
 * State machines: each object's state is one enum, its legal moves one
 * table, and every move goes through fsm_move, which checks it. An illegal
 * move is a bug: it aborts where bugs are looked for (MCPD_STRICT_STATES=1
 * in the environment, which the tests set, or a sanitizer build) and is
 * logged loudly, once per move, in a release build, where one object's bug
 * must not end every server (DESIGN 10; doc/states.md draws the tables).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "oauth-int.h"
#include "probe-int.h"
#include "server-int.h"
#include "session-int.h"

/* Moves already reported (release builds): from * FSM_MAX + to, by fsm. */
#define FSM_MAX	     16
#define FSM_MACHINES 8 /* machines with a report table of their own */

static bool
fsm_is_strict(void)
{
	static int strict = -1;

	if (strict < 0) {
#ifdef MCPD_STRICT_STATES
		strict = 1;
#else
		const char *v = getenv("MCPD_STRICT_STATES");

		strict = v != NULL && strcmp(v, "1") == 0;
#endif
	}
	return strict == 1;
}

bool
fsm_allows(const struct fsm *m, int from, int to)
{
	return from >= 0 && to >= 0 && (unsigned)from < m->n &&
	    (unsigned)to < m->n && (m->next[from] & (1u << to)) != 0;
}

/* Which machine's report table m uses: its place in fsm_all. */
static size_t
fsm_index(const struct fsm *m)
{
	size_t i;

	for (i = 0; fsm_all[i] != NULL && i < FSM_MACHINES - 1; i++)
		if (fsm_all[i] == m)
			break;
	return i;
}

int
fsm_move(const struct fsm *m, int from, int to, const char *who)
{
	static unsigned char reported[FSM_MACHINES][FSM_MAX * FSM_MAX];
	unsigned char *seen;

	if (from == to || fsm_allows(m, from, to))
		return to;
	if (fsm_is_strict())
		fatalx("BUG: %s %s: illegal state transition %s -> %s", m->name,
		    who, fsm_state_name(m, from), fsm_state_name(m, to));
	seen = reported[fsm_index(m)];
	if (from >= 0 && to >= 0 && from < FSM_MAX && to < FSM_MAX &&
	    !seen[from * FSM_MAX + to]) {
		seen[from * FSM_MAX + to] = 1;
		log_warnx("BUG: %s %s: illegal state transition %s -> %s "
			  "(please report it: mcpd goes on)",
		    m->name, who, fsm_state_name(m, from),
		    fsm_state_name(m, to));
	}
	return to;
}

void
fsm_check(const struct fsm *m, bool holds, const char *who, const char *what,
    int state)
{
	if (holds)
		return;
	if (fsm_is_strict())
		fatalx("BUG: %s %s: %s in state %s", m->name, who, what,
		    fsm_state_name(m, state));
	/* Rare, and each one worth seeing: no once-only table here. */
	log_warnx("BUG: %s %s: %s in state %s (please report it: mcpd goes on)",
	    m->name, who, what, fsm_state_name(m, state));
}

const char *
fsm_state_name(const struct fsm *m, int state)
{
	return state >= 0 && (unsigned)state < m->n ? m->states[state] : "?";
}

void
fsm_print(const struct fsm *m, FILE *f)
{
	for (unsigned from = 0; from < m->n; from++) {
		const char *sep = "";

		fprintf(f, "%-12s ->", m->states[from]);
		for (unsigned to = 0; to < m->n; to++)
			if (m->next[from] & (1u << to)) {
				fprintf(f, "%s %s", sep, m->states[to]);
				sep = ",";
			}
		fprintf(f, "%s\n", *sep == '\0' ? " (end)" : "");
	}
}

void
fsm_print_dot(const struct fsm *m, FILE *f)
{
	fprintf(f, "digraph %s {\n\trankdir=LR;\n", m->name);
	for (unsigned from = 0; from < m->n; from++)
		for (unsigned to = 0; to < m->n; to++)
			if (m->next[from] & (1u << to))
				fprintf(f, "\t\"%s\" -> \"%s\";\n",
				    m->states[from], m->states[to]);
	fprintf(f, "}\n");
}

const struct fsm *const fsm_all[] = { &server_fsm, &session_fsm, &probe_fsm,
	&oauth_fsm, &docker_fsm, NULL };
