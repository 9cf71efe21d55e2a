/* SPDX-License-Identifier: ISC */
/* The daemon's internal header, one section per file; the gateway's and the HTTP front's are gateway.h and httpd.h. */
#ifndef MCPD_H
#define MCPD_H

#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "errors.h"
#include "jsonrpc.h"
#include "xalloc.h" /* out of memory is fatal in the daemon */

struct client;
struct gateway;
struct gateway_search;
struct request;
struct server;
struct server_reply;
struct call_who;
struct server_spec;
struct session;
struct transport;

enum server_mode {
	SERVER_PROCESS,
	SERVER_CONTAINER,
	SERVER_REMOTE,
	SERVER_GATEWAY, /* docker mcp gateway run, reached over loopback */
};

/* mcpd.c */
struct mcpd_options {
	char *socket_path;
	char *state_dir;
	size_t max_message;	/* longest control or server message */
	int call_timeout_ms;	/* default deadline of a tool call */
	int approval_timeout_s; /* how long an ask waits for an answer */
	int load_timeout_ms;	/* default deadline of a load or reload */
	int stop_step_ms;	/* each wait of the stop sequence */
	size_t log_lines;	/* stderr lines kept per server */
	size_t max_clients;	/* control connections at once */
	/* The HTTP front: sessions, per token, idle and header deadlines. */
	size_t max_http_sessions;
	size_t max_http_sessions_per_token;
	int http_session_idle_ms;
	int http_stream_after_ms; /* a call's event stream starts after it */
	int http_header_timeout_ms;
	size_t max_http_requests; /* in flight to one remote server */
	size_t max_servers;	  /* listed servers of all agents together */
	char *ca_file;		  /* TLS roots instead of the system's */
	char *dns_server;	  /* resolver instead of resolv.conf's */
	char *docker;		  /* the docker CLI (MCPD_DOCKER, --docker) */
	int docker_timeout_ms;	  /* deadline of one docker rm/port/ps */
	int stop_grace_ms;	  /* shutdown: admitted jobs end, then force */
	int stop_force_ms;	  /* forced: docker rm -f of all, then exit */
	int upgrade_drain_ms;	  /* an upgrade waits this long for quiet */
	int upgrade_http_wait_ms; /* ... and for kept-alive HTTP connections */
	char *secrets_key;	  /* the secret store's key file, or NULL */
	char *listen_http;	  /* the HTTP front's loopback ADDR:PORT */
	char *docker_catalog;	  /* Docker's MCP catalog image reference */
	/* OAuth: the URL of mcpd's client ID metadata document, or NULL. */
	char *oauth_client_metadata_url;
	/* Per client: requests in flight, bytes of answers not yet sent. */
	size_t max_client_requests;
	size_t max_client_output;
	/* Discovery (doc/discovery.md). */
	char *registry;		   /* the MCP Registry's base URL */
	bool is_registry_local;	   /* it may be at a loopback address */
	int registry_timeout_ms;   /* deadline of one registry request */
	size_t registry_max_bytes; /* longest registry answer */
	char *registry_contract;   /* openapi.json, or NULL: the default */
	char *catalog;		   /* the local catalog, or NULL: the default */
	size_t registry_problems;  /* problems kept per rejected record */
	size_t registry_problem_chars; /* of a problem's path, or detail */
	size_t registry_text_chars;    /* of mcpctl's human answer */
	/* The servers' instructions a gateway session gets, in all. */
	size_t max_instructions;
	/* How long a gateway session has to answer mcpd's own roots/list. */
	int roots_timeout_ms;
	/* Estimated tokens a view may list before it lists search (0: any). */
	size_t tool_budget;
	/* The audit log (doc/policy.md): off, its arguments, required. */
	bool is_audit_off;
	bool is_audit_arguments;
	bool is_audit_required;
	size_t audit_max_bytes; /* audit.jsonl's size before it rotates */
	size_t audit_files;	/* rotated files kept: audit.jsonl.1 ... .N */
	/* Bytes of a pinned tool definition kept for its diff (pins.json). */
	size_t pin_definition_max;
	size_t max_kept_bytes; /* one server's kept lists, as JSON */
};
extern struct mcpd_options mcpd_opts;

/*
 * mcpd-options.c: the settings, from mcpd.conf, then the environment, then
 * argv (each over the one before). Returns -1 when all went into
 * mcpd_opts, or what the caller handles: 'V', 'h', or '?' for a usage
 * error; a value that is refused (a bad number, a bad line of the file)
 * exits 2 after saying where it came from.
 */
int options_parse(int argc, char **argv, int *foreground, int *verbose);
/* [{name, value, source}] of every setting ("default", "command line",
 * "environment NAME" or "FILE:LINE"). */
json_t *options_status(void);
/* The settings file that was read, or NULL. */
const char *options_conf(void);
extern struct event_base *mcpd_base;
extern struct store *mcpd_store;
extern uint64_t mcpd_started_ms;
bool mcpd_is_stopping(void);
struct secrets;
/* The secret store, opened at first use; NULL with *cause when it cannot be. */
struct secrets *mcpd_secrets(char **cause);
/* The same, but NULL (and no key made) when no secret was ever stored. */
struct secrets *mcpd_secrets_if_any(void);
/* Stops every server, answers req (may be NULL) and leaves the loop. */
void mcpd_shutdown(struct request *req);
/* Milliseconds on the monotonic clock. */
uint64_t mcpd_now_ms(void);

/* control.c: the control socket, its clients and their requests. */
int control_listen(const char *path, int activated_fd, char **cause);
void control_close(void);
size_t control_client_count(void);
/* The agent the request's connection speaks for ("default" unless hello). */
const char *control_agent(const struct request *);
void control_set_agent(struct request *, const char *agent);
/* False once the client that asked has gone away. */
bool control_is_live(const struct request *);
/*
 * fn(arg) is called once if the request's client goes (closes, or cannot
 * be written to) while the request is pending; it must not answer the
 * request itself, only make its owner answer it later (into nothing). The
 * hook goes with the request: once answered, it is never called.
 * fn NULL unregisters it. Internal requests never go.
 */
void control_on_gone(struct request *, void (*fn)(void *), void *arg);
/* A request of c's, answered with control_finish (id: a reference taken). */
struct request *control_request_new(struct client *c, json_t *id);
/* The request stays open by design (an attach, a listen): an upgrade keeps it. */
void control_request_set_lasting(struct request *);
/* Answers and frees the request; result is stolen. */
void control_reply(struct request *, json_t *result);
/* Answers with a result given as checked raw JSON text, unchanged. */
/* A server's JSON-RPC error object (borrowed), passed on as it is. */
void control_reply_error(struct request *, const json_t *error);
void control_reply_raw(struct request *, const char *result, size_t len);
/* Fails the request with an application error kind; data is stolen. */
void control_fail(struct request *, enum errors_kind, json_t *data,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Fails the request with a JSON-RPC standard code; data is stolen. */
void control_fail_code(struct request *, int code, json_t *data,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The request asked for mcpd/progress notifications. */
/*
 * Sends a notification about request r to its client, params (stolen)
 * with "request": r's id added: -EPIPE when the client is gone, -ENOBUFS
 * (nothing sent) when it has more unread output than the limit.
 */
int control_notify(const struct request *, const char *method, json_t *params);
void control_want_progress(struct request *);
bool control_wants_progress(const struct request *);
/* One mcpd/progress notification, if the request (may be NULL) wants them. */
void control_progress(const struct request *, const char *server,
    const char *stage, const char *message);

/*
 * Takes fd (a connected socket) as a control client of agent, its MCP
 * scope set (may be NULL): the HTTP front's way in. -EBUSY with *cause at
 * --max-clients; fd is closed then.
 */
/*
 * How a request of mcpd's to a client ended: its result or its JSON-RPC
 * error object (borrowed), or neither and why it failed (timed out, the
 * client went).
 */
typedef void control_answer_fn(void *arg, const json_t *result,
    const json_t *error, const char *why);
/*
 * Sends the request's client a request of mcpd's (params stolen): a
 * server's sampling, elicitation or roots request, relayed. cb runs once,
 * later, when it ends (at most timeout_ms, the call's deadline; at most
 * max_client_requests wait on one client). -ENOTCONN when the client has
 * gone, -EBUSY at that bound: nothing was sent.
 */
int control_ask(const struct request *, int timeout_ms, const char *method,
    json_t *params, control_answer_fn *cb, void *arg);
/* The same to a client with no request of its own in flight. */
int control_ask_client(struct client *, int timeout_ms, const char *method,
    json_t *params, control_answer_fn *cb, void *arg);
/* Why control_ask or control_ask_client refused with r (static text). */
const char *control_ask_refusal(int r);
/* The client a request came from (opaque; NULL once it has gone). */
/* The request's JSON-RPC id (borrowed). */
const json_t *control_request_id(const struct request *);
/* Who the request's client is, for the audit log (borrowed; may be NULL). */
const json_t *control_who(const struct request *);
/* Who makes the request, as the policy and the audit log take it. */
void control_call_who(const struct request *, struct call_who *ret);
/* The request a reply of control_server_reply stands for. */
struct request *control_reply_request(const struct server_reply *);
const struct client *control_request_client(const struct request *);
/*
 * An in-process peer of a control client (an HTTP session of the HTTP
 * front). The client has no descriptor: its output is delivered to the
 * peer (it takes the lines from the buffer, at the end of the loop turn),
 * so that no second copy of a backlog waits on the way; what
 * it holds, not yet sent on, counts against --max-client-output when a
 * notification is queued. gone is called when the client is freed.
 */
struct control_peer {
	void (*deliver)(void *arg, struct evbuffer *lines);
	size_t (*held)(void *arg);
	void (*gone)(void *arg);
	/* Adds what mcpd/clients shows of the peer's session to into. */
	void (*describe)(void *arg, json_t *into);
};
/*
 * A client of an in-process peer (an HTTP session), with no descriptor:
 * the peer hands it lines and it delivers its output to the peer. It
 * takes no slot of --max-clients, which counts socket connections.
 */
struct client *control_adopt(const char *agent, const json_t *scope,
    const struct control_peer *peer, void *arg);
/*
 * A line of the in-process peer handled now, as if the client had read it;
 * when the client cannot take it now (it is paused, or lines wait before
 * it), it waits in the client's input, as every later line does until
 * those are read, so that they keep their order.
 */
void control_peer_line(struct client *, const char *line, size_t len);
/* The same for a message the peer parsed already (borrowed): no parse. */
void control_peer_message(struct client *, json_t *msg);
/* A line put in the client's input, read from the loop (never now). */
void control_peer_queue(struct client *, const char *line, size_t len);
/* The peer goes first: the client no longer asks it anything. */
void control_forget_peer(struct client *);
/* The peer went: the client is forgotten by it and ends from the loop. */
void control_peer_end(struct client *);
/* The gateway's view of control connections (DESIGN 11). */
struct gateway;
/* mcpd/hello's servers: the scope of the connection's MCP session. */
void control_set_scope(struct request *, json_t *servers);
/*
 * mcpd/hello's client.parent: the connection is mcpctl bridge's, for the
 * client process pid (0: unknown) whose executable is exe (NULL: unknown).
 */
void control_set_bridge(struct request *, pid_t pid, const char *exe);
const json_t *control_scope(const struct request *);
/* The MCP session of req's connection, made at its first MCP request. */
struct gateway *control_gateway(struct request *);
/* ... or NULL when it has none. */
struct gateway *control_gateway_of(const struct request *);
const char *control_client_agent(const struct client *);
const json_t *control_client_scope(const struct client *);
/* The profile the connection asked for (hello, token), or NULL. */
void control_client_set_profile(struct client *, const char *profile);
const char *control_client_profile(const struct client *);
const char *control_profile(const struct request *);
void control_set_profile(struct request *, const char *profile);
/*
 * Why the view of the connection's MCP session cannot be made (a project
 * file that is broken or not trusted, as the bridge found it), or NULL:
 * its requests for lists and calls are refused with it.
 */
void control_set_view_error(struct request *, const char *why);
/* The audit log's client field of the connection (stolen). */
void control_client_set_who(struct client *, json_t *who);
const char *control_client_view_error(const struct client *);
void control_client_set_view_error(struct client *, const char *why);
/* The connection's servers (a reference taken), or NULL: all of them. */
void control_client_set_scope(struct client *, json_t *servers);
/*
 * mcpd/hello's roots_project: a bridge that found no project file from its
 * working directory; its session's view may come from its client's first
 * root (gateway-rootview.c).
 */
void control_set_roots_project(struct request *);
bool control_client_roots_project(const struct client *);
/* What an own request's answer is given to: the JSON-RPC answer (stolen). */
typedef void control_own_fn(void *arg, json_t *msg);
/*
 * A request of mcpd's own, made on c's behalf (c's agent and view): run
 * it with cmd_dispatch; its answer goes to fn, from the loop, never to c.
 */
struct request *control_request_own(struct client *c, control_own_fn *fn,
    void *arg);
/* An MCP notification as it is (params stolen); as control_notify. */
int control_client_notify(struct client *, const char *method, json_t *params);
int control_notify_mcp(const struct request *, const char *method,
    json_t *params);
struct server_reply_ops;
/*
 * req's completion for the server layer (daemon/server-reply.h), living as
 * long as req: answered as control_reply and the rest answer, or through
 * ops (NULL: the control layer's own, control_reply_ops), with the agent
 * and scope of req's client.
 */
struct server_reply *control_server_reply(struct request *,
    const struct server_reply_ops *ops);
extern const struct server_reply_ops control_reply_ops;

/* cmd.c: the command table and the central check of params shapes. */
#define CMD_ANY	     (-1)
#define CMD_STOPPING 0x1 /* still allowed while the daemon stops */
struct cmd_param {
	const char *name;
	int type; /* a json_type, or CMD_ANY */
	bool is_required;
};
struct cmd_entry {
	const char *name;
	void (*exec)(struct request *, json_t *params);
	const struct cmd_param *params; /* ends with { NULL } */
	int flags;
};
void cmd_dispatch(struct request *, const char *method, json_t *params);
/* A string param or NULL. */
const char *cmd_string(json_t *params, const char *key);
/*
 * The caller's server named by target (id, name, container name, or the
 * endpoint of just one server), or NULL after failing req.
 */
struct server *cmd_server(struct request *, const char *target);
/* The same, but NULL without failing req unless target is ambiguous. */
struct server *cmd_server_or_none(struct request *, const char *target,
    bool *ret_failed);
/* agent's profile name, or NULL after failing req (with did-you-mean). */
const json_t *cmd_profile_row(struct request *, const char *agent,
    const char *name);
/* True when one more server fits --max-servers; else fails req, false. */
bool cmd_server_room(struct request *);
/* Reads an optional timeout_ms (1 ms to 24 h); false after failing req. */
bool cmd_timeout(struct request *, json_t *params, int dflt, int *ret);
/* cmd-load.c and cmd-load-remote.c */
struct loadspec;
/*
 * Checks the variables, then loads ls (its spec is taken) through the gate
 * of agent's server (the agent of req's client when it asked).
 */
void cmd_load_start(struct request *, const char *agent, const json_t *params,
    struct loadspec *, int timeout);
/* Checks a URL against the policy first, then cmd_load_start (ls taken). */
void cmd_load_remote(struct request *, const json_t *params, struct loadspec *,
    int timeout);
/* Fails req with -32602 naming field; returns false. */
bool cmd_load_bad(struct request *, const char *field, const char *why);
/* Wipes the env and header values of a load's params (they may be secret). */
void cmd_load_wipe(json_t *params);
extern const struct cmd_entry cmd_hello_entry;
extern const struct cmd_entry cmd_upgrade_entry;
extern const struct cmd_entry cmd_attach_entry;
extern const struct cmd_entry cmd_load_entry;
extern const struct cmd_entry cmd_unload_entry;
extern const struct cmd_entry cmd_reload_entry;
extern const struct cmd_entry cmd_changes_entry;
extern const struct cmd_entry cmd_accept_entry;
extern const struct cmd_entry cmd_disable_entry;
extern const struct cmd_entry cmd_enable_entry;
extern const struct cmd_entry cmd_rename_entry;
extern const struct cmd_entry cmd_set_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_inspect_entry;
extern const struct cmd_entry cmd_tools_entry;
extern const struct cmd_entry cmd_call_entry;
extern const struct cmd_entry cmd_logs_entry;
extern const struct cmd_entry cmd_clients_entry;
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_shutdown_entry;
extern const struct cmd_entry cmd_secret_set_entry;
extern const struct cmd_entry cmd_secret_list_entry;
extern const struct cmd_entry cmd_secret_rm_entry;
extern const struct cmd_entry cmd_token_entry;
extern const struct cmd_entry cmd_profile_entry;
extern const struct cmd_entry cmd_policy_entry;
extern const struct cmd_entry cmd_approvals_entry;
extern const struct cmd_entry cmd_approve_entry;
extern const struct cmd_entry cmd_deny_entry;
extern const struct cmd_entry cmd_project_entry;
extern const struct cmd_entry cmd_registry_search_entry;
extern const struct cmd_entry cmd_registry_catalog_entry;
extern const struct cmd_entry cmd_registry_info_entry;
extern const struct cmd_entry cmd_registry_versions_entry;
extern const struct cmd_entry cmd_docker_catalog_entry;
extern const struct cmd_entry cmd_gateway_start_entry;
extern const struct cmd_entry cmd_gateway_stop_entry;
extern const struct cmd_entry cmd_auth_login_entry;
extern const struct cmd_entry cmd_auth_status_entry;
extern const struct cmd_entry cmd_auth_logout_entry;

/* mcpd-child.c: child processes, their pipes and their exits. */
struct child_spec {
	char *const *argv;
	char *const *env; /* the whole environment, "K=V" */
	const char *cwd;  /* NULL: the daemon's */
};
struct child_io {
	pid_t pid;	  /* the shim: leads the process group, reaped by us */
	pid_t server_pid; /* the program itself */
	int in;		  /* write end of the child's stdin */
	int out;	  /* read end of its stdout */
	int err;	  /* read end of its stderr */
};
void child_init(void);
/* Reaps what has exited now (an upgrade's exec may have hidden a SIGCHLD). */
void child_reap_now(void);
void child_close(void);
/* The soft RLIMIT_NOFILE children get (mcpd's own before it raised it). */
void child_set_nofile(rlim_t soft);
/*
 * Starts argv in its own process group, with a parent-death signal, no
 * shell, and the given environment. Returns 0, or a negative errno with
 * *cause saying why (exec failures included).
 */
int child_spawn(const struct child_spec *, struct child_io *ret, char **cause);
/*
 * Calls exited(arg, wait status) once the child has exited: always from the
 * event loop, never from inside child_watch (or a spawn that calls it).
 */
void child_watch(pid_t, void (*exited)(void *, int), void *arg);
void child_unwatch(pid_t);
/*
 * 0 when spec's program can be run as execvp would find it (its PATH from
 * spec->env, a relative path from spec->cwd); else a negative errno with
 * *cause saying what is missing. Checked before a load saves anything.
 */
int child_find_program(const struct child_spec *, char **cause);
/* "exited with status 1", "killed by signal 9". */
char *child_describe_status(int status);
/* The minimal environment of DESIGN 8 plus extra ("K=V"), new array. */
char **child_env_build(char *const *extra);
/* A deep copy of a NULL-terminated array. */
char **child_strv_copy(char *const *);
void child_strv_free(char **);
/* The same, after wiping every string (they may hold resolved secrets). */
void child_strv_wipe_free(char **);

/*
 * mcpd-fsm.c: state machines (doc/states.md). A machine's states are the
 * values 0..n-1 of one enum, named by states; next[s] has bit t set when
 * s may move to t.
 */
struct fsm {
	const char *name;	   /* "session", ... */
	const char *const *states; /* by value */
	const unsigned *next;	   /* by value: the states it may move to */
	unsigned n;		   /* at most 16 */
};
/*
 * The state to store for a move from to to of the object who (for the
 * log): to. An illegal move aborts with MCPD_STRICT_STATES=1 (the tests) or
 * in a sanitizer build, and is logged once in a release build.
 */
int fsm_move(const struct fsm *, int from, int to, const char *who);
bool fsm_allows(const struct fsm *, int from, int to);
/*
 * What an object of m keeps beside its state must agree with it (what says
 * what does not, in state): a broken rule is a bug, stopped or logged as
 * fsm_move's illegal moves are.
 */
void fsm_check(const struct fsm *m, bool holds, const char *who,
    const char *what, int state);
const char *fsm_state_name(const struct fsm *, int state);
/* The table as text (one line a state) and as Graphviz, for doc/states.md. */
void fsm_print(const struct fsm *, FILE *);
void fsm_print_dot(const struct fsm *, FILE *);
/* Every machine of mcpd, NULL-terminated (mcpd-fsm-all.c). */
extern const struct fsm *const fsm_all[];

/* mcpd-defer.c: the one deferred queue of frees and completions (DESIGN 10). */
/* fn(arg) runs on a later loop turn, never inside the caller. */
void defer_call(void (*fn)(void *), void *arg);
/* Runs what is still queued (at exit). */
void defer_close(void);

/*
 * mcpd-fdread.c: a descriptor read straight into buffer space, one read(2) per
 * readiness and no ioctl(FIONREAD) before it (libevent's reads ask).
 * on_read(arg): in has new bytes (or, after fdread_kick, bytes still
 * unread); on_end(arg, error): the end (0) or an errno, with nothing new.
 * Each is the last thing done with the reader (it may be freed). With fd
 * -1 nothing is read: bytes its owner puts in are taken after a kick.
 */
#define FDREAD_PASSED_MAX 2 /* descriptors kept of those a peer passes */
struct fdread {
	struct event *ev;
	struct evbuffer *in;
	size_t max; /* bytes taken per readiness at most */
	void (*on_read)(void *);
	void (*on_end)(void *, int error);
	void *arg;
	bool is_kicked;
	bool takes_fds; /* a socket whose peer may pass descriptors */
	int npassed;
	int passed[FDREAD_PASSED_MAX]; /* passed, not yet taken */
};
void fdread_init(struct fdread *, int fd, size_t max, void (*on_read)(void *),
    void (*on_end)(void *, int), void *arg);
void fdread_enable(struct fdread *);
void fdread_disable(struct fdread *);
/* on_read on a later loop turn, for bytes left in the buffer. */
void fdread_kick(struct fdread *);
/* Reads what the descriptor holds now, no callback; the bytes read. */
size_t fdread_now(struct fdread *);
/*
 * Reads with recvmsg(2) from now on, keeping up to FDREAD_PASSED_MAX
 * descriptors the peer passes (SCM_RIGHTS); the rest are closed.
 */
void fdread_take_fds(struct fdread *);
/* Hands over the descriptors passed so far: how many went into fds. */
int fdread_passed(struct fdread *, int fds[FDREAD_PASSED_MAX]);
/*
 * Stops watching and frees the buffer; descriptors passed and not taken
 * are closed (the one read stays open).
 */
void fdread_release(struct fdread *);

/* control-sendq.c: outgoing lines per peer, written once per loop turn. */
struct bufferevent;
struct sendq;
struct sendq *sendq_new(struct bufferevent *);
void sendq_free(struct sendq *);
/* Queues msg as one line; it is written at the end of this loop turn. */
int sendq_push(struct sendq *, const json_t *msg);
/* Queues a message given as the pieces of its text (newline included). */
int sendq_push_text(struct sendq *, const struct iovec *, int n);
/* Queues an answer whose result is checked raw JSON text. */
int sendq_push_raw_result(struct sendq *, const json_t *id, const char *raw,
    size_t len);
/* The queue's buffer, for bytes of any framing (HTTP): written as the rest. */
struct evbuffer *sendq_buffer(struct sendq *);
/*
 * fn(arg) after a write that left nothing unsent without going through the
 * bufferevent (whose own write callback reports the other case).
 */
void sendq_on_drained(struct sendq *, void (*fn)(void *), void *arg);
/*
 * What is queued goes to fn (an in-process peer, which takes the lines it
 * can from the buffer) instead of the bufferevent; NULL: back to it.
 */
void sendq_deliver_to(struct sendq *, void (*fn)(void *, struct evbuffer *),
    void *arg);
/* Writes what is queued now (before closing, say). */
void sendq_flush(struct sendq *);
/* Bytes not yet taken by the kernel. */
size_t sendq_length(const struct sendq *);
void sendq_close(void);

/* server-logring.c: a bounded ring of stderr lines, each with its time. */
struct logring;
struct logring *logring_new(size_t max_lines);
void logring_free(struct logring *);
/* Adds a line read now (cut at a NUL and to 4096 bytes; \n made a space). */
void logring_push(struct logring *, const char *line, size_t len);
/* Adds a line read at ms (wall clock, ms since the epoch). */
void logring_push_at(struct logring *, int64_t ms, const char *line,
    size_t len);
/* The last n lines (all when n is 0) as a new JSON array of strings. */
json_t *logring_tail(const struct logring *, size_t n);
/* Their times, the same n, as a new array of ISO 8601 UTC strings (ms). */
json_t *logring_times(const struct logring *, size_t n);
/*
 * Adds the line "-- mcpd restarted at <time> --": every line held now
 * (restored from before the restart, and that one) is an old one.
 */
void logring_mark_restart(struct logring *);
/* How many of the oldest lines held are from before the restart. */
size_t logring_restored(const struct logring *);
/* The largest text logring_save makes for a ring of max_lines. */
size_t logring_save_max(size_t max_lines);
/* The ring as text: "mcpd-logs 1", then "<ms> <line>" a line (new). */
void logring_save(const struct logring *, char **ret, size_t *ret_len);
/*
 * Adds the lines of text that logring_save made: how many; text that is
 * not that adds nothing and is -EBADMSG with *cause saying where it is
 * wrong.
 */
int logring_load(struct logring *, const char *buf, size_t len, char **cause);

/* oauth.c: OAuth 2.1 authorization of remote servers (doc/oauth.md). */
struct oauth;
struct oauth_wait;
enum oauth_event {
	OAUTH_EVENT_URL,    /* why: the authorization URL for the user */
	OAUTH_EVENT_READY,  /* a token is there: send again (final) */
	OAUTH_EVENT_FAILED, /* why: what failed and what to do (final) */
};
typedef void oauth_event_fn(void *arg, enum oauth_event, const char *why);
/* The authorization state of agent's server name (id: its secret's key). */
struct oauth *oauth_new(const char *agent, const char *name, const char *id);
/* Its server was renamed: hints and logs say the new name (its id stays). */
void oauth_rename(struct oauth *, const char *name);
void oauth_ref(struct oauth *);
void oauth_unref(struct oauth *);
/*
 * What the next connection reaches: its canonical URL, the policy's
 * loopback opt-in and a pre-registered client {client_id, client_secret?,
 * issuer?} (resolved; copied; NULL: none).
 */
void oauth_configure(struct oauth *, const char *url, bool allow_local,
    const json_t *client);
/* Whether a flow may ask the user (a browser) or must fail asking for login. */
void oauth_set_prompt(struct oauth *, bool may_prompt);
/* fn(arg) from the loop whenever a flow ends authorized. */
void oauth_on_authorized(struct oauth *, void (*fn)(void *), void *arg);
/* The access token to send (borrowed), or NULL; *ret_gen tells it apart. */
const char *oauth_bearer(struct oauth *, uint64_t *ret_gen);
/* A request went through after a login or step-up (the step-up limit). */
void oauth_note_success(struct oauth *);
/* The token expires within a minute and a refresh token is there. */
bool oauth_needs_refresh(struct oauth *);
/*
 * A request was refused (status 401, or 403 with insufficient_scope;
 * 0: the token is about to expire) after it went with the token of
 * generation gen_used: fn hears the authorization URL when the user has
 * to act, then READY (send it again) or FAILED, each from the loop.
 */
struct oauth_wait *oauth_challenge(struct oauth *, int status,
    const char *www_authenticate, uint64_t gen_used, oauth_event_fn *fn,
    void *arg);
/* mcpctl auth login: a browser login (or the one under way), as above. */
struct oauth_wait *oauth_login(struct oauth *, oauth_event_fn *fn, void *arg);
/* No callback after this. NULL is fine. */
void oauth_wait_cancel(struct oauth_wait *);
/* {server, state, issuer?, scope?, expires_at?, ...}: never a token. */
json_t *oauth_status(struct oauth *);
/* none, authorized, authorizing, pending, needs-login or failed. */
const char *oauth_state_label(struct oauth *);
/* It asked for authorization at least once, or holds tokens. */
bool oauth_is_used(struct oauth *);
/* Only the user can go on (a login is pending, needed, or failed). */
bool oauth_needs_user(const struct oauth *);
/* What to tell the user when oauth_needs_user (new string), else NULL. */
char *oauth_hint(const struct oauth *);
/* Forgets tokens and registration, here and in the secret store. */
int oauth_logout(struct oauth *, bool *ret_removed, char **cause);
/* The same for the server of that id when none is listed. */
int oauth_forget_id(const char *id, bool *ret_removed, char **cause);
/* The server goes: its flow and waits end (tokens stay saved). */
void oauth_close(struct oauth *);
/* Frees the loopback listeners still lingering (at exit). */
void oauth_callback_close_all(void);

/* What a remote transport connects to. */
struct remote_spec {
	char *url;
	bool allow_local;
	bool is_sse;	    /* HTTP+SSE (2024-11-05) from the start */
	bool may_fall_back; /* transport inferred: HTTP+SSE if refused */
	json_t *headers;    /* object: name -> value */
	json_t *oauth;	    /* a pre-registered OAuth client, or NULL */
	struct oauth *auth; /* the server's authorization (not copied) */
};
/* net-http.c: a small HTTP/1.1 client over pinned addresses and TLS. */
struct http_peer {
	struct sockaddr_storage addr; /* checked by the policy: pinned */
	socklen_t addrlen;
	char *host;	/* for SNI and the certificate check */
	char *hostport; /* the Host header */
	bool is_tls;
	bool is_ip_literal;
};
struct http_field {
	const char *name;
	const char *value;
};
struct http_header {
	char *name;
	char *value;
};
struct http_response {
	int status;
	size_t nheaders;
	struct http_header *headers;
};
struct http_message {
	const char *method;
	const char *path;
	const struct http_field *fields;
	size_t nheaders;
	const void *body; /* NULL: no body */
	size_t body_len;
};
struct http_cbs {
	/* Status and headers; < 0 aborts the exchange. */
	int (*head)(void *arg, const struct http_response *);
	/* Body bytes as they arrive; < 0 aborts. */
	int (*body)(void *arg, const char *data, size_t len);
	/* Once, at the end: err 0 when the response was complete. */
	void (*done)(void *arg, int err, const char *why);
};
struct http_client;
struct http_exchange;
int http_tls_init(const char *ca_file, char **cause);
void http_tls_close(void);
struct http_client *http_client_new(const struct http_peer *);
/* Every exchange must have ended or been cancelled before this. */
void http_client_free(struct http_client *);
/* Starts a request on an idle or new connection; NULL on failure. */
struct http_exchange *http_send(struct http_client *,
    const struct http_message *, const struct http_cbs *, void *arg);
/* No more callbacks; the connection is closed (cancels the stream). */
void http_exchange_cancel(struct http_exchange *);

/*
 * net-http-parse.c: the HTTP/1.1 response parser that net-http.c feeds, apart from
 * any socket (and http_response_header, which it uses).
 */
#define HTTP_HEAD_MAX	 (64 * 1024) /* status line and headers; a chunk line */
#define HTTP_HEADERS_MAX 100
/*
 * The largest Content-Length or chunk size taken (what an int64 holds);
 * the body itself is bounded by whoever reads it (a message's limit).
 */
#define HTTP_LENGTH_MAX	 ((unsigned long long)INT64_MAX)
enum http_parse_state {
	HTTP_PARSE_STATUS,
	HTTP_PARSE_HEADERS,
	HTTP_PARSE_BODY_LENGTH,
	HTTP_PARSE_CHUNK_SIZE,
	HTTP_PARSE_CHUNK_DATA,
	HTTP_PARSE_CHUNK_END,
	HTTP_PARSE_TRAILERS,
	HTTP_PARSE_BODY_CLOSE, /* the body ends when the connection does */
	HTTP_PARSE_DONE,
};
struct http_parse {
	enum http_parse_state state;
	struct http_response resp;
	size_t head_bytes;
	size_t remaining;
	bool is_keep_alive;
	bool is_head_request;
};
struct evbuffer;
/* The value of the first header called name (any case), or NULL. */
const char *http_response_header(const struct http_response *,
    const char *name);
/* Sets up a parser of one response (a HEAD request's has no body). */
void http_parse_init(struct http_parse *, bool is_head_request);
/*
 * Takes what it can of one step of the response from in, calling
 * cbs->head and cbs->body (never cbs->done; cbs may be NULL): > 0 on
 * progress, 0 when it needs more bytes, or -EPROTO (malformed: a length
 * that is not only digits, or is over HTTP_LENGTH_MAX, too), -EMSGSIZE
 * (a line or the head over HTTP_HEAD_MAX), -ECANCELED (a callback
 * refused), -ENOMEM.
 */
int http_parse_step(struct http_parse *, struct evbuffer *in,
    const struct http_cbs *cbs, void *arg);
/* Frees the headers the parser holds. */
void http_parse_clear(struct http_parse *);

/* net-policy.c: the remote URL policy and DNS pinning. */
struct netpolicy_query;
/* err 0: peer is the checked, pinned address; else why says the rule. */
typedef void netpolicy_fn(void *arg, int err, const char *why,
    const struct http_peer *peer);
int netpolicy_init(const char *dns_server, char **cause);
void netpolicy_close(void);
/*
 * Checks a URL and resolves its host; cb is called once, from the loop,
 * never before this returns. -EACCES is a policy refusal.
 */
struct netpolicy_query *netpolicy_check(const char *url, bool allow_local,
    netpolicy_fn *cb, void *arg);
void netpolicy_cancel(struct netpolicy_query *);

/* registry-fetch.c: one GET to the MCP Registry under the URL policy. */
struct registry_reply {
	int status;	  /* the HTTP status, when why is NULL */
	const char *body; /* what came, NUL-terminated too */
	size_t body_len;
	enum errors_kind kind; /* when why is not NULL */
	const char *why;       /* the request failed: policy, network, limits */
};
typedef void registry_fetch_fn(void *arg, const struct registry_reply *);
struct registry_fetch;
/*
 * GETs url (checked by the remote URL policy, the address pinned, TLS
 * verified, no redirect followed, no proxy) within timeout_ms and
 * max_bytes of body. cb runs once, from the loop, never inside this call.
 */
struct registry_fetch *registry_fetch_start(const char *url, bool allow_local,
    int timeout_ms, size_t max_bytes, registry_fetch_fn *cb, void *arg);
/* Stops it; cb is not called. NULL is fine. */
void registry_fetch_cancel(struct registry_fetch *);

/* registry-contract.c: the registry's contract and record validation. */
/*
 * The file a data option names (given), else the installed one
 * (MCPD_DATADIR/name), else one beside the program (../share/mcpd/name:
 * installed under another prefix; ../data/name: the source tree of the
 * build directory): a new string, the installed path when none exists.
 */
char *registry_data_path(const char *given, const char *name);
/* What was wrong with one record, within the --registry-problem bounds. */
struct registry_problems {
	json_t *list; /* [{path, detail}], at most --registry-problems */
	size_t total; /* all of them, kept or not */
};
void registry_problems_init(struct registry_problems *);
void registry_problems_clear(struct registry_problems *);
/* Adds one (each text escaped and cut to --registry-problem-chars). */
void registry_problems_add(struct registry_problems *, const char *path,
    const char *detail);
/*
 * Validates record against the contract's ServerResponse, adding its
 * problems: 0, or -errno with *cause when the contract cannot be read or
 * used (nothing can be judged then).
 */
int registry_contract_check(const json_t *record, struct registry_problems *,
    char **cause);
/* The rejected_records entry of a record at index (new). */
json_t *registry_rejected_new(const json_t *record, size_t index,
    const struct registry_problems *);
/* The limits every discovery answer carries (new). */
json_t *registry_limits(void);
void registry_contract_close(void);

/* registry-local.c: the local catalog bundled with mcpd (source "local"). */
/*
 * Reads and checks the catalog: its page (new) and its path (new), or
 * -errno with *cause.
 */
int catalog_load(json_t **ret_page, char **ret_path, char **cause);
/* Whether the record's name, a category or a capability matches query. */
bool catalog_matches(const json_t *record, const char *query);
/*
 * The names of the page's records that name means (new array, each name
 * once): the record of that full name, else, for a name without '/', each
 * whose last part is name or "server-" name (memory, server-memory).
 */
json_t *catalog_named(const json_t *page, const char *name);

/* registry.c: search, catalog, info and versions of both sources. */
enum registry_source {
	REGISTRY_OFFICIAL,
	REGISTRY_LOCAL,
	REGISTRY_ANY, /* info: official, or local when it has no such name */
};
struct registry_query {
	enum registry_source source;
	const char *search;  /* search: its words; catalog: NULL */
	json_int_t limit;    /* 1 to 100 */
	const char *cursor;  /* NULL: the first page */
	const char *name;    /* info and versions */
	const char *version; /* info: a version or "latest" */
};
/* Checks a source param (may be NULL); false after failing req. */
bool registry_source_parse(struct request *, const json_t *params,
    bool may_be_any, enum registry_source *ret);
/* Checks limit and cursor params; false after failing req. */
bool registry_page_parse(struct request *, const json_t *params,
    enum registry_source, json_int_t *ret_limit, const char **ret_cursor);
/* mcpd/registry-search and -catalog: one page; req is answered. */
void registry_list(struct request *, const struct registry_query *);
/* mcpd/registry-info: one record of one version. */
void registry_info(struct request *, const struct registry_query *);
/* mcpd/registry-versions: every version the registry lists of a name. */
void registry_versions(struct request *, const struct registry_query *);
/* Fails every request still waiting on the registry (at exit). */
void registry_close(void);

/* transport-stdio.c and the transport interface. */
struct transport_cbs {
	/* A message as text first: true when handled without parsing. */
	bool (*raw)(void *arg, const char *line, size_t len);
	void (*message)(void *arg, json_t *msg); /* msg borrowed */
	/* The request with this id will get no answer, for this reason. */
	void (*failed)(void *arg, const json_t *id, enum errors_kind,
	    const char *why);
	void (*stderr_line)(void *arg, const char *line, size_t len);
	void (*closed)(void *arg, const char *why); /* it died or ended */
	/* A stage of a start ("probing", "http-detected"...); may be NULL. */
	void (*progress)(void *arg, const char *stage, const char *message);
	/*
	 * The server's session was initialized again (a remote forgot it and
	 * answered 404): what it held of ours (subscriptions) is gone, its
	 * lists may differ. May be NULL.
	 */
	void (*renewed)(void *arg);
};
struct transport_ops {
	const char *name; /* "stdio", ... */
	int (*open)(struct transport *, char **cause);
	/*
	 * tool: the Tool a tools/call names, for per-call headers, or NULL.
	 * 1: msg cancelled a request that was still waiting, never sent; 2:
	 * ... one the server refused until authorized (held_why says why).
	 */
	int (*send)(struct transport *, const json_t *msg, const json_t *tool);
	/* Delivers what the peer already wrote to stderr (may be NULL). */
	void (*drain)(struct transport *);
	/* Ends it gracefully, calls done(arg) when nothing is left. */
	void (*close)(struct transport *, void (*done)(void *), void *arg);
	void (*free)(struct transport *);
	/* Why the request send answered 2 for waited (borrowed); may be NULL. */
	const char *(*held_why)(struct transport *);
	/*
	 * The hot path: one message as the pieces of its text (the line's
	 * newline included), written as it is; NULL where the transport
	 * needs the message itself (its headers, say). 0 or send's errors.
	 */
	int (*send_text)(struct transport *, const struct iovec *, int n);
};
struct transport {
	const struct transport_ops *ops;
	const char *name; /* the flavour spoken now ("stdio", "sse", ...) */
	const struct transport_cbs *cbs;
	void *cb_arg;
};
/*
 * transport-hold.c: what a wrapper transport (the probe, the Docker gateway
 * transport) holds of the session's handshake until its inner transport
 * first answers: the requests, sent again over a new inner transport or
 * while the inner one does not listen yet.
 */
struct transport_hold {
	json_t *held;	      /* [msg, tool] pairs sent before an answer */
	struct event *resend; /* sends them again (the owner's callback) */
	bool is_confirmed;    /* the inner transport answered: none held */
};
void transport_hold_init(struct transport_hold *,
    void (*resend)(evutil_socket_t, short, void *), void *arg);
void transport_hold_free(struct transport_hold *);
/*
 * A message the session sends, kept while unconfirmed when it is a
 * request; true when it withdrew a held request (a cancel) instead.
 */
bool transport_hold_note(struct transport_hold *, const json_t *msg,
    const json_t *tool);
/* Sends every held request again over inner. */
void transport_hold_send(const struct transport_hold *,
    struct transport *inner);
/* The inner transport answered: nothing is held or resent any more. */
void transport_hold_confirm(struct transport_hold *);
/* Not listening yet: the held requests go again in ms (once armed). */
void transport_hold_retry(struct transport_hold *, int ms);
/* No resend is due (the session closes, the transport switches). */
void transport_hold_stop(struct transport_hold *);
/*
 * transport-wrap.c: a wrapper transport (the probe, the Docker gateway
 * transport), which the session holds: it passes its inner transport's
 * callbacks (transport_wrap_cbs, with the wrapper as their argument) on
 * to the session, holding the handshake until the first answer. What
 * differs between wrappers, the hooks say.
 */
struct transport_wrap;
struct transport_wrap_hooks {
	/* Whether the inner transport is heard now (NULL: always). */
	bool (*is_heard)(const struct transport_wrap *);
	/*
	 * Whether the inner one may not listen yet (a server that starts
	 * behind HTTP): a failure before the first answer is then retried,
	 * not passed on (NULL: always).
	 */
	bool (*waits_listen)(const struct transport_wrap *);
	/* What waits, for the log ("container NAME"). */
	void (*describe)(const struct transport_wrap *, char *buf, size_t size);
	/* The first answer came (may be NULL). */
	void (*confirmed)(struct transport_wrap *);
	/* A message, before the session hears it (may be NULL). */
	void (*message)(struct transport_wrap *);
	/* A stderr line the session heard, for the wrapper too (may be NULL). */
	void (*stderr_line)(struct transport_wrap *, const char *line,
	    size_t len);
	/* The inner transport ended (the wrapper is not closing). */
	void (*closed)(struct transport_wrap *, const char *why);
};
struct transport_wrap {
	struct transport t;	    /* what the session holds: first */
	struct transport *inner;    /* the transport wrapped now, or NULL */
	struct transport_hold hold; /* the handshake, until an answer */
	const struct transport_wrap_hooks *hooks;
	int resend_ms; /* between tries while the inner one does not listen */
	bool is_closing;
	void (*done)(void *); /* a close's, told by transport_wrap_closed_now */
	void *done_arg;
};
extern const struct transport_cbs transport_wrap_cbs;
void transport_wrap_init(struct transport_wrap *,
    const struct transport_ops *ops, const char *name,
    const struct transport_wrap_hooks *hooks, int resend_ms,
    const struct transport_cbs *cbs, void *arg);
/* Frees the inner transport and the hold; a close is told nothing. */
void transport_wrap_free(struct transport_wrap *);
/* Ends it with why (the session's closed callback), once. */
void transport_wrap_fail(struct transport_wrap *, const char *text);
/* A stage of the start, to the session (not once it closes). */
void transport_wrap_progress(struct transport_wrap *, const char *stage,
    const char *text);
/* The close ended: done is told (and forgotten), unless it was freed. */
void transport_wrap_closed_now(struct transport_wrap *);
/* Keeps its own copy of the spec. */
struct transport *transport_stdio_new(const struct child_spec *,
    const struct transport_cbs *, void *arg);
struct transport *transport_http_new(const struct remote_spec *,
    const struct transport_cbs *, void *arg);

/*
 * The Docker MCP Gateway (spec->argv: docker mcp gateway run ...): at each
 * open, a loopback port and a bearer token of its own (--port, and
 * MCP_GATEWAY_AUTH_TOKEN in its environment), then Streamable HTTP to
 * http://127.0.0.1:PORT/mcp with that token. Its end is the process's.
 */
struct transport *transport_dgw_new(const struct server_spec *,
    const struct transport_cbs *, void *arg);
/* The pid of the gateway behind such a transport, or -1. */
pid_t transport_dgw_pid(const struct transport *);
/* The pid of the program behind a stdio transport, or -1. */
pid_t transport_stdio_pid(const struct transport *);

/* session.c: one MCP client session over any transport. */
struct session_reply {
	json_t *result;	       /* borrowed; NULL on failure */
	json_t *error;	       /* the server's JSON-RPC error object, or NULL */
	enum errors_kind kind; /* when result is NULL */
	const char *message;
};
typedef void session_reply_fn(void *arg, const struct session_reply *);
/*
 * A result passed on as the server's own checked JSON text; is_error: it
 * says "isError": true (found in the same scan).
 */
typedef void session_raw_fn(void *arg, const char *result, size_t len,
    bool is_error);
struct session_cbs {
	void (*ready)(void *arg, struct session *);
	/* Before ready: the handshake failed; after: the connection died. */
	void (*failed)(void *arg, struct session *, const char *why);
	void (*tools_changed)(void *arg, struct session *);
	/* Any other notification of the server (params borrowed). */
	void (*notification)(void *arg, const char *method,
	    const json_t *params);
	void (*stderr_line)(void *arg, const char *line, size_t len);
	void (*progress)(void *arg, const char *stage, const char *message);
	/*
	 * A request of the server to its client (sampling/createMessage,
	 * elicitation/create, roots/list; id and params borrowed): the owner
	 * answers it, now or later, with session_answer. NULL: refused.
	 */
	void (*request)(void *arg, struct session *, const char *method,
	    const json_t *id, const json_t *params);
};
struct session *session_new(struct transport *, const struct session_cbs *,
    void *arg, int timeout_ms);
/* A holder's reference: the memory stays until the last one goes. */
void session_ref(struct session *);
void session_unref(struct session *);
/* Opens the transport and starts the handshake; 0 or -errno with cause. */
int session_start(struct session *, char **cause);
/*
 * Marks it dead: fails every pending request with outcome-unknown (from
 * the loop), frees the transport and drops the owner's reference.
 */
void session_free(struct session *);
/*
 * Detaches callbacks, ends the transport gracefully, then drops the
 * owner's reference; done(arg) runs from the loop once it has ended.
 */
void session_close(struct session *, void (*done)(void *), void *arg);
bool session_is_ready(const struct session *);
/* The handshake failed because a policy refused it (a redirect). */
bool session_is_denied(const struct session *);
const char *session_protocol_version(const struct session *);
json_t *session_tools_peek(const struct session *);
/* Which listing made the tools peeked: a new number for each. */
uint64_t session_tools_serial(const struct session *);
/* A 2026-07-28 server answered HeaderMismatch: its tool catalog is stale. */
bool session_is_catalog_retired(const struct session *);
json_t *session_server_info_peek(const struct session *);
/* The instructions the server gave at initialize or discover, or NULL. */
const char *session_instructions_peek(const struct session *);
/* What the server said it offers (borrowed), or NULL. */
const json_t *session_capabilities_peek(const struct session *);
/*
 * Sends a request; cb is called exactly once, from the loop. params is
 * stolen. Returns the id as session_request_raw does.
 */
int64_t session_request(struct session *, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *cb, void *arg);
/*
 * The same, but a plain result may come to raw_cb as the server's text
 * (errors, and results that need a look, still come to cb). Returns the
 * request's id while it is pending, or 0 when nothing could be sent (cb
 * then fails it on a later loop turn).
 */
int64_t session_request_raw(struct session *, const char *method,
    json_t *params, int timeout_ms, session_reply_fn *cb,
    session_raw_fn *raw_cb, void *arg);
/* Whether session_request_text may be used now (a 2025 stdio session). */
bool session_takes_text(const struct session *);
/*
 * session_request_raw with params as the pieces of their JSON text, which
 * the caller vouches for (the hot path of tools/call: no tree is built,
 * nothing is encoded); only where session_takes_text says so.
 */
int64_t session_request_text(struct session *, const char *method,
    const struct iovec *params, int n, int timeout_ms, session_reply_fn *cb,
    session_raw_fn *raw_cb, void *arg);
/*
 * Sends notifications/cancelled {requestId: id, reason} to the server and
 * fails the pending request as outcome-unknown (timeout when it had not
 * been sent yet), its callback running from the loop (never inside this
 * call); -ENOENT when id is not pending.
 */
int session_cancel(struct session *, int64_t id, const char *reason);
/*
 * A 2026-07-28 input_required result to request id comes to its callback
 * as a result, for a caller that answers it (the gateway passes it on to
 * a modern client); otherwise it fails as outcome-unknown.
 */
void session_pass_input_required(struct session *, int64_t id);
/* session_cancel of every pending request. */
void session_cancel_all(struct session *, const char *reason);
/* fn(arg) runs from the loop once no request is pending (soon if none is). */
void session_when_idle(struct session *, void (*fn)(void *), void *arg);
/* Requests of s are pending (NULL: none). */
bool session_is_busy(const struct session *s);
struct transport *session_transport(const struct session *);
/* Sends msg (a response or notification) to the server; takes msg. */
void session_answer(struct session *, json_t *msg);
/* A request a server may send its client that mcpd relays to a caller. */
bool session_is_client_method(const char *method);
/*
 * Client capabilities caps (may be NULL) declare what a server's request
 * to its client needs (sampling/createMessage, elicitation/create in its
 * mode, roots/list; params borrowed). session-start.c.
 */
bool session_caps_take(const json_t *caps, const char *method,
    const json_t *params);

/* server.c: configured connections, their gates and restart policy. */
enum server_state {
	SERVER_STARTING,
	SERVER_CONNECTING,
	SERVER_READY,
	SERVER_RESTARTING,
	SERVER_STOPPING,
	SERVER_STOPPED,
	SERVER_FAILED,
	SERVER_IDLE,	   /* on demand: stopped on purpose, its lists kept */
	SERVER_WAKING,	   /* ... a start for the calls that wait for it */
	SERVER_RECOVERING, /* its connection died: its kept lists stand */
	SERVER_RESUMING,   /* ... and a start runs for it (or an upgrade's) */
	SERVER_REMOVING,   /* unloaded: only its container is left */
};
struct server_spec {
	char **argv;
	char **env; /* "K=V" from the load request */
	char *cwd;
	struct remote_spec remote; /* url (canonical) set: a remote server */
	char *transport;	   /* asked for, or NULL: inferred */
	char *image;		   /* a container: its image, tag explicit */
	char **args;		   /* ... the arguments after the image */
	char **volumes;		   /* ... -v values, passed through */
	char *network;		   /* ... --network, or NULL */
};
const char *server_state_name(enum server_state);
const char *server_mode_name(enum server_mode);
/* A holder's reference (DESIGN 10): the memory stays until the last. */
void server_ref(struct server *);
void server_unref(struct server *);
/* By id, name or container name, within one agent (NULL: any agent). */
struct server *server_find(const char *agent, const char *key);
/*
 * The same, or else the one server whose canonical endpoint (or image,
 * given without a tag) is target; NULL with *ret_names (new array) when
 * several share it.
 */
struct server *server_find_target(const char *agent, const char *target,
    json_t **ret_names);
/* agent's server called name, or NULL. */
struct server *server_find_name(const char *agent, const char *name);
/* agent's server that runs what spec says (whatever its name), or NULL. */
struct server *server_find_runs(const char *agent, enum server_mode mode,
    const struct server_spec *spec);
/*
 * "; did you mean a, b?" for the names of agent's servers nearest to
 * given (a new string), or "" (new) when none is near.
 */
char *server_did_you_mean(const char *agent, const char *given);
const char *server_id(const struct server *);
/* The serving connection's instructions (borrowed), or NULL. */
const char *server_instructions_peek(const struct server *);
/* The id of agent's server called name (new string): stable, from both. */
char *server_id_for(const char *agent, const char *name);
/* The id a new server called name gets: server_id_for's, unless taken. */
char *server_id_new(const char *agent, const char *name);
/* True when s runs mode and spec's endpoint (the same target). */
bool server_runs(const struct server *, enum server_mode,
    const struct server_spec *);
const char *server_endpoint(const struct server *);
enum server_mode server_get_mode(const struct server *);
/* Creates a server in state starting; *spec is moved into it. Returns 0. */
int server_new(const char *agent, const char *id, const char *name,
    enum server_mode, struct server_spec *spec, struct server **ret);
/*
 * Gate jobs; each answers rep (daemon/server-reply.h; NULL: no one) when
 * it ends.
 */
/*
 * row (stolen, may be NULL): saved and read back before the start, after
 * secrets (stolen: name -> value) went to the secret store. spec (moved,
 * may be NULL): what a load of a listed server asks for now; a running
 * server whose resolved values differ starts again with it.
 */
void server_load(struct server *, struct server_reply *rep, int timeout_ms,
    json_t *row, json_t *secrets, struct server_spec *spec);
/*
 * A restore of a saved row: the row is read again before the server
 * serves; done(arg, NULL or why it failed) runs from the loop.
 */
void server_restore(struct server *, struct server_reply *rep, int timeout_ms,
    void (*done)(void *arg, const char *error), void *arg);
/*
 * Stops s as unload does but keeps its saved row, marked disabled: it is
 * not started again until mcpctl enable.
 */
void server_disable(struct server *, struct server_reply *rep);
/* Renames s (its row, its tools' prefix) without stopping it. */
void server_rename(struct server *, struct server_reply *rep, const char *name);
/* True when s has a saved row. */
bool server_is_persistent(const struct server *);
void server_reload(struct server *, struct server_reply *rep, int timeout_ms);
void server_unload(struct server *, struct server_reply *rep);
/*
 * Stops every server once admitted jobs and calls in flight have ended;
 * done() when none is left.
 */
void server_stop_all(void (*done)(void *), void *arg);
/* Cancels every call in flight (upstream too): the grace is over. */
void server_cancel_calls(const char *reason);
/* The result of a load or reload. */
json_t *server_load_result(const struct server *);
/*
 * server-idle.c: whether s is started by its first call and stopped after
 * idle_stop_ms (0: never) without one; switched to always, an idle s starts.
 */
void server_idle_configure(struct server *s, bool is_on_demand,
    int idle_stop_ms);
bool server_is_on_demand(const struct server *);
/* How many servers are idle (on demand, stopped on purpose). */
size_t server_count_idle(void);
int server_idle_stop_ms(const struct server *);
/*
 * A restored on-demand server whose lists were kept stays idle (done from
 * the loop); false when it must start (then nothing was done).
 */
bool server_idle_restore(struct server *s,
    void (*done)(void *arg, const char *error), void *arg);
/* The list row. */
json_t *server_describe(const struct server *);
/* The tools with server and handle added, appended to into. */
void server_tools_append(const struct server *, json_t *into);
/* The size of a tool's definition digest as text, with its NUL. */
#define SERVER_DEFINITION_SIZE 33
/* The digest of tool's definition as s lists it now, or NULL (borrowed). */
const char *server_tool_definition(struct server *s, const char *tool);
/*
 * That of the one tool, with "definition" too (the digest of the tool as
 * listed): new, or NULL when the server lists no such tool or its
 * catalog is retired.
 */
json_t *server_tool_listed(const struct server *, const char *tool);
/*
 * Whether the tool's definition digest is definition (true when the
 * server lists no such tool: the call then says so itself).
 */
bool server_tool_is_defined_as(const struct server *, const char *tool,
    const char *definition);
/* List rows, or tools, of one agent's servers (agent NULL: all). */
json_t *server_list_rows(const char *agent);
json_t *server_list_tools(const char *agent);
/* Calls a tool; generation 0 means the current one. */
/*
 * The same for an MCP caller (the gateway), with its tools/call params
 * (borrowed; NULL: an mcpd/call caller): they go upstream as they are but
 * the name and arguments; its progressToken is mapped to one of mcpd's
 * and back; the server's log messages reach it as MCP's, at the level it
 * set; a 2026-07-28 caller gets input_required results as they are.
 */
void server_call_mcp(struct server *, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params);
/*
 * The names of agent's ready servers in scope (NULL: all) that offer
 * capability ("prompts", "resources", "completions"): a new array.
 */
json_t *server_gateway_offering(const char *agent, const json_t *scope,
    const char *capability);
/*
 * The instructions of agent's ready servers in scope (NULL: all) that
 * gave some, in order: [{server, instructions}] (new).
 */
json_t *server_gateway_instructions(const char *agent, const json_t *scope);
/* scope (NULL: all servers) names the server called name. */
bool server_scope_has(const json_t *scope, const char *name);
/*
 * The roots of agent's gateway sessions with that scope (NULL: all) may
 * have changed: notifications/roots/list_changed to each of its ready
 * servers there, so that a server that keeps its roots asks again.
 */
void server_roots_changed(const char *agent, const json_t *scope);
/*
 * An MCP client's request (prompts, resources, completion) forwarded to
 * the serving connection of agent's server name; cb runs once, from the
 * loop. params is stolen. -ENOENT (nothing sent) when it is not ready.
 */
int server_forward(const char *agent, const char *name, const char *method,
    json_t *params, session_reply_fn *cb, void *arg);
/* The tool of that name the server listed (borrowed), or NULL. */
const json_t *server_tool_peek(const struct server *, const char *tool);
/*
 * Every tool of agent's ready servers in scope (NULL: all), in order:
 * [{server, id, tool, is_held?}] (new; each tool as listed; is_held: its
 * definition is held, server-pins.c).
 */
json_t *server_gateway_catalog(const char *agent, const json_t *scope);
/*
 * What that catalog is made of, hashed (each server in scope: its id,
 * generation and the listing of its tools): while it is the same, so is
 * the catalog, and a gateway session's names for it.
 */
uint64_t server_gateway_key(const char *agent, const json_t *scope);
/*
 * What an mcpd/call caller answers during its call: the server's requests
 * it takes, as MCP client capabilities (NULL: none), and whether a
 * 2026-07-28 input_required result is its result; for its retry of such
 * a call, MCP's inputResponses and requestState; the definition it typed
 * the arguments by (a call made by another fails as tool-changed). All
 * borrowed.
 */
struct server_call_opts {
	const json_t *caps;
	bool takes_input;
	const json_t *input_responses;
	const json_t *request_state;
	/* The tool's definition digest the arguments were made by, or NULL. */
	const char *definition;
};
/* opts may be NULL: the caller answers nothing. */
void server_call(struct server *, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const struct server_call_opts *opts);
/*
 * The hot path of a call: the arguments as their JSON text (an object the
 * caller checked), sent upstream as they are where the session takes
 * text, else parsed and called as server_call (mcp_params NULL: an
 * mcpd/call, whose caller answers nothing) or server_call_mcp does.
 */
void server_call_text(struct server *, const char *tool, const char *args,
    size_t len, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params);
/*
 * A call policy_ask_hold held, approved: on as server_call_start goes
 * after the policy (decision stolen: what the audit line says).
 */
void server_call_held(struct server *, uint64_t generation, const char *tool,
    json_t *arguments, int timeout_ms, struct server_reply *rep,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decision);
/* The last lines (all when 0) and their times: a new {lines, times}. */
json_t *server_logs(const struct server *, size_t lines);
/*
 * Puts the lines saved at the last stop (<state>/logs/<id>.log) back in
 * a restored server's log, after them the line "-- mcpd restarted at
 * <time> --", and removes the file; a file that is not valid or too large
 * is ignored (with a warning, and a note in the log) and left as it is.
 */
void server_logs_restore(struct server *);
/* Ends every mcpd/logs follow, each answered with why. */
void server_logs_unfollow_all(const char *why);
/*
 * Sends the last lines, then each new one, to rep's caller as mcpd/log
 * notifications; rep is answered when following ends (unload, shutdown,
 * a client gone or too slow to read).
 */
void server_logs_follow(struct server *, struct server_reply *rep,
    size_t lines);
const char *server_name(const struct server *);
/* A remote server's authorization (borrowed), or NULL for other modes. */
struct oauth *server_auth(const struct server *);
/* It failed (for good, until reloaded): not ready, starting or stopping. */
bool server_is_failed(const struct server *);
/* argv "<docker> rm -f <every container that may exist>" (free it). */
const char **server_container_names(const char *docker);
/* Containers shutdown could not remove: [{container, error}] or NULL. */
json_t *server_not_removed_take(void);
/* How many servers there are, and (ret_ready) how many are ready. */
size_t server_count(size_t *ret_ready);

/* docker.c: the docker CLI; docker-container.c: container records and names. */
enum docker_phase {
	DOCKER_PHASE_PROBE,   /* rax-probe-*: docker run -i, stdio */
	DOCKER_PHASE_MANAGED, /* rax-mcp-*: docker create and start, HTTP */
};
/*
 * A container record's state (docker-container.c, doc/states.md): which
 * names it holds and what runs on them. What it knows of a name (this
 * daemon started it, its phase, the last start's conflict) is beside it.
 */
enum docker_state {
	DOCKER_EMPTY,	   /* no container of it may exist: nothing to remove */
	DOCKER_NAMED,	   /* its names may exist; nothing runs on them */
	DOCKER_RENAMING,   /* docker rename of old to name, or create, runs */
	DOCKER_REMOVE_DUE, /* ... and a removal waits for it to end */
	DOCKER_SWITCHING,  /* old is removed in the background; name serves */
	DOCKER_REMOVING,   /* a removal of name (and of old) runs or waits */
	DOCKER_FAILED,	   /* a removal failed: its retry is due */
	DOCKER_DEAD,	   /* its owner freed it: nothing runs, nobody hears */
};
struct docker_cmd;
struct docker_container;
extern const struct fsm docker_fsm;
/*
 * A command ended: its wait status and output, or status -1 when it did
 * not run at all (pipes, fork or exec failed) with the reason as err.
 */
typedef void docker_done_fn(void *arg, int status, const char *out,
    const char *err);
/* The same with all of stdout, which may hold NUL bytes (out_len bytes). */
typedef void docker_data_fn(void *arg, int status, const char *out,
    size_t out_len, const char *err);
/* One output line of a streaming command. */
typedef void docker_line_fn(void *arg, const char *line, size_t len,
    bool is_stderr);
/*
 * A removal ended: 0 when nothing of this daemon is left under the name
 * (why: NULL, or who holds the name instead: nothing was removed), or
 * -EIO with why (the record keeps the name).
 */
typedef void docker_removed_fn(void *arg, int err, const char *why);
const char *docker_program(void);
/* The docker CLI's environment: minimal, its own variables, extra. */
char **docker_env(char *const *extra);
/* The CLI's full path (new string); NULL and what to do when none. */
char *docker_cli_path(char **cause);
/* 0 when the docker CLI can be run; else -ENOENT and what to do. */
int docker_available(char **cause);
/* This run's id, made at its first use: the label io.mcpd.instance. */
const char *docker_instance(void);
/* An upgrade: the instance of the run before (its containers are this one's). */
void docker_instance_set(const char *);
/* Docker commands running that end by themselves (not docker logs -f). */
size_t docker_cmds_running(void);
/* Kills every docker logs -f: an upgrade's new process follows anew. */
void docker_cmds_kill_followers(void);
/*
 * Runs the docker CLI with args (args[0] is the program) and extra env
 * ("K=V", values only there). With line, output comes line by line;
 * without, done gets it whole. Never NULL: a command that cannot start
 * reports status -1 and why; done never runs before this returns.
 */
struct docker_cmd *docker_cmd_start(const char *const *args, char *const *env,
    int timeout_ms, docker_line_fn *line, docker_done_fn *done, void *arg);
/*
 * The same, collecting all of stdout for done: a command that prints more
 * than out_max bytes is killed and reported as status -1, err saying so.
 */
struct docker_cmd *docker_cmd_start_data(const char *const *args,
    int timeout_ms, size_t out_max, docker_data_fn *done, void *arg);
/* Kills the command; done is not called. NULL is fine. */
void docker_cmd_cancel(struct docker_cmd *);
/* "docker exited with status 1: <stderr>", or why it did not run (new). */
char *docker_describe_failure(int status, const char *err);
/* A record of the server's containers (one reference: the caller's). */
struct docker_container *docker_container_new(const char *agent,
    const char *server, void (*removed)(void *), void *arg);
/*
 * Its owner is done with it: nothing of it runs any more and no waiter
 * hears; its memory goes with the last reference, from the loop.
 */
void docker_container_free(struct docker_container *);
/* Whoever keeps the record across a callback (a probe) holds a reference. */
void docker_container_ref(struct docker_container *);
void docker_container_unref(struct docker_container *);
/* Its state, for the tests and the logs. */
enum docker_state docker_container_state(const struct docker_container *);
/* rax-probe-<name>-<pid> or rax-mcp-<name>-<pid> (new string). */
char *docker_container_name_for(const struct docker_container *,
    enum docker_phase);
/* Records that a container of this name may exist from now on. */
void docker_container_set(struct docker_container *, const char *name,
    enum docker_phase);
/* The container of the recorded name is this daemon's: no check to remove. */
void docker_container_created(struct docker_container *);
/* The last start failed because another container holds the name. */
void docker_container_note_conflict(struct docker_container *);
/* The error kind of a failed start: conflict after one, else unavailable. */
enum errors_kind docker_container_kind(const struct docker_container *);
/* The container that may exist, or NULL. */
const char *docker_container_name(const struct docker_container *);
/* The probe still being removed while name starts, or NULL. */
const char *docker_container_old_name(const struct docker_container *);
const char *docker_container_phase(const struct docker_container *);
/* Why its last removal failed, or NULL. */
const char *docker_container_error(const struct docker_container *);
/*
 * Removes the recorded container: docker rm -f of one this daemon
 * started, else only after docker inspect showed its labels are this
 * daemon's (owner, pid, instance, agent, server). fn is called once (at
 * once when nothing is recorded).
 */
void docker_container_remove(struct docker_container *, docker_removed_fn *,
    void *arg);
/*
 * Records name as the container that may exist now and removes the one
 * recorded before (a probe this daemon started) in the background: the
 * two exist side by side until that removal ends, and a removal or
 * shutdown waits for both. -EBUSY when the old one cannot be handed over.
 */
int docker_container_switch(struct docker_container *, const char *name,
    enum docker_phase);
/*
 * fn hears (from the loop) when the old one's removal has ended: err < 0
 * when it is still there (its removal is retried).
 */
void docker_container_wait_old(struct docker_container *, docker_removed_fn *fn,
    void *arg);
/*
 * Renames the recorded container (one this daemon started; a probe that
 * serves HTTP on a published port) to name in phase: fn hears how it
 * ended, from the loop. Until then both names are recorded, and a removal
 * waits for the rename; a failed rename keeps both names, the new one
 * removed only when its labels say it is this daemon's. -EBUSY when the
 * record is not in a state to rename.
 */
/*
 * The container follows a renamed server: the next start takes the new
 * name, a running container gets it by docker rename (fn told how that
 * ended); -ENOENT or -EBUSY (fn not called) when none is running or the
 * container is busy, and it keeps its name until it starts again.
 */
int docker_container_rebase(struct docker_container *, const char *server,
    docker_removed_fn *fn, void *arg);
int docker_container_rename(struct docker_container *, const char *name,
    enum docker_phase, docker_removed_fn *fn, void *arg);
/*
 * docker create (argv; env's values in its environment) of the recorded
 * name: fn hears how it ended, from the loop. It is never killed for a
 * removal, which waits for it instead: a docker rm -f while the engine
 * still creates finds nothing, and the container would come after it.
 * -EBUSY (fn not called) when the record is busy.
 */
int docker_container_create(struct docker_container *, char *const *argv,
    char *const *env, docker_removed_fn *fn, void *arg);
/* Forgets the waits of arg: fn will not be called for it. */
void docker_container_unwait(struct docker_container *, void *arg);

/* docker-catalog.c: Docker's MCP catalog, read from an image (doc/docker-catalog.md). */
#define DCATALOG_DEFAULT "mcp/docker-mcp-catalog"
/*
 * How a read ended: the catalog (borrowed, only during the call) {catalog,
 * image, title, skipped, servers: [definitions, each with its name]}, or
 * NULL with kind and why.
 */
typedef void dcatalog_fn(void *arg, const json_t *catalog, enum errors_kind,
    const char *why);
/* The reference read when a client names none (--docker-catalog). */
const char *dcatalog_default(void);
/*
 * Reads the catalog image ref (pulled when docker's cache lacks it): fn
 * runs once, from the loop. The last catalog is kept while its image id
 * stays the same.
 */
void dcatalog_read(const char *ref, dcatalog_fn *fn, void *arg);
void dcatalog_close(void);
/*
 * The catalog document of a `docker image save` tar: an OCI artifact's
 * JSON layer, or /catalog.json of the image's files (new, NUL-terminated).
 * 0, or a negative errno with *cause.
 */
int dcatalog_extract(const void *save, size_t len, char **ret, size_t *ret_len,
    char **cause);
/* The document's definitions, sorted by name (new), or NULL with *cause. */
json_t *dcatalog_parse(const char *text, size_t len, char **cause);

/* docker-reap.c: containers of earlier runs of this daemon. */
/* Marks the state dir: this daemon starts containers (reap them later). */
void docker_note_use(void);
/* Removes this owner's containers of other instances (async, retried). */
void docker_reap(void);
void docker_reap_close(void);

/* docker-imagemem.c: image IDs that answered HTTP (doc/containers.md). */
/*
 * 1 with the image ID image last ran as, the port its server listened
 * on in the container and its path, when that ID answered HTTP; 2 when
 * image answered stdio last; else 0 (also when the file is broken: that
 * is logged).
 */
int imagemem_lookup(const char *image, char **ret_id, int *ret_port,
    char **ret_path);
/* Remembers that image, as image ID id, answered HTTP on port and path. */
void imagemem_remember(const char *image, const char *id, int port,
    const char *path);
/* Remembers that image answered stdio (its probe needs no ports). */
void imagemem_remember_stdio(const char *image);
/* Forgets that image stands for image ID id (the tag moved). */
void imagemem_unref(const char *image, const char *id);
/* Forgets what is remembered of image ID id. */
void imagemem_forget(const char *id);

/* probe.c: a container start, stdio raced against HTTP detection. */
struct probe_target {
	const struct server_spec *spec; /* image, args, env, volumes */
	const char *agent;
	const char *server;
};
/* The transport of a container server: stdio, or HTTP once detected. */
struct transport *probe_new(const struct probe_target *,
    struct docker_container *, const struct transport_cbs *, void *arg);
/* probe-detect.c: a port number at s (up to end); 0 when there is none. */
int probe_detect_port(const char *s, const char *end);
/* Finds an HTTP endpoint in a log line: 1 with port and path (new). */
int probe_detect_http(const char *line, size_t len, int *ret_port,
    char **ret_path);
/*
 * The TCP ports of an image's .Config.ExposedPorts (docker image inspect's
 * JSON: {"8080/tcp": {}, ...} or null), at most max of them, in ports.
 */
size_t probe_detect_exposed(const char *json, int *ports, size_t max);
/* probe-argv.c: docker run -i (probe) or docker create (managed) argv. */
char **probe_argv(const struct probe_target *, const char *name,
    enum docker_phase, const int *ports, size_t nports);

/* session-era.c: the 2026-07-28 protocol era. */
#define ERA_MODERN		    "2026-07-28"
#define ERA_CLIENT_CAPABILITIES_KEY "io.modelcontextprotocol/clientCapabilities"
/* The _meta every modern request carries (new object). */
json_t *era_meta(const char *version);
/* params (stolen, may be NULL) with that _meta merged in. */
json_t *era_with_meta(json_t *params, const char *version);
/* A request's params say 2026-07-28 in _meta (params may be NULL). */
bool era_is_modern_request(const json_t *params);
bool era_lists_version(const json_t *versions, const char *version);
/* serverInfo from a discover result (borrowed), or NULL. */
json_t *era_server_info(const json_t *result);
/*
 * The HTTP headers of a modern message (MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name, Mcp-Param-*), a new object; NULL for a legacy message.
 */
json_t *era_http_headers(const json_t *msg, const json_t *tool);
/* False for a tool whose x-mcp-header annotations clients must refuse. */
bool era_tool_headers_valid(const json_t *tool, char **why);

/* server-spec.c: what a server runs or reaches. */
void spec_clear(struct server_spec *);
/*
 * out = in with $(env.NAME) (mcpd's environment) and $(secret.NAME) (the
 * secret store) resolved in argv, env values, args, volumes, the URL and
 * header values; -EINVAL with *cause naming the variable, never a value.
 */
int spec_resolve(const struct server_spec *in, struct server_spec *out,
    char **cause);
/* A deep copy with values as they are: nothing is expanded again. */
void spec_copy(struct server_spec *dst, const struct server_spec *src);
/* A digest of everything a resolved spec runs with (values included). */
#define SPEC_DIGEST_LEN 32
void spec_digest(const struct server_spec *resolved,
    unsigned char out[SPEC_DIGEST_LEN]);
/* The canonical URL, or the command line (new string). */
char *spec_endpoint(const struct server_spec *);
const char *spec_transport_name(const struct server_spec *);

/* server-generation.c: generations that never repeat across restarts. */
/* Reads the ceiling an earlier run left and reserves this run's block. */
int generation_init(const char *state_dir, char **cause);
/* The first generation a connection of this run gets. */
uint64_t generation_first(void);
/* The generation after current (0: none yet); saves a new ceiling first. */
uint64_t generation_after(uint64_t current);

/* httpd-tokens.c: the HTTP front's bearer tokens, one per agent and profile. */
/*
 * Reads <state>/http-tokens.json and http-profile-tokens.json when there
 * are (a bad one: -EINVAL).
 */
int tokens_open(const char *state_dir, char **cause);
/*
 * The id of agent's token (bound to profile, if not NULL): "tok-" and hex
 * of BLAKE2b of the token, which says which token without giving it
 * ("none" without one; static).
 */
const char *tokens_id(const char *agent, const char *profile);
void tokens_close(void);
/* The agent whose token this is (borrowed), or NULL; *ret_profile its bound profile or NULL. */
const char *tokens_agent_of(const char *token, const char **ret_profile);
/*
 * agent's token (bound to profile when not NULL; borrowed), made and
 * saved when it has none: 1 then, else 0.
 */
int tokens_get(const char *agent, const char *profile, const char **ret,
    char **cause);
int tokens_revoke(const char *agent, const char *profile, bool *ret_revoked,
    char **cause);
/* Whether a token of agent is bound to profile. */
bool tokens_has_profile(const char *agent, const char *profile);

/* state-lock.c: one daemon per state dir. */
/*
 * Takes the exclusive lock of dir (mcpd.lock, holding the pid and the
 * socket_path it listens on) for the daemon's life: the descriptor, or
 * -EBUSY with *cause naming the holder and its socket.
 */
int lock_state_dir(const char *dir, const char *socket_path, char **cause);

/* state-identity.c: the daemon's did:key and derived identities. */
int identity_load(const char *state_dir, char **cause);
const char *identity_did(void);
/* The did:key of an agent's sub-identity (new string). */
char *identity_agent_did(const char *agent);
/* A short stable id for (agent, mode, canonical target) (new string). */
char *identity_connection_id(const char *agent, const char *mode,
    const char *target, size_t target_len);

/* server-loadspec.c: what a load's params ask for, checked without a request. */
#define LOADSPEC_GATEWAY_NAME "docker-gateway" /* a gateway's default name */
struct loadspec {
	enum server_mode mode;
	char *name; /* given, or derived from the target */
	struct server_spec spec;
	bool is_on_demand; /* on_demand: started by the first call */
	int idle_stop_ms;  /* idle_stop_ms: -1 when not given */
};
struct loadspec_error {
	const char *field; /* the params field at fault */
	char *why;
};
/* Fills ls (cleared first); false with err (clear it) when params are bad. */
bool loadspec_parse(const json_t *params, struct loadspec *,
    struct loadspec_error *);
void loadspec_clear(struct loadspec *);
#define LOADSPEC_IDLE_STOP_MAX_MS (7 * 24 * 3600 * 1000) /* a week */
#define LOADSPEC_IDLE_STOP_WHY \
	"idle_stop_ms is a number of milliseconds from 0 (never) to 604800000 (a week)"
/* v is an idle_stop_ms within its bounds. */
bool loadspec_idle_stop_ok(const json_t *v);
void loadspec_error_clear(struct loadspec_error *);

/* server-enable.c: persistence of enabled servers (DESIGN 6 and 10). */
/*
 * The row a persistent load saves: its params as given (references stay
 * references), literal env and header values moved to secrets (name ->
 * value) as $(secret.mcpd.<id>.*) references.
 */
json_t *enable_row_new(const char *id, const char *name, enum server_mode,
    const json_t *params, json_t *secrets);
/* The agent's saved row whose id or name is target (borrowed), or NULL. */
const json_t *enable_row_find(const char *agent, const char *target);
/*
 * Saves secrets, then the row, written and read back; nothing is written
 * when both are saved already. 0, or negative errno with *cause.
 */
int enable_save(const char *agent, const json_t *row, const json_t *secrets,
    char **cause);
/* Removes the row of (agent, id) and the secrets it made; as store_remove. */
int enable_remove(const char *agent, const char *id, bool *ret_removed,
    char **cause);
/* The saved servers whose rows name $(secret.NAME): [{agent, name}] (new). */
json_t *enable_rows_using(const char *secret);
/*
 * A gateway's saved servers, read from the file on disk: 1 when they are
 * want, 0 when not, a negative errno with *cause when it cannot be read;
 * *ret_saved (new, on 0 and 1) says what is saved ("a, b", or nothing).
 */
int enable_gateway_saved(const char *agent, const char *id, const json_t *want,
    char **ret_saved, char **cause);
/* 1 when the row is still saved as read at start; as store_recheck. */
int enable_recheck(const char *agent, const char *id, char **cause);
/* Loads every saved row again through its server's gate (at start). */
void enable_restore(void);
/* True when row is marked disabled: saved, but not started. */
bool enable_row_is_disabled(const json_t *row);
/* Marks the row of (agent, id) disabled or not; as store_put. */
int enable_set_disabled(const char *agent, const char *id, bool is_disabled,
    char **cause);
/* Sets the params of the row of (agent, id) to changes' (null: removed). */
int enable_set_params(const char *agent, const char *id, const json_t *changes,
    char **cause);
/* Gives the row of (agent, id) a new name (its id stays); as store_put. */
int enable_rename(const char *agent, const char *id, const char *name,
    char **cause);
/* The list rows (state "disabled") of agent's disabled rows (NULL: all). */
json_t *enable_disabled_rows(const char *agent);
/* The names of agent's disabled rows (NULL: all), a new array. */
json_t *enable_disabled_names(const char *agent);
/*
 * Starts the server of a saved row as a restore does, answering rep and
 * done (either may be NULL); -EINVAL with *cause when the row cannot be.
 */
int enable_start(const char *agent, const json_t *row, struct server_reply *rep,
    int timeout_ms, void (*done)(void *arg, const char *error), void *arg,
    char **cause);

/* mcpd-notify.c: sd_notify, socket activation and the watchdog. */
int notify_listen_fd(void);
void notify_ready(void);
/* An upgrade in place begins (READY=1 follows from the new binary). */
void notify_reloading(void);
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_stopping(void);
void notify_watchdog_start(void);

/* state-store.c: the enablement store (enabled.json). */
struct store;
/*
 * Opens the store in dir: reads enabled.json if it exists (never rewrites
 * it at open). Returns 0 and a store even when the file is unusable: then
 * store_error() says why and every change fails with that reason. Returns
 * 0.
 */
int store_open(const char *dir, struct store **ret);
/* The same for rows kept in another file of dir (profiles.json). */
int store_open_file(const char *dir, const char *file, struct store **ret);
void store_free(struct store *s);
/* Why the store refuses changes (corrupt, newer, unreadable), or NULL. */
const char *store_error(const struct store *s);
/* All rows of every agent: an object agent -> array of rows (borrowed). */
const json_t *store_agents_peek(const struct store *s);
/* The saved row of (agent, id), or NULL (borrowed). */
const json_t *store_row_peek(const struct store *s, const char *agent,
    const char *id);
/*
 * Replaces the row of (agent, row.id) or appends it; writes, fsyncs,
 * renames, fsyncs the dir, reads back and compares; 0 only when the file
 * on disk holds exactly the intended content. On failure the in-memory
 * rows are unchanged and *cause says what failed.
 */
int store_put(struct store *s, const char *agent, const json_t *row,
    char **cause);
/* Removes (agent, id); *ret_removed says whether a row was there; as put. */
int store_remove(struct store *s, const char *agent, const char *id,
    bool *ret_removed, char **cause);
/*
 * Reads the file again from disk (not the cache): 1 if (agent, id) is saved
 * there with the same content, 0 if not, negative errno with *cause on a
 * read or parse failure. Used before restored tools become callable.
 */
int store_recheck(const struct store *s, const char *agent, const char *id,
    char **cause);
/*
 * The row of (agent, id) as the file on disk holds it now (not the
 * cache): 0 and *ret (new; NULL when there is none), or a negative errno
 * with *cause.
 */
int store_read_row(const struct store *s, const char *agent, const char *id,
    json_t **ret, char **cause);

/*
 * server-pins.c: pinned tool definitions (DESIGN 14), in pins.json: a
 * server's tools as first seen; a changed or new one is held (not listed,
 * tool-held on call) until the user accepts it.
 */
/* Opens the pins of state_dir (an unusable file is logged: it holds all). */
int server_pins_open(const char *state_dir);
void server_pins_close(void);
/* Bumped by every accept and forget: catalogs made before are made again. */
uint64_t server_pins_generation(void);
/* Pins the tools of s at their first sight; --trust-updates takes changes. */
void server_pins_observe(struct server *s);
/*
 * The next tools list of s is pinned as it is: a load changed its
 * settings (environment, a gateway's servers), which the user asked for.
 */
void server_pins_retake(struct server *s);
/* Whether tool of s is held (a lookup, made once per tools list). */
bool server_pins_is_held(const struct server *s, const char *tool);
/* Whether tool of s may be called; else req fails with tool-held. */
bool server_pins_call_ok(const struct server *s, const char *tool,
    struct server_reply *rep);
/* Removes the entries a catalog marks is_held. */
void server_pins_drop_held(json_t *catalog);
/* The held tools of s (NULL: of every server of agent), each with what changed (new array). */
json_t *server_pins_changes(const char *agent, const struct server *s);
/* How many tools of every agent's servers are held now (mcpd/status). */
size_t server_pins_held_count(void);
/*
 * Pins the definitions s lists now of its held tool (NULL: every held
 * one), saved and read back: 0 and *ret_accepted (new, the names),
 * -ENOENT when tool is not held, or a negative errno with *cause.
 */
int server_pins_accept(struct server *s, const char *tool,
    json_t **ret_accepted, char **cause);
/* Forgets the pins of s (unloaded): a later load is a first sight. */
void server_pins_forget(struct server *s);

/* gateway-profile.c: named views of an agent's tools (DESIGN 13), in profiles.json. */
#define PROFILE_LIST_MAX 256 /* entries of one list of a profile */
/* Opens the profile rows of state_dir (as store_open_file: 0). */
int profile_open(const char *state_dir);
void profile_close(void);
/* Why changes to the profiles are refused (corrupt file ...), or NULL. */
const char *profile_store_error(void);
/* Bumped by every change: views made before it are made again. */
uint64_t profile_generation(void);
/* The row of agent's profile name, or NULL (borrowed). */
const json_t *profile_find(const char *agent, const char *name);
/* The agent's default profile, or NULL (borrowed). */
const char *profile_default(const char *agent);
/* The profile of a view: the one given, else the agent's default. */
const char *profile_effective(const char *agent, const char *given);
/* The agent's profile names, in the order made (new array). */
json_t *profile_names(const char *agent);
/* "; did you mean A, B?" for an unknown profile name, or "" (new). */
char *profile_did_you_mean(const char *agent, const char *given);
/* Saves (and reads back) the row; its sessions get list_changed. */
int profile_put(const char *agent, const json_t *row, char **cause);
/* Removes profile name of agent, as profile_put. */
int profile_remove(const char *agent, const char *name, char **cause);
/* Makes name (NULL: none) the agent's default profile, as profile_put. */
int profile_set_default(const char *agent, const char *name, char **cause);
/* Whether the profile's server list (empty: all) holds server. */
bool profile_has_server(const json_t *row, const char *server);
/*
 * Whether the view of row shows tool of server: its server is listed, a
 * --tool glob (if any) matches server__tool (or tool, in a one-server
 * view) and no --exclude-tool glob does.
 */
bool profile_allows(const json_t *row, const char *server, const char *tool,
    bool is_one_server);
/* The mcpctl command that adds tool of server to profile name (new). */
char *profile_hint(const char *agent, const char *name, const json_t *row,
    const char *server, const char *tool);
/*
 * Applies params (lists servers, tools, exclude_tools, pins; budget;
 * clear: names of those to drop) to row, after checking all of them:
 * -EINVAL with *cause (a bad glob says its column) changes nothing.
 */
int profile_row_edit(json_t *row, const json_t *params, char **cause);
/* mcpctl's option for a row key ("tools" -> "--tool"), or NULL. */
const char *profile_option_of(const char *key);

/* policy.c: each agent's allow/deny/ask rules (DESIGN 14, doc/policy.md), in policy.json. */
/* Opens the policy rows of state_dir (as store_open_file: 0). */
int policy_open(const char *state_dir);
void policy_close(void);
/* Why changes to the policy are refused (corrupt file ...), or NULL. */
const char *policy_store_error(void);
/* Bumped by every change: decisions made before it are made again. */
uint64_t policy_generation(void);
/* The agent's rules in order, or NULL for none (borrowed). */
const json_t *policy_rules(const char *agent);
/* The agent's default effect: "allow" unless changed (borrowed). */
const char *policy_default(const char *agent);
/* The agent's approvals for always: [{server, tool, definition}] or NULL. */
const json_t *policy_always(const char *agent);
/* Approves tool of server for always while digest defines it (saved). */
int policy_always_add(const char *agent, const char *server, const char *tool,
    const char *digest, char **cause);
/* Forgets the approvals for always of tool name (SERVER__TOOL): *ret_n. */
int policy_always_forget(const char *agent, const char *name, size_t *ret_n,
    char **cause);
/* The agents that have rules or a default of their own (new array). */
json_t *policy_agents(void);
/*
 * Saves (and reads back) agent's rules and default; profile (or NULL: all
 * of the agent's) says whose sessions get list_changed. 0 or -errno with
 * *cause; nothing changes on failure.
 */
int policy_save(const char *agent, const json_t *rules, const char *def,
    const char *profile, char **cause);
/*
 * The decision on a call of tool (its definition) of server by agent in a
 * session of profile (NULL: none), as the audit log writes it: {"rule":
 * N or null, "by": "rule-deny" ..., "text"?} (new).
 */
json_t *policy_decide(const char *agent, const char *profile,
    const char *server, const json_t *tool);
/* Whether a decision lets the call go. */
bool policy_is_allow(const json_t *decision);
/* Whether who's session lists the catalog entry e (denied: not listed). */
bool policy_lists(const struct call_who *who, const json_t *e);
/* Removes from a catalog (entries {server, tool}) what agent may not call. */
void policy_filter(json_t *all, const char *agent, const char *profile);
/* The error text of a denial of tool name to agent (new). */
char *policy_denial(const char *agent, const char *name,
    const json_t *decision);
/* What a call may do now: go, fail (req failed), or wait for an answer. */
enum policy_verdict {
	POLICY_GO,
	POLICY_REFUSED,
	POLICY_ASK,
};
/*
 * The verdict on who's call of tool of s (a lookup once decided): GO or
 * ASK with its decision in *ret_decision (new), or REFUSED after rep
 * failed (denied) and its audit line was written.
 */
enum policy_verdict policy_call_check(const struct call_who *who,
    struct server_reply *rep, struct server *s, const char *tool,
    json_t **ret_decision);
/* Writes the audit line of who's call of tool of s, denied by decision. */
void policy_audit_denied(const struct call_who *who, struct server *s,
    const char *tool, const json_t *decision);

/* policy-ask.c: calls an ask rule holds until approved, denied or timed out. */
/*
 * Holds rep's call (copies of what server_call_start takes) with the ask
 * rule's decision (stolen) until mcpd/approve or mcpd/deny answers it, or
 * --approval-timeout passes; a caller that goes ends it.
 */
void policy_ask_hold(struct server_reply *rep, struct server *s,
    uint64_t generation, const char *tool, json_t *arguments, int timeout_ms,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decision);
/* The asks waiting (of agent, or all when NULL), oldest first (new). */
json_t *policy_ask_list(const char *agent);
/* How an ask is answered. */
enum policy_ask_scope {
	POLICY_ASK_DENY,
	POLICY_ASK_ONCE,
	POLICY_ASK_SESSION, /* its gateway session's calls of the tool */
	POLICY_ASK_ALWAYS,  /* saved, while the definition stays the same */
};
/*
 * Answers the ask id (its call goes on or fails on the next loop turn)
 * with *ret {id, agent, server, tool, approved, scope} (new): 0, or
 * -ENOENT when none waits, -EINVAL for a session approval of a call made
 * in no gateway session, -errno when an always approval cannot be saved,
 * with *cause; the ask then still waits.
 */
int policy_ask_answer(json_int_t id, enum policy_ask_scope scope, json_t **ret,
    char **cause);
/* Whether gw's session approved tool of s, as digest defines it. */
bool policy_ask_session_has(const struct gateway *gw, const struct server *s,
    const char *tool, const char *digest);
/* Forgets gw's session approvals: the session ends. */
void policy_ask_session_end(const struct gateway *gw);
/* mcpd stops: every held call fails unsent (from the loop). */
void policy_ask_stop(void);

/*
 * gateway-project.c: the project files (.mcpd.json) the user trusted, each by its
 * path and the BLAKE2b digest of its bytes (projects.json, as profiles).
 */
int project_open(const char *state_dir);
void project_close(void);
/* The hex BLAKE2b-256 digest of text (new). */
char *project_digest(const char *text, size_t len);
/* The digest path was trusted with, or NULL (borrowed). */
const char *project_trusted_digest(const char *path);
/* Trusts path as digest says (saved, read back); 0 or -errno, *cause. */
int project_trust(const char *path, const char *digest, char **cause);
/* Forgets path's trust; *ret_removed says whether it was trusted. */
int project_untrust(const char *path, bool *ret_removed, char **cause);
/* [{id: path, digest}] of every trusted project file (new). */
json_t *project_list(void);
/* audit.c: the audit log's records (doc/policy.md, DESIGN 14). */
#define AUDIT_LINE_MAX 65536 /* a line's bytes, newline included */
struct audit_call;
/*
 * Who makes a call, as the audit log and the policy take it: values of the
 * caller's, borrowed, read when the call is checked or recorded (the
 * caller's layer fills them: control_call_who, a reply's who).
 */
struct call_who {
	const char *agent;    /* "default" once the caller's client went */
	const char *profile;  /* the profile its connection chose, or NULL */
	const json_t *client; /* the audit log's client field, or NULL */
	const void *session;  /* its gateway session (an identity), or NULL */
};
/* How a call ended: its outcome, error (code 0: none), result's bytes. */
struct audit_end {
	const char *outcome; /* ok, tool-error, error, outcome-unknown ... */
	int code;
	const char *kind; /* mcpd's error kind, or NULL */
	size_t bytes_out;
};
/*
 * The record of a call by who, begun now (NULL when the log is off): the
 * tool's definition digest (or NULL) and its arguments (or NULL),
 * digested, and kept masked with --audit-arguments.
 */
struct audit_call *audit_call_new(const struct call_who *who,
    const char *method, const char *server, const char *tool,
    const char *definition, const json_t *args);
/* The same with the arguments as the client's JSON text. */
struct audit_call *audit_call_new_text(const struct call_who *who,
    const char *method, const char *server, const char *tool,
    const char *definition, const char *args, size_t len);
/*
 * With --audit-required, the "admitted" line, written before the call is
 * sent: -errno when it cannot be, and the call must then be refused.
 */
int audit_call_admit(struct audit_call *);
/*
 * The same, but when it cannot be, ac is freed and the refusal of the
 * call to server is returned (new text: the caller fails with
 * ERRORS_STORAGE); NULL when the call may go.
 */
char *audit_admit(struct audit_call *ac, const char *server);
/* The call's line with how it ended; ac is freed (may be NULL). */
void audit_call_end(struct audit_call *, const struct audit_end *);
/*
 * The end of ac (NULL: no record) by a session's reply: a parsed result
 * (isError: tool-error), the server's error, or mcpd's (outcome-unknown).
 */
void audit_call_end_reply(struct audit_call *ac, const struct session_reply *r);
void audit_call_free(struct audit_call *);
/* The policy decision the record says (stolen; NULL: the default allow). */
void audit_call_set_decision(struct audit_call *, json_t *decision);
/* A call refused before it was sent: code, or kind's (ERRORS_KIND_COUNT: none). */
void audit_refused(const struct call_who *who, const char *method,
    const char *server, const char *tool, int code, enum errors_kind kind);
/* What the journal's fields take of a record (borrowed). */
const char *audit_call_agent(const struct audit_call *);
const char *audit_call_server(const struct audit_call *);
const char *audit_call_tool(const struct audit_call *);
const char *audit_call_time(const struct audit_call *);
/* A socket peer's client field: {pid, exe} (exe null when unknown). */
json_t *audit_who_peer(pid_t pid);
/* Drops the texts of clients and decisions kept for the next records. */
void audit_kept_forget(void);
/* audit-file.c: audit.jsonl, rotated by size, 0600; and the journal. */
void audit_open(const char *state_dir, bool to_journal);
void audit_close(void);
bool audit_is_on(void);
/* One line (newline included) in one write(2); -errno when it failed. */
int audit_file_write(const char *line, size_t len, const struct audit_call *,
    const struct audit_end *);
/* mcpd/status's audit object. */
json_t *audit_status(void);
/* Why the log cannot be written now, or NULL when it can. */
const char *audit_failure(void);

/* mcpd-journal.c: the journal as the log's sink (log_init). */
void log_journal(int priority, const char *server, const char *msg);

/* state-secrets.c: the encrypted secret store. */
struct secrets;
/* sodium_malloc (guarded memory for secrets) that cannot fail. */
void *xsodium_malloc(size_t);
/*
 * Opens the store at store_path (created by the first set) with the key of
 * the credential $CREDENTIALS_DIRECTORY/mcpd-secrets-key when there is one
 * (32 raw bytes, or 64 hex digits and an optional newline), else of key_path
 * (created 0600 with a random key on first use, its directory 0700; refused
 * unless it is ours and closed to group and other). A wrong key or a damaged
 * file fails with a cause that names the file but no secret.
 */
int secrets_open(const char *store_path, const char *key_path,
    struct secrets **ret, char **cause);
/* Wipes and frees every value. */
void secrets_free(struct secrets *);
/*
 * Sets name to value (len bytes, no NUL, at most 64 KiB): rewrites the file
 * atomically, then changes the store in memory. -EINVAL for a refused name
 * or value, -EFBIG past 16 MiB in all, other negative errnos for storage.
 */
int secrets_set(struct secrets *, const char *name, const char *value,
    size_t len, char **cause);
/* Removes name if it is there; *ret_removed (may be NULL) says whether. */
int secrets_remove(struct secrets *, const char *name, bool *ret_removed,
    char **cause);
/* The value (NUL-terminated, borrowed until the next set, remove or free). */
const char *secrets_get(const struct secrets *, const char *name);
/* The names only, sorted (new array of strings). */
json_t *secrets_names(const struct secrets *);
/* Where the key came from: "credential" or the key file's path (borrowed). */
const char *secrets_key_source(const struct secrets *);

/*
 * Upgrade in place (daemon/upgrade*.c, doc/lifecycle.md): mcpd drains,
 * writes its state (versioned JSON) to a memory file, keeps the
 * descriptors it names open across exec of the new binary, which adopts
 * them; a new binary that cannot is exec'd back into the old one.
 */
#define UPGRADE_STATE_VERSION 1
/* main's argv, which the new binary is given again. */
void upgrade_init(char **argv);
/* mcpd/upgrade: to binary (NULL: the running one's path, as on disk now). */
void upgrade_start(struct request *, const char *binary);
/* MCPD_UPGRADE_CHECK in the environment: answers the check and exits. */
void upgrade_check_mode(void);
/* The state handed over by the binary before, or NULL (a plain start). */
const json_t *upgrade_state(void);
/* Adopts the servers, clients and sessions of the state; then answers. */
void upgrade_adopt(void);
/* Whether an upgrade is draining: clients are not read meanwhile. */
bool upgrade_is_draining(void);
/* upgrade-keep.c: every descriptor from 3 up closes at an exec again. */
void upgrade_fds_close_on_exec(void);
/* No descriptor is marked kept. */
void upgrade_fds_forget(void);
/* The marked ones lose FD_CLOEXEC (true) or get it back (false). */
void upgrade_fds_inherit(bool is_inherited);
/* Marks fd to be kept open across the exec (it stays in the state). */
int upgrade_keep_fd(int fd);
/* An evbuffer's bytes as base64 (what was read and not yet handled). */
json_t *upgrade_bytes_save(struct evbuffer *);
/* Puts saved bytes back in front of buf. */
void upgrade_bytes_restore(struct evbuffer *, const json_t *);
/* mcpd.c: the state lock's descriptor. */
extern int mcpd_lock_fd;

/* control-upgrade.c */
/* Stops (true) or resumes (false) reading clients and accepting. */
void control_upgrade_hold(bool hold);
/* Whether the request came on the control socket (not over HTTP). */
bool control_request_on_socket(const struct request *);
/* Why the control side is not quiet yet (a static text), or NULL. */
const char *control_upgrade_busy(const struct request *upgrade);
/* The listener and every socket client, with its gateway session. */
json_t *control_upgrade_save(const struct request *upgrade);
/* One client's state (hello and gateway session); fds are not in it. */
json_t *control_client_save(struct client *);
void control_client_restore(struct client *, const json_t *);
/* The scope a saved client had (NULL: every server). */
const json_t *control_client_saved_scope(const json_t *saved);
/* Takes the saved clients back; the upgrade request is returned. */
struct request *control_upgrade_adopt(const json_t *state);
int control_upgrade_listen_fd(void);

/* server-upgrade.c */
/* Why the servers are not quiet yet (a static text), or NULL. */
const char *server_upgrade_busy(void);
json_t *server_upgrade_save(void);
/* not_ready: the names of the servers that did not come back (borrowed). */
typedef void server_adopted_fn(void *arg, const json_t *not_ready);
/* Makes the servers of the state; done once each is ready again, or not. */
void server_upgrade_adopt(const json_t *servers, server_adopted_fn *done,
    void *arg);

/* transport-stdio.c and session-start.c, for an upgrade */
/* The child's process and pipes (kept across the exec). */
json_t *transport_stdio_save(struct transport *);
struct transport *transport_stdio_adopt(const json_t *);
/* A Streamable HTTP session's id and version (NULL: it cannot go on). */
json_t *transport_http_save(struct transport *);
/* The same session on a new connection (opened; NULL and *cause if not). */
struct transport *transport_http_adopt(const struct remote_spec *,
    const json_t *saved, const struct transport_cbs *, void *arg, char **cause);
/* probe-http.c: a container's serving connection and its name. */
json_t *probe_save(struct transport *);
/* The container of before, adopted by its name (NULL and *cause if not). */
struct transport *probe_adopt(const struct probe_target *,
    struct docker_container *, const json_t *saved, char **cause);
/* What the handshake agreed, and the protocol state kept. */
json_t *session_save(const struct session *);
/* A session over an adopted transport: it lists again, as at a start. */
void session_adopt(struct session *, const json_t *);

#endif
