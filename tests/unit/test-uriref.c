/* SPDX-License-Identifier: ISC */
/* Unit tests of common/uriref.c: RFC 3986 5.4, and JSON pointer tokens. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uriref.h"
#include "tap.h"

/* The base URI of the examples of RFC 3986 section 5.4. */
#define RFC_BASE "http://a/b/c/d;p?q"

/* A base, a reference, and the target URI it resolves to. */
struct resolve_case {
	const char *base;
	const char *ref;
	const char *target;
};

/* RFC 3986 section 5.4.1. */
static const struct resolve_case normal[] = {
	{ RFC_BASE, "g:h", "g:h" },
	{ RFC_BASE, "g", "http://a/b/c/g" },
	{ RFC_BASE, "./g", "http://a/b/c/g" },
	{ RFC_BASE, "g/", "http://a/b/c/g/" },
	{ RFC_BASE, "/g", "http://a/g" },
	{ RFC_BASE, "//g", "http://g" },
	{ RFC_BASE, "?y", "http://a/b/c/d;p?y" },
	{ RFC_BASE, "g?y", "http://a/b/c/g?y" },
	{ RFC_BASE, "#s", "http://a/b/c/d;p?q#s" },
	{ RFC_BASE, "g#s", "http://a/b/c/g#s" },
	{ RFC_BASE, "g?y#s", "http://a/b/c/g?y#s" },
	{ RFC_BASE, ";x", "http://a/b/c/;x" },
	{ RFC_BASE, "g;x", "http://a/b/c/g;x" },
	{ RFC_BASE, "g;x?y#s", "http://a/b/c/g;x?y#s" },
	{ RFC_BASE, "", "http://a/b/c/d;p?q" },
	{ RFC_BASE, ".", "http://a/b/c/" },
	{ RFC_BASE, "./", "http://a/b/c/" },
	{ RFC_BASE, "..", "http://a/b/" },
	{ RFC_BASE, "../", "http://a/b/" },
	{ RFC_BASE, "../g", "http://a/b/g" },
	{ RFC_BASE, "../..", "http://a/" },
	{ RFC_BASE, "../../", "http://a/" },
	{ RFC_BASE, "../../g", "http://a/g" },
};

/* RFC 3986 section 5.4.2 (a strict parser for the last). */
static const struct resolve_case abnormal[] = {
	{ RFC_BASE, "../../../g", "http://a/g" },
	{ RFC_BASE, "../../../../g", "http://a/g" },
	{ RFC_BASE, "/./g", "http://a/g" },
	{ RFC_BASE, "/../g", "http://a/g" },
	{ RFC_BASE, "g.", "http://a/b/c/g." },
	{ RFC_BASE, ".g", "http://a/b/c/.g" },
	{ RFC_BASE, "g..", "http://a/b/c/g.." },
	{ RFC_BASE, "..g", "http://a/b/c/..g" },
	{ RFC_BASE, "./../g", "http://a/b/g" },
	{ RFC_BASE, "./g/.", "http://a/b/c/g/" },
	{ RFC_BASE, "g/./h", "http://a/b/c/g/h" },
	{ RFC_BASE, "g/../h", "http://a/b/c/h" },
	{ RFC_BASE, "g;x=1/./y", "http://a/b/c/g;x=1/y" },
	{ RFC_BASE, "g;x=1/../y", "http://a/b/c/y" },
	{ RFC_BASE, "g?y/./x", "http://a/b/c/g?y/./x" },
	{ RFC_BASE, "g?y/../x", "http://a/b/c/g?y/../x" },
	{ RFC_BASE, "g#s/./x", "http://a/b/c/g#s/./x" },
	{ RFC_BASE, "g#s/../x", "http://a/b/c/g#s/../x" },
	{ RFC_BASE, "http:g", "http:g" },
};

/* What JSON Schema's $id and $ref give it: bases without a scheme, URNs,
 * a base's fragment (which never counts). */
static const struct resolve_case schema_cases[] = {
	{ "", "#/$defs/a", "#/$defs/a" },
	{ "", "#", "#" },
	{ "", "", "" },
	{ "", "a.json", "a.json" },
	{ "dir/b.json", "c.json#x", "dir/c.json#x" },
	{ "/dir/b.json", "../c.json", "/c.json" },
	{ "http://x/a/b/c.json", "../d.json", "http://x/a/d.json" },
	{ "http://x/a/b/", "./e/../d.json", "http://x/a/b/d.json" },
	{ "http://x", "d.json", "http://x/d.json" },
	{ "http://x/a#frag", "b", "http://x/b" },
	{ "http://x/a?q", "#f", "http://x/a?q#f" },
	{ "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed", "#/$defs/bar",
	    "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/bar" },
	{ "http://localhost:1234/draft2020-12/tree", "node",
	    "http://localhost:1234/draft2020-12/node" },
	{ "file:///folder/file.json", "#foo", "file:///folder/file.json#foo" },
	{ "http://x/a.json", "HTTPS://Y/b.json", "HTTPS://Y/b.json" },
};

static void
check_resolve(const struct resolve_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *target = NULL;
		int r = uriref_resolve(cases[i].base, cases[i].ref, &target);

		TAP_CHECK(r == 0, "\"%s\" against \"%s\": got %d", cases[i].ref,
		    cases[i].base, r);
		TAP_CHECK(tap_str_eq(target, cases[i].target),
		    "\"%s\" against \"%s\": expected \"%s\", got \"%s\"",
		    cases[i].ref, cases[i].base, cases[i].target,
		    tap_str_show(target));
		free(target);
	}
}

static void
test_normal(void)
{
	check_resolve(normal, TAP_COUNT(normal));
}

static void
test_abnormal(void)
{
	check_resolve(abnormal, TAP_COUNT(abnormal));
}

static void
test_schema_cases(void)
{
	check_resolve(schema_cases, TAP_COUNT(schema_cases));
}

/* An input and what decoding it in place leaves. */
struct decode_case {
	const char *in;
	const char *out;
};

static const struct decode_case percent_cases[] = {
	{ "", "" },
	{ "plain", "plain" },
	{ "a%2Fb", "a/b" },
	{ "%7e%7E", "~~" },
	{ "%25%32%35", "%25" },
	{ "%c3%a9", "\xc3\xa9" },
	{ "%zz%4", "%zz%4" },
	{ "100%", "100%" },
};

static const struct decode_case pointer_cases[] = {
	{ "", "" },
	{ "plain", "plain" },
	{ "a~1b", "a/b" },
	{ "~0~1", "~/" },
	{ "~01", "~1" }, /* RFC 6901: "~1" is not decoded twice */
	{ "~10", "/0" },
	{ "~2~", "~2~" },
	{ "%25", "%25" },
};

static void
check_decode(const struct decode_case *cases, size_t n, void (*fn)(char *))
{
	for (size_t i = 0; i < n; i++) {
		char *s = strdup(cases[i].in);

		TAP_REQUIRE(s != NULL, "strdup");
		fn(s);
		TAP_CHECK(strcmp(s, cases[i].out) == 0,
		    "\"%s\": expected \"%s\", got \"%s\"", cases[i].in,
		    cases[i].out, s);
		free(s);
	}
}

static void
test_percent_decode(void)
{
	check_decode(percent_cases, TAP_COUNT(percent_cases),
	    uriref_percent_decode);
}

static void
test_pointer_unescape(void)
{
	check_decode(pointer_cases, TAP_COUNT(pointer_cases),
	    uriref_pointer_unescape);
}

/* A file:// URI's local path; NULL out: not one. */
static const struct decode_case file_cases[] = {
	{ "file:///home/ada/proj", "/home/ada/proj" },
	{ "FILE:///home/ada/proj", "/home/ada/proj" },
	{ "file://localhost/srv/a%20b", "/srv/a b" },
	{ "file:///x?query#frag", "/x" },
	{ "file:///", "/" },
	{ "file://otherhost/x", NULL },
	{ "file:x", NULL },
	{ "file:///a%00b", NULL },
	{ "https://example.com/x", NULL },
};

static void
test_file_path(void)
{
	for (size_t i = 0; i < TAP_COUNT(file_cases); i++) {
		char *path = uriref_file_path(file_cases[i].in);
		const char *want = file_cases[i].out;

		TAP_CHECK(want == NULL ?
			path == NULL :
			path != NULL && strcmp(path, want) == 0,
		    "\"%s\": expected %s, got %s", file_cases[i].in,
		    want != NULL ? want : "NULL", path != NULL ? path : "NULL");
		free(path);
	}
}

static const struct tap_test tests[] = {
	{ "RFC 3986 5.4.1 normal examples", test_normal },
	{ "RFC 3986 5.4.2 abnormal examples", test_abnormal },
	{ "bases and references that JSON Schema gives", test_schema_cases },
	{ "%XX escapes are decoded", test_percent_decode },
	{ "JSON pointer tokens are unescaped", test_pointer_unescape },
	{ "file:// URIs give local paths, and only those", test_file_path },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
