/* SPDX-License-Identifier: ISC */
/* mcpctl auth: log in to a remote server with OAuth, see it, log out. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpctl.h"
#include "names.h"

extern char **environ;

static bool ctl_auth_no_browser;

/* Whether a graphical session can show a browser. */
static bool
ctl_auth_has_display(void)
{
	const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");

	return (x != NULL && x[0] != '\0') || (w != NULL && w[0] != '\0');
}

void
ctl_auth_open_browser(const char *url)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "xdg-open", (char *)(uintptr_t)url, NULL };
	pid_t pid;

	if (ctl_auth_no_browser || !ctl_auth_has_display() ||
	    strncmp(url, "http", 4) != 0)
		return;
	/* Its output would mix with ours; it is not waited for. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null",
	    O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
	    O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null",
	    O_WRONLY, 0);
	if (posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ) != 0)
		fprintf(stderr,
		    "mcpctl: cannot run xdg-open; open the URL yourself\n");
	posix_spawn_file_actions_destroy(&fa);
}

/* The URL of an authorize stage: the word after "open ". */
char *
ctl_auth_url_of(const char *message)
{
	const char *p;

	if (message == NULL || strncmp(message, "open ", 5) != 0)
		return NULL;
	p = message + 5;
	return strndup(p, strcspn(p, " "));
}

/* A server's text on our terminal: no control characters. */
static void
ctl_auth_put(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
}

static void
ctl_auth_progress(void *arg, json_int_t id, const char *method,
    const json_t *params)
{
	const char *stage = json_string_value(json_object_get(params, "stage"));
	const char *url = json_string_value(json_object_get(params, "url"));
	const char *server = json_string_value(json_object_get(params,
	    "server"));

	(void)arg;
	if (strcmp(method, "mcpd/progress") != 0 ||
	    json_integer_value(json_object_get(params, "request")) != id ||
	    stage == NULL || strcmp(stage, "authorize") != 0 || url == NULL)
		return;
	fprintf(stderr,
	    "To authorize mcpd for %s, open this URL in a browser:\n\n  ",
	    server != NULL ? server : "the server");
	ctl_auth_put(stderr, url);
	fprintf(stderr, "\n\nmcpctl waits for the login (Ctrl-C gives up).\n");
	ctl_auth_open_browser(url);
}

static void
ctl_auth_print_one(const json_t *st)
{
	static const char *const keys[] = { "state", "issuer", "scope",
		"expires_at", "client_id", "registration", "authorization_url",
		"error", NULL };
	const json_t *v;
	char *text;

	printf("%s\n",
	    json_string_value(json_object_get(st, "server")) != NULL ?
		json_string_value(json_object_get(st, "server")) :
		"-");
	for (size_t i = 0; keys[i] != NULL; i++) {
		if ((v = json_object_get(st, keys[i])) == NULL)
			continue;
		text = print_value(v);
		printf("  %-18s ", keys[i]);
		ctl_auth_put(stdout, text);
		putchar('\n');
		free(text);
	}
	if ((v = json_object_get(st, "has_refresh_token")) != NULL)
		printf("  %-18s %s\n", "refresh_token",
		    json_is_true(v) ? "held" : "none");
}

static void
ctl_auth_print_status(const json_t *result)
{
	const json_t *list = json_object_get(result, "servers"), *st;
	size_t i;

	if (list == NULL) {
		ctl_auth_print_one(result);
		return;
	}
	if (json_array_size(list) == 0)
		printf("no remote servers\n");
	json_array_foreach(list, i, st)
		ctl_auth_print_one(st);
}

static void
ctl_auth_print_login(const json_t *result)
{
	if (json_object_get(result, "tools") != NULL) {
		ctl_load_print_result("logged in; reloaded", result);
		return;
	}
	printf("logged in: ");
	ctl_auth_put(stdout,
	    json_string_value(json_object_get(result, "server")));
	printf(" is %s", json_string_value(json_object_get(result, "state")));
	if (json_object_get(result, "scope") != NULL) {
		printf(" (scope ");
		ctl_auth_put(stdout,
		    json_string_value(json_object_get(result, "scope")));
		printf(")");
	}
	putchar('\n');
}

static void
ctl_auth_print_logout(const json_t *result)
{
	const char *server = json_string_value(json_object_get(result,
	    "server"));

	printf(json_is_true(json_object_get(result, "removed")) ?
		"logged out of %s: its tokens and registration are removed\n" :
		"%s held no saved authorization; nothing removed\n",
	    server != NULL ? server : "-");
}

static const struct option ctl_auth_options[] = {
	{ "timeout", required_argument, NULL, 't' },
	{ "no-browser", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_auth_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	json_int_t timeout = 0;
	const char *sub;
	json_t *params;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":t:nh", ctl_auth_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'n')
			ctl_auth_no_browser = true;
		else if (c == 't') {
			if ((r = mcpctl_parse_positive(cmd, "--timeout", optarg,
				 "milliseconds", &timeout)) != 0)
				return r;
		} else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if (optind >= argc)
		return mcpctl_usage(cmd, "missing login, status or logout");
	sub = argv[optind++];
	if (strcmp(sub, "status") == 0) {
		if ((r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0)
			return r;
		params = optind < argc ?
		    json_pack("{s:s}", "server", argv[optind]) :
		    json_object();
		return mcpctl_run(m, "mcpd/auth-status", params,
		    ctl_auth_print_status);
	}
	if (strcmp(sub, "login") != 0 && strcmp(sub, "logout") != 0)
		return mcpctl_usage(cmd,
		    "unknown auth command '%s': login, status or logout", sub);
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	params = json_pack("{s:s}", "server", argv[optind]);
	if (strcmp(sub, "logout") == 0)
		return mcpctl_run(m, "mcpd/auth-logout", params,
		    ctl_auth_print_logout);
	if (timeout > 0)
		json_object_set_new(params, "timeout_ms",
		    json_integer(timeout));
	conn_set_notify(ctl_auth_progress, NULL);
	return mcpctl_run(m, "mcpd/auth-login", params, ctl_auth_print_login);
}

const struct mcpctl_cmd ctl_auth_cmd = {
	.name = "auth",
	.synopsis =
	    "login [--timeout MS] [--no-browser] SERVER | status [SERVER] | logout SERVER",
	.summary = "log in to a remote server with OAuth, show or remove it",
	.help =
	    "  -t, --timeout MS   login: how long to wait for the browser\n"
	    "                     (default 600000, ten minutes)\n"
	    "  -n, --no-browser   login: print the URL, do not run xdg-open\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "login prints the authorization URL of SERVER (a remote server\n"
	    "that asks for OAuth), opens it with xdg-open when DISPLAY or\n"
	    "WAYLAND_DISPLAY is set, and waits until the browser comes back\n"
	    "to mcpd's listener on 127.0.0.1; a server that had failed for\n"
	    "want of a login is then loaded again. status shows what mcpd\n"
	    "holds (state, issuer, scope, expiry; never a token); logout\n"
	    "removes its tokens and client registration. Tokens live in\n"
	    "mcpd's encrypted secret store only.\n",
	.exec = ctl_auth_exec,
	.options = ctl_auth_options,
};
