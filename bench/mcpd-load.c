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
 * The warm-up (-w) starts once every connection is through its handshake
 * (LOAD_SETUP_S at most), the measured time (-d) after it.
 *
 * --accept json asks for JSON answers only (Accept: application/json);
 * --accept both (the default) accepts an event stream too, which is what
 * most servers then answer a call with.
 *
 * --sse speaks the 2024-11-05 HTTP+SSE transport instead (mcp-hub serves
 * only that): each concurrency slot opens one GET stream on URL, takes
 * its endpoint event, and POSTs each message there on a second keep-alive
 * connection; a call's answer is the next message event on the stream
 * that holds a result or an error (notifications are skipped), and the
 * next call goes once both it and the POST's 202 are in.
 *
 * --serve PORT answers every POST at once with a fixed result (and a
 * session id), and a GET with an event stream whose endpoint takes POSTs
 * that it answers on that stream, in one thread with epoll: run against
 * it, mcpd-load shows its own ceiling in either transport (the two share
 * the machine's cores).
 */

#define LOAD_BUF	 (256 * 1024) /* an answer, headers included, at most */
#define LOAD_MAX_CONN	 1024
#define LOAD_SETUP_S	 60 /* every slot's handshake done within, or exit */
#define LOAD_EXIT_USAGE	 2
#define LOAD_ACCEPT_BOTH "application/json, text/event-stream"

enum load_phase {
	LOAD_ENDPOINT, /* --sse: the GET stream's endpoint event to come */
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
	/* --sse: the slot's other connection (the GET stream of a POST
	 * connection, and the other way round). */
	struct load_conn *peer;
	bool is_stream;
	bool is_head_read; /* a stream's response head */
	bool is_chunked;   /* a stream's body */
	size_t chunk_left; /* of the chunk being read, its data */
	char *ev;	   /* a stream's body, its chunks taken off */
	size_t ev_len;
	bool has_ack, has_msg; /* a POST's 202, its answer on the stream */
	char endpoint[512];    /* the path POSTs go to */
};

struct load {
	struct sockaddr_in addr;
	char host[80], path[256], token[512];
	const char *tool, *args;
	bool is_modern, is_sse;
	const char *accept;
	int nconn;
	double warm_s, run_s;
	uint64_t start_ns, measure_ns, stop_ns;
	int nready; /* slots through their handshake */
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
	    "Accept: %s\r\n%s%s%s%s"
	    "Content-Length: %zu\r\n\r\n%s",
	    l->is_sse ? c->endpoint : l->path, l->host, l->accept, hdr,
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

/* A keep-alive connection to the server for c, in the epoll set. */
static void
load_open(struct load *l, struct load_conn *c)
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
}

/*
 * A slot is through its handshake: once every slot is, the warm-up starts,
 * then the measured time (a relay that starts a server per session takes
 * its time, and slots still in their handshake are not the load).
 */
static void
load_ready(struct load *l)
{
	if (++l->nready < l->nconn)
		return;
	l->measure_ns = load_now_ns() + (uint64_t)(l->warm_s * 1e9);
	l->stop_ns = l->measure_ns + (uint64_t)(l->run_s * 1e9);
}

static void
load_connect(struct load *l, struct load_conn *c)
{
	load_open(l, c);
	c->phase = l->is_modern ? LOAD_CALL : LOAD_INIT;
	if (c->phase == LOAD_CALL)
		load_ready(l);
	load_request(l, c);
	load_write(c);
}

/* --sse: a slot's GET stream (its POST connection opens at the endpoint). */
static void
load_connect_sse(struct load *l, struct load_conn *stream,
    struct load_conn *post)
{
	stream->is_stream = true;
	stream->peer = post;
	post->peer = stream;
	post->fd = -1;
	if ((stream->ev = malloc(LOAD_BUF)) == NULL)
		load_die("malloc");
	load_open(l, stream);
	stream->phase = LOAD_ENDPOINT;
	stream->out_len = (size_t)snprintf(stream->out, sizeof stream->out,
	    "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n"
	    "%s%s%s\r\n",
	    l->path, l->host,
	    l->token[0] != '\0' ? "Authorization: Bearer " : "", l->token,
	    l->token[0] != '\0' ? "\r\n" : "");
	stream->out_off = 0;
	load_write(stream);
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

/* A whole HTTP response in c->buf: its length (0: not yet whole), its
 * head's length, status and body (chunks taken off). */
struct load_resp {
	size_t used, hlen, dlen;
	int status;
	char *body;
};

static bool
load_response(struct load_conn *c, struct load_resp *r)
{
	char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), value[128];
	size_t blen;

	if (end == NULL)
		return false;
	r->hlen = (size_t)(end - c->buf) + 4;
	r->body = c->buf + r->hlen;
	r->status = 0;
	sscanf(c->buf, "HTTP/1.1 %d", &r->status);
	if (load_header(c->buf, r->hlen, "content-length", value,
		sizeof value)) {
		blen = strtoul(value, NULL, 10);
		if (r->hlen + blen > c->len)
			return false;
		r->used = r->hlen + blen;
		r->dlen = blen;
	} else if (load_header(c->buf, r->hlen, "transfer-encoding", value,
		       sizeof value)) {
		if ((blen = load_chunked(r->body, c->len - r->hlen,
			 &r->dlen)) == 0)
			return false;
		r->used = r->hlen + blen;
	} else {
		r->used = r->hlen;
		r->dlen = 0;
	}
	return true;
}

/* A call's answer (status, and the data that holds it) at now. */
static void
load_count(struct load *l, struct load_conn *c, int status, bool is_sse,
    const char *data, size_t dlen)
{
	uint64_t now = load_now_ns();

	if (now < l->measure_ns || now >= l->stop_ns)
		return;
	l->calls++;
	l->sse += is_sse;
	l->json += !is_sse;
	if (status != 200 || !load_is_result(data, dlen)) {
		if (l->errors++ == 0)
			fprintf(stderr, "mcpd-load: the first error: %d %.*s\n",
			    status, (int)(dlen < 300 ? dlen : 300), data);
	}
	if (l->nlat == l->lat_size) {
		l->lat_size = l->lat_size ? 2 * l->lat_size : 65536;
		l->lat_us = realloc(l->lat_us, l->lat_size * sizeof *l->lat_us);
		if (l->lat_us == NULL)
			load_die("realloc");
	}
	l->lat_us[l->nlat++] = (uint32_t)((now - c->sent_ns) / 1000);
}

/* A handshake step's answer: the run ends unless it succeeded. */
static void
load_step(struct load_conn *c, int status, const char *text, size_t len)
{
	if (status / 100 != 2) {
		fprintf(stderr, "mcpd-load: %s answered %d: %.*s\n",
		    c->phase == LOAD_INIT ? "initialize" : "initialized",
		    status, (int)(len < 400 ? len : 400), text);
		exit(1);
	}
}

/* One whole answer in c->buf, if there is one: 1, else 0. */
static int
load_answer(struct load *l, struct load_conn *c)
{
	struct load_resp r;
	char value[128];

	if (!load_response(c, &r))
		return 0;
	if (c->phase == LOAD_INIT)
		load_header(c->buf, r.hlen, "mcp-session-id", c->session,
		    sizeof c->session);
	if (c->phase == LOAD_CALL)
		load_count(l, c, r.status,
		    load_header(c->buf, r.hlen, "content-type", value,
			sizeof value) &&
			strncmp(value, "text/event-stream", 17) == 0,
		    r.body, r.dlen);
	else {
		load_step(c, r.status, c->buf, c->len);
		if (++c->phase == LOAD_CALL)
			load_ready(l);
	}
	memmove(c->buf, c->buf + r.used, c->len - r.used);
	c->len -= r.used;
	return 1;
}

/* --sse: the next message of a POST connection once its last one has both
 * its 202 and (but for the initialized notification) its answer. */
static void
load_sse_next(struct load *l, struct load_conn *post)
{
	if (!post->has_ack ||
	    (!post->has_msg && post->phase != LOAD_INITIALIZED))
		return;
	if (post->phase != LOAD_CALL && ++post->phase == LOAD_CALL)
		load_ready(l);
	if (load_now_ns() >= l->stop_ns)
		return;
	post->has_ack = post->has_msg = false;
	load_request(l, post);
	load_write(post);
}

/* --sse: one event of a stream (its name and data). */
static void
load_sse_event(struct load *l, struct load_conn *stream, const char *name,
    size_t nlen, const char *data, size_t dlen)
{
	struct load_conn *post = stream->peer;

	if (stream->phase == LOAD_ENDPOINT) {
		if (nlen != 8 || memcmp(name, "endpoint", 8) != 0)
			return;
		if (dlen == 0 || dlen >= sizeof post->endpoint) {
			fprintf(stderr, "mcpd-load: a bad endpoint event\n");
			exit(1);
		}
		memcpy(post->endpoint, data, dlen);
		post->endpoint[dlen] = '\0';
		stream->phase = LOAD_CALL;
		load_open(l, post);
		post->phase = LOAD_INIT;
		load_request(l, post);
		load_write(post);
		return;
	}
	/* Notifications and the server's own requests are not answers. */
	if (nlen != 7 || memcmp(name, "message", 7) != 0 ||
	    (memmem(data, dlen, "\"result\"", 8) == NULL &&
		memmem(data, dlen, "\"error\":{", 9) == NULL))
		return;
	if (post->phase == LOAD_CALL)
		load_count(l, post, 200, true, data, dlen);
	else
		load_step(post, memmem(data, dlen, "\"result\"", 8) ? 200 : 500,
		    data, dlen);
	post->has_msg = true;
	load_sse_next(l, post);
}

/* --sse: the events whole in stream->ev, each handed to load_sse_event. */
static void
load_sse_events(struct load *l, struct load_conn *stream)
{
	char *end;

	while ((end = memmem(stream->ev, stream->ev_len, "\n\n", 2)) != NULL) {
		const char *name = "message", *data = "";
		size_t nlen = 7, dlen = 0,
		       used = (size_t)(end - stream->ev) + 2;

		for (char *p = stream->ev; p < end;) {
			char *eol = memchr(p, '\n', (size_t)(end - p) + 1);
			size_t len = (size_t)(eol - p);

			if (len > 0 && p[len - 1] == '\r')
				len--;
			if (len >= 6 && memcmp(p, "event:", 6) == 0) {
				name = p + 6 + (len > 6 && p[6] == ' ');
				nlen = (size_t)(p + len - name);
			} else if (len >= 5 && memcmp(p, "data:", 5) == 0) {
				/* One data line: what MCP servers send. */
				data = p + 5 + (len > 5 && p[5] == ' ');
				dlen = (size_t)(p + len - data);
			}
			p = eol + 1;
		}
		load_sse_event(l, stream, name, nlen, data, dlen);
		memmove(stream->ev, stream->ev + used, stream->ev_len - used);
		stream->ev_len -= used;
	}
}

/* --sse: a stream's bytes in stream->buf: its head, then its body with the
 * chunks taken off, into stream->ev. */
static void
load_sse_stream(struct load *l, struct load_conn *stream)
{
	size_t off = 0;

	if (!stream->is_head_read) {
		char *end = memmem(stream->buf, stream->len, "\r\n\r\n", 4);
		char value[64];
		int status = 0;

		if (end == NULL)
			return;
		off = (size_t)(end - stream->buf) + 4;
		sscanf(stream->buf, "HTTP/1.1 %d", &status);
		if (status != 200) {
			fprintf(stderr,
			    "mcpd-load: the GET stream answered %d: "
			    "%.*s\n",
			    status,
			    (int)(stream->len < 400 ? stream->len : 400),
			    stream->buf);
			exit(1);
		}
		stream->is_chunked = load_header(stream->buf, off,
		    "transfer-encoding", value, sizeof value);
		stream->is_head_read = true;
	}
	while (off < stream->len) {
		size_t take;

		if (stream->is_chunked && stream->chunk_left == 0) {
			char *eol = memmem(stream->buf + off, stream->len - off,
			    "\r\n", 2);

			if (eol == NULL)
				break;
			/* The line end after a chunk's data. */
			if (eol == stream->buf + off) {
				off += 2;
				continue;
			}
			stream->chunk_left = strtoul(stream->buf + off, NULL,
			    16);
			if (stream->chunk_left == 0) {
				fprintf(stderr,
				    "mcpd-load: the GET stream "
				    "ended\n");
				exit(1);
			}
			off = (size_t)(eol - stream->buf) + 2;
		}
		take = stream->len - off;
		if (stream->is_chunked && take > stream->chunk_left)
			take = stream->chunk_left;
		if (take > LOAD_BUF - stream->ev_len) {
			fprintf(stderr, "mcpd-load: an event over %d bytes\n",
			    LOAD_BUF);
			exit(1);
		}
		memcpy(stream->ev + stream->ev_len, stream->buf + off, take);
		stream->ev_len += take;
		off += take;
		if (stream->is_chunked)
			stream->chunk_left -= take;
	}
	memmove(stream->buf, stream->buf + off, stream->len - off);
	stream->len -= off;
	load_sse_events(l, stream);
}

/* --sse: a POST's answer (202, its body ignored), if whole: 1, else 0. */
static int
load_sse_ack(struct load *l, struct load_conn *post)
{
	struct load_resp r;

	if (!load_response(post, &r))
		return 0;
	if (r.status / 100 != 2) {
		fprintf(stderr, "mcpd-load: a POST answered %d: %.*s\n",
		    r.status, (int)(post->len < 400 ? post->len : 400),
		    post->buf);
		exit(1);
	}
	memmove(post->buf, post->buf + r.used, post->len - r.used);
	post->len -= r.used;
	post->has_ack = true;
	load_sse_next(l, post);
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
		if (c->is_stream) {
			load_sse_stream(l, c);
			continue;
		}
		if (l->is_sse) {
			while (load_sse_ack(l, c))
				;
			continue;
		}
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
	int nconns = l->is_sse ? 2 * l->nconn : l->nconn;
	struct load_conn *conns = calloc((size_t)nconns, sizeof *conns);
	struct epoll_event evs[64];
	struct rusage ru;
	double secs;

	if (conns == NULL || (l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		load_die("epoll_create1");
	l->start_ns = load_now_ns();
	l->measure_ns = l->stop_ns = UINT64_MAX; /* set by load_ready */
	for (int i = 0; i < l->nconn; i++) {
		if (l->is_sse)
			load_connect_sse(l, &conns[2 * i], &conns[2 * i + 1]);
		else
			load_connect(l, &conns[i]);
	}
	while (load_now_ns() < l->stop_ns) {
		int n = epoll_wait(l->ep, evs, 64, 100);

		if (l->nready < l->nconn &&
		    load_now_ns() - l->start_ns >
			LOAD_SETUP_S * 1000000000ull) {
			fprintf(stderr,
			    "mcpd-load: %d of %d sessions initialized after %d s\n",
			    l->nready, l->nconn, LOAD_SETUP_S);
			exit(1);
		}

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
	       "sse=%llu cpu_s=%.3f wall_s=%.3f conns=%d era=%s transport=%s\n",
	    (unsigned long long)l->calls, (double)l->calls / secs,
	    l->nlat ? l->lat_us[l->nlat / 2] : 0,
	    l->nlat ? l->lat_us[l->nlat * 99 / 100] : 0,
	    (unsigned long long)l->errors, (unsigned long long)l->json,
	    (unsigned long long)l->sse,
	    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	    (double)(load_now_ns() - l->start_ns) / 1e9, l->nconn,
	    l->is_modern ? "2026-07-28" : "2025-11-25",
	    l->is_sse ? "http+sse" : "streamable-http");
	for (int i = 0; i < nconns; i++)
		free(conns[i].ev);
	free(conns);
}

/* ---- --serve: the trivial responder ---- */

#define LOAD_SERVE_FDS 65536 /* --serve: a GET stream's session id is its fd */

static struct load_conn *load_streams[LOAD_SERVE_FDS];

/* write() of all of it; a short one ends the connection: the client reads
 * one answer at a time, so it never fills. */
static bool
load_put(int fd, const char *s, size_t len)
{
	return write(fd, s, len) == (ssize_t)len;
}

/* --serve: a GET opens a stream: its head and its endpoint event. */
static bool
load_serve_stream(struct load_conn *c)
{
	char out[256];
	int n, m;

	if (c->fd >= LOAD_SERVE_FDS)
		return false;
	m = snprintf(out + 128, 128,
	    "event: endpoint\ndata: /messages?sessionId=%d\n\n", c->fd);
	n = snprintf(out, 128,
	    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n%x\r\n",
	    m);
	memmove(out + n, out + 128, (size_t)m);
	memcpy(out + n + m, "\r\n", 2);
	c->is_stream = true;
	load_streams[c->fd] = c;
	return load_put(c->fd, out, (size_t)(n + m + 2));
}

/* --serve: a POST to a stream's endpoint: 202, and a request's answer as
 * a message event on that stream. */
static bool
load_serve_message(struct load_conn *c, const char *head, size_t hlen)
{
	static const char ack[] =
	    "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";
	static const char event[] =
	    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
	    "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n";
	char chunk[256];
	const char *body = head + hlen;
	int sid = atoi(strstr(head, "sessionId=") + 10), n;
	struct load_conn *stream = sid > 0 && sid < LOAD_SERVE_FDS ?
	    load_streams[sid] :
	    NULL;

	if (stream == NULL || !load_put(c->fd, ack, sizeof ack - 1))
		return false;
	/* A notification has no id: nothing to answer. */
	if (memmem(body, c->len - hlen, "\"id\"", 4) == NULL)
		return true;
	n = snprintf(chunk, sizeof chunk, "%zx\r\n%s\r\n", sizeof event - 1,
	    event);
	return load_put(stream->fd, chunk, (size_t)n);
}

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
			bool is_ok;

			if (load_header(c->buf, hlen, "content-length", value,
				sizeof value))
				blen = strtoul(value, NULL, 10);
			if (hlen + blen > c->len)
				break;
			*end = '\0'; /* the head's end, for strstr */
			if (strncmp(c->buf, "GET ", 4) == 0)
				is_ok = load_serve_stream(c);
			else if (strstr(c->buf, "sessionId=") != NULL)
				is_ok = load_serve_message(c, c->buf, hlen);
			else
				is_ok = load_put(c->fd, answer, (size_t)alen);
			if (!is_ok)
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
					if (c->is_stream)
						load_streams[c->fd] = NULL;
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
	    "                 [--accept json|both] [--sse] [--token TOKEN]\n"
	    "                 [--tool NAME] [--args JSON] URL\n"
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
		{ "accept", required_argument, NULL, 'A' },
		{ "sse", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct load l = { .nconn = 1,
		.warm_s = 1,
		.run_s = 5,
		.tool = "echo",
		.accept = LOAD_ACCEPT_BOTH,
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
		case 'A':
			if (strcmp(optarg, "json") == 0)
				l.accept = "application/json";
			else if (strcmp(optarg, "both") == 0)
				l.accept = LOAD_ACCEPT_BOTH;
			else {
				fprintf(stderr,
				    "mcpd-load: --accept: json or "
				    "both, not %s\n",
				    optarg);
				load_usage();
			}
			break;
		case 'S':
			l.is_sse = true;
			break;
		default:
			load_usage();
		}
	}
	if (optind != argc - 1 || l.nconn < 1 || l.nconn > LOAD_MAX_CONN ||
	    l.run_s <= 0 || load_parse_url(&l, argv[optind]) < 0)
		load_usage();
	if (l.is_sse && l.is_modern) {
		fprintf(stderr,
		    "mcpd-load: --sse is the 2024-11-05 transport: "
		    "no --era 2026\n");
		load_usage();
	}
	signal(SIGPIPE, SIG_IGN);
	load_run(&l);
	free(l.lat_us);
	return l.errors > 0 ? 1 : 0;
}
