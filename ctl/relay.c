/* SPDX-License-Identifier: ISC */
/*
 * The bridge's relay: MCP between the client's standard input and output
 * and mcpd's socket, line by line, keeping what it takes to carry the
 * client's session over to a new mcpd when this one goes away (doc/
 * gateway.md, "The bridge across mcpd restarts").
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "errors.h"
#include "fnv.h"
#include "jsonrpc.h"
#include "jsonscan.h"
#include "mcpctl.h"

/* Bytes of whole lines held in each direction before reading stops. */
#define RELAY_BUFFER   ((size_t)64 << 10)
/* Bytes written at once to a descriptor that stays blocking (a terminal). */
#define RELAY_CHUNK    ((size_t)4096)
/* Bytes kept of the last line from mcpd: its error, when it closes. */
#define RELAY_LAST     ((size_t)1024)
/* Between two tries to reach mcpd, and two looks at its servers. */
#define RELAY_RETRY_MS 100
/* iovecs written at once. */
#define RELAY_IOV      16

/* A list the client walked, as a digest of the items of its pages. */
struct relay_list {
	uint64_t walk;	 /* the pages so far of the walk going on */
	uint64_t seen;	 /* the last whole walk the client made */
	uint64_t again;	 /* the relay's own walk on a new mcpd */
	bool has_seen;	 /* the client walked it to its end once */
	bool is_unknown; /* a page could not be read: count it changed */
	bool is_changed; /* the new mcpd's differs */
};

/* The lists whose changes a client is told of, and their items. */
static const struct relay_kind {
	const char *method, *items, *changed;
} relay_kinds[] = {
	{ "tools/list", "tools", "notifications/tools/list_changed" },
	{ "prompts/list", "prompts", "notifications/prompts/list_changed" },
	{ "resources/list", "resources",
	    "notifications/resources/list_changed" },
	{ "resources/templates/list", "resourceTemplates",
	    "notifications/resources/list_changed" },
};
#define RELAY_KINDS (sizeof relay_kinds / sizeof relay_kinds[0])

/* A line of the client's for mcpd, written whole or sent again. */
struct relay_line {
	size_t len;	/* with its newline */
	char *key;	/* its id as compact JSON, or NULL */
	char *method;	/* a request's or a notification's, or NULL */
	json_t *params; /* of the methods the relay keeps track of */
};

/* What one line says, as far as the relay cares. */
struct relay_msg {
	char *key;	/* the id as compact JSON, or NULL */
	char *method;	/* or NULL */
	json_t *params; /* only when asked for, or NULL */
	bool is_answer; /* a result or an error */
	bool is_error;
	const char *result; /* the result's text in the line, or NULL */
	size_t result_len;
};

enum relay_state {
	RELAY_LIVE,   /* the client's lines go to mcpd */
	RELAY_REPLAY, /* the relay's own: the session made again */
};

struct relay {
	struct mcpctl *m;
	const struct relay_opts *opts;
	int sock; /* -1 while mcpd is away */
	bool is_out_nonblock;
	struct evbuffer *up_in;	  /* from the client, no newline yet */
	struct evbuffer *up_out;  /* its whole lines, for mcpd */
	struct relay_line *lines; /* up_out's lines, from first to end */
	size_t first, end, cap;
	size_t head_done;	   /* bytes of lines[first] written */
	size_t up_scanned;	   /* bytes of up_in holding no newline */
	struct evbuffer *own_out;  /* the relay's own lines, for mcpd */
	struct evbuffer *down_in;  /* from mcpd, no newline yet */
	struct evbuffer *down_out; /* for the client */
	size_t down_scanned;
	bool is_in_eof, is_shut;
	bool is_broken; /* a write to mcpd failed: read what it said last */
	enum relay_state state;
	json_t *inflight; /* id -> {"method", "params"?}: sent, no answer */
	json_t *asked;	  /* ids of mcpd's requests the client owes */
	json_t *stale;	  /* the same, of an mcpd that went */
	json_t *own;	  /* the relay's own requests: id -> what for */
	unsigned own_next;
	json_t *init; /* the client's initialize params, or NULL */
	bool has_initialized;
	json_t *subs;  /* uri -> true */
	json_t *level; /* the client's logging level, or NULL */
	struct relay_list lists[RELAY_KINDS];
	char last[RELAY_LAST]; /* the start of mcpd's last line */
	size_t last_len;
};

static int64_t
relay_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The JSON value text[0..len) as compact JSON (new), or NULL. */
static char *
relay_key(const char *text, size_t len)
{
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY, NULL);
	char *key;

	if (v == NULL)
		return NULL;
	key = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	return key;
}

static bool
relay_is_tracked(const char *method)
{
	if (method == NULL)
		return false;
	for (size_t k = 0; k < RELAY_KINDS; k++)
		if (strcmp(method, relay_kinds[k].method) == 0)
			return true;
	return strcmp(method, "initialize") == 0 ||
	    strcmp(method, "resources/subscribe") == 0 ||
	    strcmp(method, "resources/unsubscribe") == 0 ||
	    strcmp(method, "logging/setLevel") == 0;
}

/* The same from a parsed message, for what the scanner leaves. */
static void
relay_parse(const char *text, size_t len, struct relay_msg *msg)
{
	json_t *v = json_loadb(text, len, 0, NULL), *id;

	if (!json_is_object(v)) {
		json_decref(v);
		return;
	}
	if ((id = json_object_get(v, "id")) != NULL)
		msg->key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (json_is_string(json_object_get(v, "method")))
		msg->method = strdup(json_string_value(json_object_get(v,
		    "method")));
	if (relay_is_tracked(msg->method))
		msg->params = json_incref(json_object_get(v, "params"));
	msg->is_error = json_object_get(v, "error") != NULL;
	msg->is_answer = msg->is_error || json_object_get(v, "result") != NULL;
	json_decref(v);
}

/*
 * What one line (without its newline) says: its id, method, the params
 * of the methods the relay keeps track of, and where its result is. The
 * scanner does it without a parse; what it does not vouch for is parsed.
 */
static void
relay_scan(const char *text, size_t len, struct relay_msg *msg)
{
	struct jsonscan_member m[] = {
		{ "id", false, 0, 0 },
		{ "method", false, 0, 0 },
		{ "params", false, 0, 0 },
		{ "result", false, 0, 0 },
		{ "error", false, 0, 0 },
	};
	json_t *method;

	memset(msg, 0, sizeof *msg);
	if (len > 0 && text[len - 1] == '\r')
		len--;
	if (jsonscan_object(text, len, m, 5) < 0) {
		relay_parse(text, len, msg);
		return;
	}
	if (m[0].is_found)
		msg->key = relay_key(text + m[0].off, m[0].len);
	if (m[1].is_found &&
	    (method = json_loadb(text + m[1].off, m[1].len, JSON_DECODE_ANY,
		 NULL)) != NULL) {
		if (json_is_string(method))
			msg->method = strdup(json_string_value(method));
		json_decref(method);
	}
	if (m[2].is_found && relay_is_tracked(msg->method))
		msg->params = json_loadb(text + m[2].off, m[2].len, 0, NULL);
	msg->is_error = m[4].is_found;
	msg->is_answer = m[3].is_found || m[4].is_found;
	if (m[3].is_found) {
		msg->result = text + m[3].off;
		msg->result_len = m[3].len;
	}
}

static void
relay_msg_clear(struct relay_msg *msg)
{
	free(msg->key);
	free(msg->method);
	json_decref(msg->params);
}

/* The kind of a list method, or -1. */
static int
relay_kind_of(const char *method)
{
	for (size_t k = 0; k < RELAY_KINDS; k++)
		if (method != NULL &&
		    strcmp(method, relay_kinds[k].method) == 0)
			return (int)k;
	return -1;
}

/*
 * Adds the items of a list page (the result's text) to *walk; whether it
 * has a next page (its cursor, new, in *ret_cursor when asked). False
 * when the page cannot be read.
 */
static bool
relay_page(int k, const char *result, size_t len, uint64_t *walk,
    bool *ret_more, char **ret_cursor)
{
	struct jsonscan_member m[] = {
		{ relay_kinds[k].items, false, 0, 0 },
		{ "nextCursor", false, 0, 0 },
	};
	json_t *cursor;

	if (result == NULL || jsonscan_object(result, len, m, 2) < 0 ||
	    !m[0].is_found)
		return false;
	/* mcpd writes a list the same way each time: its bytes are it. */
	*walk = fnv64_add(*walk, result + m[0].off, m[0].len);
	*ret_more = m[1].is_found && strncmp(result + m[1].off, "null", 4) != 0;
	if (ret_cursor != NULL && *ret_more) {
		cursor = json_loadb(result + m[1].off, m[1].len,
		    JSON_DECODE_ANY, NULL);
		*ret_cursor = json_is_string(cursor) ?
		    strdup(json_string_value(cursor)) :
		    NULL;
		json_decref(cursor);
		if (*ret_cursor == NULL)
			return false;
	}
	return true;
}

/* A page the client was given of list k, asked with params. */
static void
relay_track_list(struct relay *r, int k, const json_t *params,
    const struct relay_msg *msg)
{
	struct relay_list *l = &r->lists[k];
	const json_t *cursor = json_object_get(params, "cursor");
	bool is_more = false;

	if (msg->is_error)
		return;
	if (cursor == NULL || json_is_null(cursor)) {
		l->walk = FNV64_INIT;
		l->is_unknown = false;
	}
	if (!relay_page(k, msg->result, msg->result_len, &l->walk, &is_more,
		NULL))
		l->is_unknown = true;
	if (!is_more) {
		l->seen = l->walk;
		l->has_seen = true;
	}
}

/* mcpd answered the client's request key: what it changes of the session. */
static void
relay_track(struct relay *r, const char *key, const struct relay_msg *msg)
{
	json_t *e = json_object_get(r->inflight, key);
	const char *method;
	const json_t *params, *uri;
	int k;

	if (e == NULL)
		return;
	method = json_string_value(json_object_get(e, "method"));
	params = json_object_get(e, "params");
	uri = json_object_get(params, "uri");
	if ((k = relay_kind_of(method)) >= 0)
		relay_track_list(r, k, params, msg);
	else if (msg->is_error)
		;
	else if (strcmp(method, "resources/subscribe") == 0 &&
	    json_is_string(uri))
		json_object_set_new(r->subs, json_string_value(uri),
		    json_true());
	else if (strcmp(method, "resources/unsubscribe") == 0 &&
	    json_is_string(uri))
		json_object_del(r->subs, json_string_value(uri));
	else if (strcmp(method, "logging/setLevel") == 0 &&
	    json_object_get(params, "level") != NULL) {
		json_decref(r->level);
		r->level = json_incref(json_object_get(params, "level"));
	}
	json_object_del(r->inflight, key);
}

/* Sends one request of the relay's own, for what (stolen). */
static void
relay_own_request(struct relay *r, const char *method, json_t *params,
    json_t *what)
{
	char id[64], key[66];
	json_t *msg;

	/* Keys are ids as compact JSON, as relay_scan makes them. */
	snprintf(id, sizeof id, "mcpctl-bridge-%u", ++r->own_next);
	snprintf(key, sizeof key, "\"%s\"", id);
	msg = jsonrpc_request(json_string(id), method, params);
	(void)jsonrpc_write(r->own_out, msg);
	json_decref(msg);
	json_object_set_new(r->own, key, what);
}

static void
relay_own_notify(struct relay *r, const char *method)
{
	json_t *msg = jsonrpc_notification(method, NULL);

	(void)jsonrpc_write(r->own_out, msg);
	json_decref(msg);
}

/* A list the relay walks on the new mcpd: its first or next page. */
static void
relay_own_page(struct relay *r, int k, const char *cursor)
{
	relay_own_request(r, relay_kinds[k].method,
	    cursor != NULL ? json_pack("{s:s}", "cursor", cursor) :
			     json_object(),
	    json_pack("{s:s, s:i}", "for", "list", "kind", k));
}

/* The replay is over: list_changed where a list changed, then the client. */
static void
relay_replayed(struct relay *r)
{
	bool is_resources_told = false;
	json_t *msg;

	for (size_t k = 0; k < RELAY_KINDS; k++) {
		if (!r->lists[k].is_changed)
			continue;
		r->lists[k].is_changed = false;
		if (strcmp(relay_kinds[k].changed,
			"notifications/resources/list_changed") == 0) {
			if (is_resources_told)
				continue;
			is_resources_told = true;
		}
		msg = jsonrpc_notification(relay_kinds[k].changed, NULL);
		(void)jsonrpc_write(r->down_out, msg);
		json_decref(msg);
	}
	r->state = RELAY_LIVE;
	print_err("bridge: mcpd is back; the session goes on");
}

/* The text of an answer's error (new), for what the relay says. */
static char *
relay_error_text(const char *line, size_t len)
{
	json_t *v = json_loadb(line, len, 0, NULL);
	const char *text = json_string_value(json_object_get(json_object_get(v,
								 "error"),
	    "message"));
	char *s = strdup(text != NULL ? text : "an error");

	json_decref(v);
	return s;
}

/*
 * mcpd answered one of the relay's own requests; 0, or the exit status
 * when the session cannot be made again.
 */
static int
relay_own_answer(struct relay *r, const char *key, const char *line, size_t len,
    const struct relay_msg *msg)
{
	json_t *e = json_object_get(r->own, key), *v;
	const char *what = json_string_value(json_object_get(e, "for"));
	const char *uri = json_string_value(json_object_get(e, "uri"));
	int k = (int)json_integer_value(json_object_get(e, "kind"));
	struct relay_list *l = &r->lists[k];
	char *text = NULL, *cursor = NULL, *id;
	bool is_more = false;
	const char *name;

	if (msg->is_error)
		text = relay_error_text(line, len);
	if (strcmp(what, "initialize") == 0 && text != NULL) {
		print_err(
		    "bridge: the new mcpd refused the session's initialize: %s; the client's session ends",
		    text);
		free(text);
		return MCPCTL_EXIT_ERROR;
	}
	if (strcmp(what, "initialize") == 0) {
		if (r->has_initialized)
			relay_own_notify(r, "notifications/initialized");
		json_object_foreach(r->subs, name, v)
			relay_own_request(r, "resources/subscribe",
			    json_pack("{s:s}", "uri", name),
			    json_pack("{s:s, s:s}", "for", "subscribe", "uri",
				name));
		if (r->level != NULL)
			relay_own_request(r, "logging/setLevel",
			    json_pack("{s:O}", "level", r->level),
			    json_pack("{s:s}", "for", "setLevel"));
		for (size_t i = 0; i < RELAY_KINDS; i++)
			if (r->lists[i].has_seen) {
				r->lists[i].again = FNV64_INIT;
				relay_own_page(r, (int)i, NULL);
			}
	} else if (strcmp(what, "subscribe") == 0 && text != NULL) {
		print_err(
		    "bridge: resources/subscribe %s failed on the new mcpd: %s; its updates stop",
		    uri, text);
		json_object_del(r->subs, uri);
	} else if (strcmp(what, "setLevel") == 0 && text != NULL)
		print_err("bridge: logging/setLevel failed on the new mcpd: %s",
		    text);
	else if (strcmp(what, "list") == 0) {
		/* A list that cannot be read is told as changed. */
		if (text != NULL ||
		    !relay_page(k, msg->result, msg->result_len, &l->again,
			&is_more, &cursor))
			l->is_changed = true, is_more = false;
		else if (is_more)
			relay_own_page(r, k, cursor);
		else if (l->is_unknown || l->again != l->seen)
			l->is_changed = true;
		if (!is_more) {
			l->seen = l->again;
			l->is_unknown = false;
		}
		free(cursor);
	}
	free(text);
	id = strdup(key);
	json_object_del(r->own, id);
	free(id);
	if (r->state == RELAY_REPLAY && json_object_size(r->own) == 0)
		relay_replayed(r);
	return 0;
}

/* Notes the start of mcpd's last line (why it closes, if it does). */
static void
relay_note_last(struct relay *r, const char *line, size_t len)
{
	r->last_len = len < sizeof r->last ? len : sizeof r->last - 1;
	memcpy(r->last, line, r->last_len);
}

/*
 * Whether mcpd's last line was the error it closes a connection with (a
 * message over its limit): then the client's fault, said, and the end.
 */
static bool
relay_is_refused(const struct relay *r)
{
	json_t *msg = json_loadb(r->last, r->last_len, 0, NULL), *error;
	const char *text = NULL;
	bool is = false;

	if (msg != NULL && json_is_null(json_object_get(msg, "id")) &&
	    (error = json_object_get(msg, "error")) != NULL)
		text = json_string_value(json_object_get(error, "message"));
	if (text != NULL && strstr(text, "closing the connection") != NULL) {
		print_err("mcpd closed the connection: %s", text);
		is = true;
	}
	json_decref(msg);
	return is;
}

/*
 * Finds the next whole line of buf, scanning from *scanned on: its length
 * with the newline, or 0 (none yet), or -EMSGSIZE when more than max bytes
 * came without one.
 */
static ssize_t
relay_next_line(struct evbuffer *buf, size_t *scanned, size_t max)
{
	struct evbuffer_ptr at;
	size_t len = evbuffer_get_length(buf);

	if (*scanned >= len)
		return 0;
	if (evbuffer_ptr_set(buf, &at, *scanned, EVBUFFER_PTR_SET) < 0)
		return 0;
	at = evbuffer_search(buf, "\n", 1, &at);
	if (at.pos < 0) {
		*scanned = len;
		return len > max ? -EMSGSIZE : 0;
	}
	*scanned = 0;
	if ((size_t)at.pos > max)
		return -EMSGSIZE;
	return (ssize_t)at.pos + 1;
}

/* One whole line of the client's (len with its newline) into up_out. */
static void
relay_up_line(struct relay *r, size_t len)
{
	const char *text = (const char *)evbuffer_pullup(r->up_in,
	    (ssize_t)len);
	struct relay_msg msg;
	struct relay_line *l;

	relay_scan(text, len - 1, &msg);
	/* A late answer to a request of an mcpd that went: nobody waits. */
	if (msg.key != NULL && msg.method == NULL && msg.is_answer &&
	    json_object_get(r->stale, msg.key) != NULL &&
	    json_object_get(r->asked, msg.key) == NULL) {
		json_object_del(r->stale, msg.key);
		evbuffer_drain(r->up_in, len);
		relay_msg_clear(&msg);
		return;
	}
	if (r->first > 0 && r->end == r->cap) {
		memmove(r->lines, r->lines + r->first,
		    (r->end - r->first) * sizeof *r->lines);
		r->end -= r->first;
		r->first = 0;
	}
	if (r->end == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->lines = reallocarray(r->lines, r->cap, sizeof *r->lines);
		if (r->lines == NULL) {
			print_err("bridge: out of memory");
			exit(MCPCTL_EXIT_ERROR);
		}
	}
	l = &r->lines[r->end++];
	l->len = len;
	l->key = msg.key;
	l->method = msg.method;
	l->params = msg.params;
	evbuffer_remove_buffer(r->up_in, r->up_out, len);
}

/* A line of the client's reached mcpd whole: what it starts or ends. */
static void
relay_up_sent(struct relay *r, struct relay_line *l)
{
	if (l->method != NULL && l->key != NULL) {
		json_object_set_new(r->inflight, l->key,
		    json_pack("{s:s, s:O?}", "method", l->method, "params",
			l->params));
		if (strcmp(l->method, "initialize") == 0) {
			json_decref(r->init);
			r->init = json_incref(l->params);
		}
	} else if (l->method != NULL &&
	    strcmp(l->method, "notifications/initialized") == 0)
		r->has_initialized = true;
	else if (l->key != NULL)
		json_object_del(r->asked, l->key);
	free(l->key);
	free(l->method);
	json_decref(l->params);
}

/* Writes the client's lines to mcpd: 0 or -errno. */
static int
relay_write_lines(struct relay *r)
{
	struct evbuffer_iovec ev[RELAY_IOV];
	struct iovec iov[RELAY_IOV];
	struct evbuffer_ptr at;
	size_t len = evbuffer_get_length(r->up_out);
	ssize_t w;
	int n;

	if (len <= r->head_done ||
	    evbuffer_ptr_set(r->up_out, &at, r->head_done, EVBUFFER_PTR_SET) <
		0)
		return 0;
	n = evbuffer_peek(r->up_out, (ev_ssize_t)(len - r->head_done), &at, ev,
	    RELAY_IOV);
	if (n > RELAY_IOV)
		n = RELAY_IOV;
	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ ev[i].iov_base, ev[i].iov_len };
	if ((w = writev(r->sock, iov, n)) < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	r->head_done += (size_t)w;
	while (r->first < r->end && r->head_done >= r->lines[r->first].len) {
		struct relay_line *l = &r->lines[r->first++];

		r->head_done -= l->len;
		evbuffer_drain(r->up_out, l->len);
		relay_up_sent(r, l);
	}
	if (r->first == r->end)
		r->first = r->end = 0;
	return 0;
}

/* One whole line of mcpd's (len with its newline); 0 or the exit status. */
static int
relay_down_line(struct relay *r, size_t len)
{
	const char *text = (const char *)evbuffer_pullup(r->down_in,
	    (ssize_t)len);
	struct relay_msg msg;
	int status = 0;

	relay_note_last(r, text, len - 1);
	relay_scan(text, len - 1, &msg);
	if (msg.key != NULL && msg.method != NULL)
		json_object_set_new(r->asked, msg.key, json_true());
	else if (msg.key != NULL && msg.is_answer &&
	    json_object_get(r->own, msg.key) != NULL) {
		status = relay_own_answer(r, msg.key, text, len - 1, &msg);
		evbuffer_drain(r->down_in, len);
		relay_msg_clear(&msg);
		return status;
	} else if (msg.key != NULL && msg.is_answer)
		relay_track(r, msg.key, &msg);
	evbuffer_remove_buffer(r->down_in, r->down_out, len);
	relay_msg_clear(&msg);
	return 0;
}

/* Reads what fd has into buf, at most want bytes: 1, 0 at EOF, -errno. */
static int
relay_read(int fd, struct evbuffer *buf, size_t want)
{
	int n = evbuffer_read(buf, fd, (int)want);

	if (n > 0)
		return 1;
	if (n == 0)
		return 0;
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	return -errno;
}

/* Writes what down_out holds to the client: 0 or -errno. */
static int
relay_write_down(struct relay *r)
{
	size_t len = evbuffer_get_length(r->down_out);
	int n;

	if (!r->is_out_nonblock && len > RELAY_CHUNK)
		len = RELAY_CHUNK;
	n = evbuffer_write_atmost(r->down_out, STDOUT_FILENO, (ssize_t)len);
	if (n >= 0 || errno == EINTR || errno == EAGAIN)
		return 0;
	return -errno;
}

/*
 * mcpd went: each request of the client's it had whole and did not
 * answer gets outcome-unknown (it may have run; it is never sent again),
 * and mcpd's own requests to the client are answered by nobody.
 */
static void
relay_lost(struct relay *r)
{
	const char *key, *name;
	json_t *v, *id, *msg;
	void *tmp;

	json_object_foreach_safe(r->inflight, tmp, key, v) {
		id = json_loads(key, JSON_DECODE_ANY, NULL);
		msg = jsonrpc_error_kind(id, ERRORS_OUTCOME_UNKNOWN,
		    "mcpd went away before it answered; the request may have run, and it is not sent again",
		    json_pack("{s:s}", "execution_outcome", "unknown"));
		(void)jsonrpc_write(r->down_out, msg);
		json_decref(msg);
		json_decref(id);
	}
	json_object_clear(r->inflight);
	json_object_foreach(r->asked, name, v)
		json_object_set_new(r->stale, name, json_true());
	json_object_clear(r->asked);
	json_object_clear(r->own);
	evbuffer_drain(r->own_out, evbuffer_get_length(r->own_out));
	evbuffer_drain(r->down_in, evbuffer_get_length(r->down_in));
	r->down_scanned = 0;
	/* A line mcpd had only part of never ran: it goes again, whole. */
	r->head_done = 0;
	r->is_shut = false;
	r->is_broken = false;
	r->last_len = 0;
	conn_free(r->m->conn);
	r->m->conn = NULL;
	r->sock = -1;
}

/* The socket is a session again: its replay starts, or it is live. */
static void
relay_attach(struct relay *r)
{
	r->sock = conn_fd(r->m->conn);
	evbuffer_add_buffer(r->down_in, conn_input(r->m->conn));
	r->down_scanned = 0;
	if (r->init == NULL) {
		r->state = RELAY_LIVE;
		print_err("bridge: mcpd is back; the session goes on");
		return;
	}
	r->state = RELAY_REPLAY;
	relay_own_request(r, "initialize", json_incref(r->init),
	    json_pack("{s:s}", "for", "initialize"));
}

/* Writes what down_out holds for at most ms (poll), while mcpd is away. */
static int
relay_wait(struct relay *r, int ms)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	int n, e;

	if (evbuffer_get_length(r->down_out) == 0) {
		(void)poll(NULL, 0, ms);
		return 0;
	}
	if ((n = poll(&p, 1, ms)) > 0 && (e = relay_write_down(r)) < 0) {
		print_err("bridge: cannot write to standard output: %s",
		    strerror(-e));
		return MCPCTL_EXIT_ERROR;
	}
	return 0;
}

/* Whether a server in the list's rows is on its way to ready. */
static bool
relay_is_starting(const json_t *rows, const json_t *servers)
{
	static const char *const starting[] = { "starting", "probing",
		"connecting" };
	const json_t *row, *name;
	const char *state;
	size_t i, j;
	bool is_in;

	json_array_foreach(rows, i, row) {
		state = json_string_value(json_object_get(row, "state"));
		is_in = json_array_size(servers) == 0;
		json_array_foreach(servers, j, name)
			is_in = is_in ||
			    json_equal(name, json_object_get(row, "name"));
		for (j = 0; state != NULL && is_in && j < 3; j++)
			if (strcmp(state, starting[j]) == 0)
				return true;
	}
	return false;
}

/*
 * A new mcpd starts its saved servers after it listens: the session is
 * made again once the view's servers have started (or failed), so that
 * its lists and calls find them, or when the deadline comes.
 */
static int
relay_settle(struct relay *r, int64_t deadline)
{
	json_t *result;
	int status;

	for (;;) {
		if ((status = mcpctl_request(r->m, "mcpd/list", json_object(),
			 &result)) != 0)
			return status;
		if (!relay_is_starting(json_object_get(result, "servers"),
			r->opts->servers) ||
		    relay_now() >= deadline) {
			json_decref(result);
			return 0;
		}
		json_decref(result);
		if ((status = relay_wait(r, RELAY_RETRY_MS)) != 0)
			return status;
	}
}

/*
 * Reaches mcpd again within --reconnect-timeout: connects (starting mcpd
 * as autostart does when it crashed and that is allowed), says the
 * session's hello, waits for its servers; 0, or the exit status after
 * saying what it tried.
 */
static int
relay_reconnect(struct relay *r)
{
	int64_t deadline = relay_now() + r->opts->reconnect_ms;
	struct mcpctl *m = r->m;
	const char *why_not = "";
	bool has_started = false;
	unsigned tries = 0;
	int e = 0, status;

	print_err("bridge: mcpd went away; reconnecting (for at most %g s)",
	    r->opts->reconnect_ms / 1000.0);
	while (relay_now() < deadline) {
		tries++;
		e = conn_open(m->socket_path, &m->conn);
		/* Its socket is there, nobody listens: it crashed. */
		if (e == -ECONNREFUSED && !has_started && m->is_autostart &&
		    !autostart_is_disabled()) {
			has_started = true;
			if (autostart_mcpd(m->socket_path) == 0)
				e = conn_open(m->socket_path, &m->conn);
		}
		if (e == 0) {
			status = r->opts->hello(m, r->opts->hello_arg);
			if (status == 0)
				status = relay_settle(r, deadline);
			if (status == 0) {
				relay_attach(r);
				return 0;
			}
			conn_free(m->conn);
			m->conn = NULL;
			if (status != MCPCTL_EXIT_UNREACHABLE) {
				print_err(
				    "bridge: mcpd came back but refused the session; the client's session ends");
				return status;
			}
			e = -EPIPE;
		}
		if ((status = relay_wait(r, RELAY_RETRY_MS)) != 0)
			return status;
	}
	if (has_started)
		why_not = "; mcpctl started mcpd once, see above";
	else if (e == -ENOENT)
		why_not =
		    "; mcpctl does not start an mcpd that was stopped on purpose (its socket is gone)";
	else if (autostart_is_disabled() || !m->is_autostart)
		why_not =
		    "; mcpctl did not start mcpd: MCPD_NO_AUTOSTART is set";
	print_err(
	    "bridge: gave up on mcpd at %s after %g s (--reconnect-timeout): %u tries to connect, the last: %s%s; the client's session ends",
	    m->socket_path, r->opts->reconnect_ms / 1000.0, tries, strerror(-e),
	    why_not);
	return MCPCTL_EXIT_UNREACHABLE;
}

/*
 * mcpd's end of the connection closed: the end (what the client asked
 * is answered, or mcpd refused the client), or a reconnect. 0 to go on,
 * else the exit status.
 */
static int
relay_closed(struct relay *r)
{
	bool is_shut = r->is_shut, is_refused = relay_is_refused(r);
	int status;

	/*
	 * Closed for a line of the client's, which mcpd refused (with id
	 * null: which one is not known): none of them is answered here.
	 */
	if (is_refused)
		json_object_clear(r->inflight);
	relay_lost(r);
	if (is_refused)
		status = MCPCTL_EXIT_ERROR;
	else if (is_shut && r->first == r->end) {
		/* The client closed its input: what it asked is answered. */
		status = MCPCTL_EXIT_OK;
	} else if (r->opts->reconnect_ms <= 0) {
		print_err(
		    "mcpd closed the connection (did it stop? mcpctl status)");
		status = MCPCTL_EXIT_ERROR;
	} else
		return relay_reconnect(r);
	/* What is left for the client goes out before the end. */
	while (evbuffer_get_length(r->down_out) > 0)
		if (relay_wait(r, -1) != 0)
			break;
	return status == MCPCTL_EXIT_OK ? -1 : status;
}

/* Moves the whole lines of the client's input to up_out; 0 or status. */
static int
relay_take_up(struct relay *r)
{
	ssize_t len;

	while ((len = relay_next_line(r->up_in, &r->up_scanned,
		    r->opts->max_line)) != 0) {
		if (len < 0) {
			print_err(
			    "bridge: a message of the client is longer than %zu bytes (--max-message); the session ends",
			    r->opts->max_line);
			return MCPCTL_EXIT_ERROR;
		}
		relay_up_line(r, (size_t)len);
	}
	return 0;
}

/* Handles the whole lines mcpd sent; 0 or the exit status. */
static int
relay_take_down(struct relay *r)
{
	ssize_t len;
	int status;

	while ((len = relay_next_line(r->down_in, &r->down_scanned,
		    MCPCTL_MAX_RESPONSE)) != 0) {
		if (len < 0) {
			print_err(
			    "bridge: a message of mcpd is longer than %zu bytes; the session ends",
			    MCPCTL_MAX_RESPONSE);
			return MCPCTL_EXIT_ERROR;
		}
		if ((status = relay_down_line(r, (size_t)len)) != 0)
			return status;
	}
	return 0;
}

/* One turn of the loop: poll, then each side; 0, -1 (done), or status. */
static int
relay_turn(struct relay *r)
{
	size_t own = evbuffer_get_length(r->own_out);
	bool is_live = r->state == RELAY_LIVE;
	struct pollfd pfd[4];
	int e, n;

	/* The client closed its input and all of it went: half-close. */
	if (r->is_in_eof && evbuffer_get_length(r->up_in) == 0 &&
	    r->first == r->end && is_live && !r->is_shut) {
		(void)shutdown(r->sock, SHUT_WR);
		r->is_shut = true;
	}
	memset(pfd, 0, sizeof pfd);
	pfd[0].fd = !r->is_in_eof &&
		evbuffer_get_length(r->up_out) < RELAY_BUFFER ?
	    STDIN_FILENO :
	    -1;
	pfd[0].events = POLLIN;
	pfd[1].fd = r->sock;
	pfd[1].events = evbuffer_get_length(r->down_out) < RELAY_BUFFER ?
	    POLLIN :
	    0;
	if (r->is_broken)
		pfd[1].events = POLLIN;
	else if (own > 0 || (is_live && r->first < r->end && !r->is_shut))
		pfd[1].events |= POLLOUT;
	pfd[2].fd = evbuffer_get_length(r->down_out) > 0 ? STDOUT_FILENO : -1;
	pfd[2].events = POLLOUT;
	if ((n = poll(pfd, 3, -1)) < 0) {
		if (errno == EINTR)
			return 0;
		print_err("bridge: poll: %s", strerror(errno));
		return MCPCTL_EXIT_ERROR;
	}
	if (pfd[0].revents != 0) {
		if ((e = relay_read(STDIN_FILENO, r->up_in, RELAY_BUFFER)) <
		    0) {
			print_err("bridge: cannot read standard input: %s",
			    strerror(-e));
			return MCPCTL_EXIT_ERROR;
		}
		if (e == 0)
			r->is_in_eof = true;
		if ((e = relay_take_up(r)) != 0)
			return e;
	}
	/*
	 * mcpd closed: what it said before (why, when it closed on
	 * purpose) is read before its end is handled.
	 */
	if (pfd[1].revents & POLLOUT) {
		if (own > 0 && evbuffer_write(r->own_out, r->sock) < 0 &&
		    errno != EAGAIN && errno != EINTR)
			r->is_broken = true;
		if (own == 0 && relay_write_lines(r) < 0)
			r->is_broken = true;
	}
	if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
		if ((e = relay_read(r->sock, r->down_in, RELAY_BUFFER)) <= 0) {
			if (e < 0 && e != -ECONNRESET) {
				print_err("bridge: cannot read from mcpd: %s",
				    strerror(-e));
				return MCPCTL_EXIT_ERROR;
			}
			if ((e = relay_take_down(r)) != 0)
				return e;
			return relay_closed(r);
		}
		if ((e = relay_take_down(r)) != 0)
			return e;
	}
	if (pfd[2].revents != 0 && (e = relay_write_down(r)) < 0) {
		print_err("bridge: cannot write to standard output: %s",
		    strerror(-e));
		return MCPCTL_EXIT_ERROR;
	}
	return 0;
}

static void
relay_free(struct relay *r)
{
	for (size_t i = r->first; i < r->end; i++) {
		free(r->lines[i].key);
		free(r->lines[i].method);
		json_decref(r->lines[i].params);
	}
	free(r->lines);
	evbuffer_free(r->up_in);
	evbuffer_free(r->up_out);
	evbuffer_free(r->own_out);
	evbuffer_free(r->down_in);
	evbuffer_free(r->down_out);
	json_decref(r->inflight);
	json_decref(r->asked);
	json_decref(r->stale);
	json_decref(r->own);
	json_decref(r->init);
	json_decref(r->subs);
	json_decref(r->level);
}

int
relay_run(struct mcpctl *m, const struct relay_opts *opts, bool is_out_nonblock)
{
	struct relay r = { .m = m,
		.opts = opts,
		.sock = conn_fd(m->conn),
		.is_out_nonblock = is_out_nonblock };
	int status;

	r.up_in = evbuffer_new();
	r.up_out = evbuffer_new();
	r.own_out = evbuffer_new();
	r.down_in = evbuffer_new();
	r.down_out = evbuffer_new();
	r.inflight = json_object();
	r.asked = json_object();
	r.stale = json_object();
	r.own = json_object();
	r.subs = json_object();
	if (r.up_in == NULL || r.up_out == NULL || r.own_out == NULL ||
	    r.down_in == NULL || r.down_out == NULL || r.inflight == NULL ||
	    r.asked == NULL || r.stale == NULL || r.own == NULL ||
	    r.subs == NULL) {
		relay_free(&r);
		print_err("bridge: out of memory");
		return MCPCTL_EXIT_ERROR;
	}
	/* What came after the hello's answer goes out first. */
	evbuffer_add_buffer(r.down_in, conn_input(m->conn));
	if ((status = relay_take_down(&r)) == 0)
		while ((status = relay_turn(&r)) == 0)
			;
	relay_free(&r);
	return status < 0 ? MCPCTL_EXIT_OK : status;
}
