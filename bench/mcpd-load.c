/* SPDX-License-Identifier: ISC */
/* mcpd-load: drives an MCP Streamable HTTP endpoint with tools/call. */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * One thread, epoll, C keep-alive connections with TCP_NODELAY, each with
 * one request in flight (so C is the concurrency). In the 2025 era each
 * connection is one session (initialize, its Mcp-Session-Id, initialized,
 * then calls); in the 2026-07-28 era every call is a stateless request
 * with its _meta and headers. An answer is read whole (Content-Length or
 * chunked), as JSON or as an event stream, and counted as a result or an
 * error by a scan for "result"/"error" at its top level's start, not a
 * JSON parse: the generator must cost less than what it measures.
 *
 * --serve PORT answers every POST at once with a fixed result (and a
 * session id), in one thread with epoll: run against it, mcpd-load shows
 * its own ceiling (the two share the machine's cores).
 */

#define LOAD_BUF	(256 * 1024) /* an answer, headers included, at most */
#define LOAD_MAX_CONN	1024
#define LOAD_EXIT_USAGE 2

enum load_phase {
	LOAD_INIT,
	LOAD_INITIALIZED,
	LOAD_CALL
};

struct load_conn {
	int fd;
	enum load_phase phase;
	char session[128];
	char buf[LOAD_BUF];
	size_t len;
	uint64_t sent_ns;
	size_t out_off, out_len; /* what is left of the request to write */
	char out[4096];
};

struct load {
	struct sockaddr_in addr;
	char host[64], path[256], token[512];
	const char *tool, *args;
	bool is_modern;
	int nconn;
	double warm_s, run_s;
	uint64_t start_ns, measure_ns, stop_ns;
	uint32_t *lat_us;
	size_t nlat, lat_size;
	uint64_t calls, errors, json, sse, id;
	int ep;
};

static uint64_t
load_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
load_die(const char *what)
{
	perror(what);
	exit(1);
}

/* http://HOST:PORT/PATH with an IPv4 host. */
static int
load_parse_url(struct load *l, const char *url)
{
	char host[64];
	int port = 80, n = 0;

	if (sscanf(url, "http://%63[^:/]:%d%n", host, &port, &n) < 1 &&
	    sscanf(url, "http://%63[^:/]%n", host, &n) < 1)
		return -1;
	if (n == 0)
		n = (int)strlen("http://") + (int)strlen(host);
	snprintf(l->path, sizeof l->path, "%s", url[n] != '\0' ? url + n : "/");
	snprintf(l->host, sizeof l->host, "%s:%d", host, port);
	l->addr.sin_family = AF_INET;
	l->addr.sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &l->addr.sin_addr) == 1 ? 0 : -1;
}

/* The request for c's phase into c->out. */
static void
load_request(struct load *l, struct load_conn *c)
{
	char body[2048], hdr[1024] = "";
	int n;

	l->id++;
	if (c->phase == LOAD_INIT) {
		snprintf(body, sizeof body,
		    "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"initialize\","
		    "\"params\":{\"protocolVersion\":\"2025-11-25\","
		    "\"capabilities\":{},\"clientInfo\":{\"name\":\"mcpd-load\","
		    "\"version\":\"1\"}}}",
		    (unsigned long long)l->id);
	} else if (c->phase == LOAD_INITIALIZED) {
		snprintf(body, sizeof body,
		    "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/initialized\"}");
	} else if (l->is_modern) {
		snprintf(body, sizeof body,
		    "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"%s\",\"arguments\":%s,\"_meta\":{"
		    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		    (unsigned long long)l->id, l->tool, l->args);
		snprintf(hdr, sizeof hdr,
		    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: "
		    "tools/call\r\nMcp-Name: %s\r\n",
		    l->tool);
	} else {
		snprintf(body, sizeof body,
		    "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
		    (unsigned long long)l->id, l->tool, l->args);
	}
	if (c->session[0] != '\0' && !l->is_modern)
		snprintf(hdr + strlen(hdr), sizeof hdr - strlen(hdr),
		    "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n",
		    c->session);
	n = snprintf(c->out, sizeof c->out,
	    "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n%s%s%s%s"
	    "Content-Length: %zu\r\n\r\n%s",
	    l->path, l->host, hdr,
	    l->token[0] != '\0' ? "Authorization: Bearer " : "", l->token,
	    l->token[0] != '\0' ? "\r\n" : "", strlen(body), body);
	c->out_len = (size_t)n;
	c->out_off = 0;
	c->sent_ns = load_now_ns();
}

static void
load_write(struct load_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off,
		    c->out_len - c->out_off);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0)
			load_die("write");
		c->out_off += (size_t)n;
	}
}

static void
load_connect(struct load *l, struct load_conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET };
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 ||
	    connect(c->fd, (struct sockaddr *)&l->addr, sizeof l->addr) < 0)
		load_die("connect");
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(c->fd, F_SETFL, O_NONBLOCK);
	ev.data.ptr = c;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		load_die("epoll_ctl");
	c->phase = l->is_modern ? LOAD_CALL : LOAD_INIT;
	load_request(l, c);
	load_write(c);
}

/* A header's value in the head (case-insensitive name), into out. */
static bool
load_header(const char *head, size_t hlen, const char *name, char *out,
    size_t size)
{
	size_t nlen = strlen(name);

	for (const char *p = head; p + nlen + 1 < head + hlen; p++) {
		if ((p == head || p[-1] == '\n') &&
		    strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			const char *v = p + nlen + 1, *e;

			v += strspn(v, " \t");
			e = strstr(v, "\r\n");
			if (e == NULL || (size_t)(e - v) >= size)
				return false;
			memcpy(out, v, (size_t)(e - v));
			out[e - v] = '\0';
			return true;
		}
	}
	return false;
}

/*
 * The end of a chunked body at body (len bytes), 0 when incomplete; when
 * complete, the data is moved together in place (is_move) and its length
 * put in *dlen.
 */
static size_t
load_chunks(char *body, size_t len, bool is_move, size_t *dlen)
{
	size_t off = 0, out = 0;

	for (;;) {
		char *eol = memmem(body + off, len - off, "\r\n", 2);
		unsigned long n;

		if (eol == NULL)
			return 0;
		n = strtoul(body + off, NULL, 16);
		off = (size_t)(eol - body) + 2;
		if (n == 0)
			break;
		if (off + n + 2 > len)
			return 0;
		if (is_move)
			memmove(body + out, body + off, n);
		out += n;
		off += n + 2;
	}
	if (off + 2 > len)
		return 0;
	*dlen = out;
	return off + 2;
}

static size_t
load_chunked(char *body, size_t len, size_t *dlen)
{
	/* Moved only once whole: a part is read again with the rest. */
	if (load_chunks(body, len, false, dlen) == 0)
		return 0;
	return load_chunks(body, len, true, dlen);
}

/* Whether the answer (a JSON body or an event stream) is a result. */
static bool
load_is_result(const char *data, size_t len)
{
	return memmem(data, len, "\"result\"", 8) != NULL &&
	    memmem(data, len, "\"error\"", 7) == NULL;
}

/* One whole answer in c->buf, if there is one: 1, else 0. */
static int
load_answer(struct load *l, struct load_conn *c)
{
	char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), value[128];
	size_t hlen, blen, used, dlen;
	char *body;
	int status = 0;

	if (end == NULL)
		return 0;
	hlen = (size_t)(end - c->buf) + 4;
	body = c->buf + hlen;
	sscanf(c->buf, "HTTP/1.1 %d", &status);
	if (load_header(c->buf, hlen, "content-length", value, sizeof value)) {
		blen = strtoul(value, NULL, 10);
		if (hlen + blen > c->len)
			return 0;
		used = hlen + blen;
		dlen = blen;
	} else if (load_header(c->buf, hlen, "transfer-encoding", value,
		       sizeof value)) {
		if ((blen = load_chunked(body, c->len - hlen, &dlen)) == 0)
			return 0;
		used = hlen + blen;
	} else {
		used = hlen;
		dlen = 0;
	}
	if (c->phase == LOAD_INIT)
		load_header(c->buf, hlen, "mcp-session-id", c->session,
		    sizeof c->session);
	if (c->phase == LOAD_CALL) {
		uint64_t now = load_now_ns();
		bool is_sse = load_header(c->buf, hlen, "content-type", value,
				  sizeof value) &&
		    strncmp(value, "text/event-stream", 17) == 0;

		if (now >= l->measure_ns && now < l->stop_ns) {
			l->calls++;
			l->sse += is_sse;
			l->json += !is_sse;
			if (status != 200 || !load_is_result(body, dlen)) {
				if (l->errors++ == 0)
					fprintf(stderr,
					    "mcpd-load: the first error: %d %.*s\n",
					    status,
					    (int)(dlen < 300 ? dlen : 300),
					    body);
			}
			if (l->nlat == l->lat_size) {
				l->lat_size = l->lat_size ? 2 * l->lat_size :
							    65536;
				l->lat_us = realloc(l->lat_us,
				    l->lat_size * sizeof *l->lat_us);
				if (l->lat_us == NULL)
					load_die("realloc");
			}
			l->lat_us[l->nlat++] = (uint32_t)((now - c->sent_ns) /
			    1000);
		}
	} else if (status / 100 != 2) {
		fprintf(stderr, "mcpd-load: %s answered %d: %.*s\n",
		    c->phase == LOAD_INIT ? "initialize" : "initialized",
		    status, (int)(c->len < 400 ? c->len : 400), c->buf);
		exit(1);
	} else {
		c->phase++;
	}
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
	return 1;
}

static void
load_read(struct load *l, struct load_conn *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->buf + c->len,
		    sizeof c->buf - c->len);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			fprintf(stderr,
			    "mcpd-load: the server closed a connection\n");
			exit(1);
		}
		c->len += (size_t)n;
		while (load_answer(l, c)) {
			if (load_now_ns() >= l->stop_ns)
				return;
			load_request(l, c);
			load_write(c);
		}
		if (c->len == sizeof c->buf) {
			fprintf(stderr, "mcpd-load: an answer over %d bytes\n",
			    LOAD_BUF);
			exit(1);
		}
	}
}

static int
load_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void
load_run(struct load *l)
{
	struct load_conn *conns = calloc((size_t)l->nconn, sizeof *conns);
	struct epoll_event evs[64];
	struct rusage ru;
	double secs;

	if (conns == NULL || (l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		load_die("epoll_create1");
	l->start_ns = load_now_ns();
	l->measure_ns = l->start_ns + (uint64_t)(l->warm_s * 1e9);
	l->stop_ns = l->measure_ns + (uint64_t)(l->run_s * 1e9);
	for (int i = 0; i < l->nconn; i++)
		load_connect(l, &conns[i]);
	while (load_now_ns() < l->stop_ns) {
		int n = epoll_wait(l->ep, evs, 64, 100);

		for (int i = 0; i < n; i++) {
			struct load_conn *c = evs[i].data.ptr;

			if (evs[i].events & EPOLLOUT)
				load_write(c);
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				load_read(l, c);
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	qsort(l->lat_us, l->nlat, sizeof *l->lat_us, load_cmp);
	secs = l->run_s;
	printf("calls=%llu rate=%.0f p50_us=%u p99_us=%u errors=%llu json=%llu "
	       "sse=%llu cpu_s=%.3f conns=%d era=%s\n",
	    (unsigned long long)l->calls, (double)l->calls / secs,
	    l->nlat ? l->lat_us[l->nlat / 2] : 0,
	    l->nlat ? l->lat_us[l->nlat * 99 / 100] : 0,
	    (unsigned long long)l->errors, (unsigned long long)l->json,
	    (unsigned long long)l->sse,
	    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	    l->nconn, l->is_modern ? "2026-07-28" : "2025-11-25");
	free(conns);
}

/* ---- --serve: the trivial responder ---- */

/* Answers each whole request in c->buf at once; false when c is done. */
static bool
load_serve_read(struct load_conn *c)
{
	static const char body[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"hi\"}]}}";
	static char answer[512];
	static int alen;
	char value[32];
	ssize_t n;

	if (alen == 0)
		alen = snprintf(answer, sizeof answer,
		    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Mcp-Session-Id: s\r\nContent-Length: %zu\r\n\r\n%s",
		    sizeof body - 1, body);
	while ((n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len)) > 0) {
		char *end;

		c->len += (size_t)n;
		while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) != NULL) {
			size_t hlen = (size_t)(end - c->buf) + 4, blen = 0;

			if (load_header(c->buf, hlen, "content-length", value,
				sizeof value))
				blen = strtoul(value, NULL, 10);
			if (hlen + blen > c->len)
				break;
			/* A short write ends the connection: the client
			 * reads one answer at a time, so it never fills. */
			if (write(c->fd, answer, (size_t)alen) != alen)
				return false;
			memmove(c->buf, c->buf + hlen + blen,
			    c->len - hlen - blen);
			c->len -= hlen + blen;
		}
	}
	return n < 0 && errno == EAGAIN && c->len < sizeof c->buf;
}

/* One thread and epoll, as the generator: it must not be the limit. */
static void
load_serve(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || ep < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    listen(fd, 128) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		load_die("listen");
	printf("listening on 127.0.0.1:%d\n", port);
	fflush(stdout);
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			struct load_conn *c = evs[i].data.ptr;
			int cfd;

			if (c != NULL) {
				if (!load_serve_read(c)) {
					close(c->fd);
					free(c);
				}
				continue;
			}
			while ((cfd = accept4(fd, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				struct epoll_event cev = { .events = EPOLLIN };

				if ((c = calloc(1, sizeof *c)) == NULL)
					load_die("calloc");
				c->fd = cfd;
				setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one,
				    sizeof one);
				cev.data.ptr = c;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &cev) < 0)
					load_die("epoll_ctl");
			}
		}
	}
}

static void
load_usage(void)
{
	fprintf(stderr,
	    "usage: mcpd-load [-c CONNS] [-d SECONDS] [-w SECONDS] [--era 2025|2026]\n"
	    "                 [--token TOKEN] [--tool NAME] [--args JSON] URL\n"
	    "       mcpd-load --serve PORT\n");
	exit(LOAD_EXIT_USAGE);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "conns", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "era", required_argument, NULL, 'e' },
		{ "token", required_argument, NULL, 't' },
		{ "tool", required_argument, NULL, 'T' },
		{ "args", required_argument, NULL, 'a' },
		{ "serve", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct load l = { .nconn = 1,
		.warm_s = 1,
		.run_s = 5,
		.tool = "echo",
		.args = "{\"message\":\"hi\"}" };
	int c;

	while ((c = getopt_long(argc, argv, "c:d:w:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			l.nconn = atoi(optarg);
			break;
		case 'd':
			l.run_s = atof(optarg);
			break;
		case 'w':
			l.warm_s = atof(optarg);
			break;
		case 'e':
			l.is_modern = strcmp(optarg, "2026") == 0;
			break;
		case 't':
			snprintf(l.token, sizeof l.token, "%s", optarg);
			break;
		case 'T':
			l.tool = optarg;
			break;
		case 'a':
			l.args = optarg;
			break;
		case 's':
			load_serve(atoi(optarg));
			return 0;
		default:
			load_usage();
		}
	}
	if (optind != argc - 1 || l.nconn < 1 || l.nconn > LOAD_MAX_CONN ||
	    l.run_s <= 0 || load_parse_url(&l, argv[optind]) < 0)
		load_usage();
	signal(SIGPIPE, SIG_IGN);
	load_run(&l);
	free(l.lat_us);
	return l.errors > 0 ? 1 : 0;
}
