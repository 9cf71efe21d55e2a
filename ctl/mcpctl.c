/* SPDX-License-Identifier: ISC */
/* mcpctl: global options, the command table, and the request round trip. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "jsonrpc.h"
#include "mcpctl.h"
#include "names.h"
#include "paths.h"

static const struct mcpctl_cmd *const mcpctl_cmds[] = {
	&ctl_load_cmd,
	&ctl_import_cmd,
	&ctl_unload_cmd,
	&ctl_reload_cmd,
	&ctl_list_cmd,
	&ctl_tools_cmd,
	&ctl_call_cmd,
	&ctl_logs_cmd,
	&ctl_secret_cmd,
	&ctl_status_cmd,
	&ctl_shutdown_cmd,
	NULL,
};

enum {
	MCPCTL_OPT_JSON = 256,
	MCPCTL_OPT_AGENT,
};

static const struct option mcpctl_options[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, MCPCTL_OPT_JSON },
	{ "agent", required_argument, NULL, MCPCTL_OPT_AGENT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static const char mcpctl_global_usage[] =
    "usage: mcpctl [-s SOCKET] [--json] [--agent NAME] COMMAND [ARGS]\n"
    "       mcpctl -h | --help | -V | --version\n"
    "\n"
    "Control mcpd, the supervisor of MCP servers.\n";

static const char mcpctl_global_options[] =
    "  -s, --socket SOCKET  mcpd's control socket (default: %s)\n"
    "  --json               print mcpd's answer as one JSON line\n"
    "  --agent NAME         act for agent NAME (default: default)\n"
    "  -h, --help           this text; 'mcpctl COMMAND --help' for one\n"
    "  -V, --version        print the version\n"
    "\n"
    "exit status:\n"
    "  0 success          3 mcpd unreachable, or it hung up\n"
    "  1 mcpd error       4 outcome unknown: the call may have run\n"
    "  2 usage error      5 the tool answered with isError\n";

static void
mcpctl_global_help(void)
{
	const struct mcpctl_cmd *cmd;
	char *sock = paths_socket_default();

	printf("%s\ncommands:\n", mcpctl_global_usage);
	for (size_t i = 0; (cmd = mcpctl_cmds[i]) != NULL; i++)
		printf("  %s%s%s\n      %s\n", cmd->name,
		    cmd->synopsis[0] != '\0' ? " " : "", cmd->synopsis,
		    cmd->summary);
	printf("\noptions:\n");
	printf(mcpctl_global_options, sock != NULL ? sock : "?");
	free(sock);
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

/* Whether opt ("--json", "-s", "--socket=x") is one of mcpctl_options. */
static bool
mcpctl_is_global(const char *opt)
{
	const struct option *o;

	if (opt[1] != '-')
		return strchr("sV", opt[1]) != NULL;
	for (o = mcpctl_options; o->name != NULL; o++)
		if (strncmp(opt + 2, o->name, strcspn(opt + 2, "=")) == 0 &&
		    o->name[strcspn(opt + 2, "=")] == '\0')
			return strcmp(o->name, "help") != 0;
	return false;
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
	if (cmd != NULL && mcpctl_is_global(given))
		return mcpctl_usage(cmd, "global option '%s' goes before %s",
		    given, cmd->name);
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

	if ((r = conn_open(m->socket_path, &m->conn)) < 0) {
		print_unreachable(m->socket_path, -r);
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
mcpctl_request(struct mcpctl *m, const char *method, json_t *params,
    json_t **ret_result)
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
	if (jm.type == JSONRPC_ERROR) {
		print_error(jm.error, m->is_json);
		r = MCPCTL_EXIT_ERROR;
		if (jsonrpc_error_get_kind(jm.error) == ERRORS_OUTCOME_UNKNOWN)
			r = MCPCTL_EXIT_UNKNOWN;
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

/* Parses the options before COMMAND; -1 to go on, else the exit status. */
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
		return mcpctl_usage(NULL, "missing COMMAND");
	return -1;
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

static const struct mcpctl_cmd *
mcpctl_find(const char *name)
{
	for (size_t i = 0; mcpctl_cmds[i] != NULL; i++)
		if (strcmp(mcpctl_cmds[i]->name, name) == 0)
			return mcpctl_cmds[i];
	return NULL;
}

int
main(int argc, char **argv)
{
	struct mcpctl m = { 0 };
	const struct mcpctl_cmd *cmd;
	char *sock = NULL;
	int r;

	signal(SIGPIPE, SIG_IGN);
	if ((r = mcpctl_check_utf8(argc, argv)) != 0 ||
	    (r = mcpctl_parse_global(&m, argc, argv)) >= 0)
		return r;
	if ((cmd = mcpctl_find(argv[optind])) == NULL)
		return mcpctl_usage(NULL, "unknown command '%s'", argv[optind]);
	if (m.socket_path == NULL) {
		if ((sock = paths_socket_default()) == NULL) {
			print_err("cannot name the default socket: %s",
			    strerror(ENOMEM));
			return MCPCTL_EXIT_ERROR;
		}
		m.socket_path = sock;
	}
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
