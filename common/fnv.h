/* SPDX-License-Identifier: ISC */
/* FNV-1a, 32 and 64 bits: short stable hashes of keys (never of secrets). */
#ifndef MCPD_FNV_H
#define MCPD_FNV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FNV32_INIT 2166136261u
#define FNV64_INIT 14695981039346656037ULL

/* h with the len bytes at data added. */
static inline uint32_t
fnv32_add(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline uint64_t
fnv64_add(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* The hash of the string s, its NUL left out. */
static inline uint32_t
fnv32(const char *s)
{
	return fnv32_add(FNV32_INIT, s, strlen(s));
}

#endif
