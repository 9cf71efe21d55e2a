/* SPDX-License-Identifier: ISC */
/* mcpctl client-config for codex: the mcpd table of its config.toml. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-client-config.h"

#define CC_TOML_PATH 4	/* key components a header keeps */
#define CC_TOML_KEY  64 /* bytes of a key component compared */

/* Where the scan is, and what it found of the entry. */
struct cc_toml {
	const char *s;
	size_t len, i;
	const char *error; /* why the text cannot be edited safely */
	size_t error_at;   /* the start of its line */
	size_t line;	   /* the start of the line being read */
	/* The entry's tables: each [mcp_servers.mcpd...] header's span. */
	size_t spans[16][2];
	size_t nspans;
	size_t *open_span; /* the span of the table being read, or NULL */
};

/* One key: its components (cut at CC_TOML_KEY bytes), how many. */
struct cc_toml_key {
	char part[CC_TOML_PATH][CC_TOML_KEY];
	size_t n;
};

static void
cc_toml_fail(struct cc_toml *t, const char *error)
{
	if (t->error == NULL) {
		t->error = error;
		t->error_at = t->line;
	}
}

static void
cc_toml_blanks(struct cc_toml *t)
{
	while (t->i < t->len && (t->s[t->i] == ' ' || t->s[t->i] == '\t'))
		t->i++;
}

/* Skips a comment, if any, and the end of the line; false if more follows. */
static bool
cc_toml_eol(struct cc_toml *t)
{
	cc_toml_blanks(t);
	if (t->i < t->len && t->s[t->i] == '#')
		while (t->i < t->len && t->s[t->i] != '\n')
			t->i++;
	if (t->i < t->len && t->s[t->i] == '\r')
		t->i++;
	if (t->i >= t->len)
		return true;
	if (t->s[t->i] != '\n')
		return false;
	t->i++;
	return true;
}

/* Skips a string of any of TOML's four kinds; false if it does not end. */
static bool
cc_toml_string(struct cc_toml *t)
{
	char q = t->s[t->i];
	bool is_multi = t->i + 2 < t->len && t->s[t->i + 1] == q &&
	    t->s[t->i + 2] == q;

	t->i += is_multi ? 3 : 1;
	while (t->i < t->len) {
		if (q == '"' && t->s[t->i] == '\\') {
			t->i += 2;
			continue;
		}
		if (!is_multi && t->s[t->i] == '\n')
			return false;
		if (t->s[t->i] == q &&
		    (!is_multi ||
			(t->i + 2 < t->len && t->s[t->i + 1] == q &&
			    t->s[t->i + 2] == q))) {
			t->i += is_multi ? 3 : 1;
			/* """a"""" is legal TOML, but not worth guessing. */
			return !is_multi || t->i >= t->len || t->s[t->i] != q;
		}
		t->i++;
	}
	return false;
}

/* Skips a value; false when it is not one the scanner knows the end of. */
static bool
cc_toml_value(struct cc_toml *t)
{
	size_t depth = 0;
	char c;

	if (t->i >= t->len)
		return false;
	c = t->s[t->i];
	if (c == '"' || c == '\'')
		return cc_toml_string(t);
	if (c != '[' && c != '{') {
		while (t->i < t->len && t->s[t->i] != '\n' &&
		    t->s[t->i] != '#' && t->s[t->i] != '\r')
			t->i++;
		return true;
	}
	while (t->i < t->len) {
		c = t->s[t->i];
		if (c == '"' || c == '\'') {
			if (!cc_toml_string(t))
				return false;
			continue;
		}
		if (c == '#')
			while (t->i < t->len && t->s[t->i] != '\n')
				t->i++;
		else if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && --depth == 0) {
			t->i++;
			return true;
		}
		t->i++;
	}
	return false;
}

/* Reads a dotted key into *k; false when it is none or has escapes. */
static bool
cc_toml_key(struct cc_toml *t, struct cc_toml_key *k)
{
	size_t start, n;
	char q;

	k->n = 0;
	for (;;) {
		cc_toml_blanks(t);
		if (t->i >= t->len)
			return false;
		q = t->s[t->i];
		if (q == '"' || q == '\'') {
			start = ++t->i;
			while (t->i < t->len && t->s[t->i] != q &&
			    t->s[t->i] != '\\' && t->s[t->i] != '\n')
				t->i++;
			if (t->i >= t->len || t->s[t->i] != q)
				return false;
			n = t->i++ - start;
		} else {
			start = t->i;
			while (t->i < t->len &&
			    (strchr("_-", t->s[t->i]) != NULL ||
				(t->s[t->i] >= 'a' && t->s[t->i] <= 'z') ||
				(t->s[t->i] >= 'A' && t->s[t->i] <= 'Z') ||
				(t->s[t->i] >= '0' && t->s[t->i] <= '9')))
				t->i++;
			if ((n = t->i - start) == 0)
				return false;
		}
		if (k->n < CC_TOML_PATH) {
			n = n < CC_TOML_KEY - 1 ? n : CC_TOML_KEY - 1;
			memcpy(k->part[k->n], t->s + start, n);
			k->part[k->n][n] = '\0';
		}
		k->n++;
		cc_toml_blanks(t);
		if (t->i >= t->len || t->s[t->i] != '.')
			return true;
		t->i++;
	}
}

/* Whether key component i of k is s. */
static bool
cc_toml_is(const struct cc_toml_key *k, size_t i, const char *s)
{
	return i < k->n && i < CC_TOML_PATH && strcmp(k->part[i], s) == 0;
}

/* A [table] or [[array]] header at t->i. */
static void
cc_toml_header(struct cc_toml *t, struct cc_toml_key *table)
{
	bool is_array = t->i + 1 < t->len && t->s[t->i + 1] == '[';

	t->i += is_array ? 2 : 1;
	t->open_span = NULL;
	if (!cc_toml_key(t, table) || t->i >= t->len || t->s[t->i] != ']' ||
	    (is_array && (t->i + 1 >= t->len || t->s[t->i + 1] != ']'))) {
		cc_toml_fail(t, "a table header the scanner cannot read");
		return;
	}
	t->i += is_array ? 2 : 1;
	if (!cc_toml_eol(t))
		cc_toml_fail(t, "text after a table header");
	if (!cc_toml_is(table, 0, "mcp_servers"))
		return;
	if (is_array) {
		cc_toml_fail(t,
		    "mcp_servers is an array of tables ([[mcp_servers...]])");
		return;
	}
	if (!cc_toml_is(table, 1, CTL_CLIENT_CONFIG_NAME))
		return;
	if (t->nspans == sizeof t->spans / sizeof t->spans[0]) {
		cc_toml_fail(t, "too many tables of the mcpd entry");
		return;
	}
	t->open_span = t->spans[t->nspans++];
	t->open_span[0] = t->line;
	t->open_span[1] = t->i;
}

/* A key = value line at t->i in the table named table. */
static void
cc_toml_pair(struct cc_toml *t, const struct cc_toml_key *table)
{
	struct cc_toml_key k;
	bool is_root = table->n == 0;

	if (!cc_toml_key(t, &k) || t->i >= t->len || t->s[t->i] != '=') {
		cc_toml_fail(t,
		    "a line that is neither a table header nor a key = value (or a quoted key with escapes)");
		return;
	}
	t->i++;
	cc_toml_blanks(t);
	if (!cc_toml_value(t) || !cc_toml_eol(t)) {
		cc_toml_fail(t, "a value the scanner cannot find the end of");
		return;
	}
	if (t->open_span != NULL)
		t->open_span[1] = t->i;
	if (is_root && cc_toml_is(&k, 0, "mcp_servers"))
		cc_toml_fail(t,
		    "mcp_servers is given as a key of the top level, not as [mcp_servers.NAME] tables");
	else if (table->n == 1 && cc_toml_is(table, 0, "mcp_servers") &&
	    cc_toml_is(&k, 0, CTL_CLIENT_CONFIG_NAME))
		cc_toml_fail(t,
		    "the mcpd entry is given as keys of [mcp_servers], not as its own table");
}

/* Scans the text: where the entry's tables are, or why it cannot edit it. */
static void
cc_toml_scan(struct cc_toml *t)
{
	struct cc_toml_key table = { .n = 0 };

	while (t->i < t->len && t->error == NULL) {
		t->line = t->i;
		cc_toml_blanks(t);
		if (cc_toml_eol(t))
			continue;
		if (t->s[t->i] == '[')
			cc_toml_header(t, &table);
		else
			cc_toml_pair(t, &table);
	}
}

/* Writes s as a TOML basic string. */
static void
cc_toml_put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04X", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The entry's table, as text (new), or NULL. */
static char *
cc_toml_render(const json_t *entry)
{
	char *buf = NULL;
	size_t size = 0, i;
	json_t *v;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	fprintf(f, "[mcp_servers.%s]\ncommand = ", CTL_CLIENT_CONFIG_NAME);
	cc_toml_put_string(f,
	    json_string_value(json_object_get(entry, "command")));
	fputs("\nargs = [", f);
	json_array_foreach(json_object_get(entry, "args"), i, v) {
		fputs(i > 0 ? ", " : "", f);
		cc_toml_put_string(f, json_string_value(v));
	}
	fputs("]\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void
ctl_client_config_toml_print(const json_t *entry)
{
	char *text = cc_toml_render(entry);

	if (text != NULL)
		fputs(text, stdout);
	free(text);
}

/* The line of text[at], from 1. */
static size_t
cc_toml_line(const char *s, size_t at)
{
	size_t line = 1;

	for (size_t i = 0; i < at; i++)
		line += s[i] == '\n';
	return line;
}

/* The new text: the entry's first table replaced, its others taken out. */
static char *
cc_toml_edit(const struct cc_toml *t, const char *table)
{
	char *buf = NULL;
	size_t size = 0, at = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	for (size_t k = 0; k < t->nspans; k++) {
		size_t start = t->spans[k][0];

		/* A table taken out takes the blank line before it. */
		if (k > 0 && start > at && start >= 2 &&
		    t->s[start - 1] == '\n' && t->s[start - 2] == '\n')
			start--;
		fwrite(t->s + at, 1, start - at, f);
		if (k == 0)
			fputs(table, f);
		at = t->spans[k][1];
	}
	if (t->nspans == 0) {
		fwrite(t->s, 1, t->len, f);
		if (t->len > 0)
			fputs(t->s[t->len - 1] == '\n' ? "\n" : "\n\n", f);
		fputs(table, f);
	} else
		fwrite(t->s + at, 1, t->len - at, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int
ctl_client_config_toml_write(const struct mcpctl *m,
    const struct ctl_client_config_client *client, const json_t *entry,
    const char *file, bool is_dry_run)
{
	struct ctl_client_config_file f;
	struct cc_toml t = { 0 }, check = { 0 };
	char *table = cc_toml_render(entry), *out = NULL, *bak = NULL;
	const char *action;
	bool is_unchanged;
	json_t *report;
	int r;

	if ((r = ctl_client_config_open(file, &f)) != 0)
		goto out;
	t.s = f.text != NULL ? f.text : "";
	t.len = f.len;
	cc_toml_scan(&t);
	if (t.error != NULL) {
		print_err(
		    "client-config: %s:%zu: %s: mcpctl cannot edit this file safely, so it was left alone; add the [mcp_servers.%s] table that `mcpctl client-config %s` prints by hand",
		    f.path, cc_toml_line(t.s, t.error_at), t.error,
		    CTL_CLIENT_CONFIG_NAME, client->name);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if (table == NULL || (out = cc_toml_edit(&t, table)) == NULL) {
		print_err("client-config: out of memory");
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	/* What was written must scan as one table of the entry. */
	check.s = out;
	check.len = strlen(out);
	cc_toml_scan(&check);
	if (check.error != NULL || check.nspans != 1) {
		print_err(
		    "client-config: %s would not read as TOML with one [mcp_servers.%s] table after the edit, so it was left alone",
		    f.path, CTL_CLIENT_CONFIG_NAME);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	is_unchanged = !f.is_new && strcmp(out, t.s) == 0;
	action = f.is_new ? "created" :
	    is_unchanged  ? "unchanged" :
	    t.nspans > 0  ? "replaced" :
			    "added";
	if (!is_dry_run && !is_unchanged &&
	    (r = ctl_client_config_commit(&f, out, &bak)) != 0)
		goto out;
	r = MCPCTL_EXIT_OK;
	if (m->is_json) {
		report = json_pack("{s:s, s:s, s:s, s:s?, s:b}", "file", f.path,
		    "client", client->name, "action", action, "backup", bak,
		    "dry_run", is_dry_run);
		print_json(report);
		json_decref(report);
	} else if (is_unchanged)
		printf("%s already has the %s entry for %s: nothing changed\n",
		    f.path, CTL_CLIENT_CONFIG_NAME, client->name);
	else {
		printf("%s %s: the [mcp_servers.%s] table %s\n",
		    is_dry_run ? (f.is_new ? "would create" : "would update") :
				 (f.is_new ? "created" : "updated"),
		    f.path, CTL_CLIENT_CONFIG_NAME,
		    t.nspans > 0 ? "replaced" : "added");
		if (is_dry_run)
			printf("dry run, nothing changed\n");
		else {
			if (bak != NULL)
				printf("the old content is in %s\n", bak);
			printf("read back: as written; restart %s to use it\n",
			    client->name);
		}
	}
out:
	ctl_client_config_close(&f);
	free(table);
	free(out);
	free(bak);
	return r;
}
