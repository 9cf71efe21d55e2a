/* SPDX-License-Identifier: ISC */
/*
 * A server's elicitation/create, answered for mcpctl call: a form asked
 * field by field on the terminal, or filled with its defaults (SEP-1034),
 * and checked against the requested schema; a URL shown, and accepted
 * only when the person says so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonschema.h"
#include "mcpctl.h"

#define ELICIT_PASSES 5 /* a form that does not match is asked again */

enum elicit_action {
	ELICIT_ACCEPT,
	ELICIT_DECLINE,
	ELICIT_CANCEL,
};

/* C0, DEL and C1 characters, which a terminal may obey, become spaces. */
void
elicit_put(const char *s, bool has_lines)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fputc(' ', stderr);
			p++;
		} else if ((*p < 0x20 && !(has_lines && *p == '\n')) ||
		    *p == 0x7f) {
			fputc(' ', stderr);
		} else {
			fputc(*p, stderr);
		}
	}
}

char *
elicit_read(const struct elicit *e)
{
	char *line = NULL;
	size_t size = 0;
	ssize_t n;

	fflush(stderr);
	if ((n = getline(&line, &size, e->in)) < 0) {
		free(line);
		fputc('\n', stderr);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

static json_t *
elicit_result(enum elicit_action action, json_t *content)
{
	static const char *const names[] = { "accept", "decline", "cancel" };
	json_t *r = json_pack("{s:s}", "action", names[action]);

	if (content != NULL)
		json_object_set_new(r, "content", content);
	return r;
}

/*
 * Asks prompt until the answer is yes, no (decline) or cancel; an empty
 * one is dflt, the end of input is cancel.
 */
static enum elicit_action
elicit_ask_action(const struct elicit *e, const char *prompt,
    enum elicit_action dflt)
{
	char *line;
	int action;

	for (;;) {
		fputs(prompt, stderr);
		if ((line = elicit_read(e)) == NULL)
			return ELICIT_CANCEL;
		action = -1;
		if (line[0] == '\0')
			action = dflt;
		else if (strcasecmp(line, "y") == 0 ||
		    strcasecmp(line, "yes") == 0)
			action = ELICIT_ACCEPT;
		else if (strcasecmp(line, "n") == 0 ||
		    strcasecmp(line, "no") == 0)
			action = ELICIT_DECLINE;
		else if (strcasecmp(line, "c") == 0 ||
		    strcasecmp(line, "cancel") == 0)
			action = ELICIT_CANCEL;
		free(line);
		if (action >= 0)
			return (enum elicit_action)action;
		fputs("  answer y, n or c\n", stderr);
	}
}

/* Whether the validator's cause is about the schema, not the value. */
static bool
elicit_is_unchecked(int r, const char *cause)
{
	return r != -EINVAL ||
	    (cause != NULL && strstr(cause, "invalid schema") != NULL);
}

int
elicit_check(const json_t *schema, const json_t *value, char **ret_why)
{
	char *cause = NULL;
	int r = jsonschema_validate(schema, value, &cause);

	if (r == 0 || elicit_is_unchecked(r, cause)) {
		free(cause);
		return 0;
	}
	*ret_why = cause;
	return -EINVAL;
}

/* Whether the schema's required names key. */
static bool
elicit_is_required(const json_t *schema, const char *key)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(schema, "required"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return true;
	return false;
}

/* Each field once, in the schema's order: the content, or NULL at EOF. */
static json_t *
elicit_fields(const struct elicit *e, const json_t *schema)
{
	const json_t *props = json_object_get(schema, "properties"), *prop;
	json_t *content = json_object();
	const char *key;
	int r = 0;

	json_object_foreach((json_t *)(uintptr_t)props, key, prop)
		if ((r = elicitfield_ask(e, key, prop,
			 elicit_is_required(schema, key), content)) < 0)
			break;
	if (r < 0) {
		json_decref(content);
		return NULL;
	}
	return content;
}

/* Says on stderr who asks what; the message as the server wrote it. */
static void
elicit_put_asks(const struct elicit *e, const char *what, const char *message)
{
	elicit_put(e->server, false);
	fputs(what, stderr);
	if (message != NULL) {
		fputs(": ", stderr);
		elicit_put(message, true);
	}
	fputc('\n', stderr);
}

/* --elicit-defaults: the schema's defaults, when they fill the form. */
static json_t *
elicit_defaults(const struct elicit *e, const json_t *schema,
    const char *message)
{
	const json_t *props = json_object_get(schema, "properties"), *prop;
	const json_t *dflt;
	json_t *content = json_object();
	const char *key;
	char *why = NULL, *text;

	json_object_foreach((json_t *)(uintptr_t)props, key, prop)
		if ((dflt = json_object_get(prop, "default")) != NULL)
			json_object_set_new(content, key, json_deep_copy(dflt));
	if (schema != NULL && elicit_check(schema, content, &why) < 0) {
		elicit_put_asks(e, " asks", message);
		fputs(
		    "  declined: its defaults do not fill the form (--elicit-defaults): ",
		    stderr);
		elicit_put(strncmp(why, "$: ", 3) == 0 ? why + 3 : why, false);
		fputc('\n', stderr);
		free(why);
		json_decref(content);
		return elicit_result(ELICIT_DECLINE, NULL);
	}
	if (!e->is_quiet) {
		elicit_put_asks(e, " asks", message);
		text = json_dumps(content,
		    JSON_COMPACT | JSON_REAL_PRECISION(15));
		fputs("  accepted with its defaults (--elicit-defaults): ",
		    stderr);
		elicit_put(text != NULL ? text : "", false);
		fputc('\n', stderr);
		free(text);
	}
	return elicit_result(ELICIT_ACCEPT, content);
}

static json_t *
elicit_form(const struct elicit *e, const json_t *params)
{
	const json_t *schema = json_object_get(params, "requestedSchema");
	const char *message = json_string_value(json_object_get(params,
	    "message"));
	enum elicit_action action;
	json_t *content;
	char *why = NULL;

	if (e->use_defaults)
		return elicit_defaults(e, schema, message);
	elicit_put_asks(e, " asks", message);
	if (e->in == NULL) {
		fputs(
		    "  declined: standard input is not a terminal (--elicit-defaults accepts a form's defaults)\n",
		    stderr);
		return elicit_result(ELICIT_DECLINE, NULL);
	}
	if (json_object_size(json_object_get(schema, "properties")) == 0) {
		action = elicit_ask_action(e,
		    "Accept? [Y]es, [n]o: decline, [c]ancel: ", ELICIT_ACCEPT);
		return elicit_result(action,
		    action == ELICIT_ACCEPT ? json_object() : NULL);
	}
	action = elicit_ask_action(e,
	    "Answer it? [Y]es, [n]o: decline, [c]ancel: ", ELICIT_ACCEPT);
	if (action != ELICIT_ACCEPT)
		return elicit_result(action, NULL);
	fputs(
	    "(Enter takes the value in [brackets]; - leaves an optional field out; Ctrl-D cancels)\n",
	    stderr);
	for (int pass = 0; pass < ELICIT_PASSES; pass++) {
		if ((content = elicit_fields(e, schema)) == NULL)
			return elicit_result(ELICIT_CANCEL, NULL);
		if (schema == NULL || elicit_check(schema, content, &why) == 0)
			return elicit_result(ELICIT_ACCEPT, content);
		json_decref(content);
		fputs("the answers do not fit the form: ", stderr);
		elicit_put(why, false);
		fputs("; once more\n", stderr);
		free(why);
		why = NULL;
	}
	fputs("  cancelled: the answers did not fit the form\n", stderr);
	return elicit_result(ELICIT_CANCEL, NULL);
}

/*
 * URL mode: the URL is shown, never opened by mcpctl; accepting means
 * the person will open it, so only the person at the terminal can.
 */
static json_t *
elicit_url(const struct elicit *e, const json_t *params)
{
	const char *url = json_string_value(json_object_get(params, "url"));
	const char *message = json_string_value(json_object_get(params,
	    "message"));
	enum elicit_action action;

	elicit_put_asks(e, " asks you to open a URL", message);
	if (url == NULL) {
		fputs("  declined: the request has no url\n", stderr);
		return elicit_result(ELICIT_DECLINE, NULL);
	}
	fputs("  ", stderr);
	elicit_put(url, false);
	fputc('\n', stderr);
	if (e->in == NULL || e->use_defaults) {
		fputs(
		    "  declined: a URL is accepted only when you say so at the terminal\n",
		    stderr);
		return elicit_result(ELICIT_DECLINE, NULL);
	}
	action = elicit_ask_action(e,
	    "Will you open it (mcpctl does not)? [y]es, [N]o: decline, [c]ancel: ",
	    ELICIT_DECLINE);
	if (action == ELICIT_ACCEPT)
		fputs("  accepted: open the URL above in your browser\n",
		    stderr);
	return elicit_result(action, NULL);
}

json_t *
elicit_answer(const struct elicit *e, const json_t *params)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));

	if (mode == NULL || strcmp(mode, "form") == 0)
		return elicit_form(e, params);
	if (strcmp(mode, "url") == 0)
		return elicit_url(e, params);
	elicit_put_asks(e, " asks",
	    json_string_value(json_object_get(params, "message")));
	fputs("  declined: mcpctl does not know the elicitation mode ", stderr);
	elicit_put(mode, false);
	fputc('\n', stderr);
	return elicit_result(ELICIT_DECLINE, NULL);
}
