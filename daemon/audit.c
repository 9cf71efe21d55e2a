/* SPDX-License-Identifier: ISC */
/* The audit log: one JSON line per decided call, its format and its record. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "jsonwrite.h"
#include "log.h"
#include "paths.h"
#include "mcpd.h"

#define AUDIT_DIGEST_BYTES 16	/* BLAKE2b-128, as the definition digest */
#define AUDIT_CUT	   1024 /* a string's bytes kept in an over-long line */
#define AUDIT_MASK	   "***"
#define AUDIT_CANON_DEPTH  32 /* deeper arguments are parsed for their digest */
#define AUDIT_KEPT	   8  /* texts of clients and decisions kept */
#define AUDIT_KEPT_MAX	   512 /* longer ones are written each time */

struct audit_call {
	char time[32];	    /* RFC 3339, UTC, milliseconds */
	uint64_t start_us;  /* monotonic */
	const char *agent;  /* these three in the record's own allocation */
	const char *server; /* NULL when none */
	const char *tool;
	size_t agent_len, server_len, tool_len;
	json_t *client;
	const char *method;			      /* static */
	char definition[SERVER_DEFINITION_SIZE];      /* "" when none */
	char args_digest[2 * AUDIT_DIGEST_BYTES + 1]; /* "" when none */
	json_t *arguments; /* masked, with --audit-arguments only */
	json_t *decision;  /* the policy's, or NULL: the default allow */
	size_t bytes_in;
};

/*
 * The text of a client or decision seen lately: both are made once (a
 * connection's, a decision's of the policy's cache) and never changed,
 * and writing them afresh was a fifth of a record. Each entry holds its
 * value, so that its address means it until the entry goes.
 */
struct audit_kept {
	json_t *v;
	size_t len;
	char text[AUDIT_KEPT_MAX];
};

static char audit_buf[AUDIT_LINE_MAX];
static struct audit_kept audit_kept[AUDIT_KEPT];
static size_t audit_kept_next;

static uint64_t
audit_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Now, as "2026-12-03T07:55:01.123Z". The second's part is made once a
 * second: strftime for every call was a tenth of a record's cost.
 */
static void
audit_time(char out[32])
{
	static char second[24];
	static size_t n;
	static time_t made = (time_t)-1;
	struct timespec ts;
	struct tm tm;
	int ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != made) {
		gmtime_r(&ts.tv_sec, &tm);
		n = strftime(second, sizeof second, "%Y-%m-%dT%H:%M:%S", &tm);
		made = ts.tv_sec;
	}
	ms = (int)(ts.tv_nsec / 1000000);
	memcpy(out, second, n);
	out[n] = '.';
	out[n + 1] = (char)('0' + ms / 100);
	out[n + 2] = (char)('0' + ms / 10 % 10);
	out[n + 3] = (char)('0' + ms % 10);
	memcpy(out + n + 4, "Z", 2);
}

/*
 * One of the record's own fields (NULL: null), n bytes; cut to AUDIT_CUT
 * bytes, not inside a UTF-8 sequence, in a cut line.
 */
static void
audit_put_string(struct jsonwrite *w, bool is_cut, const char *s, size_t n)
{
	if (s == NULL) {
		jsonwrite_lit(w, "null");
		return;
	}
	if (is_cut && n > AUDIT_CUT) {
		n = AUDIT_CUT;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	jsonwrite_string_plain(w, s, n);
}

static void
audit_put_cstr(struct jsonwrite *w, bool is_cut, const char *s)
{
	audit_put_string(w, is_cut, s, s != NULL ? strlen(s) : 0);
}

/* Hex digits between quotes: nothing to escape or cut. */
static void
audit_put_hex(struct jsonwrite *w, const char *hex)
{
	if (hex[0] == '\0') {
		jsonwrite_lit(w, "null");
		return;
	}
	jsonwrite_lit(w, "\"");
	jsonwrite_raw(w, hex, strlen(hex));
	jsonwrite_lit(w, "\"");
}

/* A client or decision, from the text kept of it when there is one. */
static void
audit_put_kept(struct jsonwrite *w, json_t *v)
{
	struct audit_kept *k;
	struct jsonwrite one;
	size_t i;

	for (i = 0; i < AUDIT_KEPT && v != NULL; i++)
		if (audit_kept[i].v == v) {
			jsonwrite_raw(w, audit_kept[i].text, audit_kept[i].len);
			return;
		}
	k = &audit_kept[audit_kept_next];
	jsonwrite_init(&one, k->text, sizeof k->text);
	jsonwrite_json(&one, v);
	if (v == NULL || one.is_over) {
		jsonwrite_json(w, v); /* too long to keep */
		return;
	}
	json_decref(k->v);
	k->v = json_incref(v);
	k->len = one.len;
	audit_kept_next = (audit_kept_next + 1) % AUDIT_KEPT;
	jsonwrite_raw(w, k->text, k->len);
}

/* The record as one line, with its end: outcome, error, size, duration. */
static void
audit_format(struct jsonwrite *w, bool is_cut, const struct audit_call *ac,
    const struct audit_end *end, uint64_t duration_us)
{
	/* One byte is left spare, as it always was: the same lines cut. */
	jsonwrite_init(w, audit_buf, sizeof audit_buf - 1);
	jsonwrite_lit(w, "{\"time\":\"");
	jsonwrite_raw(w, ac->time, strlen(ac->time));
	jsonwrite_lit(w, "\",\"agent\":");
	audit_put_string(w, is_cut, ac->agent, ac->agent_len);
	/* A profile's name once views exist (DESIGN 13). */
	jsonwrite_lit(w, ",\"view\":null,\"client\":");
	audit_put_kept(w, ac->client);
	jsonwrite_lit(w, ",\"method\":");
	audit_put_cstr(w, is_cut, ac->method);
	jsonwrite_lit(w, ",\"server\":");
	audit_put_string(w, is_cut, ac->server, ac->server_len);
	jsonwrite_lit(w, ",\"tool\":");
	audit_put_string(w, is_cut, ac->tool, ac->tool_len);
	jsonwrite_lit(w, ",\"definition\":");
	audit_put_hex(w, ac->definition);
	jsonwrite_lit(w, ",\"arguments_digest\":");
	audit_put_hex(w, ac->args_digest);
	if (ac->arguments != NULL && !is_cut) {
		jsonwrite_lit(w, ",\"arguments\":");
		jsonwrite_json(w, ac->arguments);
	}
	jsonwrite_lit(w, ",\"decision\":");
	if (ac->decision != NULL)
		audit_put_kept(w, ac->decision);
	else
		jsonwrite_lit(w, "{\"rule\":null,\"by\":\"default-allow\"}");
	jsonwrite_lit(w, ",\"outcome\":");
	audit_put_cstr(w, is_cut, end->outcome);
	jsonwrite_lit(w, ",\"error\":");
	if (end->code != 0 || end->kind != NULL) {
		jsonwrite_lit(w, "{\"code\":");
		jsonwrite_int(w, end->code);
		jsonwrite_lit(w, ",\"kind\":");
		audit_put_cstr(w, is_cut, end->kind);
		jsonwrite_lit(w, "}");
	} else
		jsonwrite_lit(w, "null");
	/* As %.3f of the milliseconds, with no floating point to format. */
	jsonwrite_lit(w, ",\"duration_ms\":");
	jsonwrite_thousandths(w, duration_us);
	jsonwrite_lit(w, ",\"bytes_in\":");
	jsonwrite_int(w, (int64_t)ac->bytes_in);
	jsonwrite_lit(w, ",\"bytes_out\":");
	jsonwrite_int(w, (int64_t)end->bytes_out);
	if (is_cut)
		jsonwrite_lit(w, ",\"cut\":true");
	jsonwrite_lit(w, "}\n");
}

void
audit_kept_forget(void)
{
	for (size_t i = 0; i < AUDIT_KEPT; i++) {
		json_decref(audit_kept[i].v);
		audit_kept[i].v = NULL;
	}
}

/* A string holding a secret's value, whole, as the mask (new). */
static json_t *
audit_mask(const json_t *v, const struct secrets *vault, const json_t *names)
{
	const char *key, *text, *secret;
	json_t *out, *one;
	size_t i;

	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)(uintptr_t)v, key, one)
			json_object_set_new(out, key,
			    audit_mask(one, vault, names));
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, one)
			json_array_append_new(out,
			    audit_mask(one, vault, names));
		return out;
	}
	if (!json_is_string(v))
		return json_deep_copy(v);
	text = json_string_value(v);
	json_array_foreach(names, i, one) {
		secret = secrets_get(vault, json_string_value(one));
		if (secret != NULL && *secret != '\0' &&
		    strstr(text, secret) != NULL)
			return json_string(AUDIT_MASK);
	}
	return json_deep_copy(v);
}

/* The arguments to keep in the line: --audit-arguments, secrets masked. */
static json_t *
audit_arguments(const json_t *args)
{
	struct secrets *vault = mcpd_secrets_if_any();
	json_t *names = vault != NULL ? secrets_names(vault) : NULL;
	json_t *out = audit_mask(args, vault, names);

	json_decref(names);
	return out;
}

/*
 * The digest of the arguments: BLAKE2b-128 (hex) of their canonical text,
 * jansson's compact encoding with keys sorted (JSON_COMPACT |
 * JSON_SORT_KEYS), and its length in bytes_in.
 */
static void
audit_digest_text(struct audit_call *ac, const char *text, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[AUDIT_DIGEST_BYTES];

	ac->bytes_in = len;
	crypto_generichash(digest, sizeof digest, (const unsigned char *)text,
	    len, NULL, 0);
	/* No secret: sodium_bin2hex's constant time is not needed here. */
	for (size_t i = 0; i < sizeof digest; i++) {
		ac->args_digest[2 * i] = hex[digest[i] >> 4];
		ac->args_digest[2 * i + 1] = hex[digest[i] & 15];
	}
	ac->args_digest[2 * sizeof digest] = '\0';
}

static void
audit_digest(struct audit_call *ac, const json_t *args)
{
	char *text = json_dumps(args,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (text == NULL)
		return;
	audit_digest_text(ac, text, strlen(text));
	free(text);
}

/* A string of the canonical text: no escape (jansson would write it so). */
static bool
audit_canon_string(const char **p, const char *end, const char **ret_start)
{
	const char *q = memchr(*p + 1, '"', (size_t)(end - *p - 1));

	if (q == NULL || memchr(*p, '\\', (size_t)(q - *p)) != NULL)
		return false;
	*ret_start = *p + 1;
	*p = q + 1;
	return true;
}

/*
 * Whether the value at *p (checked JSON, the scanner's) is written as
 * json_dumps writes it with JSON_COMPACT | JSON_SORT_KEYS: no white space,
 * each object's keys in byte order and none twice, no escape, integers
 * only (a real's text is jansson's own), none of more than 18 digits or
 * "-0", at most depth deep. Then the text is its own canonical form.
 */
static bool
audit_canon_value(const char **p, const char *end, int depth)
{
	const char *key = NULL, *prev = NULL, *start;
	size_t prev_len = 0, n;

	if (*p >= end || depth == 0)
		return false;
	switch (**p) {
	case '"':
		return audit_canon_string(p, end, &start);
	case '{':
	case '[':
		break;
	case 't':
	case 'f':
	case 'n':
		n = **p == 'f' ? 5 : 4;
		*p += n; /* the scanner checked the word */
		return *p <= end;
	default:
		start = *p;
		if (**p == '-')
			(*p)++;
		while (*p < end && **p >= '0' && **p <= '9')
			(*p)++;
		n = (size_t)(*p - start) - (*start == '-');
		return n > 0 && n <= 18 &&
		    !(*start == '-' && start[1] == '0') &&
		    (*p == end || (**p != '.' && **p != 'e' && **p != 'E'));
	}
	if ((*p)[0] == '{' && *p + 1 < end && (*p)[1] == '}')
		return (*p += 2), true;
	if ((*p)[0] == '[' && *p + 1 < end && (*p)[1] == ']')
		return (*p += 2), true;
	for (char close = **p == '{' ? '}' : ']'; *p < end;) {
		(*p)++;
		if (close == '}') {
			if (*p >= end || **p != '"' ||
			    !audit_canon_string(p, end, &key))
				return false;
			n = (size_t)(*p - key - 1);
			/* After the one before it, as jansson sorts (memcmp). */
			if (prev != NULL &&
			    (memcmp(prev, key, prev_len < n ? prev_len : n) >
				    0 ||
				(memcmp(prev, key,
				     prev_len < n ? prev_len : n) == 0 &&
				    prev_len >= n)))
				return false;
			prev = key;
			prev_len = n;
			if (*p >= end || **p != ':')
				return false;
			(*p)++;
		}
		if (!audit_canon_value(p, end, depth - 1) || *p >= end)
			return false;
		if (**p == close)
			return (*p)++, true;
		if (**p != ',')
			return false;
	}
	return false;
}

/* Whether the arguments' text (checked JSON) is their canonical text. */
static bool
audit_canon(const char *text, size_t len)
{
	const char *p = text;

	return len > 0 && *text == '{' &&
	    audit_canon_value(&p, text + len, AUDIT_CANON_DEPTH) &&
	    p == text + len;
}

/* A record, zeroed, with copies of its names in the same allocation. */
static struct audit_call *
audit_call_alloc(const char *agent, const char *server, const char *tool)
{
	size_t la = strlen(agent), ls = server != NULL ? strlen(server) : 0;
	size_t lt = strlen(tool);
	struct audit_call *ac = xmalloc(sizeof *ac + la + ls + lt + 3);
	char *p = (char *)(ac + 1);

	memset(ac, 0, sizeof *ac);
	ac->agent = memcpy(p, agent, la + 1);
	ac->agent_len = la;
	p += la + 1;
	if (server != NULL) {
		ac->server = memcpy(p, server, ls + 1);
		ac->server_len = ls;
		p += ls + 1;
	}
	ac->tool = memcpy(p, tool, lt + 1);
	ac->tool_len = lt;
	return ac;
}

struct audit_call *
audit_call_new(const struct call_who *who, const char *method,
    const char *server, const char *tool, const char *definition,
    const json_t *args)
{
	struct audit_call *ac;
	size_t n;

	if (!audit_is_on())
		return NULL;
	ac = audit_call_alloc(who->agent, server, tool != NULL ? tool : "");
	audit_time(ac->time);
	ac->start_us = audit_now_us();
	ac->client = json_incref((json_t *)(uintptr_t)who->client);
	ac->method = method;
	if (definition != NULL) {
		n = strnlen(definition, sizeof ac->definition - 1);
		memcpy(ac->definition, definition, n);
		ac->definition[n] = '\0';
	}
	if (args != NULL) {
		audit_digest(ac, args);
		if (mcpd_opts.is_audit_arguments)
			ac->arguments = audit_arguments(args);
	}
	return ac;
}

struct audit_call *
audit_call_new_text(const struct call_who *who, const char *method,
    const char *server, const char *tool, const char *definition,
    const char *args, size_t len)
{
	json_t *parsed;
	struct audit_call *ac;

	if (!audit_is_on())
		return NULL;
	/*
	 * Arguments written as jansson writes them are their own canonical
	 * text: no parse and no dump for the digest (a sixth of a call's cost
	 * over HTTP), unless the line keeps them.
	 */
	if (!mcpd_opts.is_audit_arguments && audit_canon(args, len)) {
		ac = audit_call_new(who, method, server, tool, definition,
		    NULL);
		audit_digest_text(ac, args, len);
		return ac;
	}
	parsed = json_loadb(args, len, 0, NULL);
	ac = audit_call_new(who, method, server, tool, definition, parsed);
	json_decref(parsed);
	return ac;
}

void
audit_call_free(struct audit_call *ac)
{
	if (ac == NULL)
		return;
	json_decref(ac->client);
	json_decref(ac->arguments);
	json_decref(ac->decision);
	free(ac);
}

void
audit_call_set_decision(struct audit_call *ac, json_t *decision)
{
	if (ac == NULL) {
		json_decref(decision);
		return;
	}
	json_decref(ac->decision);
	ac->decision = decision;
}

/* The line of ac with end, written; -errno when it could not be. */
static int
audit_call_write(const struct audit_call *ac, const struct audit_end *end)
{
	struct jsonwrite w;
	uint64_t us = audit_now_us() - ac->start_us;

	audit_format(&w, false, ac, end, us);
	if (w.is_over) /* its arguments go, and long strings are cut */
		audit_format(&w, true, ac, end, us);
	if (w.is_over)
		return -E2BIG; /* cannot be: every field is bounded then */
	return audit_file_write(w.buf, w.len, ac, end);
}

int
audit_call_admit(struct audit_call *ac)
{
	static const struct audit_end admitted = { "admitted", 0, NULL, 0 };

	if (ac == NULL || !mcpd_opts.is_audit_required)
		return 0;
	return audit_call_write(ac, &admitted);
}

char *
audit_admit(struct audit_call *ac, const char *server)
{
	char *why;

	if (audit_call_admit(ac) == 0)
		return NULL;
	audit_call_free(ac);
	xasprintf(&why,
	    "the audit log cannot be written (%s) and mcpd runs with --audit-required, so the call to %s was refused; nothing was sent; see mcpctl status",
	    audit_failure() != NULL ? audit_failure() : "unknown error",
	    server);
	return why;
}

void
audit_call_end(struct audit_call *ac, const struct audit_end *end)
{
	if (ac == NULL)
		return;
	(void)audit_call_write(ac, end);
	audit_call_free(ac);
}

void
audit_refused(const struct call_who *who, const char *method,
    const char *server, const char *tool, int code, enum errors_kind kind)
{
	struct audit_end end = { "refused", code, NULL, 0 };
	struct audit_call *ac = audit_call_new(who, method, server, tool, NULL,
	    NULL);

	if (ac == NULL)
		return;
	end.kind = kind != ERRORS_KIND_COUNT ? errors_kind_name(kind) : NULL;
	if (end.code == 0 && kind != ERRORS_KIND_COUNT)
		end.code = errors_kind_code(kind);
	audit_call_end(ac, &end);
}

void
audit_call_end_reply(struct audit_call *ac, const struct session_reply *r)
{
	struct audit_end end = { "ok", 0, NULL, 0 };
	json_int_t code;

	if (ac == NULL)
		return;
	if (r->result != NULL) {
		end.bytes_out = json_dumpb(r->result, NULL, 0, JSON_COMPACT);
		if (json_is_true(json_object_get(r->result, "isError")))
			end.outcome = "tool-error";
	} else if (r->error != NULL) {
		end.outcome = "error";
		code = json_integer_value(json_object_get(r->error, "code"));
		end.code = (int)code;
		end.kind = r->kind == ERRORS_STALE_HANDLE ?
		    errors_kind_name(r->kind) :
		    NULL;
	} else {
		end.outcome = r->kind == ERRORS_OUTCOME_UNKNOWN ?
		    "outcome-unknown" :
		    "error";
		end.code = errors_kind_code(r->kind);
		end.kind = errors_kind_name(r->kind);
	}
	audit_call_end(ac, &end);
}

const char *
audit_call_agent(const struct audit_call *ac)
{
	return ac->agent;
}

const char *
audit_call_server(const struct audit_call *ac)
{
	return ac->server;
}

const char *
audit_call_tool(const struct audit_call *ac)
{
	return ac->tool;
}

const char *
audit_call_time(const struct audit_call *ac)
{
	return ac->time;
}

json_t *
audit_who_peer(pid_t pid)
{
	char *exe = paths_proc_exe((int)pid);
	json_t *who = json_pack("{s:i, s:s?}", "pid", (int)pid, "exe", exe);

	free(exe);
	return who;
}
