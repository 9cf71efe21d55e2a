/* SPDX-License-Identifier: ISC */
/* Tool search: an in-memory BM25F index over MCP Tool objects. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnv.h"
#include "toolsearch.h"
#include "xalloc.h"

/*
 * The ranking (doc/views.md, "Search ranking"): BM25F. Each tool is one
 * document of six fields; a term's frequency in a field is weighted and
 * normalised by the field's length against its average, summed over the
 * fields, then saturated once (k1) and multiplied by the term's idf. A
 * query term also matches, at half weight, the longer terms it is a
 * prefix of ("screenshot" from "screen").
 */
enum toolsearch_field {
	TOOLSEARCH_NAME,       /* the tool's name, without its server */
	TOOLSEARCH_SERVER,     /* the server's name (the prefix) */
	TOOLSEARCH_TITLE,      /* title, annotations.title */
	TOOLSEARCH_DESC,       /* description */
	TOOLSEARCH_PARAM,      /* inputSchema's property names */
	TOOLSEARCH_PARAM_DESC, /* and their descriptions */
	TOOLSEARCH_FIELDS
};

static const double toolsearch_weight[TOOLSEARCH_FIELDS] = { 3.0, 1.0, 2.0, 1.0,
	0.7, 0.3 };
static const double toolsearch_b[TOOLSEARCH_FIELDS] = { 0.3, 0.3, 0.3, 0.75,
	0.5, 0.75 };
#define TOOLSEARCH_K1	      1.2
#define TOOLSEARCH_PREFIX     0.5 /* a prefix match counts this much */
#define TOOLSEARCH_MIN_PREFIX 3	  /* query terms shorter match whole only */
#define TOOLSEARCH_TERM_MAX   64  /* longer terms are cut */

/* Words too common in tool text to tell tools apart. */
static const char *const toolsearch_stop[] = { "a", "an", "the", "to", "of",
	"in", "on", "for", "and", "or", "is", "it", "its", "my", "me", "with",
	"from", "by", "this", "that", "be", "as", "at", "are", "all", "any",
	"if", "use", "using", "tool", "can", "you", "your", "i", "we", "do",
	"how", "what", "which", "into", "e", "g", "eg", "some", NULL };

struct toolsearch_post {
	uint32_t doc;
	uint8_t field;
	uint16_t tf;
};

struct toolsearch_term {
	char *text;
	struct toolsearch_post *posts;
	size_t nposts, capposts;
};

struct toolsearch {
	struct toolsearch_term *terms;
	size_t nterms, capterms;
	uint32_t *slots; /* open addressing: term number + 1, 0 = empty */
	size_t nslots;
	uint32_t (*len)[TOOLSEARCH_FIELDS]; /* each document's field lengths */
	size_t ndocs, capdocs;
	double avg[TOOLSEARCH_FIELDS];
	bool is_stale;	     /* avg not computed since the last add */
	double *tfw, *score; /* scratch, one a document */
};

static bool
toolsearch_is_stop(const char *w)
{
	for (size_t i = 0; toolsearch_stop[i] != NULL; i++)
		if (strcmp(w, toolsearch_stop[i]) == 0)
			return true;
	return false;
}

/*
 * A light stemmer, so that plurals and verb forms meet: -ies -> -y,
 * -sses -> -ss, -s (not -ss, -us, -is) dropped, then -ing and -ed dropped
 * when a stem of at least three letters is left.
 */
static void
toolsearch_stem(char *w)
{
	size_t n = strlen(w);

	if (n > 4 && strcmp(w + n - 3, "ies") == 0) {
		strcpy(w + n - 3, "y");
		n -= 2;
	} else if (n > 4 && strcmp(w + n - 4, "sses") == 0) {
		w[n -= 2] = '\0';
	} else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's' &&
	    w[n - 2] != 'u' && w[n - 2] != 'i') {
		w[--n] = '\0';
	}
	if (n > 5 && strcmp(w + n - 3, "ing") == 0)
		w[n -= 3] = '\0';
	else if (n > 4 && strcmp(w + n - 2, "ed") == 0)
		w[n -= 2] = '\0';
}

/*
 * Calls fn with each term of text: split at every character that is not
 * a letter or digit and at camelCase humps (getTinyImage, HTMLParser),
 * lowercased, stop words left out, stemmed.
 */
static void
toolsearch_terms(const char *text, void (*fn)(void *, const char *), void *arg)
{
	char w[TOOLSEARCH_TERM_MAX + 1];
	size_t n = 0;
	const unsigned char *p = (const unsigned char *)text;

	for (;; p++) {
		bool is_word = isalnum(*p) != 0;
		bool is_hump = n > 0 && isupper(*p) &&
		    (islower(p[-1]) || isdigit(p[-1]) ||
			(isupper(p[-1]) && islower(p[1])));

		if (n > 0 && (!is_word || is_hump)) {
			w[n] = '\0';
			if (!toolsearch_is_stop(w)) {
				toolsearch_stem(w);
				fn(arg, w);
			}
			n = 0;
		}
		if (*p == '\0')
			break;
		if (is_word && n < TOOLSEARCH_TERM_MAX)
			w[n++] = (char)tolower(*p);
	}
}

static long
toolsearch_lookup(const struct toolsearch *ts, const char *w)
{
	size_t i;

	if (ts->nslots == 0)
		return -1;
	for (i = fnv32(w) & (ts->nslots - 1); ts->slots[i] != 0;
	     i = (i + 1) & (ts->nslots - 1))
		if (strcmp(ts->terms[ts->slots[i] - 1].text, w) == 0)
			return ts->slots[i] - 1;
	return -1;
}

static void
toolsearch_grow(struct toolsearch *ts)
{
	size_t i, j;

	free(ts->slots);
	ts->nslots = ts->nslots == 0 ? 1024 : ts->nslots * 2;
	ts->slots = xcalloc(ts->nslots, sizeof *ts->slots);
	for (i = 0; i < ts->nterms; i++) {
		for (j = fnv32(ts->terms[i].text) & (ts->nslots - 1);
		     ts->slots[j] != 0; j = (j + 1) & (ts->nslots - 1))
			;
		ts->slots[j] = (uint32_t)i + 1;
	}
}

static struct toolsearch_term *
toolsearch_term(struct toolsearch *ts, const char *w)
{
	long t = toolsearch_lookup(ts, w);
	size_t j;

	if (t >= 0)
		return &ts->terms[t];
	if ((ts->nterms + 1) * 2 > ts->nslots)
		toolsearch_grow(ts);
	if (ts->nterms == ts->capterms) {
		ts->capterms = ts->capterms == 0 ? 256 : ts->capterms * 2;
		ts->terms = xreallocarray(ts->terms, ts->capterms,
		    sizeof *ts->terms);
	}
	memset(&ts->terms[ts->nterms], 0, sizeof ts->terms[0]);
	ts->terms[ts->nterms].text = xstrdup(w);
	for (j = fnv32(w) & (ts->nslots - 1); ts->slots[j] != 0;
	     j = (j + 1) & (ts->nslots - 1))
		;
	ts->slots[j] = (uint32_t)ts->nterms + 1;
	return &ts->terms[ts->nterms++];
}

struct toolsearch_adding {
	struct toolsearch *ts;
	uint8_t field;
};

static void
toolsearch_post(void *arg, const char *w)
{
	struct toolsearch_adding *a = arg;
	struct toolsearch *ts = a->ts;
	struct toolsearch_term *t = toolsearch_term(ts, w);
	uint32_t doc = (uint32_t)ts->ndocs;
	struct toolsearch_post *last = t->nposts > 0 ?
	    &t->posts[t->nposts - 1] :
	    NULL;

	ts->len[doc][a->field]++;
	if (last != NULL && last->doc == doc && last->field == a->field) {
		if (last->tf < UINT16_MAX)
			last->tf++;
		return;
	}
	if (t->nposts == t->capposts) {
		t->capposts = t->capposts == 0 ? 4 : t->capposts * 2;
		t->posts = xreallocarray(t->posts, t->capposts,
		    sizeof *t->posts);
	}
	t->posts[t->nposts++] = (struct toolsearch_post){ doc, a->field, 1 };
}

static void
toolsearch_field(struct toolsearch *ts, int field, const char *text)
{
	struct toolsearch_adding a = { ts, (uint8_t)field };

	if (text != NULL)
		toolsearch_terms(text, toolsearch_post, &a);
}

struct toolsearch *
toolsearch_new(void)
{
	return xcalloc(1, sizeof(struct toolsearch));
}

void
toolsearch_free(struct toolsearch *ts)
{
	if (ts == NULL)
		return;
	for (size_t i = 0; i < ts->nterms; i++) {
		free(ts->terms[i].text);
		free(ts->terms[i].posts);
	}
	free(ts->terms);
	free(ts->slots);
	free(ts->len);
	free(ts->tfw);
	free(ts->score);
	free(ts);
}

void
toolsearch_add(struct toolsearch *ts, const char *server, const char *name,
    const json_t *tool)
{
	const json_t *props = json_object_get(json_object_get(tool,
						  "inputSchema"),
	    "properties");
	const char *key,
	    *own = json_string_value(json_object_get(tool, "name"));
	const json_t *v;

	if (ts->ndocs == ts->capdocs) {
		ts->capdocs = ts->capdocs == 0 ? 64 : ts->capdocs * 2;
		ts->len = xreallocarray(ts->len, ts->capdocs, sizeof *ts->len);
	}
	memset(ts->len[ts->ndocs], 0, sizeof ts->len[0]);
	/*
	 * The name a caller sees, when it is not simply server__tool, may
	 * hold words of its own (a shortened name keeps them): both count.
	 */
	toolsearch_field(ts, TOOLSEARCH_NAME, own);
	if (name != NULL && (own == NULL || strstr(name, own) == NULL))
		toolsearch_field(ts, TOOLSEARCH_NAME, name);
	toolsearch_field(ts, TOOLSEARCH_SERVER, server);
	toolsearch_field(ts, TOOLSEARCH_TITLE,
	    json_string_value(json_object_get(tool, "title")));
	toolsearch_field(ts, TOOLSEARCH_TITLE,
	    json_string_value(json_object_get(json_object_get(tool,
						  "annotations"),
		"title")));
	toolsearch_field(ts, TOOLSEARCH_DESC,
	    json_string_value(json_object_get(tool, "description")));
	if (json_is_object(props))
		json_object_foreach((json_t *)(uintptr_t)props, key, v) {
			toolsearch_field(ts, TOOLSEARCH_PARAM, key);
			toolsearch_field(ts, TOOLSEARCH_PARAM_DESC,
			    json_string_value(json_object_get(v,
				"description")));
		}
	ts->ndocs++;
	ts->is_stale = true;
}

size_t
toolsearch_size(const struct toolsearch *ts)
{
	return ts->ndocs;
}

static void
toolsearch_settle(struct toolsearch *ts)
{
	size_t d;
	int f;

	if (!ts->is_stale)
		return;
	for (f = 0; f < TOOLSEARCH_FIELDS; f++) {
		double sum = 0;

		for (d = 0; d < ts->ndocs; d++)
			sum += ts->len[d][f];
		ts->avg[f] = ts->ndocs > 0 && sum > 0 ? sum / ts->ndocs : 1;
	}
	free(ts->tfw);
	free(ts->score);
	ts->tfw = xcalloc(ts->ndocs, sizeof *ts->tfw);
	ts->score = xcalloc(ts->ndocs, sizeof *ts->score);
	ts->is_stale = false;
}

/* Adds one index term's weighted, normalised frequencies to ts->tfw. */
static void
toolsearch_gather(struct toolsearch *ts, const struct toolsearch_term *t,
    double factor)
{
	for (size_t i = 0; i < t->nposts; i++) {
		const struct toolsearch_post *p = &t->posts[i];
		double norm = 1 - toolsearch_b[p->field] +
		    toolsearch_b[p->field] * ts->len[p->doc][p->field] /
			ts->avg[p->field];

		ts->tfw[p->doc] += factor * toolsearch_weight[p->field] *
		    p->tf / norm;
	}
}

struct toolsearch_query {
	char terms[TOOLSEARCH_QUERY_TERMS][TOOLSEARCH_TERM_MAX + 1];
	size_t n;
};

static void
toolsearch_query_term(void *arg, const char *w)
{
	struct toolsearch_query *q = arg;

	for (size_t i = 0; i < q->n; i++)
		if (strcmp(q->terms[i], w) == 0)
			return; /* a word said twice counts once */
	if (q->n < TOOLSEARCH_QUERY_TERMS)
		strcpy(q->terms[q->n++], w);
}

/* The idf of a term in nposts documents (BM25's, kept positive). */
static double
toolsearch_idf(const struct toolsearch *ts, const struct toolsearch_term *t)
{
	size_t df = 0;
	uint32_t last = UINT32_MAX;

	for (size_t i = 0; i < t->nposts; i++)
		if (t->posts[i].doc != last) {
			df++;
			last = t->posts[i].doc;
		}
	return log(1 + (ts->ndocs - df + 0.5) / (df + 0.5));
}

size_t
toolsearch_find(struct toolsearch *ts, const char *query, size_t *ret_idx,
    size_t limit)
{
	struct toolsearch_query q = { .n = 0 };
	size_t i, k, n = 0, d;
	double idf;

	toolsearch_settle(ts);
	if (ts->ndocs == 0 || limit == 0)
		return 0;
	toolsearch_terms(query, toolsearch_query_term, &q);
	memset(ts->score, 0, ts->ndocs * sizeof *ts->score);
	for (i = 0; i < q.n; i++) {
		size_t len = strlen(q.terms[i]);
		long exact = toolsearch_lookup(ts, q.terms[i]);

		/*
		 * One saturation over the exact term and its extensions, with
		 * the rarest's idf: "screen" in a screenshot tool's text is
		 * one piece of evidence, not two.
		 */
		memset(ts->tfw, 0, ts->ndocs * sizeof *ts->tfw);
		idf = 0;
		if (exact >= 0) {
			toolsearch_gather(ts, &ts->terms[exact], 1);
			idf = toolsearch_idf(ts, &ts->terms[exact]);
		}
		if (len >= TOOLSEARCH_MIN_PREFIX)
			for (k = 0; k < ts->nterms; k++) {
				const struct toolsearch_term *t = &ts->terms[k];
				double x;

				if ((long)k == exact ||
				    strncmp(t->text, q.terms[i], len) != 0)
					continue;
				toolsearch_gather(ts, t, TOOLSEARCH_PREFIX);
				if ((x = toolsearch_idf(ts, t)) > idf)
					idf = x;
			}
		for (d = 0; d < ts->ndocs; d++)
			if (ts->tfw[d] > 0)
				ts->score[d] += idf * ts->tfw[d] *
				    (TOOLSEARCH_K1 + 1) /
				    (ts->tfw[d] + TOOLSEARCH_K1);
	}
	/* The best limit, by insertion into a short sorted list. */
	for (d = 0; d < ts->ndocs; d++) {
		if (ts->score[d] <= 0)
			continue;
		if (n == limit && ts->score[d] <= ts->score[ret_idx[n - 1]])
			continue;
		k = n < limit ? n++ : n - 1;
		while (k > 0 && ts->score[ret_idx[k - 1]] < ts->score[d]) {
			ret_idx[k] = ret_idx[k - 1];
			k--;
		}
		ret_idx[k] = d;
	}
	return n;
}
