/* SPDX-License-Identifier: ISC */
/* mcpd/secret-set, -list, -rm: the secret store behind $(secret.NAME). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonwipe.h"
#include "mcpd.h"
#include "names.h"

/* The store, or NULL after failing req with storage. */
static struct secrets *
cmd_secret_store(struct request *req)
{
	char *cause = NULL;
	struct secrets *vault = mcpd_secrets(&cause);

	if (vault == NULL)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "the secret store cannot be opened: %s",
		    cause != NULL ? cause : "unknown error");
	free(cause);
	return vault;
}

/* A client fault (-EINVAL) or a storage failure, named for the client. */
static void
cmd_secret_fail(struct request *req, int r, const char *cause)
{
	if (r == -EINVAL)
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL, "%s",
		    cause != NULL ? cause : "invalid name or value");
	else
		control_fail(req, ERRORS_STORAGE, NULL, "%s",
		    cause != NULL ? cause : "the secret store failed");
}

static bool
cmd_secret_name_ok(struct request *req, const char *name)
{
	if (names_secret_valid(name))
		return true;
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", "name"),
	    "a secret name is [a-zA-Z0-9_.]{1,%d}", NAMES_SECRET_MAX);
	return false;
}

static void
cmd_secret_set_value(struct request *req, const char *name, const json_t *value)
{
	struct secrets *vault;
	char *cause = NULL;
	bool was_there;
	int r;

	if (!cmd_secret_name_ok(req, name) ||
	    (vault = cmd_secret_store(req)) == NULL)
		return;
	was_there = secrets_get(vault, name) != NULL;
	r = secrets_set(vault, name, json_string_value(value),
	    json_string_length(value), &cause);
	if (r < 0)
		cmd_secret_fail(req, r, cause);
	else
		control_reply(req,
		    json_pack("{s:s, s:b}", "name", name, "replaced",
			was_there));
	free(cause);
}

static void
cmd_secret_set_exec(struct request *req, json_t *params)
{
	json_t *value = json_object_get(params, "value");

	cmd_secret_set_value(req, cmd_string(params, "name"), value);
	/*
	 * The store keeps its own copy; the one jansson parsed from the
	 * request is wiped, whatever the outcome, before the request is
	 * freed. Its bytes are jansson's own buffer behind the const of
	 * json_string_value(), so jsonwipe_strings writes through that
	 * const; nothing reads the value after this.
	 */
	jsonwipe_strings(value);
}

/* Secrets mcpd made for the literal values of saved loads. */
static bool
cmd_secret_is_mcpds(const char *name)
{
	return strncmp(name, "mcpd.", 5) == 0;
}

static void
cmd_secret_list_exec(struct request *req, json_t *params)
{
	struct secrets *vault = cmd_secret_store(req);
	bool all = json_is_true(json_object_get(params, "all"));
	json_t *names, *v;
	size_t i = 0, hidden = 0;

	if (vault == NULL)
		return;
	names = secrets_names(vault);
	while (!all && i < json_array_size(names)) {
		v = json_array_get(names, i);
		if (cmd_secret_is_mcpds(json_string_value(v))) {
			json_array_remove(names, i);
			hidden++;
		} else
			i++;
	}
	control_reply(req,
	    json_pack("{s:o, s:s, s:I}", "names", names, "key_source",
		secrets_key_source(vault), "hidden", (json_int_t)hidden));
}

/* A secret that saved servers use goes only with force (they will fail). */
static bool
cmd_secret_rm_allowed(struct request *req, const char *name, bool force,
    json_t *users)
{
	char *list;

	if (json_array_size(users) == 0 || force)
		return true;
	list = json_dumps(users, JSON_COMPACT);
	control_fail(req, ERRORS_CONFLICT,
	    json_pack("{s:s, s:O}", "what", "secret", "used_by", users),
	    "secret %s is used by %zu saved server(s) %s; nothing was removed: unload them first, or remove it with force (mcpctl secret rm --force), and they fail at their next start",
	    name, json_array_size(users), list != NULL ? list : "");
	free(list);
	return false;
}

static void
cmd_secret_rm_exec(struct request *req, json_t *params)
{
	const char *name = cmd_string(params, "name");
	struct secrets *vault;
	char *cause = NULL;
	bool removed = false;
	int r;

	json_t *users;

	if (!cmd_secret_name_ok(req, name) ||
	    (vault = cmd_secret_store(req)) == NULL)
		return;
	users = enable_rows_using(name);
	if (!cmd_secret_rm_allowed(req, name,
		json_is_true(json_object_get(params, "force")), users)) {
		/* Refused: the servers that use it were named. */
	} else if ((r = secrets_remove(vault, name, &removed, &cause)) < 0)
		cmd_secret_fail(req, r, cause);
	else
		control_reply(req,
		    json_pack("{s:s, s:b, s:O}", "name", name, "removed",
			removed, "used_by", users));
	json_decref(users);
	free(cause);
}

static const struct cmd_param cmd_secret_set_params[] = {
	{ "name", JSON_STRING, true },
	{ "value", JSON_STRING, true },
	{ NULL, 0, false },
};

static const struct cmd_param cmd_secret_rm_params[] = {
	{ "name", JSON_STRING, true },
	{ "force", JSON_TRUE, false },
	{ NULL, 0, false },
};

static const struct cmd_param cmd_secret_list_params[] = {
	{ "all", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_secret_set_entry = {
	"mcpd/secret-set",
	cmd_secret_set_exec,
	cmd_secret_set_params,
	0,
};

const struct cmd_entry cmd_secret_list_entry = {
	"mcpd/secret-list",
	cmd_secret_list_exec,
	cmd_secret_list_params,
	CMD_STOPPING,
};

const struct cmd_entry cmd_secret_rm_entry = {
	"mcpd/secret-rm",
	cmd_secret_rm_exec,
	cmd_secret_rm_params,
	0,
};
