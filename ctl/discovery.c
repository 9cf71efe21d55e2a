/* SPDX-License-Identifier: ISC */
/* What search, catalog, info and versions print: registry text made safe,
 * within a budget of characters, whole records or none. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"
#include "textesc.h"

#define DISCOVERY_TEXT_CHARS 8192 /* when mcpd does not say */
#define DISCOVERY_OFFICIAL   "io.modelcontextprotocol.registry/official"

/* An answer taking shape: the lines that must be there, and blocks. */
struct discovery_out {
	FILE *f; /* the block being written */
	char *buf;
	size_t len;
	char **blocks; /* whole records (or a rejected one), in order */
	size_t nblocks;
};

static void
discovery_begin(struct discovery_out *o)
{
	o->buf = NULL;
	o->len = 0;
	if ((o->f = open_memstream(&o->buf, &o->len)) == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
}

/* The block written since discovery_begin, as a new entry. */
static void
discovery_end(struct discovery_out *o)
{
	char **b;

	if (fclose(o->f) != 0 ||
	    (b = realloc(o->blocks, (o->nblocks + 1) * sizeof *b)) == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	o->blocks = b;
	o->blocks[o->nblocks++] = o->buf;
	o->f = NULL;
}

/* Text from the registry, escaped; quoted unless it is a plain word. */
static void
discovery_put(FILE *f, const char *s, bool is_free_text)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
				    "OPQRSTUVWXYZ0123456789._~:/@+=,%#?&!*-";
	char *esc;

	if (s == NULL) {
		fputc('-', f);
		return;
	}
	if (!is_free_text && *s != '\0' && s[strspn(s, plain)] == '\0') {
		fputs(s, f);
		return;
	}
	if ((esc = textesc(s, strlen(s), true)) == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	fputs(esc, f);
	free(esc);
}

static const char *
discovery_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* Text that is no publisher's own words (mcpd's): escaped, unquoted. */
static void
discovery_put_plain(FILE *f, const char *s)
{
	char *esc;

	if (s == NULL || (esc = textesc(s, strlen(s), false)) == NULL) {
		fputc('-', f);
		return;
	}
	fputs(esc, f);
	free(esc);
}

/* The cursor as a shell word: bare, '...', or $'...' with escapes. */
static void
discovery_put_cursor(FILE *f, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
				    "OPQRSTUVWXYZ0123456789._~:/@+=,%-";
	char *esc;
	bool is_printable = true;

	if (*s != '\0' && s[strspn(s, plain)] == '\0') {
		fputs(s, f);
		return;
	}
	if ((esc = textesc(s, strlen(s), false)) == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	/* textesc changed nothing but backslashes it left: no controls. */
	for (const char *p = s, *q = esc; is_printable; p++, q++) {
		if (*p != *q)
			is_printable = false;
		if (*p == '\0')
			break;
	}
	free(esc);
	if (is_printable) {
		fputc('\'', f);
		for (; *s; s++)
			fputs(*s == '\'' ? "'\\''" : (char[]){ *s, 0 }, f);
		fputc('\'', f);
		return;
	}
	/* bash's $'...': every byte but printable ASCII as \xHH. */
	fputs("$'", f);
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\'' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}

/* "active", "latest"... of a record's official meta, after a space. */
static void
discovery_put_status(FILE *f, const json_t *record, bool is_long)
{
	const json_t *meta = json_object_get(json_object_get(record, "_meta"),
	    DISCOVERY_OFFICIAL);
	const char *status = discovery_str(meta, "status");

	if (status != NULL) {
		fputs("  ", f);
		discovery_put(f, status, false);
	}
	if (json_is_true(json_object_get(meta, "isLatest")))
		fputs("  latest", f);
	if (is_long && discovery_str(meta, "publishedAt") != NULL) {
		fputs("  published ", f);
		discovery_put(f, discovery_str(meta, "publishedAt"), false);
	}
	if (is_long && discovery_str(meta, "updatedAt") != NULL) {
		fputs("  updated ", f);
		discovery_put(f, discovery_str(meta, "updatedAt"), false);
	}
}

/* An input (argument, variable, header) of a package or remote. */
static void
discovery_put_input(FILE *f, const char *what, const json_t *in)
{
	const char *name = discovery_str(in, "name");
	const char *desc = discovery_str(in, "description");

	if (name == NULL)
		name = discovery_str(in, "valueHint");
	if (name == NULL)
		name = discovery_str(in, "value");
	fprintf(f, "    %s ", what);
	discovery_put(f, name, false);
	fprintf(f, " (%s%s%s%s)",
	    json_is_true(json_object_get(in, "isRequired")) ? "required" :
							      "optional",
	    json_is_true(json_object_get(in, "isSecret")) ? ", secret" : "",
	    json_is_true(json_object_get(in, "isRepeated")) ? ", repeated" : "",
	    discovery_str(in, "type") != NULL &&
		    strcmp(discovery_str(in, "type"), "named") == 0 ?
		", named" :
		"");
	if (desc != NULL) {
		fputs(": ", f);
		discovery_put(f, desc, true);
	}
	fputc('\n', f);
}

/* Each input of list, as what. */
static void
discovery_put_inputs(FILE *f, const char *what, const json_t *list)
{
	const json_t *in;
	size_t i;

	json_array_foreach(list, i, in)
		discovery_put_input(f, what, in);
}

/* Whether mcpd can reach a remote of this transport type. */
static bool
discovery_is_reachable(const char *type)
{
	return type != NULL &&
	    (strcmp(type, "streamable-http") == 0 || strcmp(type, "sse") == 0);
}

/* One record: a few lines in a list, everything with is_long. */
static void
discovery_put_record(FILE *f, const json_t *record, bool is_long)
{
	const json_t *server = json_object_get(record, "server"), *v;
	const json_t *repo = json_object_get(server, "repository");
	size_t i;

	discovery_put(f, discovery_str(server, "name"), false);
	fputs("  ", f);
	discovery_put(f, discovery_str(server, "version"), false);
	discovery_put_status(f, record, is_long);
	fputc('\n', f);
	if (is_long && discovery_str(server, "title") != NULL) {
		fputs("  title: ", f);
		discovery_put(f, discovery_str(server, "title"), true);
		fputc('\n', f);
	}
	fputs("  ", f);
	discovery_put(f, discovery_str(server, "description"), true);
	fputc('\n', f);
	if (is_long && discovery_str(repo, "url") != NULL) {
		fputs("  repository: ", f);
		discovery_put(f, discovery_str(repo, "url"), false);
		fputs(" (", f);
		discovery_put(f, discovery_str(repo, "source"), false);
		if (discovery_str(repo, "subfolder") != NULL) {
			fputs(", ", f);
			discovery_put(f, discovery_str(repo, "subfolder"),
			    false);
		}
		fputs(")\n", f);
	}
	if (is_long && discovery_str(server, "websiteUrl") != NULL) {
		fputs("  website: ", f);
		discovery_put(f, discovery_str(server, "websiteUrl"), false);
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(server, "packages"), i, v) {
		fputs("  package ", f);
		discovery_put(f, discovery_str(v, "registryType"), false);
		fputc(' ', f);
		discovery_put(f, discovery_str(v, "identifier"), false);
		if (discovery_str(v, "version") != NULL) {
			fputc('@', f);
			discovery_put(f, discovery_str(v, "version"), false);
		}
		fputs(" (", f);
		discovery_put(f,
		    discovery_str(json_object_get(v, "transport"), "type"),
		    false);
		fputs(")\n", f);
		if (!is_long)
			continue;
		discovery_put_inputs(f, "runtime argument",
		    json_object_get(v, "runtimeArguments"));
		discovery_put_inputs(f, "argument",
		    json_object_get(v, "packageArguments"));
		discovery_put_inputs(f, "env",
		    json_object_get(v, "environmentVariables"));
	}
	json_array_foreach(json_object_get(server, "remotes"), i, v) {
		const char *type = discovery_str(v, "type");

		fputs("  remote ", f);
		discovery_put(f, type, false);
		fputc(' ', f);
		discovery_put(f, discovery_str(v, "url"), false);
		fputs(discovery_is_reachable(type) ?
			"\n" :
			"  [unsupported-transport]\n",
		    f);
		if (is_long)
			discovery_put_inputs(f, "header",
			    json_object_get(v, "headers"));
	}
}

/* A rejected record: where it was, its name, its problems. */
static void
discovery_put_rejected(FILE *f, const json_t *rej)
{
	const json_t *p;
	size_t i;

	fprintf(f, "  [%lld] ",
	    (long long)json_integer_value(json_object_get(rej, "index")));
	discovery_put(f, discovery_str(rej, "name"), false);
	fputc('\n', f);
	json_array_foreach(json_object_get(rej, "problems"), i, p) {
		/* mcpd's words, which quote what they show of the record. */
		fputs("    ", f);
		discovery_put_plain(f, discovery_str(p, "path"));
		fputs(": ", f);
		discovery_put_plain(f, discovery_str(p, "detail"));
		fputc('\n', f);
	}
	if (json_integer_value(json_object_get(rej, "omitted")) > 0)
		fprintf(f, "    %lld more omitted\n",
		    (long long)json_integer_value(json_object_get(rej,
			"omitted")));
}

/* The rejected records, as blocks; the first one under a heading. */
static void
discovery_add_rejected(struct discovery_out *o, const json_t *result)
{
	const json_t *rej;
	size_t i;

	json_array_foreach(json_object_get(result, "rejected_records"), i,
	    rej) {
		discovery_begin(o);
		if (i == 0)
			fputs(
			    "rejected (they do not conform to the registry's contract):\n",
			    o->f);
		discovery_put_rejected(o->f, rej);
		discovery_end(o);
	}
}

/* A line of text (printf) as a new string. */
static char *
discovery_line(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	va_end(ap);
	return s;
}

/* "N records not shown (--json has them)". */
static char *
discovery_not_shown(size_t n)
{
	return discovery_line("%zu record%s not shown (--json has %s)\n", n,
	    n == 1 ? "" : "s", n == 1 ? "it" : "them");
}

/*
 * Prints head, the blocks that fit, "N records not shown" for the rest,
 * then tail (the next cursor), in at most the budget mcpd names: tail
 * and head first, whole blocks in order while they fit.
 */
static void
discovery_write(struct discovery_out *o, const char *head, const char *tail,
    const json_t *result)
{
	json_int_t budget =
	    json_integer_value(json_object_get(json_object_get(result,
						   "limits"),
		"text_chars"));
	size_t used, shown = 0, reserve;
	char *note;

	if (budget <= 0)
		budget = DISCOVERY_TEXT_CHARS;
	used = textesc_chars(head) + textesc_chars(tail);
	note = discovery_not_shown(o->nblocks);
	reserve = textesc_chars(note);
	free(note);
	for (; shown < o->nblocks; shown++) {
		size_t n = textesc_chars(o->blocks[shown]);
		size_t need = used + n + (shown + 1 < o->nblocks ? reserve : 0);

		if (need > (size_t)budget)
			break;
		used += n;
	}
	fputs(head, stdout);
	for (size_t i = 0; i < shown; i++)
		fputs(o->blocks[i], stdout);
	if (shown < o->nblocks) {
		note = discovery_not_shown(o->nblocks - shown);
		fputs(note, stdout);
		free(note);
	}
	fputs(tail, stdout);
	for (size_t i = 0; i < o->nblocks; i++)
		free(o->blocks[i]);
	free(o->blocks);
	o->blocks = NULL;
	o->nblocks = 0;
}

/* The next-cursor line; never cut, but replaced when over the budget. */
static char *
discovery_cursor_line(const json_t *result)
{
	const char *cursor = discovery_str(result, "next_cursor");
	json_int_t budget =
	    json_integer_value(json_object_get(json_object_get(result,
						   "limits"),
		"text_chars"));
	char *buf = NULL;
	size_t len;
	FILE *f;

	if (cursor == NULL)
		return strdup("");
	if ((f = open_memstream(&buf, &len)) == NULL)
		return NULL;
	fputs("next page: --cursor ", f);
	discovery_put_cursor(f, cursor);
	fputc('\n', f);
	if (fclose(f) != 0)
		return NULL;
	if (textesc_chars(buf) + 200 <=
	    (size_t)(budget > 0 ? budget : DISCOVERY_TEXT_CHARS))
		return buf;
	free(buf);
	return discovery_line(
	    "next page: the cursor is %zu characters, too long to show here; --json has it (next_cursor)\n",
	    textesc_chars(cursor));
}

/* Where the answer came from, for the first line. */
static void
discovery_put_source(FILE *f, const json_t *result)
{
	if (strcmp(discovery_str(result, "source"), "local") == 0) {
		fputs("local catalog ", f);
		discovery_put(f, discovery_str(result, "catalog"), false);
	} else {
		fputs("registry ", f);
		discovery_put(f, discovery_str(result, "registry"), false);
	}
}

void
discovery_print_page(const json_t *result)
{
	const json_t *servers = json_object_get(result, "servers"), *record;
	size_t nrej = json_array_size(json_object_get(result,
	    "rejected_records"));
	struct discovery_out o = { 0 };
	char *head = NULL, *tail;
	size_t len, i;
	FILE *f = open_memstream(&head, &len);

	if (f == NULL || (tail = discovery_cursor_line(result)) == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	discovery_put_source(f, result);
	fprintf(f, ": %zu server%s", json_array_size(servers),
	    json_array_size(servers) == 1 ? "" : "s");
	if (nrej > 0)
		fprintf(f, ", %zu record%s rejected", nrej,
		    nrej == 1 ? "" : "s");
	fputc('\n', f);
	fclose(f);
	json_array_foreach(servers, i, record) {
		discovery_begin(&o);
		discovery_put_record(o.f, record, false);
		discovery_end(&o);
	}
	discovery_add_rejected(&o, result);
	discovery_write(&o, head, tail, result);
	free(head);
	free(tail);
}

void
discovery_print_record(const json_t *result)
{
	const json_t *record = json_object_get(result, "record");
	struct discovery_out o = { 0 };
	char *head = NULL;
	size_t len;
	FILE *f = open_memstream(&head, &len);

	if (f == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	discovery_put_source(f, result);
	fputs(json_is_object(record) ? "\n" : ": no conforming record\n", f);
	fclose(f);
	if (json_is_object(record)) {
		discovery_begin(&o);
		discovery_put_record(o.f, record, true);
		discovery_end(&o);
	}
	discovery_add_rejected(&o, result);
	discovery_write(&o, head, "", result);
	free(head);
}

void
discovery_print_versions(const json_t *result)
{
	const json_t *servers = json_object_get(result, "servers"), *record;
	struct discovery_out o = { 0 };
	char *head = NULL;
	size_t len, i;
	FILE *f = open_memstream(&head, &len);

	/* The versions of a name come whole: the contract has no cursor. */
	if (f == NULL) {
		print_err("out of memory");
		exit(MCPCTL_EXIT_ERROR);
	}
	discovery_put_source(f, result);
	fputs(": ", f);
	discovery_put(f, discovery_str(result, "name"), false);
	fprintf(f, ": %zu version%s\n", json_array_size(servers),
	    json_array_size(servers) == 1 ? "" : "s");
	fclose(f);
	json_array_foreach(servers, i, record) {
		const json_t *server = json_object_get(record, "server");

		discovery_begin(&o);
		fputs("  ", o.f);
		discovery_put(o.f, discovery_str(server, "version"), false);
		discovery_put_status(o.f, record, true);
		fputc('\n', o.f);
		discovery_end(&o);
	}
	discovery_add_rejected(&o, result);
	discovery_write(&o, head, "", result);
	free(head);
}

const struct option discovery_page_options[] = {
	{ "limit", required_argument, NULL, 'n' },
	{ "cursor", required_argument, NULL, 'c' },
	{ "source", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option of search and catalog into params; -1: not one of theirs. */
static int
discovery_page_option(const struct mcpctl_cmd *cmd, int c, const char *arg,
    json_t *params)
{
	char *end;
	long long v;

	switch (c) {
	case 'n':
		v = strtoll(arg, &end, 10);
		if (end == arg || *end != '\0' || v < 1 || v > 100)
			return mcpctl_usage(cmd,
			    "--limit needs a number from 1 to 100, not '%s'",
			    arg);
		json_object_set_new(params, "limit", json_integer(v));
		return 0;
	case 'c':
		if (*arg == '\0')
			return mcpctl_usage(cmd,
			    "--cursor needs the next cursor a page gave");
		json_object_set_new(params, "cursor", json_string(arg));
		return 0;
	case 'S':
		if (strcmp(arg, "official") != 0 && strcmp(arg, "local") != 0)
			return mcpctl_usage(cmd,
			    "--source is official or local, not '%s'", arg);
		json_object_set_new(params, "source", json_string(arg));
		return 0;
	default:
		return -1;
	}
}

bool
discovery_page_params(const struct mcpctl_cmd *cmd, int argc, char **argv,
    int nargs, const char *what, json_t **ret, int *status)
{
	json_t *params = json_object();
	int c, r = 0;

	while ((c = mcpctl_getopt(argc, argv, ":h", discovery_page_options)) !=
	    -1) {
		if (c == 'h')
			r = mcpctl_help(cmd);
		else if ((r = discovery_page_option(cmd, c, optarg, params)) <
		    0)
			r = mcpctl_bad_option(cmd, c, argv);
		if (c == 'h' || r != 0) {
			json_decref(params);
			*status = r;
			return false;
		}
	}
	if ((r = mcpctl_positional(cmd, argc, argv, nargs, nargs, what)) != 0) {
		json_decref(params);
		*status = r;
		return false;
	}
	*ret = params;
	return true;
}
