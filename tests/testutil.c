#include "testutil.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "error.h"

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
	uint64_t seed = env ? strtoull(env, NULL, 0) : ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec;
	if (seed == 0)
		seed = 0x9e3779b97f4a7c15ull;
	fprintf(stderr, "%s: GPUFIR_TEST_SEED=%llu\n", test_name, (unsigned long long)seed);
	return seed;
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

void gf_test_reference(const float *x, uint32_t frames, uint32_t channels, const float *h,
		       uint32_t taps, double *y)
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

char *gf_test_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/gpufir-%s-XXXXXX", base ? base : "/tmp", tag);
	char *p = mkdtemp(tmpl);
	CHECK(p != NULL);
	return strdup(p);
}
