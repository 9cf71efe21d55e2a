/* SPDX-License-Identifier: ISC */
/* The row stores: rows per agent in enabled.json (or profiles.json), written atomically. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "mcpd.h"

#define STORE_FILE	 "enabled.json"
#define STORE_VERSION	 1
#define STORE_MAX_MIB	 16
#define STORE_MAX_BYTES	 ((size_t)STORE_MAX_MIB * 1024 * 1024)
#define STORE_DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)
#define STORE_HANDS_OFF	 "mcpd will not change it: fix it or move it aside"

struct store {
	char *path;	/* <dir>/enabled.json, written through <path>.tmp */
	json_t *doc;	/* {"version": 1, "agents": {...}} as last confirmed */
	char *error;	/* why changes are refused, or NULL */
	int error_code; /* the negative errno that goes with error */
};

/* Reads path whole, from the device: -ENOENT if missing, -EFBIG past cap. */
static int
store_read(const char *path, char **ret, size_t *ret_len)
{
	return fileio_read_all(path, STORE_MAX_BYTES, FILEIO_UNCACHED, ret,
	    ret_len);
}

static json_t *
store_doc_empty(void)
{
	return xjson(json_pack("{s:i, s:{}}", "version", STORE_VERSION,
	    "agents"));
}

/* Says in *what (new string) what is wrong; returns 0. */
static int store_what(char **, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static int
store_what(char **what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xvasprintf(what, fmt, ap);
	va_end(ap);
	return 0;
}

/* Checks every agent's rows: an array of objects with unique string ids. */
static int
store_check_rows(json_t *agents, char **what)
{
	const json_t *rows, *row;
	const char *agent, *id;
	json_t *seen;
	size_t i;
	int r = 0;

	*what = NULL;
	json_object_foreach(agents, agent, rows) {
		if (!json_is_array(rows))
			return store_what(what, "agent \"%s\" is not an array",
			    agent);
		seen = xjson(json_object());
		json_array_foreach(rows, i, row) {
			id = json_string_value(json_object_get(row, "id"));
			if (id == NULL || *id == '\0')
				r = store_what(what,
				    "agent \"%s\", row %zu has no string \"id\"",
				    agent, i + 1);
			else if (json_object_get(seen, id) != NULL)
				r = store_what(what,
				    "agent \"%s\" has id \"%s\" twice", agent,
				    id);
			else if (json_object_set_new(seen, id, json_null()) < 0)
				fatalx("out of memory");
			if (r < 0 || *what != NULL)
				break;
		}
		json_decref(seen);
		if (r < 0 || *what != NULL)
			return r;
	}
	return 0;
}

/* Checks the shape of a parsed file: 0, or a negative errno with *cause. */
static int
store_check(const char *path, const json_t *doc, char **cause)
{
	const json_t *version = json_object_get(doc, "version");
	json_t *agents = json_object_get(doc, "agents");
	char *what = NULL;
	int r = 0;

	if (!json_is_object(doc))
		r = store_what(&what, "not a JSON object");
	else if (!json_is_integer(version) || json_integer_value(version) < 1)
		r = store_what(&what, "no valid \"version\" (an integer)");
	else if (json_integer_value(version) > STORE_VERSION)
		return errors_cause(cause, -ENOTSUP,
		    "%s was written by a newer mcpd (version %lld); this mcpd reads version %d: upgrade mcpd or move the file aside",
		    path, (long long)json_integer_value(version),
		    STORE_VERSION);
	else if (!json_is_object(agents))
		r = store_what(&what, "no \"agents\" object");
	else
		r = store_check_rows(agents, &what);
	if (what == NULL)
		return 0;
	r = errors_cause(cause, -EBADMSG, "%s is corrupt: %s; %s", path, what,
	    STORE_HANDS_OFF);
	free(what);
	return r;
}

/* Reads and checks path into *ret (an empty store when it is missing). */
static int
store_load(const char *path, json_t **ret, char **cause)
{
	json_error_t jerr;
	json_t *doc;
	char *buf;
	size_t len;
	int r;

	r = store_read(path, &buf, &len);
	if (r == -ENOENT) {
		*ret = store_doc_empty();
		return 0;
	}
	if (r == -EFBIG)
		return errors_cause(cause, -EFBIG,
		    "%s is larger than %d MiB; %s", path, STORE_MAX_MIB,
		    STORE_HANDS_OFF);
	if (r < 0)
		return errors_cause(cause, r, "cannot read %s: %s", path,
		    strerror(-r));
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (doc == NULL && json_error_code(&jerr) == json_error_out_of_memory)
		fatalx("out of memory");
	if (doc == NULL)
		return errors_cause(cause, -EBADMSG,
		    "%s is corrupt: %s at line %d, column %d; %s", path,
		    jerr.text, jerr.line, jerr.column, STORE_HANDS_OFF);
	if ((r = store_check(path, doc, cause)) < 0) {
		json_decref(doc);
		return r;
	}
	*ret = doc;
	return 0;
}

int
store_open(const char *dir, struct store **ret)
{
	return store_open_file(dir, STORE_FILE, ret);
}

int
store_open_file(const char *dir, const char *file, struct store **ret)
{
	struct store *s;
	char *cause = NULL;
	int r;

	s = xcalloc(1, sizeof *s);
	xasprintf(&s->path, "%s/%s", dir, file);
	r = store_load(s->path, &s->doc, &cause);
	if (r < 0) {
		s->error = cause;
		s->error_code = r;
		s->doc = store_doc_empty();
	}
	*ret = s;
	return 0;
}

void
store_free(struct store *s)
{
	if (s == NULL)
		return;
	json_decref(s->doc);
	free(s->error);
	free(s->path);
	free(s);
}

const char *
store_error(const struct store *s)
{
	return s->error;
}

const json_t *
store_agents_peek(const struct store *s)
{
	return json_object_get(s->doc, "agents");
}

/* The index of the row with this id in rows, or -1. */
static ssize_t
store_row_index(const json_t *rows, const char *id)
{
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		if (strcmp(json_string_value(json_object_get(row, "id")), id) ==
		    0)
			return (ssize_t)i;
	return -1;
}

static const json_t *
store_row_find(const json_t *doc, const char *agent, const char *id)
{
	const json_t *rows;
	ssize_t i;

	rows = json_object_get(json_object_get(doc, "agents"), agent);
	if ((i = store_row_index(rows, id)) < 0)
		return NULL;
	return json_array_get(rows, (size_t)i);
}

const json_t *
store_row_peek(const struct store *s, const char *agent, const char *id)
{
	return store_row_find(s->doc, agent, id);
}

/* Reads the file afresh and compares it with buf, byte for byte. */
static int
store_readback(const struct store *s, const char *buf, size_t len, char **cause)
{
	char *got;
	size_t got_len;
	int r;

	if ((r = store_read(s->path, &got, &got_len)) < 0)
		return errors_cause(cause, r, "cannot read back %s: %s",
		    s->path, strerror(-r));
	r = got_len == len && memcmp(got, buf, len) == 0 ? 0 : -EIO;
	free(got);
	if (r < 0)
		return errors_cause(cause, -EIO,
		    "read back of %s differs from what was written", s->path);
	return 0;
}

/* Makes doc the file's content and, once confirmed on disk, the store's. */
static int
store_commit(struct store *s, json_t *doc, char **cause)
{
	char *buf;
	size_t len;
	int r;

	if ((len = json_dumpb(doc, NULL, 0, STORE_DUMP_FLAGS)) == 0)
		return errors_cause(cause, -ENOMEM, "cannot encode %s",
		    s->path);
	if (len + 1 > STORE_MAX_BYTES)
		return errors_cause(cause, -EFBIG,
		    "%s would grow past %d MiB: remove rows first", s->path,
		    STORE_MAX_MIB);
	buf = xmalloc(len + 1);
	if (json_dumpb(doc, buf, len, STORE_DUMP_FLAGS) != len) {
		free(buf);
		return errors_cause(cause, -ENOMEM, "cannot encode %s",
		    s->path);
	}
	buf[len++] = '\n';
	r = fileio_write_atomic(s->path, buf, len, 0600, cause);
	if (r == 0)
		r = store_readback(s, buf, len, cause);
	free(buf);
	if (r == 0) {
		json_decref(s->doc);
		s->doc = json_incref(doc);
	}
	return r;
}

/*
 * A copy of the store's document in which agent's rows (*ret_rows) may be
 * changed: the rows themselves are shared, never changed in place.
 */
static json_t *
store_doc_edit(const struct store *s, const char *agent, json_t **ret_rows)
{
	json_t *doc, *agents, *rows;

	rows = json_object_get(store_agents_peek(s), agent);
	rows = xjson(rows != NULL ? json_copy(rows) : json_array());
	agents = xjson(json_copy(json_object_get(s->doc, "agents")));
	doc = xjson(json_copy(s->doc));
	if (json_object_set(agents, agent, rows) < 0 ||
	    json_object_set(doc, "agents", agents) < 0)
		fatalx("out of memory");
	json_decref(agents);
	json_decref(rows);
	*ret_rows = rows;
	return doc;
}

/* Fails a change to a store that refuses them. */
static int
store_refuse(const struct store *s, char **cause)
{
	*cause = xstrdup(s->error);
	return s->error_code;
}

/* Checks agent before it becomes a key: -EINVAL unless UTF-8. */
static int
store_check_agent(const char *agent, char **cause)
{
	json_t *key;

	if (agent == NULL || (key = json_string(agent)) == NULL)
		return errors_cause(cause, -EINVAL,
		    "an agent name must be a UTF-8 string");
	json_decref(key);
	return 0;
}

int
store_put(struct store *s, const char *agent, const json_t *row, char **cause)
{
	json_t *doc, *rows, *copy;
	const char *id;
	ssize_t i;
	int r;

	if (s->error != NULL)
		return store_refuse(s, cause);
	if ((r = store_check_agent(agent, cause)) < 0)
		return r;
	id = json_string_value(json_object_get(row, "id"));
	if (id == NULL || *id == '\0')
		return errors_cause(cause, -EINVAL,
		    "a row must be an object with a string \"id\"");
	doc = store_doc_edit(s, agent, &rows);
	/* Copied so that the caller's later changes cannot reach the cache. */
	copy = xjson(json_deep_copy(row));
	if (((i = store_row_index(rows, id)) >= 0 ?
		    json_array_set_new(rows, (size_t)i, copy) :
		    json_array_append_new(rows, copy)) < 0)
		fatalx("out of memory");
	r = store_commit(s, doc, cause);
	json_decref(doc);
	return r;
}

int
store_remove(struct store *s, const char *agent, const char *id,
    bool *ret_removed, char **cause)
{
	json_t *doc, *rows;
	ssize_t i;
	int r;

	if (s->error != NULL)
		return store_refuse(s, cause);
	i = store_row_index(json_object_get(store_agents_peek(s), agent), id);
	if (i < 0) {
		if (ret_removed != NULL)
			*ret_removed = false;
		return 0;
	}
	if ((doc = store_doc_edit(s, agent, &rows)) == NULL ||
	    json_array_remove(rows, (size_t)i) < 0 ||
	    (json_array_size(rows) == 0 &&
		json_object_del(json_object_get(doc, "agents"), agent) < 0)) {
		json_decref(doc);
		return errors_cause(cause, -ENOMEM, "out of memory");
	}
	r = store_commit(s, doc, cause);
	json_decref(doc);
	if (r == 0 && ret_removed != NULL)
		*ret_removed = true;
	return r;
}

int
store_recheck(const struct store *s, const char *agent, const char *id,
    char **cause)
{
	const json_t *want, *got;
	json_t *doc;
	int r;

	if ((r = store_load(s->path, &doc, cause)) < 0)
		return r;
	want = store_row_peek(s, agent, id);
	got = store_row_find(doc, agent, id);
	r = want != NULL && got != NULL && json_equal(want, got);
	json_decref(doc);
	return r;
}

int
store_read_row(const struct store *s, const char *agent, const char *id,
    json_t **ret, char **cause)
{
	const json_t *row;
	json_t *doc;
	int r;

	if ((r = store_load(s->path, &doc, cause)) < 0)
		return r;
	row = store_row_find(doc, agent, id);
	*ret = row != NULL ? xjson(json_deep_copy(row)) : NULL;
	json_decref(doc);
	return 0;
}
