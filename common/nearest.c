/* SPDX-License-Identifier: ISC */
/* Did-you-mean: the names nearest to a mistyped one. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nearest.h"

size_t
nearest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *d, r, cost;

	if ((d = calloc((la + 1) * (lb + 1), sizeof *d)) == NULL)
		return SIZE_MAX;
#define D(i, j) d[(i) * (lb + 1) + (j)]
	for (size_t i = 0; i <= la; i++)
		D(i, 0) = i;
	for (size_t j = 0; j <= lb; j++)
		D(0, j) = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			cost = tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1]);
			r = D(i - 1, j - 1) + cost;
			if (D(i - 1, j) + 1 < r)
				r = D(i - 1, j) + 1;
			if (D(i, j - 1) + 1 < r)
				r = D(i, j - 1) + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < r)
				r = D(i - 2, j - 2) + 1;
			D(i, j) = r;
		}
	}
	r = D(la, lb);
#undef D
	free(d);
	return r;
}

char *
nearest_names(const char *given, const char *const *names, size_t n,
    const char *prefix)
{
	size_t best[NEAREST_MAX], dist[NEAREST_MAX], nbest = 0;
	size_t max = strlen(given) / 3 > 2 ? strlen(given) / 3 : 2, d, k;
	char *out = NULL, *next;

	for (size_t i = 0; i < n; i++) {
		if (names[i] == NULL ||
		    (d = nearest_distance(given, names[i])) > max)
			continue;
		for (k = nbest; k > 0 && dist[k - 1] > d; k--)
			if (k < NEAREST_MAX) {
				best[k] = best[k - 1];
				dist[k] = dist[k - 1];
			}
		if (k >= NEAREST_MAX)
			continue;
		best[k] = i;
		dist[k] = d;
		if (nbest < NEAREST_MAX)
			nbest++;
	}
	for (k = 0; k < nbest; k++) {
		if (asprintf(&next, "%s%s%s%s", out != NULL ? out : "",
			out != NULL ? ", " : "", prefix, names[best[k]]) < 0)
			break;
		free(out);
		out = next;
	}
	return out;
}
