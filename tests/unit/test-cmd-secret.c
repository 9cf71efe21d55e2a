/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/cmd-secret.c: mcpd/secret-set wipes what it parsed. */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd.h"
#include "tap.h"

#define VALUE "hunter2-value"

/* What the handler answered: a result, or an error code and message. */
static struct {
	json_t *result;
	int code;
	char *message;
} answer;

/* The store mcpd_secrets() gives, or NULL for one that cannot be opened. */
static struct secrets *vault;

void
control_reply(struct request *req, json_t *result)
{
	(void)req;
	answer.result = result;
}

/* Records a failure's code and message. */
static void
test_fail(int code, json_t *data, const char *fmt, va_list ap)
{
	json_decref(data);
	answer.code = code;
	if (vasprintf(&answer.message, fmt, ap) < 0)
		answer.message = NULL;
}

void
control_fail(struct request *req, enum errors_kind kind, json_t *data,
    const char *fmt, ...)
{
	va_list ap;

	(void)req;
	va_start(ap, fmt);
	test_fail(errors_kind_code(kind), data, fmt, ap);
	va_end(ap);
}

void
control_fail_code(struct request *req, int code, json_t *data, const char *fmt,
    ...)
{
	va_list ap;

	(void)req;
	va_start(ap, fmt);
	test_fail(code, data, fmt, ap);
	va_end(ap);
}

const char *
cmd_string(json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/* No saved server here: server-enable.c (and the store) stay out of this test. */
json_t *
enable_rows_using(const char *secret)
{
	(void)secret;
	return json_array();
}

struct secrets *
mcpd_secrets(char **cause)
{
	if (vault == NULL && cause != NULL)
		*cause = strdup("no store here");
	return vault;
}

static void
answer_clear(void)
{
	json_decref(answer.result);
	free(answer.message);
	memset(&answer, 0, sizeof answer);
}

static bool
is_zero(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\0')
			return false;
	return true;
}

/*
 * Runs mcpd/secret-set with name and a value of len bytes (VALUE then
 * 'v's); checks that the request's value string is zeroed afterwards,
 * whatever the outcome.
 */
static void
secret_set(const char *name, size_t len)
{
	char *value = malloc(len + 1);
	json_t *params, *v;

	if (value == NULL)
		exit(1);
	memset(value, 'v', len);
	memcpy(value, VALUE, len < strlen(VALUE) ? len : strlen(VALUE));
	value[len] = '\0';
	/* Parsed, as control.c parses a request. */
	params = json_pack("{s:s, s:s}", "name", name, "value", value);
	v = json_incref(json_object_get(params, "value"));
	answer_clear();
	cmd_secret_set_entry.exec((struct request *)&answer, params);
	TAP_CHECK(json_string_length(v) == len &&
		is_zero(json_string_value(v), len),
	    "the parsed value of %s is wiped: \"%.20s\"", name,
	    json_string_value(v));
	json_decref(v);
	json_decref(params);
	free(value);
}

static void
test_set_wipes(void)
{
	char dir[] = "/tmp/mcpd-test-cmd-secret.XXXXXX", store[64], key[64];
	char *cause = NULL, cmd[64];

	TAP_REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(store, sizeof store, "%s/secrets.enc", dir);
	snprintf(key, sizeof key, "%s/secrets.key", dir);
	TAP_REQUIRE(secrets_open(store, key, &vault, &cause) == 0, "open: %s",
	    tap_str_show(cause));

	secret_set("tok", strlen(VALUE));
	TAP_CHECK(answer.result != NULL, "set: %s",
	    tap_str_show(answer.message));
	TAP_CHECK_STR(secrets_get(vault, "tok"), VALUE);

	secret_set("bad name", strlen(VALUE));
	TAP_CHECK_INT(answer.code, JSONRPC_INVALID_PARAMS);
	TAP_CHECK(secrets_get(vault, "bad") == NULL, "nothing stored");

	/* Refused by the store itself: past 64 KiB. */
	secret_set("big", 65537);
	TAP_CHECK_INT(answer.code, JSONRPC_INVALID_PARAMS);
	TAP_CHECK(secrets_get(vault, "big") == NULL, "nothing stored");

	secrets_free(vault);
	vault = NULL;
	secret_set("tok", strlen(VALUE));
	TAP_CHECK_INT(answer.code, errors_kind_code(ERRORS_STORAGE));
	answer_clear();

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# cannot remove %s\n", dir);
}

static const struct tap_test tests[] = {
	{ "mcpd/secret-set wipes the value it parsed, whatever the outcome",
	    test_set_wipes },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
