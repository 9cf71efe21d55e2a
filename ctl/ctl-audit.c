/* SPDX-License-Identifier: ISC */
/* mcpctl audit: the audit log's lines, filtered, and with -f the new ones. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcpctl.h"

#define CTL_AUDIT_POLL_MS 200 /* how often -f looks for new lines */

static const struct option ctl_audit_options[] = {
	{ "follow", no_argument, NULL, 'f' },
	{ "agent", required_argument, NULL, 'a' },
	{ "server", required_argument, NULL, 's' },
	{ "since", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ctl_audit {
	const char *agent;
	const char *server;
	char since[32]; /* RFC 3339 prefix compared as text, or "" */
	bool is_json;
	char *part; /* a line not yet ended */
	size_t part_len;
};

/* --since: RFC 3339 UTC (a prefix of it), or N followed by s, m, h or d. */
static int
ctl_audit_since(const struct mcpctl_cmd *cmd, const char *s,
    struct ctl_audit *a)
{
	char *end;
	long long n;
	time_t t;
	struct tm tm;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno == 0 && end != s && n >= 0 && end[0] != '\0' &&
	    end[1] == '\0' && strchr("smhd", end[0]) != NULL) {
		n *= end[0] == 's' ? 1 :
		    end[0] == 'm'  ? 60 :
		    end[0] == 'h'  ? 3600 :
				     86400;
		t = time(NULL) - (time_t)n;
		gmtime_r(&t, &tm);
		strftime(a->since, sizeof a->since, "%Y-%m-%dT%H:%M:%S", &tm);
		return 0;
	}
	if (strlen(s) >= 4 && strlen(s) < sizeof a->since &&
	    strspn(s, "0123456789-T:.Z") == strlen(s)) {
		snprintf(a->since, sizeof a->since, "%s", s);
		return 0;
	}
	return mcpctl_usage(cmd,
	    "--since needs a UTC time (2026-12-03T07:55:00Z, or a prefix of one) or an age (30s, 10m, 2h, 1d), not '%s'",
	    s);
}

static bool
ctl_audit_is_field(const json_t *rec, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(rec, key));

	return want == NULL || (v != NULL && strcmp(v, want) == 0);
}

/* "2026-12-03T07:55:01.123Z  agent  server  tool  outcome  0.412 ms". */
static void
ctl_audit_human(const json_t *rec)
{
	const json_t *err = json_object_get(rec, "error");
	const char *server = json_string_value(json_object_get(rec, "server"));
	const char *kind = json_string_value(json_object_get(err, "kind"));
	char *tool = print_value(json_object_get(rec, "tool"));

	printf("%s  %s  %s  %s  %s",
	    json_string_value(json_object_get(rec, "time")),
	    json_string_value(json_object_get(rec, "agent")),
	    server != NULL ? server : "-", tool != NULL ? tool : "?",
	    json_string_value(json_object_get(rec, "outcome")));
	if (json_is_object(err))
		printf(" (%lld%s%s)",
		    (long long)json_integer_value(json_object_get(err, "code")),
		    kind != NULL ? " " : "", kind != NULL ? kind : "");
	printf("  %.3f ms\n",
	    json_number_value(json_object_get(rec, "duration_ms")));
	free(tool);
}

/* One line of the log: printed when the filters take it. */
static void
ctl_audit_line(struct ctl_audit *a, const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, 0, NULL);
	const char *time = json_string_value(json_object_get(rec, "time"));

	if (rec == NULL || time == NULL)
		fprintf(stderr,
		    "mcpctl: audit: a line that is not a record: %.*s\n",
		    (int)len, line);
	else if (ctl_audit_is_field(rec, "agent", a->agent) &&
	    ctl_audit_is_field(rec, "server", a->server) &&
	    strncmp(time, a->since, strlen(a->since)) >= 0) {
		if (a->is_json)
			printf("%.*s\n", (int)len, line);
		else
			ctl_audit_human(rec);
	}
	json_decref(rec);
}

/* What fd has until its end, line by line (a part kept for later). */
static void
ctl_audit_drain(struct ctl_audit *a, int fd)
{
	char buf[65536], *nl, *p;
	ssize_t n;
	size_t left;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		a->part = realloc(a->part, a->part_len + (size_t)n);
		if (a->part == NULL)
			abort();
		memcpy(a->part + a->part_len, buf, (size_t)n);
		a->part_len += (size_t)n;
		p = a->part;
		left = a->part_len;
		while ((nl = memchr(p, '\n', left)) != NULL) {
			ctl_audit_line(a, p, (size_t)(nl - p));
			left -= (size_t)(nl - p) + 1;
			p = nl + 1;
		}
		memmove(a->part, p, left);
		a->part_len = left;
	}
	fflush(stdout);
}

static void
ctl_audit_file(struct ctl_audit *a, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	ctl_audit_drain(a, fd);
	a->part_len = 0;
	close(fd);
}

/*
 * After a rotation: the files between the one fd was (now path.K, found
 * by its inode) and path itself, which came and went while mcpctl slept.
 */
static void
ctl_audit_between(struct ctl_audit *a, const char *path, long long files,
    const struct stat *was)
{
	struct stat st;
	long long k = 0;
	char *name;

	for (long long i = 1; i <= files && k == 0; i++) {
		if (asprintf(&name, "%s.%lld", path, i) < 0)
			abort();
		if (stat(name, &st) == 0 && st.st_ino == was->st_ino &&
		    st.st_dev == was->st_dev)
			k = i;
		free(name);
	}
	for (long long i = k - 1; i > 0; i--) {
		if (asprintf(&name, "%s.%lld", path, i) < 0)
			abort();
		ctl_audit_file(a, name);
		free(name);
	}
}

/* New lines as they come; across a rotation, the new file from its start. */
static int
ctl_audit_follow(struct ctl_audit *a, const char *path, long long files)
{
	struct timespec pause = { 0, CTL_AUDIT_POLL_MS * 1000000L };
	struct stat st, now;
	/*
	 * The file is read from its start on the descriptor then followed:
	 * no line written between a first read and the follow is lost.
	 */
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	for (;;) {
		if (fd >= 0)
			ctl_audit_drain(a, fd);
		nanosleep(&pause, NULL);
		if (stat(path, &now) < 0)
			continue;
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == now.st_ino &&
		    st.st_dev == now.st_dev)
			continue;
		/* Rotated: what the old file got last, then the new ones. */
		if (fd >= 0) {
			ctl_audit_drain(a, fd);
			a->part_len = 0;
			ctl_audit_between(a, path, files, &st);
			close(fd);
		}
		a->part_len = 0;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return MCPCTL_EXIT_OK;
}

static int
ctl_audit_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	struct ctl_audit a = { 0 };
	bool is_follow = false;
	json_t *status, *audit;
	const char *path;
	char *old;
	long long files;
	int c, r = 0;

	a.is_json = m->is_json;
	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":fa:s:t:h", ctl_audit_options)) !=
		-1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		else if (c == 'f')
			is_follow = true;
		else if (c == 'a')
			a.agent = optarg;
		else if (c == 's')
			a.server = optarg;
		else if (c == 't')
			r = ctl_audit_since(cmd, optarg, &a);
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if (r != 0 || (r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	/* mcpd owns the file and says where it is; mcpctl only reads it. */
	if ((r = mcpctl_request(m, "mcpd/status", json_object(), &status)) != 0)
		return r;
	audit = json_object_get(status, "audit");
	path = json_string_value(json_object_get(audit, "path"));
	if (!json_is_true(json_object_get(audit, "on")) || path == NULL) {
		print_err("the audit log is off (mcpd runs with --audit off)");
		json_decref(status);
		return MCPCTL_EXIT_ERROR;
	}
	files = (long long)json_integer_value(json_object_get(audit, "files"));
	/* The oldest first: audit.jsonl.N ... .1, then audit.jsonl. */
	for (long long i = files; i > 0; i--) {
		if (asprintf(&old, "%s.%lld", path, i) < 0)
			abort();
		ctl_audit_file(&a, old);
		free(old);
	}
	if (is_follow)
		r = ctl_audit_follow(&a, path, files);
	else
		ctl_audit_file(&a, path);
	free(a.part);
	json_decref(status);
	return r;
}

const struct mcpctl_cmd ctl_audit_cmd = {
	.name = "audit",
	.synopsis = "[-f] [--agent A] [--server S] [--since TIME]",
	.summary =
	    "print the audit log: one line per call of a tool, prompt or resource",
	.help =
	    "  -f, --follow       then print each new record as it comes\n"
	    "                     (across rotations), until Ctrl-C\n"
	    "      --agent A      only calls of agent A\n"
	    "      --server S     only calls to server S\n"
	    "      --since TIME   only calls from TIME on: UTC\n"
	    "                     (2026-12-03T07:55:00Z or a prefix) or an\n"
	    "                     age (30s, 10m, 2h, 1d)\n"
	    "  -h, --help         this text\n"
	    "With --json, each record as mcpd wrote it, one per line.\n",
	.exec = ctl_audit_exec,
	.options = ctl_audit_options,
};
