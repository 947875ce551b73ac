/*
 * rtrun: launches one kernel of a module with arguments described on the
 * command line, through the public API only, and prints "ok" or the
 * error.  The lit tests of testsuite/runtime check its output.
 *
 *   rtrun [options] MODULE KERNEL ARG...
 *
 * Options:
 *   -d NAME         device (default: sim)
 *   -g X[,Y[,Z]]    grid (default: the kernel's grid function)
 *   -c X[,Y[,Z]]    cluster shape
 *   -s SEED         simulator: shuffle seed
 *   -S STEPS        simulator: step limit
 *   -D STEPS        simulator: async delay
 *   -R N            simulator: resident clusters
 *   -F              simulator: check fences
 *   -p N[:K]        after the launch, print K elements (default 16) of the
 *                   buffer of argument N (1-based); may repeat
 *   -w N:FILE       after the launch, write the bytes of argument N's
 *                   buffer to FILE (to compare two devices' results)
 *   -i              print the kernel's metadata first
 *
 * Arguments:
 *   i32:V i64:V u32:V u64:V f32:V f64:V    scalars
 *   buf:TYPE:N[:INIT][+OFF]                a new buffer of N elements;
 *                                          INIT rand, zero, iota, poison
 *                                          (0xff bytes) or unset
 *   tensor:TYPE:D0xD1..[:s=S0xS1..][:INIT][+OFF]
 *                                          a tensor over a new buffer
 *                                          (strides in elements)
 *   same:N[+OFF]                           argument N's pointer
 *   null                                   a null pointer
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlx/tlxrt.h"

enum { MAXARGS = 64 };

static tlxrt_device *dev;
static tlxrt_ptr bufs[MAXARGS];
static size_t buf_elems[MAXARGS];
static int buf_type[MAXARGS];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static _Noreturn void
die(const char *fmt, const char *s)
{
	fprintf(stderr, "rtrun: ");
	fprintf(stderr, fmt, s);
	fputc('\n', stderr);
	exit(2);
}

static int
type_of(const char *s, size_t n)
{
	int t;

	for (t = TLXRT_I1; t <= TLXRT_F64; t++)
		if (strlen(tlxrt_type_name(t)) == n &&
		    strncmp(tlxrt_type_name(t), s, n) == 0)
			return t;
	return 0;
}

static float
half_to_float(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	float v = e == 0 ? m / 16777216.0f
			 : (float)(1024 + m) / 1024.0f * (float)(1 << e) / 32768.0f;

	if (e == 31)
		v = m ? 0.0f / 0.0f : 1.0f / 0.0f;
	return h & 0x8000 ? -v : v;
}

/* Writes element i of a buffer of type t: a random, zero or iota value. */
static void
fill_one(uint8_t *p, int t, size_t i, const char *init)
{
	int es = tlxrt_type_size(t);
	float f = (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1);
	int64_t v = (int64_t)(rnd() % 201) - 100;
	uint32_t bits;

	if (strcmp(init, "zero") == 0) {
		memset(p, 0, (size_t)es);
		return;
	}
	if (strcmp(init, "iota") == 0) {
		f = (float)i;
		v = (int64_t)i;
	}
	memcpy(&bits, &f, 4);
	switch (t) {
	case TLXRT_F32: memcpy(p, &f, 4); break;
	case TLXRT_F64: { double d = f; memcpy(p, &d, 8); break; }
	case TLXRT_BF16: { uint16_t h = (uint16_t)(bits >> 16); memcpy(p, &h, 2); break; }
	case TLXRT_F16: {
		/* truncate an f32 (|f| < 65504) to f16 */
		int e = (int)((bits >> 23) & 255) - 127 + 15;
		uint16_t h = (uint16_t)((bits >> 16) & 0x8000);

		if (e > 0)
			h |= (uint16_t)(e << 10 | ((bits >> 13) & 1023));
		memcpy(p, &h, 2);
		break;
	}
	case TLXRT_F8E4M3: case TLXRT_F8E5M2:
		*p = (uint8_t)(rnd() & 0xbf);  /* never NaN */
		break;
	case TLXRT_I1: *p = (uint8_t)(v & 1); break;
	default: memcpy(p, &v, (size_t)es); break;
	}
}

static tlxrt_ptr
new_buf(int idx, int t, size_t n, const char *init)
{
	size_t es = (size_t)tlxrt_type_size(t), i;
	uint8_t *host = malloc(n * es);
	tlxrt_ptr p;

	if (!host || tlxrt_malloc(dev, n * es, &p) != TLXRT_OK)
		die("cannot allocate a buffer (%s)", tlxrt_errmsg(dev));
	if (strcmp(init, "unset") != 0) {
		if (strcmp(init, "poison") == 0)
			memset(host, 0xff, n * es);
		else
			for (i = 0; i < n; i++)
				fill_one(host + i * es, t, i, init);
		if (tlxrt_memcpy_htod(dev, p, host, n * es) != TLXRT_OK)
			die("cannot copy (%s)", tlxrt_errmsg(dev));
	}
	free(host);
	bufs[idx] = p;
	buf_elems[idx] = n;
	buf_type[idx] = t;
	return p;
}

static int64_t
parse_dims(const char *s, int64_t *out, const char **end)
{
	int n = 0;
	char *e;

	for (;;) {
		out[n++] = strtoll(s, &e, 10);
		if (*e != 'x' || n == 5)
			break;
		s = e + 1;
	}
	*end = e;
	return n;
}

static const char *
offset(const char *s, int64_t *off)
{
	const char *plus = strchr(s, '+');

	*off = plus ? strtoll(plus + 1, NULL, 10) : 0;
	return plus;
}

static tlxrt_arg
parse_arg(int idx, const char *s)
{
	const char *c = strchr(s, ':'), *e;
	int64_t off, shape[5], strides[5];
	char init[16] = "rand";
	tlxrt_arg a;
	int t, rank, d;

	if (strcmp(s, "null") == 0)
		return tlxrt_arg_ptr(0);
	if (!c)
		die("bad argument '%s'", s);
	if (strncmp(s, "i32:", 4) == 0)
		return tlxrt_arg_i32((int32_t)strtol(c + 1, NULL, 0));
	if (strncmp(s, "i64:", 4) == 0)
		return tlxrt_arg_i64(strtoll(c + 1, NULL, 0));
	if (strncmp(s, "u32:", 4) == 0)
		return tlxrt_arg_u32((uint32_t)strtoul(c + 1, NULL, 0));
	if (strncmp(s, "u64:", 4) == 0)
		return tlxrt_arg_u64(strtoull(c + 1, NULL, 0));
	if (strncmp(s, "f32:", 4) == 0)
		return tlxrt_arg_f32(strtof(c + 1, NULL));
	if (strncmp(s, "f64:", 4) == 0)
		return tlxrt_arg_f64(strtod(c + 1, NULL));
	if (strncmp(s, "same:", 5) == 0) {
		int n = atoi(c + 1);

		offset(s, &off);
		if (n < 1 || n > idx)
			die("bad argument number in '%s'", s);
		return tlxrt_arg_ptr(bufs[n - 1] + (uint64_t)off);
	}
	e = strchr(c + 1, ':');
	if (!e || !(t = type_of(c + 1, (size_t)(e - (c + 1)))))
		die("bad type in '%s'", s);
	if (strncmp(s, "buf:", 4) == 0) {
		size_t n = strtoull(e + 1, (char **)&e, 10);

		if (*e == ':')
			sscanf(e + 1, "%15[a-z]", init);
		offset(s, &off);
		return tlxrt_arg_ptr(new_buf(idx, t, n, init) + (uint64_t)off);
	}
	if (strncmp(s, "tensor:", 7) == 0) {
		size_t total = 1;

		rank = (int)parse_dims(e + 1, shape, &e);
		for (d = rank - 1; d >= 0; d--)
			strides[d] = d == rank - 1 ? 1 : strides[d + 1] * shape[d + 1];
		if (strncmp(e, ":s=", 3) == 0)
			parse_dims(e + 3, strides, &e);
		if (*e == ':')
			sscanf(e + 1, "%15[a-z]", init);
		offset(s, &off);
		for (d = 0; d < rank; d++)
			total += (size_t)((shape[d] - 1) * strides[d]);
		a = tlxrt_arg_tensor(new_buf(idx, t, total + 64, init) +
					     (uint64_t)off,
				     t, rank, shape, strides);
		return a;
	}
	die("bad argument '%s'", s);
}

static void
parse3(const char *s, uint32_t v[3])
{
	v[0] = v[1] = v[2] = 1;
	sscanf(s, "%u,%u,%u", &v[0], &v[1], &v[2]);
}

static void
print_buf(int n, int k)
{
	int t = buf_type[n], es, i;
	uint8_t *h;

	if (!bufs[n])
		die("argument %s has no buffer", "?");
	es = tlxrt_type_size(t);
	if ((size_t)k > buf_elems[n])
		k = (int)buf_elems[n];
	h = malloc((size_t)k * (size_t)es + 1);
	if (tlxrt_memcpy_dtoh(dev, h, bufs[n], (size_t)k * (size_t)es))
		die("cannot read back (%s)", tlxrt_errmsg(dev));
	printf("arg%d:", n + 1);
	for (i = 0; i < k; i++) {
		uint8_t *p = h + i * es;
		float f;
		double d;
		int64_t v = 0;

		switch (t) {
		case TLXRT_F32: memcpy(&f, p, 4); printf(" %g", f); break;
		case TLXRT_F64: memcpy(&d, p, 8); printf(" %g", d); break;
		case TLXRT_BF16: {
			uint32_t b = (uint32_t)(p[0] | p[1] << 8) << 16;

			memcpy(&f, &b, 4);
			printf(" %g", f);
			break;
		}
		case TLXRT_F16: printf(" %g", half_to_float((uint16_t)(p[0] | p[1] << 8))); break;
		default:
			memcpy(&v, p, (size_t)es);
			if (es < 8 && t != TLXRT_U8 && t != TLXRT_U16 && t != TLXRT_U32 &&
			    t != TLXRT_I1 && (v >> (es * 8 - 1)) & 1)
				v -= (int64_t)1 << (es * 8);
			printf(" %lld", (long long)v);
			break;
		}
	}
	printf("\n");
	free(h);
}

static void
write_buf(int n, const char *path)
{
	size_t bytes;
	uint8_t *h;
	FILE *f;

	if (n < 0 || n >= MAXARGS || !bufs[n])
		die("-w names argument %s, which has no buffer", path);
	bytes = buf_elems[n] * (size_t)tlxrt_type_size(buf_type[n]);
	h = malloc(bytes + 1);
	if (!h || tlxrt_memcpy_dtoh(dev, h, bufs[n], bytes))
		die("cannot read back (%s)", tlxrt_errmsg(dev));
	if (!(f = fopen(path, "wb")) || fwrite(h, 1, bytes, f) != bytes ||
	    fclose(f))
		die("cannot write %s", path);
	free(h);
}

int
main(int argc, char **argv)
{
	const char *devname = "sim", *prints[16], *writes[16];
	tlxrt_launch_config cfg;
	tlxrt_module *m;
	tlxrt_kernel *k;
	tlxrt_arg args[MAXARGS];
	int i, nargs = 0, nprint = 0, nwrite = 0, info = 0, rc;
	int64_t opts[8][2];
	int nopts = 0;

	memset(&cfg, 0, sizeof cfg);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];

		if (strcmp(o, "-F") == 0) {
			opts[nopts][0] = TLXRT_SIM_CHECK_FENCES;
			opts[nopts++][1] = 1;
			continue;
		}
		if (strcmp(o, "-i") == 0) {
			info = 1;
			continue;
		}
		if (i + 1 >= argc)
			die("missing value after %s", o);
		if (strcmp(o, "-d") == 0)
			devname = argv[++i];
		else if (strcmp(o, "-g") == 0)
			parse3(argv[++i], cfg.grid);
		else if (strcmp(o, "-c") == 0)
			parse3(argv[++i], cfg.cluster);
		else if (strcmp(o, "-p") == 0 && nprint < 16)
			prints[nprint++] = argv[++i];
		else if (strcmp(o, "-w") == 0 && nwrite < 16)
			writes[nwrite++] = argv[++i];
		else if (strchr("sSDR", o[1]) && o[1] && !o[2] && nopts < 8) {
			opts[nopts][0] = o[1] == 's'   ? TLXRT_SIM_SHUFFLE
					 : o[1] == 'S' ? TLXRT_SIM_MAX_STEPS
					 : o[1] == 'D' ? TLXRT_SIM_ASYNC_DELAY
						       : TLXRT_SIM_RESIDENT;
			opts[nopts++][1] = strtoll(argv[++i], NULL, 10);
		} else
			die("unknown option %s", o);
	}
	if (argc - i < 2)
		die("usage: rtrun [options] MODULE KERNEL ARG...%s", "");
	if ((rc = tlxrt_device_open(devname, &dev)) != TLXRT_OK) {
		printf("skip: no device '%s' (%s)\n", devname, tlxrt_errstr(rc));
		return 77;
	}
	while (nopts--)
		if (tlxrt_device_set_option(dev, (int)opts[nopts][0],
					    opts[nopts][1]))
			die("%s", tlxrt_errmsg(dev));
	if ((rc = tlxrt_module_load_file(dev, argv[i], &m)) != TLXRT_OK) {
		printf("error: %s: %s\n", tlxrt_errstr(rc), tlxrt_errmsg(dev));
		tlxrt_device_close(dev);
		return 1;
	}
	if ((rc = tlxrt_kernel_get(m, argv[i + 1], &k)) != TLXRT_OK) {
		printf("error: %s: %s\n", tlxrt_errstr(rc), tlxrt_errmsg(dev));
		tlxrt_module_unload(m);
		tlxrt_device_close(dev);
		return 1;
	}
	if (info) {
		tlxrt_kernel_info ki;
		tlxrt_param_info pi;
		tlxrt_const_info ci;
		int j;

		tlxrt_kernel_get_info(k, &ki);
		printf("kernel %s: %d params, warps %d (total %d), cluster "
		       "%dx%dx%d, smem %d, grid function %s, %d consts\n",
		       ki.name, ki.num_params, ki.warps, ki.total_warps,
		       ki.cluster[0], ki.cluster[1], ki.cluster[2],
		       ki.smem_bytes, ki.has_grid ? "yes" : "no",
		       ki.num_consts);
		for (j = 0; j < ki.num_params; j++) {
			tlxrt_kernel_get_param(k, j, &pi);
			printf("  param %d '%s': kind %d type %s rank %d box "
			       "%lldx%lld\n", j + 1, pi.name, pi.kind,
			       tlxrt_type_name(pi.type), pi.rank,
			       (long long)pi.box[0], (long long)pi.box[1]);
		}
		for (j = 0; j < ki.num_consts; j++) {
			tlxrt_kernel_get_const(k, j, &ci);
			if (ci.is_float)
				printf("  const %s = %g\n", ci.name, ci.f);
			else
				printf("  const %s = %lld\n", ci.name,
				       (long long)ci.i);
		}
	}
	for (i += 2; i < argc && nargs < MAXARGS; i++, nargs++)
		args[nargs] = parse_arg(nargs, argv[i]);
	rc = tlxrt_launch(k, &cfg, args, nargs);
	if (rc == TLXRT_OK)
		rc = tlxrt_device_synchronize(dev);
	if (rc == TLXRT_OK) {
		printf("ok\n");
		for (i = 0; i < nprint; i++) {
			int n = atoi(prints[i]) - 1, cnt = 16;
			const char *c = strchr(prints[i], ':');

			if (c)
				cnt = atoi(c + 1);
			if (n < 0 || n >= nargs)
				die("bad -p %s", prints[i]);
			print_buf(n, cnt);
		}
		for (i = 0; i < nwrite; i++) {
			const char *c = strchr(writes[i], ':');

			if (!c)
				die("bad -w %s (N:FILE)", writes[i]);
			write_buf(atoi(writes[i]) - 1, c + 1);
		}
	} else {
		printf("error: %s: %s\n", tlxrt_errstr(rc), tlxrt_errmsg(dev));
	}
	for (i = 0; i < nargs; i++)
		if (bufs[i])
			tlxrt_free(dev, bufs[i]);
	tlxrt_module_unload(m);
	tlxrt_device_close(dev);
	return rc == TLXRT_OK ? 0 : 1;
}
