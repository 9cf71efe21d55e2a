/* SPDX-License-Identifier: ISC */
/* What server.c, server-start.c and server-job.c share: servers and jobs. */
#ifndef MCPD_SERVER_INT_H
#define MCPD_SERVER_INT_H

#include "mcpd.h"
#include "server-reply.h"
#include "server-watch.h"

#define SERVER_BACKOFF_FIRST_MS 500
#define SERVER_BACKOFF_MAX_MS	30000
#define SERVER_HEALTHY_MS	60000 /* ready this long resets the backoff */
#define SERVER_MAX_FAILURES	8     /* failed restarts in a row: failed */
#define SERVER_STDERR_IN_ERROR	20    /* stderr lines in a load error */

enum server_job_kind {
	SERVER_JOB_LOAD,
	SERVER_JOB_RELOAD,
	SERVER_JOB_RESTART,
	SERVER_JOB_UNLOAD,
	SERVER_JOB_SHUTDOWN, /* an unload that keeps the saved row */
	SERVER_JOB_DISABLE,  /* ... marked disabled: not restored */
	SERVER_JOB_RENAME,
	SERVER_JOB_WAKE, /* an idle on-demand server: a call needs it */
	SERVER_JOB_IDLE, /* ... no call for its idle time: it stops */
};

struct server_job {
	enum server_job_kind kind;
	/* Who hears how it ended: a caller, a callback (restore) or none. */
	struct server_reply *reply;
	void (*done)(void *arg, const char *error);
	void *done_arg;
	int timeout_ms;
	json_t *row;	 /* a load: the row to save first, or NULL */
	json_t *secrets; /* ... and the values it refers to: name -> value */
	struct server_spec *spec; /* a load of a listed server: what it asks */
	bool is_reconfigure;	  /* ... which differs from what runs */
	/* What the job learnt, for its answer. */
	bool is_denied;	    /* the start was refused by policy */
	bool was_live;	    /* the unload stopped a live session */
	bool was_saved;	    /* ... and removed a saved row */
	bool had_container; /* ... and removed a container */
	bool has_new_row;   /* a load saved a row that was not there */
	bool has_drained;   /* a shutdown: the calls in flight have ended */
	bool is_at_once;    /* an idle stop: its lists are kept, no wait */
	bool needs_recheck; /* a restore: the row is read again before ready */
	char *failed_why;   /* a failed start, while its container goes */
	char *new_name;	    /* a rename: the name asked for */
	char *old_name;	    /* ... and the one it had */
	TAILQ_ENTRY(server_job) entry;
};

struct server {
	int references;	    /* the list's, and each holder's (DESIGN 10) */
	bool is_dead;	    /* out of the list: memory goes at the last unref */
	struct event *kick; /* runs the next gate job from the loop */
	char *id;
	char *name;
	char *agent;
	char *endpoint;
	enum server_mode mode;
	struct server_spec spec;
	enum server_state state;
	uint64_t generation;	 /* of the serving connection; 0: none yet */
	struct session *session; /* serves calls */
	/* Tool name -> definition digest, of definitions_of's tools list. */
	json_t *definitions;
	const struct session *definitions_of;
	uint64_t definitions_serial;
	/* Being started by the running job: never without one (checked). */
	struct session *next;
	json_t *carried; /* an upgrade: the connection to adopt, not start */
	bool is_adopted; /* ... adopted: its generation (and handles) go on */
	json_t *next_session; /* ... its handshake, for the session made */
	/* What the serving and the starting connections run with. */
	unsigned char digest[SPEC_DIGEST_LEN], next_digest[SPEC_DIGEST_LEN];
	TAILQ_HEAD(, server_job) jobs;
	/*
	 * The gate: the job that runs (the first of jobs), or NULL. Not a
	 * state: a job (a rename, a reload beside a serving connection)
	 * runs in any state (doc/states.md).
	 */
	struct server_job *running;
	struct logring *logs;
	TAILQ_HEAD(, server_follower) followers; /* of its stderr */
	TAILQ_HEAD(, server_pending_call) calls; /* in flight */
	struct docker_container *container; /* a container server's record */
	struct oauth *auth; /* a remote server's authorization (OAuth) */
	bool is_persistent; /* its row is saved: it comes back at start */
	unsigned restarts;
	unsigned failures; /* failed restarts in a row */
	int backoff_ms;
	struct event *restart_timer; /* pending: restarting or recovering */
	struct event *healthy_timer;
	char *last_error;
	time_t last_error_at;
	uint64_t last_error_generation; /* the generation it happened in */
	time_t since;
	/* On demand (server-idle.c) and the lists kept (server-kept.c). */
	json_t *kept; /* tools, prompts, resources, templates, digests */
	uint64_t kept_serial;
	bool is_on_demand;
	bool stops_when_kept; /* a first start: idle once its lists are kept */
	bool tells_when_kept; /* a wake: list_changed if its lists differ */
	bool has_waiters_due; /* the waiters run on the next loop turn */
	int idle_stop_ms;     /* 0: never */
	uint64_t last_used_ms;
	struct event *idle_timer;
	TAILQ_HEAD(, server_waiter) waiters;
	TAILQ_ENTRY(server) entry;
};

TAILQ_HEAD(server_head, server);

/* A call in flight (server-call.c), in its server's calls. */
struct server_pending_call {
	struct server_reply *reply; /* its caller's */
	struct server *server;
	struct session *session;
	int64_t id;
	int timeout_ms;	      /* its deadline, which bounds mcpd's requests */
	char token[32];	      /* its progressToken upstream, or "" */
	json_t *caller_token; /* an MCP caller's own progressToken, or NULL */
	json_t *caps; /* what the caller answers (client capabilities) */
	struct audit_call *audit; /* its record, ended with the call */
	bool is_mcp;	  /* the caller speaks MCP: notifications as MCP's */
	bool is_modern;	  /* ... 2026-07-28: it cannot take requests */
	bool takes_input; /* input_required results reach it */
	TAILQ_ENTRY(server_pending_call) entry; /* in server->calls */
};

extern struct server_head server_list;
extern size_t server_closing; /* sessions still stopping in background */
extern void (*server_all_stopped)(void *);
extern void *server_all_stopped_arg;

/* server.c: the list of servers, what they show, calls */
extern const struct fsm server_fsm;
/* Moves s to state; a transition the table does not allow is a bug. */
void server_set_state(struct server *s, enum server_state state);
/* The state mcpctl list shows (a folded-in state shows as before). */
const char *server_state_shown(const struct server *s);
/*
 * Its kept lists stand for it (idle, waking, recovering, resuming): they
 * are listed, and calls wait for its start (doc/lifecycle.md).
 */
bool server_is_standing_in(const struct server *s);
/* A start runs or is queued for it: calls that wait go on waiting. */
bool server_is_starting(const struct server *s);
void server_set_error(struct server *s, const char *why);
/* Marks s dead and takes it out of the list; memory goes at the last unref. */
void server_kill(struct server *s);
void server_check_all_stopped(void);

/* server-logs.c */
/* Keeps a stderr line and sends it to the followers. */
void server_logs_push(struct server *s, const char *line, size_t len);
/*
 * A line of mcpd's own in the server's log, with the time: its exits,
 * restarts and connections, so that mcpctl logs tells them apart.
 */
void server_logs_note(struct server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Ends every follower of s, saying why (unloaded, shutting down). */
void server_logs_end(struct server *s);
/*
 * Writes the log to <state>/logs/<id>.log for the next start (mcpd
 * stops); a failure is logged and changes nothing else.
 */
void server_logs_save(struct server *s);
/* Removes that file (s is unloaded): its lines have no one to go to. */
void server_logs_forget(struct server *s);
void server_retire_session(struct session *sess);
json_t *server_error_data(const struct server *s);
/* result with flag (was_loaded, reconfigured) set to true. */
json_t *server_result_mark(json_t *result, const char *flag);

/* The digest of a tool's definition (server_tool_definition's). */
void server_tool_digest(const json_t *tool, char hex[SERVER_DEFINITION_SIZE]);

/* server-start.c: connections, their outcome, restarts */
/*
 * Its connection died while a job that keeps it ran (a rename, whose
 * docker rename was under way): nothing took over, so it restarts now.
 */
void server_restart_if_lost(struct server *);
void server_healthy(evutil_socket_t fd, short events, void *arg);
void server_restart_due(evutil_socket_t fd, short events, void *arg);
void server_job_start(struct server *s, struct server_job *job);

/* server-call.c */
/* The audit log's line of rep's call of tool of s, refused before it was sent. */
void server_call_refused(const struct server *s, const char *tool,
    struct server_reply *rep, enum errors_kind kind);
/* s belongs to agent, is ready, and scope (NULL: all) names it. */
bool server_in_gateway_scope(const struct server *s, const char *agent,
    const json_t *scope);
/* A notification of the server: progress and log messages for callers. */
void server_call_notify(struct server *s, const char *method,
    const json_t *params);

/* server-job.c: the gate */
/* Tells whoever waits for job that it succeeded (result stolen). */
void server_job_reply(struct server_job *job, json_t *result);
/* ... that it failed (data stolen). */
void server_job_error(struct server_job *job, enum errors_kind kind,
    json_t *data, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void server_job_end(struct server *s);
/* The gate's next step, on a later loop turn (never inside the caller). */
void server_job_schedule(struct server *s);
void server_job_run(evutil_socket_t fd, short events, void *arg);
/* A load of s's saved row (server_restore's, without the read back). */
struct server_job *server_job_restore(struct server *s,
    struct server_reply *rep, int timeout_ms,
    void (*done)(void *arg, const char *error), void *arg);
void server_container_gone(void *arg);

/* server-start.c */
/* A login came while the server had failed for want of it: start again. */
void server_oauth_authorized(void *arg);

/* server-kept.c: the lists kept with the saved row */
/* The tools s lists: its connection's, or those kept while it is idle. */
json_t *server_tools_peek(const struct server *s);
/* Capabilities, as tools_peek. */
const json_t *server_capabilities_peek(const struct server *s);
/* Asks the ready connection for its lists, to keep them (and save them). */
void server_kept_take(struct server *s);
/* Reads s's kept lists from the state dir: 0, or a negative errno. */
int server_kept_restore(struct server *s, char **cause);
/* Removes the file of s's kept lists (s is unloaded). */
void server_kept_forget(struct server *s);
/*
 * An idle s answers a list method from what it kept (cb from the loop);
 * false when method is not one of them.
 */
bool server_kept_answers(struct server *s, const char *method, json_t *params,
    session_reply_fn *cb, void *arg);

/* server-idle.c: on demand */
void server_idle_init(struct server *s);
void server_idle_release(struct server *s);
/* s is idle or being woken: its kept lists are listed. */
bool server_idle_is_listed(const struct server *s);
/* s moved to a new state from from (server_set_state). */
void server_idle_state_changed(struct server *s, enum server_state from);
/*
 * s's new connection is ready (it was woken for calls, or not): false when
 * the gateway must be told.
 */
bool server_idle_promoted(struct server *s, bool was_waking);
/* The lists of s are kept; changed says they differ from before. */
void server_idle_lists_kept(struct server *s, bool changed);
/* A call or request for s: it counts as use. */
void server_idle_used(struct server *s);
/*
 * A call of an idle s waits for its start (the call's arguments copied):
 * true when held (or failed: an unknown tool), false to go on now.
 */
bool server_idle_hold_call(struct server *s, uint64_t generation,
    const char *tool, json_t *arguments, int timeout_ms,
    struct server_reply *rep, const json_t *mcp_params,
    const struct server_call_opts *opts);
bool server_idle_hold_text(struct server *s, const char *tool, const char *args,
    size_t len, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params);
bool server_idle_hold_forward(struct server *s, const char *method,
    json_t *params, session_reply_fn *cb, void *arg);
/* The gate's IDLE job: stop a server no call has used for its idle time. */
void server_job_idle(struct server *s, struct server_job *job);
/* The list row's on-demand fields. */
void server_idle_describe(const struct server *s, json_t *row);

/* server-ask.c */
/*
 * A request of the server to its client (sampling, elicitation, roots),
 * over connection sess: relayed to the client whose call raised it when
 * that is clear and it declared the capability, else refused.
 */
void server_ask(struct server *, struct session *sess, const char *method,
    const json_t *id, const json_t *params);

#endif
