/* SPDX-License-Identifier: ISC */
/* What every fuzz target shares: the entry point, invariants, input splits. */
#ifndef MCPD_FUZZ_H
#define MCPD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * An invariant: when it does not hold, say which and abort, so that
 * libFuzzer keeps the input as a crash.
 */
#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
			    "fuzz: invariant broken at %s:%d: %s\n", __FILE__, \
			    __LINE__, #cond);                                  \
			abort();                                               \
		}                                                              \
	} while (0)

/* A small deterministic generator of piece sizes, seeded from the input. */
struct fuzz_split {
	uint32_t state;
	size_t max; /* largest piece */
};

static inline void
fuzz_split_init(struct fuzz_split *s, uint8_t seed)
{
	s->state = 0x9e3779b9u ^ seed;
	/* Half of the runs go byte by byte at times, the rest in big bites. */
	s->max = seed & 1 ? 3 : 1 + (size_t)seed * 8;
}

/* The length of the next piece of at most left bytes (1 at least). */
static inline size_t
fuzz_split_next(struct fuzz_split *s, size_t left)
{
	size_t n;

	s->state ^= s->state << 13;
	s->state ^= s->state >> 17;
	s->state ^= s->state << 5;
	n = 1 + s->state % s->max;
	return n < left ? n : left;
}

#endif
