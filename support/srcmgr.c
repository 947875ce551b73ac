/* srcmgr.c: a source buffer, NUL-terminated, with its line table. */
#include <string.h>

#include "support.h"

void
src_init(Source *s, Arena *a, const char *name, const char *text, size_t len)
{
	Vec(uint32_t) lines = { 0 };
	size_t i;

	s->name = arena_strdup(a, name);
	s->text = arena_strndup(a, text, len);
	s->len = len;
	vec_push(a, &lines, 0);
	for (i = 0; i < len; i++)
		if (text[i] == '\n' && i + 1 <= len)
			vec_push(a, &lines, (uint32_t)(i + 1));
	s->line_start = lines.v;
	s->nlines = lines.n;
}

const char *
src_line(const Source *s, int line, size_t *len)
{
	const char *b, *e;

	if (!s || line < 1 || (uint32_t)line > s->nlines) {
		*len = 0;
		return "";
	}
	b = s->text + s->line_start[line - 1];
	e = b;
	while (e < s->text + s->len && *e != '\n' && *e != '\r')
		e++;
	*len = (size_t)(e - b);
	return b;
}
