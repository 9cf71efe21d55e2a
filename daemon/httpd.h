/* SPDX-License-Identifier: ISC */
/* The HTTP front's declarations: MCP over Streamable HTTP (daemon/httpd*.c). */
#ifndef MCPD_HTTPD_H
#define MCPD_HTTPD_H

#include "mcpd.h"

/* httpd.c: MCP over Streamable HTTP on loopback, in front of the gateway. */
/* What the front hears from the server layer: its open GET streams use servers. */
extern const struct server_watch httpd_server_watch;
/* Listens on addr ("127.0.0.1:PORT", "[::1]:PORT"): loopback only. */
int httpd_listen(const char *addr, char **cause);
/* HTTP sessions open now (mcpd/status). */
size_t httpd_session_count(void);
void httpd_close(void);
/* httpd-access.c: who may use the HTTP front, and where it listens. */
struct httphead;
/*
 * The agent of a request with headers h: Host and Origin (when sent) must
 * name loopback, the bearer token an agent's (*ret_profile: the profile
 * it is bound to, or NULL); else NULL, with the HTTP status (403, 401)
 * and why.
 */
const char *httpd_access_agent(const struct httphead *h,
    const char **ret_profile, int *ret_status, const char **ret_why);
/* addr "127.0.0.1:PORT" or "[::1]:PORT": a loopback address, split. */
int httpd_access_addr(const char *addr, char *host, size_t size, int *ret_port,
    char **cause);
/* httpd-modern.c: a 2026-07-28 request over HTTP. */
/* Its MCP-Protocol-Version header or _meta says a version other than 2025's. */
bool httpd_modern_is(const char *header, const json_t *msg);
/*
 * NULL when msg's headers h and _meta are what 2026-07-28 asks; else the
 * JSON-RPC error to answer with (new), HTTP status httpd_modern_status.
 */
json_t *httpd_modern_refusal(const struct httphead *h, const json_t *msg);
/* The HTTP status of a 2026-07-28 answer: 404 for -32601, 400 for ... */
int httpd_modern_status(const json_t *answer);

/* httpd-upgrade.c */
/* Why the front is not quiet yet (a static text), or NULL. */
const char *httpd_upgrade_busy(void);
void httpd_upgrade_hold(bool hold);
json_t *httpd_upgrade_save(void);
/* The front on the saved listening socket, with its sessions. */
int httpd_upgrade_adopt(const char *addr, const json_t *http, char **cause);

#endif
