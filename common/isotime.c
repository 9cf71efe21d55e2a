/* SPDX-License-Identifier: ISC */
/* Wall-clock times in milliseconds, and their ISO 8601 text in UTC. */
#include <stdio.h>
#include <time.h>

#include "isotime.h"

int64_t
isotime_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
isotime_format(char buf[ISOTIME_LEN], int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char day[20];

	/* Before the epoch (a clock set wrong): the epoch, not garbage. */
	if (ms < 0) {
		t = 0;
		ms = 0;
	}
	gmtime_r(&t, &tm);
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, ISOTIME_LEN, "%.19s.%03dZ", day, (int)(ms % 1000));
}
