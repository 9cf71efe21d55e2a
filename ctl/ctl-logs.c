/* SPDX-License-Identifier: ISC */
/* mcpctl logs: the last stderr lines of one server, and with -f the new ones. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

static const struct option ctl_logs_options[] = {
	{ "lines", required_argument, NULL, 'n' },
	{ "follow", no_argument, NULL, 'f' },
	{ "timestamps", no_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Set by -t: each line after the time mcpd read it. */
static bool ctl_logs_is_timed;

/* One line, after its time with -t (a time mcpd did not send: "-"). */
static void
ctl_logs_line(const char *line, const json_t *time)
{
	static const char note[] = "[mcpd ";
	const char *end;

	if (ctl_logs_is_timed) {
		printf("%s ",
		    json_is_string(time) ? json_string_value(time) : "-");
		/* mcpd's own note says its time too: once is enough. */
		if (strncmp(line, note, sizeof note - 1) == 0 &&
		    (end = strstr(line, "] ")) != NULL) {
			fputs("[mcpd] ", stdout);
			line = end + 2;
		}
	}
	print_line(stdout, line);
}

static void
ctl_logs_print(const json_t *result)
{
	const json_t *line, *times = json_object_get(result, "times");
	size_t i;

	json_array_foreach(json_object_get(result, "lines"), i, line)
		if (json_is_string(line))
			ctl_logs_line(json_string_value(line),
			    json_array_get(times, i));
	/* A remote server has no stderr: mcpd says so. */
	if (json_is_string(json_object_get(result, "note")))
		fprintf(stderr, "mcpctl: %s\n",
		    json_string_value(json_object_get(result, "note")));
}

/* Lines of history that -n 0 -f skips (mcpd sends them first). */
static size_t ctl_logs_skip;

/* An mcpd/log of request id: its line, as it comes (--json: as JSON). */
static void
ctl_logs_follow_print(void *arg, json_int_t id, const char *method,
    const json_t *params)
{
	const json_t *req = json_object_get(params, "request");
	const char *line = json_string_value(json_object_get(params, "line"));
	const bool *is_json = arg;

	if (strcmp(method, "mcpd/log") != 0 || !json_is_integer(req) ||
	    json_integer_value(req) != id || line == NULL)
		return;
	if (ctl_logs_skip > 0) {
		ctl_logs_skip--;
		return;
	}
	if (*is_json)
		print_json(params);
	else
		ctl_logs_line(line, json_object_get(params, "time"));
	fflush(stdout);
}

/* Following ended (the server went, mcpd stops): say why, on stderr. */
static void
ctl_logs_follow_ended(const json_t *result)
{
	const char *why = json_string_value(json_object_get(result, "ended"));

	print_err("stopped following %s: %s",
	    json_string_value(json_object_get(result, "server")),
	    why != NULL ? why : "the daemon ended it");
}

/* -n LINES: 0 or more; 0 and *ret, or 2. */
static int
ctl_logs_lines(const struct mcpctl_cmd *cmd, const char *s, json_int_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > INT32_MAX)
		return mcpctl_usage(cmd,
		    "-n needs a number of lines (0 or more), not '%s'", s);
	*ret = v;
	return 0;
}

/*
 * -n 0: none of the old lines. mcpd's 0 means all, so ask for one (the
 * last, if any) and skip what comes of it; 0 or the exit status.
 */
static int
ctl_logs_none(struct mcpctl *m, json_t *params, bool is_follow)
{
	json_t *result;
	int r;

	r = mcpctl_request(m, "mcpd/logs",
	    json_pack("{s:O, s:i}", "server", json_object_get(params, "server"),
		"lines", 1),
	    &result);
	if (r != 0)
		return r;
	ctl_logs_skip = json_array_size(json_object_get(result, "lines"));
	json_decref(result);
	if (is_follow)
		json_object_set_new(params, "lines", json_integer(1));
	return 0;
}

static int
ctl_logs_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t lines = -1;
	json_t *params;
	bool is_follow = false;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":n:fth", ctl_logs_options)) != -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'f')
			is_follow = true;
		else if (c == 't')
			ctl_logs_is_timed = true;
		else if (c != 'n')
			return mcpctl_bad_option(cmd, c, argv);
		else
			r = ctl_logs_lines(cmd, optarg, &lines);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, "SERVER")) != 0)
		return r;
	params = json_pack("{s:s}", "server", argv[optind]);
	if (lines > 0)
		json_object_set_new(params, "lines", json_integer(lines));
	if (lines == 0 && (r = ctl_logs_none(m, params, is_follow)) != 0) {
		json_decref(params);
		return r;
	}
	if (lines == 0 && !is_follow) {
		json_decref(params);
		if (m->is_json)
			printf("{\"lines\":[]}\n");
		return MCPCTL_EXIT_OK;
	}
	if (!is_follow)
		return mcpctl_run(m, "mcpd/logs", params, ctl_logs_print);
	json_object_set_new(params, "follow", json_true());
	conn_set_notify(ctl_logs_follow_print, &m->is_json);
	conn_set_timeout(0); /* following has no end to wait for */
	return mcpctl_run(m, "mcpd/logs", params, ctl_logs_follow_ended);
}

const struct mcpctl_cmd ctl_logs_cmd = {
	.name = "logs",
	.synopsis = "SERVER [-n LINES] [-f] [-t]",
	.summary = "print the last lines the server wrote to its stderr",
	.help =
	    "  -n, --lines LINES  how many lines (default 100; 0: none, so\n"
	    "                     that -n 0 -f prints only new ones)\n"
	    "  -f, --follow       then print each new line as it comes,\n"
	    "                     until the server is unloaded or mcpd\n"
	    "                     stops (or Ctrl-C); no --request-timeout\n"
	    "  -t, --timestamps   each line after the time mcpd read it,\n"
	    "                     ISO 8601 in UTC with milliseconds\n"
	    "                     (2026-12-03T07:27:55.123Z)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The lines are kept across a restart of mcpd (mcpctl shutdown,\n"
	    "SIGTERM): after one, the lines of before come first, then the\n"
	    "line \"-- mcpd restarted at <time> --\". With --json the\n"
	    "answer has \"times\" beside \"lines\" (and -f's notifications\n"
	    "a \"time\").\n",
	.exec = ctl_logs_exec,
	.options = ctl_logs_options,
};
