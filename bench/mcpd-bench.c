/* SPDX-License-Identifier: ISC */
/* mcpd-bench: calls a tool N times at concurrency C, directly or via mcpd. */
#define _GNU_SOURCE 1 /* pipe2 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "jsonrpc.h"
#include "linebuf.h"

#define BENCH_MAX_LINE	   (16 << 20)
#define BENCH_INIT_ID	   "initialize"
#define BENCH_PROTOCOL	   "2025-11-25"
#define BENCH_TOOL	   "echo"
#define BENCH_EXIT_USAGE   2
#define BENCH_REAP_WAIT_MS 2000

extern char **environ;

struct bench_options {
	bool is_direct;
	bool is_json;
	char **command;		 /* direct: the server's argv */
	const char *socket_path; /* mcpd: the control socket */
	const char *server;	 /* mcpd: the server name */
	long calls;		 /* measured calls */
	long concurrency;	 /* calls in flight */
	long connections;	 /* mcpd: connections sharing them */
	long warmup;		 /* calls before measuring */
	long timeout_s;		 /* of the whole run */
};

struct bench;

static void bench_fail(struct bench *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
static void bench_usage(const char *) __attribute__((noreturn));

/* One stream to the server: a pipe pair (direct) or one socket (mcpd). */
struct bench_conn {
	struct bench *b;
	struct bufferevent *rd;
	struct bufferevent *wr; /* == rd on a socket */
	struct linebuf lb;
};

struct bench {
	struct bench_options o;
	struct event_base *base;
	struct event *deadline;
	struct bench_conn *conns;
	long nconns;
	pid_t child;
	const char *method;
	json_t *params; /* of every call, shared */
	long total;	/* warmup + calls */
	long issued;
	long completed;
	uint64_t *sent_us; /* per call id; 0 once answered */
	uint64_t *lat_us;  /* latencies of the measured calls */
	long nlat;
	uint64_t start_us; /* when the first measured call was sent */
	uint64_t end_us;   /* when the last answer came */
	char *error;	   /* why the run failed */
};

static uint64_t
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Records the first failure of the run and leaves the loop. */
static void
bench_fail(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->error == NULL) {
		va_start(ap, fmt);
		if (vasprintf(&b->error, fmt, ap) < 0)
			b->error = NULL;
		va_end(ap);
		if (b->error == NULL)
			b->error = strdup("out of memory");
	}
	event_base_loopbreak(b->base);
}

static void
bench_send(struct bench_conn *c, json_t *msg)
{
	if (msg == NULL ||
	    jsonrpc_write(bufferevent_get_output(c->wr), msg) < 0)
		bench_fail(c->b, "out of memory");
	json_decref(msg);
}

/* Sends the next call on c; its id is its index in the run. */
static void
bench_issue(struct bench_conn *c)
{
	struct bench *b = c->b;
	long i = b->issued++;
	json_t *id = json_integer(i);

	json_incref(b->params);
	if (i == b->o.warmup)
		b->start_us = bench_now_us();
	b->sent_us[i] = bench_now_us();
	bench_send(c, jsonrpc_request(id, b->method, b->params));
	json_decref(id);
}

static void
bench_start_calls(struct bench *b)
{
	for (long i = 0; i < b->o.concurrency && b->issued < b->total; i++)
		bench_issue(&b->conns[i % b->nconns]);
}

static bool
bench_result_is_error(const json_t *result)
{
	return json_is_true(json_object_get(result, "isError"));
}

/* A good answer to call i: its latency, then the next call on c. */
static void
bench_record(struct bench_conn *c, json_int_t i, uint64_t now)
{
	struct bench *b = c->b;

	if (i >= b->o.warmup)
		b->lat_us[b->nlat++] = now - b->sent_us[i];
	b->sent_us[i] = 0;
	if (++b->completed == b->total) {
		b->end_us = now;
		event_base_loopbreak(b->base);
	} else if (b->issued < b->total)
		bench_issue(c);
}

static void
bench_complete(struct bench_conn *c, const struct jsonrpc_msg *m)
{
	struct bench *b = c->b;
	json_int_t i = json_integer_value(m->id);
	uint64_t now = bench_now_us();

	if (i < 0 || i >= b->issued || b->sent_us[i] == 0)
		bench_fail(b, "answer with an unknown id %lld", (long long)i);
	else if (m->type == JSONRPC_ERROR)
		bench_fail(b, "call %lld failed: %d %s", (long long)i,
		    m->error_code, m->error_message);
	else if (bench_result_is_error(m->result))
		bench_fail(b, "call %lld: the tool returned isError",
		    (long long)i);
	else
		bench_record(c, i, now);
}

/* The initialize answer (direct mode): say initialized, then go. */
static void
bench_initialized(struct bench_conn *c, const struct jsonrpc_msg *m)
{
	if (m->type == JSONRPC_ERROR) {
		bench_fail(c->b, "initialize failed: %d %s", m->error_code,
		    m->error_message);
		return;
	}
	bench_send(c, jsonrpc_notification("notifications/initialized", NULL));
	bench_start_calls(c->b);
}

/* A server-to-client request: ping is answered, the rest refused. */
static void
bench_answer_request(struct bench_conn *c, const struct jsonrpc_msg *m)
{
	if (strcmp(m->method, "ping") == 0)
		bench_send(c, jsonrpc_result(m->id, NULL));
	else
		bench_send(c,
		    jsonrpc_error(m->id, JSONRPC_METHOD_NOT_FOUND,
			"mcpd-bench offers no capabilities", NULL));
}

static void
bench_dispatch(struct bench_conn *c, const struct jsonrpc_msg *m)
{
	if (m->type == JSONRPC_REQUEST)
		bench_answer_request(c, m);
	else if (m->type == JSONRPC_NOTIFICATION)
		return;
	else if (json_is_integer(m->id))
		bench_complete(c, m);
	else if (json_is_string(m->id) &&
	    strcmp(json_string_value(m->id), BENCH_INIT_ID) == 0)
		bench_initialized(c, m);
	else
		bench_fail(c->b, "answer with an unexpected id");
}

static void
bench_handle_line(struct bench_conn *c, const char *line, size_t len)
{
	struct jsonrpc_msg m;
	json_error_t err;
	char *cause = NULL;
	json_t *msg = jsonrpc_parse(line, len, &err);

	if (msg == NULL)
		bench_fail(c->b, "peer sent a line that is not JSON: %s",
		    err.text);
	else if (jsonrpc_classify(msg, &m, &cause) < 0)
		bench_fail(c->b, "peer sent a bad message: %s", cause);
	else
		bench_dispatch(c, &m);
	free(cause);
	json_decref(msg);
}

static void
bench_read(struct bufferevent *bev, void *arg)
{
	struct bench_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char *line;
	size_t len;
	int r = 0;

	while (c->b->error == NULL &&
	    (r = linebuf_peek(&c->lb, in, &line, &len)) == 1) {
		bench_handle_line(c, line, len);
		linebuf_consume(&c->lb, in);
	}
	if (c->b->error == NULL && r < 0)
		bench_fail(c->b, "peer sent a line over %d bytes",
		    BENCH_MAX_LINE);
}

static void
bench_event(struct bufferevent *bev, short what, void *arg)
{
	struct bench_conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_EOF)
		bench_fail(c->b,
		    "the peer closed the connection after %ld "
		    "of %ld calls",
		    c->b->completed, c->b->total);
	else if (what & BEV_EVENT_ERROR)
		bench_fail(c->b, "connection error after %ld of %ld calls: %s",
		    c->b->completed, c->b->total, strerror(errno));
}

static void
bench_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct bench *b = arg;

	(void)fd;
	(void)what;
	bench_fail(b, "timed out after %ld s with %ld of %ld calls answered",
	    b->o.timeout_s, b->completed, b->total);
}

static struct bufferevent *
bench_bev_new(struct bench_conn *c, int fd, short enable)
{
	struct bufferevent *bev;

	evutil_make_socket_nonblocking(fd);
	bev = bufferevent_socket_new(c->b->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		close(fd);
		return NULL;
	}
	bufferevent_setcb(bev, enable & EV_READ ? bench_read : NULL, NULL,
	    bench_event, c);
	bufferevent_enable(bev, enable);
	return bev;
}

/* Spawns the server with its stdin and stdout on pipes to us. */
static int
bench_spawn(struct bench *b, struct bench_conn *c)
{
	posix_spawn_file_actions_t fa;
	int to[2], from[2], r;

	if (pipe2(to, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(from, O_CLOEXEC) < 0) {
		r = -errno;
		close(to[0]);
		close(to[1]);
		return r;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
	r = -posix_spawnp(&b->child, b->o.command[0], &fa, NULL, b->o.command,
	    environ);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	c->rd = bench_bev_new(c, from[0], EV_READ);
	c->wr = bench_bev_new(c, to[1], EV_WRITE);
	if (r < 0) {
		b->child = 0;
		return r;
	}
	return c->rd != NULL && c->wr != NULL ? 0 : -ENOMEM;
}

static int
bench_connect(struct bench *b, struct bench_conn *c)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(b->o.socket_path) >= sizeof sun.sun_path)
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, b->o.socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	c->rd = c->wr = bench_bev_new(c, fd, EV_READ | EV_WRITE);
	return c->rd != NULL ? 0 : -ENOMEM;
}

/* The method and params that every call sends. */
static void
bench_prepare(struct bench *b)
{
	json_t *args = json_pack("{s:s}", "message", "bench");

	if (b->o.is_direct) {
		b->method = "tools/call";
		b->params = json_pack("{s:s, s:o}", "name", BENCH_TOOL,
		    "arguments", args);
	} else {
		b->method = "mcpd/call";
		b->params = json_pack("{s:s, s:s, s:o}", "server", b->o.server,
		    "tool", BENCH_TOOL, "arguments", args);
	}
}

static void
bench_send_initialize(struct bench_conn *c)
{
	json_t *id = json_string(BENCH_INIT_ID);

	bench_send(c,
	    jsonrpc_request(id, "initialize",
		json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
		    BENCH_PROTOCOL, "capabilities", "clientInfo", "name",
		    "mcpd-bench", "version", "1")));
	json_decref(id);
}

static int
bench_open(struct bench *b)
{
	int r = 0;

	b->nconns = b->o.is_direct ? 1 : b->o.connections;
	b->conns = calloc(b->nconns, sizeof *b->conns);
	if (b->conns == NULL)
		return -ENOMEM;
	for (long i = 0; i < b->nconns && r == 0; i++) {
		b->conns[i].b = b;
		linebuf_init(&b->conns[i].lb, BENCH_MAX_LINE);
		r = b->o.is_direct ? bench_spawn(b, &b->conns[i]) :
				     bench_connect(b, &b->conns[i]);
	}
	if (r < 0)
		bench_fail(b, "cannot %s %s: %s",
		    b->o.is_direct ? "start" : "connect to",
		    b->o.is_direct ? b->o.command[0] : b->o.socket_path,
		    strerror(-r));
	else if (b->o.is_direct)
		bench_send_initialize(&b->conns[0]);
	else
		bench_start_calls(b);
	return r;
}

/* Waits a moment for the server, which sees EOF on stdin, then kills it. */
static void
bench_reap(pid_t pid)
{
	for (int waited = 0; waited < BENCH_REAP_WAIT_MS; waited += 10) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
bench_close(struct bench *b)
{
	for (long i = 0; i < b->nconns; i++) {
		struct bench_conn *c = &b->conns[i];

		if (c->wr != NULL && c->wr != c->rd)
			bufferevent_free(c->wr);
		if (c->rd != NULL)
			bufferevent_free(c->rd);
	}
	free(b->conns);
	b->conns = NULL;
	if (b->child > 0)
		bench_reap(b->child);
}

static int
bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p of the sorted latencies. */
static uint64_t
bench_percentile(const struct bench *b, int p)
{
	long rank = (b->nlat * p + 99) / 100;

	return b->lat_us[rank > 0 ? rank - 1 : 0];
}

static void
bench_report(struct bench *b)
{
	double secs = (double)(b->end_us - b->start_us) / 1e6;
	double rate = secs > 0 ? (double)b->nlat / secs : 0;
	const char *mode = b->o.is_direct ? "direct" : "mcpd";
	json_t *j;

	qsort(b->lat_us, b->nlat, sizeof *b->lat_us, bench_cmp_u64);
	if (!b->o.is_json) {
		printf("mode=%s concurrency=%ld calls=%ld calls_per_s=%.1f "
		       "p50_us=%llu p99_us=%llu\n",
		    mode, b->o.concurrency, b->nlat, rate,
		    (unsigned long long)bench_percentile(b, 50),
		    (unsigned long long)bench_percentile(b, 99));
		return;
	}
	j = json_pack("{s:s, s:I, s:I, s:f, s:I, s:I}", "mode", mode,
	    "concurrency", (json_int_t)b->o.concurrency, "calls",
	    (json_int_t)b->nlat, "calls_per_s", rate, "p50_us",
	    (json_int_t)bench_percentile(b, 50), "p99_us",
	    (json_int_t)bench_percentile(b, 99));
	json_dumpf(j, stdout,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(9));
	putchar('\n');
	json_decref(j);
}

static void
bench_usage(const char *why)
{
	if (why != NULL)
		fprintf(stderr, "mcpd-bench: %s\n", why);
	fprintf(stderr,
	    "usage: mcpd-bench [-n CALLS] [-c CONCURRENCY] [-w WARMUP] "
	    "[-t TIMEOUT_S] [--json]\n"
	    "\t\t  --direct -- COMMAND [ARG...]\n"
	    "       mcpd-bench [-n CALLS] [-c CONCURRENCY] [-w WARMUP] "
	    "[-t TIMEOUT_S] [--json]\n"
	    "\t\t  [-k CONNECTIONS] --socket PATH --server NAME\n");
	exit(BENCH_EXIT_USAGE);
}

static long
bench_number(const char *name, const char *s, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min) {
		fprintf(stderr, "mcpd-bench: --%s wants an integer >= %ld\n",
		    name, min);
		bench_usage(NULL);
	}
	return v;
}

static void
bench_check_options(struct bench_options *o)
{
	if (o->is_direct == (o->socket_path != NULL))
		bench_usage("give either --direct -- COMMAND or --socket");
	if (o->is_direct && o->command[0] == NULL)
		bench_usage("--direct needs a command after --");
	if (!o->is_direct && (o->server == NULL || o->command[0] != NULL))
		bench_usage("--socket needs --server NAME and no command");
	if (o->is_direct && o->connections != 1)
		bench_usage("--connections needs --socket");
	if (o->connections > o->concurrency)
		bench_usage("--connections may not exceed --concurrency");
}

static void
bench_options(struct bench_options *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "calls", required_argument, NULL, 'n' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "connections", required_argument, NULL, 'k' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "direct", no_argument, NULL, 'D' },
		{ "socket", required_argument, NULL, 's' },
		{ "server", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof *o);
	o->calls = 10000;
	o->concurrency = o->connections = 1;
	o->warmup = 200;
	o->timeout_s = 300;
	while ((ch = getopt_long(argc, argv, "+n:c:k:w:t:s:h", longopts,
		    NULL)) != -1) {
		switch (ch) {
		case 'n':
			o->calls = bench_number("calls", optarg, 1);
			break;
		case 'c':
			o->concurrency = bench_number("concurrency", optarg, 1);
			break;
		case 'k':
			o->connections = bench_number("connections", optarg, 1);
			break;
		case 'w':
			o->warmup = bench_number("warmup", optarg, 0);
			break;
		case 't':
			o->timeout_s = bench_number("timeout", optarg, 1);
			break;
		case 'D':
			o->is_direct = true;
			break;
		case 's':
			o->socket_path = optarg;
			break;
		case 'S':
			o->server = optarg;
			break;
		case 'j':
			o->is_json = true;
			break;
		default:
			bench_usage(NULL);
		}
	}
	o->command = argv + optind;
	bench_check_options(o);
}

static int
bench_init(struct bench *b)
{
	struct timeval tv = { .tv_sec = b->o.timeout_s };

	b->total = b->o.warmup + b->o.calls;
	b->sent_us = calloc(b->total, sizeof *b->sent_us);
	b->lat_us = calloc(b->o.calls, sizeof *b->lat_us);
	b->base = event_base_new();
	if (b->sent_us == NULL || b->lat_us == NULL || b->base == NULL)
		return -ENOMEM;
	b->deadline = evtimer_new(b->base, bench_deadline, b);
	if (b->deadline == NULL || evtimer_add(b->deadline, &tv) < 0)
		return -ENOMEM;
	bench_prepare(b);
	return b->params != NULL ? 0 : -ENOMEM;
}

static void
bench_free(struct bench *b)
{
	bench_close(b);
	if (b->deadline != NULL)
		event_free(b->deadline);
	if (b->base != NULL)
		event_base_free(b->base);
	json_decref(b->params);
	free(b->sent_us);
	free(b->lat_us);
	free(b->error);
}

int
main(int argc, char **argv)
{
	struct bench b = { 0 };
	int status = 0;

	bench_options(&b.o, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (bench_init(&b) < 0) {
		fprintf(stderr, "mcpd-bench: out of memory\n");
		return 1;
	}
	if (bench_open(&b) == 0)
		event_base_dispatch(b.base);
	if (b.error == NULL && b.completed == b.total)
		bench_report(&b);
	else {
		fprintf(stderr, "mcpd-bench: %s\n",
		    b.error != NULL ? b.error : "the run stopped early");
		status = 1;
	}
	bench_free(&b);
	return status;
}
