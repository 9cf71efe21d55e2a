/* SPDX-License-Identifier: ISC */
/* The journal as the log's sink: records with fields (MCP_SERVER=name). */
#include <systemd/sd-journal.h>

#include "mcpd.h"

void
log_journal(int priority, const char *server, const char *msg)
{
	if (server != NULL)
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", priority,
		    "MCP_SERVER=%s", server, NULL);
	else
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", priority,
		    NULL);
}
