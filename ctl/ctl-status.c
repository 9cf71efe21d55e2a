/* SPDX-License-Identifier: ISC */
/* mcpctl status: the daemon's own state as "key: value" lines. */
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

/* Prints "key: value" when the result has the field. */
static void
ctl_status_field(const char *label, const json_t *v)
{
	char *text;

	if (v == NULL)
		return;
	text = print_value(v);
	printf("%s: %s\n", label, text != NULL ? text : "?");
	free(text);
}

static void
ctl_status_uptime(const json_t *v)
{
	long long s = json_integer_value(v);

	if (!json_is_integer(v))
		return;
	printf("uptime: ");
	if (s >= 86400)
		printf("%lldd ", s / 86400);
	if (s >= 3600)
		printf("%lldh ", s % 86400 / 3600);
	if (s >= 60)
		printf("%lldm ", s % 3600 / 60);
	printf("%llds\n", s % 60);
}

static long long
ctl_status_int(const json_t *obj, const char *key)
{
	return (long long)json_integer_value(json_object_get(obj, key));
}

static const char *
ctl_status_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/*
 * "docker: available (docker at /usr/bin/docker), engine 24.0.7 answers",
 * "... engine not answering: why", or "docker: unavailable (docker): why".
 */
static void
ctl_status_docker(const json_t *docker)
{
	const char *program = ctl_status_str(docker, "program");
	const char *cli = ctl_status_str(docker, "cli");
	const char *engine = ctl_status_str(docker, "engine");
	const char *version = ctl_status_str(docker, "version");
	const char *error = ctl_status_str(docker, "error");

	if (!json_is_true(json_object_get(docker, "available"))) {
		printf("docker: unavailable (%s)%s%s\n", program,
		    error != NULL ? ": " : "", error != NULL ? error : "");
		return;
	}
	printf("docker: available (%s", program);
	if (cli != NULL && strcmp(cli, program) != 0)
		printf(" at %s", cli);
	printf(")");
	if (engine != NULL && strcmp(engine, "answers") == 0)
		printf(", engine %s answers", version != NULL ? version : "");
	else if (engine != NULL)
		printf(", engine %s%s%s", engine, error != NULL ? ": " : "",
		    error != NULL ? error : "");
	printf("\n");
}

static bool ctl_status_is_all; /* --all: the settings at their defaults too */

/*
 * "settings (FILE):" and "  name = value (source)" for each setting not
 * at its default, or for all of them with --all.
 */
static void
ctl_status_settings(const json_t *options, const json_t *config)
{
	size_t i, defaults = 0;
	const json_t *o;

	printf("settings (%s%s):\n",
	    json_is_string(config) ? "file " : "no settings file",
	    json_is_string(config) ? json_string_value(config) : "");
	json_array_foreach(options, i, o) {
		const char *source = ctl_status_str(o, "source");
		char *value;

		if (source != NULL && strcmp(source, "default") == 0 &&
		    !ctl_status_is_all) {
			defaults++;
			continue;
		}
		value = print_value(json_object_get(o, "value"));
		printf("  %s = %s (%s)\n", ctl_status_str(o, "name"),
		    value != NULL ? value : "?", source != NULL ? source : "?");
		free(value);
	}
	if (defaults > 0)
		printf("  %zu more at their defaults (mcpctl status --all)\n",
		    defaults);
}

/*
 * "audit: PATH", "audit: off", or "audit: PATH cannot be written since
 * TIME: why (N records lost; calls go on unrecorded)".
 */
static void
ctl_status_audit(const json_t *audit)
{
	const char *path = ctl_status_str(audit, "path");
	const char *state = ctl_status_str(audit, "state");

	if (!json_is_true(json_object_get(audit, "on"))) {
		printf("audit: off\n");
		return;
	}
	if (state == NULL || strcmp(state, "failing") != 0) {
		printf("audit: %s%s\n", path,
		    json_is_true(json_object_get(audit, "required")) ?
			" (required)" :
			"");
		return;
	}
	printf(
	    "audit: %s cannot be written since %s: %s (%lld records lost; %s)\n",
	    path, ctl_status_str(audit, "since"),
	    ctl_status_str(audit, "error"), ctl_status_int(audit, "lost"),
	    json_is_true(json_object_get(audit, "required")) ?
		"calls are refused: --audit-required" :
		"calls go on unrecorded");
}

static void
ctl_status_print(const json_t *result)
{
	const json_t *docker = json_object_get(result, "docker");
	const json_t *servers = json_object_get(result, "servers");

	ctl_status_field("version", json_object_get(result, "version"));
	ctl_status_field("pid", json_object_get(result, "pid"));
	ctl_status_field("did", json_object_get(result, "did"));
	ctl_status_uptime(json_object_get(result, "uptime_s"));
	ctl_status_field("socket", json_object_get(result, "socket"));
	if (json_is_string(json_object_get(result, "http")))
		printf("http: %s (its token: mcpctl token)\n",
		    json_string_value(json_object_get(result, "http")));
	ctl_status_field("state dir", json_object_get(result, "state_dir"));
	if (json_is_object(servers))
		printf("servers: %lld total, %lld ready, %lld idle\n",
		    ctl_status_int(servers, "total"),
		    ctl_status_int(servers, "ready"),
		    ctl_status_int(servers, "idle"));
	if (ctl_status_int(servers, "held_tools") > 0)
		printf("held tools: %lld (mcpctl changes shows them)\n",
		    ctl_status_int(servers, "held_tools"));
	ctl_status_field("clients", json_object_get(result, "clients"));
	ctl_status_field("http sessions",
	    json_object_get(result, "http_sessions"));
	if (json_is_object(json_object_get(result, "audit")))
		ctl_status_audit(json_object_get(result, "audit"));
	if (json_is_object(docker))
		ctl_status_docker(docker);
	if (json_is_array(json_object_get(result, "options")))
		ctl_status_settings(json_object_get(result, "options"),
		    json_object_get(result, "config"));
}

static const struct option ctl_status_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_status_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":ah", ctl_status_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'a')
			return mcpctl_bad_option(cmd, c, argv);
		ctl_status_is_all = true;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/status", json_object(), ctl_status_print);
}

const struct mcpctl_cmd ctl_status_cmd = {
	.name = "status",
	.synopsis = "[--all]",
	.summary =
	    "show mcpd's version, pid, identity, uptime, paths, counts, whether the docker engine answers, and its settings with where each came from",
	.help =
	    "  -a, --all          every setting, those at their defaults too\n"
	    "  -h, --help         this text\n",
	.options = ctl_status_options,
	.exec = ctl_status_exec,
};
