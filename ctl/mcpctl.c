/* SPDX-License-Identifier: ISC */
/* mcpctl: global options, the command table, and the request round trip. */
#include <sys/random.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "jsonrpc.h"
#include "log.h"
#include "mcpctl.h"
#include "names.h"
#include "paths.h"
#include "xalloc.h"

static const struct mcpctl_cmd *const mcpctl_cmds[] = {
	&ctl_load_cmd,
	&ctl_import_cmd,
	&ctl_search_cmd,
	&ctl_catalog_cmd,
	&ctl_info_cmd,
	&ctl_versions_cmd,
	&ctl_unload_cmd,
	&ctl_reload_cmd,
	&ctl_disable_cmd,
	&ctl_enable_cmd,
	&ctl_rename_cmd,
	&ctl_set_cmd,
	&ctl_list_cmd,
	&ctl_inspect_cmd,
	&ctl_wait_cmd,
	&ctl_tools_cmd,
	&ctl_changes_cmd,
	&ctl_accept_cmd,
	&ctl_call_cmd,
	&ctl_logs_cmd,
	&ctl_clients_cmd,
	&ctl_audit_cmd,
	&ctl_secret_cmd,
	&ctl_bridge_cmd,
	&ctl_client_config_cmd,
	&ctl_token_cmd,
	&ctl_profile_cmd,
	&ctl_policy_cmd,
	&ctl_approvals_cmd,
	&ctl_approve_cmd,
	&ctl_deny_cmd,
	&ctl_project_cmd,
	&ctl_docker_catalog_cmd,
	&ctl_gateway_cmd,
	&ctl_auth_cmd,
	&ctl_status_cmd,
	&ctl_upgrade_cmd,
	&ctl_shutdown_cmd,
	&ctl_help_cmd,
	&ctl_version_cmd,
	NULL,
};

/* The commands that never start mcpd when none answers. */
static const struct mcpctl_cmd *const mcpctl_no_autostart[] = {
	&ctl_shutdown_cmd,
	&ctl_upgrade_cmd,
	&ctl_help_cmd,
	&ctl_version_cmd,
	NULL,
};

enum {
	MCPCTL_OPT_JSON = 256,
	MCPCTL_OPT_AGENT,
	MCPCTL_OPT_TIMEOUT,
};

static const struct option mcpctl_options[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, MCPCTL_OPT_JSON },
	{ "agent", required_argument, NULL, MCPCTL_OPT_AGENT },
	{ "request-timeout", required_argument, NULL, MCPCTL_OPT_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char mcpctl_global_usage[] =
    "usage: mcpctl [-s SOCKET] [--json] [--agent NAME] [--request-timeout SECONDS] COMMAND [ARGS]\n"
    "       mcpctl help [COMMAND] | version | -h | --help | -V | --version\n"
    "\n"
    "Control mcpd, the supervisor of MCP servers.\n";

static const char mcpctl_global_options[] =
    "  -s, --socket SOCKET  mcpd's control socket (default: %s)\n"
    "  --json               print mcpd's answer as one JSON line\n"
    "  --agent NAME         act for agent NAME (default: default)\n"
    "  --request-timeout SECONDS\n"
    "                       how long mcpd may stay silent before mcpctl\n"
    "                       gives up (default 30, or MCPCTL_TIMEOUT; 0: never)\n"
    "  -h, --help           this text; 'mcpctl help COMMAND' for one\n"
    "  -V, --version        print the version\n"
    "\n"
    "The global options may come before or after COMMAND (not after --, nor\n"
    "after load's CMD, whose words are the server's).\n"
    "\n"
    "exit status:\n"
    "  0 success          3 mcpd unreachable, silent, or it hung up\n"
    "  1 mcpd error       4 outcome unknown: the call may have run\n"
    "  2 usage error      5 the tool answered with isError\n";

static void
mcpctl_global_help(void)
{
	const struct mcpctl_cmd *cmd;
	char *sock = paths_socket_default();

	printf("%s\ncommands:\n", mcpctl_global_usage);
	for (size_t i = 0; (cmd = mcpctl_cmds[i]) != NULL; i++)
		printf("  %s%s%s\n      %s%s%s%s\n", cmd->name,
		    cmd->synopsis[0] != '\0' ? " " : "", cmd->synopsis,
		    cmd->summary, cmd->alias != NULL ? " (alias: " : "",
		    cmd->alias != NULL ? cmd->alias : "",
		    cmd->alias != NULL ? ")" : "");
	printf("\noptions:\n");
	printf(mcpctl_global_options, sock != NULL ? sock : "?");
	free(sock);
}

/* mcpctl alone: the usage and the command names, on stdout. */
static int
mcpctl_short_usage(void)
{
	const char *sep = "";

	printf("%s\ncommands: ", mcpctl_global_usage);
	for (size_t i = 0; mcpctl_cmds[i] != NULL; i++) {
		printf("%s%s", sep, mcpctl_cmds[i]->name);
		sep = ", ";
	}
	printf(
	    "\nsee 'mcpctl --help' for the options, 'mcpctl help COMMAND' for one command\n");
	return MCPCTL_EXIT_OK;
}

int
mcpctl_help(const struct mcpctl_cmd *cmd)
{
	printf("usage: mcpctl %s%s%s\n%s\n", cmd->name,
	    cmd->synopsis[0] != '\0' ? " " : "", cmd->synopsis, cmd->summary);
	if (cmd->help != NULL)
		printf("\noptions:\n%s", cmd->help);
	return MCPCTL_EXIT_OK;
}

int
mcpctl_usage(const struct mcpctl_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("mcpctl: ", stderr);
	if (cmd != NULL)
		fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee mcpctl %s%s--help\n",
	    cmd != NULL ? cmd->name : "", cmd != NULL ? " " : "");
	return MCPCTL_EXIT_USAGE;
}

int
mcpctl_getopt(int argc, char **argv, const char *optstring,
    const struct option *longopts)
{
	opterr = 0;
	return getopt_long(argc, argv, optstring, longopts, NULL);
}

int
mcpctl_bad_option(const struct mcpctl_cmd *cmd, int c, char **argv)
{
	const char *given = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	if (optopt != 0 && strncmp(given, "--", 2) != 0)
		given = shortopt;
	if (c == ':')
		return mcpctl_usage(cmd, "option '%s' needs a value", given);
	return mcpctl_usage(cmd, "unknown option '%s'", given);
}

int
mcpctl_positional(const struct mcpctl_cmd *cmd, int argc, char **argv, int min,
    int max, const char *missing)
{
	if (argc - optind < min)
		return mcpctl_usage(cmd, "missing %s", missing);
	if (argc - optind > max)
		return mcpctl_usage(cmd, "unexpected argument '%s'",
		    argv[optind + max]);
	return 0;
}

static const struct option mcpctl_help_only[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
mcpctl_parse_plain(const struct mcpctl_cmd *cmd, int argc, char **argv)
{
	int c = mcpctl_getopt(argc, argv, ":h", mcpctl_help_only);

	if (c == -1)
		return -1;
	return c == 'h' ? mcpctl_help(cmd) : mcpctl_bad_option(cmd, c, argv);
}

const struct option mcpctl_target_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
mcpctl_parse_target(const struct mcpctl_cmd *cmd, int argc, char **argv,
    bool takes_timeout, json_t **ret_params)
{
	json_int_t ms = 0;
	int c, r = 0;

	while (r == 0 &&
	    (c = mcpctl_getopt(argc, argv, ":h", mcpctl_target_options)) !=
		-1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 't' || !takes_timeout)
			return mcpctl_bad_option(cmd, c, argv);
		r = mcpctl_parse_positive(cmd, "--timeout", optarg,
		    "milliseconds", &ms);
	}
	if (r != 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	*ret_params = json_pack("{s:s}", "target", argv[optind]);
	if (ms > 0)
		json_object_set_new(*ret_params, "timeout_ms",
		    json_integer(ms));
	return -1;
}

int
mcpctl_check_name(const struct mcpctl_cmd *cmd, const char *what,
    const char *name)
{
	if (names_valid(name))
		return 0;
	return mcpctl_usage(cmd,
	    "invalid %s '%s': use letters, digits, '_' and '-' (at most %d), starting with a letter or digit",
	    what, name, NAMES_MAX);
}

int
mcpctl_parse_duration(const struct mcpctl_cmd *cmd, const char *opt,
    const char *s, json_int_t *ret_ms)
{
	static const struct {
		const char *unit;
		long long ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "h", 3600000 } };
	char *end;
	long long v;

	if (strcmp(s, "never") == 0 || strcmp(s, "0") == 0) {
		*ret_ms = 0;
		return 0;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == 0 && end != s && v > 0)
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
			if (strcmp(end, units[i].unit) == 0 &&
			    v <= MCPCTL_DURATION_MAX_MS / units[i].ms) {
				*ret_ms = v * units[i].ms;
				return 0;
			}
	return mcpctl_usage(cmd,
	    "%s needs a duration such as 500ms, 30s, 10m or 2h (at most a week), or 0 or never, not '%s'",
	    opt, s);
}

int
mcpctl_parse_positive(const struct mcpctl_cmd *cmd, const char *opt,
    const char *s, const char *unit, json_int_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > INT32_MAX)
		return mcpctl_usage(cmd,
		    "%s needs a positive number of %s, not '%s'", opt, unit, s);
	*ret = v;
	return 0;
}

/* The connection broke or the answer was unusable: say so, pick the status. */
static int
mcpctl_conn_failed(struct mcpctl *m, int r, char *cause)
{
	print_err("%s", cause != NULL ? cause : strerror(-r));
	free(cause);
	if (r == -EMSGSIZE || r == -EBADMSG)
		return MCPCTL_EXIT_ERROR;
	if (r == -ETIMEDOUT)
		return MCPCTL_EXIT_UNREACHABLE; /* the cause says it all */
	fprintf(stderr, "mcpd at %s may have stopped or crashed; ",
	    m->socket_path);
	fprintf(stderr, "see its log: journalctl --user -u mcpd\n");
	return MCPCTL_EXIT_UNREACHABLE;
}

static int
mcpctl_connect(struct mcpctl *m)
{
	json_t *params, *result;
	int r;

	r = conn_open(m->socket_path, &m->conn);
	if ((r == -ENOENT || r == -ECONNREFUSED) && m->is_autostart &&
	    !autostart_is_disabled()) {
		if ((r = autostart_mcpd(m->socket_path)) != 0)
			return r;
		r = conn_open(m->socket_path, &m->conn);
	}
	if (r < 0) {
		if (r == -ETIMEDOUT)
			print_err(
			    "mcpd at %s did not accept the connection within %g s; is it stopped?",
			    m->socket_path, conn_get_timeout() / 1000.0);
		else
			print_unreachable(m->socket_path, -r);
		if ((r == -ENOENT || r == -ECONNREFUSED) && m->is_autostart &&
		    autostart_is_disabled())
			fputs(
			    "mcpctl did not start mcpd itself: MCPD_NO_AUTOSTART is set\n",
			    stderr);
		return MCPCTL_EXIT_UNREACHABLE;
	}
	if (m->agent == NULL)
		return 0;
	params = json_pack("{s:s, s:{s:s, s:s}}", "agent", m->agent, "client",
	    "name", "mcpctl", "version", MCPD_VERSION);
	r = mcpctl_request(m, "mcpd/hello", params, &result);
	if (r == 0)
		json_decref(result);
	return r;
}

int
mcpctl_error(const struct mcpctl *m, const json_t *error)
{
	print_error(error, m->is_json);
	if (jsonrpc_error_get_kind(error) == ERRORS_OUTCOME_UNKNOWN)
		return MCPCTL_EXIT_UNKNOWN;
	return MCPCTL_EXIT_ERROR;
}

int
mcpctl_request(struct mcpctl *m, const char *method, json_t *params,
    json_t **ret_result)
{
	return mcpctl_request_error(m, method, params, ret_result, NULL);
}

int
mcpctl_request_error(struct mcpctl *m, const char *method, json_t *params,
    json_t **ret_result, json_t **ret_error)
{
	struct jsonrpc_msg jm;
	json_t *msg;
	char *cause = NULL;
	int r;

	if (m->conn == NULL && (r = mcpctl_connect(m)) != 0) {
		json_decref(params);
		return r;
	}
	if ((r = conn_call(m->conn, method, params, &msg, &cause)) < 0)
		return mcpctl_conn_failed(m, r, cause);
	/* conn_call returns only a classified result or error. */
	jsonrpc_classify(msg, &jm, NULL);
	if (jm.type == JSONRPC_ERROR && ret_error != NULL) {
		*ret_error = json_incref(jm.error);
		json_decref(msg);
		return MCPCTL_EXIT_ERROR;
	}
	if (jm.type == JSONRPC_ERROR) {
		r = mcpctl_error(m, jm.error);
		json_decref(msg);
		return r;
	}
	*ret_result = json_incref(jm.result);
	json_decref(msg);
	return 0;
}

int
mcpctl_run(struct mcpctl *m, const char *method, json_t *params,
    void (*human)(const json_t *result))
{
	json_t *result;
	int r;

	if ((r = mcpctl_request(m, method, params, &result)) != 0)
		return r;
	if (m->is_json)
		print_json(result);
	else
		human(result);
	json_decref(result);
	return 0;
}

/* Every argument ends up in JSON, which carries only UTF-8; 0 or 2. */
static int
mcpctl_check_utf8(int argc, char **argv)
{
	json_t *s;

	for (int i = 1; i < argc; i++) {
		if ((s = json_string(argv[i])) == NULL)
			return mcpctl_usage(NULL,
			    "argument %d is not valid UTF-8; mcpd can only be sent UTF-8 text",
			    i);
		json_decref(s);
	}
	return 0;
}

/* Sets the request timeout from SECONDS (what says where it came from). */
static int
mcpctl_set_timeout(const char *what, const char *text)
{
	char *end;
	double secs;

	errno = 0;
	secs = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !(secs >= 0) ||
	    secs > 86400 * 365)
		return mcpctl_usage(NULL,
		    "%s needs a number of seconds (0 for no limit), not '%s'",
		    what, text);
	conn_set_timeout(secs > 0 && secs < 0.001 ? 1 : (int)(secs * 1000));
	return 0;
}

/* Parses the global options, now first; -1 to go on, else the exit status. */
static int
mcpctl_parse_global(struct mcpctl *m, int argc, char **argv)
{
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, "+:s:hV", mcpctl_options)) !=
	    -1) {
		switch (c) {
		case 's':
			m->socket_path = optarg;
			break;
		case MCPCTL_OPT_JSON:
			m->is_json = true;
			break;
		case MCPCTL_OPT_AGENT:
			if ((r = mcpctl_check_name(NULL, "agent", optarg)))
				return r;
			m->agent = optarg;
			break;
		case MCPCTL_OPT_TIMEOUT:
			if ((r = mcpctl_set_timeout("--request-timeout",
				 optarg)) != 0)
				return r;
			break;
		case 'h':
			mcpctl_global_help();
			return MCPCTL_EXIT_OK;
		case 'V':
			printf("mcpctl %s\n", MCPD_VERSION);
			return MCPCTL_EXIT_OK;
		default:
			return mcpctl_bad_option(NULL, c, argv);
		}
	}
	if (optind >= argc)
		return mcpctl_short_usage();
	return -1;
}

/* The command named name (or by its alias), or NULL. */
const struct mcpctl_cmd *
mcpctl_find(const char *name)
{
	const struct mcpctl_cmd *cmd;

	for (size_t i = 0; (cmd = mcpctl_cmds[i]) != NULL; i++)
		if (strcmp(cmd->name, name) == 0 ||
		    (cmd->alias != NULL && strcmp(cmd->alias, name) == 0))
			return cmd;
	return NULL;
}

int
mcpctl_unknown_command(const char *name)
{
	const struct mcpctl_cmd *cmd, *best = NULL;
	size_t d, best_d = 3; /* at most 2 edits away */

	for (size_t i = 0; (cmd = mcpctl_cmds[i]) != NULL; i++)
		if ((d = nearest_distance(name, cmd->name)) < best_d) {
			best = cmd;
			best_d = d;
		}
	if (best != NULL)
		return mcpctl_usage(NULL,
		    "unknown command '%s'; did you mean '%s'?", name,
		    best->name);
	return mcpctl_usage(NULL, "unknown command '%s'", name);
}

/* The global option argv[i] is, with its value in argv[i + 1]: 1, 2, or 0. */
static int
mcpctl_global_words(char **argv, int argc, int i)
{
	static const char *const with_value[] = { "--socket", "--agent",
		"--request-timeout", NULL };
	const char *w = argv[i];
	size_t len = strcspn(w, "=");

	if (strcmp(w, "--json") == 0)
		return 1;
	if (strncmp(w, "-s", 2) == 0)
		return w[2] != '\0' ? 1 : 1 + (i + 1 < argc);
	for (size_t k = 0; with_value[k] != NULL; k++)
		if (strlen(with_value[k]) == len &&
		    strncmp(w, with_value[k], len) == 0)
			return w[len] == '=' ? 1 : 1 + (i + 1 < argc);
	return 0;
}

/* Whether the option word w of cmd takes the next word as its value. */
static bool
mcpctl_takes_value(const struct mcpctl_cmd *cmd, const char *w)
{
	const struct option *o;

	if (cmd == NULL || cmd->options == NULL || strchr(w, '=') != NULL)
		return false;
	for (o = cmd->options; o->name != NULL; o++) {
		if (o->has_arg != required_argument)
			continue;
		if (strncmp(w, "--", 2) == 0 ? strcmp(w + 2, o->name) == 0 :
					       (w[1] == o->val && w[2] == '\0'))
			return true;
	}
	return false;
}

/*
 * Moves the global options that come after COMMAND before it, in order, so
 * that getopt sees them first: up to "--", and for load up to its CMD. A
 * word that is the value of the command's own option stays.
 */
static void
mcpctl_hoist(int argc, char **argv)
{
	char **globals = calloc(argc + 1, sizeof *globals);
	char **rest = calloc(argc + 1, sizeof *rest);
	const struct mcpctl_cmd *cmd = NULL;
	int ng = 0, nr = 0, i = 1, n;
	bool has_cmd = false;

	if (globals == NULL || rest == NULL)
		goto out;
	while (i < argc) {
		const char *w = argv[i];

		if (strcmp(w, "--") == 0)
			break;
		if (has_cmd && (n = mcpctl_global_words(argv, argc, i)) > 0) {
			while (n-- > 0)
				globals[ng++] = argv[i++];
			continue;
		}
		if (!has_cmd && w[0] == '-' && w[1] != '\0') {
			/* Before COMMAND, getopt reads everything. */
			if ((n = mcpctl_global_words(argv, argc, i)) == 0)
				n = 1;
			while (n-- > 0)
				globals[ng++] = argv[i++];
			continue;
		}
		if (!has_cmd) {
			has_cmd = true;
			cmd = mcpctl_find(w);
			rest[nr++] = argv[i++];
			continue;
		}
		rest[nr++] = argv[i++];
		if (w[0] == '-' && w[1] != '\0') {
			if (mcpctl_takes_value(cmd, w) && i < argc)
				rest[nr++] = argv[i++];
		} else if (cmd != NULL && cmd->is_tail != NULL &&
		    cmd->is_tail(w)) {
			break;
		}
	}
	while (i < argc)
		rest[nr++] = argv[i++];
	memcpy(argv + 1, globals, ng * sizeof *argv);
	memcpy(argv + 1 + ng, rest, nr * sizeof *argv);
out:
	free(globals);
	free(rest);
}

/*
 * jansson's object hashes get a random seed from one getrandom(2) call
 * (its own way opens and reads /dev/urandom: three calls at every start).
 * A seed that could be guessed would let a server's tool list make
 * mcpctl's parse slow; when getrandom fails, jansson seeds itself.
 */
static void
mcpctl_seed(void)
{
	uint32_t seed = 0;

	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == sizeof seed &&
	    seed != 0)
		json_object_seed(seed);
}

int
main(int argc, char **argv)
{
	struct mcpctl m = { 0 };
	const struct mcpctl_cmd *cmd;
	const char *env;
	char *sock = NULL;
	int r;

	log_init(NULL, 0, "mcpctl"); /* what xmalloc says when it fails */
	xalloc_json();
	signal(SIGPIPE, SIG_IGN);
	mcpctl_seed();
	if ((r = mcpctl_check_utf8(argc, argv)) != 0)
		return r;
	env = getenv("MCPCTL_TIMEOUT");
	if (env != NULL && env[0] != '\0' &&
	    (r = mcpctl_set_timeout("MCPCTL_TIMEOUT", env)) != 0)
		return r;
	mcpctl_hoist(argc, argv);
	if ((r = mcpctl_parse_global(&m, argc, argv)) >= 0)
		return r;
	if ((cmd = mcpctl_find(argv[optind])) == NULL)
		return mcpctl_unknown_command(argv[optind]);
	if (m.socket_path == NULL) {
		if ((sock = paths_socket_default()) == NULL) {
			print_err("cannot name the default socket: %s",
			    strerror(ENOMEM));
			return MCPCTL_EXIT_ERROR;
		}
		m.socket_path = sock;
	}
	m.is_autostart = true;
	for (size_t i = 0; mcpctl_no_autostart[i] != NULL; i++)
		if (mcpctl_no_autostart[i] == cmd)
			m.is_autostart = false;
	argc -= optind;
	argv += optind;
	optind = 0; /* glibc: start afresh on the command's argv */
	r = cmd->exec(&m, cmd, argc, argv);
	conn_free(m.conn);
	free(sock);
	if (fflush(stdout) != 0 && r == MCPCTL_EXIT_OK)
		r = MCPCTL_EXIT_ERROR;
	return r;
}

/* mcpctl help [COMMAND]: the global help, or COMMAND --help. */
static int
mcpctl_help_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const struct mcpctl_cmd *which;
	int r;

	(void)m;
	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0)
		return r;
	if (optind == argc) {
		mcpctl_global_help();
		return MCPCTL_EXIT_OK;
	}
	if ((which = mcpctl_find(argv[optind])) == NULL)
		return mcpctl_unknown_command(argv[optind]);
	return mcpctl_help(which);
}

const struct mcpctl_cmd ctl_help_cmd = {
	.name = "help",
	.synopsis = "[COMMAND]",
	.summary =
	    "print the help of mcpctl, or of one command (as COMMAND --help)",
	.help = "  -h, --help         this text\n",
	.exec = mcpctl_help_exec,
};

/* mcpctl version: mcpctl's, and mcpd's when it answers. */
static int
mcpctl_version_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const json_t *daemon;
	json_t *msg = NULL, *out;
	struct jsonrpc_msg jm;
	char *cause = NULL;
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0 ||
	    (r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	/* Not mcpctl_request: a daemon that is not there is no error here. */
	if ((r = conn_open(m->socket_path, &m->conn)) == 0)
		r = conn_call(m->conn, "mcpd/hello",
		    json_pack("{s:{s:s, s:s}}", "client", "name", "mcpctl",
			"version", MCPD_VERSION),
		    &msg, &cause);
	if (r == 0 && jsonrpc_classify(msg, &jm, NULL) == 0 &&
	    jm.type == JSONRPC_RESULT)
		daemon = json_object_get(jm.result, "daemon");
	else
		daemon = NULL;
	if (m->is_json) {
		out = json_pack("{s:s, s:O?}", "mcpctl", MCPD_VERSION, "mcpd",
		    daemon);
		print_json(out);
		json_decref(out);
	} else {
		printf("mcpctl %s\n", MCPD_VERSION);
		if (daemon != NULL)
			printf("mcpd %s (pid %lld) at %s\n",
			    json_string_value(json_object_get(daemon,
				"version")),
			    (long long)
				json_integer_value(json_object_get(daemon,
				    "pid")),
			    m->socket_path);
		else
			printf("mcpd: no answer at %s (%s)\n", m->socket_path,
			    cause != NULL ? cause :
				r < 0	  ? strerror(-r) :
					    "it answered with an error");
	}
	free(cause);
	json_decref(msg);
	return MCPCTL_EXIT_OK;
}

const struct mcpctl_cmd ctl_version_cmd = {
	.name = "version",
	.synopsis = "",
	.summary = "print the version of mcpctl, and of mcpd when it answers",
	.help = "  -h, --help         this text\n",
	.exec = mcpctl_version_exec,
};
