/* SPDX-License-Identifier: ISC */
/* A scriptable MCP server (stdio or Streamable HTTP) tests use as a peer. */
#define _GNU_SOURCE
#include <sys/random.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "testserver.h"

#define TS_LINE_MAX	(16L << 20) /* a stdin line or an HTTP body */
#define TS_BIG_MAX	(64L << 20)
#define TS_HEADER_MAX	(64 << 10)
#define TS_CHUNK	(64 << 10)
#define TS_CONNS_MAX	64
#define TS_SESSIONS_MAX 64
#define TS_LINES_MAX	1000000
#define TS_SLEEP_MAX	86400000
#define TS_NO_SESSION	"Bad Request: No valid session ID provided"

struct ts_buf {
	char *data;
	size_t len;
	size_t cap;
};

struct ts_conn {
	struct ts_conn *next;
	int fd;
	struct ts_buf in;
	struct ts_buf out;
	size_t out_off;
	const char *session_out; /* header for the next reply */
	bool is_busy;		 /* a request awaits its answer */
	bool is_eof;		 /* the peer sends nothing more */
	bool is_closing;	 /* close once flushed */
	bool is_dead;		 /* close now */
};

struct ts_timer {
	struct ts_timer *next;
	int64_t deadline;
	long ms;
	json_t *id;
	struct ts_conn *conn; /* NULL: stdio */
};

struct ts_http_req {
	char *method;
	char *path;
	const char *session;
	const char *body;
	size_t total;
	long body_len;
	bool is_close;
};

struct ts_tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input; /* "name:type" words, '!' = required */
	const char *output;
	json_t *(*fn)(struct ts_call *);
};

static struct {
	long start_delay_ms;
	long exit_after;
	long page_size;
	long ntools;
	long http_port; /* -1: stdio */
	const char *protocol_version;
	const char *log_file;	  /* every stderr line is appended here too */
	const char *variant_file; /* read at start: changed or added tools */
	int is_garbage;
	int is_early_notify;
	int is_ping_client;
	int is_repeat_cursor;
	int is_port_only_message;
	int is_modern; /* 2026-07-28 only: server/discover, _meta required */
	int is_conformance; /* the harness's fixtures (testserver-conformance.c) */
	int is_echo_input;     /* each stdin line to stderr as "in: LINE" */
	int is_forget_on_call; /* HTTP: each tools/call forgets its session */
} opt = { .exit_after = -1, .http_port = -1 };

static struct {
	long ncalls;
	long nextra;
	bool is_garbage_sent;
	bool is_exiting;
	bool is_stdin_eof;
	bool is_discarding;
	int64_t deaf_until; /* the deaf tool: stdin unread until then */
	size_t scanned;	    /* bytes of in known to hold no '\n' */
	struct ts_buf in;
	struct ts_timer *timers;
	struct ts_conn *conns;
	size_t nconns;
	char sessions[TS_SESSIONS_MAX][33];
	unsigned nsessions;
	char forgotten[TS_SESSIONS_MAX][33]; /* answered 404 from then on */
	unsigned nforgotten;
} ts;

static void ts_http_reply_json(struct ts_conn *, int, json_t *);

void
ts_log(const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* A file outlives the pipe: lines written while mcpd stops it. */
	if (opt.log_file != NULL && (f = fopen(opt.log_file, "a")) != NULL) {
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		fputc('\n', f);
		fclose(f);
	}
}

static void
ts_fatal(const char *what)
{
	ts_log("mcp-testserver: %s: %s", what, strerror(errno));
	exit(1);
}

static void
ts_buf_reserve(struct ts_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;

	if (b->cap - b->len >= n)
		return;
	while (cap - b->len < n)
		cap *= 2;
	if ((b->data = realloc(b->data, cap)) == NULL)
		ts_fatal("realloc");
	b->cap = cap;
}

static void
ts_buf_append(struct ts_buf *b, const void *p, size_t n)
{
	ts_buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static int64_t
ts_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Writes everything, waiting when the descriptor is non-blocking. */
static int
ts_write_all(int fd, const char *p, size_t n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) >= 0) {
			p += w;
			n -= (size_t)w;
		} else if (errno == EAGAIN)
			poll(&pfd, 1, -1);
		else if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static void
ts_stdio_send(json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT), *line;
	size_t len;

	if (opt.is_garbage && !ts.is_garbage_sent &&
	    json_object_get(msg, "method") == NULL) {
		ts.is_garbage_sent = true;
		ts_write_all(STDOUT_FILENO, "this is not json\n", 17);
	}
	json_decref(msg);
	/* One write per line, as servers write them: a reader wakes once. */
	len = s != NULL ? strlen(s) : 0;
	if (s == NULL || (line = realloc(s, len + 1)) == NULL)
		ts_fatal("out of memory");
	line[len] = '\n';
	if (ts_write_all(STDOUT_FILENO, line, len + 1) < 0)
		ts_fatal("stdout");
	free(line);
}

void
ts_send(struct ts_conn *c, json_t *msg)
{
	if (c == NULL)
		ts_stdio_send(msg);
	else
		ts_http_reply_json(c, 200, msg);
}

/* Server-initiated messages only exist on stdio: HTTP has no stream. */
void
ts_notify(json_t *msg)
{
	if (opt.http_port < 0) {
		ts_stdio_send(msg);
		return;
	}
	ts_log("mcp-testserver: %s: no stream in HTTP mode, dropped",
	    json_string_value(json_object_get(msg, "method")));
	json_decref(msg);
}

/* A 2026-07-28 result says it is complete unless it says otherwise. */
json_t *
ts_response(json_t *id, json_t *result)
{
	if (opt.is_modern && json_is_object(result) &&
	    json_object_get(result, "resultType") == NULL)
		json_object_set_new(result, "resultType",
		    json_string("complete"));
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    id ? id : json_null(), "result", result);
}

json_t *
ts_error(json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	json_t *r;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		ts_fatal("vasprintf");
	va_end(ap);
	r = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    id ? id : json_null(), "error", "code", code, "message", msg);
	free(msg);
	if (r == NULL) /* the message quoted bytes that are not UTF-8 */
		return ts_error(id, code, "(message not UTF-8)");
	return r;
}

json_t *
ts_result(bool is_error, const char *fmt, ...)
{
	va_list ap;
	char *text;
	json_t *r;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		ts_fatal("vasprintf");
	va_end(ap);
	r = json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
	    text);
	free(text);
	if (is_error)
		json_object_set_new(r, "isError", json_true());
	return r;
}

/* Builds an object schema from the "name:type" words of a tool entry. */
static json_t *
ts_schema(const char *spec)
{
	json_t *props = json_object(), *req = json_array(), *schema;
	char buf[256], *save, *w, *type;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (w = strtok_r(buf, " ", &save); w != NULL;
	     w = strtok_r(NULL, " ", &save)) {
		if ((type = strchr(w, ':')) == NULL)
			continue;
		*type++ = '\0';
		if ((n = strlen(type)) > 0 && type[n - 1] == '!') {
			type[n - 1] = '\0';
			json_array_append_new(req, json_string(w));
		}
		json_object_set_new(props, w, json_pack("{s:s}", "type", type));
	}
	schema = json_pack("{s:s, s:o}", "type", "object", "properties", props);
	if (json_array_size(req) > 0)
		json_object_set(schema, "required", req);
	json_decref(req);
	return schema;
}

/* Checks arguments against a tool's schema; says why they do not fit. */
static const char *
ts_args_check(json_t *schema, json_t *args)
{
	static char why[160];
	const char *key, *type;
	json_t *v, *a;
	size_t i;

	json_array_foreach(json_object_get(schema, "required"), i, v) {
		key = json_string_value(v);
		if (json_object_get(args, key) != NULL)
			continue;
		snprintf(why, sizeof(why), "missing argument '%s'", key);
		return why;
	}
	json_object_foreach(json_object_get(schema, "properties"), key, v) {
		type = json_string_value(json_object_get(v, "type"));
		a = json_object_get(args, key);
		if (a == NULL || (type[0] == 's' && json_is_string(a)) ||
		    (type[0] == 'i' && json_is_integer(a)) ||
		    (type[0] == 'n' && json_is_number(a)))
			continue;
		snprintf(why, sizeof(why), "argument '%s' must be of type %s",
		    key, type);
		return why;
	}
	return NULL;
}

static json_int_t
ts_arg_int(struct ts_call *call, const char *key)
{
	return json_integer_value(json_object_get(call->args, key));
}

static const char *
ts_arg_str(struct ts_call *call, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(call->args, key));

	return s ? s : dflt;
}

static json_t *
ts_tool_echo(struct ts_call *call)
{
	const char *msg = ts_arg_str(call, "message", "");

	return json_pack("{s:[{s:s, s:s}], s:{s:s}}", "content", "type", "text",
	    "text", msg, "structuredContent", "message", msg);
}

static json_t *
ts_tool_add(struct ts_call *call)
{
	json_t *a = json_object_get(call->args, "a");
	json_t *b = json_object_get(call->args, "b"), *sum, *r;
	json_int_t isum;
	char *text;

	if (json_is_integer(a) && json_is_integer(b) &&
	    !__builtin_add_overflow(json_integer_value(a),
		json_integer_value(b), &isum))
		sum = json_integer(isum);
	else
		sum = json_real(json_number_value(a) + json_number_value(b));
	if ((text = json_dumps(sum, JSON_ENCODE_ANY)) == NULL) {
		json_decref(sum); /* inf and nan have no JSON form */
		return ts_result(true, "the sum is not a finite number");
	}
	r = ts_result(false, "%s", text);
	json_object_set_new(r, "structuredContent",
	    json_pack("{s:o}", "sum", sum));
	free(text);
	return r;
}

/* Queues the answer on the timer list; the poll loop sends it later. */
static json_t *
ts_tool_sleep_ms(struct ts_call *call)
{
	json_int_t ms = ts_arg_int(call, "ms");
	struct ts_timer *t, **tp;
	char *id;

	if (ms < 0 || ms > TS_SLEEP_MAX)
		return ts_result(true, "ms must be within 0..%d", TS_SLEEP_MAX);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		ts_fatal("calloc");
	t->deadline = ts_now_ms() + ms;
	t->ms = (long)ms;
	t->id = json_incref(call->id);
	id = json_dumps(call->id, JSON_ENCODE_ANY);
	ts_log("sleep_ms %s: %ld ms", id != NULL ? id : "?", t->ms);
	free(id);
	t->conn = call->conn;
	for (tp = &ts.timers; *tp && (*tp)->deadline <= t->deadline;
	     tp = &(*tp)->next)
		;
	t->next = *tp;
	*tp = t;
	return NULL;
}

static json_t *
ts_tool_fail(struct ts_call *call)
{
	return ts_result(true, "%s", ts_arg_str(call, "message", "failed"));
}

static json_t *
ts_tool_crash(struct ts_call *call)
{
	bool has_code = json_object_get(call->args, "code") != NULL;

	ts_log("crashing");
	_exit(has_code ? (int)(ts_arg_int(call, "code") & 255) : 1);
}

static json_t *
ts_tool_big(struct ts_call *call)
{
	json_int_t n = ts_arg_int(call, "bytes");
	char *x;
	json_t *text;

	if (n < 0)
		return ts_result(true, "bytes must not be negative");
	if (n > TS_BIG_MAX)
		n = TS_BIG_MAX;
	if ((x = malloc((size_t)n + 1)) == NULL)
		ts_fatal("malloc");
	memset(x, 'x', (size_t)n);
	text = json_stringn_nocheck(x, (size_t)n);
	free(x);
	return json_pack("{s:[{s:s, s:o}]}", "content", "type", "text", "text",
	    text);
}

static json_t *
ts_tool_stderr(struct ts_call *call)
{
	json_int_t n = ts_arg_int(call, "lines");
	const char *text = ts_arg_str(call, "text", "line");

	if (n < 0 || n > TS_LINES_MAX)
		return ts_result(true, "lines must be within 0..%d",
		    TS_LINES_MAX);
	for (json_int_t i = 0; i < n; i++)
		ts_log("%s %" JSON_INTEGER_FORMAT, text, i);
	return ts_result(false, "wrote %" JSON_INTEGER_FORMAT " lines", n);
}

static json_t *
ts_tool_notify_changed(struct ts_call *call)
{
	(void)call;
	ts.nextra++;
	ts_notify(json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
	    "notifications/tools/list_changed"));
	return ts_result(false, "tools changed: extra_1..extra_%ld", ts.nextra);
}

/* Stops reading stdin for ms milliseconds: a server that is stuck. */
static json_t *
ts_tool_deaf(struct ts_call *call)
{
	long ms = ts_arg_int(call, "ms");

	ts.deaf_until = ts_now_ms() + ms;
	return ts_result(false, "not reading stdin for %ld ms", ms);
}

/*
 * Sends steps notifications/progress (to the call's progressToken, when
 * it has one) and as many log messages (notifications/message), then
 * answers.
 */
static json_t *
ts_tool_report(struct ts_call *call)
{
	json_int_t steps = ts_arg_int(call, "steps");
	json_int_t ms = ts_arg_int(call, "ms");
	json_t *token = json_object_get(call->meta, "progressToken");

	if (steps < 0 || steps > 100)
		return ts_result(true, "steps must be within 0..100");
	if (ms < 0 || ms > 1000)
		return ts_result(true, "ms must be within 0..1000");
	for (json_int_t i = 1; i <= steps; i++) {
		if (token != NULL)
			ts_notify(json_pack(
			    "{s:s, s:s, s:{s:O, s:I, s:I, s:s}}", "jsonrpc",
			    "2.0", "method", "notifications/progress", "params",
			    "progressToken", token, "progress", i, "total",
			    steps, "message", "working"));
		ts_notify(json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "jsonrpc",
		    "2.0", "method", "notifications/message", "params", "level",
		    "info", "logger", "report", "data", "a step"));
		/* Blocking on purpose: steps that come apart, as real ones. */
		if (ms > 0)
			usleep((useconds_t)ms * 1000);
	}
	return ts_result(false, "reported %" JSON_INTEGER_FORMAT " steps%s",
	    steps, token != NULL ? "" : " (no progressToken)");
}

/*
 * 2026-07-28: asks the client for input (an input_required result),
 * logging the capabilities its _meta declares; the retry that carries
 * inputResponses.confirm and the echoed requestState gets the answer it
 * was given.
 */
static json_t *
ts_tool_ask(struct ts_call *call)
{
	json_t *answer = json_object_get(json_object_get(call->params,
					     "inputResponses"),
	    "confirm");
	const char *state = json_string_value(json_object_get(call->params,
	    "requestState"));
	char *text;
	json_t *r;

	if (!opt.is_modern)
		return ts_result(false, "ask needs the 2026-07-28 era");
	text = json_dumps(json_object_get(call->meta,
			      "io.modelcontextprotocol/clientCapabilities"),
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	ts_log("ask: client capabilities %s", text ? text : "(none)");
	free(text);
	if (answer != NULL && state != NULL && strcmp(state, "state-1") == 0) {
		text = json_dumps(answer, JSON_COMPACT | JSON_SORT_KEYS);
		r = ts_result(false, "confirmed: %s", text);
		free(text);
		return r;
	}
	return json_pack("{s:s, s:{s:{s:s, s:{s:s}}}, s:s}", "resultType",
	    "input_required", "inputRequests", "confirm", "method",
	    "elicitation/create", "params", "message", "Proceed?",
	    "requestState", "state-1");
}

static const struct ts_tool ts_tools[] = {
	{ "echo", "Echo", "Returns its message.", "message:string!",
	    "message:string!", ts_tool_echo },
	{ "add", "Add", "Adds two numbers.", "a:number! b:number!",
	    "sum:number!", ts_tool_add },
	{ "sleep_ms", "Sleep", "Answers after ms milliseconds, not blocking.",
	    "ms:integer!", NULL, ts_tool_sleep_ms },
	{ "fail", "Fail", "Returns a tool error (isError).", "message:string",
	    NULL, ts_tool_fail },
	{ "crash", "Crash", "Exits with code (default 1) without answering.",
	    "code:integer", NULL, ts_tool_crash },
	{ "big", "Big", "Returns one text of bytes 'x' characters.",
	    "bytes:integer!", NULL, ts_tool_big },
	{ "stderr", "Stderr", "Writes lines to stderr.",
	    "lines:integer! text:string", NULL, ts_tool_stderr },
	{ "notify_changed", "Notify changed",
	    "Adds a tool extra_<n>, sends notifications/tools/list_changed.",
	    "", NULL, ts_tool_notify_changed },
	{ "ask", "Ask", "Asks the client for input (2026-07-28 only).", "",
	    NULL, ts_tool_ask },
	{ "deaf", "Deaf", "Stops reading stdin for ms milliseconds.",
	    "ms:integer!", NULL, ts_tool_deaf },
	{ "report", "Report",
	    "Sends steps progress notifications (to its progressToken) and log messages, then answers.",
	    "steps:integer! ms:integer", NULL, ts_tool_report },
	{ "mismatch", "Mismatch",
	    "With --modern, answers -32020 (HeaderMismatch); else echoes.",
	    "message:string", NULL, ts_tool_echo },
};
#define TS_NTOOLS ((long)(sizeof(ts_tools) / sizeof(ts_tools[0])))

static const struct ts_tool ts_tool_generated = { NULL, NULL,
	"Echoes its message (generated tool).", "message:string", NULL,
	ts_tool_echo };

static const struct ts_tool ts_tool_added = { NULL, NULL,
	"Echoes its message (added tool).", "message:string", NULL,
	ts_tool_echo };

/*
 * --variant-file: what this start changes, read once at start so that a
 * restart of the same command line can list other definitions (the pins
 * tests). One directive a line: "describe TOOL TEXT" (TEXT's \n are
 * newlines), "input TOOL SPEC" (as ts_tools' input), "add NAME".
 */
#define TS_VARIANTS_MAX 16
static struct {
	char *describe[TS_VARIANTS_MAX][2]; /* tool, description */
	char *input[TS_VARIANTS_MAX][2];    /* tool, input spec */
	char *added[TS_VARIANTS_MAX];
	size_t ndescribe, ninput, nadded;
} ts_variant;

/* The variant's text for tool in table (n rows), or NULL. */
static const char *
ts_variant_get(char *table[][2], size_t n, const char *tool)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(table[i][0], tool) == 0)
			return table[i][1];
	return NULL;
}

/* "\n" in text as newlines, in place. */
static void
ts_variant_unescape(char *text)
{
	char *out = text;

	for (; *text != '\0'; text++)
		if (text[0] == '\\' && text[1] == 'n') {
			*out++ = '\n';
			text++;
		} else
			*out++ = *text;
	*out = '\0';
}

static void
ts_variant_read(const char *path)
{
	char line[1024], *verb, *name, *rest, *save;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return; /* no file: no variant */
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((verb = strtok_r(line, " ", &save)) == NULL ||
		    (name = strtok_r(NULL, " ", &save)) == NULL)
			continue;
		rest = strtok_r(NULL, "", &save);
		if (strcmp(verb, "add") == 0 &&
		    ts_variant.nadded < TS_VARIANTS_MAX)
			ts_variant.added[ts_variant.nadded++] = strdup(name);
		else if (strcmp(verb, "describe") == 0 && rest != NULL &&
		    ts_variant.ndescribe < TS_VARIANTS_MAX) {
			ts_variant_unescape(rest);
			ts_variant.describe[ts_variant.ndescribe][0] =
			    strdup(name);
			ts_variant.describe[ts_variant.ndescribe++][1] =
			    strdup(rest);
		} else if (strcmp(verb, "input") == 0 && rest != NULL &&
		    ts_variant.ninput < TS_VARIANTS_MAX) {
			ts_variant.input[ts_variant.ninput][0] = strdup(name);
			ts_variant.input[ts_variant.ninput++][1] = strdup(rest);
		}
	}
	fclose(f);
}

/* Parses "<prefix><n>" with first <= n <= last and no leading zero. */
static bool
ts_name_index(const char *name, const char *prefix, long first, long last,
    long *ret_n)
{
	size_t len = strlen(prefix);
	char *end;
	long n;

	if (strncmp(name, prefix, len) != 0 ||
	    !isdigit((unsigned char)name[len]) ||
	    (name[len] == '0' && name[len + 1] != '\0'))
		return false;
	errno = 0;
	n = strtol(name + len, &end, 10);
	if (*end != '\0' || errno != 0 || n < first || n > last)
		return false;
	*ret_n = n;
	return true;
}

static const struct ts_tool *
ts_tool_find(const char *name)
{
	long n;

	for (long i = 0; i < TS_NTOOLS; i++)
		if (strcmp(ts_tools[i].name, name) == 0)
			return &ts_tools[i];
	if (ts_name_index(name, "t", 0, opt.ntools - 1, &n) ||
	    ts_name_index(name, "extra_", 1, ts.nextra, &n))
		return &ts_tool_generated;
	for (size_t i = 0; i < ts_variant.nadded; i++)
		if (strcmp(ts_variant.added[i], name) == 0)
			return &ts_tool_added;
	return NULL;
}

/*
 * Lists builtins, then t0..t<N-1>, then extra_1..extra_<n>, then the
 * variant's added tools.
 */
static json_t *
ts_tool_def(long i)
{
	const struct ts_tool *t = &ts_tool_generated;
	json_t *def, *input;
	long k = i - TS_NTOOLS, a = k - opt.ntools - ts.nextra;
	const char *described, *spec;
	char name[64];

	if (i < TS_NTOOLS)
		t = &ts_tools[i];
	else if (a >= 0)
		t = &ts_tool_added;
	snprintf(name, sizeof(name), k < opt.ntools ? "t%ld" : "extra_%ld",
	    k < opt.ntools ? k : k - opt.ntools + 1);
	if (a >= 0)
		snprintf(name, sizeof(name), "%s", ts_variant.added[a]);
	if (t->name != NULL)
		snprintf(name, sizeof(name), "%s", t->name);
	described = ts_variant_get(ts_variant.describe, ts_variant.ndescribe,
	    name);
	spec = ts_variant_get(ts_variant.input, ts_variant.ninput, name);
	input = ts_schema(spec != NULL ? spec : t->input);
	def = json_pack("{s:s, s:s, s:o}", "name", name, "description",
	    described != NULL ? described : t->description, "inputSchema",
	    input);
	if (t->title != NULL)
		json_object_set_new(def, "title", json_string(t->title));
	if (t->output != NULL)
		json_object_set_new(def, "outputSchema", ts_schema(t->output));
	if (t != &ts_tools[0])
		return def;
	json_object_set_new(input, "$schema",
	    json_string("https://json-schema.org/draft/2020-12/schema"));
	json_object_set_new(def, "annotations",
	    json_pack("{s:b}", "readOnlyHint", 1));
	json_object_set_new(def, "x-test-extra", json_pack("{s:b}", "kept", 1));
	return def;
}

static json_t *
ts_tools_list(json_t *params, json_t *id)
{
	long total = TS_NTOOLS + opt.ntools + ts.nextra +
	    (long)ts_variant.nadded;
	long size = opt.page_size > 0 ? opt.page_size : total, page = 0;
	const char *cursor;
	json_t *tools = json_array(), *result;

	cursor = json_string_value(json_object_get(params, "cursor"));
	if (cursor != NULL &&
	    !ts_name_index(cursor, "c", 1, total / size, &page)) {
		json_decref(tools);
		return ts_error(id, -32602, "Invalid cursor");
	}
	for (long i = page * size; i < total && i < (page + 1) * size; i++)
		json_array_append_new(tools, ts_tool_def(i));
	result = json_pack("{s:o}", "tools", tools);
	if (opt.is_repeat_cursor)
		json_object_set_new(result, "nextCursor", json_string("c1"));
	else if ((page + 1) * size < total)
		json_object_set_new(result, "nextCursor",
		    json_sprintf("c%ld", page + 1));
	return ts_response(id, result);
}

/* Answers a tools/call; the last allowed answer makes the server exit. */
void
ts_call_answer(struct ts_conn *c, json_t *id, json_t *result)
{
	ts_send(c, ts_response(id, result));
	if (++ts.ncalls == opt.exit_after) {
		ts_log("mcp-testserver: answered %ld calls, exiting",
		    ts.ncalls);
		ts.is_exiting = true;
	}
}

static void
ts_tools_call(json_t *params, json_t *id, struct ts_conn *c)
{
	struct ts_call call = { json_object_get(params, "arguments"), id, c,
		json_object_get(params, "_meta"), params };
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct ts_tool *t = name ? ts_tool_find(name) : NULL;
	json_t *empty = json_object(), *schema, *result;
	const char *why;

	if (call.args == NULL)
		call.args = empty;
	if (t == NULL || !json_is_object(call.args)) {
		if (t == NULL)
			ts_send(c,
			    ts_error(id, -32602, "Unknown tool: %s",
				name ? name : ""));
		else
			ts_send(c, ts_error(id, -32602, "Invalid arguments"));
		json_decref(empty);
		return;
	}
	/* A modern server that finds the call's headers wrong says so. */
	if (t->name != NULL && strcmp(t->name, "mismatch") == 0 &&
	    opt.is_modern) {
		ts_send(c,
		    ts_error(id, -32020,
			"HeaderMismatch: Mcp-Name does not match the body"));
		json_decref(empty);
		return;
	}
	schema = ts_schema(t->input);
	if ((why = ts_args_check(schema, call.args)) != NULL)
		result = ts_result(true, "Invalid arguments for %s: %s", name,
		    why);
	else
		result = t->fn(&call);
	json_decref(schema);
	json_decref(empty);
	if (result != NULL) /* NULL: deferred, a timer answers */
		ts_call_answer(c, id, result);
}

static json_t *
ts_capabilities(void)
{
	if (opt.is_conformance)
		return tsc_capabilities();
	return json_pack("{s:{s:b}}", "tools", "listChanged", 1);
}

static json_t *
ts_initialize(json_t *params, json_t *id)
{
	static const char *known[] = { "2024-11-05", "2025-03-26", "2025-06-18",
		"2025-11-25" };
	const char *want, *v = "2025-11-25";

	want = json_string_value(json_object_get(params, "protocolVersion"));
	for (size_t i = 0; want && i < sizeof(known) / sizeof(*known); i++)
		if (strcmp(want, known[i]) == 0)
			v = known[i];
	if (opt.protocol_version != NULL)
		v = opt.protocol_version;
	ts_log("mcp-testserver: initialize: client wants %s, answering %s",
	    want ? want : "(none)", v);
	return ts_response(id,
	    json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion", v,
		"capabilities", ts_capabilities(), "serverInfo", "name",
		"mcp-testserver", "version", "1.0.0"));
}

/* Drops a pending sleep_ms; its HTTP exchange can only end by closing. */
static void
ts_cancel(json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	const char *reason = json_string_value(json_object_get(params,
	    "reason"));
	char *s = json_dumps(rid, JSON_ENCODE_ANY);
	struct ts_timer *t, **tp;

	ts_log("client cancelled %s (%s)", s ? s : "?",
	    reason ? reason : "no reason");
	free(s);
	for (tp = &ts.timers; (t = *tp) != NULL; tp = &t->next)
		if (json_equal(t->id, rid))
			break;
	if (t == NULL)
		return;
	*tp = t->next;
	if (t->conn != NULL) {
		t->conn->is_busy = false;
		t->conn->is_closing = true;
	}
	json_decref(t->id);
	free(t);
}

static void
ts_notification(const char *method, json_t *params)
{
	static int roots_asked = 2; /* srv-1 is the ping, srv-2 the first */
	char id[32];

	if (strcmp(method, "notifications/cancelled") == 0)
		ts_cancel(params);
	/* A server that keeps its roots asks again when they change. */
	if (strcmp(method, "notifications/roots/list_changed") == 0 &&
	    opt.is_ping_client) {
		snprintf(id, sizeof id, "srv-%d", ++roots_asked);
		ts_notify(json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id",
		    id, "method", "roots/list"));
	}
	if (strcmp(method, "notifications/initialized") != 0)
		return;
	ts_log("mcp-testserver: client initialized");
	if (!opt.is_ping_client)
		return;
	ts_notify(json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", "srv-1",
	    "method", "ping"));
	ts_notify(json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", "srv-2",
	    "method", "roots/list"));
}

static void
ts_client_answer(json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	char *s, *sid;

	if (opt.is_conformance && tsc_client_answer(msg))
		return;
	s = json_dumps(msg, JSON_COMPACT);
	sid = json_dumps(id, JSON_ENCODE_ANY);
	ts_log("client answered %s: %s",
	    json_is_string(id) ? json_string_value(id) : sid, s ? s : "?");
	free(sid);
	free(s);
}

static bool
ts_is_request(json_t *msg)
{
	json_t *id = json_object_get(msg, "id");

	return json_is_string(json_object_get(msg, "method")) &&
	    (json_is_string(id) || json_is_integer(id));
}

/*
 * --modern: every request must carry the 2026-07-28 _meta, and only
 * server/discover, tools/list and tools/call are known (and, with
 * --conformance, what the fixtures answer). Returns true when it answered
 * the request itself.
 */
static bool
ts_modern_gate(json_t *id, const char *method, json_t *params,
    struct ts_conn *c)
{
	json_t *meta = json_object_get(params, "_meta");
	const char *v = json_string_value(json_object_get(meta,
	    "io.modelcontextprotocol/protocolVersion"));

	if (!opt.is_modern)
		return false;
	ts_log("modern request %s %s _meta", method,
	    v != NULL ? "with" : "without");
	if (v == NULL)
		ts_send(c,
		    ts_error(id, -32602, "missing _meta protocolVersion"));
	else if (strcmp(v, "2026-07-28") != 0)
		ts_send(c,
		    json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:[s]}}}", "jsonrpc",
			"2.0", "id", id, "error", "code", -32022, "message",
			"Unsupported protocol version", "data", "supported",
			"2026-07-28"));
	else if (strcmp(method, "server/discover") == 0)
		ts_send(c,
		    ts_response(id,
			json_pack("{s:[s], s:o, s:{s:s, s:s}, s:s}",
			    "supportedVersions", "2026-07-28", "capabilities",
			    ts_capabilities(), "serverInfo", "name",
			    "mcp-testserver", "version", "1.0.0", "resultType",
			    "complete")));
	else if (strcmp(method, "tools/list") != 0 &&
	    strcmp(method, "tools/call") != 0 && !opt.is_conformance)
		ts_send(c,
		    ts_error(id, -32601, "Method not found: %s", method));
	else
		return false;
	return true;
}

/* Handles one JSON-RPC message from the stdio peer or one HTTP POST. */
static void
ts_dispatch(json_t *msg, struct ts_conn *c)
{
	json_t *id = json_object_get(msg, "id");
	json_t *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (!json_is_object(msg) ||
	    (id && !json_is_string(id) && !json_is_integer(id) &&
		!json_is_null(id)))
		ts_send(c, ts_error(NULL, -32600, "Invalid Request"));
	else if (method == NULL && id != NULL &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error")))
		ts_client_answer(msg);
	else if (method == NULL)
		ts_send(c, ts_error(id, -32600, "Invalid Request"));
	else if (id == NULL)
		ts_notification(method, params);
	else if (params != NULL && !json_is_object(params))
		ts_send(c, ts_error(id, -32602, "Invalid params"));
	else if (ts_modern_gate(id, method, params, c))
		;
	else if (strcmp(method, "initialize") == 0)
		ts_send(c, ts_initialize(params, id));
	else if (strcmp(method, "ping") == 0)
		ts_send(c, ts_response(id, json_object()));
	else if (strcmp(method, "tools/list") == 0 && opt.is_conformance)
		ts_send(c, ts_response(id, tsc_tools_list()));
	else if (strcmp(method, "tools/call") == 0 && opt.is_conformance)
		tsc_tools_call(params, id, c);
	else if (strcmp(method, "tools/list") == 0)
		ts_send(c, ts_tools_list(params, id));
	else if (strcmp(method, "tools/call") == 0)
		ts_tools_call(params, id, c);
	else if (opt.is_conformance && tsc_dispatch(method, params, id, c))
		;
	else
		ts_send(c,
		    ts_error(id, -32601, "Method not found: %s", method));
}

static void
ts_timers_fire(void)
{
	int64_t now = ts_now_ms();
	struct ts_timer *t;

	while ((t = ts.timers) != NULL && t->deadline <= now &&
	    !ts.is_exiting) {
		ts.timers = t->next;
		ts_call_answer(t->conn, t->id,
		    ts_result(false, "slept %ld ms", t->ms));
		json_decref(t->id);
		free(t);
	}
}

static int
ts_timers_timeout(void)
{
	int64_t left;

	if (ts.timers == NULL)
		return -1;
	left = ts.timers->deadline - ts_now_ms();
	return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void
ts_timers_free(struct ts_conn *c, bool is_all)
{
	struct ts_timer *t, **tp;

	for (tp = &ts.timers; (t = *tp) != NULL;) {
		if (!is_all && t->conn != c) {
			tp = &t->next;
			continue;
		}
		*tp = t->next;
		json_decref(t->id);
		free(t);
	}
}

static void
ts_stdio_line(char *p, size_t n)
{
	json_error_t err;
	json_t *msg;

	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--; /* also "\r" and blank lines */
	if (n == 0)
		return;
	if (opt.is_echo_input)
		ts_log("in: %.*s", (int)n, p);
	if ((msg = json_loadb(p, n, JSON_DECODE_ANY, &err)) == NULL) {
		ts_log("mcp-testserver: parse error: %s", err.text);
		ts_send(NULL,
		    ts_error(NULL, -32700, "Parse error: %s", err.text));
		return;
	}
	ts_dispatch(msg, NULL);
	json_decref(msg);
}

/* Handles the complete lines read so far; a too long one is skipped. */
static void
ts_stdio_lines(void)
{
	size_t off = 0, n;
	char *p, *nl;

	while (!ts.is_exiting) {
		p = ts.in.data + off;
		nl = memchr(p + ts.scanned, '\n', ts.in.len - off - ts.scanned);
		if (nl == NULL)
			break;
		n = (size_t)(nl - p);
		if (!ts.is_discarding)
			ts_stdio_line(p, n);
		ts.is_discarding = false;
		off += n + 1;
		ts.scanned = 0;
	}
	memmove(ts.in.data, ts.in.data + off, ts.in.len - off);
	ts.scanned = ts.in.len -= off;
	if (ts.in.len <= (size_t)TS_LINE_MAX)
		return;
	if (!ts.is_discarding)
		ts_send(NULL,
		    ts_error(NULL, -32700,
			"Parse error: line longer than %ld bytes",
			TS_LINE_MAX));
	ts.is_discarding = true;
	ts.in.len = ts.scanned = 0;
}

static void
ts_stdio_read(void)
{
	ssize_t n;

	ts_buf_reserve(&ts.in, TS_CHUNK);
	n = read(STDIN_FILENO, ts.in.data + ts.in.len, ts.in.cap - ts.in.len);
	if (n > 0) {
		ts.in.len += (size_t)n;
		ts_stdio_lines();
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		if (n < 0)
			ts_log("mcp-testserver: stdin: %s", strerror(errno));
		ts.is_stdin_eof = true;
		if (ts.in.len > 0 && !ts.is_discarding && !ts.is_exiting)
			ts_stdio_line(ts.in.data, ts.in.len);
	}
}

static char *
ts_session_find(const char *id)
{
	for (size_t i = 0; id != NULL && *id && i < TS_SESSIONS_MAX; i++)
		if (strcmp(ts.sessions[i], id) == 0)
			return ts.sessions[i];
	return NULL;
}

/* The session id s is forgotten: its requests get 404 from now on. */
static void
ts_session_forget(char *s)
{
	memcpy(ts.forgotten[ts.nforgotten++ % TS_SESSIONS_MAX], s, 33);
	ts_log("forgot session %s", s);
	s[0] = '\0';
}

static bool
ts_session_is_forgotten(const char *id)
{
	for (size_t i = 0; id != NULL && *id && i < TS_SESSIONS_MAX; i++)
		if (strcmp(ts.forgotten[i], id) == 0)
			return true;
	return false;
}

/* Makes a random session id; past the limit the oldest one goes. */
static const char *
ts_session_new(void)
{
	char *s = ts.sessions[ts.nsessions++ % TS_SESSIONS_MAX];
	unsigned char raw[16];

	if (getrandom(raw, sizeof(raw), 0) != sizeof(raw))
		ts_fatal("getrandom");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(s + 2 * i, 3, "%02x", raw[i]);
	return s;
}

static void
ts_conn_flush(struct ts_conn *c)
{
	ssize_t n;

	while (c->out_off < c->out.len) {
		n = send(c->fd, c->out.data + c->out_off,
		    c->out.len - c->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			c->is_dead = errno != EAGAIN;
			return;
		}
		c->out_off += (size_t)n;
	}
	c->out.len = c->out_off = 0;
}

/* Queues one HTTP response; a body starting with '{' is JSON. */
static void
ts_http_reply(struct ts_conn *c, int status, const char *extra,
    const char *body) /* NULL: the reason phrase */
{
	static const struct {
		int status;
		const char *reason;
	} reasons[] = { { 200, "OK" }, { 202, "Accepted" },
		{ 400, "Bad Request" }, { 404, "Not Found" },
		{ 405, "Method Not Allowed" }, { 413, "Payload Too Large" },
		{ 431, "Request Header Fields Too Large" },
		{ 501, "Not Implemented" }, { 0, "Internal Server Error" } };
	size_t i, len;
	char head[512];
	int n;

	for (i = 0; reasons[i].status && reasons[i].status != status; i++)
		;
	len = strlen(body = body ? body : reasons[i].reason);
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "%s%s%s%s%s\r\n",
	    status, reasons[i].reason,
	    body[0] == '{' ? "application/json" : "text/plain", len,
	    c->session_out ? "Mcp-Session-Id: " : "",
	    c->session_out ? c->session_out : "", c->session_out ? "\r\n" : "",
	    extra ? extra : "", c->is_closing ? "Connection: close\r\n" : "");
	ts_buf_append(&c->out, head, (size_t)n);
	ts_buf_append(&c->out, body, len);
	c->session_out = NULL;
	c->is_busy = false;
	ts_conn_flush(c);
}

static void
ts_http_reply_json(struct ts_conn *c, int status, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);

	json_decref(msg);
	ts_http_reply(c, s ? status : 500, NULL, s ? s : "");
	free(s);
}

static void
ts_http_fail(struct ts_conn *c, int status)
{
	c->is_closing = true;
	ts_http_reply(c, status, NULL, NULL);
}

static void
ts_http_post(struct ts_conn *c, struct ts_http_req *r)
{
	const char *method;
	char *live = NULL;
	json_error_t err;
	json_t *msg;

	msg = json_loadb(r->body, (size_t)r->body_len, JSON_DECODE_ANY, &err);
	if (msg == NULL) {
		ts_http_reply_json(c, 400,
		    ts_error(NULL, -32700, "Parse error: %s", err.text));
		return;
	}
	method = json_string_value(json_object_get(msg, "method"));
	if (ts_is_request(msg) && strcmp(method, "initialize") == 0) {
		c->session_out = ts_session_new();
		ts_log("initialize: session %s", c->session_out);
	} else if (ts_session_is_forgotten(r->session) ||
	    (opt.is_forget_on_call && method != NULL &&
		strcmp(method, "tools/call") == 0 &&
		(live = ts_session_find(r->session)) != NULL)) {
		/* As the spec says of a session the server ended: 404. */
		if (live != NULL)
			ts_session_forget(live);
		ts_log("%s on forgotten session %s: 404",
		    method != NULL ? method : "a response", r->session);
		ts_http_reply_json(c, 404,
		    ts_error(NULL, -32001, "Session not found"));
		json_decref(msg);
		return;
	} else if (ts_session_find(r->session) == NULL) {
		ts_http_reply_json(c, 400,
		    ts_error(NULL, -32000, TS_NO_SESSION));
		json_decref(msg);
		return;
	}
	c->is_busy = true;
	ts_dispatch(msg, c);
	if (c->is_busy && !ts_is_request(msg))
		ts_http_reply(c, 202, NULL, "");
	/* After the answer went: a test that sees this line knows it is sent. */
	if (ts_is_request(msg) && !c->is_busy && r->session != NULL)
		ts_log("answered %s on session %s", method, r->session);
	json_decref(msg);
}

static void
ts_http_delete(struct ts_conn *c, struct ts_http_req *r)
{
	char *s = ts_session_find(r->session);

	if (s == NULL) {
		ts_http_reply(c, 400, NULL, TS_NO_SESSION);
		return;
	}
	s[0] = '\0';
	ts_http_reply(c, 200, NULL, "");
}

/* Notes one header line; returns 0 or the HTTP status to fail with. */
static int
ts_http_header(struct ts_http_req *r, char *line)
{
	char *colon = strchr(line, ':'), *v, *end;

	if (colon == NULL)
		return 0;
	*colon = '\0';
	v = colon + 1 + strspn(colon + 1, " \t");
	for (end = v + strlen(v); end > v && isspace((unsigned char)end[-1]);)
		*--end = '\0';
	if (strcasecmp(line, "content-length") == 0) {
		errno = 0;
		r->body_len = strtol(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0)
			return 400;
		if (r->body_len > TS_LINE_MAX)
			return 413;
	} else if (strcasecmp(line, "mcp-session-id") == 0)
		r->session = v;
	else if (strcasecmp(line, "connection") == 0)
		r->is_close = strcasecmp(v, "close") == 0;
	else if (strcasecmp(line, "transfer-encoding") == 0)
		return 501; /* only Content-Length bodies */
	return 0;
}

/* Returns 1 with a whole request, 0 to wait, -1 after a fatal reply. */
static int
ts_http_parse(struct ts_conn *c, struct ts_http_req *r)
{
	static char head[TS_HEADER_MAX + 1];
	char *end, *line, *next, *version;
	int status = 0;

	memset(r, 0, sizeof(*r));
	end = memmem(c->in.data, c->in.len, "\r\n\r\n", 4);
	if (end == NULL || end - c->in.data > TS_HEADER_MAX) {
		if (c->in.len <= TS_HEADER_MAX)
			return 0;
		ts_http_fail(c, 431);
		return -1;
	}
	memcpy(head, c->in.data, (size_t)(end - c->in.data));
	head[end - c->in.data] = '\0';
	r->total = (size_t)(end - c->in.data) + 4;
	for (line = head; status == 0 && line != NULL; line = next) {
		if ((next = strstr(line, "\r\n")) != NULL)
			*next = '\0', next += 2;
		if (line != head)
			status = ts_http_header(r, line);
	}
	r->method = strtok_r(head, " ", &line);
	r->path = strtok_r(NULL, " ", &line);
	if ((version = strtok_r(NULL, " ", &line)) == NULL && status == 0)
		status = 400;
	if (status != 0) {
		ts_http_fail(c, status);
		return -1;
	}
	r->is_close |= strcmp(version, "HTTP/1.0") == 0;
	r->body = c->in.data + r->total;
	r->total += (size_t)r->body_len;
	return c->in.len >= r->total;
}

/* POST /forget: every session is forgotten, as a restarted server would. */
static void
ts_http_forget(struct ts_conn *c)
{
	char text[64];
	int n = 0;

	for (size_t i = 0; i < TS_SESSIONS_MAX; i++)
		if (ts.sessions[i][0] != '\0') {
			ts_session_forget(ts.sessions[i]);
			n++;
		}
	snprintf(text, sizeof(text), "forgot %d sessions", n);
	ts_http_reply(c, 200, NULL, text);
}

static void
ts_http_handle(struct ts_conn *c, struct ts_http_req *r)
{
	r->path[strcspn(r->path, "?")] = '\0';
	if (r->is_close)
		c->is_closing = true;
	if (strcmp(r->path, "/forget") == 0 && strcmp(r->method, "POST") == 0)
		ts_http_forget(c);
	else if (strcmp(r->path, "/mcp") != 0)
		ts_http_reply(c, 404, NULL, NULL);
	else if (strcmp(r->method, "POST") == 0)
		ts_http_post(c, r);
	else if (strcmp(r->method, "DELETE") == 0)
		ts_http_delete(c, r);
	else
		ts_http_reply(c, 405, "Allow: POST, DELETE\r\n", NULL);
}

/* Answers the whole requests buffered on a connection, in order. */
static void
ts_conn_process(struct ts_conn *c)
{
	struct ts_http_req r;

	while (!c->is_busy && !c->is_closing && !c->is_dead && !ts.is_exiting &&
	    c->in.len > 0 && ts_http_parse(c, &r) > 0) {
		ts_http_handle(c, &r);
		memmove(c->in.data, c->in.data + r.total, c->in.len - r.total);
		c->in.len -= r.total;
	}
}

static void
ts_conn_read(struct ts_conn *c)
{
	ssize_t n;

	ts_buf_reserve(&c->in, TS_CHUNK);
	n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
	if (n > 0)
		c->in.len += (size_t)n;
	else if (n == 0)
		c->is_eof = true;
	else if (errno != EINTR && errno != EAGAIN)
		c->is_dead = true;
}

/* Closes finished connections (all with is_all) and their timers. */
static void
ts_conns_sweep(bool is_all)
{
	struct ts_conn *c, **cp;

	for (cp = &ts.conns; (c = *cp) != NULL;) {
		if (!is_all && !c->is_dead &&
		    (c->is_busy || c->out.len > 0 ||
			(!c->is_eof && !c->is_closing))) {
			cp = &c->next;
			continue;
		}
		*cp = c->next;
		ts_timers_free(c, false);
		close(c->fd);
		free(c->in.data);
		free(c->out.data);
		free(c);
		ts.nconns--;
	}
}

static void
ts_http_accept(int lfd)
{
	struct ts_conn *c;
	int fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) < 0)
		return;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		ts_fatal("calloc");
	c->fd = fd;
	c->next = ts.conns;
	ts.conns = c;
	ts.nconns++;
}

static int
ts_http_listen(long port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t len = sizeof(sin);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		ts_fatal("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		ts_fatal("bind");
	if (listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		ts_fatal("listen");
	if (opt.is_port_only_message)
		ts_log("listening on port %u", ntohs(sin.sin_port));
	else
		ts_log("listening on http://127.0.0.1:%u/mcp",
		    ntohs(sin.sin_port));
	return fd;
}

/* Stdio ends at EOF once sleeps are answered, HTTP once flushed. */
static bool
ts_is_done(int lfd)
{
	if (lfd < 0)
		return ts.is_exiting || (ts.is_stdin_eof && ts.timers == NULL);
	for (struct ts_conn *c = ts.conns; ts.is_exiting && c; c = c->next)
		if (c->out.len > 0 && !c->is_dead)
			return false;
	return ts.is_exiting;
}

static size_t
ts_poll_setup(int lfd, struct pollfd *pfd, struct ts_conn **pconn)
{
	size_t n = 0;
	short ev;

	if (lfd < 0 && !ts.is_stdin_eof && ts_now_ms() >= ts.deaf_until)
		pfd[n++] = (struct pollfd){ STDIN_FILENO, POLLIN, 0 };
	if (lfd >= 0 && !ts.is_exiting && ts.nconns < TS_CONNS_MAX)
		pfd[n++] = (struct pollfd){ lfd, POLLIN, 0 };
	for (struct ts_conn *c = ts.conns; c != NULL; c = c->next) {
		ev = c->out.len > 0 ? POLLOUT : 0;
		if (!c->is_busy && !c->is_eof && !c->is_closing)
			ev |= POLLIN; /* busy: keep pipelined ones queued */
		if (ev == 0)
			continue;
		pconn[n] = c;
		pfd[n++] = (struct pollfd){ c->fd, ev, 0 };
	}
	return n;
}

/* Runs the poll loop: stdin or HTTP connections, and the sleep timers. */
static void
ts_run(int lfd)
{
	struct pollfd pfd[TS_CONNS_MAX + 2];
	struct ts_conn *pconn[TS_CONNS_MAX + 2] = { NULL };
	size_t n;

	int timeout;

	while (!ts_is_done(lfd)) {
		n = ts_poll_setup(lfd, pfd, pconn);
		timeout = ts_timers_timeout();
		if (ts.deaf_until > ts_now_ms() &&
		    (timeout < 0 || timeout > ts.deaf_until - ts_now_ms()))
			timeout = (int)(ts.deaf_until - ts_now_ms());
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			ts_fatal("poll");
		for (size_t i = 0; i < n; i++) {
			if (pfd[i].revents == 0)
				;
			else if (pconn[i] == NULL && pfd[i].fd == lfd)
				ts_http_accept(lfd);
			else if (pconn[i] == NULL)
				ts_stdio_read();
			else if (pfd[i].revents & POLLOUT)
				ts_conn_flush(pconn[i]);
			else
				ts_conn_read(pconn[i]);
			pconn[i] = NULL;
		}
		ts_timers_fire();
		for (struct ts_conn *c = ts.conns; c != NULL; c = c->next)
			ts_conn_process(c);
		ts_conns_sweep(false);
	}
}

bool
ts_is_modern(void)
{
	return opt.is_modern;
}

static void
ts_on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

static void
ts_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "start-delay-ms", required_argument, NULL, 0 },
		{ "exit-after", required_argument, NULL, 0 },
		{ "page-size", required_argument, NULL, 0 },
		{ "tools", required_argument, NULL, 0 },
		{ "http", required_argument, NULL, 0 },
		{ "protocol-version", required_argument, NULL, 0 },
		{ "log-file", required_argument, NULL, 0 },
		{ "variant-file", required_argument, NULL, 0 },
		{ "garbage", no_argument, &opt.is_garbage, 1 },
		{ "early-notify", no_argument, &opt.is_early_notify, 1 },
		{ "ping-client", no_argument, &opt.is_ping_client, 1 },
		{ "repeat-cursor", no_argument, &opt.is_repeat_cursor, 1 },
		{ "http-port-only-message", no_argument,
		    &opt.is_port_only_message, 1 },
		{ "modern", no_argument, &opt.is_modern, 1 },
		{ "conformance", no_argument, &opt.is_conformance, 1 },
		{ "echo-input", no_argument, &opt.is_echo_input, 1 },
		{ "forget-on-call", no_argument, &opt.is_forget_on_call, 1 },
		{ NULL, 0, NULL, 0 }
	};
	long *numbers[] = { &opt.start_delay_ms, &opt.exit_after,
		&opt.page_size, &opt.ntools, &opt.http_port };
	int ch, i = -1;
	char *end;

	while ((ch = getopt_long(argc, argv, "", longopts, &i)) == 0) {
		if (i == 5)
			opt.protocol_version = optarg;
		if (i == 6)
			opt.log_file = optarg;
		if (i == 7)
			opt.variant_file = optarg;
		if (i > 4 || longopts[i].flag != NULL)
			continue;
		errno = 0;
		*numbers[i] = strtol(optarg, &end, 10);
		if (!isdigit((unsigned char)*optarg) || *end || errno ||
		    *numbers[i] > (i == 4 ? 65535 : INT_MAX))
			break;
	}
	if (ch != -1 || optind != argc) {
		ts_log("usage: mcp-testserver [--start-delay-ms N] "
		       "[--exit-after N] [--garbage]\n"
		       "\t[--early-notify] [--ping-client] "
		       "[--protocol-version V] [--page-size N]\n"
		       "\t[--repeat-cursor] [--tools N] [--modern] "
		       "[--conformance] [--log-file PATH] [--echo-input]\n"
		       "\t[--variant-file PATH]\n"
		       "\t[--http PORT [--http-port-only-message] "
		       "[--forget-on-call]]");
		exit(2);
	}
	if (opt.is_repeat_cursor && opt.page_size == 0)
		opt.page_size = 1;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = ts_on_signal };
	struct timespec delay;
	int lfd = -1;

	ts_options(argc, argv);
	if (opt.variant_file != NULL)
		ts_variant_read(opt.variant_file);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (opt.is_early_notify)
		ts_notify(json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
		    "notifications/tools/list_changed"));
	delay.tv_sec = opt.start_delay_ms / 1000;
	delay.tv_nsec = opt.start_delay_ms % 1000 * 1000000;
	while (nanosleep(&delay, &delay) < 0 && errno == EINTR)
		;
	if (opt.http_port >= 0)
		lfd = ts_http_listen(opt.http_port);
	ts_run(lfd);
	ts_timers_free(NULL, true);
	ts_conns_sweep(true);
	free(ts.in.data);
	if (lfd >= 0)
		close(lfd);
	return 0;
}
