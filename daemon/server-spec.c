/* SPDX-License-Identifier: ISC */
/* What a server runs or reaches: its id, endpoint and transport. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "jsonwipe.h"
#include "log.h"
#include "mcpd.h"
#include "vars.h"

/* Strings of a spec may hold resolved secrets: they are wiped, then freed. */
static void
spec_str_free(char *str)
{
	if (str == NULL)
		return;
	explicit_bzero(str, strlen(str));
	free(str);
}

void
spec_clear(struct server_spec *spec)
{
	child_strv_wipe_free(spec->argv);
	child_strv_wipe_free(spec->env);
	free(spec->cwd);
	spec_str_free(spec->remote.url);
	jsonwipe_decref(spec->remote.headers);
	jsonwipe_decref(spec->remote.oauth);
	free(spec->transport);
	free(spec->image);
	child_strv_wipe_free(spec->args);
	child_strv_wipe_free(spec->volumes);
	free(spec->network);
	memset(spec, 0, sizeof *spec);
}

/* ---- variables: $(env.NAME) and $(secret.NAME), resolved at each start ---- */

static const char *
spec_lookup(void *ctx, const char *ns, const char *name, bool *ret_unknown)
{
	char **cause = ctx;
	struct secrets *vault;

	if (strcmp(ns, "env") == 0)
		return getenv(name);
	if (strcmp(ns, "secret") == 0) {
		if ((vault = mcpd_secrets(cause)) == NULL)
			return NULL;
		return secrets_get(vault, name);
	}
	*ret_unknown = true;
	return NULL;
}

/*
 * One string with its references resolved into *ret (new); -EINVAL for an
 * unknown namespace, -ENOENT for a missing value, with *cause.
 */
static int
spec_resolve_str(const char *in, char **ret, char **cause)
{
	char *vault_cause = NULL, *out = NULL;
	ssize_t len;

	if (!vars_has_refs(in)) {
		*ret = xstrdup(in);
		return 0;
	}
	len = vars_expand(in, spec_lookup, &vault_cause, NULL, 0, cause);
	if (len >= 0) {
		out = xmalloc(len + 1);
		len = vars_expand(in, spec_lookup, &vault_cause, out, len + 1,
		    cause);
	}
	if (len == -ENOMEM)
		fatalx("out of memory");
	if (len >= 0) {
		free(vault_cause);
		*ret = out;
		return 0;
	}
	free(out);
	if (vault_cause != NULL) {
		free(*cause);
		*cause = vault_cause;
		len = -EIO;
	}
	return (int)len;
}

static int
spec_resolve_strv(char *const *in, char ***ret, char **cause)
{
	size_t n = 0;
	int r;

	while (in != NULL && in[n] != NULL)
		n++;
	if (in == NULL)
		return 0;
	*ret = xcalloc(n + 1, sizeof **ret);
	for (size_t i = 0; i < n; i++)
		if ((r = spec_resolve_str(in[i], &(*ret)[i], cause)) < 0)
			return r;
	return 0;
}

static int
spec_resolve_headers(const json_t *in, json_t **ret, char **cause)
{
	const char *k;
	json_t *v;
	char *value;
	int r;

	if (in == NULL)
		return 0;
	*ret = xjson(json_object());
	json_object_foreach((json_t *)(uintptr_t)in, k, v) {
		if ((r = spec_resolve_str(json_string_value(v), &value,
			 cause)) < 0)
			return r;
		json_object_set_new(*ret, k, json_string(value));
		spec_str_free(value);
	}
	return 0;
}

int
spec_resolve(const struct server_spec *in, struct server_spec *out,
    char **cause)
{
	int r;

	memset(out, 0, sizeof *out);
	out->remote = in->remote;
	out->remote.url = NULL;
	out->remote.headers = NULL;
	out->remote.oauth = NULL;
	out->remote.auth = NULL;
	if ((r = spec_resolve_strv(in->argv, &out->argv, cause)) < 0 ||
	    (r = spec_resolve_strv(in->env, &out->env, cause)) < 0 ||
	    (r = spec_resolve_strv(in->args, &out->args, cause)) < 0 ||
	    (r = spec_resolve_strv(in->volumes, &out->volumes, cause)) < 0 ||
	    (r = spec_resolve_headers(in->remote.headers, &out->remote.headers,
		 cause)) < 0 ||
	    (r = spec_resolve_headers(in->remote.oauth, &out->remote.oauth,
		 cause)) < 0 ||
	    (in->remote.url != NULL &&
		(r = spec_resolve_str(in->remote.url, &out->remote.url,
		     cause)) < 0)) {
		spec_clear(out);
		return r;
	}
	if (in->cwd != NULL)
		out->cwd = xstrdup(in->cwd);
	if (in->transport != NULL)
		out->transport = xstrdup(in->transport);
	if (in->image != NULL)
		out->image = xstrdup(in->image);
	if (in->network != NULL)
		out->network = xstrdup(in->network);
	return 0;
}

/* A copy of a NULL-terminated vector, NULL for NULL (not an empty one). */
static char **
spec_strv_copy(char *const *v)
{
	return v != NULL ? child_strv_copy(v) : NULL;
}

static char *
spec_str_copy(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void
spec_copy(struct server_spec *dst, const struct server_spec *src)
{
	/*
	 * A plain copy, never a second expansion: src is resolved already,
	 * and a value may hold "$(" text of its own (a secret, say) that
	 * must reach the server as it is.
	 */
	memset(dst, 0, sizeof *dst);
	dst->argv = spec_strv_copy(src->argv);
	dst->env = spec_strv_copy(src->env);
	dst->cwd = spec_str_copy(src->cwd);
	dst->remote = src->remote;
	dst->remote.url = spec_str_copy(src->remote.url);
	dst->remote.headers = src->remote.headers != NULL ?
	    xjson(json_deep_copy(src->remote.headers)) :
	    NULL;
	dst->remote.oauth = src->remote.oauth != NULL ?
	    xjson(json_deep_copy(src->remote.oauth)) :
	    NULL;
	dst->remote.auth = NULL;
	dst->transport = spec_str_copy(src->transport);
	dst->image = spec_str_copy(src->image);
	dst->args = spec_strv_copy(src->args);
	dst->volumes = spec_strv_copy(src->volumes);
	dst->network = spec_str_copy(src->network);
}

/* True when an argument needs quotes to read back as one word. */
static bool
spec_needs_quotes(const char *a)
{
	return a[0] == '\0' ||
	    strpbrk(a, " \t\n'\"\\$`*?;&|<>(){}[]#~") != NULL;
}

/* The command line as a shell user would type it (display only). */
static char *
spec_command_line(char *const *argv)
{
	size_t len = 1;
	char *line, *p;

	for (size_t i = 0; argv[i] != NULL; i++)
		len += strlen(argv[i]) * 4 + 3;
	p = line = xmalloc(len);
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		if (!spec_needs_quotes(argv[i])) {
			p = stpcpy(p, argv[i]);
			continue;
		}
		*p++ = '\'';
		for (const char *c = argv[i]; *c != '\0'; c++)
			p = *c == '\'' ? stpcpy(p, "'\\''") : (*p = *c, p + 1);
		*p++ = '\'';
	}
	*p = '\0';
	return line;
}

char *
spec_endpoint(const struct server_spec *spec)
{
	char *line, *all;

	if (spec->remote.url != NULL)
		return xstrdup(spec->remote.url);
	if (spec->image == NULL)
		return spec_command_line(spec->argv);
	if (spec->args == NULL || spec->args[0] == NULL)
		return xstrdup(spec->image);
	line = spec_command_line(spec->args);
	xasprintf(&all, "%s %s", spec->image, line);
	free(line);
	return all;
}

const char *
spec_transport_name(const struct server_spec *spec)
{
	if (spec->transport != NULL)
		return spec->transport;
	return spec->remote.url != NULL ? "streamable-http" : "stdio";
}

/* Feeds len bytes of p to the hash (a json_dump_callback too). */
static int
spec_digest_feed(const char *p, size_t len, void *arg)
{
	crypto_generichash_update(arg, (const unsigned char *)p, len);
	return 0;
}

/* Feeds each string of v and a NUL, then a NUL. */
static void
spec_digest_strv(crypto_generichash_state *st, char *const *v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		spec_digest_feed(v[i], strlen(v[i]) + 1, st);
	spec_digest_feed("", 1, st);
}

/*
 * The bytes go straight into the hash: a buffer that grew (open_memstream,
 * json_dumps) would leave copies of resolved secrets behind, unwiped, in
 * the memory it gave back. The hash's state holds some too: it is wiped.
 */
void
spec_digest(const struct server_spec *spec, unsigned char out[SPEC_DIGEST_LEN])
{
	char *const strs[] = { spec->cwd != NULL ? spec->cwd : "",
		spec->remote.url != NULL ? spec->remote.url : "",
		spec->transport != NULL ? spec->transport : "",
		spec->image != NULL ? spec->image : "",
		spec->network != NULL ? spec->network : "", NULL };
	char flags[3] = { '\0', spec->remote.is_sse ? '1' : '0',
		spec->remote.may_fall_back ? '1' : '0' };
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, SPEC_DIGEST_LEN);
	spec_digest_strv(&st, spec->argv);
	spec_digest_strv(&st, spec->env);
	spec_digest_strv(&st, spec->args);
	spec_digest_strv(&st, spec->volumes);
	spec_digest_strv(&st, strs);
	if (spec->remote.headers != NULL &&
	    json_dump_callback(spec->remote.headers, spec_digest_feed, &st,
		JSON_SORT_KEYS) < 0)
		fatalx("cannot digest a server spec");
	if (spec->remote.oauth != NULL) {
		spec_digest_feed("", 1, &st);
		if (json_dump_callback(spec->remote.oauth, spec_digest_feed,
			&st, JSON_SORT_KEYS) < 0)
			fatalx("cannot digest a server spec");
	}
	spec_digest_feed(flags, sizeof flags, &st);
	crypto_generichash_final(&st, out, SPEC_DIGEST_LEN);
	sodium_memzero(&st, sizeof st);
}
