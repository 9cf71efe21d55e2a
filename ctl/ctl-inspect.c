/* SPDX-License-Identifier: ISC */
/* mcpctl inspect: everything mcpd knows about one server, values masked. */
#define _GNU_SOURCE 1 /* asprintf */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "textesc.h"

/* "label:" padded, then the value as text; nothing for null or absent. */
static void
ctl_inspect_field(const char *label, const json_t *v)
{
	char *text;

	if (v == NULL || json_is_null(v) ||
	    (json_is_array(v) && json_array_size(v) == 0) ||
	    (json_is_object(v) && json_object_size(v) == 0))
		return;
	text = print_value(v);
	printf("%-12s %s\n", label, text != NULL ? text : "?");
	free(text);
}

/* A string vector as one line of words. */
static void
ctl_inspect_words(const char *label, const json_t *a)
{
	const json_t *w;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return;
	printf("%-12s", label);
	json_array_foreach(a, i, w)
		printf(" %s",
		    json_string_value(w) ? json_string_value(w) : "?");
	printf("\n");
}

/* "K=V" pairs of an object on one line, in its (sorted) order. */
static void
ctl_inspect_pairs(const char *label, const json_t *obj)
{
	const char *k;
	json_t *v;

	if (!json_is_object(obj) || json_object_size(obj) == 0)
		return;
	printf("%-12s", label);
	json_object_foreach((json_t *)(uintptr_t)obj, k, v) {
		/* A value shown (--show-env) may hold anything: escaped. */
		const char *s = json_string_value(v) ? json_string_value(v) :
						       "?";
		char *esc = textesc(s, strlen(s), false);

		printf(" %s=%s", k, esc != NULL ? esc : "?");
		free(esc);
	}
	printf("\n");
}

/* "TIME (2m ago)", or the time alone. */
static void
ctl_inspect_time(const char *label, const char *prefix, const char *at)
{
	char *ago = at != NULL ? print_ago(at) : NULL;

	if (at == NULL)
		return;
	printf("%-12s %s%s%s%s%s\n", label, prefix, at, ago ? " (" : "",
	    ago ? ago : "", ago ? ")" : "");
	free(ago);
}

/* The server's instructions, each line indented under the label. */
static void
ctl_inspect_instructions(const char *text)
{
	const char *line, *end;
	char *esc;

	if (text == NULL)
		return;
	printf("%-12s\n", "instructions:");
	for (line = text; line != NULL; line = end != NULL ? end + 1 : NULL) {
		end = strchr(line, '\n');
		/* What a server says reaches a terminal: controls escaped. */
		esc = textesc(line,
		    end != NULL ? (size_t)(end - line) : strlen(line), false);
		printf("  %s\n", esc != NULL ? esc : "?");
		free(esc);
	}
}

static const char *
ctl_inspect_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void
ctl_inspect_print(const json_t *r)
{
	const json_t *spec = json_object_get(r, "spec");
	const json_t *saved = json_object_get(r, "saved");
	const json_t *sp = json_object_get(saved, "params");
	const json_t *ct = json_object_get(r, "container");
	const char *state = ctl_inspect_str(r, "state"), *at, *err;
	char *ago;

	ctl_inspect_field("name:", json_object_get(r, "name"));
	ctl_inspect_field("id:", json_object_get(r, "id"));
	ctl_inspect_field("agent:", json_object_get(r, "agent"));
	ctl_inspect_field("mode:", json_object_get(r, "mode"));
	if (state != NULL && json_object_get(r, "since") != NULL) {
		char *prefix;

		if (asprintf(&prefix, "%s since ", state) < 0)
			prefix = NULL;
		ctl_inspect_time("state:", prefix ? prefix : "",
		    ctl_inspect_str(r, "since"));
		free(prefix);
	} else {
		ctl_inspect_field("state:", json_object_get(r, "state"));
	}
	ctl_inspect_field("pid:", json_object_get(r, "pid"));
	ctl_inspect_field("generation:", json_object_get(r, "generation"));
	ctl_inspect_field("restarts:", json_object_get(r, "restarts"));
	ctl_inspect_field("transport:", json_object_get(r, "transport"));
	ctl_inspect_field("protocol:", json_object_get(r, "protocol_version"));
	ctl_inspect_field("tools:", json_object_get(r, "tools"));
	ctl_inspect_field("endpoint:", json_object_get(r, "endpoint"));
	if (spec == NULL)
		spec = sp; /* not running: what is saved */
	ctl_inspect_words("command:", json_object_get(spec, "command"));
	ctl_inspect_field("cwd:", json_object_get(spec, "cwd"));
	ctl_inspect_field("image:", json_object_get(spec, "image"));
	ctl_inspect_words("args:", json_object_get(spec, "args"));
	ctl_inspect_words("volumes:", json_object_get(spec, "volumes"));
	ctl_inspect_field("network:", json_object_get(spec, "network"));
	ctl_inspect_field("url:", json_object_get(spec, "url"));
	ctl_inspect_pairs("env:", json_object_get(spec, "env"));
	ctl_inspect_pairs("headers:", json_object_get(spec, "headers"));
	if (json_is_object(ct))
		printf("%-12s %s (%s)\n",
		    "container:", ctl_inspect_str(ct, "name"),
		    ctl_inspect_str(ct, "phase") ?
			ctl_inspect_str(ct, "phase") :
			"?");
	if (json_is_object(saved)) {
		ctl_inspect_time("saved:", "yes, at ",
		    ctl_inspect_str(saved, "saved"));
		if (spec != sp)
			ctl_inspect_pairs("saved env:",
			    json_object_get(sp, "env"));
	} else {
		printf("%-12s no (--no-persist): mcpd will not bring it back\n",
		    "saved:");
	}
	ctl_inspect_instructions(ctl_inspect_str(r, "instructions"));
	/* inspect shows it even when list does not: an older generation's. */
	if ((err = ctl_inspect_str(r, "last_error")) == NULL)
		return;
	if (print_row_error(r, &at) == NULL) {
		printf("%-12s %s (of an earlier generation)\n",
		    "last error:", err);
		return;
	}
	ago = at != NULL ? print_ago(at) : NULL;
	if (at != NULL)
		printf("%-12s %s (at %s%s%s)\n", "last error:", err, at,
		    ago != NULL ? ", " : "", ago != NULL ? ago : "");
	else
		printf("%-12s %s\n", "last error:", err);
	free(ago);
}

static const struct option ctl_inspect_options[] = {
	{ "show-env", no_argument, NULL, 'e' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_inspect_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	bool show_env = false;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":h", ctl_inspect_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c != 'e')
			return mcpctl_bad_option(cmd, c, argv);
		show_env = true;
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1, MCPCTL_TARGET)) != 0)
		return r;
	return mcpctl_run(m, "mcpd/inspect",
	    json_pack("{s:s, s:b}", "target", argv[optind], "show_env",
		show_env),
	    ctl_inspect_print);
}

const struct mcpctl_cmd ctl_inspect_cmd = {
	.name = "inspect",
	.synopsis = "TARGET [--show-env]",
	.summary =
	    "everything about one server: state, pid, spec (values masked), saved row, last error",
	.help =
	    "  --show-env         show the environment's plain values (a secret\n"
	    "                     stays its $(secret.NAME) reference)\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "Values of env and headers show as *** unless they are $(...)\n"
	    "references; mcpd never sends a secret's value to mcpctl.\n",
	.exec = ctl_inspect_exec,
	.options = ctl_inspect_options,
};
