/* SPDX-License-Identifier: ISC */
/*
 * What a session that listens is told while it has no GET stream: its
 * client opens one again after a close (an upgrade of mcpd, a network
 * blip; the SDK waits the stream's retry time first), and a list_changed
 * sent in that gap must not be lost. The notifications are kept, within
 * --max-client-output, and sent first on the session's next GET stream;
 * the same list_changed or resources/updated twice is kept once.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <string.h>

#include <event2/http.h>
#include <jansson.h>

#include "httpd-int.h"
#include "log.h"
#include "mcpd.h"

/* Told twice, it says no more than once: a list changed, a resource. */
static bool
httpd_unheard_is_idempotent(const char *line, size_t len)
{
	static const char *const ends[] = { "list_changed\"",
		"\"notifications/resources/updated\"" };

	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
		if (memmem(line, len, ends[i], strlen(ends[i])) != NULL)
			return true;
	return false;
}

static bool
httpd_unheard_has(const struct httpd_session *hs, const char *line, size_t len)
{
	size_t i;
	const json_t *e;

	json_array_foreach(hs->unheard, i, e)
		if (json_string_length(e) == len &&
		    memcmp(json_string_value(e), line, len) == 0)
			return true;
	return false;
}

void
httpd_unheard_keep(struct httpd_session *hs, const char *line, size_t len)
{
	if (!hs->has_listened)
		return; /* it never opened a stream: nothing is for it */
	if (hs->unheard == NULL)
		hs->unheard = json_array();
	if (httpd_unheard_is_idempotent(line, len) &&
	    httpd_unheard_has(hs, line, len))
		return;
	if (hs->unheard_bytes + len > mcpd_opts.max_client_output) {
		if (!hs->is_unheard_over)
			log_warnx(
			    "HTTP front: a session's notifications while it has no GET stream are over --max-client-output (%zu bytes); later ones are dropped",
			    mcpd_opts.max_client_output);
		hs->is_unheard_over = true;
		return;
	}
	xenomem(json_array_append_new(hs->unheard,
	    json_stringn_nocheck(line, len)));
	hs->unheard_bytes += len;
}

void
httpd_unheard_send(struct httpd_session *hs)
{
	json_t *kept = hs->unheard;
	const json_t *e;
	size_t i;

	hs->has_listened = true;
	hs->unheard = NULL;
	hs->unheard_bytes = 0;
	hs->is_unheard_over = false;
	json_array_foreach(kept, i, e)
		httpd_stream_notify(hs, json_string_value(e),
		    json_string_length(e));
	json_decref(kept);
}

void
httpd_unheard_free(struct httpd_session *hs)
{
	json_decref(hs->unheard);
	hs->unheard = NULL;
	hs->unheard_bytes = 0;
}

json_t *
httpd_unheard_save(const struct httpd_session *hs)
{
	return json_pack("{s:b, s:O?}", "listened",
	    hs->has_listened || hs->stream != NULL, "kept", hs->unheard);
}

void
httpd_unheard_adopt(struct httpd_session *hs, const json_t *saved)
{
	const json_t *kept = json_object_get(saved, "kept"), *e;
	size_t i;

	hs->has_listened = json_is_true(json_object_get(saved, "listened"));
	json_array_foreach(kept, i, e)
		if (json_is_string(e))
			httpd_unheard_keep(hs, json_string_value(e),
			    json_string_length(e));
}
