/* SPDX-License-Identifier: ISC */
/* Project files made a bridge's view: trusted, then their servers loaded. */
#include <stdint.h>
#include <string.h>

#include "mcpctl.h"

/*
 * mcpd loads each defined server (not saved; shared with a server of the
 * agent that runs the same, whatever its name): its name joins the view.
 */
static void
project_load_defines(struct mcpctl *m, struct projectfile *p)
{
	const char *name;
	json_t *def, *params, *result = NULL, *error = NULL;

	json_object_foreach((json_t *)(uintptr_t)p->define, name, def) {
		params = json_deep_copy(def);
		json_object_set_new(params, "name", json_string(name));
		json_object_set_new(params, "persist", json_false());
		json_object_set_new(params, "share", json_true());
		if (mcpctl_request_error(m, "mcpd/load", params, &result,
			&error) != 0) {
			projectfile_fail(p, "its server %s did not load: %s",
			    name,
			    error != NULL ?
				json_string_value(json_object_get(error,
				    "message")) :
				"mcpd did not answer");
			json_decref(error);
			return;
		}
		json_array_append(p->servers, json_object_get(result, "name"));
		json_decref(result);
	}
}

void
ctl_project_apply(struct mcpctl *m, struct projectfile *p, bool may_load)
{
	json_t *params, *result = NULL;
	int r;

	if (p->path == NULL || p->error != NULL ||
	    json_object_size(p->define) == 0)
		return;
	/* A file that runs programs is used once the user trusted it. */
	params = json_pack("{s:s, s:s, s:s%}", "op", "check", "path", p->path,
	    "text", p->text, p->len);
	if ((r = mcpctl_request(m, "mcpd/project", params, &result)) != 0) {
		projectfile_fail(p, "mcpd did not say whether it is trusted");
		return;
	}
	p->is_trusted = json_is_true(json_object_get(result, "trusted"));
	p->was_trusted = json_is_string(json_object_get(result,
	    "trusted_digest"));
	json_decref(result);
	if (!p->is_trusted)
		projectfile_fail_untrusted(p);
	else if (may_load)
		project_load_defines(m, p);
}
