/* SPDX-License-Identifier: ISC */
/* mcpd/load of an image: a container server, checked before it exists. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"
#include "names.h"

/* Volumes and a network are passed to docker as they are, one argument each. */
static bool
cmd_load_image_docker_args(struct request *req, json_t *params,
    struct server_spec *spec)
{
	const char *network = cmd_string(params, "network");

	if (!cmd_load_strv(req, "args", json_object_get(params, "args"),
		&spec->args) ||
	    !cmd_load_strv(req, "volumes", json_object_get(params, "volumes"),
		&spec->volumes))
		return false;
	for (size_t i = 0; spec->volumes != NULL && spec->volumes[i]; i++)
		if (spec->volumes[i][0] == '\0' || spec->volumes[i][0] == '-')
			return cmd_load_bad(req, "volumes",
			    "a volume is SOURCE:TARGET[:OPTIONS], not empty "
			    "and not an option");
	if (network != NULL &&
	    (network[0] == '\0' || network[0] == '-' ||
		strlen(network) !=
		    json_string_length(json_object_get(params, "network"))))
		return cmd_load_bad(req, "network",
		    "network must name a docker network");
	if (network != NULL && (spec->network = strdup(network)) == NULL)
		fatal("strdup");
	return true;
}

static bool
cmd_load_image_spec(struct request *req, json_t *params, const char *target,
    struct server_spec *spec)
{
	char *cause = NULL;

	if (json_object_get(params, "allow_local") != NULL ||
	    json_object_get(params, "headers") != NULL ||
	    json_object_get(params, "cwd") != NULL)
		return cmd_load_bad(req, "target",
		    "an image takes no allow_local, headers or cwd");
	if (json_object_get(params, "transport") != NULL)
		return cmd_load_bad(req, "transport",
		    "a container's transport is detected: stdio first, "
		    "streamable HTTP once it says it listens");
	if (names_image_normalize(target, &spec->image, &cause) < 0) {
		cmd_load_bad(req, "target",
		    cause != NULL ? cause : "bad image");
		free(cause);
		return false;
	}
	return cmd_load_image_docker_args(req, params, spec) &&
	    cmd_load_env(req, json_object_get(params, "env"), spec);
}

void
cmd_load_image(struct request *req, json_t *params, const char *target,
    int timeout)
{
	struct server_spec spec = { 0 };
	char *name = NULL, *cause = NULL;

	if (!cmd_load_image_spec(req, params, target, &spec) ||
	    (name = cmd_load_name(req, params, names_from_image(spec.image),
		 "the image")) == NULL)
		goto out;
	/* A restore goes on: its server is listed as failed if docker is not. */
	if (!control_is_internal(req) && docker_available(&cause) < 0) {
		control_fail(req, ERRORS_UNAVAILABLE, NULL, "%s", cause);
		goto out;
	}
	cmd_load_start(req, params, name, SERVER_CONTAINER, &spec, timeout);
out:
	free(cause);
	free(name);
	spec_clear(&spec);
}
