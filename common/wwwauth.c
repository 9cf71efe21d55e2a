/* SPDX-License-Identifier: ISC */
/* Reading WWW-Authenticate challenges: schemes, token68 and auth-params. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wwwauth.h"

#define WWWAUTH_VALUE_MAX 8192 /* one parameter's value */

struct wwwauth_reader {
	const char *p;
	json_t *params; /* of the wanted challenge, once it started */
	bool is_wanted; /* the challenge being read is the wanted one */
};

static bool
wwwauth_is_tchar(int c)
{
	return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static bool
wwwauth_is_token68_char(int c)
{
	return isalnum(c) || (c != '\0' && strchr("-._~+/", c));
}

static void
wwwauth_skip_ows(struct wwwauth_reader *r)
{
	while (*r->p == ' ' || *r->p == '\t')
		r->p++;
}

static size_t
wwwauth_token_len(const char *s)
{
	size_t n = 0;

	while (wwwauth_is_tchar((unsigned char)s[n]))
		n++;
	return n;
}

/*
 * A token68 right after a scheme ("Basic dXNlcg==") is skipped: 1 when
 * one was there, 0 when what follows is no token68.
 */
static int
wwwauth_skip_token68(struct wwwauth_reader *r)
{
	const char *q = r->p;

	while (wwwauth_is_token68_char((unsigned char)*q))
		q++;
	if (q == r->p)
		return 0;
	while (*q == '=')
		q++;
	while (*q == ' ' || *q == '\t')
		q++;
	if (*q != ',' && *q != '\0')
		return 0;
	r->p = q;
	return 1;
}

/* A quoted-string's content into out (NUL-terminated); false if malformed. */
static bool
wwwauth_quoted(struct wwwauth_reader *r, char *out, size_t size)
{
	size_t n = 0;

	r->p++; /* the opening quote */
	for (;;) {
		int c = (unsigned char)*r->p;

		if (c == '\0')
			return false;
		r->p++;
		if (c == '"')
			break;
		if (c == '\\') {
			c = (unsigned char)*r->p;
			if (c == '\0')
				return false;
			r->p++;
		}
		if (n + 1 >= size)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return true;
}

/* name BWS "=" BWS (token / quoted-string); false if malformed. */
static bool
wwwauth_param(struct wwwauth_reader *r, size_t name_len)
{
	char name[128], *value = malloc(WWWAUTH_VALUE_MAX);
	size_t n;
	bool ok = false;

	if (value == NULL || name_len >= sizeof name)
		goto out;
	for (size_t i = 0; i < name_len; i++)
		name[i] = (char)tolower((unsigned char)r->p[i]);
	name[name_len] = '\0';
	r->p += name_len;
	wwwauth_skip_ows(r);
	if (*r->p != '=')
		goto out;
	r->p++;
	wwwauth_skip_ows(r);
	if (*r->p == '"') {
		if (!wwwauth_quoted(r, value, WWWAUTH_VALUE_MAX))
			goto out;
	} else {
		/* A token, leniently: servers send scope=files:read unquoted. */
		n = 0;
		while (r->p[n] > 0x20 && r->p[n] < 0x7f && r->p[n] != ',' &&
		    r->p[n] != '"')
			n++;
		if (n == 0 || n >= WWWAUTH_VALUE_MAX)
			goto out;
		memcpy(value, r->p, n);
		value[n] = '\0';
		r->p += n;
	}
	if (r->is_wanted && json_object_get(r->params, name) == NULL &&
	    json_object_set_new(r->params, name, json_string(value)) < 0)
		goto out;
	ok = true;
out:
	free(value);
	return ok;
}

json_t *
wwwauth_params(const char *header, const char *scheme)
{
	struct wwwauth_reader r = { header, NULL, false };
	bool after_scheme = false;
	size_t n;

	if (header == NULL || scheme == NULL)
		return NULL;
	for (;;) {
		while (*r.p == ',' || *r.p == ' ' || *r.p == '\t')
			r.p++;
		if (*r.p == '\0')
			break;
		if (after_scheme && wwwauth_skip_token68(&r) == 1) {
			after_scheme = false;
			continue;
		}
		after_scheme = false;
		if ((n = wwwauth_token_len(r.p)) == 0)
			break; /* malformed: keep what the wanted one had */
		/* A token not followed by "=" starts a new challenge. */
		{
			const char *q = r.p + n;

			while (*q == ' ' || *q == '\t')
				q++;
			if (*q != '=') {
				if (r.is_wanted)
					return r.params;
				r.is_wanted = n == strlen(scheme) &&
				    strncasecmp(r.p, scheme, n) == 0;
				if (r.is_wanted &&
				    (r.params = json_object()) == NULL)
					return NULL;
				r.p += n;
				after_scheme = true;
				continue;
			}
		}
		if (!wwwauth_param(&r, n))
			break;
	}
	return r.params;
}
