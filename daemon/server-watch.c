/* SPDX-License-Identifier: ISC */
/* The watchers of the server layer: who hears what it tells the layers above. */
#include <stddef.h>

#include "log.h"
#include "mcpd.h"
#include "server-watch.h"

static const struct server_watch *server_watches[SERVER_WATCH_MAX];
static size_t server_nwatches;

void
server_watch_add(const struct server_watch *w)
{
	if (server_nwatches == SERVER_WATCH_MAX)
		fatalx("more than %d watchers of the server layer",
		    SERVER_WATCH_MAX);
	server_watches[server_nwatches++] = w;
}

void
server_watch_clear(void)
{
	server_nwatches = 0;
}

void
server_watch_tools_changed(const char *agent)
{
	for (size_t i = 0; i < server_nwatches; i++)
		if (server_watches[i]->tools_changed != NULL)
			server_watches[i]->tools_changed(agent);
}

void
server_watch_subs_renew(const char *agent, const char *server)
{
	for (size_t i = 0; i < server_nwatches; i++)
		if (server_watches[i]->subs_renew != NULL)
			server_watches[i]->subs_renew(agent, server);
}

void
server_watch_subs_updated(const char *agent, const char *server,
    const json_t *params)
{
	for (size_t i = 0; i < server_nwatches; i++)
		if (server_watches[i]->subs_updated != NULL)
			server_watches[i]->subs_updated(agent, server, params);
}

bool
server_watch_is_used(const char *agent, const char *server)
{
	for (size_t i = 0; i < server_nwatches; i++)
		if (server_watches[i]->is_used != NULL &&
		    server_watches[i]->is_used(agent, server))
			return true;
	return false;
}

void
server_watch_roots_answer(const char *agent, const char *server,
    struct session *sess, const json_t *id)
{
	for (size_t i = 0; i < server_nwatches; i++)
		if (server_watches[i]->roots_answer != NULL) {
			server_watches[i]->roots_answer(agent, server, sess,
			    id);
			return;
		}
	/* A server's request, not a caller's completion: answered now. */
	session_answer(sess,
	    jsonrpc_result((json_t *)(uintptr_t)id,
		json_pack("{s:[]}", "roots")));
}
