/* SPDX-License-Identifier: ISC */
/* Wall-clock times in milliseconds, and their ISO 8601 text in UTC. */
#ifndef MCPD_ISOTIME_H
#define MCPD_ISOTIME_H

#include <stdint.h>

/* "2026-12-03T07:27:55.123Z" and its NUL. */
#define ISOTIME_LEN 25

/* The wall clock (CLOCK_REALTIME) in milliseconds since the epoch. */
int64_t isotime_now_ms(void);
/* ms since the epoch as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC) in buf. */
void isotime_format(char buf[ISOTIME_LEN], int64_t ms);

#endif
