/* SPDX-License-Identifier: ISC */
/* How a server job or call reports to whoever asked: the completion interface. */
#ifndef MCPD_SERVER_REPLY_H
#define MCPD_SERVER_REPLY_H

#include <stdarg.h>

#include "mcpd.h"
#include "names.h"

struct server_reply;

/*
 * How a request of the server's, relayed to the caller, ended: its result
 * or its JSON-RPC error object (borrowed), or neither and why it failed.
 */
typedef void server_answer_fn(void *arg, const json_t *result,
    const json_t *error, const char *why);

/*
 * How the server layer answers a caller. The control layer implements it
 * for mcpd/ requests (control-request.c) and the gateway for MCP requests
 * (gateway-reply.c); the server layer answers its callers through nothing
 * else. Each answer (reply, reply_raw, reply_error, fail, fail_code) is
 * given once and ends the reply; the implementation delivers it from the
 * loop (DESIGN 10), never inside the server layer's call.
 */
struct server_reply_ops {
	/* The result (stolen). */
	void (*reply)(struct server_reply *, json_t *result);
	/* A result as a server's checked JSON text, passed on unchanged. */
	void (*reply_raw)(struct server_reply *, const char *result,
	    size_t len);
	/* A server's JSON-RPC error object (borrowed), passed on as it is. */
	void (*reply_error)(struct server_reply *, const json_t *error);
	/* An application error of kind (data stolen). */
	void (*fail)(struct server_reply *, enum errors_kind kind, json_t *data,
	    const char *message);
	/* A JSON-RPC standard error code (data stolen). */
	void (*fail_code)(struct server_reply *, int code, json_t *data,
	    const char *message);
	/* A stage of a job, if the caller asked to follow them. */
	void (*progress)(struct server_reply *, const char *server,
	    const char *stage, const char *message);
	/*
	 * An mcpd/ notification about the request (params stolen, the
	 * request's id added), or (notify_mcp) an MCP one as it is: -EPIPE
	 * when the caller has gone, -ENOBUFS (nothing sent) when it has more
	 * unread output than --max-client-output.
	 */
	int (*notify)(struct server_reply *, const char *method,
	    json_t *params);
	int (*notify_mcp)(struct server_reply *, const char *method,
	    json_t *params);
	/* The caller asked for mcpd/progress notifications. */
	bool (*wants_progress)(const struct server_reply *);
	/* False once the caller has gone (its answer goes nowhere). */
	bool (*is_live)(const struct server_reply *);
	/*
	 * fn(arg) is called once if the caller goes (or cancels) before the
	 * answer; it must not answer, only make its owner answer later. fn
	 * NULL unregisters it.
	 */
	void (*on_gone)(struct server_reply *, void (*fn)(void *), void *arg);
	/*
	 * Sends the caller a request of the server's (params stolen); cb runs
	 * once, later. NULL when sent, else why not (static text).
	 */
	const char *(*ask)(struct server_reply *, int timeout_ms,
	    const char *method, json_t *params, server_answer_fn *cb,
	    void *arg);
	/* An MCP caller's client capabilities (borrowed), or NULL. */
	const json_t *(*caps)(const struct server_reply *);
	/* An MCP caller takes log messages of level (MCP's logging/setLevel). */
	bool (*wants_log)(const struct server_reply *, const char *level);
	/*
	 * Who the caller is now, as the policy and the audit log take it
	 * (values borrowed until the call returns to the loop).
	 */
	void (*who)(const struct server_reply *, struct call_who *ret);
};

/*
 * One caller's reply. It lives as long as the request it stands for: until
 * one of the answers above is given.
 */
struct server_reply {
	const struct server_reply_ops *ops;
	/* Whose: callers with the same client share one connection. */
	const void *client;
	char agent[NAMES_MAX + 1]; /* the agent the caller speaks for */
	json_t *scope;		   /* its servers (a reference), or NULL: all */
};

/* server-reply.c: answers with text made from a format. */
void server_reply_fail(struct server_reply *, enum errors_kind, json_t *data,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void server_reply_fail_code(struct server_reply *, int code, json_t *data,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * What both use: fails rep (NULL: nobody; data is dropped) with the text
 * fmt makes from ap, an application error of kind, or a JSON-RPC standard
 * code when kind is ERRORS_KIND_COUNT; returns that text (new).
 */
char *server_reply_vfail(struct server_reply *, enum errors_kind, int code,
    json_t *data, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* Fills rep's values (agent, scope: a reference taken); ops as given. */
void server_reply_init(struct server_reply *rep,
    const struct server_reply_ops *ops, const void *client, const char *agent,
    const json_t *scope);
/* Drops what server_reply_init took (the scope's reference). */
void server_reply_clear(struct server_reply *rep);

#endif
