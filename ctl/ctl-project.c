/* SPDX-License-Identifier: ISC */
/* mcpctl project: what a project file gives a bridge; trust it or not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

/* "PATH" and each part of the file, as a bridge would read it. */
static void
ctl_project_print(const struct projectfile *p, const char *dir)
{
	const char *name;
	json_t *def, *v;
	size_t i;

	if (p->path == NULL) {
		printf("no %s from %s up to %s\n", PROJECTFILE_NAME, dir,
		    getenv("HOME") != NULL ? "$HOME" : "/");
		return;
	}
	printf("project file: %s\n", p->path);
	if (p->profile != NULL)
		printf("profile: %s\n", p->profile);
	json_array_foreach(p->servers, i, v)
		printf("server: %s\n", json_string_value(v));
	json_object_foreach((json_t *)(uintptr_t)p->define, name, def) {
		char *text = json_dumps(def, JSON_COMPACT | JSON_SORT_KEYS);

		printf("defines: %s %s\n", name, text != NULL ? text : "?");
		free(text);
	}
	if (json_object_size(p->define) > 0)
		printf("trusted: %s\n",
		    p->is_trusted      ? "yes" :
			p->was_trusted ? "no: it changed since it was trusted" :
					 "no");
	if (p->error != NULL)
		printf("error: %s\n", p->error);
	else
		printf("a bridge started here sees: %s%s%s\n",
		    p->profile != NULL ? "profile " : "",
		    p->profile != NULL ? p->profile : "",
		    json_array_size(p->servers) > 0 ||
			    json_object_size(p->define) > 0 ?
			(p->profile != NULL ?
				", cut to its servers and defined ones" :
				"its servers and defined ones") :
			(p->profile != NULL ? "" : "everything of the agent"));
}

static json_t *
ctl_project_json(const struct projectfile *p)
{
	return json_pack("{s:s?, s:s?, s:O, s:O?, s:b, s:b, s:s?}", "path",
	    p->path, "profile", p->profile, "servers", p->servers, "define",
	    p->define, "trusted", p->is_trusted, "was_trusted", p->was_trusted,
	    "error", p->error);
}

static int
ctl_project_show(struct mcpctl *m, const char *dir)
{
	struct projectfile p;

	if (projectfile_find(dir, &p) < 0)
		return MCPCTL_EXIT_ERROR;
	/* Nothing is loaded: show says what a bridge would do. */
	ctl_project_apply(m, &p, false);
	if (m->is_json) {
		json_t *j = ctl_project_json(&p);

		print_json(j);
		json_decref(j);
	} else
		ctl_project_print(&p, dir);
	projectfile_clear(&p);
	return MCPCTL_EXIT_OK;
}

static void
ctl_project_print_trusted(const json_t *result)
{
	printf(json_is_true(json_object_get(result, "already")) ?
		"%s was trusted already, as it is\n" :
		"trusted %s: the servers it defines may start (mcpd keeps its digest; a change needs trusting again)\n",
	    json_string_value(json_object_get(result, "path")));
}

static void
ctl_project_print_untrusted(const json_t *result)
{
	printf(json_is_true(json_object_get(result, "removed")) ?
		"%s is not trusted any more\n" :
		"%s was not trusted; nothing was changed\n",
	    json_string_value(json_object_get(result, "path")));
}

/* trust or untrust the file found from dir. */
static int
ctl_project_trust(struct mcpctl *m, const char *dir, bool is_trust)
{
	struct projectfile p;
	json_t *params;
	int r;

	if (projectfile_find(dir, &p) < 0)
		return MCPCTL_EXIT_ERROR;
	if (p.path == NULL || (is_trust && p.text == NULL)) {
		print_err("project: %s",
		    p.path == NULL ? "no project file from here up to $HOME" :
				     p.error);
		projectfile_clear(&p);
		return MCPCTL_EXIT_ERROR;
	}
	params = is_trust ?
	    json_pack("{s:s, s:s, s:s%}", "op", "trust", "path", p.path, "text",
		p.text, p.len) :
	    json_pack("{s:s, s:s}", "op", "untrust", "path", p.path);
	r = mcpctl_run(m, "mcpd/project", params,
	    is_trust ? ctl_project_print_trusted : ctl_project_print_untrusted);
	projectfile_clear(&p);
	return r;
}

static void
ctl_project_print_list(const json_t *result)
{
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(result, "projects"), i, row)
		printf("%s\n", json_string_value(json_object_get(row, "id")));
}

static int
ctl_project_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const char *sub, *dir;
	int r;

	if ((r = mcpctl_parse_plain(cmd, argc, argv)) >= 0)
		return r;
	if (optind >= argc)
		return mcpctl_usage(cmd,
		    "missing show, trust, untrust or list");
	sub = argv[optind++];
	if (strcmp(sub, "list") == 0) {
		if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
			return r;
		return mcpctl_run(m, "mcpd/project",
		    json_pack("{s:s}", "op", "list"), ctl_project_print_list);
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 0, 1, "")) != 0)
		return r;
	dir = optind < argc ? argv[optind] : ".";
	if (strcmp(sub, "show") == 0)
		return ctl_project_show(m, dir);
	if (strcmp(sub, "trust") == 0 || strcmp(sub, "untrust") == 0)
		return ctl_project_trust(m, dir, strcmp(sub, "trust") == 0);
	return mcpctl_usage(cmd, "unknown '%s': show, trust, untrust or list",
	    sub);
}

const struct mcpctl_cmd ctl_project_cmd = {
	.name = "project",
	.synopsis = "show [DIR] | trust [DIR] | untrust [DIR] | list",
	.summary =
	    "what the project file (.mcpd.json) found from DIR gives a bridge; trust one that defines servers",
	.help =
	    "  -h, --help         this text\n"
	    "\n"
	    "mcpctl bridge, given no --profile and no --server, looks for\n"
	    ".mcpd.json in its working directory and its parents up to $HOME\n"
	    "(or /): {\"profile\": P, \"servers\": [...], \"define\": {NAME:\n"
	    "what mcpd/load takes}}. A file that defines servers runs programs:\n"
	    "it is used only once trusted (mcpctl project trust DIR; mcpd keeps\n"
	    "its digest, and a changed file needs trusting again). show prints\n"
	    "what a bridge started in DIR (default .) would see, loading\n"
	    "nothing.\n",
	.exec = ctl_project_exec,
};
