/* SPDX-License-Identifier: ISC */
/* Logging to stderr with timestamps, or to a sink (the daemon's journal). */
#ifndef MCPD_LOG_H
#define MCPD_LOG_H

#include <stdarg.h>

/* Takes each line in place of stderr; server is NULL or an MCP server. */
typedef void log_sink_fn(int priority, const char *server, const char *msg);
/* Where log lines go: stderr with timestamps (sink NULL), or the sink. */
void log_init(log_sink_fn *sink, int verbose, const char *progname);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/* One line about one MCP server: the journal gets MCP_SERVER=name. */
void log_server(int priority, const char *server, const char *, ...)
    __attribute__((format(printf, 3, 4)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
