/* SPDX-License-Identifier: ISC */
/* mcpctl's one internal header, one section per file. */
#ifndef MCPCTL_H
#define MCPCTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "projectfile.h"

#include "nearest.h"

/* Exit statuses, as mcpctl(1) documents them. */
enum mcpctl_exit {
	MCPCTL_EXIT_OK = 0,
	MCPCTL_EXIT_ERROR = 1,	     /* the daemon answered with an error */
	MCPCTL_EXIT_USAGE = 2,	     /* bad flags or arguments */
	MCPCTL_EXIT_UNREACHABLE = 3, /* no daemon, or it hung up on us */
	MCPCTL_EXIT_UNKNOWN = 4,    /* outcome-unknown: the call may have run */
	MCPCTL_EXIT_TOOL_ERROR = 5, /* the tool answered isError: true */
};

/* Longest answer line accepted from the daemon. */
#define MCPCTL_MAX_RESPONSE ((size_t)256 << 20)

/* mcpctl.c: main, global options, the command table, requests. */
struct conn;
struct mcpctl {
	const char *socket_path;
	const char *agent; /* sent with mcpd/hello first, or NULL */
	bool is_json;
	/* Whether a socket that does not answer makes mcpctl start mcpd. */
	bool is_autostart;
	struct conn *conn; /* opened by the first request */
};
struct mcpctl_cmd {
	const char *name;
	const char *synopsis; /* the arguments after the name */
	const char *summary;  /* one line for `mcpctl --help` */
	const char *help; /* option lines for `mcpctl CMD --help`, or NULL */
	int (*exec)(struct mcpctl *, const struct mcpctl_cmd *, int argc,
	    char **argv);
	const char *alias; /* another name (ls, rm), or NULL */
	/* Its options, so that a global one is told from an option's value. */
	const struct option *options;
	/*
	 * Whether a word that is no option starts what belongs to someone
	 * else (load's CMD): no global option is looked for after it.
	 */
	bool (*is_tail)(const char *word);
};
/* getopt_long on a command's argv (argv[0] is the command name). */
int mcpctl_getopt(int argc, char **argv, const char *optstring,
    const struct option *);
/* The command named name (or by its alias), or NULL. */
const struct mcpctl_cmd *mcpctl_find(const char *name);
/* "unknown command", with the nearest one (2 edits at most); returns 2. */
int mcpctl_unknown_command(const char *name);
/* Prints the command's usage on stdout; returns 0. */
int mcpctl_help(const struct mcpctl_cmd *);
/* Prints "mcpctl: CMD: reason" and where to look; returns 2. */
int mcpctl_usage(const struct mcpctl_cmd *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Explains getopt's '?' or ':' answer c; returns 2. */
int mcpctl_bad_option(const struct mcpctl_cmd *, int c, char **argv);
/* What mcpctl_positional says when a command's TARGET is missing. */
#define MCPCTL_TARGET "TARGET (a name or id; see 'mcpctl list')"
/*
 * Checks that min to max positional arguments follow the options; 0, or 2
 * after saying what is missing or extra.
 */
int mcpctl_positional(const struct mcpctl_cmd *, int argc, char **argv, int min,
    int max, const char *missing);
/* Options of a command with none but --help: -1 to go on, or the status. */
int mcpctl_parse_plain(const struct mcpctl_cmd *, int argc, char **argv);
/* --timeout and --help, what mcpctl_parse_target reads. */
extern const struct option mcpctl_target_options[];
/*
 * Options and operand of a command that takes "[--timeout MS] TARGET"
 * (--timeout only when takes_timeout): -1 to go on with *ret_params
 * {target, timeout_ms?} (new), or the status (--help, a usage error).
 */
int mcpctl_parse_target(const struct mcpctl_cmd *, int argc, char **argv,
    bool takes_timeout, json_t **ret_params);
/* Checks a server or agent name (what says which); 0 or 2. */
int mcpctl_check_name(const struct mcpctl_cmd *, const char *what,
    const char *name);
/* Parses option opt's value, a positive number of unit, into *ret; 0 or 2. */
#define MCPCTL_DURATION_MAX_MS (7LL * 24 * 3600 * 1000) /* a week */
/* DURATION (500ms, 30s, 10m, 2h; 0 or never: 0) in ms; else usage. */
int mcpctl_parse_duration(const struct mcpctl_cmd *, const char *opt,
    const char *s, json_int_t *ret_ms);
int mcpctl_parse_positive(const struct mcpctl_cmd *, const char *opt,
    const char *s, const char *unit, json_int_t *ret);
/*
 * Sends one request (params stolen) and waits for its answer. Returns 0
 * with the result in *ret_result (the caller's), or the exit status after
 * the failure has been printed.
 */
int mcpctl_request(struct mcpctl *, const char *method, json_t *params,
    json_t **ret_result);
/*
 * The same, but an error of the daemon is not printed: it is in
 * *ret_error (the caller's) with MCPCTL_EXIT_ERROR returned.
 */
int mcpctl_request_error(struct mcpctl *, const char *method, json_t *params,
    json_t **ret_result, json_t **ret_error);
/* Prints a daemon's error object; the exit status it makes. */
int mcpctl_error(const struct mcpctl *, const json_t *error);
/*
 * mcpctl_request, then prints the result: --json as one line, else with
 * human(result). Returns the exit status.
 */
int mcpctl_run(struct mcpctl *, const char *method, json_t *params,
    void (*human)(const json_t *result));

/* conn.c: one blocking connection to the daemon's control socket. */
/* How long mcpd may stay silent before mcpctl asks, then gives up. */
#define CONN_TIMEOUT_DEFAULT_MS 30000
/*
 * Sets that for every connection: ms, or 0 for no limit. A request that
 * gets no message for ms makes conn_call send mcpd/list on the same
 * connection; when that gets none within ms either, conn_call fails with
 * -ETIMEDOUT. Also the limit of a connect to a full backlog.
 */
void conn_set_timeout(int ms);
int conn_get_timeout(void);
/* Connects to path; 0 and *ret, or a negative errno. */
int conn_open(const char *path, struct conn **ret);
void conn_free(struct conn *);
/*
 * Sends a request (params stolen) and reads until its response. Returns 0
 * with the whole response message in *ret_msg; -EMSGSIZE or -EBADMSG when
 * the daemon sent something unusable; another negative errno when the
 * connection broke. *cause says why on failure (the caller frees it).
 */
int conn_call(struct conn *, const char *method, json_t *params,
    json_t **ret_msg, char **cause);
/* A notification (params borrowed, may be NULL) while request id waits. */
typedef void (*conn_notify_fn)(void *arg, json_int_t id, const char *method,
    const json_t *params);
/*
 * Has conn_call pass each notification that arrives before the answer to
 * fn, on every connection (mcpctl has one); NULL skips them, the default.
 */
void conn_set_notify(conn_notify_fn fn, void *arg);
/*
 * A request of mcpd's while request id waits (a server's, relayed):
 * returns its result (new), or NULL with *ret_error, a JSON-RPC error
 * object (new).
 */
typedef json_t *(*conn_ask_fn)(void *arg, json_int_t id, const char *method,
    const json_t *params, json_t **ret_error);
/*
 * Has conn_call answer each such request with fn, on every connection;
 * NULL answers every one with an error, the default.
 */
void conn_set_ask(conn_ask_fn fn, void *arg);

/* The socket's file descriptor, owned by the connection. */
int conn_fd(const struct conn *);
/*
 * The next request carries these descriptors (SCM_RIGHTS, at most 2),
 * which stay open here.
 */
void conn_pass_fds(struct conn *, const int *fds, int n);
/*
 * What the connection read past the answers conn_call returned (borrowed):
 * a caller that goes on with the bare socket takes it from there.
 */
struct evbuffer *conn_input(struct conn *);

/* autostart.c: mcpd -d started when the socket does not answer. */
/* Whether MCPD_NO_AUTOSTART (anything but empty or 0) turns it off. */
bool autostart_is_disabled(void);
/*
 * Starts mcpd (next to mcpctl, else on PATH) detached, with -s
 * socket_path and its stderr in <state dir>/mcpd.log, says so on stderr,
 * and waits until the socket accepts. 0, or the exit status after saying
 * why it failed (with the end of the log when mcpd exited).
 */
int autostart_mcpd(const char *socket_path);

/* relay.c: the bridge's relay of stdio to mcpd, across mcpd's restarts. */
struct relay_opts {
	int reconnect_ms; /* how long mcpd may stay away; 0: end with it */
	size_t max_line;  /* the longest line of the client's */
	/* The view's --server names, whose start a new mcpd is waited for. */
	const json_t *servers;
	/*
	 * Says the session's hello on m->conn, just opened: 0, or
	 * MCPCTL_EXIT_UNREACHABLE to try again, or the exit status.
	 */
	int (*hello)(struct mcpctl *m, void *arg);
	void *hello_arg;
};
/*
 * Relays standard input and output (already non-blocking where they can
 * be; is_out_nonblock says stdout's) to and from mcpd on m->conn, said
 * hello to, until the client closes its input: the exit status.
 */
int relay_run(struct mcpctl *, const struct relay_opts *, bool is_out_nonblock);

/* toolcache.c: tool definitions kept between runs of mcpctl call. */
/* The largest kept definition file; a larger one is not kept. */
#define TOOLCACHE_MAX_BYTES ((size_t)1 << 20)
/*
 * The entry mcpd/tools gave of the server's tool (with its "definition"),
 * as kept for this socket and agent: new, or NULL.
 */
json_t *toolcache_get(const struct mcpctl *, const char *server,
    const char *tool);
/* Keeps entry (one with a "definition"; others are not kept). */
void toolcache_put(const struct mcpctl *, const char *server, const char *tool,
    const json_t *entry);

/* print.c: tables, JSON and error output. */
struct print_table;
/* A table with ncols columns named by headers. */
struct print_table *print_table_new(size_t ncols, const char *const *headers);
void print_table_free(struct print_table *);
/*
 * Lines no wider than width columns (0: no limit): columns are cut with
 * "...", the last one first; notes too.
 */
void print_table_set_width(struct print_table *, size_t width);
/* Adds a row (cells copied; NULL prints "-"); note goes indented below. */
void print_table_add(struct print_table *, const char *const *cells,
    const char *note);
void print_table_write(const struct print_table *, FILE *);
/* The columns of the terminal on stdout, or 0 when stdout is no terminal. */
size_t print_tty_width(void);
/* The result as one compact JSON line on stdout. */
void print_json(const json_t *);
/* Pretty JSON (two-space indent) and a newline. */
void print_pretty(FILE *, const json_t *);
/* Prints s followed by a newline unless it already ends with one. */
void print_line(FILE *, const char *s);
/*
 * Until print_unhold, what is written to stderr is held back, then
 * dropped; print_unhold says whether anything was. Not nested.
 */
void print_hold(void);
bool print_unhold(void);
/* Ends the hold, writing to stderr what was held back. */
void print_release(void);
/* "mcpctl: " and the message on stderr. */
void print_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The daemon is not there: what failed and how to start it. */
void print_unreachable(const char *path, int error);
/* A daemon error object: --json line on stdout, message and hint on stderr. */
void print_error(const json_t *error, bool is_json);
/* A JSON value as text: strings bare, null as "-", others compact. */
char *print_value(const json_t *);
/* "5s ago", "3m ago", "2h ago", "4d ago" for an RFC 3339 UTC time, or NULL. */
char *print_ago(const char *rfc3339);
/* A duration in ms as mcpctl takes one: "10m", "30s", "2h", "1500ms". */
char *print_duration(long long ms);
/*
 * The last error of an mcpd/list row worth showing, or NULL: none, or one
 * of an older generation. *ret_at: when it happened (RFC 3339), or NULL.
 */
const char *print_row_error(const json_t *row, const char **ret_at);

/* callflags.c: a tool's inputSchema as the flags of call. */
enum callflags_type {
	CALLFLAGS_ANY, /* JSON when it parses, else a string */
	CALLFLAGS_STRING,
	CALLFLAGS_INTEGER,
	CALLFLAGS_NUMBER,
	CALLFLAGS_BOOLEAN,
	CALLFLAGS_ARRAY,
	CALLFLAGS_OBJECT,
};
struct callflags_flag {
	const char *prop;     /* the property, borrowed from the schema */
	char *kebab;	      /* maxResults, max_results: "max-results" */
	char *name;	      /* the flag --help shows, or NULL when none */
	const json_t *schema; /* the property's schema (one anyOf branch) */
	enum callflags_type type;
	enum callflags_type item; /* of an array's items */
	bool is_required;
};
struct callflags {
	const json_t *tool; /* an mcpd/tools entry, borrowed */
	char *see;	    /* "SERVER TOOL" or the handle, for the hints */
	struct callflags_flag *flags;
	size_t nflags;
};
/* The flags of tool, an mcpd/tools entry; see names it in hints. */
int callflags_new(const json_t *tool, const char *see, struct callflags **ret);
void callflags_free(struct callflags *);
/* Whether "--name" belongs to call or mcpctl, never to a tool. */
bool callflags_is_reserved(const char *name);
/*
 * Sets one KEY=VALUE word in args: VALUE of the type the inputSchema of cf
 * (may be NULL) gives KEY, else JSON if it parses, else a string; 0 or 2.
 * A VALUE that is not of KEY's type, or not in its enum, is refused as its
 * flag's would be, unless is_forced (then it goes as JSON or text).
 */
int callflags_pair(const struct callflags *, json_t *args, const char *word,
    bool is_forced);
/*
 * Sets in args what words say: flags, their values and KEY=VALUE pairs,
 * only pairs from index pairs_from on. 0, or 2 after saying why.
 */
int callflags_parse(const struct callflags *, char **words, int nwords,
    int pairs_from, bool is_forced, json_t *args);
/* 0 when args has every required property, else 2 naming their flags. */
int callflags_check_required(const struct callflags *, const json_t *args);
/* Says "mcpctl: call: reason" and points at the tool's --help; returns 2. */
int callflags_usage(const struct callflags *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* callhelp.c: the usage of one tool, generated from its schemas. */
/* Prints on stdout the tool's description, flags and outputSchema. */
void callhelp_print(const struct callflags *);

/* elicit.c: a server's elicitation/create, answered at the terminal. */
struct elicit {
	const char *server; /* who asks, named in what is printed */
	FILE *in;	    /* the terminal the person answers on, or NULL */
	bool use_defaults; /* --elicit-defaults: a form's defaults, no prompt */
	bool is_quiet;	   /* no note of an answer given without a prompt */
};
/*
 * The ElicitResult (new) for an elicitation/create's params: a form asked
 * field by field on e->in, with defaults (SEP-1034) and checked against
 * its requestedSchema; a URL shown, accepted only when the person says
 * so. Declined without a terminal, unless use_defaults fills a form.
 */
json_t *elicit_answer(const struct elicit *, const json_t *params);
/* Writes s on stderr, control characters as spaces (newlines kept if has_lines). */
void elicit_put(const char *s, bool has_lines);
/* One line of e->in without its newline (new), or NULL at its end. */
char *elicit_read(const struct elicit *);
/*
 * 0 when value fits schema (or the schema cannot be checked here), else
 * -EINVAL with *ret_why (new): what does not fit.
 */
int elicit_check(const json_t *schema, const json_t *value, char **ret_why);

/* elicitfield.c: one field of a form, asked at the terminal. */
/*
 * Asks for property key of the form (its schema prop) until the answer
 * fits prop, then sets it in content, or leaves it out (not required):
 * 0, or -1 when the input ended (the form is cancelled).
 */
int elicitfield_ask(const struct elicit *, const char *key, const json_t *prop,
    bool is_required, json_t *content);

/* callask.c: what a server asks of mcpctl call during the call. */
struct callask {
	struct elicit elicit;
	const char *server;
};
/* conn_ask_fn: a request of the server, relayed by mcpd (arg: a callask). */
json_t *callask_request(void *arg, json_int_t id, const char *method,
    const json_t *params, json_t **ret_error);
/* Whether a call's result is 2026-07-28's input_required. */
bool callask_is_input_required(const json_t *result);
/*
 * The inputResponses (new) that answer an input_required result's
 * inputRequests; NULL with *ret_why (new) when one of them is a request
 * mcpctl does not answer (sampling): then none was asked.
 */
json_t *callask_input(struct callask *, const json_t *requests, char **ret_why);

/* ctl-load.c, ctl-reload.c: the load result, shared with reload. */
void ctl_load_print_result(const char *verb, const json_t *result);
/* A load's answer: loaded, already loaded, restarted with new settings. */
void ctl_load_answer(const json_t *result);

/* ctl-load-name.c: load by a catalog or registry name. */
struct ctl_load_name {
	const char *source;  /* "docker", "official", "local", or NULL */
	const char *catalog; /* --catalog: the Docker catalog image */
	const char *file;    /* --server-json: a record in a file */
	bool is_dry_run;     /* print the plan, load nothing */
	bool prefer_remote;  /* a record's remote before its packages */
};
/*
 * Fetches the record of name, resolves it, prints what it will run, then
 * loads it with mcpd/load (unless a dry run). user: the params the load
 * options made (stolen). Returns the exit status.
 */
int ctl_load_name(struct mcpctl *, json_t *user, const char *name,
    const struct ctl_load_name *);

/* jsonc.c: JSON with comments, as VS Code writes it. */
/*
 * Parses the file at path ("-" for standard input, at most 16 MiB) as JSON
 * once comments and trailing commas are blanked, never inside strings.
 * Returns 0 and *ret; or a negative errno with *cause, "FILE:LINE:COL: ..."
 * for bad JSON (the caller frees it).
 */
int jsonc_load(const char *path, json_t **ret, char **cause);

/* project.c: project files (.mcpd.json; doc/views.md, "Project files"). */
/*
 * A file that defines servers: asks mcpd whether it is trusted and, when
 * it is and may_load, has mcpd load them (shared with a server that runs
 * the same); a refusal goes to p->error.
 */
void ctl_project_apply(struct mcpctl *, struct projectfile *p, bool may_load);
/* All of path (at most 16 MiB), NUL-terminated, new: 0 or a negative errno. */
int jsonc_read_file(const char *path, char **ret, size_t *ret_len);

/* ctl-load.c, progress: shared with reload and import. */
/*
 * Unless --json: asks for mcpd/progress in params and prints each on
 * stderr as it comes ("  probing: running rax-probe-x-123: ...").
 */
void ctl_load_progress(const struct mcpctl *, json_t *params,
    char *(*rewrite)(const char *));

/* discovery.c: what search, catalog, info and versions print. */
/*
 * Each prints an answer of mcpd/registry-*: publisher text quoted and
 * escaped, within the answer's limits.text_chars; records that do not fit
 * are dropped whole ("N records not shown"), never the next cursor.
 */
void discovery_print_page(const json_t *result);
void discovery_print_record(const json_t *result);
void discovery_print_versions(const json_t *result);
/* --limit N (1 to 100), --cursor C, --source S of search and catalog. */
extern const struct option discovery_page_options[];
/*
 * Their options into *ret (new), then nargs operands (what says which);
 * false when the command is done: *status is its exit status (help
 * printed, or a usage error said).
 */
bool discovery_page_params(const struct mcpctl_cmd *, int argc, char **argv,
    int nargs, const char *what, json_t **ret, int *status);
/* ctl-docker-catalog.c: shared with load. */
/* "Docker MCP catalog REF (image ID): TITLE" on stdout. */
void ctl_docker_catalog_print_header(const json_t *result);
/* The catalog a client names: given, else MCPD_DOCKER_CATALOG, or NULL. */
const char *ctl_docker_catalog_ref(const char *given);
/* ctl-auth.c: what load shares of a login. */
/* Runs xdg-open url when a display is there (and not --no-browser). */
void ctl_auth_open_browser(const char *url);
/* The URL of an "authorize" progress message ("open URL ..."), new. */
char *ctl_auth_url_of(const char *message);

/* One entry per command, listed in mcpctl.c. */
extern const struct mcpctl_cmd ctl_load_cmd;
extern const struct mcpctl_cmd ctl_unload_cmd;
extern const struct mcpctl_cmd ctl_reload_cmd;
extern const struct mcpctl_cmd ctl_disable_cmd;
extern const struct mcpctl_cmd ctl_enable_cmd;
extern const struct mcpctl_cmd ctl_rename_cmd;
extern const struct mcpctl_cmd ctl_changes_cmd;
extern const struct mcpctl_cmd ctl_accept_cmd;
extern const struct mcpctl_cmd ctl_set_cmd;
extern const struct mcpctl_cmd ctl_list_cmd;
extern const struct mcpctl_cmd ctl_tools_cmd;
extern const struct mcpctl_cmd ctl_call_cmd;
extern const struct mcpctl_cmd ctl_logs_cmd;
extern const struct mcpctl_cmd ctl_audit_cmd;
extern const struct mcpctl_cmd ctl_status_cmd;
extern const struct mcpctl_cmd ctl_shutdown_cmd;
extern const struct mcpctl_cmd ctl_upgrade_cmd;
extern const struct mcpctl_cmd ctl_import_cmd;
extern const struct mcpctl_cmd ctl_secret_cmd;
extern const struct mcpctl_cmd ctl_inspect_cmd;
extern const struct mcpctl_cmd ctl_wait_cmd;
extern const struct mcpctl_cmd ctl_bridge_cmd;
extern const struct mcpctl_cmd ctl_clients_cmd;
/*
 * Sends mcpd/hello with the agent, the scope servers and the profile
 * (NULL: none), which mcpd refuses when it has no such server or profile;
 * 0 or the exit status, said.
 */
int ctl_bridge_hello(struct mcpctl *, json_t *servers, const char *profile);
extern const struct mcpctl_cmd ctl_token_cmd;
extern const struct mcpctl_cmd ctl_profile_cmd;
/* ctl-policy.c */
extern const struct mcpctl_cmd ctl_policy_cmd;
extern const struct mcpctl_cmd ctl_approvals_cmd;
extern const struct mcpctl_cmd ctl_approve_cmd;
extern const struct mcpctl_cmd ctl_deny_cmd;
/* ctl-approve.c: mcpctl deny's work (ID of argv); the exit status. */
int ctl_approve_deny(struct mcpctl *, const struct mcpctl_cmd *, int argc,
    char **argv);
extern const struct mcpctl_cmd ctl_project_cmd;
extern const struct mcpctl_cmd ctl_auth_cmd;
extern const struct mcpctl_cmd ctl_client_config_cmd;
extern const struct mcpctl_cmd ctl_search_cmd;
extern const struct mcpctl_cmd ctl_catalog_cmd;
extern const struct mcpctl_cmd ctl_info_cmd;
extern const struct mcpctl_cmd ctl_versions_cmd;
extern const struct mcpctl_cmd ctl_docker_catalog_cmd;
extern const struct mcpctl_cmd ctl_gateway_cmd;
extern const struct mcpctl_cmd ctl_help_cmd;
extern const struct mcpctl_cmd ctl_version_cmd;

#endif
