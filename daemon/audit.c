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

#include "log.h"
#include "mcpd.h"

#define AUDIT_DIGEST_BYTES 16	/* BLAKE2b-128, as the definition digest */
#define AUDIT_CUT	   1024 /* a string's bytes kept in an over-long line */
#define AUDIT_MASK	   "***"
#define AUDIT_CANON_DEPTH  32 /* deeper arguments are parsed for their digest */

struct audit_call {
	char time[32];	   /* RFC 3339, UTC, milliseconds */
	uint64_t start_us; /* monotonic */
	char *agent;
	json_t *client;
	const char *method; /* static */
	char *server;
	char *tool;
	char definition[SERVER_DEFINITION_SIZE];      /* "" when none */
	char args_digest[2 * AUDIT_DIGEST_BYTES + 1]; /* "" when none */
	json_t *arguments; /* masked, with --audit-arguments only */
	json_t *decision;  /* the policy's, or NULL: the default allow */
	size_t bytes_in;
};

/* A line being made: the buffer is static (one loop thread). */
struct audit_line {
	char *p;
	size_t len;
	bool is_over; /* it would not fit: written again, cut */
	bool is_cut;  /* strings cut to AUDIT_CUT, no arguments */
};

static char audit_buf[AUDIT_LINE_MAX];

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

static void
audit_put(struct audit_line *l, const char *s, size_t len)
{
	if (l->is_over || len > sizeof audit_buf - 1 - l->len) {
		l->is_over = true;
		return;
	}
	memcpy(l->p + l->len, s, len);
	l->len += len;
}

static void
audit_puts(struct audit_line *l, const char *s)
{
	audit_put(l, s, strlen(s));
}

/* s as a JSON string (NULL: null); cut to AUDIT_CUT bytes in a cut line. */
static void
audit_put_string(struct audit_line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t n, i;
	char esc[6];

	if (s == NULL) {
		audit_puts(l, "null");
		return;
	}
	n = strlen(s);
	if (l->is_cut && n > AUDIT_CUT) {
		n = AUDIT_CUT;
		/* not inside a UTF-8 sequence */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	audit_put(l, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t run = i;

		while (run < n && (unsigned char)s[run] >= 0x20 &&
		    s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i) {
			audit_put(l, s + i, run - i);
			i = run - 1;
			continue;
		}
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			audit_put(l, esc, 2);
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			audit_put(l, esc, 6);
		}
	}
	audit_put(l, "\"", 1);
}

/* s (n bytes) as json_dumps writes a string: its escapes, uppercase hex. */
static void
audit_put_jstring(struct audit_line *l, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, run;
	char esc[6];

	audit_put(l, "\"", 1);
	for (i = 0; i < n; i = run + 1) {
		unsigned char c;

		for (run = i; run < n && (unsigned char)s[run] >= 0x20 &&
		     s[run] != '"' && s[run] != '\\';
		     run++)
			;
		audit_put(l, s + i, run - i);
		if (run == n)
			break;
		c = (unsigned char)s[run];
		esc[0] = '\\';
		esc[1] = c == '\b' ? 'b' :
		    c == '\f'	   ? 'f' :
		    c == '\n'	   ? 'n' :
		    c == '\r'	   ? 'r' :
		    c == '\t'	   ? 't' :
		    c >= 0x20	   ? (char)c :
				     'u';
		if (esc[1] != 'u') {
			audit_put(l, esc, 2);
			continue;
		}
		memcpy(esc + 2, "00", 2);
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 15];
		audit_put(l, esc, 6);
	}
	audit_put(l, "\"", 1);
}

/*
 * v in JSON_COMPACT as json_dumps writes it (members in their order),
 * without its allocations: a record's client and decision cost twice a
 * call's own relaying through json_dumps. A real goes to json_dumps.
 */
static void
audit_put_json(struct audit_line *l, const json_t *v)
{
	char num[JSONRPC_INT_MAX], *text;
	const char *key;
	json_t *one;
	size_t i;

	if (v == NULL) { /* no client, say: one that went */
		audit_put(l, "null", 4);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		audit_put(l, "{", 1);
		i = 0;
		json_object_foreach((json_t *)(uintptr_t)v, key, one) {
			if (i++ > 0)
				audit_put(l, ",", 1);
			audit_put_jstring(l, key, strlen(key));
			audit_put(l, ":", 1);
			audit_put_json(l, one);
		}
		audit_put(l, "}", 1);
		return;
	case JSON_ARRAY:
		audit_put(l, "[", 1);
		json_array_foreach(v, i, one) {
			if (i > 0)
				audit_put(l, ",", 1);
			audit_put_json(l, one);
		}
		audit_put(l, "]", 1);
		return;
	case JSON_STRING:
		audit_put_jstring(l, json_string_value(v),
		    json_string_length(v));
		return;
	case JSON_INTEGER:
		audit_put(l, num,
		    jsonrpc_format_int(num, json_integer_value(v)));
		return;
	case JSON_TRUE:
		audit_puts(l, "true");
		return;
	case JSON_FALSE:
		audit_puts(l, "false");
		return;
	case JSON_NULL:
		audit_puts(l, "null");
		return;
	default:
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		audit_puts(l, text != NULL ? text : "null");
		free(text);
	}
}

static void
audit_put_key(struct audit_line *l, const char *key)
{
	audit_puts(l, ",\"");
	audit_puts(l, key);
	audit_puts(l, "\":");
}

/* The record as one line, with its end: outcome, error, size, duration. */
static void
audit_format(struct audit_line *l, const struct audit_call *ac,
    const struct audit_end *end, uint64_t duration_us)
{
	char num[64];

	l->p = audit_buf;
	l->len = 0;
	l->is_over = false;
	audit_puts(l, "{\"time\":\"");
	audit_puts(l, ac->time);
	audit_puts(l, "\"");
	audit_put_key(l, "agent");
	audit_put_string(l, ac->agent);
	/* A profile's name once views exist (DESIGN 13). */
	audit_put_key(l, "view");
	audit_puts(l, "null");
	audit_put_key(l, "client");
	audit_put_json(l, ac->client);
	audit_put_key(l, "method");
	audit_put_string(l, ac->method);
	audit_put_key(l, "server");
	audit_put_string(l, ac->server);
	audit_put_key(l, "tool");
	audit_put_string(l, ac->tool);
	audit_put_key(l, "definition");
	audit_put_string(l, ac->definition[0] != '\0' ? ac->definition : NULL);
	audit_put_key(l, "arguments_digest");
	audit_put_string(l,
	    ac->args_digest[0] != '\0' ? ac->args_digest : NULL);
	if (ac->arguments != NULL && !l->is_cut) {
		audit_put_key(l, "arguments");
		audit_put_json(l, ac->arguments);
	}
	audit_put_key(l, "decision");
	if (ac->decision != NULL)
		audit_put_json(l, ac->decision);
	else
		audit_puts(l, "{\"rule\":null,\"by\":\"default-allow\"}");
	audit_put_key(l, "outcome");
	audit_put_string(l, end->outcome);
	audit_put_key(l, "error");
	if (end->code != 0 || end->kind != NULL) {
		snprintf(num, sizeof num, "{\"code\":%d,\"kind\":", end->code);
		audit_puts(l, num);
		audit_put_string(l, end->kind);
		audit_puts(l, "}");
	} else
		audit_puts(l, "null");
	/* As %.3f of the milliseconds, with no floating point to format. */
	audit_puts(l, ",\"duration_ms\":");
	audit_put(l, num,
	    jsonrpc_format_int(num, (int64_t)(duration_us / 1000)));
	num[0] = '.';
	num[1] = (char)('0' + duration_us / 100 % 10);
	num[2] = (char)('0' + duration_us / 10 % 10);
	num[3] = (char)('0' + duration_us % 10);
	audit_put(l, num, 4);
	audit_puts(l, ",\"bytes_in\":");
	audit_put(l, num, jsonrpc_format_int(num, (int64_t)ac->bytes_in));
	audit_puts(l, ",\"bytes_out\":");
	audit_put(l, num, jsonrpc_format_int(num, (int64_t)end->bytes_out));
	if (l->is_cut)
		audit_puts(l, ",\"cut\":true");
	audit_puts(l, "}\n");
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
	unsigned char digest[AUDIT_DIGEST_BYTES];

	ac->bytes_in = len;
	crypto_generichash(digest, sizeof digest, (const unsigned char *)text,
	    len, NULL, 0);
	sodium_bin2hex(ac->args_digest, sizeof ac->args_digest, digest,
	    sizeof digest);
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

struct audit_call *
audit_call_new(const struct call_who *who, const char *method,
    const char *server, const char *tool, const char *definition,
    const json_t *args)
{
	struct audit_call *ac;

	if (!audit_is_on())
		return NULL;
	ac = xcalloc(1, sizeof *ac);
	audit_time(ac->time);
	ac->start_us = audit_now_us();
	ac->agent = xstrdup(who->agent);
	ac->client = json_incref((json_t *)(uintptr_t)who->client);
	ac->method = method;
	ac->server = server != NULL ? xstrdup(server) : NULL;
	ac->tool = xstrdup(tool != NULL ? tool : "");
	if (definition != NULL)
		snprintf(ac->definition, sizeof ac->definition, "%s",
		    definition);
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
	free(ac->agent);
	json_decref(ac->client);
	free(ac->server);
	free(ac->tool);
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
	struct audit_line l = { 0 };
	uint64_t us = audit_now_us() - ac->start_us;

	audit_format(&l, ac, end, us);
	if (l.is_over) {
		/* Its arguments go, and long strings are cut. */
		l.is_cut = true;
		audit_format(&l, ac, end, us);
	}
	if (l.is_over)
		return -E2BIG; /* cannot be: every field is bounded then */
	return audit_file_write(l.p, l.len, ac, end);
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
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof exe - 1);
	if (n < 0)
		return json_pack("{s:i, s:n}", "pid", (int)pid, "exe");
	exe[n] = '\0';
	return json_pack("{s:i, s:s}", "pid", (int)pid, "exe", exe);
}
