/* SPDX-License-Identifier: ISC */
/* Reading members of a tar archive held in memory (ustar, GNU, pax names). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tarball.h"

#define TARBALL_BLOCK 512
#define TARBALL_NAME  4096 /* longest name kept */

void
tarball_init(struct tarball *t, const void *buf, size_t len)
{
	t->buf = buf;
	t->len = len;
	t->at = 0;
}

/* An octal field (or GNU base-256 for big sizes) into *ret; false if bad. */
static bool
tarball_number(const unsigned char *f, size_t n, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		/* Base-256: the rest of the field, big-endian. */
		if (f[0] != 0x80)
			return false;
		for (i = 1; i < n; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*ret = v;
		return true;
	}
	while (i < n && (f[i] == ' ' || f[i] == '\0'))
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return false;
		v = v * 8 + (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return false;
	*ret = v;
	return true;
}

static bool
tarball_is_zero(const unsigned char *h)
{
	for (size_t i = 0; i < TARBALL_BLOCK; i++)
		if (h[i] != 0)
			return false;
	return true;
}

/* The header's checksum (unsigned sum, the field itself as spaces) holds. */
static bool
tarball_checksum_ok(const unsigned char *h)
{
	uint64_t want, sum = 0;

	if (!tarball_number(h + 148, 8, &want))
		return false;
	for (size_t i = 0; i < TARBALL_BLOCK; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return sum == want;
}

/* Sets name from s (len bytes, maybe not NUL-terminated), less "./" and "/". */
static void
tarball_set_name(char *name, const char *s, size_t len)
{
	const char *nul = memchr(s, '\0', len);

	if (nul != NULL)
		len = (size_t)(nul - s);
	for (;;) {
		if (len >= 2 && s[0] == '.' && s[1] == '/') {
			s += 2;
			len -= 2;
		} else if (len >= 1 && s[0] == '/') {
			s++;
			len--;
		} else
			break;
	}
	if (len > TARBALL_NAME)
		len = TARBALL_NAME;
	memcpy(name, s, len);
	name[len] = '\0';
}

/* The path= record of a pax extended header into name; false if none. */
static bool
tarball_pax_path(const unsigned char *data, size_t size, char *name)
{
	size_t at = 0;

	while (at < size) {
		const char *rec = (const char *)data + at, *sp, *eq;
		size_t reclen = 0, i = 0;

		while (at + i < size && rec[i] >= '0' && rec[i] <= '9' &&
		    i < 10)
			reclen = reclen * 10 + (size_t)(rec[i++] - '0');
		if (i == 0 || reclen <= i || reclen > size - at ||
		    rec[i] != ' ')
			return false;
		sp = rec + i + 1;
		eq = memchr(sp, '=', reclen - i - 1);
		if (eq != NULL && eq - sp == 4 && memcmp(sp, "path", 4) == 0) {
			/* The value runs up to the record's newline. */
			tarball_set_name(name, eq + 1,
			    (size_t)(rec + reclen - 1 - (eq + 1)));
			return true;
		}
		at += reclen;
	}
	return false;
}

int
tarball_next(struct tarball *t, struct tarball_member *m)
{
	char long_name[TARBALL_NAME + 1];
	bool has_long = false;

	for (;;) {
		const unsigned char *h;
		uint64_t size;
		size_t padded;

		if (t->len - t->at < TARBALL_BLOCK)
			return t->at == t->len ? 0 : -EINVAL;
		h = t->buf + t->at;
		if (tarball_is_zero(h))
			return 0;
		if (!tarball_checksum_ok(h) ||
		    !tarball_number(h + 124, 12, &size))
			return -EINVAL;
		if (size > t->len - t->at - TARBALL_BLOCK)
			return -EINVAL;
		padded = (size_t)(size + TARBALL_BLOCK - 1) / TARBALL_BLOCK *
		    TARBALL_BLOCK;
		if (padded > t->len - t->at - TARBALL_BLOCK)
			padded = t->len - t->at - TARBALL_BLOCK;
		m->type = h[156] == '\0' ? '0' : (char)h[156];
		m->data = h + TARBALL_BLOCK;
		m->size = (size_t)size;
		t->at += TARBALL_BLOCK + padded;
		if (m->type == 'L') {
			tarball_set_name(long_name, (const char *)m->data,
			    m->size);
			has_long = true;
			continue;
		}
		if (m->type == 'x') {
			has_long = tarball_pax_path(m->data, m->size,
			    long_name);
			continue;
		}
		if (m->type == 'g')
			continue;
		if (has_long) {
			memcpy(m->name, long_name, strlen(long_name) + 1);
		} else if (memcmp(h + 257, "ustar", 5) == 0 && h[345] != '\0') {
			char joined[155 + 1 + 100 + 1];
			size_t plen = strnlen((const char *)h + 345, 155);
			size_t nlen = strnlen((const char *)h, 100);

			memcpy(joined, h + 345, plen);
			joined[plen] = '/';
			memcpy(joined + plen + 1, h, nlen);
			tarball_set_name(m->name, joined, plen + 1 + nlen);
		} else
			tarball_set_name(m->name, (const char *)h, 100);
		return 1;
	}
}

int
tarball_find(const void *buf, size_t len, const char *name,
    struct tarball_member *m)
{
	struct tarball t;
	char want[TARBALL_NAME + 1];
	int r;

	tarball_set_name(want, name, strlen(name));
	tarball_init(&t, buf, len);
	while ((r = tarball_next(&t, m)) > 0)
		if ((m->type == '0' || m->type == '7') &&
		    strcmp(m->name, want) == 0)
			return 1;
	return r;
}
