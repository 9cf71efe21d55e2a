/* SPDX-License-Identifier: ISC */
/* Fuzzes URL parsing (common/url.c): the canonical form re-parses to itself. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "url.h"

/* The fields a parse gave, as the canonical form keeps them. */
static void
fuzz_url_check_fields(const struct url *u)
{
	FUZZ_CHECK(strcmp(u->scheme, "http") == 0 ||
	    strcmp(u->scheme, "https") == 0);
	FUZZ_CHECK(u->host != NULL && u->host[0] != '\0');
	for (const char *p = u->host; *p != '\0'; p++)
		FUZZ_CHECK(!isupper((unsigned char)*p) && *p != '%' &&
		    *p != '@' && *p != '/');
	FUZZ_CHECK(u->is_ipv6_literal || u->host[strlen(u->host) - 1] != '.');
	FUZZ_CHECK(u->port != 0);
	FUZZ_CHECK(u->path != NULL && u->path[0] == '/');
	FUZZ_CHECK(u->query == NULL || u->query[0] != '\0');
	FUZZ_CHECK(strpbrk(u->path, "?# ") == NULL);
	FUZZ_CHECK(u->query == NULL || strpbrk(u->query, "# ") == NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct url u, again;
	char *text, *cause = NULL, *canonical, *recanonical, *origin;
	int r;

	if ((text = strndup((const char *)data, size)) == NULL)
		return 0;
	r = url_parse(text, &u, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK((r == 0) == (cause == NULL));
	free(cause);
	free(text);
	if (r < 0)
		return 0;
	fuzz_url_check_fields(&u);
	canonical = url_canonical(&u);
	origin = url_origin(&u);
	FUZZ_CHECK(canonical != NULL && origin != NULL);
	/* The origin starts the canonical form, and a path follows it. */
	FUZZ_CHECK(strncmp(canonical, origin, strlen(origin)) == 0);
	FUZZ_CHECK(canonical[strlen(origin)] == '/');
	/* The canonical form parses, to the same URL, without the extras. */
	FUZZ_CHECK(url_parse(canonical, &again, NULL) == 0);
	FUZZ_CHECK(!again.has_userinfo && !again.has_fragment);
	FUZZ_CHECK(strcmp(again.scheme, u.scheme) == 0);
	FUZZ_CHECK(strcmp(again.host, u.host) == 0);
	FUZZ_CHECK(again.is_ipv6_literal == u.is_ipv6_literal);
	FUZZ_CHECK(again.port == u.port);
	FUZZ_CHECK(strcmp(again.path, u.path) == 0);
	FUZZ_CHECK((again.query == NULL) == (u.query == NULL));
	FUZZ_CHECK(u.query == NULL || strcmp(again.query, u.query) == 0);
	recanonical = url_canonical(&again);
	FUZZ_CHECK(strcmp(recanonical, canonical) == 0);
	free(recanonical);
	free(canonical);
	free(origin);
	url_free(&again);
	url_free(&u);
	url_free(&u);
	return 0;
}
