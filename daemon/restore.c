/* SPDX-License-Identifier: ISC */
/* Restore at start: each saved row is loaded again through its gate. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "mcpd.h"

static size_t restore_total, restore_answered, restore_failed;

static void
restore_status(void)
{
	if (restore_answered < restore_total)
		notify_status("restoring saved servers: %zu of %zu done, %zu "
			      "failed",
		    restore_answered, restore_total, restore_failed);
	else
		notify_status("restored %zu saved servers, %zu failed; "
			      "listening on %s",
		    restore_total, restore_failed, mcpd_opts.socket_path);
}

static void
restore_done(void *arg, const json_t *msg)
{
	char *label = arg;
	const json_t *error = json_object_get(msg, "error");

	restore_answered++;
	if (error != NULL) {
		restore_failed++;
		log_warnx("restore of %s failed: %s", label,
		    json_string_value(json_object_get(error, "message")));
	} else
		log_info("restored %s", label);
	restore_status();
	free(label);
}

static void
restore_row(const char *agent, const json_t *row)
{
	const char *name = json_string_value(json_object_get(row, "name"));
	json_t *params = json_object_get(row, "params");
	char *label;

	if (asprintf(&label, "%s (agent %s)", name != NULL ? name : "?",
		agent) < 0)
		fatal("asprintf");
	if (!json_is_object(params)) {
		log_warnx("the saved row of %s has no params; it is left in "
			  "the file and not restored",
		    label);
		free(label);
		restore_answered++;
		restore_failed++;
		return;
	}
	params = json_deep_copy(params);
	control_dispatch_internal(agent, "mcpd/load", params, restore_done,
	    label);
	json_decref(params);
}

void
restore_start(void)
{
	const json_t *agents = store_agents_peek(mcpd_store), *rows, *row;
	const char *agent;
	size_t i;

	if (store_error(mcpd_store) != NULL) {
		log_warnx("enablement store: %s; nothing is restored, and "
			  "loads that save fail until it is fixed",
		    store_error(mcpd_store));
		notify_status("enablement store refused: %s",
		    store_error(mcpd_store));
		return;
	}
	/* Counted first: a load may answer before the next one is sent. */
	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		restore_total += json_array_size(rows);
	restore_status();
	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		json_array_foreach(rows, i, row)
			restore_row(agent, row);
}
