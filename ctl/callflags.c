/* SPDX-License-Identifier: ISC */
/* A tool's inputSchema as flags of mcpctl call: names, values, suggestions. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

/* What call and mcpctl take after "--"; a property so named is --arg-NAME. */
static const char *const callflags_reserved[] = {
	"args-json",
	"timeout",
	"help",
	"json",
	"socket",
	"agent",
	"request-timeout",
	"quiet",
	"elicit-defaults",
	"force-args",
	"version",
	NULL,
};

bool
callflags_is_reserved(const char *name)
{
	for (size_t i = 0; callflags_reserved[i] != NULL; i++)
		if (strcmp(callflags_reserved[i], name) == 0)
			return true;
	return false;
}

/* "maxResults", "max_results" and "MaxResults" give "max-results". */
static char *
callflags_kebab(const char *prop)
{
	size_t len = strlen(prop);
	char *out = malloc(2 * len + 1), *o = out;
	unsigned char c, prev, next;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		c = prop[i];
		prev = i > 0 ? prop[i - 1] : '\0';
		next = prop[i + 1];
		if (strchr("_- .", c) != NULL) {
			if (o > out && o[-1] != '-')
				*o++ = '-';
			continue;
		}
		if (isupper(c) && o > out && o[-1] != '-' &&
		    (islower(prev) || isdigit(prev) ||
			(isupper(prev) && islower(next))))
			*o++ = '-';
		*o++ = tolower(c);
	}
	while (o > out && o[-1] == '-')
		o--;
	*o = '\0';
	return out;
}

static enum callflags_type
callflags_type_named(const char *name)
{
	static const char *const names[] = { "", "string", "integer", "number",
		"boolean", "array", "object" };

	for (size_t i = 1; name != NULL && i < sizeof names / sizeof *names;
	     i++)
		if (strcmp(names[i], name) == 0)
			return (enum callflags_type)i;
	return CALLFLAGS_ANY;
}

/* The one type all values have (those of an enum), or CALLFLAGS_ANY. */
static enum callflags_type
callflags_type_of_values(const json_t *values)
{
	bool all[CALLFLAGS_OBJECT + 1] = { false, true, true, true, true };
	const json_t *v;
	size_t i;

	if (json_array_size(values) == 0)
		return CALLFLAGS_ANY;
	json_array_foreach(values, i, v) {
		all[CALLFLAGS_STRING] &= json_is_string(v);
		all[CALLFLAGS_INTEGER] &= json_is_integer(v);
		all[CALLFLAGS_NUMBER] &= json_is_number(v);
		all[CALLFLAGS_BOOLEAN] &= json_is_boolean(v);
	}
	for (int t = CALLFLAGS_STRING; t <= CALLFLAGS_BOOLEAN; t++)
		if (all[t])
			return (enum callflags_type)t;
	return CALLFLAGS_ANY;
}

/* The type of a schema without anyOf: "type" (null aside), or its enum. */
static enum callflags_type
callflags_type_plain(const json_t *schema)
{
	const json_t *type = json_object_get(schema, "type"), *v;
	enum callflags_type t = CALLFLAGS_ANY;
	size_t i, n = 0;
	json_t *one;

	if (json_is_string(type))
		return callflags_type_named(json_string_value(type));
	if (json_is_array(type)) {
		json_array_foreach(type, i, v) {
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), "null") == 0)
				continue;
			t = callflags_type_named(json_string_value(v));
			n++;
		}
		return n == 1 ? t : CALLFLAGS_ANY;
	}
	if ((v = json_object_get(schema, "enum")) != NULL)
		return callflags_type_of_values(v);
	if ((v = json_object_get(schema, "const")) != NULL) {
		one = json_pack("[O]", v);
		t = callflags_type_of_values(one);
		json_decref(one);
	}
	return t;
}

/*
 * The type of a property's schema and the schema that says so: an anyOf or
 * oneOf with a single branch besides {"type": "null"} (what pydantic writes
 * for Optional) is that branch.
 */
static enum callflags_type
callflags_type_of(const json_t *schema, const json_t **ret_schema)
{
	const json_t *branches = json_object_get(schema, "anyOf"), *b;
	const json_t *one = NULL, *type;
	size_t i, n = 0;

	*ret_schema = schema;
	if (!json_is_array(branches))
		branches = json_object_get(schema, "oneOf");
	if (json_object_get(schema, "type") != NULL || !json_is_array(branches))
		return callflags_type_plain(schema);
	json_array_foreach(branches, i, b) {
		type = json_object_get(b, "type");
		if (json_is_string(type) &&
		    strcmp(json_string_value(type), "null") == 0)
			continue;
		one = b;
		n++;
	}
	if (n != 1)
		return CALLFLAGS_ANY;
	*ret_schema = one;
	return callflags_type_plain(one);
}

/* 1 and *ret for the property named exactly name or (else) whose kebab
 * form is name; 0 when none, -1 when several kebab forms are name. */
static int
callflags_find_base(const struct callflags *cf, const char *name,
    const struct callflags_flag **ret)
{
	const struct callflags_flag *found = NULL;
	size_t n = 0;

	for (size_t i = 0; i < cf->nflags; i++) {
		if (strcmp(cf->flags[i].prop, name) == 0) {
			*ret = &cf->flags[i];
			return 1;
		}
	}
	for (size_t i = 0; i < cf->nflags; i++) {
		if (strcmp(cf->flags[i].kebab, name) == 0) {
			found = &cf->flags[i];
			n++;
		}
	}
	if (n > 1)
		return -1;
	*ret = found;
	return n;
}

/*
 * The flag "--name" is: a property's exact name or kebab form (unless
 * reserved), "arg-" and one of those, or "no-" and a boolean one of those
 * (*ret_negated). 1, 0 for none, -1 when ambiguous.
 */
static int
callflags_resolve(const struct callflags *cf, const char *name,
    const struct callflags_flag **ret, bool *ret_negated)
{
	int r = 0;

	*ret_negated = false;
	if (!callflags_is_reserved(name) &&
	    (r = callflags_find_base(cf, name, ret)) != 0)
		return r;
	if (strncmp(name, "arg-", 4) == 0 &&
	    (r = callflags_find_base(cf, name + 4, ret)) != 0)
		return r;
	if (strncmp(name, "no-", 3) != 0)
		return 0;
	if ((r = callflags_find_base(cf, name + 3, ret)) == 0 &&
	    strncmp(name + 3, "arg-", 4) == 0)
		r = callflags_find_base(cf, name + 7, ret);
	if (r > 0 && (*ret)->type != CALLFLAGS_BOOLEAN)
		return 0;
	*ret_negated = r > 0;
	return r;
}

/* The first of kebab, prop, arg-kebab, arg-prop that resolves to f. */
static char *
callflags_display(const struct callflags *cf, const struct callflags_flag *f)
{
	const char *tries[] = { f->kebab, f->prop };
	const struct callflags_flag *got;
	bool is_negated;
	char *name;

	for (int arg = 0; arg < 2; arg++) {
		for (size_t i = 0; i < 2; i++) {
			if (tries[i][0] == '\0' || strchr(tries[i], '=') ||
			    asprintf(&name, "%s%s", arg ? "arg-" : "",
				tries[i]) < 0)
				continue;
			if (callflags_resolve(cf, name, &got, &is_negated) ==
				1 &&
			    got == f && !is_negated)
				return name;
			free(name);
		}
	}
	return NULL;
}

int
callflags_new(const json_t *tool, const char *see, struct callflags **ret)
{
	const json_t *input = json_object_get(tool, "inputSchema");
	json_t *props = json_object_get(input, "properties"), *schema;
	const json_t *required = json_object_get(input, "required"), *v;
	struct callflags *cf = calloc(1, sizeof *cf);
	struct callflags_flag *f;
	const json_t *items;
	const char *prop;
	size_t i;

	if (cf == NULL || (cf->see = strdup(see)) == NULL ||
	    (cf->flags = calloc(json_object_size(props) + 1,
		 sizeof *cf->flags)) == NULL) {
		callflags_free(cf);
		return -ENOMEM;
	}
	cf->tool = tool;
	json_object_foreach(props, prop, schema) {
		f = &cf->flags[cf->nflags++];
		f->prop = prop;
		if ((f->kebab = callflags_kebab(prop)) == NULL) {
			callflags_free(cf);
			return -ENOMEM;
		}
		f->type = callflags_type_of(schema, &f->schema);
		items = json_object_get(f->schema, "items");
		if (f->type == CALLFLAGS_ARRAY && json_is_object(items))
			f->item = callflags_type_of(items, &items);
		json_array_foreach(required, i, v)
			if (json_is_string(v) &&
			    strcmp(json_string_value(v), prop) == 0)
				f->is_required = true;
	}
	for (i = 0; i < cf->nflags; i++)
		cf->flags[i].name = callflags_display(cf, &cf->flags[i]);
	*ret = cf;
	return 0;
}

void
callflags_free(struct callflags *cf)
{
	if (cf == NULL)
		return;
	for (size_t i = 0; cf->flags != NULL && i < cf->nflags; i++) {
		free(cf->flags[i].kebab);
		free(cf->flags[i].name);
	}
	free(cf->flags);
	free(cf->see);
	free(cf);
}

int
callflags_usage(const struct callflags *cf, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("mcpctl: call: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee mcpctl call %s --help\n", cf->see);
	return MCPCTL_EXIT_USAGE;
}

/* The flag of the property named exactly prop, or NULL. */
static const struct callflags_flag *
callflags_find_prop(const struct callflags *cf, const char *prop)
{
	for (size_t i = 0; cf != NULL && i < cf->nflags; i++)
		if (strcmp(cf->flags[i].prop, prop) == 0)
			return &cf->flags[i];
	return NULL;
}

static json_t *callflags_convert(enum callflags_type t, const char *s);
static const char *callflags_want(enum callflags_type t);
static int callflags_check_enum(const struct callflags *cf, const char *dashes,
    const char *name, const json_t *schema, const json_t *v);

int
callflags_pair(const struct callflags *cf, json_t *args, const char *word,
    bool is_forced)
{
	const char *eq = strchr(word, '=');
	const struct callflags_flag *f;
	json_t *v = NULL;
	char *key;
	int r;

	if (eq == NULL || eq == word)
		return mcpctl_usage(&ctl_call_cmd,
		    "expected KEY=VALUE, not '%s'", word);
	if ((key = strndup(word, eq - word)) == NULL)
		return MCPCTL_EXIT_ERROR;
	/*
	 * The property's type in the inputSchema says what VALUE is (a
	 * string stays a string: message=42 is "42"); without one, a value
	 * that parses as JSON is that JSON, anything else a string. A value
	 * that is not of the type is refused as its flag's would be, unless
	 * forced: then it is sent as JSON or text, and the check against the
	 * schema warns.
	 */
	if ((f = callflags_find_prop(cf, key)) != NULL &&
	    f->type != CALLFLAGS_ANY && f->type != CALLFLAGS_ARRAY)
		v = callflags_convert(f->type, eq + 1);
	if (v == NULL && f != NULL && f->type != CALLFLAGS_ANY &&
	    f->type != CALLFLAGS_ARRAY && !is_forced) {
		r = callflags_usage(cf, "%s needs %s, not '%s'", key,
		    callflags_want(f->type), eq + 1);
		free(key);
		return r;
	}
	if (v == NULL &&
	    (v = json_loads(eq + 1, JSON_DECODE_ANY, NULL)) == NULL)
		v = json_string(eq + 1);
	if (f != NULL && !is_forced &&
	    (r = callflags_check_enum(cf, "", key, f->schema, v)) != 0) {
		json_decref(v);
		free(key);
		return r;
	}
	json_object_set_new(args, key, v);
	free(key);
	return 0;
}

/* "unknown flag" with the nearest flags of the tool and of call. */
static int
callflags_unknown(const struct callflags *cf, const char *word)
{
	const char **names = calloc(2 * cf->nflags + 3, sizeof *names);
	char **negated = calloc(cf->nflags + 1, sizeof *negated), *near;
	const char *tool = json_string_value(json_object_get(cf->tool, "name"));
	size_t n = 0;
	int r;

	for (size_t i = 0; names != NULL && negated != NULL && i < cf->nflags;
	     i++) {
		names[n++] = cf->flags[i].name;
		if (cf->flags[i].type == CALLFLAGS_BOOLEAN &&
		    cf->flags[i].name != NULL &&
		    asprintf(&negated[i], "no-%s", cf->flags[i].name) > 0)
			names[n++] = negated[i];
	}
	if (names != NULL) {
		names[n++] = "args-json";
		names[n++] = "timeout";
		names[n++] = "help";
	}
	near = names != NULL ? nearest_names(word + 2, names, n, "--") : NULL;
	if (near != NULL)
		r = callflags_usage(cf,
		    "unknown flag '%s' for %s; did you mean %s?", word, tool,
		    near);
	else if (cf->nflags == 0)
		r = callflags_usage(cf,
		    "unknown flag '%s': %s takes no arguments", word, tool);
	else
		r = callflags_usage(cf, "unknown flag '%s' for %s", word, tool);
	for (size_t i = 0; negated != NULL && i < cf->nflags; i++)
		free(negated[i]);
	free(negated);
	free(names);
	free(near);
	return r;
}

/* An integer as decimal digits, with an optional minus sign. */
static json_t *
callflags_integer(const char *s)
{
	const char *p = s + (s[0] == '-');
	long long v;

	if (*p == '\0' || strspn(p, "0123456789") != strlen(p))
		return NULL;
	errno = 0;
	v = strtoll(s, NULL, 10);
	return errno == 0 ? json_integer(v) : NULL;
}

/* A decimal number; integers stay integers, so that 3 is not sent as 3.0. */
static json_t *
callflags_number(const char *s)
{
	json_t *v;
	char *end;
	double d;

	if ((v = callflags_integer(s)) != NULL)
		return v;
	if (s[0] == '\0' || strspn(s, "0123456789+-.eE") != strlen(s) ||
	    strchr("0123456789-.", s[0]) == NULL)
		return NULL;
	d = strtod(s, &end);
	if (*end != '\0' || !isfinite(d))
		return NULL;
	return json_real(d);
}

/* The value of text for type t, or NULL when text is not one. */
static json_t *
callflags_convert(enum callflags_type t, const char *s)
{
	json_t *v;

	switch (t) {
	case CALLFLAGS_STRING:
		return json_string(s);
	case CALLFLAGS_INTEGER:
		return callflags_integer(s);
	case CALLFLAGS_NUMBER:
		return callflags_number(s);
	case CALLFLAGS_BOOLEAN:
		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
			return json_boolean(s[0] == 't');
		return NULL;
	case CALLFLAGS_ARRAY:
	case CALLFLAGS_OBJECT:
		v = json_loads(s, JSON_DECODE_ANY, NULL);
		if (v == NULL || json_is_array(v) == (t == CALLFLAGS_ARRAY))
			return v;
		json_decref(v);
		return NULL;
	case CALLFLAGS_ANY:
	default:
		v = json_loads(s, JSON_DECODE_ANY, NULL);
		return v != NULL ? v : json_string(s);
	}
}

static const char *
callflags_want(enum callflags_type t)
{
	static const char *const want[] = { "a value", "a string",
		"an integer (digits, no fraction)", "a number", "true or false",
		"a JSON array", "a JSON object" };

	return want[t];
}

/* Refuses a value outside the property's enum, listing what it may be. */
static int
callflags_check_enum(const struct callflags *cf, const char *dashes,
    const char *name, const json_t *schema, const json_t *v)
{
	const json_t *values = json_object_get(schema, "enum"), *e;
	char *list = NULL, *next, *text;
	size_t i;
	int r;

	if (!json_is_array(values))
		return 0;
	json_array_foreach(values, i, e) {
		if (json_equal(e, v) ||
		    (json_is_number(e) && json_is_number(v) &&
			json_number_value(e) == json_number_value(v)))
			return 0;
	}
	json_array_foreach(values, i, e) {
		text = print_value(e);
		if (asprintf(&next, "%s%s%s", list ? list : "",
			list ? ", " : "", text ? text : "?") < 0)
			next = NULL;
		free(text);
		free(list);
		if ((list = next) == NULL)
			break;
	}
	text = print_value(v);
	r = callflags_usage(cf, "%s%s: '%s' is not one of: %s", dashes, name,
	    text ? text : "?", list ? list : "?");
	free(text);
	free(list);
	return r;
}

/* Adds value text to the array flag f: a JSON array's items, or one item. */
static int
callflags_append(const struct callflags *cf, const struct callflags_flag *f,
    const char *flag, const char *text, json_t *array)
{
	json_t *v = NULL;

	if (text[0] == '[' && (v = json_loads(text, 0, NULL)) != NULL &&
	    json_is_array(v)) {
		json_array_extend(array, v);
		json_decref(v);
		return 0;
	}
	json_decref(v);
	if ((v = callflags_convert(f->item, text)) == NULL)
		return callflags_usage(cf,
		    "--%s needs %s (once per item) or a JSON array, not '%s'",
		    flag, callflags_want(f->item), text);
	json_array_append_new(array, v);
	return 0;
}

/* Two properties have the kebab form flag names: say which they are. */
static int
callflags_ambiguous(const struct callflags *cf, const char *flag)
{
	const char *base = flag;
	char *list = NULL, *next;
	int r;

	if (strncmp(base, "no-", 3) == 0 && !callflags_is_reserved(base))
		base += 3;
	if (strncmp(base, "arg-", 4) == 0)
		base += 4;
	for (size_t i = 0; i < cf->nflags; i++) {
		if (strcmp(cf->flags[i].kebab, flag) != 0 &&
		    strcmp(cf->flags[i].kebab, base) != 0)
			continue;
		if (asprintf(&next, "%s%s--%s", list ? list : "",
			list ? " or " : "", cf->flags[i].prop) < 0)
			break;
		free(list);
		list = next;
	}
	r = callflags_usage(cf, "--%s is ambiguous: use %s", flag,
	    list ? list : "the property's exact name");
	free(list);
	return r;
}

/* One flag at words[*at], with its value when it takes one; 0 or 2. */
static int
callflags_parse_flag(const struct callflags *cf, char **words, int nwords,
    int *at, unsigned char *seen, json_t *args)
{
	const char *word = words[*at], *eq = strchr(word, '='), *text;
	const struct callflags_flag *f;
	char *flag = strndup(word + 2,
	    eq ? (size_t)(eq - word - 2) : strlen(word + 2));
	bool is_negated;
	json_t *v, *array;
	int r = 0;

	if (flag == NULL)
		return MCPCTL_EXIT_ERROR;
	if ((r = callflags_resolve(cf, flag, &f, &is_negated)) <= 0) {
		r = r == 0 ? callflags_unknown(cf, word) :
			     callflags_ambiguous(cf, flag);
		free(flag);
		return r;
	}
	r = 0;
	if (f->type == CALLFLAGS_BOOLEAN && (eq == NULL || is_negated)) {
		if (eq != NULL)
			r = callflags_usage(cf, "--%s takes no value", flag);
		else
			json_object_set_new(args, f->prop,
			    json_boolean(!is_negated));
		free(flag);
		return r;
	}
	if (eq == NULL && *at + 1 >= nwords) {
		r = callflags_usage(cf, "--%s needs a value: %s", flag,
		    callflags_want(f->type));
		free(flag);
		return r;
	}
	text = eq != NULL ? eq + 1 : words[++*at];
	if (seen[f - cf->flags]++ && f->type != CALLFLAGS_ARRAY) {
		r = callflags_usage(cf, "--%s given twice", flag);
	} else if (f->type == CALLFLAGS_ARRAY) {
		array = json_object_get(args, f->prop);
		if (seen[f - cf->flags] == 1 || !json_is_array(array)) {
			array = json_array();
			json_object_set_new(args, f->prop, array);
		}
		r = callflags_append(cf, f, flag, text, array);
	} else if ((v = callflags_convert(f->type, text)) == NULL) {
		r = callflags_usage(cf, "--%s needs %s, not '%s'", flag,
		    callflags_want(f->type), text);
	} else if ((r = callflags_check_enum(cf, "--", flag, f->schema, v)) ==
	    0) {
		json_object_set_new(args, f->prop, v);
	} else {
		json_decref(v);
	}
	free(flag);
	return r;
}

int
callflags_parse(const struct callflags *cf, char **words, int nwords,
    int pairs_from, bool is_forced, json_t *args)
{
	unsigned char *seen = calloc(cf->nflags + 1, 1);
	int r = 0;

	if (seen == NULL)
		return MCPCTL_EXIT_ERROR;
	for (int i = 0; r == 0 && i < nwords; i++) {
		if (i < pairs_from && strncmp(words[i], "--", 2) == 0)
			r = callflags_parse_flag(cf, words, pairs_from, &i,
			    seen, args);
		else if (i < pairs_from && words[i][0] == '-' &&
		    words[i][1] != '\0')
			r = callflags_usage(cf, "unknown option '%s'",
			    words[i]);
		else
			r = callflags_pair(cf, args, words[i], is_forced);
	}
	free(seen);
	return r;
}

int
callflags_check_required(const struct callflags *cf, const json_t *args)
{
	char *list = NULL, *next;
	int r;

	for (size_t i = 0; i < cf->nflags; i++) {
		const struct callflags_flag *f = &cf->flags[i];

		if (!f->is_required || json_object_get(args, f->prop) != NULL)
			continue;
		if (asprintf(&next, "%s%s%s%s", list ? list : "",
			list ? ", " : "", f->name ? "--" : "",
			f->name ? f->name : f->prop) < 0)
			break;
		free(list);
		list = next;
	}
	if (list == NULL)
		return 0;
	r = callflags_usage(cf, "missing required %s", list);
	free(list);
	return r;
}
