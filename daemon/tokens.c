/* SPDX-License-Identifier: ISC */
/* Bearer tokens of the HTTP front: one per agent, kept 0600 in the state dir. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "errors.h"
#include "fileio.h"
#include "log.h"
#include "mcpd.h"

#define TOKENS_FILE	"http-tokens.json"
#define TOKENS_BYTES	32 /* random bytes of a token, shown as hex */
#define TOKENS_ID_BYTES 6  /* of a token's digest: its id in the audit log */

static char *tokens_path;
static json_t *tokens; /* agent -> token */

int
tokens_open(const char *state_dir, char **cause)
{
	json_error_t jerr;
	const char *agent;
	json_t *v;

	xasprintf(&tokens_path, "%s/%s", state_dir, TOKENS_FILE);
	if ((tokens = json_load_file(tokens_path, 0, &jerr)) == NULL) {
		if (access(tokens_path, F_OK) == 0)
			return errors_cause(cause, -EINVAL,
			    "%s is not JSON (%s); remove it to make new tokens (mcpctl token)",
			    tokens_path, jerr.text);
		tokens = json_object();
		return 0;
	}
	if (!json_is_object(tokens))
		return errors_cause(cause, -EINVAL,
		    "%s should hold an object of agent: token; remove it to make new tokens",
		    tokens_path);
	json_object_foreach(tokens, agent, v)
		if (!json_is_string(v) ||
		    json_string_length(v) != 2 * TOKENS_BYTES)
			return errors_cause(cause, -EINVAL,
			    "%s: the token of agent %s is not one mcpd made; remove the file to make new tokens",
			    tokens_path, agent);
	return 0;
}

void
tokens_close(void)
{
	json_decref(tokens);
	tokens = NULL;
	free(tokens_path);
	tokens_path = NULL;
}

static int
tokens_save(char **cause)
{
	char *text = json_dumps(tokens, JSON_INDENT(2) | JSON_SORT_KEYS);
	int r;

	xnonnull(text);
	r = fileio_write_atomic(tokens_path, text, strlen(text), 0600, cause);
	sodium_memzero(text, strlen(text));
	free(text);
	return r;
}

const char *
tokens_agent_of(const char *token)
{
	const char *agent;
	json_t *v;
	size_t len = token != NULL ? strlen(token) : 0;

	if (len != 2 * TOKENS_BYTES || tokens == NULL)
		return NULL;
	/* Compared in constant time: a token is a password. */
	json_object_foreach(tokens, agent, v)
		if (sodium_memcmp(json_string_value(v), token, len) == 0)
			return agent;
	return NULL;
}

const char *
tokens_id(const char *agent)
{
	static char id[4 + 2 * TOKENS_ID_BYTES + 1];
	unsigned char digest[TOKENS_ID_BYTES];
	const char *token = json_string_value(json_object_get(tokens, agent));

	if (token == NULL)
		return "none";
	crypto_generichash(digest, sizeof digest, (const unsigned char *)token,
	    strlen(token), NULL, 0);
	memcpy(id, "tok-", 4);
	sodium_bin2hex(id + 4, sizeof id - 4, digest, sizeof digest);
	return id;
}

int
tokens_get(const char *agent, const char **ret, char **cause)
{
	unsigned char raw[TOKENS_BYTES];
	char hex[2 * TOKENS_BYTES + 1];
	int r;

	if ((*ret = json_string_value(json_object_get(tokens, agent))) != NULL)
		return 0;
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
	json_object_set_new(tokens, agent, json_string(hex));
	sodium_memzero(hex, sizeof hex);
	if ((r = tokens_save(cause)) < 0) {
		json_object_del(tokens, agent);
		return r;
	}
	*ret = json_string_value(json_object_get(tokens, agent));
	return 1;
}

int
tokens_revoke(const char *agent, bool *ret_revoked, char **cause)
{
	json_t *old = json_incref(json_object_get(tokens, agent));
	int r = 0;

	*ret_revoked = old != NULL;
	if (old != NULL) {
		json_object_del(tokens, agent);
		if ((r = tokens_save(cause)) < 0)
			json_object_set(tokens, agent, old);
	}
	json_decref(old);
	return r;
}
