/* SPDX-License-Identifier: ISC */
/* Log lines: timestamped on stderr, or to a sink (the daemon's journal). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static log_sink_fn *log_sink;
static int log_verbose;
static const char *log_progname = "mcpd";

void
log_init(log_sink_fn *sink, int verbose, const char *progname)
{
	log_sink = sink;
	log_verbose = verbose;
	if (progname != NULL)
		log_progname = progname;
}

static void
log_emit(int priority, const char *server, const char *fmt, va_list ap)
{
	char msg[4096];
	struct timespec ts;
	struct tm tm;

	if (priority == LOG_DEBUG && !log_verbose)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (log_sink != NULL) {
		log_sink(priority, server, msg);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%02d:%02d:%02d.%03ld %s: %s%s%s\n", tm.tm_hour,
	    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_progname,
	    server != NULL ? server : "", server != NULL ? ": " : "", msg);
}

static void
log_errno(int priority, int saved, const char *fmt, va_list ap)
{
	char buf[4096];

	vsnprintf(buf, sizeof buf, fmt, ap);
	log_server(priority, NULL, "%s: %s", buf, strerror(saved));
}

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_errno(LOG_WARNING, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_WARNING, NULL, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void
log_server(int priority, const char *server, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(priority, server, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_errno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_CRIT, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
