/* SPDX-License-Identifier: ISC */
/* systemd integration: readiness, status, the watchdog, socket activation. */
#include <stdarg.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "mcpd.h"

static struct event *notify_watchdog_timer;

int
notify_listen_fd(void)
{
	int n = sd_listen_fds(1);

	if (n < 0) {
		log_warnx("ignoring LISTEN_FDS: %d", n);
		return -1;
	}
	if (n == 0)
		return -1;
	if (n > 1)
		log_warnx("%d sockets passed; using the first", n);
	if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <=
	    0)
		fatalx(
		    "the socket passed by systemd is not a listening unix stream socket");
	return SD_LISTEN_FDS_START;
}

void
notify_ready(void)
{
	sd_notify(0, "READY=1");
}

void
notify_reloading(void)
{
	sd_notify(0, "RELOADING=1");
}

void
notify_status(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", buf);
}

void
notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

static void
notify_watchdog_tick(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	sd_notify(0, "WATCHDOG=1");
}

void
notify_watchdog_start(void)
{
	uint64_t usec;
	struct timeval tv;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return;
	usec /= 2;
	tv.tv_sec = usec / 1000000;
	tv.tv_usec = usec % 1000000;
	notify_watchdog_timer = event_new(mcpd_base, -1, EV_PERSIST,
	    notify_watchdog_tick, NULL);
	event_add(notify_watchdog_timer, &tv);
	sd_notify(0, "WATCHDOG=1");
}
