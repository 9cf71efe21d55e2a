/* SPDX-License-Identifier: ISC */
/* Import: other clients' server entries as process, remote or container. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "import.h"
#include "import-int.h"
#include "names.h"
#include "url.h"

/* Where a client keeps its servers: a path of keys from the root. */
struct import_shape {
	const char *path[3];
	const char *clients;
};

static const struct import_shape import_shapes[] = {
	{ { "mcpServers" }, "Claude Desktop, Cursor" },
	{ { "servers" }, "VS Code .vscode/mcp.json" },
	{ { "mcp", "servers" }, "VS Code settings.json" },
};

#define IMPORT_NSHAPES (sizeof import_shapes / sizeof import_shapes[0])

/* The fields of an entry that import reads. */
enum import_field_id {
	IMPORT_COMMAND,
	IMPORT_ARGS,
	IMPORT_ENV,
	IMPORT_CWD,
	IMPORT_URL,
	IMPORT_HEADERS,
	IMPORT_TRANSPORT,
	IMPORT_DISABLED,
	IMPORT_NFIELDS,
};

enum import_type {
	IMPORT_STRING,
	IMPORT_STRINGS,	   /* an array of strings */
	IMPORT_STRING_MAP, /* an object of strings */
	IMPORT_BOOLEAN,
};

#define IMPORT_KEYS_MAX 4

/*
 * A field: the keys clients spell it with, the type it must have, and
 * whether it holds values (where VS Code's variables are translated).
 */
struct import_field {
	const char *keys[IMPORT_KEYS_MAX];
	enum import_type type;
	bool has_values;
};

static const struct import_field import_fields[IMPORT_NFIELDS] = {
	[IMPORT_COMMAND] = { { "command" }, IMPORT_STRING, true },
	[IMPORT_ARGS] = { { "args" }, IMPORT_STRINGS, true },
	[IMPORT_ENV] = { { "env" }, IMPORT_STRING_MAP, true },
	[IMPORT_CWD] = { { "cwd" }, IMPORT_STRING, true },
	[IMPORT_URL] = { { "url", "serverUrl", "endpoint" }, IMPORT_STRING,
	    true },
	[IMPORT_HEADERS] = { { "headers" }, IMPORT_STRING_MAP, true },
	[IMPORT_TRANSPORT] = { { "type", "transport" }, IMPORT_STRING, false },
	[IMPORT_DISABLED] = { { "disabled" }, IMPORT_BOOLEAN, false },
};

/* A field as found in one entry: its value (borrowed) and its key. */
struct import_found {
	json_t *value;
	const char *key;
};

/* Transport spellings and what they mean. */
static const struct {
	const char *spelling;
	const char *transport;
} import_transports[] = {
	{ "stdio", "stdio" },
	{ "http", "http" },
	{ "streamable-http", "http" },
	{ "streamableHttp", "http" },
	{ "sse", "sse" },
};

#define IMPORT_NTRANSPORTS \
	(sizeof import_transports / sizeof import_transports[0])

enum import_docker_action {
	IMPORT_DOCKER_ABSORB,
	IMPORT_DOCKER_ENV,
	IMPORT_DOCKER_VOLUME,
	IMPORT_DOCKER_NETWORK,
};

/* The docker run flags an entry may use; any other refuses it. */
static const struct {
	const char *name;
	bool has_value;
	enum import_docker_action action;
} import_docker_flags[] = {
	{ "-i", false, IMPORT_DOCKER_ABSORB },
	{ "-t", false, IMPORT_DOCKER_ABSORB },
	{ "-it", false, IMPORT_DOCKER_ABSORB },
	{ "-ti", false, IMPORT_DOCKER_ABSORB },
	{ "--interactive", false, IMPORT_DOCKER_ABSORB },
	{ "--tty", false, IMPORT_DOCKER_ABSORB },
	{ "--rm", false, IMPORT_DOCKER_ABSORB },
	{ "-e", true, IMPORT_DOCKER_ENV },
	{ "--env", true, IMPORT_DOCKER_ENV },
	{ "-v", true, IMPORT_DOCKER_VOLUME },
	{ "--volume", true, IMPORT_DOCKER_VOLUME },
	{ "--network", true, IMPORT_DOCKER_NETWORK },
};

#define IMPORT_NDOCKER_FLAGS \
	(sizeof import_docker_flags / sizeof import_docker_flags[0])
#define IMPORT_DOCKER_SUPPORTED "-i -t --rm -e/--env -v/--volume --network"

/* What a docker run command becomes. */
struct import_container {
	json_t *env;
	json_t *volumes;
	const char *network;
	size_t image; /* the image's index in the entry's args */
	bool is_podman;
};

static void import_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends to the string in buf, as much as fits. */
static void
import_append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static const char *
import_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* The keys of a field: "\"url\", \"serverUrl\" or \"endpoint\"". */
static const char *
import_field_keys(enum import_field_id id, char *buf, size_t size)
{
	const char *const *keys = import_fields[id].keys;
	size_t n = 0;

	while (n < IMPORT_KEYS_MAX && keys[n] != NULL)
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		import_append(buf, size, "%s\"%s\"",
		    i == 0	  ? "" :
			i + 1 < n ? ", " :
				    " or ",
		    keys[i]);
	return buf;
}

/* Fails for an entry without the field its transport needs. */
static int
import_fail_missing(const struct import_found *f, enum import_field_id id,
    char **reason)
{
	const struct import_found *t = &f[IMPORT_TRANSPORT];
	char keys[128];

	import_field_keys(id, keys, sizeof keys);
	if (t->value == NULL)
		return errors_cause(reason, -EINVAL,
		    "there is no \"command\" and no %s", keys);
	return errors_cause(reason, -EINVAL,
	    "\"%s\" is \"%s\", but there is no %s", t->key,
	    json_string_value(t->value), keys);
}

/* Checks that v is an array of strings. */
static int
import_check_strings(const json_t *v, const char *key, char **reason)
{
	size_t i;
	json_t *item;

	if (!json_is_array(v))
		return errors_cause(reason, -EINVAL,
		    "\"%s\" is %s, not an array of strings", key,
		    import_type_name(v));
	json_array_foreach(v, i, item)
		if (!json_is_string(item))
			return errors_cause(reason, -EINVAL,
			    "\"%s\"[%zu] is %s, not a string", key, i,
			    import_type_name(item));
	return 0;
}

/* Checks that v is an object of strings with names that can be used. */
static int
import_check_map(json_t *v, const char *key, char **reason)
{
	const char *name;
	json_t *item;

	if (!json_is_object(v))
		return errors_cause(reason, -EINVAL,
		    "\"%s\" is %s, not an object of strings", key,
		    import_type_name(v));
	json_object_foreach(v, name, item) {
		if (!json_is_string(item))
			return errors_cause(reason, -EINVAL,
			    "\"%s\".\"%s\" is %s, not a string", key, name,
			    import_type_name(item));
		if (name[0] == '\0')
			return errors_cause(reason, -EINVAL,
			    "\"%s\" has an empty name", key);
		if (strchr(name, '=') != NULL)
			return errors_cause(reason, -EINVAL,
			    "\"%s\" name \"%s\" holds \"=\"", key, name);
	}
	return 0;
}

static int
import_check_type(json_t *v, const char *key, enum import_type type,
    char **reason)
{
	switch (type) {
	case IMPORT_STRING:
		if (json_is_string(v))
			return 0;
		return errors_cause(reason, -EINVAL,
		    "\"%s\" is %s, not a string", key, import_type_name(v));
	case IMPORT_STRINGS:
		return import_check_strings(v, key, reason);
	case IMPORT_STRING_MAP:
		return import_check_map(v, key, reason);
	default:
		if (json_is_boolean(v))
			return 0;
		return errors_cause(reason, -EINVAL,
		    "\"%s\" is %s, not true or false", key,
		    import_type_name(v));
	}
}

/*
 * Finds each field of entry under one of its keys, checks its type and
 * translates its values (entry is the caller's copy of the file's).
 */
static int
import_read(json_t *entry, const char *workspace, struct import_found *found,
    char **reason)
{
	const struct import_field *field;
	const char *key;
	json_t *v;
	int r;

	for (size_t i = 0; i < IMPORT_NFIELDS; i++) {
		field = &import_fields[i];
		for (size_t k = 0;
		     k < IMPORT_KEYS_MAX && (key = field->keys[k]) != NULL;
		     k++) {
			if ((v = json_object_get(entry, key)) == NULL)
				continue;
			if ((r = import_check_type(v, key, field->type,
				 reason)) < 0 ||
			    (field->has_values &&
				(r = import_translate(v, key, workspace,
				     reason)) < 0))
				return r;
			/* Compared translated: aliases may spell one value. */
			if (found[i].value != NULL &&
			    json_equal(found[i].value, v))
				continue;
			if (found[i].value != NULL)
				return errors_cause(reason, -EINVAL,
				    "both \"%s\" and \"%s\" are given",
				    found[i].key, key);
			found[i].value = v;
			found[i].key = key;
		}
	}
	/* mcpd resolves variables in values, never in a directory. */
	v = found[IMPORT_CWD].value;
	if (v != NULL && strstr(json_string_value(v), "$(") != NULL)
		return errors_cause(reason, -EINVAL,
		    "\"%s\" uses a variable, but mcpd takes a working directory as a path only; edit the entry",
		    found[IMPORT_CWD].key);
	return 0;
}

/* Whether a field is there and says something: [] and {} say nothing. */
static bool
import_is_set(const struct import_found *f)
{
	if (f->value == NULL)
		return false;
	if (json_is_array(f->value))
		return json_array_size(f->value) > 0;
	if (json_is_object(f->value))
		return json_object_size(f->value) > 0;
	return true;
}

/* Refuses the first field of ids that is set: it is for the other kind. */
static int
import_check_unused(const struct import_found *found,
    const enum import_field_id *ids, size_t n, const char *why, char **reason)
{
	for (size_t i = 0; i < n; i++)
		if (import_is_set(&found[ids[i]]))
			return errors_cause(reason, -EINVAL,
			    "\"%s\" is given, but %s", found[ids[i]].key, why);
	return 0;
}

/* The transport the entry names; NULL when it names none. */
static int
import_transport_named(const struct import_found *t, const char **ret,
    char **reason)
{
	char known[128] = "";
	const char *s;

	*ret = NULL;
	if (t->value == NULL)
		return 0;
	s = json_string_value(t->value);
	for (size_t i = 0; i < IMPORT_NTRANSPORTS; i++) {
		if (strcmp(s, import_transports[i].spelling) == 0) {
			*ret = import_transports[i].transport;
			return 0;
		}
		import_append(known, sizeof known, "%s%s", i > 0 ? ", " : "",
		    import_transports[i].spelling);
	}
	return errors_cause(reason, -EINVAL, "\"%s\" is \"%s\", not one of %s",
	    t->key, s, known);
}

/* A new array of copies of the strings of array from index from on. */
static json_t *
import_strings_from(const json_t *array, size_t from)
{
	json_t *copy = json_array();

	for (size_t i = from; copy != NULL && i < json_array_size(array); i++)
		if (json_array_append_new(copy,
			json_string(json_string_value(json_array_get(array,
			    i)))) < 0) {
			json_decref(copy);
			copy = NULL;
		}
	return copy;
}

/* A new copy of an object of strings; an empty object for NULL. */
static json_t *
import_map_copy(const json_t *map)
{
	return map != NULL ? json_deep_copy(map) : json_object();
}

/* A remote entry: the URL must parse; its path can name the transport. */
static int
import_remote(const char *name, const struct import_found *f,
    const char *transport, json_t **ret, char **reason)
{
	static const enum import_field_id unused[] = { IMPORT_ARGS, IMPORT_ENV,
		IMPORT_CWD };
	const char *url = json_string_value(f[IMPORT_URL].value);
	struct url u;
	char *cause = NULL;
	int r;

	if (url == NULL)
		return import_fail_missing(f, IMPORT_URL, reason);
	if ((r = url_parse(url, &u, &cause)) < 0) {
		if (r == -EINVAL)
			r = errors_cause(reason, -EINVAL, "\"%s\": %s",
			    f[IMPORT_URL].key, cause);
		free(cause);
		return r;
	}
	if (transport == NULL)
		transport = strstr(u.path, "/mcp") != NULL ? "http" : "sse";
	url_free(&u);
	if ((r = import_check_unused(f, unused, 3, "the entry is a URL",
		 reason)) < 0)
		return r;
	*ret = json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", name, "kind",
	    "remote", "transport", transport, "url", url, "headers",
	    import_map_copy(f[IMPORT_HEADERS].value));
	return *ret != NULL ? 0 : -ENOMEM;
}

/* The program of a "docker run ..." (or podman's) command, else NULL. */
static const char *
import_docker_run_cli(const struct import_found *f)
{
	const char *cmd = json_string_value(f[IMPORT_COMMAND].value);
	const char *base = strrchr(cmd, '/');
	const char *first =
	    json_string_value(json_array_get(f[IMPORT_ARGS].value, 0));

	base = base != NULL ? base + 1 : cmd;
	if (first == NULL || strcmp(first, "run") != 0)
		return NULL;
	if (strcmp(base, "docker") == 0 || strcmp(base, "podman") == 0)
		return base;
	return NULL;
}

/* The flag a names and its attached value ("--env=X", "-e=X", "-eX"). */
static int
import_docker_flag_find(const char *a, const char **ret_value)
{
	size_t n = strcspn(a, "=");
	const char *name;

	for (size_t i = 0; i < IMPORT_NDOCKER_FLAGS; i++) {
		name = import_docker_flags[i].name;
		if (strlen(name) == n && strncmp(a, name, n) == 0) {
			*ret_value = a[n] == '=' ? a + n + 1 : NULL;
			return i;
		}
	}
	if (a[1] == '-' || a[1] == '\0')
		return -1;
	for (size_t i = 0; i < IMPORT_NDOCKER_FLAGS; i++) {
		name = import_docker_flags[i].name;
		if (import_docker_flags[i].has_value && name[1] == a[1] &&
		    name[2] == '\0') {
			*ret_value = a + 2;
			return i;
		}
	}
	return -1;
}

/* -e NAME=VALUE, or -e NAME with the value from the entry's env. */
static int
import_docker_env(struct import_container *c, const char *spec,
    const json_t *env, char **reason)
{
	size_t n = strcspn(spec, "=");
	json_t *value;
	char *name;
	int r;

	if (n == 0)
		return errors_cause(reason, -EINVAL,
		    "docker run -e names no variable");
	if ((name = strndup(spec, n)) == NULL)
		return -ENOMEM;
	if (spec[n] == '=')
		value = json_string(spec + n + 1);
	else if ((value = json_object_get(env, name)) != NULL)
		value = json_string(json_string_value(value));
	else {
		r = errors_cause(reason, -EINVAL,
		    "docker run -e %s: \"env\" gives no value for %s", name,
		    name);
		free(name);
		return r;
	}
	r = json_object_set_new(c->env, name, value);
	free(name);
	return r == 0 ? 0 : -ENOMEM;
}

/* Does what one docker run flag with a value asks. */
static int
import_docker_apply(struct import_container *c,
    enum import_docker_action action, const char *value, const json_t *env,
    char **reason)
{
	switch (action) {
	case IMPORT_DOCKER_ENV:
		return import_docker_env(c, value, env, reason);
	case IMPORT_DOCKER_VOLUME:
		if (json_array_append_new(c->volumes, json_string(value)) < 0)
			return -ENOMEM;
		return 0;
	case IMPORT_DOCKER_NETWORK:
		if (c->network != NULL)
			return errors_cause(reason, -EINVAL,
			    "docker run --network is given twice");
		c->network = value;
		return 0;
	default:
		return 0;
	}
}

/* Reads the flag at args[*i], and its value at args[*i + 1] if it has one. */
static int
import_docker_flag(struct import_container *c, const json_t *args, size_t *i,
    const json_t *env, char **reason)
{
	const char *a = json_string_value(json_array_get(args, *i)), *value;
	int k = import_docker_flag_find(a, &value);

	if (k < 0)
		return errors_cause(reason, -EINVAL,
		    "docker run flag %.*s is not supported; supported: %s",
		    (int)strcspn(a, "="), a, IMPORT_DOCKER_SUPPORTED);
	if (!import_docker_flags[k].has_value && value != NULL)
		return errors_cause(reason, -EINVAL,
		    "docker run flag %s takes no value",
		    import_docker_flags[k].name);
	if (!import_docker_flags[k].has_value)
		return 0;
	if (value == NULL) {
		if (++*i == json_array_size(args))
			return errors_cause(reason, -EINVAL,
			    "docker run flag %s needs a value",
			    import_docker_flags[k].name);
		value = json_string_value(json_array_get(args, *i));
	}
	return import_docker_apply(c, import_docker_flags[k].action, value, env,
	    reason);
}

/* Reads the flags after "run" up to the image. */
static int
import_docker_parse(struct import_container *c, const json_t *args,
    const json_t *env, char **reason)
{
	size_t i;
	const char *a;
	int r;

	for (i = 1; i < json_array_size(args); i++) {
		a = json_string_value(json_array_get(args, i));
		if (a[0] != '-')
			break;
		if ((r = import_docker_flag(c, args, &i, env, reason)) < 0)
			return r;
	}
	if (i == json_array_size(args))
		return errors_cause(reason, -EINVAL,
		    "docker run names no image");
	if (json_string_value(json_array_get(args, i))[0] == '\0')
		return errors_cause(reason, -EINVAL,
		    "docker run image is empty");
	c->image = i;
	return 0;
}

/* The container entry of a parsed docker run. */
static int
import_container_pack(const char *name, const struct import_found *f,
    const struct import_container *c, json_t **ret, char **reason)
{
	const json_t *args = f[IMPORT_ARGS].value;
	const char *given = json_string_value(json_array_get(args, c->image));
	char *image;
	int r;

	/* Checked as mcpd will check it; an implicit :latest made explicit. */
	if ((r = names_image_normalize(given, &image, reason)) < 0)
		return r;
	*ret =
	    json_pack("{s:s, s:s, s:s, s:s, s:o, s:O, s:O, s:s*, s:s*, s:s*}",
		"name", name, "kind", "container", "transport", "stdio",
		"image", image, "args", import_strings_from(args, c->image + 1),
		"env", c->env, "volumes", c->volumes, "network", c->network,
		"cwd", json_string_value(f[IMPORT_CWD].value), "runtime",
		c->is_podman ? "podman" : NULL);
	free(image);
	return *ret != NULL ? 0 : -ENOMEM;
}

/* A docker run command: the container it runs. */
static int
import_container(const char *name, const struct import_found *f,
    const char *cli, json_t **ret, char **reason)
{
	struct import_container c = { json_object(), json_array(), NULL, 0,
		strcmp(cli, "podman") == 0 };
	int r;

	if (c.env == NULL || c.volumes == NULL)
		r = -ENOMEM;
	else if ((r = import_docker_parse(&c, f[IMPORT_ARGS].value,
		      f[IMPORT_ENV].value, reason)) == 0)
		r = import_container_pack(name, f, &c, ret, reason);
	json_decref(c.env);
	json_decref(c.volumes);
	return r;
}

/*
 * mcpd's own entry, as client-config writes it (mcpctl ... bridge): mcpd
 * would be a server of itself, whose start waits for its own answer.
 */
static bool
import_is_bridge(const char *cmd, const json_t *args)
{
	const char *base = strrchr(cmd, '/') != NULL ? strrchr(cmd, '/') + 1 :
						       cmd;
	const json_t *a;
	size_t i;

	if (strcmp(base, "mcpctl") != 0)
		return false;
	json_array_foreach(args, i, a)
		if (json_is_string(a) &&
		    strcmp(json_string_value(a), "bridge") == 0)
			return true;
	return false;
}

/* A command: a process, or a container when it is docker run. */
static int
import_command(const char *name, const struct import_found *f, json_t **ret,
    char **reason)
{
	static const enum import_field_id unused[] = { IMPORT_HEADERS };
	const char *cmd = json_string_value(f[IMPORT_COMMAND].value);
	const char *cli;
	json_t *argv;
	int r;

	if (cmd == NULL)
		return import_fail_missing(f, IMPORT_COMMAND, reason);
	if (cmd[0] == '\0')
		return errors_cause(reason, -EINVAL, "\"command\" is empty");
	if ((r = import_check_unused(f, unused, 1, "the entry is a command",
		 reason)) < 0)
		return r;
	if (import_is_bridge(cmd, f[IMPORT_ARGS].value)) {
		*ret = json_pack("{s:s, s:s, s:s}", "name", name, "kind",
		    "skipped", "reason",
		    "mcpd's own entry (mcpctl bridge, as mcpctl client-config writes it)");
		return *ret != NULL ? 0 : -ENOMEM;
	}
	if ((cli = import_docker_run_cli(f)) != NULL)
		return import_container(name, f, cli, ret, reason);
	argv = import_strings_from(f[IMPORT_ARGS].value, 0);
	if (argv != NULL &&
	    json_array_insert_new(argv, 0, json_string(cmd)) < 0) {
		json_decref(argv);
		argv = NULL;
	}
	*ret = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s*}", "name", name,
	    "kind", "process", "transport", "stdio", "command", argv, "env",
	    import_map_copy(f[IMPORT_ENV].value), "cwd",
	    json_string_value(f[IMPORT_CWD].value));
	return *ret != NULL ? 0 : -ENOMEM;
}

/* One entry of the file (a copy); an -EINVAL makes it an invalid entry. */
static int
import_entry_build(const char *name, json_t *v, const char *workspace,
    json_t **ret, char **reason)
{
	struct import_found f[IMPORT_NFIELDS];
	const char *transport;
	int r;

	memset(f, 0, sizeof f);
	if (!json_is_object(v))
		return errors_cause(reason, -EINVAL,
		    "the entry is %s, not an object", import_type_name(v));
	if (json_is_true(json_object_get(v, "disabled"))) {
		*ret = json_pack("{s:s, s:s, s:s}", "name", name, "kind",
		    "skipped", "reason", "disabled in the file");
		return *ret != NULL ? 0 : -ENOMEM;
	}
	if ((r = import_read(v, workspace, f, reason)) < 0 ||
	    (r = import_transport_named(&f[IMPORT_TRANSPORT], &transport,
		 reason)) < 0)
		return r;
	if (f[IMPORT_COMMAND].value != NULL && f[IMPORT_URL].value != NULL)
		return errors_cause(reason, -EINVAL,
		    "both \"command\" and \"%s\" are given; an entry is one or the other",
		    f[IMPORT_URL].key);
	if (transport != NULL ? strcmp(transport, "stdio") == 0 :
				f[IMPORT_COMMAND].value != NULL)
		return import_command(name, f, ret, reason);
	if (transport == NULL && f[IMPORT_URL].value == NULL)
		return import_fail_missing(f, IMPORT_URL, reason);
	return import_remote(name, f, transport, ret, reason);
}

/* The entry name names in the file, or NULL when out of memory. */
static json_t *
import_entry(const char *name, const json_t *v, const char *workspace)
{
	/* Translated in a copy: the caller's file stays as it was read. */
	json_t *copy = json_deep_copy(v), *e = NULL;
	char *reason = NULL;
	int r = copy != NULL ?
	    import_entry_build(name, copy, workspace, &e, &reason) :
	    -ENOMEM;

	if (r == 0 && import_entry_secrets(e) < 0) {
		json_decref(e);
		e = NULL;
	}
	if (r == -EINVAL)
		e = json_pack("{s:s, s:s, s:s}", "name", name, "kind",
		    "invalid", "reason", reason);
	free(reason);
	json_decref(copy);
	return e;
}

/* Writes the shapes import_parse accepts, for a cause. */
static void
import_print_shapes(FILE *f)
{
	const struct import_shape *s;

	for (size_t i = 0; i < IMPORT_NSHAPES; i++) {
		s = &import_shapes[i];
		fputs(i == 0 ? "" : i + 1 == IMPORT_NSHAPES ? " or " : ", ", f);
		for (size_t k = 0; k < 3 && s->path[k] != NULL; k++)
			fprintf(f, "{\"%s\": ", s->path[k]);
		fputs("...", f);
		for (size_t k = 0; k < 3 && s->path[k] != NULL; k++)
			fputc('}', f);
		fprintf(f, " (%s)", s->clients);
	}
}

/* Fails with what, then the accepted shapes. */
static int
import_fail_shapes(char **cause, const char *what)
{
	size_t len;
	FILE *f = open_memstream(cause, &len);

	if (f == NULL) {
		*cause = NULL;
		return -ENOMEM;
	}
	fprintf(f, "%s; expected ", what);
	import_print_shapes(f);
	if (fclose(f) != 0) {
		free(*cause);
		*cause = NULL;
		return -ENOMEM;
	}
	return -EINVAL;
}

/* Fails for a shape's servers that are not an object. */
static int
import_fail_path(const struct import_shape *s, const json_t *v, char **cause)
{
	char path[128] = "";

	for (size_t k = 0; k < 3 && s->path[k] != NULL; k++)
		import_append(path, sizeof path, "%s\"%s\"", k > 0 ? "." : "",
		    s->path[k]);
	return errors_cause(cause, -EINVAL,
	    "%s is %s, not an object of servers", path, import_type_name(v));
}

/* The servers object of the first shape root has. */
static int
import_find_servers(const json_t *root, json_t **ret, char **cause)
{
	const struct import_shape *s;
	json_t *v;

	if (!json_is_object(root))
		return import_fail_shapes(cause,
		    "the file is not a JSON object");
	for (size_t i = 0; i < IMPORT_NSHAPES; i++) {
		s = &import_shapes[i];
		v = json_object_get(root, s->path[0]);
		for (size_t k = 1; k < 3 && s->path[k] != NULL; k++)
			v = json_object_get(v, s->path[k]);
		if (v == NULL)
			continue;
		if (!json_is_object(v))
			return import_fail_path(s, v, cause);
		*ret = v;
		return 0;
	}
	return import_fail_shapes(cause, "the file has no MCP servers");
}

int
import_parse(const json_t *root, json_t **ret_entries, char **cause)
{
	return import_parse_in(root, NULL, ret_entries, cause);
}

int
import_parse_in(const json_t *root, const char *workspace, json_t **ret_entries,
    char **cause)
{
	json_t *servers = NULL, *entries, *v;
	const char *name;
	int r;

	if ((r = import_find_servers(root, &servers, cause)) < 0)
		return r;
	if ((entries = json_array()) == NULL)
		goto nomem;
	json_object_foreach(servers, name, v)
		if (json_array_append_new(entries,
			import_entry(name, v, workspace)) < 0)
			goto nomem;
	*ret_entries = entries;
	return 0;
nomem:
	json_decref(entries);
	*cause = NULL;
	return -ENOMEM;
}
