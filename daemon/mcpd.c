/* SPDX-License-Identifier: ISC */
/* mcpd: options, paths, identity, the control socket, the loop, signals. */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mcpd.h"
#include "paths.h"
#include "url.h"

#define MCPD_REGISTRY_DEFAULT "https://registry.modelcontextprotocol.io"

#define MCPD_FD_RESERVE 64 /* descriptors kept from clients, at least */

struct mcpd_options mcpd_opts = {
	.max_message = 16 * 1024 * 1024,
	.call_timeout_ms = 60000,
	.load_timeout_ms = 60000,
	.stop_step_ms = 2000,
	.log_lines = 1000,
	.max_clients = 256,
	.max_http_sessions = 256,
	.max_http_sessions_per_token = 64,
	.http_session_idle_ms = 600000,
	.http_header_timeout_ms = 10000,
	.max_http_requests = 16,
	.max_servers = 256,
	.max_client_requests = 64,
	.max_client_output = 0, /* 0: twice max_message */
	.docker_timeout_ms = 30000,
	.stop_grace_ms = 15000,
	.stop_force_ms = 15000,
	.registry_timeout_ms = 30000,
	.registry_max_bytes = 4 * 1024 * 1024,
	.registry_problems = 4,
	.max_instructions = 16 * 1024,
	.roots_timeout_ms = 5000,
	.registry_problem_chars = 256,
	.registry_text_chars = 8192,
	.audit_max_bytes = 10 * 1024 * 1024,
	.audit_files = 5,
};
struct event_base *mcpd_base;
struct store *mcpd_store;
uint64_t mcpd_started_ms;

static bool mcpd_stopping, mcpd_forcing;
static struct event *mcpd_stop_timer;
static struct request *mcpd_shutdown_req;
static struct event *mcpd_sigterm, *mcpd_sigint, *mcpd_sighup;

uint64_t
mcpd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The key lives outside the state dir: $XDG_CONFIG_HOME/mcpd/secrets.key. */
static char *
mcpd_secrets_key_path(void)
{
	const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *path = NULL;

	if (mcpd_opts.secrets_key != NULL)
		return xstrdup(mcpd_opts.secrets_key);
	if (config != NULL && config[0] == '/')
		xasprintf(&path, "%s/mcpd/secrets.key", config);
	else if (home != NULL && home[0] == '/')
		xasprintf(&path, "%s/.config/mcpd/secrets.key", home);
	return path;
}

static struct secrets *vault;

/* The secret store itself lives in the state dir: secrets.enc. */
static char *
mcpd_secrets_store_path(void)
{
	char *store;

	xasprintf(&store, "%s/secrets.enc", mcpd_opts.state_dir);
	return store;
}

struct secrets *
mcpd_secrets(char **cause)
{
	char *store = NULL, *key;

	if (vault != NULL)
		return vault;
	if ((key = mcpd_secrets_key_path()) == NULL) {
		if (cause != NULL)
			*cause = xstrdup(
			    "no place for the secret key: set HOME or XDG_CONFIG_HOME, or pass --secrets-key");
		return NULL;
	}
	store = mcpd_secrets_store_path();
	if (secrets_open(store, key, &vault, cause) < 0)
		vault = NULL;
	free(store);
	free(key);
	return vault;
}

struct secrets *
mcpd_secrets_if_any(void)
{
	char *store;
	bool has_store;

	if (vault != NULL)
		return vault;
	store = mcpd_secrets_store_path();
	has_store = access(store, F_OK) == 0;
	free(store);
	return has_store ? mcpd_secrets(NULL) : NULL;
}

bool
mcpd_is_stopping(void)
{
	return mcpd_stopping;
}

static void
mcpd_all_stopped(void *arg)
{
	json_t *left = server_not_removed_take();

	(void)arg;
	log_info("every server stopped");
	if (mcpd_shutdown_req != NULL)
		control_reply(mcpd_shutdown_req,
		    left != NULL ? json_pack("{s:O}", "not_removed", left) :
				   json_object());
	json_decref(left);
	mcpd_shutdown_req = NULL;
	event_free(mcpd_stop_timer);
	mcpd_stop_timer = NULL;
	notify_stopping();
	event_base_loopexit(mcpd_base, NULL);
}

static void mcpd_stop_overdue(evutil_socket_t, short, void *);

static void
mcpd_timer_add(struct event *ev, int ms)
{
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };

	evtimer_add(ev, &tv);
}

void
mcpd_shutdown(struct request *req)
{
	if (mcpd_stopping) {
		/* A second request: answer when the first one is. */
		if (req != NULL && mcpd_shutdown_req == NULL)
			mcpd_shutdown_req = req;
		else if (req != NULL)
			control_fail(req, ERRORS_UNAVAILABLE, NULL,
			    "mcpd is already shutting down");
		return;
	}
	mcpd_stopping = true;
	mcpd_shutdown_req = req;
	log_info("shutting down: stopping %zu servers", server_count(NULL));
	notify_status("stopping %zu servers", server_count(NULL));
	mcpd_stop_timer = evtimer_new(mcpd_base, mcpd_stop_overdue, NULL);
	mcpd_timer_add(mcpd_stop_timer, mcpd_opts.stop_grace_ms);
	server_stop_all(mcpd_all_stopped, NULL);
}

static void __attribute__((noreturn)) mcpd_exit_forced(void)
{
	log_warnx("forced exit: processes of servers get SIGKILL");
	control_close(); /* what was answered still reaches its client */
	notify_stopping();
	_exit(1);
}

static void
mcpd_forced_removed(void *arg, int status, const char *out, const char *err)
{
	char *why;

	(void)arg, (void)out;
	if (status != 0) {
		why = docker_describe_failure(status, err);
		log_warnx("forced stop: containers not removed: %s", why);
		free(why);
	}
	mcpd_exit_forced();
}

static void
mcpd_force_overdue(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	log_warnx("forced stop: docker rm -f did not end in %d ms",
	    mcpd_opts.stop_force_ms);
	mcpd_exit_forced();
}

/*
 * Stops now, within the forced budget: every container goes in one
 * docker rm -f; processes die with mcpd (their shims kill their groups).
 */
static void
mcpd_force(void)
{
	const char **args = server_container_names(docker_program());

	if (mcpd_forcing)
		return;
	mcpd_forcing = true;
	if (args[3] == NULL)
		mcpd_exit_forced();
	log_warnx("forced stop: removing every container");
	event_free(mcpd_stop_timer);
	mcpd_stop_timer = evtimer_new(mcpd_base, mcpd_force_overdue, NULL);
	mcpd_timer_add(mcpd_stop_timer, mcpd_opts.stop_force_ms);
	docker_cmd_start(args, NULL, mcpd_opts.stop_force_ms, NULL,
	    mcpd_forced_removed, NULL);
	free(args);
}

static void
mcpd_force_due(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	log_warnx("shutdown did not end within %d ms after the grace",
	    mcpd_opts.stop_force_ms);
	mcpd_force();
}

/*
 * The grace is over: calls still in flight are cancelled (upstream too)
 * and answered outcome-unknown, and the stop goes on; what has not ended
 * --stop-force ms later is forced.
 */
static void
mcpd_stop_overdue(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	log_warnx(
	    "shutdown did not end within %d ms: calls still in flight are cancelled",
	    mcpd_opts.stop_grace_ms);
	server_cancel_calls("mcpd is shutting down");
	event_free(mcpd_stop_timer);
	mcpd_stop_timer = evtimer_new(mcpd_base, mcpd_force_due, NULL);
	mcpd_timer_add(mcpd_stop_timer, mcpd_opts.stop_force_ms);
}

static void
mcpd_signal(evutil_socket_t sig, short events, void *arg)
{
	(void)events, (void)arg;
	if (sig == SIGHUP)
		return;
	if (mcpd_stopping) {
		log_warnx("second signal: forcing the stop");
		mcpd_force();
		return;
	}
	log_info("got signal %d", (int)sig);
	mcpd_shutdown(NULL);
}

static void __attribute__((noreturn)) mcpd_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: mcpd [-dv] [-s socket] [-S state_dir] [--max-message BYTES]\n"
	    "            [--call-timeout MS] [--load-timeout MS] [--log-lines N]\n"
	    "            [--max-clients N] [--max-client-requests N]\n"
	    "            [--max-client-output BYTES] [--max-servers N]\n"
	    "            [--max-http-requests N] [--max-http-sessions N]\n"
	    "            [--max-http-sessions-per-token N] [--http-session-idle MS]\n"
	    "            [--http-header-timeout MS]\n"
	    "            [--ca-file PATH] [--dns-server IP[:PORT]]\n"
	    "            [--docker PATH] [--docker-timeout MS] [--docker-catalog REF]\n"
	    "            [--stop-grace MS] [--stop-force MS] [--secrets-key PATH]\n"
	    "            [--listen-http 127.0.0.1:PORT]\n"
	    "            [--registry URL] [--registry-allow-local]\n"
	    "            [--registry-timeout MS] [--registry-max-bytes BYTES]\n"
	    "            [--registry-contract PATH] [--catalog PATH]\n"
	    "            [--registry-problems N] [--registry-problem-chars N]\n"
	    "            [--registry-text-chars N]\n"
	    "            [--oauth-client-metadata-url URL]\n"
	    "            [--max-instructions BYTES] [--roots-timeout MS]\n"
	    "            [--audit on|off] [--no-audit] [--audit-arguments]\n"
	    "            [--audit-required] [--audit-max-bytes BYTES]\n"
	    "            [--audit-files N]\n"
	    "            [-V] [-h]\n"
	    "Supervises MCP servers for every agent of this user; see mcpd(8).\n");
	exit(status);
}

static long long
mcpd_number(const char *opt, const char *arg, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno != 0 || *end != '\0' || end == arg || v < min || v > max) {
		fprintf(stderr,
		    "mcpd: %s wants a number from %lld to %lld, not \"%s\"\n",
		    opt, min, max, arg);
		exit(2);
	}
	return v;
}

enum {
	MCPD_OPT_MAX_MESSAGE = 256,
	MCPD_OPT_CALL_TIMEOUT,
	MCPD_OPT_LOAD_TIMEOUT,
	MCPD_OPT_LOG_LINES,
	MCPD_OPT_MAX_CLIENTS,
	MCPD_OPT_MAX_CLIENT_REQUESTS,
	MCPD_OPT_MAX_CLIENT_OUTPUT,
	MCPD_OPT_MAX_HTTP_REQUESTS,
	MCPD_OPT_MAX_HTTP_SESSIONS,
	MCPD_OPT_MAX_HTTP_SESSIONS_PER_TOKEN,
	MCPD_OPT_HTTP_SESSION_IDLE,
	MCPD_OPT_HTTP_HEADER_TIMEOUT,
	MCPD_OPT_MAX_SERVERS,
	MCPD_OPT_CA_FILE,
	MCPD_OPT_DNS_SERVER,
	MCPD_OPT_DOCKER,
	MCPD_OPT_DOCKER_TIMEOUT,
	MCPD_OPT_STOP_GRACE,
	MCPD_OPT_STOP_FORCE,
	MCPD_OPT_SECRETS_KEY,
	MCPD_OPT_LISTEN_HTTP,
	MCPD_OPT_REGISTRY,
	MCPD_OPT_REGISTRY_LOCAL,
	MCPD_OPT_REGISTRY_TIMEOUT,
	MCPD_OPT_REGISTRY_MAX_BYTES,
	MCPD_OPT_REGISTRY_CONTRACT,
	MCPD_OPT_CATALOG,
	MCPD_OPT_REGISTRY_PROBLEMS,
	MCPD_OPT_REGISTRY_PROBLEM_CHARS,
	MCPD_OPT_REGISTRY_TEXT_CHARS,
	MCPD_OPT_DOCKER_CATALOG,
	MCPD_OPT_OAUTH_CLIENT_METADATA_URL,
	MCPD_OPT_MAX_INSTRUCTIONS,
	MCPD_OPT_ROOTS_TIMEOUT,
	MCPD_OPT_AUDIT,
	MCPD_OPT_NO_AUDIT,
	MCPD_OPT_AUDIT_ARGUMENTS,
	MCPD_OPT_AUDIT_REQUIRED,
	MCPD_OPT_AUDIT_MAX_BYTES,
	MCPD_OPT_AUDIT_FILES,
};

static const struct option mcpd_long_options[] = {
	{ "foreground", no_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "socket", required_argument, NULL, 's' },
	{ "state-dir", required_argument, NULL, 'S' },
	{ "max-message", required_argument, NULL, MCPD_OPT_MAX_MESSAGE },
	{ "call-timeout", required_argument, NULL, MCPD_OPT_CALL_TIMEOUT },
	{ "load-timeout", required_argument, NULL, MCPD_OPT_LOAD_TIMEOUT },
	{ "log-lines", required_argument, NULL, MCPD_OPT_LOG_LINES },
	{ "max-clients", required_argument, NULL, MCPD_OPT_MAX_CLIENTS },
	{ "max-client-requests", required_argument, NULL,
	    MCPD_OPT_MAX_CLIENT_REQUESTS },
	{ "max-client-output", required_argument, NULL,
	    MCPD_OPT_MAX_CLIENT_OUTPUT },
	{ "max-http-requests", required_argument, NULL,
	    MCPD_OPT_MAX_HTTP_REQUESTS },
	{ "max-http-sessions", required_argument, NULL,
	    MCPD_OPT_MAX_HTTP_SESSIONS },
	{ "max-http-sessions-per-token", required_argument, NULL,
	    MCPD_OPT_MAX_HTTP_SESSIONS_PER_TOKEN },
	{ "http-session-idle", required_argument, NULL,
	    MCPD_OPT_HTTP_SESSION_IDLE },
	{ "http-header-timeout", required_argument, NULL,
	    MCPD_OPT_HTTP_HEADER_TIMEOUT },
	{ "max-servers", required_argument, NULL, MCPD_OPT_MAX_SERVERS },
	{ "ca-file", required_argument, NULL, MCPD_OPT_CA_FILE },
	{ "dns-server", required_argument, NULL, MCPD_OPT_DNS_SERVER },
	{ "docker", required_argument, NULL, MCPD_OPT_DOCKER },
	{ "docker-timeout", required_argument, NULL, MCPD_OPT_DOCKER_TIMEOUT },
	{ "stop-grace", required_argument, NULL, MCPD_OPT_STOP_GRACE },
	{ "stop-force", required_argument, NULL, MCPD_OPT_STOP_FORCE },
	{ "secrets-key", required_argument, NULL, MCPD_OPT_SECRETS_KEY },
	{ "listen-http", required_argument, NULL, MCPD_OPT_LISTEN_HTTP },
	{ "registry", required_argument, NULL, MCPD_OPT_REGISTRY },
	{ "registry-allow-local", no_argument, NULL, MCPD_OPT_REGISTRY_LOCAL },
	{ "registry-timeout", required_argument, NULL,
	    MCPD_OPT_REGISTRY_TIMEOUT },
	{ "registry-max-bytes", required_argument, NULL,
	    MCPD_OPT_REGISTRY_MAX_BYTES },
	{ "registry-contract", required_argument, NULL,
	    MCPD_OPT_REGISTRY_CONTRACT },
	{ "catalog", required_argument, NULL, MCPD_OPT_CATALOG },
	{ "registry-problems", required_argument, NULL,
	    MCPD_OPT_REGISTRY_PROBLEMS },
	{ "registry-problem-chars", required_argument, NULL,
	    MCPD_OPT_REGISTRY_PROBLEM_CHARS },
	{ "registry-text-chars", required_argument, NULL,
	    MCPD_OPT_REGISTRY_TEXT_CHARS },
	{ "docker-catalog", required_argument, NULL, MCPD_OPT_DOCKER_CATALOG },
	{ "oauth-client-metadata-url", required_argument, NULL,
	    MCPD_OPT_OAUTH_CLIENT_METADATA_URL },
	{ "max-instructions", required_argument, NULL,
	    MCPD_OPT_MAX_INSTRUCTIONS },
	{ "roots-timeout", required_argument, NULL, MCPD_OPT_ROOTS_TIMEOUT },
	{ "audit", required_argument, NULL, MCPD_OPT_AUDIT },
	{ "no-audit", no_argument, NULL, MCPD_OPT_NO_AUDIT },
	{ "audit-arguments", no_argument, NULL, MCPD_OPT_AUDIT_ARGUMENTS },
	{ "audit-required", no_argument, NULL, MCPD_OPT_AUDIT_REQUIRED },
	{ "audit-max-bytes", required_argument, NULL,
	    MCPD_OPT_AUDIT_MAX_BYTES },
	{ "audit-files", required_argument, NULL, MCPD_OPT_AUDIT_FILES },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Sets *to to a copy of value (what an option or a variable gave). */
static void
mcpd_set_string(char **to, const char *value)
{
	free(*to);
	*to = xstrdup(value);
}

/*
 * Discovery's settings from the environment first (MCPD_REGISTRY...);
 * options given on the command line then override them.
 */
static void
mcpd_registry_env(void)
{
	static const struct {
		const char *name;
		long long min, max;
		int opt;
	} numbers[] = {
		{ "MCPD_REGISTRY_TIMEOUT", 1, 86400000,
		    MCPD_OPT_REGISTRY_TIMEOUT },
		{ "MCPD_REGISTRY_MAX_BYTES", 1024, 1LL << 30,
		    MCPD_OPT_REGISTRY_MAX_BYTES },
		{ "MCPD_REGISTRY_PROBLEMS", 1, 1000,
		    MCPD_OPT_REGISTRY_PROBLEMS },
		{ "MCPD_REGISTRY_PROBLEM_CHARS", 16, 65536,
		    MCPD_OPT_REGISTRY_PROBLEM_CHARS },
		{ "MCPD_REGISTRY_TEXT_CHARS", 256, 1 << 24,
		    MCPD_OPT_REGISTRY_TEXT_CHARS },
	};
	const char *v;

	mcpd_set_string(&mcpd_opts.registry,
	    (v = getenv("MCPD_REGISTRY")) != NULL && *v != '\0' ?
		v :
		MCPD_REGISTRY_DEFAULT);
	v = getenv("MCPD_REGISTRY_ALLOW_LOCAL");
	mcpd_opts.is_registry_local = v != NULL && *v != '\0' &&
	    strcmp(v, "0") != 0;
	if ((v = getenv("MCPD_REGISTRY_CONTRACT")) != NULL && *v != '\0')
		mcpd_set_string(&mcpd_opts.registry_contract, v);
	if ((v = getenv("MCPD_CATALOG")) != NULL && *v != '\0')
		mcpd_set_string(&mcpd_opts.catalog, v);
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		long long n;

		if ((v = getenv(numbers[i].name)) == NULL || *v == '\0')
			continue;
		n = mcpd_number(numbers[i].name, v, numbers[i].min,
		    numbers[i].max);
		if (numbers[i].opt == MCPD_OPT_REGISTRY_TIMEOUT)
			mcpd_opts.registry_timeout_ms = (int)n;
		else if (numbers[i].opt == MCPD_OPT_REGISTRY_MAX_BYTES)
			mcpd_opts.registry_max_bytes = (size_t)n;
		else if (numbers[i].opt == MCPD_OPT_REGISTRY_PROBLEMS)
			mcpd_opts.registry_problems = (size_t)n;
		else if (numbers[i].opt == MCPD_OPT_REGISTRY_PROBLEM_CHARS)
			mcpd_opts.registry_problem_chars = (size_t)n;
		else
			mcpd_opts.registry_text_chars = (size_t)n;
	}
}

/* One of the audit log's options; false when ch is none of them. */
static bool
mcpd_audit_option(int ch, const char *arg)
{
	switch (ch) {
	case MCPD_OPT_AUDIT:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
			fprintf(stderr,
			    "mcpd: --audit wants on or off, not \"%s\"\n", arg);
			exit(2);
		}
		mcpd_opts.is_audit_off = strcmp(arg, "off") == 0;
		return true;
	case MCPD_OPT_NO_AUDIT:
		mcpd_opts.is_audit_off = true;
		return true;
	case MCPD_OPT_AUDIT_ARGUMENTS:
		mcpd_opts.is_audit_arguments = true;
		return true;
	case MCPD_OPT_AUDIT_REQUIRED:
		mcpd_opts.is_audit_required = true;
		return true;
	case MCPD_OPT_AUDIT_MAX_BYTES:
		/* A file holds at least one line of the longest. */
		mcpd_opts.audit_max_bytes = mcpd_number("--audit-max-bytes",
		    arg, AUDIT_LINE_MAX, 1LL << 40);
		return true;
	case MCPD_OPT_AUDIT_FILES:
		mcpd_opts.audit_files = mcpd_number("--audit-files", arg, 0,
		    1000);
		return true;
	}
	return false;
}

/* One of discovery's options; false when ch is none of them. */
static bool
mcpd_registry_option(int ch, const char *arg)
{
	switch (ch) {
	case MCPD_OPT_REGISTRY:
		mcpd_set_string(&mcpd_opts.registry, arg);
		return true;
	case MCPD_OPT_REGISTRY_LOCAL:
		mcpd_opts.is_registry_local = true;
		return true;
	case MCPD_OPT_REGISTRY_TIMEOUT:
		mcpd_opts.registry_timeout_ms =
		    mcpd_number("--registry-timeout", arg, 1, 86400000);
		return true;
	case MCPD_OPT_REGISTRY_MAX_BYTES:
		mcpd_opts.registry_max_bytes =
		    mcpd_number("--registry-max-bytes", arg, 1024, 1LL << 30);
		return true;
	case MCPD_OPT_REGISTRY_CONTRACT:
		mcpd_set_string(&mcpd_opts.registry_contract, arg);
		return true;
	case MCPD_OPT_CATALOG:
		mcpd_set_string(&mcpd_opts.catalog, arg);
		return true;
	case MCPD_OPT_REGISTRY_PROBLEMS:
		mcpd_opts.registry_problems = mcpd_number("--registry-problems",
		    arg, 1, 1000);
		return true;
	case MCPD_OPT_REGISTRY_PROBLEM_CHARS:
		mcpd_opts.registry_problem_chars =
		    mcpd_number("--registry-problem-chars", arg, 16, 65536);
		return true;
	case MCPD_OPT_REGISTRY_TEXT_CHARS:
		mcpd_opts.registry_text_chars =
		    mcpd_number("--registry-text-chars", arg, 256, 1 << 24);
		return true;
	default:
		return false;
	}
}

/*
 * The registry's base URL must be one the policy could allow: https (or
 * http with --registry-allow-local), no credentials, query or fragment.
 * A trailing "/" is dropped: paths are appended to it.
 */
static void
mcpd_registry_check(void)
{
	char *cause = NULL, *end;
	struct url u;
	const char *why = NULL;

	if (url_parse(mcpd_opts.registry, &u, &cause) < 0)
		why = cause != NULL ? cause : "not a URL";
	else if (u.has_userinfo || u.has_fragment || u.query != NULL)
		why = "credentials, a query or a fragment are refused in it";
	else if (strcmp(u.scheme, "https") != 0 && !mcpd_opts.is_registry_local)
		why =
		    "it must be https (plain http needs --registry-allow-local and a loopback address)";
	if (why != NULL) {
		fprintf(stderr, "mcpd: --registry (or MCPD_REGISTRY) %s: %s\n",
		    mcpd_opts.registry, why);
		exit(2);
	}
	url_free(&u);
	end = mcpd_opts.registry + strlen(mcpd_opts.registry);
	while (end > mcpd_opts.registry && end[-1] == '/')
		*--end = '\0';
}

static void
mcpd_parse_options(int argc, char **argv, int *foreground, int *verbose)
{
	const char *docker = getenv("MCPD_DOCKER");
	const char *catalog = getenv("MCPD_DOCKER_CATALOG");
	int ch;

	if (docker != NULL && *docker != '\0')
		mcpd_opts.docker = xstrdup(docker);
	mcpd_registry_env();
	if (catalog != NULL && *catalog != '\0')
		mcpd_opts.docker_catalog = xstrdup(catalog);
	while ((ch = getopt_long(argc, argv, "dvs:S:Vh", mcpd_long_options,
		    NULL)) != -1) {
		if (mcpd_registry_option(ch, optarg) ||
		    mcpd_audit_option(ch, optarg))
			continue;
		switch (ch) {
		case 'd':
			*foreground = 1;
			break;
		case 'v':
			*verbose = 1;
			break;
		case 's':
			mcpd_opts.socket_path = xstrdup(optarg);
			break;
		case 'S':
			mcpd_opts.state_dir = xstrdup(optarg);
			break;
		case MCPD_OPT_MAX_MESSAGE:
			mcpd_opts.max_message = mcpd_number("--max-message",
			    optarg, 1024, 1LL << 30);
			break;
		case MCPD_OPT_CALL_TIMEOUT:
			mcpd_opts.call_timeout_ms =
			    mcpd_number("--call-timeout", optarg, 1, 86400000);
			break;
		case MCPD_OPT_LOAD_TIMEOUT:
			mcpd_opts.load_timeout_ms =
			    mcpd_number("--load-timeout", optarg, 1, 86400000);
			break;
		case MCPD_OPT_LOG_LINES:
			mcpd_opts.log_lines = mcpd_number("--log-lines", optarg,
			    1, 1000000);
			break;
		case MCPD_OPT_MAX_CLIENTS:
			mcpd_opts.max_clients = mcpd_number("--max-clients",
			    optarg, 1, 65536);
			break;
		case MCPD_OPT_MAX_CLIENT_REQUESTS:
			mcpd_opts.max_client_requests =
			    mcpd_number("--max-client-requests", optarg, 1,
				65536);
			break;
		case MCPD_OPT_MAX_CLIENT_OUTPUT:
			mcpd_opts.max_client_output =
			    mcpd_number("--max-client-output", optarg, 65536,
				1LL << 32);
			break;
		case MCPD_OPT_MAX_HTTP_REQUESTS:
			mcpd_opts.max_http_requests =
			    mcpd_number("--max-http-requests", optarg, 1, 1024);
			break;
		case MCPD_OPT_MAX_HTTP_SESSIONS:
			mcpd_opts.max_http_sessions =
			    mcpd_number("--max-http-sessions", optarg, 1,
				65536);
			break;
		case MCPD_OPT_MAX_HTTP_SESSIONS_PER_TOKEN:
			mcpd_opts.max_http_sessions_per_token =
			    mcpd_number("--max-http-sessions-per-token", optarg,
				1, 65536);
			break;
		case MCPD_OPT_HTTP_SESSION_IDLE:
			mcpd_opts.http_session_idle_ms =
			    mcpd_number("--http-session-idle", optarg, 1,
				86400000);
			break;
		case MCPD_OPT_HTTP_HEADER_TIMEOUT:
			mcpd_opts.http_header_timeout_ms =
			    mcpd_number("--http-header-timeout", optarg, 1,
				3600000);
			break;
		case MCPD_OPT_MAX_SERVERS:
			mcpd_opts.max_servers = mcpd_number("--max-servers",
			    optarg, 1, 65536);
			break;
		case MCPD_OPT_CA_FILE:
			mcpd_opts.ca_file = xstrdup(optarg);
			break;
		case MCPD_OPT_DNS_SERVER:
			mcpd_opts.dns_server = xstrdup(optarg);
			break;
		case MCPD_OPT_DOCKER:
			free(mcpd_opts.docker);
			mcpd_opts.docker = xstrdup(optarg);
			break;
		case MCPD_OPT_STOP_GRACE:
			mcpd_opts.stop_grace_ms = mcpd_number("--stop-grace",
			    optarg, 1, 3600000);
			break;
		case MCPD_OPT_SECRETS_KEY:
			free(mcpd_opts.secrets_key);
			mcpd_opts.secrets_key = xstrdup(optarg);
			break;
		case MCPD_OPT_LISTEN_HTTP:
			free(mcpd_opts.listen_http);
			mcpd_opts.listen_http = xstrdup(optarg);
			break;
		case MCPD_OPT_DOCKER_CATALOG:
			free(mcpd_opts.docker_catalog);
			mcpd_opts.docker_catalog = xstrdup(optarg);
			break;
		case MCPD_OPT_MAX_INSTRUCTIONS:
			mcpd_opts.max_instructions =
			    mcpd_number("--max-instructions", optarg, 256,
				1 << 20);
			break;
		case MCPD_OPT_ROOTS_TIMEOUT:
			mcpd_opts.roots_timeout_ms =
			    mcpd_number("--roots-timeout", optarg, 100, 600000);
			break;
		case MCPD_OPT_OAUTH_CLIENT_METADATA_URL:
			/* draft-ietf-oauth-client-id-metadata-document: https, a path. */
			if (strncmp(optarg, "https://", 8) != 0 ||
			    strchr(optarg + 8, '/') == NULL ||
			    strpbrk(optarg, "#\r\n ") != NULL) {
				fprintf(stderr,
				    "mcpd: --oauth-client-metadata-url wants an https URL with a path, not \"%s\"\n",
				    optarg);
				exit(2);
			}
			free(mcpd_opts.oauth_client_metadata_url);
			mcpd_opts.oauth_client_metadata_url = xstrdup(optarg);
			break;
		case MCPD_OPT_STOP_FORCE:
			mcpd_opts.stop_force_ms = mcpd_number("--stop-force",
			    optarg, 1, 3600000);
			break;
		case MCPD_OPT_DOCKER_TIMEOUT:
			mcpd_opts.docker_timeout_ms =
			    mcpd_number("--docker-timeout", optarg, 100,
				3600000);
			break;
		case 'V':
			printf("mcpd %s\n", MCPD_VERSION);
			exit(0);
		case 'h':
			mcpd_usage(0);
		default:
			mcpd_usage(2);
		}
	}
	if (optind != argc)
		mcpd_usage(2);
	mcpd_registry_check();
	if (mcpd_opts.max_client_output == 0)
		mcpd_opts.max_client_output = 2 * mcpd_opts.max_message;
}

/*
 * Takes every descriptor the hard limit allows, and fits --max-clients
 * under it: a client holds one descriptor, and MCPD_FD_RESERVE plus half
 * of what is left stay for mcpd itself, its servers (three pipes each),
 * docker commands and HTTP connections.
 */
static void
mcpd_fit_nofile(void)
{
	struct rlimit rl;
	size_t fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_warn("getrlimit RLIMIT_NOFILE");
		return;
	}
	child_set_nofile(rl.rlim_cur);
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t soft = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			log_warn("cannot raise RLIMIT_NOFILE to %llu",
			    (unsigned long long)rl.rlim_max);
			rl.rlim_cur = soft;
		}
	}
	fit = rl.rlim_cur > MCPD_FD_RESERVE + 2 ?
	    (size_t)((rl.rlim_cur - MCPD_FD_RESERVE) / 2) :
	    1;
	if (mcpd_opts.max_clients <= fit)
		return;
	log_warnx(
	    "--max-clients lowered from %zu to %zu to fit RLIMIT_NOFILE %llu",
	    mcpd_opts.max_clients, fit, (unsigned long long)rl.rlim_cur);
	mcpd_opts.max_clients = fit;
}

static void
mcpd_prepare_state(void)
{
	char *cause = NULL;
	int r;

	if (mcpd_opts.state_dir == NULL &&
	    (mcpd_opts.state_dir = paths_state_default()) == NULL)
		fatalx(
		    "no state directory: set HOME, XDG_STATE_HOME or MCPD_STATE_DIR, or pass -S");
	if ((r = paths_mkdir_p(mcpd_opts.state_dir, 0700)) < 0) {
		errno = -r;
		fatal("cannot create state directory %s", mcpd_opts.state_dir);
	}
	/* The lock says where this daemon listens, to one that finds it. */
	if (mcpd_opts.socket_path == NULL &&
	    (mcpd_opts.socket_path = paths_socket_default()) == NULL)
		fatalx("out of memory");
	/* Before anything in it is read or any container is touched. */
	if (lock_state_dir(mcpd_opts.state_dir, mcpd_opts.socket_path, &cause) <
	    0)
		fatalx("%s",
		    cause != NULL ? cause : "cannot lock the state directory");
	if (tokens_open(mcpd_opts.state_dir, &cause) < 0)
		fatalx("tokens: %s", cause != NULL ? cause : "failed");
	if (generation_init(mcpd_opts.state_dir, &cause) < 0)
		fatalx("generations: %s", cause != NULL ? cause : "failed");
	if (identity_load(mcpd_opts.state_dir, &cause) < 0)
		fatalx("identity: %s", cause != NULL ? cause : "failed");
	store_open(mcpd_opts.state_dir, &mcpd_store);
	if (http_tls_init(mcpd_opts.ca_file, &cause) < 0 ||
	    netpolicy_init(mcpd_opts.dns_server, &cause) < 0)
		fatalx("%s", cause != NULL ? cause : "remote endpoints");
}

static struct event *
mcpd_signal_new(int sig)
{
	struct event *ev = evsignal_new(mcpd_base, sig, mcpd_signal, NULL);

	if (ev == NULL || evsignal_add(ev, NULL) < 0)
		fatalx("cannot watch signal %d", sig);
	return ev;
}

static void
mcpd_listen(void)
{
	int fd = notify_listen_fd();
	char *cause = NULL;

	if (control_listen(mcpd_opts.socket_path, fd, &cause) < 0)
		fatalx("%s", cause != NULL ? cause : "cannot listen");
}

int
main(int argc, char **argv)
{
	int foreground = 0, verbose = 0;
	char *cause = NULL;
	bool to_journal;

	xalloc_json();
	mcpd_parse_options(argc, argv, &foreground, &verbose);
	/* Without -d, log to the journal when there is one. */
	to_journal = !foreground &&
	    access("/run/systemd/journal/socket", W_OK) == 0;
	log_init(to_journal ? log_journal : NULL, verbose, "mcpd");
	signal(SIGPIPE, SIG_IGN);
	mcpd_started_ms = mcpd_now_ms();
	if ((mcpd_base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	mcpd_fit_nofile();
	mcpd_prepare_state();
	audit_open(mcpd_opts.state_dir, to_journal);
	child_init();
	mcpd_sigterm = mcpd_signal_new(SIGTERM);
	mcpd_sigint = mcpd_signal_new(SIGINT);
	mcpd_sighup = mcpd_signal_new(SIGHUP);
	/* Refused before the control socket exists: nothing is left. */
	if (mcpd_opts.listen_http != NULL &&
	    httpd_listen(mcpd_opts.listen_http, &cause) < 0)
		fatalx("--listen-http %s: %s", mcpd_opts.listen_http,
		    cause != NULL ? cause : "cannot listen");
	mcpd_listen();
	log_info("mcpd %s listening on %s (state %s, %s)", MCPD_VERSION,
	    mcpd_opts.socket_path, mcpd_opts.state_dir, identity_did());
	docker_reap();
	notify_ready();
	notify_status("listening on %s", mcpd_opts.socket_path);
	enable_restore();
	notify_watchdog_start();
	event_base_dispatch(mcpd_base);
	httpd_close();
	control_close();
	/* Let deferred releases and closes run before the loop goes. */
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	defer_close();
	oauth_callback_close_all();
	child_close();
	docker_reap_close();
	dcatalog_close();
	sendq_close();
	registry_close();
	netpolicy_close();
	http_tls_close();
	store_free(mcpd_store);
	tokens_close();
	audit_close();
	secrets_free(vault);
	log_info("stopped");
	event_free(mcpd_sigterm);
	event_free(mcpd_sigint);
	event_free(mcpd_sighup);
	event_base_free(mcpd_base);
	return 0;
}
