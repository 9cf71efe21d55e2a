/* SPDX-License-Identifier: ISC */
/*
 * The instructions a gateway session gets at initialize: its servers' own,
 * each under a heading naming the server, within --max-instructions bytes
 * in all; a one-server view gets its server's text as it is.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"

#define GATEWAY_INSTRUCTIONS_SELF \
	"The tools of every MCP server mcpd runs for this agent, named <server>__<tool>; _meta[\"io.mcpd/server\"] says whose."

/* How many of text's first len bytes end on a whole UTF-8 character. */
static size_t
gateway_instructions_whole(const char *text, size_t len)
{
	while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
		len--;
	return len;
}

/* Appends text to out, cut to share bytes with a note that says so. */
static void
gateway_instructions_add(FILE *out, const char *server, const char *text,
    size_t share)
{
	size_t len = strlen(text), keep;

	if (len <= share) {
		fputs(text, out);
		return;
	}
	keep = gateway_instructions_whole(text, share);
	fwrite(text, 1, keep, out);
	fprintf(out,
	    "\n[cut by mcpd: %zu more bytes; `mcpctl inspect %s` shows them all]",
	    len - keep, server);
}

char *
gateway_instructions(const char *agent, const json_t *scope)
{
	json_t *all = server_gateway_instructions(agent, scope), *one;
	size_t n = json_array_size(all), left = mcpd_opts.max_instructions;
	/* One server: its own words (or none), as it gave them. */
	bool is_one = json_array_size(scope) == 1;
	const char *server, *words;
	size_t i, share, len;
	char *text = NULL;
	FILE *out;

	if ((out = open_memstream(&text, &len)) == NULL)
		fatal("open_memstream");
	if (!is_one)
		fputs(GATEWAY_INSTRUCTIONS_SELF, out);
	json_array_foreach(all, i, one) {
		server = json_string_value(json_object_get(one, "server"));
		words = json_string_value(json_object_get(one, "instructions"));
		/* What one leaves unused goes to those after it. */
		share = left / (n - i);
		if (!is_one)
			fprintf(out, "\n\n## %s\n\n", server);
		gateway_instructions_add(out, server, words, share);
		left -= strlen(words) < share ? strlen(words) : share;
	}
	if (fclose(out) != 0)
		fatal("open_memstream");
	json_decref(all);
	if (len == 0) {
		free(text);
		return NULL;
	}
	return text;
}
