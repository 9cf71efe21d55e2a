/* SPDX-License-Identifier: ISC */
/*
 * One field of an elicitation form, asked at the terminal: what its
 * property schema asks for (text of a format, a number in a range, yes
 * or no, one or some of an enum, titled or not, as SEP-1330 defines
 * them), its default (SEP-1034), and the answer parsed and checked.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcpctl.h"

#define ELICITFIELD_ONE_LINE  72 /* choices that fit go on one line */
#define ELICITFIELD_MAX_CHOSE 64 /* choices of a multiple select, at most */

/* What a field asks for, from its property schema. */
enum elicitfield_kind {
	ELICITFIELD_STRING,
	ELICITFIELD_INTEGER,
	ELICITFIELD_NUMBER,
	ELICITFIELD_BOOLEAN,
	ELICITFIELD_CHOICE,  /* one of an enum (SEP-1330: titled or not) */
	ELICITFIELD_CHOICES, /* an array of them */
	ELICITFIELD_JSON,    /* anything else, typed as JSON */
};

/* One choice of an enum: its value and what the person sees. */
struct elicitfield_choice {
	const json_t *value;
	const char *title; /* or NULL: the value is shown */
};

struct elicitfield {
	const char *key;
	const json_t *prop;
	enum elicitfield_kind kind;
	struct elicitfield_choice *choices;
	size_t nchoices;
	bool is_required;
};

/* A value as the person sees it: strings bare, the rest as JSON. */
static void
elicitfield_put_value(const json_t *v)
{
	char *text;

	if (json_is_real(v)) {
		fprintf(stderr, "%.15g", json_real_value(v));
		return;
	}
	text = print_value(v);

	elicit_put(text != NULL ? text : "?", false);
	free(text);
}

/* The choices of an enum schema s (new array, *ret_n of them), or none. */
static struct elicitfield_choice *
elicitfield_choices(const json_t *s, size_t *ret_n)
{
	const json_t *list = json_object_get(s, "enum");
	const json_t *names = json_object_get(s, "enumNames"), *v;
	struct elicitfield_choice *c;
	size_t i, n;
	bool is_titled = false;

	*ret_n = 0;
	if (!json_is_array(list)) {
		list = json_object_get(s, "oneOf");
		if (!json_is_array(list))
			list = json_object_get(s, "anyOf");
		is_titled = true;
	}
	if ((n = json_array_size(list)) == 0 ||
	    (c = calloc(n, sizeof *c)) == NULL)
		return NULL;
	json_array_foreach(list, i, v) {
		if (!is_titled) {
			c[i].value = v;
			c[i].title = json_string_value(json_array_get(names,
			    i));
			continue;
		}
		if ((c[i].value = json_object_get(v, "const")) == NULL) {
			free(c);
			return NULL;
		}
		c[i].title = json_string_value(json_object_get(v, "title"));
	}
	*ret_n = n;
	return c;
}

static void
elicitfield_init(struct elicitfield *f, const char *key, const json_t *prop,
    bool is_required)
{
	const char *type = json_string_value(json_object_get(prop, "type"));

	f->key = key;
	f->prop = prop;
	f->is_required = is_required;
	f->choices = NULL;
	f->nchoices = 0;
	if (type != NULL && strcmp(type, "array") == 0 &&
	    (f->choices = elicitfield_choices(json_object_get(prop, "items"),
		 &f->nchoices)) != NULL)
		f->kind = ELICITFIELD_CHOICES;
	else if ((type == NULL || strcmp(type, "string") == 0) &&
	    (f->choices = elicitfield_choices(prop, &f->nchoices)) != NULL)
		f->kind = ELICITFIELD_CHOICE;
	else if (type == NULL)
		f->kind = ELICITFIELD_JSON;
	else if (strcmp(type, "string") == 0)
		f->kind = ELICITFIELD_STRING;
	else if (strcmp(type, "integer") == 0)
		f->kind = ELICITFIELD_INTEGER;
	else if (strcmp(type, "number") == 0)
		f->kind = ELICITFIELD_NUMBER;
	else if (strcmp(type, "boolean") == 0)
		f->kind = ELICITFIELD_BOOLEAN;
	else
		f->kind = ELICITFIELD_JSON;
}

/* What a string of this format looks like, or NULL for any text. */
static const char *
elicitfield_format_hint(const char *format)
{
	if (format == NULL)
		return NULL;
	if (strcmp(format, "email") == 0)
		return "email address";
	if (strcmp(format, "uri") == 0)
		return "URI";
	if (strcmp(format, "date") == 0)
		return "date, YYYY-MM-DD";
	if (strcmp(format, "date-time") == 0)
		return "date and time, YYYY-MM-DDThh:mm:ssZ";
	return NULL;
}

/* Whether s is n digits. */
static bool
elicitfield_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Whether s is YYYY-MM-DD with a month and a day that can be. */
static bool
elicitfield_is_date(const char *s)
{
	int month, day;

	if (!elicitfield_digits(s, 4) || s[4] != '-' ||
	    !elicitfield_digits(s + 5, 2) || s[7] != '-' ||
	    !elicitfield_digits(s + 8, 2))
		return false;
	month = (s[5] - '0') * 10 + (s[6] - '0');
	day = (s[8] - '0') * 10 + (s[9] - '0');
	return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/*
 * The formats the elicitation schema names (email, uri, date,
 * date-time), checked as far as a person's typing needs: NULL when text
 * looks right, else what it should look like.
 */
static const char *
elicitfield_format_wrong(const char *format, const char *text)
{
	const char *at, *t;
	size_t n;

	if (format == NULL)
		return NULL;
	if (strcmp(format, "email") == 0) {
		at = strchr(text, '@');
		return at == NULL || at == text || at[1] == '\0' ||
			strchr(at + 1, '@') != NULL ||
			strchr(text, ' ') != NULL ?
		    "an email address, like name@example.org" :
		    NULL;
	}
	if (strcmp(format, "uri") == 0) {
		n = strspn(text,
		    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
		return n == 0 || text[n] != ':' ||
			!((text[0] | 0x20) >= 'a' && (text[0] | 0x20) <= 'z') ||
			strchr(text, ' ') != NULL ?
		    "a URI with its scheme, like https://example.org/" :
		    NULL;
	}
	if (strcmp(format, "date") == 0)
		return strlen(text) == 10 && elicitfield_is_date(text) ?
		    NULL :
		    "a date, YYYY-MM-DD";
	if (strcmp(format, "date-time") != 0)
		return NULL;
	t = text + 10;
	if (strlen(text) < 20 || !elicitfield_is_date(text) ||
	    (*t != 'T' && *t != 't') || !elicitfield_digits(t + 1, 2) ||
	    t[3] != ':' || !elicitfield_digits(t + 4, 2) || t[6] != ':' ||
	    !elicitfield_digits(t + 7, 2))
		return "a date and time, YYYY-MM-DDThh:mm:ssZ";
	t += 9;
	if (*t == '.')
		for (t++; *t >= '0' && *t <= '9'; t++)
			;
	if ((*t == 'Z' || *t == 'z') && t[1] == '\0')
		return NULL;
	if ((*t == '+' || *t == '-') && elicitfield_digits(t + 1, 2) &&
	    t[3] == ':' && elicitfield_digits(t + 4, 2) && t[6] == '\0')
		return NULL;
	return "a date and time, YYYY-MM-DDThh:mm:ssZ";
}

/* " from A to B", " at least A" or " at most B" of a number's bounds. */
static void
elicitfield_put_range(const json_t *prop)
{
	const json_t *min = json_object_get(prop, "minimum");
	const json_t *max = json_object_get(prop, "maximum");

	if (json_is_number(min) && json_is_number(max))
		fprintf(stderr, " from %g to %g", json_number_value(min),
		    json_number_value(max));
	else if (json_is_number(min))
		fprintf(stderr, " at least %g", json_number_value(min));
	else if (json_is_number(max))
		fprintf(stderr, " at most %g", json_number_value(max));
}

/* The index of the choice whose value is v, or -1. */
static int
elicitfield_choice_of(const struct elicitfield *f, const json_t *v)
{
	for (size_t i = 0; i < f->nchoices; i++)
		if (json_equal(f->choices[i].value, v))
			return (int)i;
	return -1;
}

/* A choice as the person sees it: its title, else its value. */
static void
elicitfield_put_choice(const struct elicitfield *f, const json_t *v)
{
	int i = elicitfield_choice_of(f, v);

	if (i >= 0 && f->choices[i].title != NULL)
		elicit_put(f->choices[i].title, false);
	else
		elicitfield_put_value(v);
}

/* The default in brackets, as the person would type it. */
static void
elicitfield_put_default(const struct elicitfield *f, const json_t *dflt)
{
	const json_t *v;
	size_t i;

	fputs(" [", stderr);
	if (f->kind == ELICITFIELD_BOOLEAN)
		fputs(json_is_true(dflt) ? "yes" : "no", stderr);
	else if (f->kind == ELICITFIELD_CHOICE)
		elicitfield_put_choice(f, dflt);
	else if (f->kind == ELICITFIELD_CHOICES && json_is_array(dflt))
		json_array_foreach(dflt, i, v) {
			if (i > 0)
				fputs(", ", stderr);
			elicitfield_put_choice(f, v);
		}
	else
		elicitfield_put_value(dflt);
	fputc(']', stderr);
}

/* The numbered choices, on one line when they fit. */
static void
elicitfield_put_choices(const struct elicitfield *f)
{
	size_t width = 2, i;
	char *text;

	for (i = 0; i < f->nchoices; i++) {
		text = print_value(f->choices[i].value);
		width += 6 +
		    strlen(f->choices[i].title != NULL ? f->choices[i].title :
			    text != NULL	       ? text :
							 "");
		free(text);
	}
	for (i = 0; i < f->nchoices; i++) {
		fprintf(stderr, "  %zu) ", i + 1);
		elicitfield_put_choice(f, f->choices[i].value);
		if (width > ELICITFIELD_ONE_LINE || i + 1 == f->nchoices)
			fputc('\n', stderr);
	}
}

/* The field's name, title and description, then its prompt. */
static void
elicitfield_put_prompt(const struct elicitfield *f, bool is_prompt_only)
{
	const char *title = json_string_value(json_object_get(f->prop,
	    "title"));
	const char *desc = json_string_value(json_object_get(f->prop,
	    "description"));
	const char *hint =
	    elicitfield_format_hint(json_string_value(json_object_get(f->prop,
		"format")));
	const json_t *dflt = json_object_get(f->prop, "default");
	const json_t *min, *max;

	if (!is_prompt_only) {
		elicit_put(f->key, false);
		if (title != NULL) {
			fputs(" - ", stderr);
			elicit_put(title, false);
		}
		if (desc != NULL) {
			fputs(": ", stderr);
			elicit_put(desc, false);
		}
		fputc('\n', stderr);
		if (f->kind == ELICITFIELD_CHOICE ||
		    f->kind == ELICITFIELD_CHOICES)
			elicitfield_put_choices(f);
	}
	fputs("  ", stderr);
	switch (f->kind) {
	case ELICITFIELD_STRING:
		fputs(hint != NULL ? hint : "text", stderr);
		break;
	case ELICITFIELD_INTEGER:
	case ELICITFIELD_NUMBER:
		fputs(f->kind == ELICITFIELD_INTEGER ? "integer" : "number",
		    stderr);
		elicitfield_put_range(f->prop);
		break;
	case ELICITFIELD_BOOLEAN:
		fputs("yes or no", stderr);
		break;
	case ELICITFIELD_CHOICE:
		fprintf(stderr, "one of 1-%zu", f->nchoices);
		break;
	case ELICITFIELD_CHOICES:
		min = json_object_get(f->prop, "minItems");
		max = json_object_get(f->prop, "maxItems");
		fprintf(stderr, "some of 1-%zu, separated by commas",
		    f->nchoices);
		if (json_is_integer(min) && json_is_integer(max))
			fprintf(stderr,
			    " (%" JSON_INTEGER_FORMAT
			    " to %" JSON_INTEGER_FORMAT ")",
			    json_integer_value(min), json_integer_value(max));
		break;
	case ELICITFIELD_JSON:
		fputs("JSON", stderr);
		break;
	}
	if (f->is_required)
		fputs(", required", stderr);
	if (dflt != NULL)
		elicitfield_put_default(f, dflt);
	fputs(": ", stderr);
}

/* The choice a word names: its number, value or title; -1 for none. */
static int
elicitfield_pick(const struct elicitfield *f, const char *word)
{
	char *end;
	long n;
	const char *v;

	errno = 0;
	n = strtol(word, &end, 10);
	if (errno == 0 && end != word && *end == '\0' && n >= 1 &&
	    (size_t)n <= f->nchoices)
		return (int)n - 1;
	for (size_t i = 0; i < f->nchoices; i++) {
		v = json_string_value(f->choices[i].value);
		if ((v != NULL && strcmp(v, word) == 0) ||
		    (f->choices[i].title != NULL &&
			strcasecmp(f->choices[i].title, word) == 0))
			return (int)i;
	}
	return -1;
}

/* Blanks around s removed, in place. */
static char *
elicitfield_trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

/* Whether array has v. */
static bool
elicitfield_has(const json_t *array, const json_t *v)
{
	const json_t *have;
	size_t i;

	json_array_foreach(array, i, have)
		if (json_equal(have, v))
			return true;
	return false;
}

/* Comma-separated choices as an array (new), once each, or NULL with *why. */
static json_t *
elicitfield_parse_choices(const struct elicitfield *f, char *text,
    const char **why)
{
	json_t *out = json_array();
	char *save = NULL, *word;
	int i;

	for (word = strtok_r(text, ",", &save); word != NULL;
	     word = strtok_r(NULL, ",", &save)) {
		word = elicitfield_trim(word);
		if (*word == '\0')
			continue;
		if ((i = elicitfield_pick(f, word)) < 0 ||
		    json_array_size(out) >= ELICITFIELD_MAX_CHOSE) {
			*why = "not one of the choices";
			json_decref(out);
			return NULL;
		}
		if (!elicitfield_has(out, f->choices[i].value))
			json_array_append(out,
			    (json_t *)(uintptr_t)f->choices[i].value);
	}
	return out;
}

/* A number as JSON: an integer when it is written as one. */
static json_t *
elicitfield_parse_number(const struct elicitfield *f, const char *text,
    const char **why)
{
	char *end;
	long long ll;
	double d;

	errno = 0;
	ll = strtoll(text, &end, 10);
	if (errno == 0 && end != text && *end == '\0')
		return json_integer(ll);
	if (f->kind == ELICITFIELD_INTEGER) {
		*why = "not an integer";
		return NULL;
	}
	errno = 0;
	d = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !isfinite(d)) {
		*why = "not a number";
		return NULL;
	}
	return json_real(d);
}

/* What the person typed as the field's value (new), or NULL with *why. */
static json_t *
elicitfield_parse(const struct elicitfield *f, char *text, const char **why)
{
	const char *format = json_string_value(json_object_get(f->prop,
	    "format"));
	json_t *v;
	int i;

	switch (f->kind) {
	case ELICITFIELD_STRING:
		if ((*why = elicitfield_format_wrong(format, text)) != NULL)
			return NULL;
		if ((v = json_string(text)) == NULL)
			*why = "not valid UTF-8";
		return v;
	case ELICITFIELD_INTEGER:
	case ELICITFIELD_NUMBER:
		return elicitfield_parse_number(f, elicitfield_trim(text), why);
	case ELICITFIELD_BOOLEAN:
		text = elicitfield_trim(text);
		if (strcasecmp(text, "y") == 0 ||
		    strcasecmp(text, "yes") == 0 ||
		    strcasecmp(text, "true") == 0)
			return json_true();
		if (strcasecmp(text, "n") == 0 || strcasecmp(text, "no") == 0 ||
		    strcasecmp(text, "false") == 0)
			return json_false();
		*why = "answer yes or no";
		return NULL;
	case ELICITFIELD_CHOICE:
		if ((i = elicitfield_pick(f, elicitfield_trim(text))) < 0) {
			*why = "not one of the choices";
			return NULL;
		}
		return json_incref((json_t *)(uintptr_t)f->choices[i].value);
	case ELICITFIELD_CHOICES:
		return elicitfield_parse_choices(f, text, why);
	case ELICITFIELD_JSON:
		if ((v = json_loads(text, JSON_DECODE_ANY, NULL)) == NULL)
			*why = "not JSON";
		return v;
	}
	return NULL;
}

/*
 * Asks one field until it has a value that fits its schema, or is left
 * out: 0, or -1 when the input ended (the form is cancelled).
 */
static int
elicitfield_ask_one(const struct elicit *e, const struct elicitfield *f,
    json_t *content)
{
	const json_t *dflt = json_object_get(f->prop, "default");
	const char *why;
	char *line, *cause = NULL;
	json_t *v;
	bool is_first = true, is_out;

	for (;; is_first = false) {
		elicitfield_put_prompt(f, !is_first);
		if ((line = elicit_read(e)) == NULL)
			return -1;
		why = NULL;
		v = NULL;
		is_out = strcmp(line, "-") == 0 ||
		    (line[0] == '\0' && dflt == NULL);
		if (is_out && f->is_required)
			why = "an answer is required";
		else if (is_out) {
			free(line);
			json_object_del(content, f->key);
			return 0;
		} else if (line[0] == '\0')
			v = json_deep_copy(dflt);
		else
			v = elicitfield_parse(f, line, &why);
		free(line);
		if (v != NULL && elicit_check(f->prop, v, &cause) == 0) {
			json_object_set_new(content, f->key, v);
			return 0;
		}
		json_decref(v);
		if (why == NULL)
			why = strncmp(cause, "$: ", 3) == 0 ? cause + 3 : cause;
		fputs("  not taken: ", stderr);
		elicit_put(why, false);
		fputc('\n', stderr);
		free(cause);
		cause = NULL;
	}
}

int
elicitfield_ask(const struct elicit *e, const char *key, const json_t *prop,
    bool is_required, json_t *content)
{
	struct elicitfield f;
	int r;

	elicitfield_init(&f, key, prop, is_required);
	r = elicitfield_ask_one(e, &f, content);
	free(f.choices);
	return r;
}
