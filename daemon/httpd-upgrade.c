/* SPDX-License-Identifier: ISC */
/* The HTTP front across an upgrade: its listener and its sessions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpd-int.h"
#include "log.h"
#include "mcpd.h"

/*
 * Quiet when no request waits for its answer and no connection that may
 * carry another is open. A kept-alive connection ends on its next answer
 * (it says Connection: close); one quiet for --upgrade-http-wait is closed
 * (its client is not calling in a loop; a request it writes at that very
 * moment is lost, as at any server's close of an idle connection).
 */
const char *
httpd_upgrade_busy(void)
{
	const struct httpd_session *hs;

	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (!TAILQ_EMPTY(&hs->pending))
			return "HTTP requests are being answered";
	if (httpd_req_close_quiet((uint64_t)mcpd_opts.upgrade_http_wait_ms) > 0)
		return "HTTP connections kept alive are still open";
	return NULL;
}

/*
 * No connection is accepted while an upgrade drains (they wait in the
 * backlog for the new process), and each answer given meanwhile closes
 * its connection: the client's next request comes on a new one.
 */
void
httpd_upgrade_hold(bool hold)
{
	struct httpd_session *hs;
	struct httpd_pending *p;

	httpd_conns_hold(hold);
	if (!hold)
		return;
	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		TAILQ_FOREACH(p, &hs->pending, entry)
			if (p->req != NULL)
				httpd_req_close_after(p->req);
}

/* A session with its id; its stream, if any, is resumed by its client. */
static json_t *
httpd_session_save(struct httpd_session *hs)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o}", "id", hs->id,
	    "remote", hs->remote, "agent", hs->agent, "path", hs->path,
	    "streams", (int)hs->streams, "client",
	    control_client_save(hs->client), "unheard", httpd_unheard_save(hs));
}

json_t *
httpd_upgrade_save(void)
{
	json_t *sessions = json_array();
	struct httpd_session *hs;

	if (httpd_conns_fd() < 0)
		return json_null();
	TAILQ_FOREACH(hs, &httpd_sessions, entry)
		if (!hs->is_stateless && hs->client != NULL)
			json_array_append_new(sessions, httpd_session_save(hs));
	return json_pack("{s:i, s:s?, s:o}", "listen",
	    upgrade_keep_fd(httpd_conns_fd()), "addr", mcpd_opts.listen_http,
	    "sessions", sessions);
}

static void
httpd_session_adopt(const json_t *e)
{
	const json_t *client = json_object_get(e, "client");
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *remote = json_string_value(json_object_get(e, "remote"));
	const char *agent = json_string_value(json_object_get(e, "agent"));
	const char *path = json_string_value(json_object_get(e, "path"));
	struct httpd_session *hs;

	if (id == NULL || agent == NULL || path == NULL ||
	    strlen(id) >= sizeof hs->id)
		return;
	hs = httpd_session_make(agent,
	    json_string_value(json_object_get(client, "profile")), path,
	    control_client_saved_scope(client));
	snprintf(hs->id, sizeof hs->id, "%s", id);
	snprintf(hs->remote, sizeof hs->remote, "%s",
	    remote != NULL ? remote : "?");
	hs->streams = (unsigned)json_integer_value(json_object_get(e,
	    "streams"));
	control_client_restore(hs->client, client);
	httpd_unheard_adopt(hs, json_object_get(e, "unheard"));
}

int
httpd_upgrade_adopt(const char *addr, const json_t *http, char **cause)
{
	const json_t *sessions = json_object_get(http, "sessions"), *e;
	const char *was = json_string_value(json_object_get(http, "addr"));
	int fd = (int)json_integer_value(json_object_get(http, "listen"));
	size_t i;

	/* Another address in the settings now: the old socket goes. */
	if (!json_is_object(http) || was == NULL || strcmp(was, addr) != 0) {
		if (json_is_object(http))
			close(fd);
		return httpd_listen(addr, cause);
	}
	httpd_listening(fd, addr);
	json_array_foreach(sessions, i, e)
		httpd_session_adopt(e);
	return 0;
}
