/* SPDX-License-Identifier: ISC */
/* mcpctl wait: polls mcpd/list until one server is ready (or failed). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcpctl.h"

#define CTL_WAIT_DEFAULT_S 60
#define CTL_WAIT_POLL_MS   200

static const struct option ctl_wait_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "appear", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int64_t
ctl_wait_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
ctl_wait_is(const json_t *row, const char *key, const char *target)
{
	const char *v = json_string_value(json_object_get(row, key));

	return v != NULL && strcmp(v, target) == 0;
}

/* The row target names (name, id, endpoint or container), or NULL. */
static const json_t *
ctl_wait_find(const json_t *servers, const char *target)
{
	const json_t *row;
	size_t i;

	json_array_foreach(servers, i, row) {
		if (ctl_wait_is(row, "name", target) ||
		    ctl_wait_is(row, "id", target) ||
		    ctl_wait_is(row, "endpoint", target) ||
		    ctl_wait_is(json_object_get(row, "container"), "name",
			target))
			return row;
	}
	return NULL;
}

/*
 * No server target and no --appear: says so at once, with the nearest
 * names; returns 1.
 */
static int
ctl_wait_missing(const json_t *servers, const char *target)
{
	const char **names = calloc(json_array_size(servers) + 1,
	    sizeof *names);
	const json_t *row;
	char *near = NULL;
	size_t i;

	if (names != NULL) {
		json_array_foreach(servers, i, row)
			names[i] = json_string_value(json_object_get(row,
			    "name"));
		near = nearest_names(target, names, json_array_size(servers),
		    "");
	}
	print_err("no server %s%s%s%s", target,
	    near != NULL ? "; did you mean " : "", near != NULL ? near : "",
	    near != NULL ? "?" : "");
	fprintf(stderr,
	    "see 'mcpctl list'; 'mcpctl wait --appear %s' waits for one that is not loaded yet\n",
	    target);
	free(near);
	free(names);
	return MCPCTL_EXIT_ERROR;
}

/* Says why the wait ended badly; returns 3. */
static int
ctl_wait_failed(const char *target, const json_t *row)
{
	const char *err = json_string_value(json_object_get(row, "last_error"));
	const char *name = json_string_value(json_object_get(row, "name"));

	print_err("%s failed%s%s", name, err != NULL ? ": " : "",
	    err != NULL ? err : "");
	fprintf(stderr,
	    "it will not start by itself; see why with 'mcpctl logs %s' and 'mcpctl inspect %s', then 'mcpctl reload %s'\n",
	    target, target, target);
	return MCPCTL_EXIT_UNREACHABLE;
}

static int
ctl_wait_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t secs = CTL_WAIT_DEFAULT_S;
	bool is_appear = false;
	const char *target, *state = NULL;
	const json_t *row;
	json_t *result = NULL;
	int64_t deadline;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":h", ctl_wait_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'a')
			is_appear = true;
		else if (c == 't')
			r = mcpctl_parse_positive(cmd, "--timeout", optarg,
			    "seconds", &secs);
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	target = argv[optind];
	deadline = ctl_wait_now_ms() + secs * 1000;
	for (;;) {
		json_decref(result);
		if ((r = mcpctl_request(m, "mcpd/list", json_object(),
			 &result)) != 0)
			return r;
		row = ctl_wait_find(json_object_get(result, "servers"), target);
		if (row == NULL && !is_appear) {
			r = ctl_wait_missing(json_object_get(result, "servers"),
			    target);
			json_decref(result);
			return r;
		}
		state = json_string_value(json_object_get(row, "state"));
		if (state != NULL && strcmp(state, "ready") == 0)
			break;
		if (state != NULL && strcmp(state, "failed") == 0) {
			r = ctl_wait_failed(target, row);
			json_decref(result);
			return r;
		}
		if (ctl_wait_now_ms() >= deadline) {
			if (row == NULL)
				print_err(
				    "no server %s appeared within %lld s; see 'mcpctl list'",
				    target, (long long)secs);
			else
				print_err(
				    "%s is not ready after %lld s (state: %s); see 'mcpctl logs %s'",
				    target, (long long)secs,
				    state ? state : "?", target);
			json_decref(result);
			return MCPCTL_EXIT_UNREACHABLE;
		}
		usleep(CTL_WAIT_POLL_MS * 1000);
	}
	if (m->is_json)
		print_json(row);
	else
		printf("%s is ready (generation %lld, %lld tool%s)\n",
		    json_string_value(json_object_get(row, "name")),
		    (long long)json_integer_value(json_object_get(row,
			"generation")),
		    (long long)json_integer_value(json_object_get(row,
			"tools")),
		    json_integer_value(json_object_get(row, "tools")) == 1 ?
			"" :
			"s");
	json_decref(result);
	return MCPCTL_EXIT_OK;
}

const struct mcpctl_cmd ctl_wait_cmd = {
	.name = "wait",
	.synopsis = "TARGET [--timeout SECONDS] [--appear]",
	.summary =
	    "wait until a server is ready (exit 0), failed or late (exit 3)",
	.help =
	    "  --timeout SECONDS  how long to wait (default 60)\n"
	    "  --appear           also wait for a server that is not listed yet\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Asks mcpd/list every 0.2 s. Exit 0 when it is ready; 3, with a\n"
	    "message, when it is failed or the time is up; 1, at once, when\n"
	    "no such server is listed (unless --appear).\n",
	.exec = ctl_wait_exec,
	.options = ctl_wait_options,
};
