/* SPDX-License-Identifier: ISC */
/* Logging to the journal (structured) or to stderr with timestamps. */
#ifndef MCPD_LOG_H
#define MCPD_LOG_H

#include <stdarg.h>

/* Where log lines go: stderr with timestamps (-d), or the journal. */
void log_init(int to_stderr, int verbose, const char *progname);

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
