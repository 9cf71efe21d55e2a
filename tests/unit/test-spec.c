/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of daemon/server-spec.c: the digest of a spec is the hash of the
 * bytes it always hashed, and computing it leaves no unwiped copy of a
 * value (a resolved secret) in memory given back; a copy is a copy, never
 * a second expansion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "malloc-spy.h"
#include "mcpd-stubs.h"
#include "tap.h"

#define NEEDLE "s3cr3t-needle"

/* The bytes spec_digest has always hashed for the spec of test_known. */
static const char known_bytes[] = "srv\0--flag\0\0"
				  "TOKEN=abc\0\0"
				  "\0"
				  "/a:/b\0\0"
				  "/tmp\0\0stdio\0img:1\0\0\0"
				  "{\"A\": \"1\", \"B\": \"2\"}"
				  "\0{\"client_id\": \"x\"}"
				  "\0"
				  "10";

static void
test_known(void)
{
	char *argv[] = { "srv", "--flag", NULL },
	     *env[] = { "TOKEN=abc", NULL }, *volumes[] = { "/a:/b", NULL };
	struct server_spec spec = { .argv = argv,
		.env = env,
		.volumes = volumes,
		.cwd = "/tmp",
		.transport = "stdio",
		.image = "img:1" };
	unsigned char got[SPEC_DIGEST_LEN], want[SPEC_DIGEST_LEN];

	spec.remote.headers = json_pack("{s:s, s:s}", "B", "2", "A", "1");
	spec.remote.oauth = json_pack("{s:s}", "client_id", "x");
	spec.remote.is_sse = true;
	TAP_REQUIRE(sodium_init() >= 0, "sodium_init");
	spec_digest(&spec, got);
	crypto_generichash(want, sizeof want,
	    (const unsigned char *)known_bytes, sizeof known_bytes - 1, NULL,
	    0);
	TAP_CHECK(memcmp(got, want, sizeof want) == 0,
	    "the digest of a spec with headers and oauth changed");
	json_decref(spec.remote.headers);
	json_decref(spec.remote.oauth);

	/* The common spec: a command, nothing remote. */
	memset(&spec, 0, sizeof spec);
	spec.argv = argv;
	spec_digest(&spec, got);
	crypto_generichash(want, sizeof want,
	    (const unsigned char *)"srv\0--flag\0\0\0\0\0\0\0\0\0\0\0\0"
				   "00",
	    24, NULL, 0);
	TAP_CHECK(memcmp(got, want, sizeof want) == 0,
	    "the digest of a plain command changed");
}

/* A heap string of about len bytes that holds NEEDLE every 64 bytes. */
static char *
secret_text(const char *prefix, size_t len)
{
	char *s = malloc(strlen(prefix) + len + sizeof NEEDLE);
	size_t n = strlen(prefix);

	if (s == NULL)
		exit(99);
	memcpy(s, prefix, n);
	while (n < strlen(prefix) + len) {
		s[n] = (n % 64 == 0) ? '\0' : 'v';
		if (n % 64 == 0) {
			memcpy(s + n, NEEDLE, strlen(NEEDLE));
			n += strlen(NEEDLE);
			continue;
		}
		n++;
	}
	s[n] = '\0';
	return s;
}

/*
 * Values large enough that a growing buffer (open_memstream's, or
 * json_dumps's) would have moved several times: none of what is freed
 * while the digest is computed may still hold the secret.
 */
static void
test_no_unwiped_copy(void)
{
	struct server_spec spec = { 0 };
	unsigned char digest[SPEC_DIGEST_LEN];
	char *probe, *bearer, name[16];

	if (!MALLOC_SPY) {
		printf("# skipped: built with AddressSanitizer, whose malloc "
		       "the spy cannot stand in front of\n");
		return;
	}
	/* The spy sees a block that holds the needle when it is freed. */
	probe = secret_text("", 200);
	malloc_spy_needle = NEEDLE;
	free(probe);
	malloc_spy_needle = NULL;
	TAP_REQUIRE(malloc_spy_found == 1, "the spy missed a freed secret");
	malloc_spy_found = 0;

	spec.env = calloc(9, sizeof *spec.env);
	spec.argv = calloc(2, sizeof *spec.argv);
	TAP_REQUIRE(spec.env != NULL && spec.argv != NULL, "calloc");
	spec.argv[0] = strdup("srv");
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof name, "K%d=", i);
		spec.env[i] = secret_text(name, 8192);
	}
	bearer = secret_text("Bearer ", 20000);
	spec.remote.headers = json_pack("{s:s}", "Authorization", bearer);
	free(bearer); /* before the spy looks */

	malloc_spy_needle = NEEDLE;
	spec_digest(&spec, digest);
	malloc_spy_needle = NULL;
	TAP_CHECK(malloc_spy_found == 0,
	    "%zu blocks freed while the digest was computed held the secret",
	    malloc_spy_found);
	malloc_spy_found = 0;
	spec_clear(&spec);
}

/* A resolved value that holds "$(" text is copied as it is. */
static void
test_copy_is_not_an_expansion(void)
{
	char *env[] = { "A=$(secret.missing)", "B=$(env.HOME)", NULL },
	     *argv[] = { "srv", "$(env.HOME)", NULL };
	struct server_spec src = { .argv = argv, .env = env }, dst;

	src.remote.headers = json_pack("{s:s}", "X", "$(secret.missing)");
	spec_copy(&dst, &src);
	TAP_CHECK_STR(dst.env[0], "A=$(secret.missing)");
	TAP_CHECK_STR(dst.env[1], "B=$(env.HOME)");
	TAP_CHECK(dst.env[2] == NULL, "two variables");
	TAP_CHECK_STR(dst.argv[1], "$(env.HOME)");
	TAP_CHECK(dst.args == NULL && dst.volumes == NULL,
	    "what was not there stays NULL");
	TAP_CHECK_STR(json_string_value(json_object_get(dst.remote.headers,
			  "X")),
	    "$(secret.missing)");
	json_decref(src.remote.headers);
	spec_clear(&dst);
}

static const struct tap_test tests[] = {
	{ "the digest hashes the bytes it always did", test_known },
	{ "the digest leaves no unwiped copy of a value behind",
	    test_no_unwiped_copy },
	{ "a copy keeps \"$(\" text as it is", test_copy_is_not_an_expansion },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
