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

#include "httpd.h"
#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "paths.h"
#include "server-watch.h"
#include "url.h"

#define MCPD_REGISTRY_DEFAULT "https://registry.modelcontextprotocol.io"

#define MCPD_FD_RESERVE 64 /* descriptors kept from clients, at least */

struct mcpd_options mcpd_opts = {
	.max_message = 16 * 1024 * 1024,
	.call_timeout_ms = 60000,
	.approval_timeout_s = 120,
	.load_timeout_ms = 60000,
	.stop_step_ms = 2000,
	.log_lines = 1000,
	.max_clients = 256,
	.max_http_sessions = 256,
	.max_http_sessions_per_token = 64,
	.http_session_idle_ms = 600000,
	.http_stream_after_ms = 50,
	.http_header_timeout_ms = 10000,
	.max_http_requests = 16,
	.max_servers = 256,
	.max_client_requests = 64,
	.max_client_output = 0, /* 0: twice max_message */
	.docker_timeout_ms = 30000,
	.stop_grace_ms = 15000,
	.stop_force_ms = 15000,
	.upgrade_drain_ms = 10000,
	.upgrade_http_wait_ms = 100,
	.registry_timeout_ms = 30000,
	.registry_max_bytes = 4 * 1024 * 1024,
	.registry_problems = 4,
	.max_instructions = 16 * 1024,
	.roots_timeout_ms = 5000,
	.tool_budget = 12000,
	.registry_problem_chars = 256,
	.registry_text_chars = 8192,
	.audit_max_bytes = 10 * 1024 * 1024,
	.audit_files = 5,
	.pin_definition_max = 65536,
	.max_kept_bytes = 4 << 20,
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
	policy_ask_stop();
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
	    "usage: mcpd [-dv] [--config FILE] [-s socket] [-S state_dir]\n"
	    "            [--max-message BYTES]\n"
	    "            [--call-timeout MS] [--load-timeout MS] [--log-lines N]\n"
	    "            [--max-clients N] [--max-client-requests N]\n"
	    "            [--max-client-output BYTES] [--max-servers N]\n"
	    "            [--max-http-requests N] [--max-http-sessions N]\n"
	    "            [--max-http-sessions-per-token N] [--http-session-idle MS]\n"
	    "            [--http-stream-after MS]\n"
	    "            [--http-header-timeout MS]\n"
	    "            [--ca-file PATH] [--dns-server IP[:PORT]]\n"
	    "            [--docker PATH] [--docker-timeout MS] [--docker-catalog REF]\n"
	    "            [--stop-grace MS] [--stop-force MS] [--upgrade-drain MS]\n"
	    "            [--upgrade-http-wait MS]\n"
	    "            [--secrets-key PATH]\n"
	    "            [--listen-http 127.0.0.1:PORT]\n"
	    "            [--registry URL] [--registry-allow-local]\n"
	    "            [--registry-timeout MS] [--registry-max-bytes BYTES]\n"
	    "            [--registry-contract PATH] [--catalog PATH]\n"
	    "            [--registry-problems N] [--registry-problem-chars N]\n"
	    "            [--registry-text-chars N]\n"
	    "            [--oauth-client-metadata-url URL]\n"
	    "            [--max-instructions BYTES] [--roots-timeout MS]\n"
	    "            [--tool-budget TOKENS]\n"
	    "            [--audit on|off] [--no-audit] [--audit-arguments]\n"
	    "            [--audit-required] [--audit-max-bytes BYTES]\n"
	    "            [--audit-files N] [--pin-definition-max BYTES]\n"
	    "            [--max-kept-bytes BYTES]\n"
	    "            [-V] [-h]\n"
	    "Supervises MCP servers for every agent of this user; see mcpd(8).\n"
	    "Each long option is also a \"name = value\" line of mcpd.conf\n"
	    "($XDG_CONFIG_HOME/mcpd/mcpd.conf, or --config FILE).\n");
	exit(status);
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

/* The settings (daemon/mcpd-options.c), then what follows from them. */
static void
mcpd_parse_options(int argc, char **argv, int *foreground, int *verbose)
{
	int ch = options_parse(argc, argv, foreground, verbose);

	if (ch == 'V') {
		printf("mcpd %s\n", MCPD_VERSION);
		exit(0);
	}
	if (ch != -1)
		mcpd_usage(ch == 'h' ? 0 : 2);
	if (mcpd_opts.registry == NULL)
		mcpd_opts.registry = xstrdup(MCPD_REGISTRY_DEFAULT);
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
	if (upgrade_state() != NULL)
		mcpd_lock_fd = (int)
		    json_integer_value(json_object_get(upgrade_state(),
			"lock"));
	else if ((mcpd_lock_fd = lock_state_dir(mcpd_opts.state_dir,
		      mcpd_opts.socket_path, &cause)) < 0)
		fatalx("%s",
		    cause != NULL ? cause : "cannot lock the state directory");
	if (tokens_open(mcpd_opts.state_dir, &cause) < 0)
		fatalx("tokens: %s", cause != NULL ? cause : "failed");
	if (generation_init(mcpd_opts.state_dir, &cause) < 0)
		fatalx("generations: %s", cause != NULL ? cause : "failed");
	if (identity_load(mcpd_opts.state_dir, &cause) < 0)
		fatalx("identity: %s", cause != NULL ? cause : "failed");
	store_open(mcpd_opts.state_dir, &mcpd_store);
	profile_open(mcpd_opts.state_dir);
	server_pins_open(mcpd_opts.state_dir);
	policy_open(mcpd_opts.state_dir);
	project_open(mcpd_opts.state_dir);
	if (profile_store_error() != NULL)
		log_warnx("profiles: %s", profile_store_error());
	if (policy_store_error() != NULL)
		log_warnx("policy: %s", policy_store_error());
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
	int fd = upgrade_state() != NULL ? control_upgrade_listen_fd() :
					   notify_listen_fd();
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
	upgrade_init(argv);
	mcpd_parse_options(argc, argv, &foreground, &verbose);
	upgrade_check_mode();
	/* Without -d, log to the journal when there is one. */
	to_journal = !foreground &&
	    access("/run/systemd/journal/socket", W_OK) == 0;
	log_init(to_journal ? log_journal : NULL, verbose, "mcpd");
	signal(SIGPIPE, SIG_IGN);
	mcpd_started_ms = mcpd_now_ms();
	/* An upgrade's state is read first: a binary that cannot falls back. */
	upgrade_state();
	if ((mcpd_base = event_base_new()) == NULL)
		fatalx("cannot create the event loop");
	mcpd_fit_nofile();
	mcpd_prepare_state();
	audit_open(mcpd_opts.state_dir, to_journal);
	child_init();
	/* The layers above the servers hear them before any server starts. */
	server_watch_add(&gateway_server_watch);
	server_watch_add(&httpd_server_watch);
	mcpd_sigterm = mcpd_signal_new(SIGTERM);
	mcpd_sigint = mcpd_signal_new(SIGINT);
	mcpd_sighup = mcpd_signal_new(SIGHUP);
	/* Refused before the control socket exists: nothing is left. */
	if (mcpd_opts.listen_http != NULL &&
	    (upgrade_state() != NULL ?
		    httpd_upgrade_adopt(mcpd_opts.listen_http,
			json_object_get(upgrade_state(), "http"), &cause) :
		    httpd_listen(mcpd_opts.listen_http, &cause)) < 0)
		fatalx("--listen-http %s: %s", mcpd_opts.listen_http,
		    cause != NULL ? cause : "cannot listen");
	mcpd_listen();
	log_info("mcpd %s listening on %s (state %s, %s)", MCPD_VERSION,
	    mcpd_opts.socket_path, mcpd_opts.state_dir, identity_did());
	notify_status("listening on %s", mcpd_opts.socket_path);
	if (upgrade_state() != NULL) {
		/* The run goes on: its containers are this process's. */
		docker_instance_set(json_string_value(
		    json_object_get(upgrade_state(), "docker_instance")));
		upgrade_adopt();
	} else {
		docker_reap();
		enable_restore();
	}
	notify_ready();
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
	profile_close();
	server_pins_close();
	policy_close();
	project_close();
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
