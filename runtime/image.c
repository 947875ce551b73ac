/*
 * image.c: the module's IR inside a compiled image.  tlxc embeds the IR
 * text as a global byte array named __tlx_ir:
 *
 *   PTX:   .global .align 8 .b64 __tlx_ir[N] = {0x2220656c75646f6d, ...};
 *          (little-endian words, NUL-padded; .b8, .b16 and .b32 arrays
 *          of the bytes are read too)
 *   cubin: an ELF64 object whose .symtab has __tlx_ir, with its bytes in
 *          the section the symbol names (.nv.global.init, ...).
 *
 * The readers below never trust the image: every offset and size is
 * checked against its bounds before use.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"


int
rt_image_kind(const void *image, size_t n)
{
	const char *s = image, *e = s + n;

	if (n >= 4 && memcmp(s, "\x7f" "ELF", 4) == 0)
		return RT_IMG_ELF;
	for (;;) {
		while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' ||
				 *s == '\n'))
			s++;
		if (e - s >= 2 && s[0] == '/' && s[1] == '/') {
			while (s < e && *s != '\n')
				s++;
			continue;
		}
		break;
	}
	if ((e - s >= 8 && memcmp(s, ".version", 8) == 0) ||
	    (e - s >= 7 && memcmp(s, ".target", 7) == 0))
		return RT_IMG_PTX;
	return RT_IMG_TEXT;
}

static void
trim_nuls(char *ir, size_t *len)
{
	while (*len && ir[*len - 1] == 0)
		(*len)--;
}

/* Finds the declaration "SYM[" (not a mere reference). */
static const char *
find_decl(const char *start, const char *e, const char *sym)
{
	size_t k = strlen(sym);
	const char *p;

	for (p = start; e - p > (ptrdiff_t)k; p++) {
		if (memcmp(p, sym, k) != 0)
			continue;
		if (p[k] == '[' && (p == start || p[-1] == ' ' ||
				    p[-1] == '\t'))
			return p + k + 1;
	}
	return NULL;
}

static const char *
skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* An unsigned decimal or 0x hex number <= max; NULL when there is none. */
static const char *
number(const char *p, const char *e, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int base = 10, digits = 0;

	if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (; p < e; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (v > (max - (uint64_t)d) / (uint64_t)base)
			return NULL;  /* over max (and no wrap past 2^64) */
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (!digits)
		return NULL;
	*out = v;
	return p;
}

/* The bytes per element of the array whose name starts at sym: its type
 * is the word before (".b64 __tlx_ir["); 0 for none we know. */
static int
elem_bytes(const char *start, const char *sym)
{
	const char *p = sym, *w;
	uint64_t bits;

	while (p > start && (p[-1] == ' ' || p[-1] == '\t'))
		p--;
	w = p;
	while (w > start && w[-1] != ' ' && w[-1] != '\t' && w[-1] != '\n')
		w--;
	if (p - w < 3 || w[0] != '.' || (w[1] != 'b' && w[1] != 'u' &&
					 w[1] != 's') ||
	    number(w + 2, p, 64, &bits) != p ||
	    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
		return 0;
	return (int)bits / 8;
}

int
rt_image_ptx_global(const char *ptx, size_t n, const char *sym, char **ir,
		    size_t *len, const char **why)
{
	const char *e = ptx + n, *p = find_decl(ptx, e, sym);
	uint64_t count, v, max;
	size_t k = 0;
	int eb, i;
	char *buf;

	*ir = NULL;
	*len = 0;
	if (!p) {
		*why = "the PTX has no __tlx_ir array (was it compiled by tlxc?)";
		return TLXRT_NOT_FOUND;
	}
	if (!(eb = elem_bytes(ptx, p - 1 - strlen(sym)))) {
		*why = "the PTX declares __tlx_ir with an element type other "
		       "than .b8, .b16, .b32 or .b64";
		return TLXRT_INVALID_ARG;
	}
	max = eb == 8 ? UINT64_MAX : (1ull << (8 * eb)) - 1;
	if (!(p = number(p, e, (1u << 30) / (unsigned)eb, &count)) || p >= e ||
	    *p != ']' || count == 0) {
		*why = "the PTX declares __tlx_ir without a size";
		return TLXRT_INVALID_ARG;
	}
	count *= (uint64_t)eb;  /* bytes from here on */
	p = skip_ws(p + 1, e);
	if (p >= e || *p != '=' || (p = skip_ws(p + 1, e)) >= e || *p != '{') {
		*why = "the PTX declares __tlx_ir without an initializer";
		return TLXRT_INVALID_ARG;
	}
	if (!(buf = tlx_calloc((size_t)count, 1))) {
		*why = "out of memory";
		return TLXRT_NOMEM;
	}
	p = skip_ws(p + 1, e);
	while (p < e && *p != '}') {
		if (k == count || !(p = number(p, e, max, &v))) {
			free(buf);
			*why = "the PTX initializer of __tlx_ir is malformed";
			return TLXRT_INVALID_ARG;
		}
		for (i = 0; i < eb; i++)
			buf[k++] = (char)(v >> (8 * i));
		p = skip_ws(p, e);
		if (p < e && *p == ',')
			p = skip_ws(p + 1, e);
	}
	if (p >= e) {
		free(buf);
		*why = "the PTX initializer of __tlx_ir is not closed";
		return TLXRT_INVALID_ARG;
	}
	*ir = buf;
	*len = (size_t)count;
	trim_nuls(buf, len);
	return TLXRT_OK;
}

/* ---- ELF64, little endian --------------------------------------------- */

static uint64_t
rd(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

typedef struct Shdr {
	uint32_t type, link;
	uint64_t addr, off, size, entsize;
} Shdr;

/* Section i, checked to lie inside the image (NOBITS sections have no
 * bytes there). */
static bool
shdr(const uint8_t *elf, size_t n, uint64_t shoff, uint64_t shentsize,
     uint64_t i, Shdr *s)
{
	const uint8_t *h = elf + shoff + i * shentsize;

	s->type = (uint32_t)rd(h + 4, 4);
	s->addr = rd(h + 16, 8);
	s->off = rd(h + 24, 8);
	s->size = rd(h + 32, 8);
	s->link = (uint32_t)rd(h + 40, 4);
	s->entsize = rd(h + 56, 8);
	return s->type == 8 || (s->off <= n && s->size <= n - s->off);
}

int
rt_image_elf_global(const uint8_t *elf, size_t n, const char *name, char **ir,
		    size_t *len, const char **why)
{
	size_t symlen = strlen(name) + 1;
	uint64_t shoff, shentsize, shnum, i, j, type;
	Shdr sym, str, sec;

	*ir = NULL;
	*len = 0;
	*why = "the ELF image is malformed";
	if (n < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0)
		return TLXRT_INVALID_ARG;
	if (elf[4] != 2 || elf[5] != 1) {
		*why = "only 64-bit little-endian ELF images are supported";
		return TLXRT_UNSUPPORTED;
	}
	type = rd(elf + 16, 2);
	shoff = rd(elf + 40, 8);
	shentsize = rd(elf + 58, 2);
	shnum = rd(elf + 60, 2);
	if (shentsize < 64 || shoff > n || shnum > (n - shoff) / shentsize)
		return TLXRT_INVALID_ARG;
	for (i = 0; i < shnum; i++) {
		if (!shdr(elf, n, shoff, shentsize, i, &sym))
			return TLXRT_INVALID_ARG;
		if (sym.type != 2)  /* SHT_SYMTAB */
			continue;
		if (sym.entsize < 24 || sym.link >= shnum ||
		    !shdr(elf, n, shoff, shentsize, sym.link, &str) ||
		    str.type == 8)
			return TLXRT_INVALID_ARG;
		for (j = 0; j < sym.size / sym.entsize; j++) {
			const uint8_t *s = elf + sym.off + j * sym.entsize;
			uint64_t name_off = rd(s, 4), shndx = rd(s + 6, 2);
			uint64_t val = rd(s + 8, 8), size = rd(s + 16, 8), off;

			if (name_off >= str.size ||
			    str.size - name_off < symlen ||
			    memcmp(elf + str.off + name_off, name, symlen) != 0)
				continue;
			if (shndx == 0 || shndx >= shnum ||
			    !shdr(elf, n, shoff, shentsize, shndx, &sec))
				return TLXRT_INVALID_ARG;
			if (sec.type == 8) {
				*why = "__tlx_ir is in a section without "
				       "contents (NOBITS)";
				return TLXRT_INVALID_ARG;
			}
			if (type != 1 && val >= sec.addr &&
			    val - sec.addr <= sec.size)
				val -= sec.addr;  /* an address: make it relative */
			if (val > sec.size || size > sec.size - val || !size) {
				*why = "__tlx_ir lies outside its section";
				return TLXRT_INVALID_ARG;
			}
			off = sec.off + val;
			if (!(*ir = tlx_malloc((size_t)size))) {
				*why = "out of memory";
				return TLXRT_NOMEM;
			}
			memcpy(*ir, elf + off, (size_t)size);
			*len = (size_t)size;
			trim_nuls(*ir, len);
			return TLXRT_OK;
		}
	}
	*why = "the ELF image has no __tlx_ir symbol (was it compiled by tlxc?)";
	return TLXRT_NOT_FOUND;
}

int
rt_image_ptx_ir(const char *ptx, size_t n, char **ir, size_t *len,
		const char **why)
{
	return rt_image_ptx_global(ptx, n, "__tlx_ir", ir, len, why);
}

int
rt_image_elf_ir(const uint8_t *elf, size_t n, char **ir, size_t *len,
		const char **why)
{
	return rt_image_elf_global(elf, n, "__tlx_ir", ir, len, why);
}
