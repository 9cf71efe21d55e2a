/* SPDX-License-Identifier: ISC */
/* What mcpctl prints: aligned tables, JSON lines, and errors with hints. */
#define _GNU_SOURCE 1 /* asprintf, timegm */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "xalloc.h"
#include "jsonrpc.h"
#include "mcpctl.h"

#define PRINT_GAP 2 /* spaces between columns */

struct print_table {
	size_t ncols;
	size_t nrows; /* the header row included */
	size_t width; /* widest line; 0 for no limit */
	char **cells; /* nrows * ncols */
	char **notes; /* one per row, or NULL */
};

/* Columns taken by s: UTF-8 code points, a fair guess for a terminal. */
static size_t
print_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* A copy in which control characters (but kept) cannot break the layout. */
static char *
print_clean(const char *s, char kept)
{
	char *copy = strdup(s != NULL ? s : "-");

	for (char *p = copy; p != NULL && *p != '\0'; p++)
		if (((unsigned char)*p < 0x20 || *p == 0x7f) && *p != kept)
			*p = ' ';
	return copy;
}

struct print_table *
print_table_new(size_t ncols, const char *const *headers)
{
	struct print_table *t = calloc(1, sizeof *t);

	if (t == NULL)
		return NULL;
	t->ncols = ncols;
	print_table_add(t, headers, NULL);
	return t;
}

void
print_table_free(struct print_table *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	for (size_t i = 0; i < t->nrows; i++)
		free(t->notes[i]);
	free(t->cells);
	free(t->notes);
	free(t);
}

void
print_table_set_width(struct print_table *t, size_t width)
{
	t->width = width;
}

void
print_table_add(struct print_table *t, const char *const *cells,
    const char *note)
{
	size_t n = t->nrows + 1;
	char **c, **notes;

	c = reallocarray(t->cells, n * t->ncols, sizeof *c);
	if (c != NULL)
		t->cells = c;
	notes = reallocarray(t->notes, n, sizeof *notes);
	if (notes != NULL)
		t->notes = notes;
	if (c == NULL || notes == NULL)
		return;
	for (size_t i = 0; i < t->ncols; i++)
		c[t->nrows * t->ncols + i] = print_clean(cells[i], ' ');
	notes[t->nrows] = note != NULL ? print_clean(note, '\n') : NULL;
	t->nrows = n;
}

/* Writes s, cut to at most max columns with "..." when it is longer. */
static void
print_cut(FILE *f, const char *s, size_t max)
{
	size_t n = 0;

	if (max < 4)
		max = 4;
	if (print_width(s) <= max) {
		fputs(s, f);
		return;
	}
	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80 && ++n > max - 3)
			break;
		fputc(*s, f);
	}
	fputs("...", f);
}

static void
print_table_row(const struct print_table *t, const size_t *widths, size_t row,
    FILE *f)
{
	char *const *cells = t->cells + row * t->ncols;
	size_t last = t->ncols - 1, w;

	while (last > 0 && cells[last][0] == '\0')
		last--;
	for (size_t i = 0; i <= last; i++) {
		w = print_width(cells[i]);
		if (w > widths[i]) {
			print_cut(f, cells[i], widths[i]);
			w = widths[i] < 4 ? 4 : widths[i];
		} else {
			fputs(cells[i], f);
		}
		if (i < last)
			fprintf(f, "%*s", (int)(widths[i] - w + PRINT_GAP), "");
	}
	fputc('\n', f);
	for (const char *p = t->notes[row]; p != NULL; p = strchr(p, '\n')) {
		p += *p == '\n';
		w = strcspn(p, "\n");
		fputs("  ", f);
		if (t->width > 2) {
			char *line = strndup(p, w);

			if (line != NULL)
				print_cut(f, line, t->width - 2);
			free(line);
		} else {
			fprintf(f, "%.*s", (int)w, p);
		}
		fputc('\n', f);
	}
}

/*
 * Narrows the columns until a line fits t->width: the last one first (down
 * to 12 columns), then the widest, none below its header or 6 columns.
 */
static void
print_table_fit(const struct print_table *t, size_t *widths)
{
	size_t total = 0, last = t->ncols - 1, min, best, floor_w;

	for (size_t i = 0; i < t->ncols; i++)
		total += widths[i] + (i < last ? PRINT_GAP : 0);
	floor_w = print_width(t->cells[last]) > 12 ?
	    print_width(t->cells[last]) :
	    12;
	while (total > t->width && widths[last] > floor_w) {
		widths[last]--;
		total--;
	}
	while (total > t->width) {
		best = t->ncols;
		for (size_t i = 0; i < t->ncols; i++) {
			min = print_width(t->cells[i]);
			if (min < 6)
				min = 6;
			if (widths[i] > min &&
			    (best == t->ncols || widths[i] > widths[best]))
				best = i;
		}
		if (best == t->ncols)
			break; /* as narrow as it goes */
		widths[best]--;
		total--;
	}
}

void
print_table_write(const struct print_table *t, FILE *f)
{
	size_t *widths = calloc(t->ncols, sizeof *widths), w;

	if (widths == NULL)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < t->ncols; i++)
			if ((w = print_width(t->cells[r * t->ncols + i])) >
			    widths[i])
				widths[i] = w;
	if (t->width > 0)
		print_table_fit(t, widths);
	for (size_t r = 0; r < t->nrows; r++)
		print_table_row(t, widths, r, f);
	free(widths);
}

size_t
print_tty_width(void)
{
	struct winsize ws;
	const char *cols;
	long n;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if ((cols = getenv("COLUMNS")) != NULL && (n = atol(cols)) > 0)
		return (size_t)n;
	return 80;
}

void
print_json(const json_t *v)
{
	json_dumpf(v, stdout, JSON_COMPACT | JSON_ENCODE_ANY);
	fputc('\n', stdout);
}

void
print_pretty(FILE *f, const json_t *v)
{
	json_dumpf(v, f, JSON_INDENT(2) | JSON_ENCODE_ANY);
	fputc('\n', f);
}

void
print_line(FILE *f, const char *s)
{
	size_t len = strlen(s);

	fputs(s, f);
	if (len == 0 || s[len - 1] != '\n')
		fputc('\n', f);
}

/* While held: where stderr went before, and where it goes meanwhile. */
static int print_saved_fd = -1;
static int print_held_fd = -1;

void
print_hold(void)
{
	int held = memfd_create("mcpctl-held", MFD_CLOEXEC), saved = -1;

	fflush(stderr);
	if (held < 0 ||
	    (saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    dup2(held, STDERR_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		if (held >= 0)
			close(held);
		return; /* nothing is held back */
	}
	print_saved_fd = saved;
	print_held_fd = held;
}

/* Ends the hold; what was held goes to stderr when is_shown. */
static bool
print_unhold_as(bool is_shown)
{
	char buf[4096];
	off_t len;
	ssize_t n;

	if (print_saved_fd < 0)
		return false;
	fflush(stderr);
	dup2(print_saved_fd, STDERR_FILENO);
	len = lseek(print_held_fd, 0, SEEK_END);
	if (is_shown && lseek(print_held_fd, 0, SEEK_SET) == 0)
		while ((n = read(print_held_fd, buf, sizeof buf)) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) != n)
				break;
	close(print_saved_fd);
	close(print_held_fd);
	print_saved_fd = print_held_fd = -1;
	return len != 0;
}

bool
print_unhold(void)
{
	return print_unhold_as(false);
}

void
print_release(void)
{
	(void)print_unhold_as(true);
}

void
print_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("mcpctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
print_unreachable(const char *path, int error)
{
	print_err("cannot reach mcpd at %s: %s", path, strerror(error));
	fputs(
	    "is mcpd running? start it with 'systemctl --user start mcpd' or 'mcpd -d &', or point -s/MCPD_SOCKET at its socket\n",
	    stderr);
}

/* What to do next, by error kind or code; NULL when nothing useful. */
static const char *
print_error_hint(const json_t *error)
{
	const json_t *data = json_object_get(error, "data");
	const char *what = json_string_value(json_object_get(data, "what"));

	switch (jsonrpc_error_get_kind(error)) {
	case ERRORS_NOT_FOUND:
		if (what != NULL && strcmp(what, "tool") == 0)
			return "see 'mcpctl tools SERVER' for its tools";
		if (what != NULL && strcmp(what, "registry-record") == 0)
			return "see 'mcpctl search WORDS' for names, 'mcpctl versions NAME' for versions";
		if (what != NULL && strcmp(what, "catalog-entry") == 0)
			return "see 'mcpctl docker-catalog' for the catalog's definitions";
		if (what != NULL && strcmp(what, "docker-catalog") == 0)
			return "name a catalog image docker has or can pull with MCPD_DOCKER_CATALOG or --catalog";
		return "see 'mcpctl list'";
	case ERRORS_STALE_HANDLE:
		return "the server was reloaded or restarted; get fresh handles with 'mcpctl tools'";
	case ERRORS_OUTCOME_UNKNOWN:
		return "the tool may or may not have run; check before retrying";
	default:
		break;
	}
	if (json_integer_value(json_object_get(error, "code")) ==
	    JSONRPC_METHOD_NOT_FOUND)
		return "this mcpd does not know the command; is it older than mcpctl?";
	return NULL;
}

/* The upstream server's own error, when the message does not quote it. */
static void
print_error_upstream(const json_t *data, const char *message)
{
	const json_t *up = json_object_get(data, "upstream");
	const char *m = json_string_value(json_object_get(up, "message"));

	if (m == NULL || strstr(message, m) != NULL)
		return;
	fprintf(stderr, "the server answered: %s (code %lld)\n", m,
	    (long long)json_integer_value(json_object_get(up, "code")));
}

static void
print_error_stderr(const json_t *data)
{
	const json_t *lines = json_object_get(data, "stderr"), *line;
	size_t i;

	if (!json_is_array(lines) || json_array_size(lines) == 0)
		return;
	fputs("last lines of the server's stderr:\n", stderr);
	json_array_foreach(lines, i, line)
		if (json_is_string(line))
			fprintf(stderr, "  %s\n", json_string_value(line));
}

void
print_error(const json_t *error, bool is_json)
{
	const char *message = json_string_value(json_object_get(error,
	    "message"));
	const json_t *data = json_object_get(error, "data");
	const char *hint = print_error_hint(error);

	if (is_json)
		print_json(error);
	if (message == NULL || message[0] == '\0')
		message = "mcpd answered with an error";
	print_err("%s", message);
	print_error_upstream(data, message);
	/* A message that already names an mcpctl command needs no hint. */
	if (hint != NULL && strstr(message, "mcpctl ") == NULL)
		fprintf(stderr, "%s\n", hint);
	print_error_stderr(data);
}

char *
print_value(const json_t *v)
{
	if (v == NULL || json_is_null(v))
		return strdup("-");
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* An RFC 3339 UTC time ("2026-01-02T03:04:05Z") as seconds, or -1. */
static time_t
print_parse_time(const char *text)
{
	struct tm tm = { 0 };
	const char *end;

	if (text == NULL ||
	    (end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	return timegm(&tm);
}

char *
print_ago(const char *rfc3339)
{
	time_t t = print_parse_time(rfc3339), now = time(NULL);
	long long d;
	char *out;
	int r;

	if (t < 0)
		return NULL;
	d = now > t ? (long long)(now - t) : 0;
	if (d < 60)
		r = asprintf(&out, "%llds ago", d);
	else if (d < 3600)
		r = asprintf(&out, "%lldm ago", d / 60);
	else if (d < 86400)
		r = asprintf(&out, "%lldh ago", d / 3600);
	else
		r = asprintf(&out, "%lldd ago", d / 86400);
	return r < 0 ? NULL : out;
}

const char *
print_row_error(const json_t *row, const char **ret_at)
{
	const char *err = json_string_value(json_object_get(row, "last_error"));
	const char *state = json_string_value(json_object_get(row, "state"));
	const json_t *gen = json_object_get(row, "last_error_generation");
	const char *at = json_string_value(json_object_get(row,
	    "last_error_at"));

	*ret_at = NULL;
	if (err == NULL)
		return NULL;
	/* An error of an older connection: the current one is past it. */
	if (json_is_integer(gen) &&
	    json_integer_value(gen) <
		json_integer_value(json_object_get(row, "generation")))
		return NULL;
	/*
	 * Without the error's own time: a server that is not ready got its
	 * error when it left ready, which is its state's "since".
	 */
	if (at == NULL && state != NULL && strcmp(state, "ready") != 0)
		at = json_string_value(json_object_get(row, "since"));
	*ret_at = at;
	return err;
}

char *
print_duration(long long ms)
{
	static const struct {
		const char *unit;
		long long ms;
	} units[] = { { "h", 3600000 }, { "m", 60000 }, { "s", 1000 } };
	char *text;

	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (ms > 0 && ms % units[i].ms == 0) {
			xasprintf(&text, "%lld%s", ms / units[i].ms,
			    units[i].unit);
			return text;
		}
	xasprintf(&text, "%lldms", ms);
	return text;
}
