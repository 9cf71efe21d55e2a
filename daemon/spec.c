/* SPDX-License-Identifier: ISC */
/* What a server runs or reaches: its id, endpoint and transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"

void
spec_clear(struct server_spec *spec)
{
	child_strv_free(spec->argv);
	child_strv_free(spec->env);
	free(spec->cwd);
	free(spec->remote.url);
	json_decref(spec->remote.headers);
	free(spec->transport);
	free(spec->image);
	child_strv_free(spec->args);
	child_strv_free(spec->volumes);
	free(spec->network);
	memset(spec, 0, sizeof *spec);
}

/* True when an argument needs quotes to read back as one word. */
static bool
spec_needs_quotes(const char *a)
{
	return a[0] == '\0' ||
	    strpbrk(a, " \t\n'\"\\$`*?;&|<>(){}[]#~") != NULL;
}

/* The command line as a shell user would type it (display only). */
static char *
spec_command_line(char *const *argv)
{
	size_t len = 1;
	char *line, *p;

	for (size_t i = 0; argv[i] != NULL; i++)
		len += strlen(argv[i]) * 4 + 3;
	if ((p = line = malloc(len)) == NULL)
		return NULL;
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		if (!spec_needs_quotes(argv[i])) {
			p = stpcpy(p, argv[i]);
			continue;
		}
		*p++ = '\'';
		for (const char *c = argv[i]; *c != '\0'; c++)
			p = *c == '\'' ? stpcpy(p, "'\\''") : (*p = *c, p + 1);
		*p++ = '\'';
	}
	*p = '\0';
	return line;
}

char *
spec_endpoint(const struct server_spec *spec)
{
	char *line, *all;

	if (spec->remote.url != NULL)
		return strdup(spec->remote.url);
	if (spec->image == NULL)
		return spec_command_line(spec->argv);
	if (spec->args == NULL || spec->args[0] == NULL)
		return strdup(spec->image);
	if ((line = spec_command_line(spec->args)) == NULL ||
	    asprintf(&all, "%s %s", spec->image, line) < 0)
		all = NULL;
	free(line);
	return all;
}

const char *
spec_transport_name(const struct server_spec *spec)
{
	if (spec->transport != NULL)
		return spec->transport;
	return spec->remote.url != NULL ? "streamable-http" : "stdio";
}

/* Appends each string of v (up to '=' when is_names) and a NUL. */
static void
spec_target_add(FILE *f, char *const *v, bool is_names)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
		fwrite(v[i], 1, is_names ? strcspn(v[i], "=") : strlen(v[i]),
		    f);
		fputc('\0', f);
	}
	fputc('\0', f);
}

/*
 * What identifies a process or container target: argv (or image, args,
 * volumes, network), cwd, then the env names (values may be secrets).
 */
static char *
spec_local_target(const struct server_spec *spec, size_t *ret_len)
{
	char *target = NULL, *const image[] = { spec->image, spec->network,
		NULL };
	FILE *f = open_memstream(&target, ret_len);

	if (f == NULL)
		return NULL;
	if (spec->image != NULL) {
		spec_target_add(f, image, false);
		spec_target_add(f, spec->args, false);
		spec_target_add(f, spec->volumes, false);
	} else
		spec_target_add(f, spec->argv, false);
	fprintf(f, "%s%c", spec->cwd != NULL ? spec->cwd : "", '\0');
	spec_target_add(f, spec->env, true);
	if (fclose(f) != 0) {
		free(target);
		return NULL;
	}
	return target;
}

char *
spec_id(const char *agent, enum server_mode mode,
    const struct server_spec *spec)
{
	size_t len;
	char *target, *id;

	if (spec->remote.url != NULL)
		return identity_connection_id(agent, server_mode_name(mode),
		    spec->remote.url, strlen(spec->remote.url));
	if ((target = spec_local_target(spec, &len)) == NULL)
		return NULL;
	id = identity_connection_id(agent, server_mode_name(mode), target, len);
	free(target);
	return id;
}
