/* SPDX-License-Identifier: ISC */
/* The lists a server gave (tools, prompts, resources, templates), kept. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "paths.h"
#include "server-int.h"

#define SERVER_KEPT_DIR	    "kept"
#define SERVER_KEPT_VERSION 1
#define SERVER_KEPT_PAGES   100 /* pages of one list, at most */

/* The lists besides tools: method, key, and the capability that offers it. */
static const struct server_kept_list {
	const char *method, *key, *capability;
} server_kept_lists[] = {
	{ "prompts/list", "prompts", "prompts" },
	{ "resources/list", "resources", "resources" },
	{ "resources/templates/list", "resourceTemplates", "resources" },
};
#define SERVER_KEPT_NLISTS \
	(sizeof server_kept_lists / sizeof server_kept_lists[0])

/* One taking of the lists of one connection. */
struct server_kept_take {
	struct server *server;
	struct session *session;
	json_t *lists; /* key -> items so far */
	size_t pending;
};

/* One page of one list. */
struct server_kept_page {
	struct server_kept_take *take;
	const struct server_kept_list *list;
	int pages;
};

json_t *
server_tools_peek(const struct server *s)
{
	if (s->session != NULL)
		return session_tools_peek(s->session);
	if (server_idle_is_listed(s))
		return json_object_get(s->kept, "tools");
	return NULL;
}

const json_t *
server_capabilities_peek(const struct server *s)
{
	if (s->session != NULL)
		return session_capabilities_peek(s->session);
	if (server_idle_is_listed(s))
		return json_object_get(s->kept, "capabilities");
	return NULL;
}

static char *
server_kept_path(const struct server *s)
{
	char *path;

	xasprintf(&path, "%s/" SERVER_KEPT_DIR "/%s.json", mcpd_opts.state_dir,
	    s->id);
	return path;
}

/* Written whole, then read back and compared, as the saved rows are. */
static int
server_kept_save(const struct server *s, const char *text, size_t len,
    char **cause)
{
	char *path = server_kept_path(s), *dir, *got = NULL;
	size_t got_len;
	int r;

	xasprintf(&dir, "%s/" SERVER_KEPT_DIR, mcpd_opts.state_dir);
	if ((r = paths_mkdir_p(dir, 0700)) < 0)
		xasprintf(cause, "cannot create %s: %s", dir, strerror(-r));
	else if ((r = fileio_write_atomic(path, text, len, 0600, cause)) < 0)
		;
	else if ((r = fileio_read_all(path, mcpd_opts.max_kept_bytes,
		      FILEIO_UNCACHED | FILEIO_NOFOLLOW | FILEIO_REGULAR, &got,
		      &got_len)) < 0)
		xasprintf(cause, "cannot read back %s: %s", path, strerror(-r));
	else if (got_len != len || memcmp(got, text, len) != 0) {
		r = -EIO;
		xasprintf(cause,
		    "read back of %s differs from what was written", path);
	}
	free(got);
	free(dir);
	free(path);
	return r;
}

/* The lists as kept: with each tool's definition digest. */
static json_t *
server_kept_doc(struct server *s, json_t *lists)
{
	json_t *tools = session_tools_peek(s->session), *tool;
	json_t *doc, *digests = json_object();
	const char *name, *digest;
	size_t i;

	json_array_foreach(tools, i, tool)
		if ((name = json_string_value(json_object_get(tool, "name"))) !=
			NULL &&
		    (digest = server_tool_definition(s, name)) != NULL)
			json_object_set_new(digests, name, json_string(digest));
	const json_t *caps = session_capabilities_peek(s->session);

	doc = json_pack("{s:i, s:s, s:o, s:o, s:o}", "version",
	    SERVER_KEPT_VERSION, "id", s->id, "tools",
	    tools != NULL ? json_deep_copy(tools) : json_array(), "definitions",
	    digests, "capabilities",
	    caps != NULL ? json_deep_copy(caps) : json_object());
	if (session_instructions_peek(s->session) != NULL)
		json_object_set_new(doc, "instructions",
		    json_string(session_instructions_peek(s->session)));
	json_object_update(doc, lists);
	return doc;
}

/* Whether what a client sees of two kept documents differs. */
static bool
server_kept_differs(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "tools", "prompts", "resources",
		"resourceTemplates" };

	if (a == NULL || b == NULL)
		return a != b;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!json_equal(json_object_get(a, keys[i]),
			json_object_get(b, keys[i])) &&
		    (json_object_get(a, keys[i]) != NULL ||
			json_object_get(b, keys[i]) != NULL))
			return true;
	return false;
}

/* Every list came: they replace the kept ones, saved with the row. */
static void
server_kept_taken(struct server_kept_take *take)
{
	struct server *s = take->server;
	json_t *doc;
	char *text = NULL, *cause = NULL;
	size_t len = 0;
	bool changed;

	if (s->is_dead || take->session != s->session)
		return; /* another connection serves now: it takes its own */
	doc = server_kept_doc(s, take->lists);
	if ((text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS)) != NULL)
		len = strlen(text);
	if (text == NULL || len > mcpd_opts.max_kept_bytes) {
		log_server(LOG_WARNING, s->name,
		    "its lists are over --max-kept-bytes (%zu) as JSON: they are not kept, so it cannot go idle and its restarts are seen",
		    mcpd_opts.max_kept_bytes);
		server_logs_note(s,
		    "its lists are over --max-kept-bytes (%zu) as JSON: they are not kept, so it cannot go idle and its restarts are seen",
		    mcpd_opts.max_kept_bytes);
		json_decref(doc);
		free(text);
		return;
	}
	changed = server_kept_differs(s->kept, doc);
	json_decref(s->kept);
	s->kept = doc;
	s->kept_serial++;
	if (s->is_persistent && server_kept_save(s, text, len, &cause) < 0) {
		/* Kept in memory: it may still go idle until mcpd stops. */
		log_server(LOG_WARNING, s->name,
		    "its lists could not be saved: %s; at the next start of mcpd it starts to take them again",
		    cause != NULL ? cause : "unknown error");
		free(cause);
	}
	free(text);
	server_idle_lists_kept(s, changed);
}

static void
server_kept_take_end(struct server_kept_take *take)
{
	if (--take->pending > 0)
		return;
	server_kept_taken(take);
	json_decref(take->lists);
	session_unref(take->session);
	server_unref(take->server);
	free(take);
}

static void server_kept_ask(struct server_kept_page *page, const char *cursor);

static void
server_kept_take_asked(void *arg)
{
	server_kept_take_end(arg);
}

static void
server_kept_page(void *arg, const struct session_reply *r)
{
	struct server_kept_page *page = arg;
	struct server_kept_take *take = page->take;
	json_t *items = json_object_get(r->result, page->list->key);
	const char *cursor = json_string_value(json_object_get(r->result,
	    "nextCursor"));

	/* Left out as the gateway leaves it out: kept empty, not fatal. */
	if (!json_is_array(items))
		log_server(LOG_INFO, take->server->name,
		    "%s failed: %s; it is kept empty", page->list->method,
		    r->message != NULL ? r->message : "no list");
	else
		json_array_extend(json_object_get(take->lists, page->list->key),
		    items);
	if (json_is_array(items) && cursor != NULL && cursor[0] != '\0' &&
	    ++page->pages < SERVER_KEPT_PAGES) {
		server_kept_ask(page, cursor);
		return;
	}
	free(page);
	server_kept_take_end(take);
}

static void
server_kept_ask(struct server_kept_page *page, const char *cursor)
{
	struct server_kept_take *take = page->take;
	json_t *params = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) :
					  json_object();

	/* A request that cannot go is answered from the loop, as failed. */
	(void)session_request(take->session, page->list->method, params,
	    mcpd_opts.call_timeout_ms, server_kept_page, page);
}

void
server_kept_take(struct server *s)
{
	const json_t *caps = session_capabilities_peek(s->session);
	struct server_kept_take *take;
	struct server_kept_page *page;

	/*
	 * Kept with the row; an unsaved server's in memory only (they stand
	 * for it while it is idle or restarts).
	 */
	if (!session_is_ready(s->session))
		return;
	take = xcalloc(1, sizeof *take);
	take->server = s;
	take->session = s->session;
	server_ref(s);
	session_ref(s->session);
	take->lists = json_object();
	take->pending = 1; /* until all are asked */
	for (size_t i = 0; i < SERVER_KEPT_NLISTS; i++) {
		if (json_object_get(caps, server_kept_lists[i].capability) ==
		    NULL)
			continue;
		json_object_set_new(take->lists, server_kept_lists[i].key,
		    json_array());
		page = xcalloc(1, sizeof *page);
		page->take = take;
		page->list = &server_kept_lists[i];
		take->pending++;
		server_kept_ask(page, NULL);
	}
	/* All asked: from the loop, never inside the caller (DESIGN 10). */
	defer_call(server_kept_take_asked, take);
}

int
server_kept_restore(struct server *s, char **cause)
{
	char *path = server_kept_path(s), *text = NULL;
	size_t len;
	json_error_t error;
	json_t *doc;
	int r;

	r = fileio_read_all(path, mcpd_opts.max_kept_bytes,
	    FILEIO_NOFOLLOW | FILEIO_REGULAR, &text, &len);
	if (r < 0) {
		xasprintf(cause, "cannot read %s: %s", path, strerror(-r));
		free(path);
		return r;
	}
	doc = json_loadb(text, len, 0, &error);
	free(text);
	if (doc == NULL || !json_is_array(json_object_get(doc, "tools")) ||
	    json_integer_value(json_object_get(doc, "version")) !=
		SERVER_KEPT_VERSION ||
	    json_string_value(json_object_get(doc, "id")) == NULL ||
	    strcmp(json_string_value(json_object_get(doc, "id")), s->id) != 0) {
		xasprintf(cause, "%s is not a version %d kept list of %s", path,
		    SERVER_KEPT_VERSION, s->id);
		json_decref(doc);
		free(path);
		return -EINVAL;
	}
	free(path);
	json_decref(s->kept);
	s->kept = doc;
	s->kept_serial++;
	return 0;
}

void
server_kept_forget(struct server *s)
{
	char *path = server_kept_path(s);

	if (unlink(path) < 0 && errno != ENOENT)
		log_server(LOG_WARNING, s->name, "cannot remove %s: %s", path,
		    strerror(errno));
	free(path);
}

/* An answer from what was kept, on a later loop turn (DESIGN 10). */
struct server_kept_answer {
	session_reply_fn *cb;
	void *arg;
	json_t *result;
};

static void
server_kept_answer_now(void *arg)
{
	struct server_kept_answer *a = arg;
	struct session_reply r = { a->result, NULL, ERRORS_KIND_COUNT, NULL };

	a->cb(a->arg, &r);
	json_decref(a->result);
	free(a);
}

bool
server_kept_answers(struct server *s, const char *method, json_t *params,
    session_reply_fn *cb, void *arg)
{
	struct server_kept_answer *a;
	const json_t *items = NULL;
	size_t i;

	if (s->session != NULL || !server_idle_is_listed(s))
		return false;
	for (i = 0; i < SERVER_KEPT_NLISTS; i++)
		if (strcmp(method, server_kept_lists[i].method) == 0)
			break;
	if (i == SERVER_KEPT_NLISTS)
		return false;
	items = json_object_get(s->kept, server_kept_lists[i].key);
	a = xcalloc(1, sizeof *a);
	a->cb = cb;
	a->arg = arg;
	/* One page: what was kept is every page of it. */
	a->result = json_pack("{s:o}", server_kept_lists[i].key,
	    items != NULL ? json_deep_copy(items) : json_array());
	json_decref(params);
	defer_call(server_kept_answer_now, a);
	return true;
}
