#include "testutil.h"

#include <math.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "fftw_plan.h"
#include "gpu.h"

void gf_check_ok_or_die(int err, const struct gf_errbuf *eb, const char *file, int line, const char *expr)
{
	if (err == 0)
		return;
	fprintf(stderr, "%s:%d: %s returned %d (%s)%s%s\n", file, line, expr, err, gf_strerror(err),
		eb ? ": " : "", eb ? eb->msg : "");
	exit(1);
}

uint64_t gf_test_seed(const char *test_name)
{
	const char *env = getenv("GPUFIR_TEST_SEED");
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t seed =
		env ? strtoull(env, NULL, 0) : ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec;
	if (seed == 0)
		seed = 0x9e3779b97f4a7c15ull;
	fprintf(stderr, "%s: GPUFIR_TEST_SEED=%llu\n", test_name, (unsigned long long)seed);
	return seed;
}

unsigned gf_test_latency_slack(void)
{
	const char *env = getenv("GPUFIR_TEST_LATENCY_SLACK");
	unsigned v = env && *env ? (unsigned)strtoul(env, NULL, 10) : GF_TEST_LATENCY_SLACK;
	fprintf(stderr, "latency_slack = %u (GPUFIR_TEST_LATENCY_SLACK)\n", v);
	return v;
}

float gf_test_randf(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	uint64_t r = *s * 0x2545F4914F6CDD1Dull;
	return (float)((double)(r >> 40) / (double)(1ull << 23) - 1.0);
}

void gf_test_fill_noise(float *x, size_t n, uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		x[i] = gf_test_randf(state);
}

void gf_test_fill_decaying_taps(float *h, size_t n, uint64_t *state)
{
	double tau = n > 8 ? (double)n / 4.0 : 2.0;
	for (size_t i = 0; i < n; i++)
		h[i] = (float)(gf_test_randf(state) * exp(-(double)i / tau));
}

void gf_test_fill_bounded_taps(float *h, size_t n, double l1, uint64_t *state)
{
	gf_test_fill_decaying_taps(h, n, state);
	double s = 0.0;
	for (size_t k = 0; k < n; k++)
		s += fabs(h[k]);
	for (size_t k = 0; k < n; k++)
		h[k] = (float)(h[k] * l1 / s);
}

char *gf_test_taps_text(const float *h, size_t n, const char *sep)
{
	size_t cap = n * (24 + strlen(sep)) + 1, len = 0;
	char *buf = malloc(cap);
	CHECK(buf);
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++)
		len += (size_t)snprintf(buf + len, cap - len, "%.9g%s", h[k], k + 1 < n ? sep : "");
	return buf;
}

void gf_test_reference(const float *x, uint32_t frames, uint32_t channels, const float *h, uint32_t taps,
		       double *y)
{
	for (uint32_t c = 0; c < channels; c++) {
		const float *hc = h + (size_t)c * taps;
		for (uint32_t n = 0; n < frames; n++) {
			double acc = 0.0;
			uint32_t kmax = n + 1 < taps ? n + 1 : taps;
			for (uint32_t k = 0; k < kmax; k++)
				acc += (double)hc[k] * (double)x[(size_t)(n - k) * channels + c];
			y[(size_t)n * channels + c] = acc;
		}
	}
}

void gf_test_xcorr(const float *a, size_t na, size_t sa, const float *b, size_t nb, size_t sb, double *r)
{
	CHECK(na > 0 && nb >= na);
	size_t n = 1;
	while (n < nb + na) /* no wrap-around into the lags kept */
		n <<= 1;
	double *ta = fftw_alloc_real(n), *tb = fftw_alloc_real(n);
	fftw_complex *fa = fftw_alloc_complex(n / 2 + 1), *fb = fftw_alloc_complex(n / 2 + 1);
	CHECK(ta && tb && fa && fb);
	fftw_plan pa = gf_fftw_plan_r2c((int)n, ta, fa), pb = gf_fftw_plan_r2c((int)n, tb, fb),
		  pr = gf_fftw_plan_c2r((int)n, fa, ta);
	CHECK(pa && pb && pr);
	memset(ta, 0, sizeof(double) * n);
	memset(tb, 0, sizeof(double) * n);
	for (size_t k = 0; k < na; k++)
		ta[k] = a[k * sa];
	for (size_t k = 0; k < nb; k++)
		tb[k] = b[k * sb];
	fftw_execute(pa);
	fftw_execute(pb);
	for (size_t k = 0; k <= n / 2; k++) { /* conj(A) * B */
		double re = fa[k][0] * fb[k][0] + fa[k][1] * fb[k][1];
		double im = fa[k][0] * fb[k][1] - fa[k][1] * fb[k][0];
		fa[k][0] = re, fa[k][1] = im;
	}
	fftw_execute(pr); /* unnormalised: n times the sums */
	for (size_t s = 0; s <= nb - na; s++)
		r[s] += ta[s] / (double)n;
	gf_fftw_destroy(pa);
	gf_fftw_destroy(pb);
	gf_fftw_destroy(pr);
	fftw_free(ta), fftw_free(tb), fftw_free(fa), fftw_free(fb);
}

double gf_test_rel_l2(const float *got, const double *ref, size_t n)
{
	double num = 0.0, den = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)got[i] - ref[i];
		num += d * d;
		den += ref[i] * ref[i];
	}
	if (!isfinite(num))
		return INFINITY;
	return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

void gf_test_skip(const char *why)
{
	printf("SKIP: %s\n", why);
	fflush(stdout);
	exit(GF_TEST_SKIP);
}

void gf_test_need_gpu(void)
{
	char desc[256];
	if (gf_cuda_probe(0, desc, sizeof(desc)))
		gf_test_skip(desc);
	printf("device: %s\n", desc);
}

char *gf_test_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/gpufir-%s-XXXXXX", base ? base : "/tmp", tag);
	char *p = mkdtemp(tmpl);
	CHECK(p != NULL);
	return strdup(p);
}

int gf_test_fork_wait(int (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fn());
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	return st;
}

void gf_test_rmtree(const char *dir)
{
	const char *keep = getenv("GPUFIR_TEST_KEEP");
	if (keep && strcmp(keep, "0") != 0) { /* to read the logs of a passing run */
		printf("kept %s (GPUFIR_TEST_KEEP)\n", dir);
		return;
	}
	char cmd[4200];
	CHECK(strchr(dir, '\'') == NULL &&
	      (size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) < sizeof(cmd));
	CHECK(system(cmd) == 0);
}

char *gf_test_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	CHECK(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

void gf_test_write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		perror(path);
	CHECK(f);
	CHECK(n == 0 || fwrite(data, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

void gf_test_write_text(const char *path, const char *text)
{
	gf_test_write_file(path, text, strlen(text));
}

char *gf_test_write_text_in(const char *dir, const char *name, const char *text)
{
	char *p = gf_test_path(dir, name);
	gf_test_write_text(p, text);
	return p;
}

long gf_test_read_file(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (long)n;
}

uint64_t gf_test_file_hash(const char *path)
{
	FILE *f = fopen(path, "rb");
	CHECK(f);
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	int c;
	while ((c = getc(f)) != EOF)
		h = (h ^ (uint64_t)c) * 1099511628211ull;
	fclose(f);
	return h;
}

int gf_test_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

uint32_t gf_test_rand_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)(((double)gf_test_randf(state) + 1.0) * 0.5 * n) % n;
}

float *gf_test_noise(size_t n, uint64_t *state)
{
	float *x = malloc(n * sizeof(float) + 1);
	CHECK(x);
	gf_test_fill_noise(x, n, state);
	return x;
}

struct gf_filter_set *gf_test_random_filter(uint32_t channels, uint32_t taps, uint64_t *state)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, channels, taps));
	for (uint32_t c = 0; c < channels; c++)
		gf_test_fill_decaying_taps(gf_filter_set_channel(fs, c), taps, state);
	return fs;
}

double *gf_test_reference_fs(const float *x, uint32_t frames, uint32_t channels,
			     const struct gf_filter_set *fs)
{
	double *r = malloc((size_t)frames * channels * sizeof(double) + 1);
	CHECK(r);
	gf_test_reference(x, frames, channels, fs->coeffs, fs->taps, r);
	return r;
}

double *gf_test_reference_mix(const float *x, uint32_t frames, const struct gf_filter_set *fs)
{
	uint32_t nin = gf_filter_set_inputs(fs), nout = gf_filter_set_outputs(fs);
	double *r = calloc((size_t)frames * nout + 1, sizeof(double));
	float *col = malloc((size_t)frames * sizeof(float) + 1);
	double *y = malloc((size_t)frames * sizeof(double) + 1);
	CHECK(r && col && y);
	for (uint32_t p = 0; p < fs->channels; p++) {
		uint32_t i = gf_filter_set_path_in(fs, p), o = gf_filter_set_path_out(fs, p);
		for (uint32_t n = 0; n < frames; n++)
			col[n] = x[(size_t)n * nin + i];
		gf_test_reference(col, frames, 1, gf_filter_set_channel(fs, p), fs->taps, y);
		for (uint32_t n = 0; n < frames; n++)
			r[(size_t)n * nout + o] += y[n];
	}
	free(col);
	free(y);
	return r;
}

double *gf_test_reference_mono_filter(const float *x, uint32_t frames, uint32_t channels, const float *h,
				      uint32_t taps)
{
	double *r = malloc((size_t)frames * channels * sizeof(double) + 1);
	float *hh = malloc((size_t)taps * channels * sizeof(float));
	CHECK(r && hh);
	for (uint32_t c = 0; c < channels; c++)
		memcpy(hh + (size_t)c * taps, h, (size_t)taps * sizeof(float));
	gf_test_reference(x, frames, channels, hh, taps, r);
	free(hh);
	return r;
}

struct gf_engine *gf_test_cpu_engine(uint32_t channels, uint32_t max_block, uint32_t max_taps,
				     uint32_t crossfade_frames, enum gf_algo algo, int retry,
				     const struct gf_filter_set *fs)
{
	struct gf_engine_params p = {.backend = GF_BACKEND_CPU,
				     .algo = algo,
				     .channels = channels,
				     .max_block = max_block,
				     .max_taps = max_taps,
				     .crossfade_frames = crossfade_frames,
				     .retry = retry};
	struct gf_engine *e = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_engine_new(&e, &p, fs, &eb), &eb);
	return e;
}

struct gf_engine *gf_test_passthrough_engine(uint32_t channels, uint32_t max_block, uint32_t taps)
{
	struct gf_filter_set *fs;
	CHECK_OK(gf_filter_set_new(&fs, channels, taps));
	for (uint32_t c = 0; c < channels; c++)
		gf_filter_set_channel(fs, c)[0] = 1.0f;
	struct gf_engine *e = gf_test_cpu_engine(channels, max_block, taps, 0, GF_ALGO_AUTO, 0, fs);
	gf_filter_set_free(fs);
	return e;
}

double gf_test_rel_l2_frames(const float *got, const double *ref, uint32_t from, uint32_t to,
			     uint32_t channels)
{
	size_t off = (size_t)from * channels;
	return gf_test_rel_l2(got + off, ref + off, (size_t)(to - from) * channels);
}

int gf_test_all_zero(const float *y, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (y[i] != 0.0f)
			return 0;
	return 1;
}

struct gf_engine_stats gf_test_stats(const struct gf_engine *e)
{
	struct gf_engine_stats s;
	gf_engine_get_stats(e, &s);
	return s;
}

int gf_test_in_child(void (*fn)(void *), void *arg, const char *err_path)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (err_path && !freopen(err_path, "w", stderr))
			_exit(121);
		fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	return st;
}
