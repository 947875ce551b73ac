/* strtab.c: string interning with open addressing; equal strings get
 * the same pointer, so names compare with ==. */
#include <string.h>

#include "support.h"

void
strtab_init(Strtab *t, Arena *a)
{
	t->arena = a;
	t->n = 0;
	t->cap = 256;
	t->slots = arena_alloc(a, t->cap * sizeof *t->slots);
}

static void
grow(Strtab *t)
{
	const char **old = t->slots;
	uint32_t ocap = t->cap, i;

	t->cap *= 2;
	t->slots = arena_alloc(t->arena, t->cap * sizeof *t->slots);
	for (i = 0; i < ocap; i++) {
		uint32_t j;

		if (!old[i])
			continue;
		j = (uint32_t)hash_bytes(old[i], strlen(old[i]), 0) & (t->cap - 1);
		while (t->slots[j])
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = old[i];
	}
}

const char *
strtab_intern(Strtab *t, const char *s, size_t n)
{
	uint32_t j;

	if (2 * (t->n + 1) > t->cap)
		grow(t);
	j = (uint32_t)hash_bytes(s, n, 0) & (t->cap - 1);
	while (t->slots[j]) {
		const char *e = t->slots[j];

		if (strncmp(e, s, n) == 0 && e[n] == 0)
			return e;
		j = (j + 1) & (t->cap - 1);
	}
	t->slots[j] = arena_strndup(t->arena, s, n);
	t->n++;
	return t->slots[j];
}
