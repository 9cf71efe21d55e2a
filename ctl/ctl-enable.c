/* SPDX-License-Identifier: ISC */
/* mcpctl disable and enable: stop a server keeping its row, start it again. */
#include <stdlib.h>

#include "mcpctl.h"

static void
ctl_enable_print_disabled(const json_t *result)
{
	char *name = print_value(json_object_get(result, "name"));

	if (json_is_true(json_object_get(result, "already")))
		printf("%s is already disabled; nothing was changed\n", name);
	else {
		printf("disabled %s: stopped", name);
		if (json_is_true(json_object_get(result, "container_removed")))
			printf(", container removed");
		printf(
		    "; its row stays saved, and mcpctl enable %s starts it\n",
		    name);
	}
	free(name);
}

static void
ctl_enable_print_enabled(const json_t *result)
{
	char *name = print_value(json_object_get(result, "name"));

	if (json_is_true(json_object_get(result, "already")))
		printf("%s is already enabled; nothing was changed\n", name);
	else
		ctl_load_print_result("enabled", result);
	free(name);
}

/* Both take TARGET; only enable takes --timeout (it starts the server). */
static int
ctl_enable_run(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv, bool is_enable)
{
	json_t *params = NULL;
	int r = mcpctl_parse_target(cmd, argc, argv, is_enable, &params);

	if (r != -1)
		return r;
	if (!is_enable)
		return mcpctl_run(m, "mcpd/disable", params,
		    ctl_enable_print_disabled);
	ctl_load_progress(m, params, NULL);
	return mcpctl_run(m, "mcpd/enable", params, ctl_enable_print_enabled);
}

static int
ctl_enable_exec_disable(struct mcpctl *m, const struct mcpctl_cmd *cmd,
    int argc, char **argv)
{
	return ctl_enable_run(m, cmd, argc, argv, false);
}

static int
ctl_enable_exec_enable(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	return ctl_enable_run(m, cmd, argc, argv, true);
}

const struct mcpctl_cmd ctl_disable_cmd = {
	.name = "disable",
	.synopsis = "TARGET",
	.summary =
	    "stop a server but keep its saved row (mcpctl enable starts it)",
	.help =
	    "  -h, --help         this text\n"
	    "\n"
	    "The server stops as with unload (a container is removed), but its\n"
	    "row, secrets and authorization stay saved, marked disabled: mcpd\n"
	    "does not start it at its next start, list shows it as disabled,\n"
	    "its tools are not offered and a call to it fails. Disabling a\n"
	    "disabled server changes nothing.\n",
	.exec = ctl_enable_exec_disable,
	.options = mcpctl_target_options,
};

const struct mcpctl_cmd ctl_enable_cmd = {
	.name = "enable",
	.synopsis = "TARGET [--timeout MS]",
	.summary = "start a disabled server again from its saved row",
	.help =
	    "  --timeout MS       deadline of the start and handshake\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The disabled mark goes from the saved row first; then the server\n"
	    "starts with the same name, settings and secrets, as at mcpd's\n"
	    "start. Enabling a server that is not disabled changes nothing.\n",
	.exec = ctl_enable_exec_enable,
	.options = mcpctl_target_options,
};
