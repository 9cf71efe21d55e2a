/* SPDX-License-Identifier: ISC */
/* Import: editors' ${...} variables, and the secrets an entry refers to. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "import-int.h"
#include "names.h"
#include "vars.h"

/* What a ${...} must be made of to be named in a reason (never a value). */
#define IMPORT_VAR_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-"
#define IMPORT_VAR_SHOWN 64

/* Calls fn on each string of v: v itself, or its items or values. */
static int
import_each_string(json_t *v, int (*fn)(json_t *s, void *ctx), void *ctx)
{
	const char *k;
	json_t *item;
	size_t i;
	int r;

	if (json_is_string(v))
		return fn(v, ctx);
	json_array_foreach(v, i, item)
		if ((r = fn(item, ctx)) < 0)
			return r;
	json_object_foreach(v, k, item)
		if ((r = fn(item, ctx)) < 0)
			return r;
	return 0;
}

/* Fails for ${var}, named only when it looks like a name, not a value. */
static int
import_var_fail(const char *var, size_t len, const char *why, char **reason)
{
	if (len <= IMPORT_VAR_SHOWN && strspn(var, IMPORT_VAR_CHARS) >= len)
		return errors_cause(reason, -EINVAL, "uses ${%.*s}, %s",
		    (int)len, var, why);
	return errors_cause(reason, -EINVAL, "uses a ${...} variable, %s", why);
}

/*
 * Writes the secret that VS Code's ${input:ID} (id: the len bytes of ID)
 * becomes: $(secret.ID), with one '_' for each character (a whole UTF-8
 * sequence) that a secret name may not hold.
 */
static int
import_var_put_input(FILE *f, const char *var, size_t var_len, const char *id,
    size_t len, char **reason)
{
	char *name = malloc(len + 1);
	size_t i = 0, n = 0, run;
	int r = 0;

	if (name == NULL)
		return -ENOMEM;
	while (i < len) {
		/* A run never reaches past the '}' that ends the ID. */
		if ((run = names_secret_span(id + i)) > 0) {
			memcpy(name + n, id + i, run);
			n += run;
			i += run;
			continue;
		}
		if (((unsigned char)id[i++] & 0xc0) != 0x80)
			name[n++] = '_';
	}
	name[n] = '\0';
	_Static_assert(NAMES_SECRET_MAX == 128, "the reason below says 128");
	if (!names_secret_valid(name))
		r = import_var_fail(var, var_len,
		    "whose secret name would be too long: a secret name is 1 to 128 letters, digits, '_' or '.'",
		    reason);
	else
		fprintf(f, "$(secret.%s)", name);
	free(name);
	return r;
}

/* What import_translate_vars needs: the workspace, and the reason. */
struct import_vars {
	const char *workspace; /* the folder that holds .vscode/, or NULL */
	char *why;
};

/* Writes the value of ${env:NAME} (name: the len bytes of NAME). */
static int
import_var_put_env(FILE *f, const char *var, size_t var_len, const char *name,
    size_t len, char **reason)
{
	char *copy = strndup(name, len);
	const char *value;
	int r = 0;

	if (copy == NULL)
		return -ENOMEM;
	/* VS Code reads its own environment: here, mcpctl's. */
	if (len == 0 || strchr(copy, '=') != NULL)
		r = import_var_fail(var, var_len, "which names no variable",
		    reason);
	else if ((value = getenv(copy)) == NULL)
		r = import_var_fail(var, var_len,
		    "but that variable is not set in the environment of mcpctl import (VS Code reads it there too); set it and import again",
		    reason);
	else
		fputs(value, f);
	free(copy);
	return r;
}

/* Writes the workspace folder, or its last component when is_base. */
static int
import_var_put_workspace(FILE *f, const char *var, size_t len,
    const char *workspace, bool is_base, char **reason)
{
	const char *slash;

	if (workspace == NULL)
		return import_var_fail(var, len,
		    "which is known only for a file in a workspace's .vscode folder; edit the entry",
		    reason);
	slash = strrchr(workspace, '/');
	fputs(is_base && slash != NULL && slash[1] != '\0' ? slash + 1 :
							     workspace,
	    f);
	return 0;
}

/* Whether the len bytes of var are word. */
static bool
import_var_is(const char *var, size_t len, const char *word)
{
	return strlen(word) == len && strncmp(var, word, len) == 0;
}

/* Writes what VS Code's ${var} (len bytes, up to the '}') stands for. */
static int
import_var_put(FILE *f, const char *var, size_t len, const char *workspace,
    char **reason)
{
	const char *home = getenv("HOME");

	if (len >= 4 && strncmp(var, "env:", 4) == 0) {
		return import_var_put_env(f, var, len, var + 4, len - 4,
		    reason);
	} else if (len >= 6 && strncmp(var, "input:", 6) == 0) {
		if (len == 6)
			return import_var_fail(var, len, "which names no input",
			    reason);
		/* VS Code prompts for it: a secret, its name made valid. */
		return import_var_put_input(f, var, len, var + 6, len - 6,
		    reason);
	} else if (import_var_is(var, len, "userHome")) {
		if (home == NULL || home[0] == '\0')
			return import_var_fail(var, len, "but HOME is not set",
			    reason);
		fputs(home, f);
	} else if (import_var_is(var, len, "workspaceFolder") ||
	    import_var_is(var, len, "workspaceFolderBasename")) {
		return import_var_put_workspace(f, var, len, workspace,
		    len > 15, reason);
	} else if (import_var_is(var, len, "pathSeparator") ||
	    import_var_is(var, len, "/")) {
		fputc('/', f);
	} else
		return import_var_fail(var, len,
		    "which only the editor knows; edit the entry", reason);
	return 0;
}

/*
 * Translates VS Code's variables in the string s, in place: ${env:NAME}
 * is the value mcpctl has, ${input:ID} a reference that mcpd resolves at
 * each start, ${userHome} is HOME here, ${workspaceFolder} the folder
 * that holds .vscode/; any other ${...} fails (see import.h).
 */
static int
import_translate_vars(json_t *s, void *ctx)
{
	struct import_vars *iv = ctx;
	const char *in = json_string_value(s), *p, *end;
	char *out = NULL;
	size_t len;
	FILE *f;
	int r = 0;

	if (strstr(in, "${") == NULL)
		return 0;
	if ((f = open_memstream(&out, &len)) == NULL)
		return -ENOMEM;
	for (; r == 0 && (p = strstr(in, "${")) != NULL &&
	     (end = strchr(p + 2, '}')) != NULL;
	     in = end + 1) {
		fwrite(in, 1, p - in, f);
		r = import_var_put(f, p + 2, end - (p + 2), iv->workspace,
		    &iv->why);
	}
	fputs(in, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0 && json_string_set(s, out) < 0)
		r = -ENOMEM;
	free(out);
	return r;
}

/* A field's value with VS Code's variables translated; reasons name key. */
int
import_translate(json_t *v, const char *key, const char *workspace,
    char **reason)
{
	struct import_vars iv = { workspace, NULL };
	int r = import_each_string(v, import_translate_vars, &iv);

	if (r == -EINVAL)
		r = errors_cause(reason, r, "\"%s\" %s", key, iv.why);
	free(iv.why);
	return r;
}

/* Adds a secret that a value refers to, once, to the array ctx. */
static int
import_secret_add(void *ctx, const char *ns, const char *name)
{
	json_t *secrets = ctx, *v;
	size_t i;

	if (strcmp(ns, "secret") != 0)
		return 0;
	json_array_foreach(secrets, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 0;
	if (json_array_append_new(secrets, json_string(name)) < 0)
		return -ENOMEM;
	return 0;
}

static int
import_secrets_scan(json_t *s, void *ctx)
{
	int r = vars_scan(json_string_value(s), import_secret_add, ctx);

	return r < 0 ? r : 0;
}

/*
 * The secrets that the values mcpd resolves refer to, as "secrets" when
 * there are any: read from the entry built, so that a docker run's "env"
 * that configured the docker CLI (and was dropped) counts for nothing.
 */
int
import_entry_secrets(json_t *e)
{
	static const char *const keys[] = { "command", "args", "env", "url",
		"headers", "volumes" };
	json_t *secrets = json_array();
	int r = secrets != NULL ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < sizeof keys / sizeof keys[0]; i++)
		r = import_each_string(json_object_get(e, keys[i]),
		    import_secrets_scan, secrets);
	if (r == 0 && json_array_size(secrets) > 0 &&
	    json_object_set(e, "secrets", secrets) < 0)
		r = -ENOMEM;
	json_decref(secrets);
	return r;
}
