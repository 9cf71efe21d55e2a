/* SPDX-License-Identifier: ISC */
/* mcpctl call SERVER TOOL --help: a tool's usage, made from its schemas. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpctl.h"

static const char *const callhelp_types[] = { "any JSON value (else a string)",
	"string", "integer", "number", "boolean", "array", "object (JSON)" };
static const char *const callhelp_metavars[] = { "VALUE", "STRING", "INTEGER",
	"NUMBER", "BOOL", "JSON", "JSON" };

/* Prints text with every line indented. */
static void
callhelp_indented(const char *indent, const char *text)
{
	for (const char *p = text; *p != '\0';) {
		size_t n = strcspn(p, "\n");

		if (n > 0)
			printf("%s%.*s", indent, (int)n, p);
		putchar('\n');
		p += n;
		p += *p == '\n';
	}
}

/* ", key: value" for the property's keyword key, when it has one. */
static void
callhelp_keyword(const json_t *schema, const char *key, const char *label)
{
	const json_t *v = json_object_get(schema, key);
	char *text;

	if (v == NULL || (text = print_value(v)) == NULL)
		return;
	printf(", %s: %s", label, text);
	free(text);
}

#define CALLHELP_SHAPE_DEPTH 4 /* nesting shown; deeper is "..." */

static void callhelp_shape(FILE *out, const json_t *schema, int depth);

/* {name: shape, optional?: shape} of an object schema's properties. */
static void
callhelp_shape_object(FILE *out, const json_t *schema, int depth)
{
	const json_t *props = json_object_get(schema, "properties"), *sub;
	const json_t *required = json_object_get(schema, "required"), *r;
	const char *name;
	bool is_first = true, is_required;
	size_t i;

	fputc('{', out);
	json_object_foreach((json_t *)(uintptr_t)props, name, sub) {
		is_required = false;
		json_array_foreach(required, i, r)
			is_required |= json_is_string(r) &&
			    strcmp(json_string_value(r), name) == 0;
		fprintf(out, "%s%s%s: ", is_first ? "" : ", ", name,
		    is_required ? "" : "?");
		callhelp_shape(out, sub, depth + 1);
		is_first = false;
	}
	fputc('}', out);
}

/* A compact shape of schema: {a: number, b?: [string]}, or a type name. */
static void
callhelp_shape(FILE *out, const json_t *schema, int depth)
{
	const json_t *type = json_object_get(schema, "type");
	const char *t = json_string_value(type);

	if (depth >= CALLHELP_SHAPE_DEPTH || json_object_get(schema, "$ref")) {
		fputs("...", out);
	} else if (json_is_object(json_object_get(schema, "properties"))) {
		callhelp_shape_object(out, schema, depth);
	} else if (t != NULL && strcmp(t, "array") == 0) {
		fputc('[', out);
		callhelp_shape(out, json_object_get(schema, "items"),
		    depth + 1);
		fputc(']', out);
	} else if (t != NULL) {
		fputs(t, out);
	} else if (json_is_array(type)) {
		char *text = print_value(type);

		fputs(text != NULL ? text : "any", out);
		free(text);
	} else {
		fputs("any", out);
	}
}

/* The shape of an object or of an array's items, on a line of its own. */
static void
callhelp_flag_shape(const struct callflags_flag *f)
{
	const json_t *schema = f->schema;

	if (f->type == CALLFLAGS_ARRAY)
		schema = json_object_get(schema, "items");
	if (!json_is_object(json_object_get(schema, "properties")) &&
	    !(f->type == CALLFLAGS_ARRAY && f->item == CALLFLAGS_ARRAY))
		return;
	printf("      shape: ");
	callhelp_shape(stdout, f->schema, 0);
	putchar('\n');
}

/* The flag's line and the line of its type, required, default, enum. */
static void
callhelp_flag(const struct callflags_flag *f)
{
	const json_t *values = json_object_get(f->schema, "enum"), *v;
	const char *desc;
	char *text;
	size_t i;

	if (f->name == NULL)
		printf("  %s=VALUE (no flag)\n", f->prop);
	else if (f->type == CALLFLAGS_BOOLEAN)
		printf("  --%s, --no-%s\n", f->name, f->name);
	else if (f->type == CALLFLAGS_ARRAY && f->item != CALLFLAGS_OBJECT &&
	    f->item != CALLFLAGS_ARRAY)
		printf("  --%s %s...\n", f->name, callhelp_metavars[f->item]);
	else
		printf("  --%s %s\n", f->name, callhelp_metavars[f->type]);
	printf("      %s", callhelp_types[f->type]);
	if (f->type == CALLFLAGS_ARRAY)
		printf(" of %s, one item per flag or a JSON array",
		    f->item == CALLFLAGS_ANY ? "any" : callhelp_types[f->item]);
	if (f->is_required)
		printf(", required");
	callhelp_keyword(f->schema, "default", "default");
	if (json_is_array(values)) {
		printf(", one of:");
		json_array_foreach(values, i, v) {
			text = print_value(v);
			printf("%s %s", i > 0 ? "," : "", text ? text : "?");
			free(text);
		}
	}
	callhelp_keyword(f->schema, "minimum", "minimum");
	callhelp_keyword(f->schema, "maximum", "maximum");
	callhelp_keyword(f->schema, "format", "format");
	putchar('\n');
	callhelp_flag_shape(f);
	desc = json_string_value(json_object_get(f->schema, "description"));
	if (desc == NULL)
		desc = json_string_value(json_object_get(f->schema, "title"));
	if (desc != NULL && desc[0] != '\0')
		callhelp_indented("      ", desc);
}

void
callhelp_print(const struct callflags *cf)
{
	const json_t *tool = cf->tool;
	const json_t *output = json_object_get(tool, "outputSchema");
	const char *title = json_string_value(json_object_get(tool, "title"));
	const char *desc = json_string_value(json_object_get(tool,
	    "description"));
	bool has_reserved = false;

	printf("usage: mcpctl call %s [--FLAG VALUE ...] [KEY=VALUE ...]\n"
	       "       [--args-json JSON] [--timeout MS]\n",
	    cf->see);
	if (title != NULL && title[0] != '\0')
		printf("\n%s\n", title);
	if (desc != NULL && desc[0] != '\0') {
		putchar('\n');
		callhelp_indented("", desc);
	}
	if (cf->nflags == 0)
		printf("\nflags: none, the inputSchema has no properties\n");
	else
		printf("\nflags, from the inputSchema:\n");
	for (size_t i = 0; i < cf->nflags; i++) {
		callhelp_flag(&cf->flags[i]);
		has_reserved |= cf->flags[i].name != NULL &&
		    strncmp(cf->flags[i].name, "arg-", 4) == 0;
	}
	if (output != NULL) {
		printf("\nstructuredContent, from the outputSchema:\n");
		print_pretty(stdout, output);
	}
	printf("\noptions:\n%s", ctl_call_cmd.help);
	if (has_reserved)
		printf(
		    "\nA property named like an option of call or mcpctl is set with --arg-NAME.\n");
}
