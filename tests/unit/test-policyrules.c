/* SPDX-License-Identifier: ISC */
/* Unit tests of common/policyrules.c: checking rules, first match, the spec's defaults of annotations, and the texts. */
#include <stdlib.h>
#include <string.h>

#include "policyrules.h"
#include "tap.h"

/* The rules of text (a JSON array), compiled with def. */
static struct policyrules *
test_rules(const char *text, enum policyrules_effect def)
{
	json_t *rules = json_loads(text, 0, NULL);
	struct policyrules *pr = NULL;
	char *cause = NULL;

	if (policyrules_new(rules, def, &pr, &cause) < 0)
		TAP_CHECK(false, "the rules compile");
	free(cause);
	json_decref(rules);
	return pr;
}

/* The check's cause for the rule text, or "" when it is good. */
static char *
test_check(const char *text)
{
	json_t *rule = json_loads(text, 0, NULL);
	char *cause = NULL;

	if (policyrules_check(rule, &cause) == 0)
		cause = strdup("");
	json_decref(rule);
	return cause;
}

static void
test_first_match_wins(void)
{
	struct policyrules *pr = test_rules(
	    "[{\"effect\":\"allow\",\"tool\":\"fs__read*\"},"
	    "{\"effect\":\"deny\",\"server\":\"fs\"},"
	    "{\"effect\":\"deny\",\"tool\":\"*__rm\",\"profile\":\"p\"}]",
	    POLICYRULES_ALLOW);
	unsigned bits = policyrules_bits(NULL);

	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "fs__read_file",
			  bits),
	    1);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "fs__write_file",
			  bits),
	    2);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "gh", "gh__rm", bits),
	    0);
	TAP_CHECK_INT((int)policyrules_match(pr, "p", "gh", "gh__rm", bits), 3);
	TAP_CHECK_INT((int)policyrules_match(pr, "q", "gh", "gh__rm", bits), 0);
	TAP_CHECK_INT((int)policyrules_effect_of(pr, 2), POLICYRULES_DENY);
	TAP_CHECK_INT((int)policyrules_effect_of(pr, 0), POLICYRULES_ALLOW);
	policyrules_free(pr);
}

static void
test_annotations_take_the_spec_defaults(void)
{
	struct policyrules *pr = test_rules(
	    "[{\"effect\":\"deny\",\"annotations\":{\"destructiveHint\":true,"
	    "\"readOnlyHint\":false}}]",
	    POLICYRULES_ALLOW);
	json_t *ro = json_pack("{s:b}", "readOnlyHint", 1);
	json_t *safe = json_pack("{s:b}", "destructiveHint", 0);
	json_t *odd = json_pack("{s:s}", "destructiveHint", "no");

	/* Nothing said: readOnly false, destructive true. */
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "s", "s__t",
			  policyrules_bits(NULL)),
	    1);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "s", "s__t",
			  policyrules_bits(ro)),
	    0);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "s", "s__t",
			  policyrules_bits(safe)),
	    0);
	/* Not a boolean: the default. */
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "s", "s__t",
			  policyrules_bits(odd)),
	    1);
	json_decref(ro);
	json_decref(safe);
	json_decref(odd);
	policyrules_free(pr);
}

static void
test_globs_with_a_literal_prefix(void)
{
	struct policyrules *pr =
	    test_rules("[{\"effect\":\"deny\",\"tool\":\"fs__[rw]*\"},"
		       "{\"effect\":\"deny\",\"tool\":\"\\\\*x\"}]",
		POLICYRULES_ALLOW);

	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "fs__write", 0),
	    1);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "fs__list", 0), 0);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "*x", 0), 2);
	TAP_CHECK_INT((int)policyrules_match(pr, NULL, "fs", "ax", 0), 0);
	policyrules_free(pr);
}

static void
test_bad_rules(void)
{
	char *cause;

	cause = test_check("{\"effect\":\"maybe\"}");
	TAP_CHECK_STR(cause, "a rule's effect is allow, deny or ask");
	free(cause);
	cause = test_check(
	    "{\"effect\":\"deny\",\"annotations\":{\"sneaky\":true}}");
	TAP_CHECK_STR(cause,
	    "unknown annotation sneaky: readOnlyHint, destructiveHint, idempotentHint or openWorldHint");
	free(cause);
	cause = test_check("{\"effect\":\"deny\",\"tool\":\"a[\"}");
	TAP_CHECK_STR(cause,
	    "bad glob 'a[' at column 2: '[' has no closing ']'");
	free(cause);
	cause = test_check("{\"effect\":\"deny\",\"color\":\"red\"}");
	TAP_CHECK_STR(cause,
	    "a rule has no member color: effect, server, tool, annotations and profile");
	free(cause);
	cause = test_check("{\"effect\":\"deny\",\"server\":\"a b\"}");
	TAP_CHECK_STR(cause,
	    "a rule's server must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
	free(cause);
}

static void
test_texts(void)
{
	json_t *rule = json_loads(
	    "{\"effect\":\"deny\",\"server\":\"fs\",\"tool\":\"fs__w*\","
	    "\"annotations\":{\"openWorldHint\":false},\"profile\":\"p\"}",
	    0, NULL);
	json_t *ann = json_pack("{s:b}", "openWorldHint", 0);
	char *text = policyrules_text(rule);
	char *why = policyrules_why(rule, "fs", "fs__write", ann);

	TAP_CHECK_STR(text,
	    "deny --server fs --tool 'fs__w*' --annotation openWorldHint=false --profile p");
	TAP_CHECK_STR(why,
	    "the session's profile is p, its server is fs, fs__write matches 'fs__w*', fs__write is closed-world (openWorldHint false)");
	free(text);
	free(why);
	json_decref(rule);
	json_decref(ann);
}

static const struct tap_test tests[] = {
	{ "the first rule that matches decides", test_first_match_wins },
	{ "a missing annotation takes the spec's default",
	    test_annotations_take_the_spec_defaults },
	{ "globs match whole names, escapes included",
	    test_globs_with_a_literal_prefix },
	{ "a bad rule says what is wrong", test_bad_rules },
	{ "a rule's text and why it matches", test_texts },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
