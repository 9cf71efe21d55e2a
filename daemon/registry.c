/* SPDX-License-Identifier: ISC */
/* Discovery: pages and records of the MCP Registry and the local catalog. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "textesc.h"

#define REGISTRY_LIMIT_MAX     100
#define REGISTRY_ERROR_CHARS   300 /* of the registry's error text shown */
#define REGISTRY_OFFICIAL_META "io.modelcontextprotocol.registry/official"

enum registry_op {
	REGISTRY_LIST,
	REGISTRY_INFO,
	REGISTRY_VERSIONS,
};

/* One request waiting on the registry. */
struct registry_job {
	struct request *req;
	struct registry_fetch *fetch;
	enum registry_op op;
	enum registry_source source;
	char *url;
	char *search, *cursor, *name, *version;
	json_int_t limit;
	LIST_ENTRY(registry_job) entry;
};

static LIST_HEAD(,
    registry_job) registry_jobs = LIST_HEAD_INITIALIZER(registry_jobs);

bool
registry_source_parse(struct request *req, const json_t *params,
    bool may_be_any, enum registry_source *ret)
{
	const char *s = json_string_value(json_object_get(params, "source"));

	if (s == NULL || strcmp(s, "official") == 0)
		*ret = REGISTRY_OFFICIAL;
	else if (strcmp(s, "local") == 0)
		*ret = REGISTRY_LOCAL;
	else if (may_be_any && strcmp(s, "any") == 0)
		*ret = REGISTRY_ANY;
	else {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "source"),
		    "source must be \"official\" or \"local\"%s",
		    may_be_any ? " or \"any\"" : "");
		return false;
	}
	return true;
}

bool
registry_page_parse(struct request *req, const json_t *params,
    enum registry_source source, json_int_t *ret_limit, const char **ret_cursor)
{
	const json_t *limit = json_object_get(params, "limit");
	const json_t *cursor = json_object_get(params, "cursor");

	if (source == REGISTRY_LOCAL && (limit != NULL || cursor != NULL)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field",
			limit != NULL ? "limit" : "cursor"),
		    "the local catalog is answered whole: limit and cursor apply to the official registry only");
		return false;
	}
	*ret_limit = limit != NULL ? json_integer_value(limit) : 20;
	if (*ret_limit < 1 || *ret_limit > REGISTRY_LIMIT_MAX) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "limit"),
		    "limit must be from 1 to %d, not %" JSON_INTEGER_FORMAT,
		    REGISTRY_LIMIT_MAX, *ret_limit);
		return false;
	}
	*ret_cursor = json_string_value(cursor);
	if (*ret_cursor != NULL && **ret_cursor == '\0') {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "cursor"),
		    "cursor is empty; give the next_cursor of a page, or none for the first page");
		return false;
	}
	return true;
}

/* RFC 3986 percent-encoding of everything but unreserved characters. */
static void
registry_encode(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			fputc(*p, f);
		else
			fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

/* The URL of the job's request (new). */
static char *
registry_url(const struct registry_job *job)
{
	char *url = NULL;
	size_t len;
	FILE *f = open_memstream(&url, &len);

	if (f == NULL)
		fatalx("out of memory");
	fputs(mcpd_opts.registry, f);
	if (job->op == REGISTRY_LIST) {
		fputs("/v0.1/servers?", f);
		if (job->search != NULL) {
			fputs("search=", f);
			registry_encode(f, job->search);
			fputc('&', f);
		}
		fprintf(f, "limit=%" JSON_INTEGER_FORMAT, job->limit);
		if (job->cursor != NULL) {
			fputs("&cursor=", f);
			registry_encode(f, job->cursor);
		}
		fputs("&version=latest", f);
	} else {
		fputs("/v0.1/servers/", f);
		registry_encode(f, job->name);
		fputs("/versions", f);
		if (job->op == REGISTRY_INFO) {
			fputc('/', f);
			registry_encode(f, job->version);
		}
	}
	if (fclose(f) != 0)
		fatalx("out of memory");
	return url;
}

static void
registry_job_free(struct registry_job *job)
{
	LIST_REMOVE(job, entry);
	registry_fetch_cancel(job->fetch);
	free(job->url);
	free(job->search);
	free(job->cursor);
	free(job->name);
	free(job->version);
	free(job);
}

/* The answer the client can no longer get: failed into nothing. */
static void
registry_job_gone_later(void *arg)
{
	control_fail(arg, ERRORS_UNAVAILABLE, NULL,
	    "the request was cancelled");
}

/* Its client went or cancelled it: no more waiting on the registry. */
static void
registry_job_gone(void *arg)
{
	struct registry_job *job = arg;
	struct request *req = job->req;

	registry_job_free(job);
	defer_call(registry_job_gone_later, req);
}

/* The registry's own words about an error: {"error"}, {"detail"}... */
static char *
registry_error_text(const struct registry_reply *r)
{
	static const char *const keys[] = { "error", "detail", "title",
		"message" };
	json_t *body = json_loadb(r->body, r->body_len, 0, NULL);
	const char *text = NULL;
	size_t len = r->body_len;
	char *esc, *cut;

	for (size_t i = 0; i < 4 && text == NULL; i++)
		text = json_string_value(json_object_get(body, keys[i]));
	if (text != NULL)
		len = strlen(text);
	else
		text = r->body;
	esc = xnonnull(textesc(text, len, false));
	cut = xnonnull(textesc_cut(esc, REGISTRY_ERROR_CHARS));
	free(esc);
	json_decref(body);
	return cut;
}

/* The job asks for one exact version (not "latest"). */
static bool
registry_is_exact(const struct registry_job *job)
{
	return job->op == REGISTRY_INFO && strcmp(job->version, "latest") != 0;
}

/* Fails the job's request for a status other than 200; true if it did. */
static bool
registry_status_failed(struct registry_job *job, const struct registry_reply *r)
{
	char *text;

	if (r->status == 200)
		return false;
	if (r->status >= 300 && r->status < 400) {
		control_fail(job->req, ERRORS_DENIED,
		    json_pack("{s:i}", "status", r->status),
		    "the registry at %s answered HTTP %d; redirects are refused",
		    job->url, r->status);
		return true;
	}
	text = registry_error_text(r);
	if (r->status == 404 && job->op != REGISTRY_LIST)
		control_fail(job->req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:i, s:s}", "what", "registry-record",
			"status", r->status, "registry_error", text),
		    "the registry has no %s%s%s: HTTP 404: %s", job->name,
		    registry_is_exact(job) ? " version " : "",
		    registry_is_exact(job) ? job->version : "", text);
	else
		control_fail(job->req, ERRORS_UPSTREAM,
		    json_pack("{s:i, s:s}", "status", r->status,
			"registry_error", text),
		    "the registry at %s answered HTTP %d: %s", job->url,
		    r->status, text);
	free(text);
	return true;
}

/* A page's envelope is a ServerList whose metadata keeps its promises. */
static bool
registry_page_ok(const json_t *page, const char *cursor, char **why)
{
	const json_t *servers = json_object_get(page, "servers");
	const json_t *meta = json_object_get(page, "metadata");
	const json_t *next = json_object_get(meta, "nextCursor");
	const json_t *count = json_object_get(meta, "count");

	if (!json_is_object(page))
		xasprintf(why, "it is not a JSON object");
	else if (!json_is_array(servers))
		xasprintf(why, "it has no servers array");
	else if (meta != NULL && !json_is_object(meta))
		xasprintf(why, "its metadata is not an object");
	else if (next != NULL && !json_is_string(next) && !json_is_null(next))
		xasprintf(why, "its metadata.nextCursor is not a string");
	else if (count != NULL && !json_is_integer(count))
		xasprintf(why, "its metadata.count is not an integer");
	else if (count != NULL &&
	    json_integer_value(count) != (json_int_t)json_array_size(servers))
		xasprintf(why,
		    "pagination failed: metadata.count says %" JSON_INTEGER_FORMAT
		    " records but the page holds %zu",
		    json_integer_value(count), json_array_size(servers));
	else if (cursor != NULL && json_is_string(next) &&
	    strcmp(json_string_value(next), cursor) == 0)
		xasprintf(why,
		    "pagination failed: the page after the cursor given names that same cursor as the next");
	else
		return true;
	return false;
}

/* What the answer says of the official meta of a record, or NULL. */
static const json_t *
registry_official(const json_t *record)
{
	return json_object_get(json_object_get(record, "_meta"),
	    REGISTRY_OFFICIAL_META);
}

/* mcpd's own checks of a record against what was asked for. */
static void
registry_expect(const struct registry_job *job, const json_t *record,
    struct registry_problems *p)
{
	const json_t *server = json_object_get(record, "server");
	const char *name = json_string_value(json_object_get(server, "name"));
	const char *version = json_string_value(json_object_get(server,
	    "version"));
	const json_t *latest = json_object_get(registry_official(record),
	    "isLatest");
	char *text;

	if (json_is_false(latest) &&
	    (job->op == REGISTRY_LIST ||
		(job->op == REGISTRY_INFO &&
		    strcmp(job->version, "latest") == 0)))
		registry_problems_add(p,
		    "$._meta[\"" REGISTRY_OFFICIAL_META "\"].isLatest",
		    "is false, but only the latest version was asked for");
	if (job->op != REGISTRY_LIST && name != NULL &&
	    strcmp(name, job->name) != 0) {
		xasprintf(&text, "is \"%s\", not the name asked for (\"%s\")",
		    name, job->name);
		registry_problems_add(p, "$.server.name", text);
		free(text);
	}
	if (job->op == REGISTRY_INFO && version != NULL &&
	    strcmp(job->version, "latest") != 0 &&
	    strcmp(version, job->version) != 0) {
		xasprintf(&text,
		    "is \"%s\", not the version asked for (\"%s\")", version,
		    job->version);
		registry_problems_add(p, "$.server.version", text);
		free(text);
	}
}

/*
 * Sorts the records of list into conforming (added to good) and rejected
 * (added to bad); -errno with *cause when the contract cannot be used.
 */
static int
registry_judge(const struct registry_job *job, const json_t *list, json_t *good,
    json_t *bad, char **cause)
{
	struct registry_problems p;
	const json_t *record;
	size_t i;
	int r = 0;

	json_array_foreach((json_t *)(uintptr_t)list, i, record) {
		registry_problems_init(&p);
		if ((r = registry_contract_check(record, &p, cause)) < 0) {
			registry_problems_clear(&p);
			return r;
		}
		if (job != NULL)
			registry_expect(job, record, &p);
		if (p.total == 0)
			json_array_append(good, (json_t *)(uintptr_t)record);
		else
			json_array_append_new(bad,
			    registry_rejected_new(record, i, &p));
		registry_problems_clear(&p);
	}
	return 0;
}

/* The answer's common part: source, where from, and the limits (new). */
static json_t *
registry_answer_new(const struct registry_job *job)
{
	json_t *out = xjson(json_pack("{s:s, s:s, s:s}", "source", "official",
	    "registry", mcpd_opts.registry, "url", job->url));

	if (job->name != NULL)
		json_object_set_new(out, "name", json_string(job->name));
	if (job->version != NULL)
		json_object_set_new(out, "version", json_string(job->version));
	json_object_set_new(out, "limits", registry_limits());
	return out;
}

static void registry_info_local(struct request *, const char *name,
    const char *version, json_t *official);

/* A page came: search, catalog or versions. */
static void
registry_page_done(struct registry_job *job, json_t *page)
{
	json_t *good = xjson(json_array()), *bad = xjson(json_array());
	const json_t *next = json_object_get(json_object_get(page, "metadata"),
	    "nextCursor");
	char *why = NULL;
	json_t *out;

	if (!registry_page_ok(page, job->cursor, &why)) {
		control_fail(job->req, ERRORS_UPSTREAM, NULL,
		    "the registry's page from %s is malformed: %s", job->url,
		    why);
	} else if (registry_judge(job, json_object_get(page, "servers"), good,
		       bad, &why) < 0) {
		control_fail(job->req, ERRORS_UNAVAILABLE, NULL, "%s", why);
	} else {
		out = registry_answer_new(job);
		if (job->op == REGISTRY_LIST)
			json_object_set_new(out, "query",
			    json_pack("{s:s?, s:I, s:s?}", "search",
				job->search, "limit", job->limit, "cursor",
				job->cursor));
		json_object_set(out, "servers", good);
		json_object_set(out, "rejected_records", bad);
		json_object_set_new(out, "next_cursor",
		    json_string_length(next) > 0 ?
			json_string(json_string_value(next)) :
			json_null());
		json_object_set_new(out, "count",
		    json_integer((json_int_t)
			    json_array_size(json_object_get(page, "servers"))));
		json_object_set(out, "response", page);
		control_reply(job->req, out);
	}
	free(why);
	json_decref(good);
	json_decref(bad);
}

/* A record came: info. */
static void
registry_record_done(struct registry_job *job, json_t *record)
{
	json_t *list = xjson(json_pack("[O]", record)), *out;
	json_t *good = xjson(json_array()), *bad = xjson(json_array());
	char *why = NULL;

	if (registry_judge(job, list, good, bad, &why) < 0) {
		control_fail(job->req, ERRORS_UNAVAILABLE, NULL, "%s", why);
	} else {
		out = registry_answer_new(job);
		json_object_set(out, "record",
		    json_array_size(good) > 0 ? record : json_null());
		json_object_set(out, "rejected_records", bad);
		json_object_set(out, "response", record);
		control_reply(job->req, out);
	}
	free(why);
	json_decref(list);
	json_decref(good);
	json_decref(bad);
}

/*
 * When the registry cannot be reached, what the local catalog has for the
 * request: "; the local catalog has ... (--source local)", or "" (new).
 * It never answers by itself: the user chooses the source.
 */
static char *
registry_local_hint(const struct registry_job *job)
{
	json_t *page, *named, *record;
	char *path = NULL, *cause = NULL, *hint = NULL;
	size_t i, n = 0;

	if (job->source == REGISTRY_LOCAL ||
	    catalog_load(&page, &path, &cause) < 0) {
		free(cause);
		return xstrdup("");
	}
	if (job->op == REGISTRY_LIST) {
		json_array_foreach(json_object_get(page, "servers"), i, record)
			n += catalog_matches(record, job->search);
		if (n > 0)
			xasprintf(&hint,
			    "; the local catalog has %zu server%s%s%s: --source local lists %s",
			    n, n == 1 ? "" : "s",
			    job->search != NULL ? " matching " : "",
			    job->search != NULL ? job->search : "",
			    n == 1 ? "it" : "them");
	} else if (job->name != NULL) {
		named = catalog_named(page, job->name);
		if (json_array_size(named) > 0)
			xasprintf(&hint,
			    "; the local catalog has %s: --source local uses it",
			    json_string_value(json_array_get(named, 0)));
		json_decref(named);
	}
	json_decref(page);
	free(path);
	return hint != NULL ? hint : xstrdup("");
}

static void
registry_job_done(void *arg, const struct registry_reply *r)
{
	struct registry_job *job = arg;
	json_error_t jerr;
	json_t *body;

	job->fetch = NULL;
	control_on_gone(job->req, NULL, NULL);
	if (r->why != NULL) {
		/* Not reached (not refused, not too large): say what is here. */
		char *hint = r->kind == ERRORS_UNAVAILABLE ?
		    registry_local_hint(job) :
		    xstrdup("");

		control_fail(job->req, r->kind, NULL, "%s%s", r->why, hint);
		free(hint);
	} else if (job->source == REGISTRY_ANY && r->status == 404) {
		char *text = registry_error_text(r);

		/* Only "no such server" lets the local catalog answer. */
		registry_info_local(job->req, job->name, job->version,
		    json_pack("{s:i, s:s}", "status", 404, "registry_error",
			text));
		free(text);
	} else if (registry_status_failed(job, r)) {
		/* failed */
	} else if ((body = json_loadb(r->body, r->body_len, JSON_DECODE_ANY,
			&jerr)) == NULL) {
		char *start = xnonnull(textesc(r->body,
		    r->body_len < 60 ? r->body_len : 60, true));

		control_fail(job->req, ERRORS_UPSTREAM, NULL,
		    "the registry's answer from %s is not JSON (%s at line %d, column %d); it starts %s",
		    job->url, jerr.text, jerr.line, jerr.column, start);
		free(start);
	} else {
		if (job->op == REGISTRY_INFO)
			registry_record_done(job, body);
		else
			registry_page_done(job, body);
		json_decref(body);
	}
	registry_job_free(job);
}

/* Starts a request to the registry for req (strings copied). */
static void
registry_start(struct request *req, enum registry_op op,
    const struct registry_query *q)
{
	struct registry_job *job = xcalloc(1, sizeof *job);

	job->req = req;
	job->op = op;
	job->source = q->source;
	job->search = q->search != NULL ? xstrdup(q->search) : NULL;
	job->cursor = q->cursor != NULL ? xstrdup(q->cursor) : NULL;
	job->name = q->name != NULL ? xstrdup(q->name) : NULL;
	job->version = q->version != NULL ? xstrdup(q->version) : NULL;
	job->limit = q->limit;
	job->url = registry_url(job);
	LIST_INSERT_HEAD(&registry_jobs, job, entry);
	control_on_gone(req, registry_job_gone, job);
	log_debug("registry: GET %s", job->url);
	job->fetch = registry_fetch_start(job->url, mcpd_opts.is_registry_local,
	    mcpd_opts.registry_timeout_ms, mcpd_opts.registry_max_bytes,
	    registry_job_done, job);
}

/* The local catalog's answer (new), or NULL after failing req. */
static json_t *
registry_local_open(struct request *req, json_t **ret_page)
{
	char *path = NULL, *cause = NULL;
	json_t *out;

	if (catalog_load(ret_page, &path, &cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		free(cause);
		return NULL;
	}
	out = xjson(json_pack("{s:s, s:s, s:o}", "source", "local", "catalog",
	    path, "limits", registry_limits()));
	free(path);
	return out;
}

void
registry_list(struct request *req, const struct registry_query *q)
{
	json_t *page, *out, *matched, *good, *bad, *record;
	char *cause = NULL;
	size_t i;

	if (q->source != REGISTRY_LOCAL) {
		registry_start(req, REGISTRY_LIST, q);
		return;
	}
	if ((out = registry_local_open(req, &page)) == NULL)
		return;
	matched = xjson(json_array());
	good = xjson(json_array());
	bad = xjson(json_array());
	json_array_foreach(json_object_get(page, "servers"), i, record)
		if (catalog_matches(record, q->search))
			json_array_append(matched, record);
	if (registry_judge(NULL, matched, good, bad, &cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		json_decref(out);
	} else {
		json_object_set_new(out, "query",
		    json_pack("{s:s?}", "search", q->search));
		json_object_set(out, "servers", good);
		json_object_set(out, "rejected_records", bad);
		json_object_set_new(out, "count",
		    json_integer((json_int_t)json_array_size(matched)));
		control_reply(req, out);
	}
	free(cause);
	json_decref(matched);
	json_decref(good);
	json_decref(bad);
	json_decref(page);
}

/* A short name that several records of the local catalog have. */
static void
registry_local_ambiguous(struct request *req, const char *name,
    const json_t *named)
{
	char *list = xnonnull(json_dumps(named, JSON_COMPACT));

	control_fail(req, ERRORS_NOT_FOUND,
	    json_pack("{s:s, s:O}", "what", "registry-record", "candidates",
		named),
	    "the local catalog has several servers called %s: %s; give the full name",
	    name, list);
	free(list);
}

/*
 * The local catalog's record of name (and version, or "latest"); official
 * (stolen, may be NULL) says what the registry said of it first.
 */
static void
registry_info_local(struct request *req, const char *name, const char *version,
    json_t *official)
{
	json_t *page, *out, *record, *found = NULL, *good, *bad, *one, *named;
	char *cause = NULL;
	const char *v;
	size_t i;

	if ((out = registry_local_open(req, &page)) == NULL) {
		json_decref(official);
		return;
	}
	/* A short name (memory, server-memory) is the one record it names. */
	named = catalog_named(page, name);
	if (json_array_size(named) > 1) {
		registry_local_ambiguous(req, name, named);
		json_decref(named);
		json_decref(official);
		json_decref(out);
		json_decref(page);
		return;
	}
	if (json_array_size(named) == 1)
		name = json_string_value(json_array_get(named, 0));
	json_array_foreach(json_object_get(page, "servers"), i, record) {
		const json_t *server = json_object_get(record, "server");

		v = json_string_value(json_object_get(server, "version"));
		if (!json_is_string(json_object_get(server, "name")) ||
		    strcmp(json_string_value(json_object_get(server, "name")),
			name) != 0)
			continue;
		if (strcmp(version, "latest") == 0 ||
		    (v != NULL && strcmp(v, version) == 0)) {
			found = record;
			break;
		}
	}
	if (found == NULL) {
		const char *what = official != NULL ?
		    "the registry has no such server and the local catalog " :
		    "the local catalog ";

		if (official != NULL)
			official = xjson(json_pack("{s:s, s:o}", "what",
			    "registry-record", "official", official));
		else
			official = xjson(json_pack("{s:s}", "what",
			    "registry-record"));
		control_fail(req, ERRORS_NOT_FOUND, official,
		    "%s%s has no %s%s%s", what,
		    json_string_value(json_object_get(out, "catalog")), name,
		    strcmp(version, "latest") != 0 ? " version " : "",
		    strcmp(version, "latest") != 0 ? version : "");
		json_decref(out);
		json_decref(named);
		json_decref(page);
		return;
	}
	good = xjson(json_array());
	bad = xjson(json_array());
	one = xjson(json_pack("[O]", found));
	if (registry_judge(NULL, one, good, bad, &cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		json_decref(out);
	} else {
		json_object_set_new(out, "name", json_string(name));
		json_object_set_new(out, "version", json_string(version));
		json_object_set(out, "record",
		    json_array_size(good) > 0 ? found : json_null());
		json_object_set(out, "rejected_records", bad);
		if (official != NULL)
			json_object_set(out, "official", official);
		control_reply(req, out);
	}
	free(cause);
	json_decref(one);
	json_decref(good);
	json_decref(bad);
	json_decref(official);
	json_decref(named);
	json_decref(page);
}

void
registry_info(struct request *req, const struct registry_query *q)
{
	if (q->source == REGISTRY_LOCAL)
		registry_info_local(req, q->name, q->version, NULL);
	else
		registry_start(req, REGISTRY_INFO, q);
}

void
registry_versions(struct request *req, const struct registry_query *q)
{
	registry_start(req, REGISTRY_VERSIONS, q);
}

void
registry_close(void)
{
	struct registry_job *job;

	while ((job = LIST_FIRST(&registry_jobs)) != NULL) {
		control_on_gone(job->req, NULL, NULL);
		control_fail(job->req, ERRORS_UNAVAILABLE, NULL,
		    "mcpd is shutting down");
		registry_job_free(job);
	}
	registry_contract_close();
}
