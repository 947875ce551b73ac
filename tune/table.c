/*
 * table.c: tlx_tune_write_table -- the winner into a table of tuned
 * configurations by shape, which libtlx reads (tlx_table_pick; the
 * format is in jit/table.c and docs/tuning.md, "Tables by shape").
 *
 * A line "KERNEL SHAPE : CONFIG  # cost, device": the file's other lines
 * are kept as they are, one of the same kernel and shape (the same
 * NAME=VALUE set, in any order) is replaced.  Read, merge, write a
 * temporary file and rename it into place, all under an exclusive lock
 * of path.lock, so that two tuners adding shapes to one table at once
 * lose neither.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "tune/driver.h"

/* Is tok "NAME=INT"? */
static int
int_assign(const char *tok, size_t n)
{
	size_t eq = 0;
	char *end, buf[128];

	while (eq < n && tok[eq] != '=')
		eq++;
	if (!eq || eq + 1 >= n || n >= sizeof buf)
		return 0;
	memcpy(buf, tok, n);
	buf[n] = 0;
	strtoll(buf + eq + 1, &end, 0);
	return !*end;
}

/* The kernel and shape of a table line, as sorted tokens joined by
 * spaces, into key (""  when it is no entry). */
static void
line_key(const char *line, char *key, size_t size)
{
	const char *tok[64];
	size_t len[64], m = 0;
	int n = 0;

	key[0] = 0;
	for (const char *s = line; *s && *s != '#' && *s != '\n' && n < 64;) {
		size_t k = strcspn(s, " \t\r\n#");

		if (!k) {
			s++;
			continue;
		}
		if (k == 1 && *s == ':')
			break;
		tok[n] = s;
		len[n++] = k;
		s += k;
	}
	if (!n)
		return;
	/* insertion sort of the shape (after the kernel) */
	for (int i = 2; i < n; i++)
		for (int j = i; j > 1; j--) {
			size_t a = len[j - 1] < len[j] ? len[j - 1] : len[j];
			int c = strncmp(tok[j - 1], tok[j], a);
			const char *tt;
			size_t tl;

			if (c < 0 || (c == 0 && len[j - 1] <= len[j]))
				break;
			tt = tok[j], tok[j] = tok[j - 1], tok[j - 1] = tt;
			tl = len[j], len[j] = len[j - 1], len[j - 1] = tl;
		}
	for (int i = 0; i < n && m + len[i] + 2 < size; i++) {
		memcpy(key + m, tok[i], len[i]);
		m += len[i];
		key[m++] = ' ';
		key[m] = 0;
	}
}

/* The new entry's line (malloc'd). */
static char *
entry_line(tlx_tune *T)
{
	size_t cap = 4096, m = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	m += (size_t)snprintf(s + m, cap - m, "%s", T->kernel);
	for (const char *p = T->shape; *p && m < cap;) {
		size_t k = strcspn(p, " ");

		if (k && int_assign(p, k))
			m += (size_t)snprintf(s + m, cap - m, " %.*s", (int)k, p);
		p += k + !!p[k];
	}
	if (m < cap)
		m += (size_t)snprintf(s + m, cap - m, " :");
	for (int i = 0; i < T->ndefs && m < cap; i++)
		m += (size_t)snprintf(s + m, cap - m, " %s", T->defs[i]);
	for (int i = 0; i < T->np && m < cap; i++)
		m += (size_t)snprintf(s + m, cap - m, " %s=%lld",
				      T->params[i].name,
				      (long long)T->params[i].v[T->best[i]]);
	if (m < cap)
		snprintf(s + m, cap - m, "  # %.6g %s, %s\n", T->best_cost,
			 T->o.backend == TLX_TUNE_CUDA ? "ms"
			 : T->o.backend == TLX_TUNE_SIM ? "operations" : "synthetic",
			 T->device);
	if (m >= cap) {
		free(s);
		return NULL;
	}
	return s;
}

int
tlx_tune_write_table(tlx_tune *T, const char *path)
{
	char key[1024], newkey[1024], line[4096], *entry, *tmp, *lock;
	size_t n;
	FILE *in, *out;
	int lfd, ok;

	if (!T || !path)
		return TLX_MISUSE;
	if (!T->has_best)
		return tune_errf(T, TLX_ERROR, "no winner to write");
	if (!(entry = entry_line(T)))
		return tune_errf(T, TLX_NOMEM, "out of memory");
	line_key(entry, newkey, sizeof newkey);
	n = strlen(path) + 32;
	tmp = malloc(n);
	lock = malloc(n);
	if (!tmp || !lock) {
		free(entry), free(tmp), free(lock);
		return tune_errf(T, TLX_NOMEM, "out of memory");
	}
	snprintf(lock, n, "%s.lock", path);
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	if ((lfd = open(lock, O_RDWR | O_CREAT, 0644)) < 0 ||
	    flock(lfd, LOCK_EX) || !(out = fopen(tmp, "w"))) {
		if (lfd >= 0)
			close(lfd);
		free(entry), free(tmp), free(lock);
		return tune_errf(T, TLX_IO, "cannot write '%s'", path);
	}
	if ((in = fopen(path, "r"))) {
		while (fgets(line, sizeof line, in)) {
			line_key(line, key, sizeof key);
			if (!strcmp(key, newkey))
				continue;  /* the entry being replaced */
			fputs(line, out);
			if (!strchr(line, '\n'))
				fputc('\n', out);
		}
		fclose(in);
	} else {
		fputs("# tlx-tune table: KERNEL SHAPE : CONFIG (docs/tuning.md, "
		      "\"Tables by shape\")\n", out);
	}
	fputs(entry, out);
	ok = !ferror(out);
	ok = !fclose(out) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		ok = 0;
	}
	close(lfd);  /* unlocks */
	free(entry), free(tmp), free(lock);
	return ok ? TLX_OK : tune_errf(T, TLX_IO, "cannot write '%s'", path);
}
