/* SPDX-License-Identifier: ISC */
/* Unit tests of common/vars.c: the strict pattern, scanning, expansion. */
#include <errno.h>

#include "vars.h"
#include "tap.h"

/* A variable of the test lookup. */
struct var {
	const char *ns;
	const char *name;
	const char *value;
};

static const struct var test_vars[] = {
	{ "env", "A", "a" },
	{ "env", "B", "bb" },
	{ "env", "X", "[x]" },
	{ "env", "a.b", "dotted" },
	{ "env", "A_1", "underscore" },
	{ "env", "a.", "trailing-dot" },
	{ "env", ".", "only-dot" },
	{ "env", "SELF", "$(env.A)" },
	{ "env", "EMPTY", "" },
	{ "secret", "TOKEN", "hunter2" },
	{ "secret", "KEY", "s3cr3t-key" },
};

/* Serves "env" and "secret" from test_vars; counts its calls in *ctx. */
static const char *
lookup(void *ctx, const char *ns, const char *name, bool *ret_unknown_ns)
{
	if (ctx != NULL)
		(*(int *)ctx)++;
	if (strcmp(ns, "env") != 0 && strcmp(ns, "secret") != 0) {
		*ret_unknown_ns = true;
		return NULL;
	}
	for (size_t i = 0; i < TAP_COUNT(test_vars); i++)
		if (strcmp(test_vars[i].ns, ns) == 0 &&
		    strcmp(test_vars[i].name, name) == 0)
			return test_vars[i].value;
	return NULL;
}

/* Expands in into a buffer of the size the sizing pass gives. */
static char *
expand(const char *in, ssize_t *ret_len, char **cause)
{
	ssize_t n = vars_expand(in, lookup, NULL, NULL, 0, cause);
	char *out;

	*ret_len = n;
	if (n < 0)
		return NULL;
	out = malloc(n + 1);
	memset(out, 'Z', n + 1);
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, out, n + 1, cause), n);
	return out;
}

/* An input and its expansion. */
struct expand_case {
	const char *in;
	const char *want;
};

static void
check_expansions(const struct expand_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *cause = NULL, *out;
		ssize_t len;

		out = expand(cases[i].in, &len, &cause);
		TAP_CHECK(tap_str_eq(out, cases[i].want),
		    "\"%s\": expected \"%s\", got \"%s\" (%s)", cases[i].in,
		    cases[i].want, tap_str_show(out), tap_str_show(cause));
		TAP_CHECK(out == NULL || len == (ssize_t)strlen(out),
		    "\"%s\": returned %zd for \"%s\"", cases[i].in, len,
		    tap_str_show(out));
		TAP_CHECK(cause == NULL, "\"%s\": cause \"%s\"", cases[i].in,
		    tap_str_show(cause));
		free(out);
		free(cause);
	}
}

static void
test_pattern(void)
{
	static const struct expand_case cases[] = {
		{ "$(env.X)", "[x]" },
		{ "$(env.a.b)", "dotted" },
		{ "$(env.A_1)", "underscore" },
		{ "$(env.a.)", "trailing-dot" },
		{ "$(env..)", "only-dot" },
		{ "$(env.EMPTY)", "" },
		{ "--token=$(secret.TOKEN)", "--token=hunter2" },
		{ "Bearer $(secret.TOKEN)", "Bearer hunter2" },
		{ "", "" },
		{ "plain text", "plain text" },
	};

	check_expansions(cases, TAP_COUNT(cases));
}

static void
test_literal_leftovers(void)
{
	static const struct expand_case cases[] = {
		{ "$(FOO)", "$(FOO)" },
		{ "$(env.)", "$(env.)" },
		{ "$(Env.X)", "$(Env.X)" },
		{ "$(ENV.X)", "$(ENV.X)" },
		{ "$(env.a-b)", "$(env.a-b)" },
		{ "$(env.X", "$(env.X" },
		{ "$(env.X Y)", "$(env.X Y)" },
		{ "$(env X)", "$(env X)" },
		{ "$(env .X)", "$(env .X)" },
		{ "$( env.X)", "$( env.X)" },
		{ "$(.X)", "$(.X)" },
		{ "$(e1.X)", "$(e1.X)" },
		{ "$(env.caf\xc3\xa9)", "$(env.caf\xc3\xa9)" },
		{ "$()", "$()" },
		{ "$(", "$(" },
		{ "$", "$" },
		{ "x$", "x$" },
		{ "$env.X", "$env.X" },
		{ "${env.X}", "${env.X}" },
		{ "${input:token}", "${input:token}" },
		{ "$ (env.X)", "$ (env.X)" },
		{ "(env.X)", "(env.X)" },
		/* The leftmost match wins; there is no escape. */
		{ "$($(env.X))", "$([x])" },
		{ "$$(env.X)", "$[x]" },
		{ "$(env.X))", "[x])" },
		{ "$(env.$(env.X)", "$(env.[x]" },
		/* A value is not expanded again. */
		{ "$(env.SELF)", "$(env.A)" },
	};

	check_expansions(cases, TAP_COUNT(cases));
}

static void
test_adjacent(void)
{
	static const struct expand_case cases[] = {
		{ "$(env.A)$(env.B)", "abb" },
		{ "$(env.A)$(env.A)$(env.A)", "aaa" },
		{ "x$(env.A)y$(env.B)z", "xaybbz" },
		{ "$(env.A).$(secret.TOKEN)", "a.hunter2" },
		{ "$(env.EMPTY)$(env.EMPTY)", "" },
		{ "$(FOO)$(env.A)$(FOO)", "$(FOO)a$(FOO)" },
	};

	check_expansions(cases, TAP_COUNT(cases));
}

/* Appends "ns|name;" to the memstream in ctx; fails at ns "stop". */
static int
collect(void *ctx, const char *ns, const char *name)
{
	if (strcmp(ns, "stop") == 0)
		return -ECANCELED;
	fprintf(ctx, "%s|%s;", ns, name);
	return 0;
}

/* Scans in; returns the value and what collect saw (a new string). */
static int
scan(const char *in, char **ret_seen)
{
	size_t len;
	FILE *f = open_memstream(ret_seen, &len);
	int r = vars_scan(in, collect, f);

	fclose(f);
	return r;
}

static void
test_scan(void)
{
	char *seen;

	TAP_CHECK_INT(scan("a $(env.A) b $(secret.TOKEN)$(x.y.z) c", &seen), 3);
	TAP_CHECK_STR(seen, "env|A;secret|TOKEN;x|y.z;");
	free(seen);
	TAP_CHECK_INT(scan("$(FOO) $(env.) $(Env.X) $(env.a-b)", &seen), 0);
	TAP_CHECK_STR(seen, "");
	free(seen);
	TAP_CHECK_INT(scan("", &seen), 0);
	free(seen);
	TAP_CHECK_INT(scan("$($(env.X))", &seen), 1);
	TAP_CHECK_STR(seen, "env|X;");
	free(seen);
	/* A negative value stops the scan and is returned. */
	TAP_CHECK_INT(scan("$(env.A)$(stop.B)$(env.C)", &seen), -ECANCELED);
	TAP_CHECK_STR(seen, "env|A;");
	free(seen);
}

/*
 * A name is made of what a secret name is made of (names_secret_span),
 * but not capped at 128: a name too long for a secret stays a reference,
 * whole, so that its lookup fails rather than the text going on as it is.
 */
static void
test_secret_name_chars(void)
{
	char in[160], want[160], *seen, *cause = NULL;

	for (size_t n = 128; n <= 129; n++) {
		memcpy(in, "$(secret.", 9);
		memset(in + 9, 'n', n);
		memcpy(in + 9 + n, ")", 2);
		memcpy(want, "secret|", 7);
		memset(want + 7, 'n', n);
		memcpy(want + 7 + n, ";", 2);
		TAP_CHECK_INT(scan(in, &seen), 1);
		TAP_CHECK(strcmp(seen, want) == 0, "%zu characters: \"%s\"", n,
		    seen);
		free(seen);
		TAP_CHECK_INT(vars_expand(in, lookup, NULL, NULL, 0, &cause),
		    -ENOENT);
		TAP_CHECK(cause != NULL &&
			strstr(cause, "no value for") != NULL,
		    "%zu characters: %s", n, tap_str_show(cause));
		free(cause);
		cause = NULL;
	}
	/* What a secret name may not hold ends a name: no reference. */
	TAP_CHECK_INT(scan("$(secret.a-b) $(secret.caf\xc3\xa9) $(secret.a b) "
			   "$(secret.a/b) $(secret.a:b) $(secret.a=b)",
			  &seen),
	    0);
	free(seen);
	TAP_CHECK_INT(scan("$(secret.a.B_9) $(secret..) $(secret._)", &seen),
	    3);
	TAP_CHECK_STR(seen, "secret|a.B_9;secret|.;secret|_;");
	free(seen);
}

static void
test_has_refs(void)
{
	TAP_CHECK(vars_has_refs("$(env.X)"), "a reference");
	TAP_CHECK(vars_has_refs("a $(FOO) $(secret.T) b"), "one of two");
	TAP_CHECK(!vars_has_refs("$(FOO)"), "no namespace");
	TAP_CHECK(!vars_has_refs("$(env.)"), "no name");
	TAP_CHECK(!vars_has_refs("$(Env.X) $(env.a-b) ${env:X}"), "literal");
	TAP_CHECK(!vars_has_refs(""), "empty");
	TAP_CHECK(!vars_has_refs(NULL), "NULL");
}

/* Checks a failing expansion: its value, cause and a wiped buffer. */
static void
check_failure(const char *in, int want, const char *want_cause)
{
	char out[64], *cause = NULL;
	size_t zeros = 0;

	memset(out, 'Z', sizeof out);
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, out, sizeof out, &cause),
	    want);
	TAP_CHECK_STR(cause, want_cause);
	for (size_t i = 0; i < sizeof out; i++)
		zeros += out[i] == '\0';
	TAP_CHECK(zeros == sizeof out, "\"%s\": out not wiped: \"%.*s\"", in,
	    (int)sizeof out, out);
	free(cause);
	cause = NULL;
	/* The sizing pass fails the same way. */
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, NULL, 0, &cause), want);
	TAP_CHECK_STR(cause, want_cause);
	free(cause);
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, out, sizeof out, NULL),
	    want);
}

static void
test_unknown_namespace(void)
{
	check_failure("$(foo.X)", -EINVAL,
	    "unknown variable namespace \"foo\" in $(foo.X)");
	check_failure("$(env.A)-$(vault.a.b)", -EINVAL,
	    "unknown variable namespace \"vault\" in $(vault.a.b)");
	/* Literal text is no reference, so its namespace is not looked at. */
	check_failure("$(Foo.X)$(foo.X)", -EINVAL,
	    "unknown variable namespace \"foo\" in $(foo.X)");
}

static void
test_missing_value(void)
{
	check_failure("$(secret.MISSING)", -ENOENT,
	    "no value for $(secret.MISSING)");
	/* A value written before the failure is wiped, not in the cause. */
	check_failure("$(secret.TOKEN) $(secret.KEY) $(secret.NOPE)", -ENOENT,
	    "no value for $(secret.NOPE)");
	check_failure("$(env.nope)$(foo.X)", -ENOENT,
	    "no value for $(env.nope)");
}

static void
test_lookup_once_per_reference(void)
{
	int calls = 0;
	char out[32];

	TAP_CHECK_INT(vars_expand("$(env.A)$(FOO)$(env.B)$(env.A)", lookup,
			  &calls, out, sizeof out, NULL),
	    10);
	TAP_CHECK_STR(out, "a$(FOO)bba");
	TAP_CHECK_INT(calls, 3);
	calls = 0;
	TAP_CHECK_INT(vars_expand("$(env.nope)$(env.A)", lookup, &calls, out,
			  sizeof out, NULL),
	    -ENOENT);
	TAP_CHECK_INT(calls, 1);
}

static void
test_two_pass_sizing(void)
{
	const char *in = "--header=Authorization: Bearer $(secret.TOKEN)";
	const char *want = "--header=Authorization: Bearer hunter2";
	char *cause = NULL, *out;
	ssize_t n;

	n = vars_expand(in, lookup, NULL, NULL, 0, &cause);
	TAP_REQUIRE(n >= 0, "sizing failed: %s", tap_str_show(cause));
	TAP_CHECK_INT(n, strlen(want));
	out = malloc(n + 1);
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, out, n + 1, &cause), n);
	TAP_CHECK_STR(out, want);
	TAP_CHECK(cause == NULL, "no cause on success");
	free(out);
}

/* Expands into a buffer of size outlen and checks what is in it. */
static void
check_truncated(const char *in, size_t outlen, ssize_t want_len,
    const char *want)
{
	char buf[64];

	memset(buf, 'Z', sizeof buf);
	TAP_CHECK_INT(vars_expand(in, lookup, NULL, buf, outlen, NULL),
	    want_len);
	if (want == NULL) {
		TAP_CHECK_INT(buf[0], 'Z');
		return;
	}
	TAP_CHECK(strcmp(buf, want) == 0,
	    "\"%s\" in %zu bytes: expected \"%s\", got \"%.*s\"", in, outlen,
	    want, (int)outlen, buf);
	/* Nothing is written past outlen. */
	TAP_CHECK_INT(buf[outlen], 'Z');
}

static void
test_truncation(void)
{
	/* "abc" "[x]" "def": 9 bytes. */
	const char *in = "abc$(env.X)def";

	check_truncated(in, 0, 9, NULL);
	check_truncated(in, 1, 9, "");
	check_truncated(in, 3, 9, "ab");
	check_truncated(in, 4, 9, "abc");
	check_truncated(in, 5, 9, "abc[");
	check_truncated(in, 7, 9, "abc[x]");
	check_truncated(in, 9, 9, "abc[x]de");
	check_truncated(in, 10, 9, "abc[x]def");
	check_truncated(in, 11, 9, "abc[x]def");
	check_truncated("$(env.X)$(env.X)", 5, 6, "[x][");
	check_truncated("", 1, 0, "");
}

static const struct tap_test tests[] = {
	{ "references of the strict pattern expand", test_pattern },
	{ "anything else stays literal; leftmost match; no re-expansion",
	    test_literal_leftovers },
	{ "adjacent references", test_adjacent },
	{ "vars_scan: references in order, a negative value stops", test_scan },
	{ "names hold secret-name characters, any number of them",
	    test_secret_name_chars },
	{ "vars_has_refs", test_has_refs },
	{ "an unknown namespace fails and names the reference",
	    test_unknown_namespace },
	{ "a missing value fails; no value in the cause or the buffer",
	    test_missing_value },
	{ "one lookup per reference, none after a failure",
	    test_lookup_once_per_reference },
	{ "two passes: size with NULL, 0, then expand", test_two_pass_sizing },
	{ "truncation is like snprintf", test_truncation },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
