/* SPDX-License-Identifier: ISC */
/* Connection generations that never repeat across restarts of the daemon. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "fileio.h"
#include "log.h"
#include "mcpd.h"

/*
 * <state>/generations holds a ceiling: no run of mcpd has issued a higher
 * generation. A run starts above it and reserves a block at once, so one
 * small write at start covers GENERATION_BLOCK (re)connections; a run
 * that uses them up reserves the next block before it goes past.
 */
#define GENERATION_FILE	 "generations"
#define GENERATION_BLOCK 1000

static char *generation_path;
static uint64_t generation_base;    /* this run's first is base + 1 */
static uint64_t generation_ceiling; /* written: nothing goes above it */

static int
generation_save(uint64_t ceiling, char **cause)
{
	char text[32];
	int len = snprintf(text, sizeof text, "%" PRIu64 "\n", ceiling);
	int r = fileio_write_atomic(generation_path, text, (size_t)len, 0600,
	    cause);

	if (r == 0)
		generation_ceiling = ceiling;
	return r;
}

int
generation_init(const char *state_dir, char **cause)
{
	char text[32] = "", *end;
	FILE *f;
	size_t n;

	free(generation_path);
	xasprintf(&generation_path, "%s/%s", state_dir, GENERATION_FILE);
	if ((f = fopen(generation_path, "re")) != NULL) {
		n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = '\0';
		errno = 0;
		generation_base = strtoull(text, &end, 10);
		if (errno != 0 || end == text || (*end != '\n' && *end != '\0'))
			return errors_cause(cause, -EINVAL,
			    "%s is damaged (it should hold one number); remove it only if no handle issued before matters",
			    generation_path);
	} else if (errno != ENOENT)
		return errors_cause(cause, -errno, "cannot read %s: %s",
		    generation_path, strerror(errno));
	return generation_save(generation_base + GENERATION_BLOCK, cause);
}

uint64_t
generation_first(void)
{
	return generation_base + 1;
}

uint64_t
generation_after(uint64_t current)
{
	uint64_t next = current == 0 ? generation_first() : current + 1;
	char *cause = NULL;

	if (next > generation_ceiling &&
	    generation_save(next + GENERATION_BLOCK, &cause) < 0) {
		/* Said loudly: a handle of the next run could match this one. */
		log_warnx("generation %" PRIu64
			  " is above the saved ceiling: %s",
		    next, cause != NULL ? cause : "cannot write");
		free(cause);
	}
	return next;
}
