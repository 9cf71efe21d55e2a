/* SPDX-License-Identifier: ISC */
/* mcpd/project: trust a project file (.mcpd.json), check it, forget it. */
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"

#define CMD_PROJECT_TEXT_MAX (1024 * 1024) /* bytes of a project file */

/* The path and text params an op needs; false after failing req. */
static bool
cmd_project_file(struct request *req, json_t *params, bool needs_text,
    const char **ret_path, const char **ret_text)
{
	const char *path = cmd_string(params, "path");
	const json_t *text = json_object_get(params, "text");

	if (path == NULL || path[0] != '/') {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "path"),
		    "path must be the absolute path of a project file");
		return false;
	}
	if (needs_text &&
	    (!json_is_string(text) ||
		json_string_length(text) > CMD_PROJECT_TEXT_MAX)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "text"),
		    "text must be the project file's content (1 MiB at most)");
		return false;
	}
	*ret_path = path;
	*ret_text = json_string_value(text);
	return true;
}

static void
cmd_project_check(struct request *req, const char *path, const json_t *text)
{
	char *digest = project_digest(json_string_value(text),
	    json_string_length(text));
	const char *trusted = project_trusted_digest(path);

	control_reply(req,
	    json_pack("{s:s, s:s, s:b, s:s?}", "path", path, "digest", digest,
		"trusted", trusted != NULL && strcmp(trusted, digest) == 0,
		"trusted_digest", trusted));
	free(digest);
}

static void
cmd_project_trust(struct request *req, const char *path, const json_t *text)
{
	char *digest = project_digest(json_string_value(text),
		 json_string_length(text)),
	     *cause = NULL;
	const char *before = project_trusted_digest(path);
	bool was = before != NULL && strcmp(before, digest) == 0;

	if (!was && project_trust(path, digest, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot save the trust of %s: %s; nothing was changed",
		    path, cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:s, s:b}", "path", path, "digest", digest,
			"already", was));
	free(cause);
	free(digest);
}

static void
cmd_project_untrust(struct request *req, const char *path)
{
	bool removed = false;
	char *cause = NULL;

	if (project_untrust(path, &removed, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot forget the trust of %s: %s; nothing was changed",
		    path, cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:b}", "path", path, "removed", removed));
	free(cause);
}

static void
cmd_project_exec(struct request *req, json_t *params)
{
	const char *op = cmd_string(params, "op"), *path, *text;

	if (op != NULL && strcmp(op, "list") == 0) {
		control_reply(req,
		    json_pack("{s:o}", "projects", project_list()));
		return;
	}
	if (op == NULL ||
	    (strcmp(op, "check") != 0 && strcmp(op, "trust") != 0 &&
		strcmp(op, "untrust") != 0)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "op"),
		    "op must be check, trust, untrust or list");
		return;
	}
	if (!cmd_project_file(req, params, strcmp(op, "untrust") != 0, &path,
		&text))
		return;
	if (strcmp(op, "check") == 0)
		cmd_project_check(req, path, json_object_get(params, "text"));
	else if (strcmp(op, "trust") == 0)
		cmd_project_trust(req, path, json_object_get(params, "text"));
	else
		cmd_project_untrust(req, path);
}

static const struct cmd_param cmd_project_params[] = {
	{ "op", JSON_STRING, true },
	{ "path", JSON_STRING, false },
	{ "text", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_project_entry = {
	"mcpd/project",
	cmd_project_exec,
	cmd_project_params,
	0,
};
