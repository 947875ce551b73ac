/*
 * tokmut.c: mutations of tokens (tokmut.h).  A program mutated byte by
 * byte rarely lexes, let alone parses; one mutated token by token often
 * still parses and reaches sema and the passes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tokmut.h"

enum { MAX_WORDS = 4096, MAX_TOKS = 1 << 15 };

typedef struct Word {
	char *s;
	size_t n;
} Word;

typedef struct Tok {
	uint32_t b, e;  /* [b, e) of the input */
} Tok;

static Word words[MAX_WORDS];
static int nwords;

static const char *const numbers[] = {
	"0", "1", "2", "3", "4", "7", "8", "16", "31", "32", "33", "63", "64",
	"127", "128", "255", "256", "1024", "4096", "65535", "65536",
	"1048576", "2147483647", "2147483648", "4294967295", "-1", "-128",
	"9223372036854775807", "18446744073709551615", "0x7fffffff", "0.5",
	"1e30", "1e-40", "3.4e38", "1e400",
};

static void
add_word(const char *s, size_t n)
{
	if (nwords == MAX_WORDS || n == 0)
		return;
	if (!(words[nwords].s = malloc(n)))
		return;
	memcpy(words[nwords].s, s, n);
	words[nwords++].n = n;
}

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One line of a dictionary: name="word" or "word"; # comments. */
static void
dict_line(const char *l)
{
	const char *b = strchr(l, '"'), *e = strrchr(l, '"');
	char w[256];
	size_t n = 0;

	if (l[0] == '#' || !b || e <= b)
		return;
	for (b++; b < e && n < sizeof w; b++) {
		if (*b == '\\' && e - b > 3 && b[1] == 'x' &&
		    hexval(b[2]) >= 0 && hexval(b[3]) >= 0) {
			w[n++] = (char)(hexval(b[2]) * 16 + hexval(b[3]));
			b += 3;
		} else if (*b == '\\' && b + 1 < e) {
			w[n++] = *++b;
		} else {
			w[n++] = *b;
		}
	}
	add_word(w, n);
}

void
tm_load_dict(int argc, char **argv)
{
	static const char *const fallback[] = {
		"(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "%", "@",
		"<", ">", "x",
	};
	char line[1024];
	FILE *f = NULL;
	int i;

	for (i = 1; i < argc && !f; i++)
		if (strncmp(argv[i], "-dict=", 6) == 0)
			f = fopen(argv[i] + 6, "r");
	while (f && fgets(line, sizeof line, f))
		dict_line(line);
	if (f)
		fclose(f);
	for (i = 0; !nwords && i < (int)(sizeof fallback / sizeof *fallback); i++)
		add_word(fallback[i], strlen(fallback[i]));
}

static uint32_t
rnd(uint64_t *s, uint32_t n)
{
	*s ^= *s >> 12;  /* xorshift64* */
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return n ? (uint32_t)((*s * 2685821657736338717ull) >> 33) % n : 0;
}

static bool
word_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool
space_char(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Words (with the '.' of a number), whitespace runs, single bytes. */
static int
tokenize(const uint8_t *d, size_t n, Tok *t)
{
	size_t i = 0, j;
	int k = 0;

	while (i < n && k < MAX_TOKS) {
		j = i + 1;
		if (word_char(d[i]))
			while (j < n && (word_char(d[j]) ||
					 (d[j] == '.' && j + 1 < n &&
					  d[j + 1] >= '0' && d[j + 1] <= '9')))
				j++;
		else if (space_char(d[i]))
			while (j < n && space_char(d[j]))
				j++;
		t[k++] = (Tok){ (uint32_t)i, (uint32_t)j };
		i = j;
	}
	return k;
}

/* The output under construction: `over` once it would pass max. */
typedef struct Out {
	uint8_t *s;
	size_t n, max;
	bool over;
} Out;

static void
put(Out *o, const void *s, size_t n)
{
	if (o->over || o->n + n > o->max) {
		o->over = true;
		return;
	}
	memcpy(o->s + o->n, s, n);
	o->n += n;
}

/* A token, not a whitespace run when the input has other tokens. */
static int
pick_tok(uint64_t *r, const uint8_t *d, const Tok *t, int nt)
{
	int k = (int)rnd(r, (uint32_t)nt), tries;

	for (tries = 0; tries < 8 && space_char(d[t[k].b]); tries++)
		k = (int)rnd(r, (uint32_t)nt);
	return k;
}

/* d's tokens into o, token k replaced by (rep, nrep) and (ins, nins)
 * inserted before token `at` (at == nt: at the end). */
static void
rewrite(Out *o, const uint8_t *d, const Tok *t, int nt, int k,
	const void *rep, size_t nrep, int at, const void *ins, size_t nins)
{
	int i;

	for (i = 0; i < nt; i++) {
		if (i == at)
			put(o, ins, nins);
		if (i == k)
			put(o, rep, nrep);
		else
			put(o, d + t[i].b, t[i].e - t[i].b);
	}
	if (at == nt)
		put(o, ins, nins);
}

/* One mutation of the tokens of data; 0 when none was made. */
static size_t
mutate_tokens(uint8_t *data, size_t size, size_t max, uint64_t *r)
{
	Tok *t = malloc(MAX_TOKS * sizeof *t);
	Out o = { malloc(max + 1), 0, max, false };
	int nt, k, j, len;
	const Word *w;
	char buf[300];

	if (!t || !o.s || !(nt = tokenize(data, size, t))) {
		free(t);
		free(o.s);
		return 0;
	}
	k = pick_tok(r, data, t, nt);
	j = (int)rnd(r, (uint32_t)nt + 1);
	w = &words[rnd(r, (uint32_t)nwords)];
	switch (rnd(r, 7)) {
	case 0:  /* deleted */
		rewrite(&o, data, t, nt, k, "", 0, -1, NULL, 0);
		break;
	case 1:  /* repeated */
		rewrite(&o, data, t, nt, -1, NULL, 0, k, data + t[k].b,
			t[k].e - t[k].b);
		break;
	case 2:  /* a word of the dictionary in its place */
		rewrite(&o, data, t, nt, k, w->s, w->n, -1, NULL, 0);
		break;
	case 3:  /* a word of the dictionary inserted, with spaces */
		if (w->n + 2 > sizeof buf)
			break;
		buf[0] = ' ';
		memcpy(buf + 1, w->s, w->n);
		buf[w->n + 1] = ' ';
		rewrite(&o, data, t, nt, -1, NULL, 0, j, buf, w->n + 2);
		break;
	case 4:  /* moved */
		rewrite(&o, data, t, nt, k, "", 0, j, data + t[k].b,
			t[k].e - t[k].b);
		break;
	case 5:  /* a run of tokens copied elsewhere */
		len = 1 + (int)rnd(r, 24);
		if (k + len > nt)
			len = nt - k;
		rewrite(&o, data, t, nt, -1, NULL, 0, j, data + t[k].b,
			t[k + len - 1].e - t[k].b);
		break;
	default:  /* a number for a number, else another word of the input */
		if (data[t[k].b] >= '0' && data[t[k].b] <= '9') {
			const char *nb = numbers[rnd(r, sizeof numbers /
							   sizeof *numbers)];

			rewrite(&o, data, t, nt, k, nb, strlen(nb), -1, NULL, 0);
		} else {
			int m = pick_tok(r, data, t, nt);

			rewrite(&o, data, t, nt, k, data + t[m].b,
				t[m].e - t[m].b, -1, NULL, 0);
		}
		break;
	}
	free(t);
	if (o.over || o.n == 0) {
		free(o.s);
		return 0;
	}
	memcpy(data, o.s, o.n);
	free(o.s);
	return o.n;
}

size_t
tm_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t r = ((uint64_t)seed << 1 | 1) * 0x9e3779b97f4a7c15ull;
	size_t n;

	if (!nwords)
		tm_load_dict(0, NULL);
	if (size && rnd(&r, 2) && (n = mutate_tokens(data, size, max_size, &r)))
		return n;
	return LLVMFuzzerMutate(data, size, max_size);
}
