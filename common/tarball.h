/* SPDX-License-Identifier: ISC */
/* Reading members of a tar archive held in memory (ustar, GNU, pax names). */
#ifndef MCPD_TARBALL_H
#define MCPD_TARBALL_H

#include <stdbool.h>
#include <stddef.h>

/* One member: its name (NUL-terminated, at most 4096 bytes) and data. */
struct tarball_member {
	char name[4097];
	char type; /* '0' file, '5' directory, '2' symlink, ... */
	const unsigned char *data;
	size_t size;
};

struct tarball {
	const unsigned char *buf;
	size_t len;
	size_t at; /* the next header's offset */
};

void tarball_init(struct tarball *, const void *buf, size_t len);
/*
 * The next member into *m (its data points into the buffer): 1, 0 at the
 * end of the archive, -EINVAL when a header is broken or a member runs
 * past the end. A GNU long name ('L') or a pax path ('x') names the member
 * that follows it; "./" and "/" in front of names are dropped.
 */
int tarball_next(struct tarball *, struct tarball_member *m);
/* The regular file called name: 1 and *m, 0 when absent, or -EINVAL. */
int tarball_find(const void *buf, size_t len, const char *name,
    struct tarball_member *m);

#endif
