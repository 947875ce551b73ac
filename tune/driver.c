/*
 * driver.c: libtlxtune's session (include/tlx/tune.h).
 *
 * tlx_tune_run: the default configuration runs first (its output is the
 * reference; its child reports the device for the cache key), then the
 * cached winner when the cache has one, then the search (tune/search.c)
 * with batch_eval as its evaluation.  A batch's new candidates are
 * compiled in up to `jobs` forked workers at once, each killed after the
 * timeout; then each one compiled is run by its device's run server, a
 * forked process that opens the device once and runs the candidates sent
 * to it one at a time (so a crash, hang or illegal access kills that
 * server only; the next candidate starts a new one; TLX_TUNE_FRESH=1: a
 * new run child per candidate).  A configuration asked for again gets its
 * recorded value: nothing runs twice.  Finally the best `finalists` are
 * compiled again and re-timed round-robin in one child; the best of the
 * re-timing wins and goes to the cache.
 *
 * The cache: one small text file per key under $XDG_CACHE_HOME/tlx/tune
 * (~/.cache/tlx/tune), the key a 128-bit hash of the source, the kernel,
 * the backend, the arguments (size, elems, --arg and -D values: the shapes;
 * dtypes and strides follow from them and the source), the device's name
 * and driver version and the compiler's version.  Written to a temporary
 * file and renamed into place, so readers in other processes see a whole
 * file or none.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tune/driver.h"

enum { CH_OK, CH_FAIL, CH_TIMEOUT, CH_CRASH };

typedef int (*ChildFn)(tlx_tune *T, const int *cfg, int fd);

double
tune_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
tune_errf(tlx_tune *T, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	free(T->err);
	T->err = NULL;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0 && (T->err = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(T->err, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* n bytes into the pipe or socket fd; 0, or -1.  A socket whose other
 * end closed is an error, not a SIGPIPE. */
int
tune_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- children ------------------------------------------------------------ */

/* In a forked child: the run servers' sockets are the parent's (a copy
 * held here would keep a server from seeing its socket close). */
static void
drop_servers(tlx_tune *T)
{
	for (int d = 0; d < MAXDEV; d++)
		if (T->srv[d].pid)
			close(T->srv[d].fd);
}

/* Forks fn(T, cfg, pipe); the parent reads what it writes (child_pump). */
static void
child_start(tlx_tune *T, ChildFn fn, const int *cfg, Child *c)
{
	int fds[2];

	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->cap = 4096;
	c->buf = malloc(c->cap);
	if (!c->buf || pipe(fds)) {
		c->done = 1;
		c->st = CH_FAIL;
		return;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		c->done = 1;
		c->st = CH_FAIL;
		return;
	}
	if (!c->pid) {
		/* a group of its own, which a timeout kills whole: ptxas
		 * too, which the compiler runs as a child */
		setpgid(0, 0);
		close(fds[0]);
		drop_servers(T);
		_exit(fn(T, cfg, fds[1]));
	}
	setpgid(c->pid, c->pid);  /* either side may run first */
	close(fds[1]);
	c->fd = fds[0];
	c->deadline = tune_now() + T->o.timeout;
}

static void
child_reap(Child *c, int timed_out)
{
	int st = 0;

	close(c->fd);
	c->fd = -1;
	/* a timed-out child and what it started (its group: the leader,
	 * not yet reaped, keeps the group's id from being reused) */
	if (timed_out && kill(-c->pid, SIGKILL))
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (c->sv)  /* the server ended with its reply, or died */
		c->sv->pid = 0;
	c->done = 1;
	c->st = timed_out ? CH_TIMEOUT
	      : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? CH_OK
	      : WIFEXITED(st) && WEXITSTATUS(st) == 1 ? CH_FAIL
						      : CH_CRASH;
}

static int reply_done(Child *c);

/* Waits until at least one of the n children still running ends (its
 * pipe closed, a run server's reply all in, or its deadline passed:
 * killed); returns how many ended. */
static int
child_pump(Child *cs, int n)
{
	struct pollfd *pf = malloc((size_t)(n ? n : 1) * sizeof *pf);
	int *who = malloc((size_t)(n ? n : 1) * sizeof *who), ended = 0;

	while (pf && who && !ended) {
		double t = tune_now(), first = INFINITY;
		int m = 0, r;

		for (int i = 0; i < n; i++) {
			if (cs[i].done)
				continue;
			if (cs[i].deadline <= t) {
				child_reap(&cs[i], 1);
				ended++;
				continue;
			}
			first = fmin(first, cs[i].deadline);
			pf[m] = (struct pollfd){ cs[i].fd, POLLIN, 0 };
			who[m++] = i;
		}
		if (ended || !m)
			break;
		r = poll(pf, (nfds_t)m, (int)((first - t) * 1000) + 1);
		for (int j = 0; r > 0 && j < m; j++) {
			Child *c = &cs[who[j]];
			ssize_t got;

			if (!pf[j].revents)
				continue;
			if (c->len == c->cap) {
				unsigned char *nb = realloc(c->buf, c->cap * 2);

				if (!nb) {
					child_reap(c, 1);
					ended++;
					continue;
				}
				c->buf = nb;
				c->cap *= 2;
			}
			got = read(c->fd, c->buf + c->len, c->cap - c->len);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				child_reap(c, 0);
				ended++;
			} else {
				c->len += (size_t)got;
				ended += c->sv && reply_done(c);
			}
		}
	}
	if (!pf || !who) {  /* out of memory: stop them all */
		for (int i = 0; i < n; i++)
			if (!cs[i].done) {
				child_reap(&cs[i], 1);
				ended++;
			}
	}
	free(pf);
	free(who);
	return ended;
}

/* ---- run servers --------------------------------------------------------- */

/* Starts devs[d]'s run server; 0, or -1 when it could not. */
static int
server_start(tlx_tune *T, int d)
{
	int fds[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		return -1;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		setpgid(0, 0);
		close(fds[0]);
		drop_servers(T);
		T->child_dev = T->devs[d];
		_exit(tune_run_server(T, fds[1]));
	}
	setpgid(pid, pid);
	close(fds[1]);
	T->srv[d] = (Server){ pid, fds[0] };
	return 0;
}

/* Ends run server sv: its socket closed, it exits between requests;
 * `force`: killed first, with what it started. */
static void
server_end(Server *sv, bool force)
{
	if (force)
		kill(-sv->pid, SIGKILL);
	close(sv->fd);
	while (waitpid(sv->pid, NULL, 0) < 0 && errno == EINTR)
		;
	sv->pid = 0;
}

/* Ends every run server. */
static void
servers_stop(tlx_tune *T)
{
	for (int d = 0; d < MAXDEV; d++)
		if (T->srv[d].pid)
			server_end(&T->srv[d], false);
}

/* Whether server child c's reply is all in; then its result is the
 * reply's bytes and its status the run's (a failed run ends the server,
 * whose device context may be lost: reaped). */
static int
reply_done(Child *c)
{
	ServerReply a;

	if (c->len < sizeof a)
		return 0;
	memcpy(&a, c->buf, sizeof a);
	if (c->len - sizeof a < a.len)
		return 0;
	memmove(c->buf, c->buf + sizeof a, (size_t)a.len);
	c->len = (size_t)a.len;
	if (a.st) {
		child_reap(c, 0);
	} else {
		c->done = 1;
		c->st = CH_OK;
		c->fd = -1;  /* the server's, which stays open */
	}
	return 1;
}

/* Sends the image compiled in *cc for cfg to devs[d]'s run server
 * (started first when none runs); its reply comes into *run as a run
 * child's output would. */
static void
server_request(tlx_tune *T, const int *cfg, Child *cc, int d, Child *run)
{
	Server *sv = &T->srv[d];
	ServerRequest q;

	memset(run, 0, sizeof *run);
	run->fd = -1;
	run->cap = 4096;
	run->buf = malloc(run->cap);
	memset(&q, 0, sizeof q);
	q.confirm = T->child_confirm;
	q.has_cfg = cfg != NULL;
	for (int i = 0; cfg && i < T->np; i++)
		q.cfg[i] = cfg[i];
	q.len = cc->len;
	for (int tries = 0; run->buf && tries < 2; tries++) {
		if (!sv->pid && server_start(T, d))
			break;
		if (!tune_write_all(sv->fd, &q, sizeof q) &&
		    !tune_write_all(sv->fd, cc->buf, cc->len)) {
			run->pid = sv->pid;
			run->fd = sv->fd;
			run->sv = sv;
			run->deadline = tune_now() + T->o.timeout;
			return;
		}
		/* it died since its last reply: once more with a new one */
		server_end(sv, true);
	}
	run->done = 1;
	run->st = CH_FAIL;
}

static int
child_run(tlx_tune *T, ChildFn fn, const int *cfg, Child *c)
{
	child_start(T, fn, cfg, c);
	while (!c->done)
		child_pump(c, 1);
	return c->st;
}

/* Runs fn on the n configurations (NULL: the default one) in up to
 * `jobs` workers at once. */
static void
worker_batch(tlx_tune *T, ChildFn fn, const int *const *cfgs, int n,
	     Child *cs)
{
	int next = 0, running = 0;

	while (next < n || running > 0) {
		while (running < T->jobs && next < n) {
			child_start(T, fn, cfgs[next], &cs[next]);
			running += !cs[next].done;
			next++;
		}
		if (running > 0)
			running -= child_pump(cs, next);
	}
}

/* Compiles the n configurations in up to `jobs` workers at once. */
static void
compile_batch(tlx_tune *T, const int *const *cfgs, int n, Child *cs)
{
	worker_batch(T, tune_compile_child, cfgs, n, cs);
}

/* ---- evaluation ---------------------------------------------------------- */

/* A compile's outcome: TLX_TUNE_OK when there is an image to run. */
static int
compile_status(const Child *cc)
{
	return cc->st == CH_OK ? TLX_TUNE_OK
	     : cc->st == CH_FAIL ? TLX_TUNE_INVALID
	     : cc->st == CH_TIMEOUT ? TLX_TUNE_TIMEOUT : TLX_TUNE_FAILED;
}

/* Starts the run child of the image compiled in *cc for cfg on device
 * devs[d]. */
static void
run_start(tlx_tune *T, const int *cfg, Child *cc, int d, Child *run)
{
	if (!T->fresh) {
		server_request(T, cfg, cc, d, run);
		return;
	}
	T->child_dev = T->devs[d];
	T->child_imgs = &cc->buf;
	T->child_lens = &cc->len;
	T->child_nimgs = 1;
	child_start(T, tune_run_child, cfg, run);
}

/* The outcome of a run child that ended. */
static int
run_status(const Child *run)
{
	switch (run->st) {
	case CH_OK:
		return run->len < TUNE_HEADER ? TLX_TUNE_FAILED : TLX_TUNE_OK;
	case CH_FAIL: return TLX_TUNE_FAILED;
	case CH_TIMEOUT: return TLX_TUNE_TIMEOUT;
	default: return TLX_TUNE_CRASH;
	}
}

/* Runs the image compiled in *cc for cfg on the first device; the
 * status, and the output in *run (its buffer owned by the caller). */
static int
run_compiled(tlx_tune *T, const int *cfg, Child *cc, Child *run)
{
	int st = compile_status(cc);

	memset(run, 0, sizeof *run);
	if (st != TLX_TUNE_OK)
		return st;
	run_start(T, cfg, cc, 0, run);
	while (!run->done)
		child_pump(run, 1);
	return run_status(run);
}

static Eval *
record(tlx_tune *T, const int *cfg, int st, double cost, int device)
{
	Eval *e;

	if (T->nevals == T->capevals) {
		int cap = T->capevals ? 2 * T->capevals : 64;
		Eval *ne = realloc(T->evals, (size_t)cap * sizeof *ne);

		if (!ne)
			return NULL;
		T->evals = ne;
		T->capevals = cap;
	}
	e = &T->evals[T->nevals++];
	memset(e, 0, sizeof *e);
	memcpy(e->cfg, cfg, (size_t)T->np * sizeof *cfg);
	for (int i = 0; i < T->np; i++)
		e->values[i] = T->params[i].v[cfg[i]];
	e->status = st;
	e->cost = st == TLX_TUNE_OK ? cost : INFINITY;
	e->t = tune_now() - T->t0;
	e->device = device;
	if (st == TLX_TUNE_OK && cost < T->best_seen)
		T->best_seen = cost;
	return e;
}

static const Eval *
find_eval(const tlx_tune *T, const int *cfg)
{
	for (int i = 0; i < T->nevals; i++)
		if (!memcmp(T->evals[i].cfg, cfg, (size_t)T->np * sizeof *cfg))
			return &T->evals[i];
	return NULL;
}

static int
over_budget(const tlx_tune *T)
{
	return T->o.budget > 0 && tune_now() - T->t0 > T->o.budget;
}

/* A run child's result: its status (TLX_TUNE_WRONG when its output
 * differs from the reference's) and, when ok, its header. */
static int
run_result(tlx_tune *T, int st, const Child *run, RunHeader *h)
{
	memset(h, 0, sizeof *h);
	h->cost = INFINITY;
	if (st == TLX_TUNE_OK &&
	    !tune_output_matches(T, run->buf + TUNE_HEADER,
				 run->len - TUNE_HEADER))
		st = TLX_TUNE_WRONG;
	if (st == TLX_TUNE_OK)
		memcpy(h, run->buf, sizeof *h);
	return st;
}

/* Records the end of a candidate's evaluation on devs[d] (d < 0: it did
 * not run); first: the first run's cost when it was run again (NaN: it
 * was not). */
static void
finish(tlx_tune *T, const int *cfg, int order, int st, const RunHeader *h,
       int d, double first, double *value)
{
	Eval *e;

	*value = st == TLX_TUNE_OK ? h->cost : INFINITY;
	if (d >= 0)
		T->dev_evals[d]++;
	/* the device the child opened, as it says */
	e = record(T, cfg, st, *value, st == TLX_TUNE_OK ? h->ordinal
				      : d < 0 ? -1 : T->devs[d]);
	if (e) {
		e->order = order;
		e->runs = st == TLX_TUNE_OK ? h->runs : 0;
		e->confirmed = !isnan(first);
		e->first = first;
	}
	if (T->o.progress)
		tune_progress(T);
}

/* Runs the compiled candidates todo[0..n) (cc: their compiles), each in
 * its own child on one of the devices, at most one child per device at a
 * time, so that a crash or a hang on one device holds up none of the
 * others; each is recorded as it ends.  A result more than 10% better
 * than the best so far (T->confirm) is run again at once on the same
 * device, in a fresh child, and the slower of the two counts. */
static void
run_batch(tlx_tune *T, const int **todo, const int *slot, int n, Child *cc,
	  double *values)
{
	Child run[MAXDEV];
	int who[MAXDEV], pend[MAXDEV], next = 0, busy = 0;
	double *first = malloc((size_t)(n ? n : 1) * sizeof *first);

	for (int i = 0; first && i < n; i++)
		first[i] = NAN;
	for (int d = 0; d < T->ndev; d++) {
		memset(&run[d], 0, sizeof run[d]);
		run[d].done = 1;
		who[d] = pend[d] = -1;
	}
	for (;;) {
		for (int d = 0; d < T->ndev; d++) {
			if (who[d] < 0 && pend[d] >= 0) {
				T->child_confirm = 1;
				run_start(T, todo[pend[d]], &cc[pend[d]], d, &run[d]);
				T->child_confirm = 0;
				who[d] = pend[d];
				pend[d] = -1;
				busy++;
			}
			while (who[d] < 0 && next < n) {
				int i = next++, st = compile_status(&cc[i]);

				if (over_budget(T)) {
					T->nskipped++;
				} else if (st != TLX_TUNE_OK) {
					RunHeader none = { .cost = INFINITY };

					finish(T, todo[i], T->nasked + i, st, &none,
					       -1, NAN, &values[slot[i]]);
				} else {
					run_start(T, todo[i], &cc[i], d, &run[d]);
					who[d] = i;
					busy++;
					continue;
				}
				free(cc[i].buf);
				cc[i].buf = NULL;
			}
		}
		if (!busy)
			break;
		child_pump(run, T->ndev);
		for (int d = 0; d < T->ndev; d++) {
			int i = who[d], st;
			RunHeader h;

			if (i < 0 || !run[d].done)
				continue;
			st = run_result(T, run_status(&run[d]), &run[d], &h);
			free(run[d].buf);
			run[d].buf = NULL;
			who[d] = -1;
			busy--;
			if (first && isnan(first[i]) && st == TLX_TUNE_OK &&
			    T->confirm && isfinite(T->best_seen) &&
			    h.cost < 0.9 * T->best_seen) {
				first[i] = h.cost;  /* suspiciously fast */
				pend[d] = i;
				continue;
			}
			if (first && !isnan(first[i]) && st == TLX_TUNE_OK)
				h.cost = fmax(h.cost, first[i]);
			finish(T, todo[i], T->nasked + i, st, &h, d,
			       first ? first[i] : NAN, &values[slot[i]]);
			free(cc[i].buf);
			cc[i].buf = NULL;
		}
	}
	free(first);
}

/* The search's evaluation of a batch (TuneEval). */
static void
batch_eval(void *ud, const int *cfgs, int count, double *values)
{
	tlx_tune *T = ud;
	const int **todo = malloc((size_t)(count ? count : 1) * sizeof *todo);
	int *slot = malloc((size_t)(count ? count : 1) * sizeof *slot);
	Child *cc = calloc((size_t)(count ? count : 1), sizeof *cc);
	int n = 0;

	for (int c = 0; c < count; c++) {
		const int *cfg = cfgs + (size_t)c * T->np;
		const Eval *e = find_eval(T, cfg);

		values[c] = INFINITY;
		if (e) {
			values[c] = e->cost;
		} else if (!todo || !slot || !cc || over_budget(T) ||
			   (T->max_evals > 0 &&
			    T->nevals + n >= T->max_evals)) {
			T->nskipped++;
		} else {
			slot[n] = c;
			todo[n++] = cfg;
		}
	}
	if (n) {
		compile_batch(T, todo, n, cc);
		run_batch(T, todo, slot, n, cc, values);
		T->nasked += n;
	}
	free(todo);
	free(slot);
	free(cc);
}

/* ---- the cost-model prior ------------------------------------------------- */

/* The recorded estimate of cfg, or NULL. */
static double *
prior_find(const tlx_tune *T, const int *cfg)
{
	for (int i = 0; i < T->npri; i++)
		if (!memcmp(T->pcfg + (size_t)i * MAXP, cfg,
			    (size_t)T->np * sizeof *cfg))
			return &T->pval[i];
	return NULL;
}

static void
prior_record(tlx_tune *T, const int *cfg, double v)
{
	if (T->npri == T->cappri) {
		int cap = T->cappri ? 2 * T->cappri : 256;
		int *pc = realloc(T->pcfg, (size_t)cap * MAXP * sizeof *pc);
		double *pv;

		if (!pc)
			return;
		T->pcfg = pc;
		if (!(pv = realloc(T->pval, (size_t)cap * sizeof *pv)))
			return;
		T->pval = pv;
		T->cappri = cap;
	}
	memset(T->pcfg + (size_t)T->npri * MAXP, 0, MAXP * sizeof *T->pcfg);
	memcpy(T->pcfg + (size_t)T->npri * MAXP, cfg, (size_t)T->np * sizeof *cfg);
	T->pval[T->npri++] = v;
}

/* The synthetic backend's planted prior (prior:NAME=V): 1 + the index
 * distance to the planted values (a parameter with none counts 0). */
static double
synth_prior(const tlx_tune *T, const int *cfg)
{
	double v = 1;

	for (int s = 0; s < T->nsyn; s++)
		if (T->syn[s].kind == SY_PRIOR) {
			const Param *p = &T->params[T->syn[s].param];

			for (int j = 0; j < p->n; j++)
				if (p->v[j] == T->syn[s].value)
					v += abs(cfg[T->syn[s].param] - j);
		}
	return v;
}

/* The search's prior (TunePrior): the estimates of prior.c from each
 * configuration's facts, gathered in `jobs` workers at once (statically
 * rejected ones: infinity, not compiled); each configuration once. */
static void
prior_batch(void *ud, const int *cfgs, int count, double *out)
{
	tlx_tune *T = ud;
	const int **todo = malloc((size_t)(count ? count : 1) * sizeof *todo);
	int *slot = malloc((size_t)(count ? count : 1) * sizeof *slot), n = 0;
	Child *cs = calloc((size_t)(count ? count : 1), sizeof *cs);
	int planted = 0;

	for (int s = 0; s < T->nsyn; s++)
		planted |= T->syn[s].kind == SY_PRIOR;
	for (int c = 0; c < count; c++) {
		const int *cfg = cfgs + (size_t)c * T->np;
		double *known = prior_find(T, cfg);

		out[c] = INFINITY;
		if (known) {
			out[c] = *known;
		} else if (planted) {
			prior_record(T, cfg, out[c] = synth_prior(T, cfg));
		} else if (!tune_check_valid(T, cfg)) {
			prior_record(T, cfg, INFINITY);
		} else if (todo && slot && cs) {
			slot[n] = c;
			todo[n++] = cfg;
		}
	}
	if (n)
		worker_batch(T, tune_prior_child, todo, n, cs);
	for (int i = 0; i < n; i++) {
		PriorFacts f;

		if (cs[i].st == CH_OK && cs[i].len == sizeof f) {
			memcpy(&f, cs[i].buf, sizeof f);
			out[slot[i]] = tune_prior_score(&f, T->sm_count,
							T->smem_per_block + 1024);
		}
		prior_record(T, todo[i], out[slot[i]]);
		free(cs[i].buf);
	}
	free(todo);
	free(slot);
	free(cs);
}

double
tune_prior_of(const tlx_tune *T, const int *cfg)
{
	const double *v = prior_find(T, cfg);

	return v ? *v : NAN;
}

/* The default configuration: its output is the reference, its device the
 * cache key's. */
static int
run_reference(tlx_tune *T)
{
	Child cc, run;
	const int *none = NULL;
	RunHeader h;
	int st;

	compile_batch(T, &none, 1, &cc);
	st = run_compiled(T, NULL, &cc, &run);
	if (st != TLX_TUNE_OK) {
		Child *why = st == TLX_TUNE_INVALID ? &cc : &run;

		tune_errf(T, TLX_ERROR, "the default configuration (without "
			  "the space's overrides) failed: %s\n%.*s%s",
			  tlx_tune_status_name(st), (int)why->len,
			  why->buf ? (char *)why->buf : "",
			  why->len ? "\n" : "");
		free(cc.buf);
		free(run.buf);
		return TLX_ERROR;
	}
	free(cc.buf);
	memcpy(&h, run.buf, sizeof h);
	T->default_cost = h.cost;
	memcpy(T->device, h.name, sizeof T->device);
	T->device[sizeof T->device - 1] = 0;
	T->driver_version = h.driver;
	T->dev_count = h.count;
	T->sm_count = h.sm_count;
	T->smem_per_block = h.smem_per_block;
	memcpy(T->shape, h.shape, TUNE_SHAPE);
	T->shape[TUNE_SHAPE - 1] = 0;
	T->reflen = run.len - TUNE_HEADER;
	T->ref = malloc(T->reflen + 1);
	if (T->ref)
		memcpy(T->ref, run.buf + TUNE_HEADER, T->reflen);
	free(run.buf);
	return T->ref ? TLX_OK : tune_errf(T, TLX_NOMEM, "out of memory");
}

static int
cmp_eval(const void *a, const void *b)
{
	const Eval *x = *(const Eval *const *)a, *y = *(const Eval *const *)b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The best `finalists` re-timed round-robin in one child; the best of the
 * re-timing wins (the search's best when it fails). */
static void
pick_best(tlx_tune *T)
{
	const Eval **ok = malloc((size_t)(T->nevals ? T->nevals : 1) * sizeof *ok);
	const int *cfgs[MAXFIN + 1];
	int nok = 0, flat[MAXFIN * MAXP], nimg;
	Child cc[MAXFIN + 1], rt;
	unsigned char *imgs[MAXFIN + 1];
	size_t lens[MAXFIN + 1];

	T->has_best = 0;
	T->nfin = 0;
	T->retime_status = -1;
	T->default_retimed = NAN;
	for (int i = 0; ok && i < T->nevals; i++)
		if (T->evals[i].status == TLX_TUNE_OK)
			ok[nok++] = &T->evals[i];
	if (!ok || !nok) {
		free(ok);
		return;
	}
	qsort(ok, (size_t)nok, sizeof *ok, cmp_eval);
	T->has_best = 1;
	memcpy(T->best, ok[0]->cfg, sizeof T->best);
	T->best_cost = ok[0]->cost;
	T->nfin = nok < T->finalists ? nok : T->finalists;
	for (int i = 0; i < T->nfin; i++) {
		T->fin[i] = *ok[i];
		T->fin_search[i] = ok[i]->cost;
		cfgs[i] = T->fin[i].cfg;
		memcpy(flat + i * T->np, T->fin[i].cfg, (size_t)T->np * sizeof *flat);
	}
	free(ok);
	if (T->nfin < 2) {
		T->nfin = 0;
		return;
	}
	/* the default configuration too, last, so that the winner's
	 * speed-up over it is of times taken together */
	nimg = T->nfin + (T->ref != NULL);
	cfgs[T->nfin] = NULL;
	compile_batch(T, cfgs, nimg, cc);
	for (int i = 0; i < nimg; i++) {
		imgs[i] = cc[i].buf;
		lens[i] = cc[i].len;
		if (cc[i].st != CH_OK)
			T->retime_status = TLX_TUNE_FAILED;
	}
	T->child_imgs = imgs;
	T->child_lens = lens;
	T->child_nimgs = nimg;
	T->child_dev = T->devs[0];
	if (T->retime_status < 0) {
		int st = child_run(T, tune_retime_child, flat, &rt);

		T->retime_status = st == CH_OK && rt.len == (size_t)nimg * sizeof(double)
			? TLX_TUNE_OK
			: st == CH_TIMEOUT ? TLX_TUNE_TIMEOUT
			: st == CH_CRASH ? TLX_TUNE_CRASH : TLX_TUNE_FAILED;
		if (T->retime_status == TLX_TUNE_OK) {
			int b = 0;

			for (int i = 0; i < T->nfin; i++) {
				memcpy(&T->fin[i].cost, rt.buf + i * sizeof(double),
				       sizeof(double));
				if (T->fin[i].cost < T->fin[b].cost)
					b = i;
			}
			memcpy(T->best, T->fin[b].cfg, sizeof T->best);
			T->best_cost = T->fin[b].cost;
			if (nimg > T->nfin)
				memcpy(&T->default_retimed,
				       rt.buf + T->nfin * sizeof(double),
				       sizeof(double));
		}
		free(rt.buf);
	}
	for (int i = 0; i < nimg; i++)
		free(cc[i].buf);
}

/* ---- the cache ----------------------------------------------------------- */

static void
hash_in(uint64_t h[2], const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h[0] = (h[0] ^ c[i]) * 0x100000001b3ull;
		h[1] = (h[1] ^ c[i]) * 0x100000001b3ull + (h[1] >> 29);
	}
	h[0] = (h[0] ^ 0xff) * 0x100000001b3ull;  /* field separator */
	h[1] = (h[1] ^ 0xfe) * 0x100000001b3ull;
}

/* The cache file of this kernel, arguments and device (malloc'd), or
 * NULL when no cache directory is known. */
static char *
cache_path(const tlx_tune *T, int make)
{
	static const char *const bk[] = { "sim", "cuda", "synthetic" };
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
	const char *base = T->o.cache_dir, *sub = "";
	char num[64], *dir, *path;
	size_t n;

	if (!base || !*base) {
		sub = "/tlx/tune";
		if (!(base = getenv("XDG_CACHE_HOME")) || !*base) {
			if (!(base = getenv("HOME")) || !*base)
				return NULL;
			sub = "/.cache/tlx/tune";
		}
	}
	hash_in(h, "tlx-tune 1", 10);
	hash_in(h, T->src, T->srclen);
	hash_in(h, T->kernel, strlen(T->kernel));
	hash_in(h, bk[T->o.backend], strlen(bk[T->o.backend]));
	n = (size_t)snprintf(num, sizeof num, "%lld %lld %d",
			     (long long)T->o.size, (long long)T->elems,
			     T->driver_version);
	hash_in(h, num, n);
	for (int i = 0; i < T->nsargs; i++)
		hash_in(h, T->sargs[i], strlen(T->sargs[i]));
	for (int i = 0; i < T->ndefs; i++)
		hash_in(h, T->defs[i], strlen(T->defs[i]));
	hash_in(h, T->device, strlen(T->device));
	hash_in(h, tlx_libversion(), strlen(tlx_libversion()));
	n = strlen(base) + strlen(sub) + 64;
	if (!(dir = malloc(n)) || !(path = malloc(n))) {
		free(dir);
		return NULL;
	}
	snprintf(dir, n, "%s%s", base, sub);
	if (make)  /* each level; existing ones are fine */
		for (char *s = dir + 1;; s++)
			if (!*s || *s == '/') {
				char c = *s;

				*s = 0;
				mkdir(dir, 0755);
				if (!(*s = c))
					break;
			}
	snprintf(path, n, "%s/%016llx%016llx.txt", dir,
		 (unsigned long long)h[0], (unsigned long long)h[1]);
	free(dir);
	return path;
}

/* The cached winner, when every parameter of the space has a value of
 * the space in it. */
static int
cache_read(tlx_tune *T, int *cfg)
{
	char *path = cache_path(T, 0), line[256], name[64];
	FILE *f = path ? fopen(path, "r") : NULL;
	int have = 0;
	long long v;

	free(path);
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "param %63s %lld", name, &v) == 2)
			for (int i = 0; i < T->np; i++)
				if (!strcmp(T->params[i].name, name))
					for (int j = 0; j < T->params[i].n; j++)
						if (T->params[i].v[j] == v) {
							cfg[i] = j;
							have |= 1 << i;
						}
	fclose(f);
	return have == (1 << T->np) - 1;
}

static void
cache_write(tlx_tune *T)
{
	char *path = cache_path(T, 1), *tmp;
	size_t n;
	FILE *f;
	int ok;

	if (!path)
		return;
	n = strlen(path) + 32;
	if (!(tmp = malloc(n))) {
		free(path);
		return;
	}
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	if ((f = fopen(tmp, "w"))) {
		fprintf(f, "tlx-tune 1\nkernel %s\ndevice %s\ncost %.9g\n",
			T->kernel, T->device, T->best_cost);
		for (int i = 0; i < T->np; i++)
			fprintf(f, "param %s %lld\n", T->params[i].name,
				(long long)T->params[i].v[T->best[i]]);
		ok = !ferror(f);
		ok = !fclose(f) && ok;
		if (!ok || rename(tmp, path))
			unlink(tmp);
	}
	free(tmp);
	free(path);
}

/* ---- the session --------------------------------------------------------- */

int
tlx_tune_opts_default(tlx_tune_opts *o)
{
	if (!o)
		return TLX_MISUSE;
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->timeout = 10;
	o->size = 4096;
	o->cache = 1;
	return TLX_OK;
}

int
tlx_tune_create(const char *name, const char *src, size_t len,
		const char *kernel, tlx_tune **out)
{
	tlx_tune *T;

	if (!out)
		return TLX_MISUSE;
	*out = NULL;
	if (!src || !kernel || !*kernel)
		return TLX_MISUSE;
	if (!(T = calloc(1, sizeof *T)))
		return TLX_NOMEM;
	T->name = strdup(name ? name : "<string>");
	T->kernel = strdup(kernel);
	T->src = malloc(len + 1);
	if (!T->name || !T->kernel || !T->src) {
		tlx_tune_destroy(T);
		return TLX_NOMEM;
	}
	memcpy(T->src, src, len);
	T->src[len] = 0;
	T->srclen = len;
	tlx_tune_opts_default(&T->o);
	*out = T;
	return TLX_OK;
}

void
tlx_tune_destroy(tlx_tune *T)
{
	if (!T)
		return;
	servers_stop(T);
	for (int i = 0; i < T->ndefs; i++)
		free(T->defs[i]);
	for (int i = 0; i < T->nsargs; i++)
		free(T->sargs[i]);
	free(T->name);
	free(T->kernel);
	free(T->src);
	free(T->ref);
	free(T->evals);
	free(T->pcfg);
	free(T->pval);
	tune_check_free(T->check);
	free(T->err);
	free(T);
}

const char *
tlx_tune_errmsg(tlx_tune *T)
{
	return T && T->err ? T->err : "";
}

const char *
tlx_tune_status_name(int st)
{
	static const char *const names[] = {
		"ok", "invalid", "crash", "timeout", "wrong", "failed", "skipped",
	};

	return st >= 0 && st <= ST_SKIPPED ? names[st] : "?";
}

static int
find_param(const tlx_tune *T, const char *name, size_t len)
{
	for (int i = 0; i < T->np; i++)
		if (strlen(T->params[i].name) == len &&
		    !memcmp(T->params[i].name, name, len))
			return i;
	return -1;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int
tlx_tune_add_param(tlx_tune *T, const char *name, const int64_t *v, int n)
{
	Param *p;
	size_t len;

	if (!T || !name || !v)
		return TLX_MISUSE;
	len = strlen(name);
	if (!len || len >= sizeof p->name)
		return tune_errf(T, TLX_MISUSE, "'%s': a parameter needs a "
				 "name of 1 to 63 characters", name);
	if (T->np == MAXP)
		return tune_errf(T, TLX_MISUSE, "at most %d parameters", MAXP);
	if (n < 1 || n > MAXV)
		return tune_errf(T, TLX_MISUSE, "'%s': 1 to %d values", name,
				 MAXV);
	if (find_param(T, name, len) >= 0)
		return tune_errf(T, TLX_MISUSE, "'%s' is given twice", name);
	for (int i = 0; i < T->ndefs; i++)
		if (strcspn(T->defs[i], "=") == len &&
		    !strncmp(T->defs[i], name, len))
			return tune_errf(T, TLX_MISUSE, "-D %s: the parameter "
					 "is also a --space; give it one way",
					 T->defs[i]);
	p = &T->params[T->np];
	memcpy(p->name, name, len + 1);
	memcpy(p->v, v, (size_t)n * sizeof *v);
	p->n = n;
	qsort(p->v, (size_t)n, sizeof *p->v, cmp_i64);
	for (int i = 1; i < n; i++)
		if (p->v[i] == p->v[i - 1])
			return tune_errf(T, TLX_MISUSE, "'%s': the value %lld "
					 "is given twice", name,
					 (long long)p->v[i]);
	T->np++;
	return TLX_OK;
}

static int
add_str(tlx_tune *T, char **list, int *n, const char *s, const char *what)
{
	if (!T || !s)
		return TLX_MISUSE;
	if (!strchr(s, '=') || *s == '=')
		return tune_errf(T, TLX_MISUSE, "%s '%s': expected NAME=VALUE",
				 what, s);
	if (*n == MAXD)
		return tune_errf(T, TLX_MISUSE, "%s: at most %d", what, MAXD);
	if (!(list[*n] = strdup(s)))
		return TLX_NOMEM;
	++*n;
	return TLX_OK;
}

int
tlx_tune_add_define(tlx_tune *T, const char *def)
{
	if (T && def && find_param(T, def, strcspn(def, "=")) >= 0)
		return tune_errf(T, TLX_MISUSE, "-D %s: the parameter is also "
				 "a --space; give it one way", def);
	return add_str(T, T ? T->defs : NULL, T ? &T->ndefs : NULL, def, "-D");
}

int
tlx_tune_add_arg(tlx_tune *T, const char *arg)
{
	return add_str(T, T ? T->sargs : NULL, T ? &T->nsargs : NULL, arg,
		       "--arg");
}

int
tlx_tune_set_valid(tlx_tune *T, int (*valid)(void *, const int64_t *),
		   void *ud)
{
	if (!T)
		return TLX_MISUSE;
	T->valid = valid;
	T->valid_ud = ud;
	return TLX_OK;
}

int
tlx_tune_set_opts(tlx_tune *T, const tlx_tune_opts *o)
{
	if (!T || !o)
		return TLX_MISUSE;
	if (o->search < TLX_TUNE_LFBO || o->search > TLX_TUNE_RANDOM)
		return tune_errf(T, TLX_MISUSE, "unknown search %d", o->search);
	if (o->backend < TLX_TUNE_SIM || o->backend > TLX_TUNE_SYNTHETIC)
		return tune_errf(T, TLX_MISUSE, "unknown backend %d", o->backend);
	if (!(o->timeout > 0) || o->budget < 0 || o->max_evals < 0 ||
	    o->initial < 0 ||
	    o->repeats < 0 || o->repeats > 1000 || o->jobs < 0 ||
	    o->finalists < -1 || o->rounds < 0 || o->rounds > 1000 ||
	    o->size < 1 || o->elems < 0)
		return tune_errf(T, TLX_MISUSE, "an option is out of range");
	if (o->effort < TLX_TUNE_EFFORT_DEFAULT ||
	    o->effort > TLX_TUNE_EFFORT_FULL || !(o->repeat_ms >= 0) ||
	    o->repeat_ms > 1e6 || o->confirm < -1 || o->confirm > 1)
		return tune_errf(T, TLX_MISUSE, "an option is out of range");
	if (tune_parse_devices(o->devices, T->devs, &T->ndev))
		return tune_errf(T, TLX_MISUSE, "bad device list '%s' (expected "
				 "'all' or distinct numbers: 0,1)", o->devices);
	T->o = *o;
	return TLX_OK;
}

/* tlx_tune_opts.devices: "all" or NULL (*n = 0), or distinct ordinals
 * "0,1,3"; -1 when malformed. */
int
tune_parse_devices(const char *list, int *devs, int *n)
{
	*n = 0;
	if (!list || !strcmp(list, "all"))
		return 0;
	for (const char *q = list;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(q, &end, 10);
		if (end == q || errno || v < 0 || v > 1023 || *n == MAXDEV ||
		    (*end && *end != ','))
			return -1;
		for (int i = 0; i < *n; i++)
			if (devs[i] == v)
				return -1;
		devs[(*n)++] = (int)v;
		if (!*end)
			return 0;
		q = end + 1;
	}
}

/* After the reference: the devices, now that their number is known. */
static int
setup_devices(tlx_tune *T)
{
	if (tune_parse_devices(T->o.devices, T->devs, &T->ndev))
		return tune_errf(T, TLX_MISUSE, "bad device list '%s'",
				 T->o.devices);
	if (!T->ndev) {
		T->ndev = T->dev_count < 1 ? 1
			: T->dev_count > MAXDEV ? MAXDEV : T->dev_count;
		for (int d = 0; d < T->ndev; d++)
			T->devs[d] = d;
	}
	for (int d = 0; d < T->ndev; d++)
		if (T->devs[d] >= T->dev_count)
			return tune_errf(T, TLX_MISUSE, "no device %d: the "
					 "backend presents %d", T->devs[d],
					 T->dev_count);
	return TLX_OK;
}

/* TLX_TUNE_SYNTHETIC's KIND:NAME=VALUE,... */
static int
parse_synth(tlx_tune *T, const char *s)
{
	static const char *const kinds[SY_NKINDS] = {
		"opt", "crash", "segv", "hang", "wrong", "reject",
		"compile-crash", "compile-hang", "prior", "fast",
	};
	char item[128];

	T->nsyn = 0;
	for (const char *q = s; q && *q;) {
		size_t n = strcspn(q, ","), k;
		char *colon, *eq, *end;
		Synth *y;

		if (n >= sizeof item || T->nsyn == MAXSYN)
			return tune_errf(T, TLX_MISUSE, "TLX_TUNE_SYNTHETIC: too long");
		memcpy(item, q, n);
		item[n] = 0;
		q += n + !!q[n];
		colon = strchr(item, ':');
		eq = colon ? strchr(colon, '=') : NULL;
		if (!eq)
			return tune_errf(T, TLX_MISUSE, "TLX_TUNE_SYNTHETIC: "
					 "'%s': expected KIND:NAME=VALUE", item);
		*colon = 0;
		for (k = 0; k < SY_NKINDS && strcmp(item, kinds[k]); k++)
			;
		if (k == SY_NKINDS)
			return tune_errf(T, TLX_MISUSE, "TLX_TUNE_SYNTHETIC: "
					 "unknown kind '%s' (opt, crash, segv, "
					 "hang, wrong, reject, compile-crash, "
					 "compile-hang, prior, fast)", item);
		y = &T->syn[T->nsyn++];
		y->kind = (int)k;
		y->param = find_param(T, colon + 1, (size_t)(eq - colon - 1));
		if (y->param < 0)
			return tune_errf(T, TLX_MISUSE, "TLX_TUNE_SYNTHETIC: "
					 "'%.*s' is not a parameter of the space",
					 (int)(eq - colon - 1), colon + 1);
		errno = 0;
		y->value = strtoll(eq + 1, &end, 0);
		if (errno || end == eq + 1 || *end)
			return tune_errf(T, TLX_MISUSE, "TLX_TUNE_SYNTHETIC: "
					 "'%s' is not an integer", eq + 1);
	}
	return TLX_OK;
}

static bool
search_valid(void *ud, const int *cfg)
{
	return tune_check_valid(ud, cfg);
}

/* The effort levels' budgets (TLX_TUNE_EFFORT_*; docs/tuning.md). */
static const struct Effort {
	const char *name;
	int initial, copies, generations, max_evals, random;
	int repeats, rounds, finalists;  /* repeats and rounds: cuda's */
} efforts[3] = {
	{ "default", 100, 5, 20, 0, 100, 10, 20, 5 },
	{ "quick", 30, 2, 5, 150, 50, 5, 10, 3 },
	{ "full", 200, 8, 40, 0, 300, 20, 40, 10 },
};

const char *
tune_effort_name(int effort)
{
	return efforts[effort].name;
}

static void
reset(tlx_tune *T)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int cuda = T->o.backend == TLX_TUNE_CUDA;
	const struct Effort *ef = &efforts[T->o.effort];

	free(T->ref);
	T->ref = NULL;
	T->nevals = T->nskipped = T->nfin = T->has_best = T->ncached = 0;
	T->nasked = 0;
	T->npri = 0;
	T->retime_status = -1;
	T->default_retimed = NAN;
	T->repeats = T->o.repeats ? T->o.repeats : cuda ? ef->repeats : 3;
	T->rounds = T->o.rounds ? T->o.rounds : cuda ? ef->rounds : 3;
	T->jobs = T->o.jobs ? T->o.jobs : cores > 0 ? (int)cores : 1;
	T->finalists = T->o.finalists < 0 ? 0 : T->o.finalists ? T->o.finalists
							       : ef->finalists;
	T->max_evals = T->o.max_evals ? T->o.max_evals : ef->max_evals;
	T->initial = T->o.initial ? T->o.initial : ef->initial;
	T->copies = ef->copies;
	T->generations = ef->generations;
	T->confirm = T->o.confirm ? T->o.confirm > 0 : cuda;
	T->best_seen = INFINITY;
	if (T->finalists > MAXFIN)
		T->finalists = MAXFIN;
	T->elems = T->o.elems ? T->o.elems : T->o.size;
	/* the reference runs on the first device listed (0 for all) */
	if (tune_parse_devices(T->o.devices, T->devs, &T->ndev) || !T->ndev)
		T->devs[0] = 0;
	T->ndev = 1;
	T->dev_count = 0;
	memset(T->dev_evals, 0, sizeof T->dev_evals);
	T->cost_unit = cuda ? "ms (cuda events after an L2 flush, median)"
		     : T->o.backend == TLX_TUNE_SIM
			     ? "operations (simulator steps, median)"
			     : "synthetic";
}

int
tlx_tune_run(tlx_tune *T)
{
	TuneParam tp[MAXP];
	TuneSpace space = { tp, 0 };
	TuneResult r = { 0 };
	TuneValid valid = search_valid;
	const char *syn;
	int rc;

	if (!T)
		return TLX_MISUSE;
	if (!T->np)
		return tune_errf(T, TLX_MISUSE, "no space: add at least one "
				 "parameter");
	reset(T);
	/* TLX_TUNE_FRESH=1: a new process (and device context) for every
	 * candidate's run instead of one run server per device */
	T->fresh = getenv("TLX_TUNE_FRESH") && !strcmp(getenv("TLX_TUNE_FRESH"), "1");
	syn = T->o.synthetic ? T->o.synthetic : getenv("TLX_TUNE_SYNTHETIC");
	T->nsyn = 0;
	if (T->o.backend == TLX_TUNE_SYNTHETIC && (rc = parse_synth(T, syn)))
		return rc;
	if (tune_check_begin(T))
		return tune_errf(T, TLX_NOMEM, "out of memory");
	T->t0 = tune_now();
	rc = run_reference(T);
	servers_stop(T);  /* it ran on devs[0] before the device list was set */
	if (rc || (rc = setup_devices(T)))
		return rc;
	for (int i = 0; i < T->np; i++)
		tp[i] = (TuneParam){ T->params[i].name, T->params[i].v,
				     T->params[i].n };
	space.n = T->np;
	/* the cached winner first */
	if (T->o.cache && cache_read(T, T->cached) &&
	    (!valid || valid(T, T->cached))) {
		double v;

		T->ncached = 1;
		batch_eval(T, T->cached, 1, &v);
	}
	if (T->o.search == TLX_TUNE_LFBO) {
		TuneOpts o;

		tune_opts_default(&o);
		o.seed = T->o.seed;
		o.max_evals = T->max_evals;
		o.initial = T->initial;
		o.copies = T->copies;
		o.generations = T->generations;
		o.start = T->ncached ? T->cached : NULL;
		o.prior = T->o.prior ? prior_batch : NULL;
		rc = tune_lfbo(&space, batch_eval, valid, T, &o, &r);
	} else if (T->o.search == TLX_TUNE_EXHAUSTIVE) {
		rc = tune_exhaustive(&space, batch_eval, valid, T,
				     T->o.prior ? prior_batch : NULL, &r);
	} else {
		rc = tune_random(&space, batch_eval, valid, T,
				 T->max_evals > 0 ? T->max_evals
						  : efforts[T->o.effort].random,
				 T->o.seed, &r);
	}
	tune_result_free(&r);
	servers_stop(T);
	if (T->o.progress)
		fputc('\n', stderr);
	if (rc)
		return tune_errf(T, TLX_NOMEM, "out of memory");
	pick_best(T);
	T->wall = tune_now() - T->t0;
	if (T->has_best && T->o.cache)
		cache_write(T);
	return TLX_OK;
}

int
tlx_tune_get_best(tlx_tune *T, int64_t *values, double *cost)
{
	if (!T)
		return TLX_MISUSE;
	if (!T->has_best)
		return tune_errf(T, TLX_ERROR, "every candidate failed (%d "
				 "evaluated)", T->nevals);
	for (int i = 0; values && i < T->np; i++)
		values[i] = T->params[i].v[T->best[i]];
	if (cost)
		*cost = T->best_cost;
	return TLX_OK;
}

int
tlx_tune_num_params(tlx_tune *T, int *n)
{
	if (!T || !n)
		return TLX_MISUSE;
	*n = T->np;
	return TLX_OK;
}

int
tlx_tune_get_param_name(tlx_tune *T, int i, const char **name)
{
	if (!T || !name || i < 0 || i >= T->np)
		return TLX_MISUSE;
	*name = T->params[i].name;
	return TLX_OK;
}

int
tlx_tune_get_default(tlx_tune *T, double *first, double *retimed)
{
	if (!T)
		return TLX_MISUSE;
	if (first)
		*first = T->ref ? T->default_cost : INFINITY;
	if (retimed)
		*retimed = T->default_retimed;
	return TLX_OK;
}

int
tlx_tune_num_evals(tlx_tune *T, int *n)
{
	if (!T || !n)
		return TLX_MISUSE;
	*n = T->nevals;
	return TLX_OK;
}

int
tlx_tune_num_rejections(tlx_tune *T, int *n)
{
	if (!T || !n)
		return TLX_MISUSE;
	*n = T->check ? T->check->nrej : 0;
	return TLX_OK;
}

int
tlx_tune_get_rejection(tlx_tune *T, int i, tlx_tune_rejection *out)
{
	if (!T || !out || !T->check || i < 0 || i >= T->check->nrej)
		return TLX_MISUSE;
	out->values = T->check->rej[i].values;
	out->by = T->check->rej[i].by;
	out->why = T->check->rej[i].why;
	return TLX_OK;
}

int
tlx_tune_get_checks(tlx_tune *T, int *checked, int *rejected, double *seconds)
{
	const TuneCheck *c;

	if (!T)
		return TLX_MISUSE;
	c = T->check;
	if (checked)
		*checked = c ? c->n : 0;
	for (int by = 0; rejected && by < 3; by++)
		rejected[by] = c ? c->count[by] : 0;
	if (seconds)
		*seconds = c ? c->seconds : 0;
	return TLX_OK;
}

int
tlx_tune_get_eval(tlx_tune *T, int i, tlx_tune_eval *out)
{
	if (!T || !out || i < 0 || i >= T->nevals)
		return TLX_MISUSE;
	out->values = T->evals[i].values;
	out->status = T->evals[i].status;
	out->cost = T->evals[i].cost;
	out->time = T->evals[i].t;
	out->device = T->evals[i].device;
	out->runs = T->evals[i].runs;
	out->confirmed = T->evals[i].confirmed;
	return TLX_OK;
}
