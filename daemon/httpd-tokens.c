/* SPDX-License-Identifier: ISC */
/* Bearer tokens of the HTTP front: one per agent and per agent profile, kept 0600 in the state dir. */
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

#define TOKENS_FILE	    "http-tokens.json"
#define TOKENS_PROFILE_FILE "http-profile-tokens.json"
#define TOKENS_BYTES	    32 /* random bytes of a token, shown as hex */
#define TOKENS_ID_BYTES	    6 /* of a token's digest: its id in the audit log */

static char *tokens_path;
static json_t *tokens; /* agent -> token */
/*
 * A file of its own, so that an older mcpd still reads the first:
 * "agent/profile" -> {agent, profile, token}.
 */
static char *tokens_profile_path;
static json_t *tokens_profile;

/* Reads the tokens bound to profiles: 0, or -EINVAL with *cause. */
static int
tokens_profile_open(const char *state_dir, char **cause)
{
	json_error_t jerr;
	const char *key;
	json_t *v;

	xasprintf(&tokens_profile_path, "%s/%s", state_dir,
	    TOKENS_PROFILE_FILE);
	if ((tokens_profile = json_load_file(tokens_profile_path, 0, &jerr)) ==
	    NULL) {
		tokens_profile = json_object();
		if (access(tokens_profile_path, F_OK) == 0)
			return errors_cause(cause, -EINVAL,
			    "%s is not JSON (%s); remove it to make new tokens (mcpctl token --profile)",
			    tokens_profile_path, jerr.text);
		return 0;
	}
	json_object_foreach(tokens_profile, key, v)
		if (json_unpack(v, "{s:s, s:s, s:s}", "agent", &key, "profile",
			&key, "token", &key) < 0 ||
		    json_string_length(json_object_get(v, "token")) !=
			2 * TOKENS_BYTES)
			return errors_cause(cause, -EINVAL,
			    "%s: an entry is not one mcpd made; remove the file to make new tokens",
			    tokens_profile_path);
	return 0;
}

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
		return tokens_profile_open(state_dir, cause);
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
	return tokens_profile_open(state_dir, cause);
}

void
tokens_close(void)
{
	json_decref(tokens);
	tokens = NULL;
	free(tokens_path);
	tokens_path = NULL;
	json_decref(tokens_profile);
	tokens_profile = NULL;
	free(tokens_profile_path);
	tokens_profile_path = NULL;
}

/* Writes the file of the tokens of table (tokens or tokens_profile). */
static int
tokens_save(const json_t *table, char **cause)
{
	char *text = json_dumps(table, JSON_INDENT(2) | JSON_SORT_KEYS);
	int r;

	xnonnull(text);
	r = fileio_write_atomic(table == tokens ? tokens_path :
						  tokens_profile_path,
	    text, strlen(text), 0600, cause);
	sodium_memzero(text, strlen(text));
	free(text);
	return r;
}

const char *
tokens_agent_of(const char *token, const char **ret_profile)
{
	const char *agent, *key;
	json_t *v;
	size_t len = token != NULL ? strlen(token) : 0;

	*ret_profile = NULL;
	if (len != 2 * TOKENS_BYTES || tokens == NULL)
		return NULL;
	/* Compared in constant time: a token is a password. */
	json_object_foreach(tokens, agent, v)
		if (sodium_memcmp(json_string_value(v), token, len) == 0)
			return agent;
	json_object_foreach(tokens_profile, key, v)
		if (sodium_memcmp(json_string_value(json_object_get(v,
				      "token")),
			token, len) == 0) {
			*ret_profile = json_string_value(json_object_get(v,
			    "profile"));
			return json_string_value(json_object_get(v, "agent"));
		}
	return NULL;
}

/* The table and key of agent's token (bound to profile, if not NULL). */
static json_t *
tokens_table(const char *agent, const char *profile, char **ret_key)
{
	if (profile == NULL) {
		*ret_key = xstrdup(agent);
		return tokens;
	}
	xasprintf(ret_key, "%s/%s", agent, profile);
	return tokens_profile;
}

/* The token of an entry of table (a string, or {token}). */
static const char *
tokens_value(const json_t *table, const char *key)
{
	const json_t *v = json_object_get(table, key);

	return json_is_string(v) ?
	    json_string_value(v) :
	    json_string_value(json_object_get(v, "token"));
}

const char *
tokens_id(const char *agent, const char *profile)
{
	static char id[4 + 2 * TOKENS_ID_BYTES + 1];
	unsigned char digest[TOKENS_ID_BYTES];
	char *key;
	json_t *table = tokens_table(agent, profile, &key);
	const char *token = tokens_value(table, key);

	free(key);
	if (token == NULL)
		return "none";
	crypto_generichash(digest, sizeof digest, (const unsigned char *)token,
	    strlen(token), NULL, 0);
	memcpy(id, "tok-", 4);
	sodium_bin2hex(id + 4, sizeof id - 4, digest, sizeof digest);
	return id;
}

int
tokens_get(const char *agent, const char *profile, const char **ret,
    char **cause)
{
	unsigned char raw[TOKENS_BYTES];
	char hex[2 * TOKENS_BYTES + 1], *key;
	json_t *table = tokens_table(agent, profile, &key);
	int r = 0;

	if ((*ret = tokens_value(table, key)) != NULL)
		goto out;
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(hex, sizeof hex, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
	json_object_set_new(table, key,
	    profile == NULL ? json_string(hex) :
			      json_pack("{s:s, s:s, s:s}", "agent", agent,
				  "profile", profile, "token", hex));
	sodium_memzero(hex, sizeof hex);
	if ((r = tokens_save(table, cause)) < 0) {
		json_object_del(table, key);
		goto out;
	}
	*ret = tokens_value(table, key);
	r = 1;
out:
	free(key);
	return r;
}

int
tokens_revoke(const char *agent, const char *profile, bool *ret_revoked,
    char **cause)
{
	char *key;
	json_t *table = tokens_table(agent, profile, &key);
	json_t *old = json_incref(json_object_get(table, key));
	int r = 0;

	*ret_revoked = old != NULL;
	if (old != NULL) {
		json_object_del(table, key);
		if ((r = tokens_save(table, cause)) < 0)
			json_object_set(table, key, old);
	}
	json_decref(old);
	free(key);
	return r;
}

bool
tokens_has_profile(const char *agent, const char *profile)
{
	char *key;
	bool yes;

	xasprintf(&key, "%s/%s", agent, profile);
	yes = json_object_get(tokens_profile, key) != NULL;
	free(key);
	return yes;
}
