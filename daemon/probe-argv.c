/* SPDX-License-Identifier: ISC */
/* The docker argv of a container start: run -i (probe) or create (managed). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd.h"

/* Appends a formatted string to the NULL-terminated vector *v of length *n. */
static void probe_argv_push(char ***v, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
probe_argv_push(char ***v, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char **grown = xreallocarray(*v, *n + 2, sizeof **v);

	*v = grown;
	va_start(ap, fmt);
	xvasprintf(&grown[*n], fmt, ap);
	va_end(ap);
	grown[++*n] = NULL;
}

char **
probe_argv(const struct probe_target *target, const char *name,
    enum docker_phase ph, const int *ports, size_t nports)
{
	const struct server_spec *spec = target->spec;
	char **v = NULL, *agent_did = identity_agent_did(target->agent);
	size_t n = 0;

	probe_argv_push(&v, &n, "%s", docker_program());
	/* Managed: created, then started (probe-http.c says why). */
	if (ph == DOCKER_PHASE_PROBE) {
		probe_argv_push(&v, &n, "run");
		probe_argv_push(&v, &n, "-i");
	} else
		probe_argv_push(&v, &n, "create");
	probe_argv_push(&v, &n, "--name=%s", name);
	probe_argv_push(&v, &n, "--label=io.mcpd.owner=%s", identity_did());
	probe_argv_push(&v, &n, "--label=io.mcpd.agent=%s", target->agent);
	probe_argv_push(&v, &n, "--label=io.mcpd.agent-did=%s", agent_did);
	probe_argv_push(&v, &n, "--label=io.mcpd.server=%s", target->server);
	probe_argv_push(&v, &n, "--label=io.mcpd.image=%s", spec->image);
	probe_argv_push(&v, &n, "--label=io.mcpd.daemon-pid=%ld",
	    (long)getpid());
	probe_argv_push(&v, &n, "--label=io.mcpd.instance=%s",
	    docker_instance());
	probe_argv_push(&v, &n, "--label=io.mcpd.phase=%s",
	    ph == DOCKER_PHASE_PROBE ? "probe" : "managed");
	for (size_t i = 0; i < nports; i++)
		probe_argv_push(&v, &n, "--publish=127.0.0.1::%d", ports[i]);
	/* Names only: the values reach docker through its environment. */
	for (size_t i = 0; spec->env != NULL && spec->env[i] != NULL; i++)
		probe_argv_push(&v, &n, "--env=%.*s",
		    (int)strcspn(spec->env[i], "="), spec->env[i]);
	for (size_t i = 0; spec->volumes != NULL && spec->volumes[i]; i++)
		probe_argv_push(&v, &n, "--volume=%s", spec->volumes[i]);
	if (spec->network != NULL)
		probe_argv_push(&v, &n, "--network=%s", spec->network);
	probe_argv_push(&v, &n, "%s", spec->image);
	for (size_t i = 0; spec->args != NULL && spec->args[i] != NULL; i++)
		probe_argv_push(&v, &n, "%s", spec->args[i]);
	free(agent_did);
	return v;
}
