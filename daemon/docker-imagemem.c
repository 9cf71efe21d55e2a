/* SPDX-License-Identifier: ISC */
/* image-transports.json: image IDs that answered HTTP, refs that did stdio. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "fileio.h"
#include "log.h"
#include "mcpd.h"

#define IMAGEMEM_FILE	   "image-transports.json"
#define IMAGEMEM_VERSION   1
#define IMAGEMEM_MAX_BYTES (256 * 1024)
#define IMAGEMEM_MAX	   128 /* images remembered; the oldest go first */
#define IMAGEMEM_DUMP	   (JSON_INDENT(2) | JSON_SORT_KEYS)

static char *
imagemem_path(void)
{
	char *path;

	xasprintf(&path, "%s/%s", mcpd_opts.state_dir, IMAGEMEM_FILE);
	return path;
}

/* The file's bytes (NUL-terminated); -ENOENT when there is none. */
static int
imagemem_read(const char *path, char **ret, size_t *ret_len)
{
	return fileio_read_all(path, IMAGEMEM_MAX_BYTES, FILEIO_UNCACHED, ret,
	    ret_len);
}

/* Checks one image's entry: {"transport": "streamable-http", ...}. */
static bool
imagemem_entry_is_valid(json_t *e)
{
	const char *transport, *path;
	json_int_t port, saved;

	if (json_unpack(e, "{s:s, s:I, s:s, s:I}", "transport", &transport,
		"port", &port, "path", &path, "saved", &saved) < 0)
		return false;
	return strcmp(transport, "streamable-http") == 0 && port > 0 &&
	    port <= 65535 && path[0] == '/';
}

/*
 * Reads the memory into *ret (empty when there is no file). A file that
 * cannot be read or is not what mcpd writes is -EBADMSG (or the read's
 * errno), with *cause saying so: it is left alone.
 */
static int
imagemem_load(const char *path, json_t **ret, char **cause)
{
	json_error_t jerr;
	json_t *doc, *images, *refs, *stdio, *v;
	const char *key;
	char *buf;
	size_t len;
	int r;

	if ((r = imagemem_read(path, &buf, &len)) == -ENOENT) {
		*ret = xjson(json_pack("{s:i, s:{}, s:{}}", "version",
		    IMAGEMEM_VERSION, "images", "refs"));
		return 0;
	}
	if (r < 0)
		return errors_cause(cause, r, "cannot read %s: %s", path,
		    r == -EFBIG ? "larger than 256 KiB" : strerror(-r));
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (doc == NULL)
		return errors_cause(cause, -EBADMSG,
		    "%s is corrupt (%s at line %d, column %d)", path, jerr.text,
		    jerr.line, jerr.column);
	images = json_object_get(doc, "images");
	refs = json_object_get(doc, "refs");
	r = json_integer_value(json_object_get(doc, "version")) ==
		IMAGEMEM_VERSION &&
	    json_is_object(images) && json_is_object(refs);
	json_object_foreach(images, key, v)
		r = r && imagemem_entry_is_valid(v);
	json_object_foreach(refs, key, v)
		r = r && json_is_string(v);
	/* Optional: a file of an mcpd that did not remember stdio has none. */
	stdio = json_object_get(doc, "stdio");
	r = r && (stdio == NULL || json_is_object(stdio));
	json_object_foreach(stdio, key, v)
		r = r && json_is_integer(v);
	if (!r) {
		json_decref(doc);
		return errors_cause(cause, -EBADMSG,
		    "%s is corrupt (not a version %d object of \"images\" and \"refs\")",
		    path, IMAGEMEM_VERSION);
	}
	*ret = doc;
	return 0;
}

/* Loads the memory; a broken file is logged, once per reason, and ignored. */
static json_t *
imagemem_open(const char *path)
{
	static char *last_cause;
	char *cause = NULL;
	json_t *doc;

	if (imagemem_load(path, &doc, &cause) == 0) {
		free(last_cause);
		last_cause = NULL;
		return doc;
	}
	if (last_cause == NULL || strcmp(last_cause, cause) != 0)
		log_warnx(
		    "%s; mcpd ignores it and probes every container image as if it had never seen it (remove the file to let mcpd remember image transports again)",
		    cause);
	free(last_cause);
	last_cause = cause;
	return NULL;
}

/* Writes doc over the file and reads it back. */
static void
imagemem_commit(const char *path, json_t *doc)
{
	char *buf, *got = NULL, *cause = NULL;
	size_t len, got_len;
	int r;

	if ((buf = json_dumps(doc, IMAGEMEM_DUMP)) == NULL)
		fatalx("out of memory");
	len = strlen(buf);
	r = fileio_write_atomic(path, buf, len, 0600, &cause);
	if (r == 0 && (r = imagemem_read(path, &got, &got_len)) < 0)
		xasprintf(&cause, "cannot read back %s: %s", path,
		    strerror(-r));
	else if (r == 0 && (got_len != len || memcmp(got, buf, len) != 0)) {
		r = -EIO;
		xasprintf(&cause,
		    "read back of %s differs from what was written", path);
	}
	if (r < 0)
		log_warnx("%s: the image transports are not remembered",
		    cause != NULL ? cause : "cannot write them");
	free(cause);
	free(got);
	free(buf);
}

/* Drops the oldest images until at most IMAGEMEM_MAX remain. */
static void
imagemem_trim(json_t *images, json_t *refs)
{
	const char *key, *oldest;
	json_t *v;
	void *tmp;

	while (json_object_size(images) > IMAGEMEM_MAX) {
		json_int_t min = 0;

		oldest = NULL;
		json_object_foreach(images, key, v) {
			json_int_t t = json_integer_value(json_object_get(v,
			    "saved"));

			if (oldest == NULL || t < min) {
				oldest = key;
				min = t;
			}
		}
		json_object_foreach_safe(refs, tmp, key, v)
			if (strcmp(json_string_value(v), oldest) == 0)
				json_object_del(refs, key);
		json_object_del(images, oldest);
	}
}

int
imagemem_lookup(const char *image, char **ret_id, int *ret_port,
    char **ret_path)
{
	char *path = imagemem_path();
	json_t *doc = imagemem_open(path), *e;
	const char *id;
	int r = 0;

	free(path);
	if (doc == NULL)
		return 0;
	id = json_string_value(json_object_get(json_object_get(doc, "refs"),
	    image));
	e = id != NULL ? json_object_get(json_object_get(doc, "images"), id) :
			 NULL;
	if (e != NULL) {
		*ret_id = xstrdup(id);
		*ret_port = (int)json_integer_value(json_object_get(e, "port"));
		*ret_path = xstrdup(json_string_value(json_object_get(e,
		    "path")));
		r = 1;
	} else if (json_object_get(json_object_get(doc, "stdio"), image))
		r = 2;
	json_decref(doc);
	return r;
}

/* Drops the oldest stdio references until at most IMAGEMEM_MAX remain. */
static void
imagemem_trim_stdio(json_t *stdio)
{
	const char *key, *oldest;
	json_t *v;

	while (json_object_size(stdio) > IMAGEMEM_MAX) {
		oldest = NULL;
		json_object_foreach(stdio, key, v)
			if (oldest == NULL ||
			    json_integer_value(v) <
				json_integer_value(json_object_get(stdio,
				    oldest)))
				oldest = key;
		json_object_del(stdio, oldest);
	}
}

void
imagemem_remember_stdio(const char *image)
{
	char *path = imagemem_path();
	json_t *doc = imagemem_open(path), *stdio;

	if (doc != NULL &&
	    json_object_get(json_object_get(doc, "stdio"), image) == NULL) {
		if ((stdio = json_object_get(doc, "stdio")) == NULL)
			json_object_set_new(doc, "stdio",
			    stdio = xjson(json_object()));
		json_object_set_new(stdio, image,
		    xjson(json_integer((json_int_t)time(NULL))));
		imagemem_trim_stdio(stdio);
		imagemem_commit(path, doc);
	}
	json_decref(doc);
	free(path);
}

void
imagemem_remember(const char *image, const char *id, int port,
    const char *http_path)
{
	char *path = imagemem_path();
	json_t *doc = imagemem_open(path), *images, *refs, *e;

	if (doc == NULL) {
		free(path);
		return;
	}
	images = json_object_get(doc, "images");
	refs = json_object_get(doc, "refs");
	e = json_object_get(images, id);
	/* Known already: nothing to write (a load stays free of fsyncs). */
	if (e == NULL ||
	    json_integer_value(json_object_get(e, "port")) != port ||
	    strcmp(json_string_value(json_object_get(e, "path")), http_path) !=
		0 ||
	    json_string_value(json_object_get(refs, image)) == NULL ||
	    strcmp(json_string_value(json_object_get(refs, image)), id) != 0 ||
	    json_object_get(json_object_get(doc, "stdio"), image) != NULL) {
		/* The tag moved from a stdio image to this one. */
		json_object_del(json_object_get(doc, "stdio"), image);
		json_object_set_new(images, id,
		    xjson(json_pack("{s:s, s:i, s:s, s:I}", "transport",
			"streamable-http", "port", port, "path", http_path,
			"saved", (json_int_t)time(NULL))));
		json_object_set_new(refs, image, xjson(json_string(id)));
		imagemem_trim(images, refs);
		imagemem_commit(path, doc);
	}
	json_decref(doc);
	free(path);
}

void
imagemem_unref(const char *image, const char *id)
{
	char *path = imagemem_path();
	json_t *doc = imagemem_open(path), *refs;
	const char *was;

	if (doc != NULL) {
		refs = json_object_get(doc, "refs");
		was = json_string_value(json_object_get(refs, image));
		if (was != NULL && strcmp(was, id) == 0 &&
		    json_object_del(refs, image) == 0)
			imagemem_commit(path, doc);
		json_decref(doc);
	}
	free(path);
}

void
imagemem_forget(const char *id)
{
	char *path = imagemem_path();
	json_t *doc = imagemem_open(path), *refs, *v;
	const char *key;
	void *tmp;
	bool is_changed;

	if (doc == NULL) {
		free(path);
		return;
	}
	refs = json_object_get(doc, "refs");
	is_changed = json_object_del(json_object_get(doc, "images"), id) == 0;
	json_object_foreach_safe(refs, tmp, key, v)
		if (strcmp(json_string_value(v), id) == 0 &&
		    json_object_del(refs, key) == 0)
			is_changed = true;
	if (is_changed)
		imagemem_commit(path, doc);
	json_decref(doc);
	free(path);
}
