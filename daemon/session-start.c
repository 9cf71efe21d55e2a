/* SPDX-License-Identifier: ISC */
/* A session's start: discovery or initialize (both eras), then its tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "session-int.h"

#define SESSION_MAX_PAGES   1000 /* tools/list pages before giving up */
#define SESSION_OFFERED	    "2025-11-25"
#define SESSION_DISCOVER_MS 3000 /* a legacy server may never answer it */

static const char *const session_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
	NULL,
};

/*
 * What is left of the start's deadline (timeout_ms covers discovery, the
 * handshake and the first listing together), or a call's when ready.
 */
static int
session_timeout(const struct session *s)
{
	uint64_t now = mcpd_now_ms();

	if (s->phase == SESSION_READY)
		return mcpd_opts.call_timeout_ms;
	return now < s->deadline_ms ? (int)(s->deadline_ms - now) : 1;
}

/* 2026-07-28: tools with invalid x-mcp-header annotations are refused. */
static void
session_drop_invalid_tools(struct session *s)
{
	json_t *tool;
	char *why = NULL;
	size_t i = 0;

	while (i < json_array_size(s->listing)) {
		tool = json_array_get(s->listing, i);
		if (era_tool_headers_valid(tool, &why)) {
			i++;
			continue;
		}
		log_warnx("refusing tool %s: %s",
		    json_string_value(json_object_get(tool, "name")),
		    why != NULL ? why : "");
		free(why);
		why = NULL;
		json_array_remove(s->listing, i);
	}
}

static void
session_list_done(struct session *s)
{
	static uint64_t serial;
	/* A new session of the same server with the same tools: no news. */
	bool is_same = s->is_relist_quiet && s->phase == SESSION_READY &&
	    json_equal(s->tools, s->listing);

	if (s->is_modern)
		session_drop_invalid_tools(s);
	if (!s->wants_relist)
		s->is_relist_quiet = false;
	if (is_same)
		json_decref(s->listing);
	else {
		json_decref(s->tools);
		s->tools = s->listing;
		s->tools_serial = ++serial;
	}
	s->listing = NULL;
	json_decref(s->seen_cursors);
	s->seen_cursors = NULL;
	s->is_listing = false;
	if (s->wants_relist) {
		s->wants_relist = false;
		session_list_next(s, NULL);
		return;
	}
	if (s->phase == SESSION_LISTING) {
		session_set_phase(s, SESSION_READY);
		s->cbs->ready(s->arg, s);
	} else if (!is_same && s->cbs->tools_changed != NULL)
		s->cbs->tools_changed(s->arg, s);
}

static void
session_list_abort(struct session *s, const char *why)
{
	json_decref(s->listing);
	json_decref(s->seen_cursors);
	s->listing = s->seen_cursors = NULL;
	s->is_listing = false;
	s->is_relist_quiet = false;
	if (s->phase != SESSION_READY) {
		session_fail(s, "listing tools failed: %s", why);
		return;
	}
	log_warnx("re-listing tools failed, keeping the previous list: %s",
	    why);
}

/* A request of the session's own (its handshake, its listing). */
struct session_own {
	session_reply_fn *fn;
	struct session *s; /* a reference: the answer may come after a free */
};

static void
session_own_answered(void *arg, const struct session_reply *r)
{
	struct session_own *o = arg;

	if (o->s->phase != SESSION_DEAD)
		o->fn(o->s, r);
	session_unref(o->s);
	free(o);
}

/* Sends it, holding s until fn has heard the answer (not when s died). */
static void
session_request_own(struct session *s, const char *method, json_t *params,
    int timeout_ms, session_reply_fn *fn)
{
	struct session_own *o = xmalloc(sizeof *o);

	o->fn = fn;
	o->s = s;
	session_ref(s);
	session_request(s, method, params, timeout_ms, session_own_answered, o);
}

static void
session_on_tools_page(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	json_t *tools, *next;
	const char *cursor;
	char why[512];

	if (r->result == NULL) {
		snprintf(why, sizeof why, "%s", r->message);
		session_list_abort(s, why);
		return;
	}
	tools = json_object_get(r->result, "tools");
	if (!json_is_array(tools)) {
		session_list_abort(s, "tools/list result has no tools array");
		return;
	}
	json_array_extend(s->listing, tools);
	next = json_object_get(r->result, "nextCursor");
	cursor = json_string_value(next);
	if (cursor == NULL || cursor[0] == '\0') {
		session_list_done(s);
		return;
	}
	if (json_object_get(s->seen_cursors, cursor) != NULL) {
		snprintf(why, sizeof why,
		    "the server repeated the tools/list cursor \"%.64s\"; stopped to avoid an endless listing",
		    cursor);
		session_list_abort(s, why);
		return;
	}
	if (++s->pages >= SESSION_MAX_PAGES) {
		session_list_abort(s, "more than 1000 tools/list pages");
		return;
	}
	session_list_next(s, cursor);
}

/* Asks for the first page (cursor NULL) or the page after cursor. */
void
session_list_next(struct session *s, const char *cursor)
{
	json_t *params = json_object();

	if (cursor == NULL) {
		json_decref(s->listing);
		json_decref(s->seen_cursors);
		s->listing = json_array();
		s->seen_cursors = json_object();
		s->pages = 0;
		s->is_listing = true;
	} else {
		json_object_set_new(s->seen_cursors, cursor, json_true());
		json_object_set_new(params, "cursor", json_string(cursor));
	}
	session_request_own(s, "tools/list", params, session_timeout(s),
	    session_on_tools_page);
}

static bool
session_version_supported(const char *v)
{
	for (size_t i = 0; v != NULL && session_versions[i] != NULL; i++)
		if (strcmp(v, session_versions[i]) == 0)
			return true;
	return false;
}

/* Both eras end here: the version, who the server is, then its tools. */
static void
session_agreed(struct session *s, const char *version, const json_t *result,
    json_t *info, json_t *capabilities)
{
	const char *text = json_string_value(json_object_get(result,
	    "instructions"));

	s->instructions = text != NULL && *text != '\0' ? xstrdup(text) : NULL;
	s->protocol_version = xstrdup(version);
	s->server_info = json_incref(info);
	s->capabilities = json_incref(capabilities);
	session_set_phase(s, SESSION_LISTING);
	if (json_object_get(s->capabilities, "tools") == NULL) {
		s->listing = json_array();
		session_list_done(s);
		return;
	}
	session_list_next(s, NULL);
}

static void session_discover(struct session *);

static void
session_on_initialize(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	const char *version;
	json_t *note;

	if (r->result == NULL) {
		s->is_denied = r->error == NULL && r->kind == ERRORS_DENIED;
		session_fail(s, "initialize failed: %s", r->message);
		return;
	}
	version = json_string_value(json_object_get(r->result,
	    "protocolVersion"));
	if (!session_version_supported(version)) {
		session_fail(s,
		    "the server chose protocol version %s; mcpd supports 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25",
		    version != NULL ? version : "(none)");
		return;
	}
	note = jsonrpc_notification("notifications/initialized", NULL);
	session_answer(s, note);
	session_agreed(s, version, r->result,
	    json_object_get(r->result, "serverInfo"),
	    json_object_get(r->result, "capabilities"));
}

/*
 * mcpd offers what it can relay to a caller (DESIGN 11): sampling,
 * elicitation (both modes) and roots, when its owner takes such requests;
 * it says when its gateway sessions' roots change (gateway-roots.c).
 */
static json_t *
session_initialize_params(const struct session *s)
{
	json_t *caps = s->cbs != NULL && s->cbs->request != NULL ?
	    json_pack("{s:{}, s:{s:{}, s:{}}, s:{s:b}}", "sampling",
		"elicitation", "form", "url", "roots", "listChanged", 1) :
	    json_object();

	return json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion",
	    SESSION_OFFERED, "capabilities", caps, "clientInfo", "name", "mcpd",
	    "version", MCPD_VERSION);
}

static void
session_initialize(struct session *s)
{
	session_request_own(s, "initialize", session_initialize_params(s),
	    session_timeout(s), session_on_initialize);
}

/*
 * The answer to server/discover decides the era: a result listing
 * 2026-07-28 is modern; -32022 listing it is retried once; anything else
 * (an error, a result without supportedVersions, a timeout) means a
 * legacy server: initialize.
 */
static void
session_on_discover(void *arg, const struct session_reply *r)
{
	struct session *s = arg;
	json_t *data = json_object_get(r->error, "data");

	if (r->result != NULL &&
	    era_lists_version(json_object_get(r->result, "supportedVersions"),
		ERA_MODERN)) {
		s->is_modern = true;
		session_agreed(s, ERA_MODERN, r->result,
		    era_server_info(r->result),
		    json_object_get(r->result, "capabilities"));
		return;
	}
	if (r->error != NULL && !s->has_retried_discover &&
	    json_integer_value(json_object_get(r->error, "code")) == -32022 &&
	    era_lists_version(json_object_get(data, "supported"), ERA_MODERN)) {
		s->has_retried_discover = true;
		session_discover(s);
		return;
	}
	session_initialize(s);
}

static void
session_discover(struct session *s)
{
	int left = session_timeout(s);
	int timeout = left < SESSION_DISCOVER_MS ? left : SESSION_DISCOVER_MS;

	session_request_own(s, "server/discover", json_object(), timeout,
	    session_on_discover);
}

int
session_start(struct session *s, char **cause)
{
	int r;

	if ((r = s->transport->ops->open(s->transport, cause)) < 0) {
		session_set_phase(s, SESSION_DEAD);
		return r;
	}
	session_set_phase(s, SESSION_INITIALIZING);
	s->deadline_ms = mcpd_now_ms() + (uint64_t)s->timeout_ms;
	session_discover(s);
	return 0;
}

/*
 * Whether caps declare what a server's request needs: sampling, roots,
 * or elicitation in the mode asked (an empty elicitation object is form
 * mode, as before modes existed).
 */
bool
session_caps_take(const json_t *caps, const char *method, const json_t *params)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));
	const json_t *e;

	if (strcmp(method, "sampling/createMessage") == 0)
		return json_is_object(json_object_get(caps, "sampling"));
	if (strcmp(method, "roots/list") == 0)
		return json_is_object(json_object_get(caps, "roots"));
	if (strcmp(method, "elicitation/create") != 0 ||
	    !json_is_object(e = json_object_get(caps, "elicitation")))
		return false;
	if (mode != NULL && strcmp(mode, "url") == 0)
		return json_is_object(json_object_get(e, "url"));
	return json_object_size(e) == 0 ||
	    json_is_object(json_object_get(e, "form"));
}

json_t *
session_save(const struct session *s)
{
	return json_pack("{s:s?, s:b, s:O?, s:O?, s:s?}", "protocol_version",
	    s->protocol_version, "is_modern", s->is_modern, "server_info",
	    s->server_info, "capabilities", s->capabilities, "instructions",
	    s->instructions);
}

/*
 * The handshake was made before the upgrade: the session goes on as if
 * it had just been agreed, and lists the server's tools again.
 */
void
session_adopt(struct session *s, const json_t *saved)
{
	const char *version = json_string_value(json_object_get(saved,
	    "protocol_version"));
	const char *text = json_string_value(json_object_get(saved,
	    "instructions"));
	json_t *result = json_pack("{s:s?}", "instructions", text);

	s->is_modern = json_is_true(json_object_get(saved, "is_modern"));
	session_set_phase(s, SESSION_INITIALIZING);
	s->deadline_ms = mcpd_now_ms() + (uint64_t)s->timeout_ms;
	session_agreed(s, version != NULL ? version : SESSION_OFFERED, result,
	    json_object_get(saved, "server_info"),
	    json_object_get(saved, "capabilities"));
	json_decref(result);
}
