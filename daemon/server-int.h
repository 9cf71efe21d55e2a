/* SPDX-License-Identifier: ISC */
/* What server.c, server-start.c and server-job.c share: servers and jobs. */
#ifndef MCPD_SERVER_INT_H
#define MCPD_SERVER_INT_H

#include "mcpd.h"

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
};

struct server_job {
	enum server_job_kind kind;
	/* Who hears how it ended: a request, a callback (restore) or none. */
	struct request *req;
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
	struct session *next; /* being started by the running job */
	/* What the serving and the starting connections run with. */
	unsigned char digest[SPEC_DIGEST_LEN], next_digest[SPEC_DIGEST_LEN];
	TAILQ_HEAD(, server_job) jobs;
	bool is_job_running;
	struct logring *logs;
	TAILQ_HEAD(, server_follower) followers; /* of its stderr */
	TAILQ_HEAD(, server_pending_call) calls; /* in flight */
	struct docker_container *container; /* a container server's record */
	struct oauth *auth; /* a remote server's authorization (OAuth) */
	bool is_unloading;  /* unloaded; only its container is left */
	bool is_persistent; /* its row is saved: it comes back at start */
	bool needs_recheck; /* restored: the row is read again before ready */
	unsigned restarts;
	unsigned failures; /* failed restarts in a row */
	int backoff_ms;
	struct event *restart_timer;
	struct event *healthy_timer;
	char *last_error;
	time_t last_error_at;
	uint64_t last_error_generation; /* the generation it happened in */
	time_t since;
	TAILQ_ENTRY(server) entry;
};

TAILQ_HEAD(server_head, server);

/* A call in flight (server-call.c), in its server's calls. */
struct server_pending_call {
	struct request *req;
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
void server_healthy(evutil_socket_t fd, short events, void *arg);
void server_restart_due(evutil_socket_t fd, short events, void *arg);
void server_job_start(struct server *s, struct server_job *job);

/* server-call.c */
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
void server_container_gone(void *arg);

/* server-start.c */
/* A login came while the server had failed for want of it: start again. */
void server_oauth_authorized(void *arg);

/* server-ask.c */
/*
 * A request of the server to its client (sampling, elicitation, roots),
 * over connection sess: relayed to the client whose call raised it when
 * that is clear and it declared the capability, else refused.
 */
void server_ask(struct server *, struct session *sess, const char *method,
    const json_t *id, const json_t *params);

#endif
