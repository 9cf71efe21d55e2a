/* SPDX-License-Identifier: ISC */
/* mcpctl changes: the held tools and what changed since they were pinned. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "textesc.h"
#include "xalloc.h"

/* prefix and text on one line, the text escaped for the terminal. */
static void
ctl_changes_text(const char *prefix, const char *text)
{
	char *safe = xnonnull(textesc(text, strlen(text), false));

	printf("%s%s\n", prefix, safe);
	free(safe);
}

/* A JSON value on one line, ASCII only; "(none)" when absent. */
static char *
ctl_changes_value(const json_t *v)
{
	if (v == NULL)
		return xstrdup("(none)");
	return xnonnull(json_dumps(v,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
		JSON_ENSURE_ASCII));
}

/* A new tool's description, a line each. */
static void
ctl_changes_description(const char *text)
{
	const char *end;
	char *line;

	printf("  description:\n");
	while (text != NULL && *text != '\0') {
		end = text + strcspn(text, "\n");
		line = xstrndup(text, (size_t)(end - text));
		ctl_changes_text("    ", line);
		free(line);
		text = *end == '\n' ? end + 1 : end;
	}
}

/* A new tool: its title, description and parameters (name and type). */
static void
ctl_changes_summary(const json_t *tool)
{
	const json_t *props = json_object_get(json_object_get(tool,
						  "inputSchema"),
			 "properties"),
		     *p;
	const char *title = json_string_value(json_object_get(tool, "title"));
	const char *name;
	char *list = xstrdup(""), *type, *more;

	if (title != NULL)
		ctl_changes_text("  title: ", title);
	ctl_changes_description(json_string_value(json_object_get(tool,
	    "description")));
	json_object_foreach((json_t *)(uintptr_t)props, name, p) {
		type = json_is_string(json_object_get(p, "type")) ?
		    xstrdup(json_string_value(json_object_get(p, "type"))) :
		    ctl_changes_value(json_object_get(p, "type"));
		xasprintf(&more, "%s%s%s (%s)", list, *list != '\0' ? ", " : "",
		    name, type);
		free(list);
		free(type);
		list = more;
	}
	ctl_changes_text("  parameters: ", *list != '\0' ? list : "none");
	free(list);
}

/* A changed tool: its description's lines, then each JSON path. */
static void
ctl_changes_diff(const json_t *c)
{
	const json_t *line, *change;
	char *old, *new, *text;
	size_t i;

	if (json_is_null(json_object_get(c, "pinned"))) {
		printf(
		    "  (its pinned definition was larger than mcpd's --pin-definition-max: only its digest %s was kept, so what changed cannot be shown)\n",
		    json_string_value(json_object_get(c, "pinned_digest")));
		return;
	}
	if (json_array_size(json_object_get(c, "description")) > 0)
		printf("  description:\n");
	json_array_foreach(json_object_get(c, "description"), i, line)
		ctl_changes_text("    ", json_string_value(line));
	json_array_foreach(json_object_get(c, "changes"), i, change) {
		old = ctl_changes_value(json_object_get(change, "old"));
		new = ctl_changes_value(json_object_get(change, "new"));
		xasprintf(&text, "%s: %s -> %s",
		    json_string_value(json_object_get(change, "path")), old,
		    new);
		ctl_changes_text("  ", text);
		free(text);
		free(old);
		free(new);
	}
}

static void
ctl_changes_print(const json_t *result)
{
	const json_t *changes = json_object_get(result, "changes"), *c;
	const char *status;
	char *head;
	size_t i;

	if (json_array_size(changes) == 0) {
		printf("no held tools: every tool is as it was pinned\n");
		return;
	}
	json_array_foreach(changes, i, c) {
		status = json_string_value(json_object_get(c, "status"));
		xasprintf(&head, "%s %s: %s",
		    json_string_value(json_object_get(c, "server")),
		    json_string_value(json_object_get(c, "tool")),
		    strcmp(status, "changed") == 0 ?
			"changed since pinned" :
			strcmp(status, "new") == 0 ?
			"new tool" :
			"not pinned: its pins could not be saved");
		ctl_changes_text(i > 0 ? "\n" : "", head);
		free(head);
		if (strcmp(status, "changed") == 0)
			ctl_changes_diff(c);
		else
			ctl_changes_summary(json_object_get(c, "definition"));
	}
	printf(
	    "\nmcpctl accept SERVER [TOOL] takes the new definitions; until then these tools are not listed and calls are refused (tool-held)\n");
}

static int
ctl_changes_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0)
		return r;
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 1,
		 "at most one SERVER")) != 0)
		return r;
	return mcpctl_run(m, "mcpd/changes",
	    json_pack("{s:s*}", "server", optind < argc ? argv[optind] : NULL),
	    ctl_changes_print);
}

const struct mcpctl_cmd ctl_changes_cmd = {
	.name = "changes",
	.synopsis = "[SERVER]",
	.summary =
	    "show held tools: changed or new since their definitions were pinned",
	.help =
	    "  -h, --help         this text\n"
	    "\n"
	    "mcpd pins each tool's definition the first time it sees a server.\n"
	    "A tool whose definition later changes (a description, a schema,\n"
	    "annotations) or that is new on a known server is held: agents do\n"
	    "not see it and calls of it are refused (tool-held). This lists\n"
	    "each held tool (of SERVER, or of every server) with what changed:\n"
	    "the description line by line (- pinned, + now), the rest as\n"
	    "JSON paths (inputSchema.properties.x.type: \"a\" -> \"b\"); a new\n"
	    "tool with its title, description and parameters. mcpctl accept\n"
	    "takes them. --json: {\"changes\": [{server, tool, status, digest,\n"
	    "pinned_digest, definition, pinned, description, changes}]}.\n",
	.exec = ctl_changes_exec,
};
