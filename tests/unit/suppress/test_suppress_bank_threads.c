/*
 * The suppressor bank's CPU channels spread over threads
 * (gf_suppress_bank_opts.threads, suppress_pool.h):
 * - the pool runs every part of a job exactly once, part 0 on the caller and
 *   each other on a thread of its own, job after job;
 * - a bank of 14 suppressed channels (and 2 only delayed) on 2, 3 and 16
 *   threads (16: one a channel, 14) says so (gf_suppress_bank_threads, the
 *   where line) and gives the bits of one thread, over calls that are not
 *   whole pieces and with a gap among them;
 * - 0 or 1 thread, or a mono bank, runs on the caller alone;
 * - with a GPU group (a CPU suppressor standing in: GPUFIR_FAULT_SUPPRESS_FAKE_GPU)
 *   the other channels spread over the threads, and after the group's failure
 *   (GPUFIR_FAULT_SUPPRESS_GPU_AFTER) its standby runs among them: the bits of
 *   the same bank on one thread throughout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suppress_bank.h"
#include "suppress_pool.h"
#include "suppressutil.h"
#include "testutil.h"

#define RATE 16000u
#define CH 16u
#define GROUP 12u
#define FRAMES (RATE * 2u)
#define NO_SUCH_GPU 4096
#define POOL_PARTS 4u
#define POOL_JOBS 2000u

static struct gf_suppress_params p_group = {.reduction_db = 18.0}, p_other = {.reduction_db = 9.0};
static const struct gf_test_bank_mix mix = {CH, RATE, GROUP, 2, &p_group, &p_other};

struct pool_job {
	pthread_t who[POOL_PARTS];
	atomic_uint runs[POOL_PARTS];
	uint32_t parts_seen[POOL_PARTS];
};

static void record(void *arg, uint32_t part, uint32_t parts)
{
	struct pool_job *j = arg;
	j->who[part] = pthread_self();
	j->parts_seen[part] = parts;
	atomic_fetch_add(&j->runs[part], 1);
}

static void pool_case(void)
{
	struct gf_suppress_pool *p;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_pool_new(POOL_PARTS, &p, &eb), &eb);
	CHECK(gf_suppress_pool_parts(p) == POOL_PARTS && gf_suppress_pool_parts(NULL) == 1);
	static struct pool_job j;
	for (uint32_t n = 1; n <= POOL_JOBS; n++) {
		gf_suppress_pool_run(p, record, &j);
		for (uint32_t k = 0; k < POOL_PARTS; k++) /* every part once a job, done on return */
			CHECK(atomic_load(&j.runs[k]) == n && j.parts_seen[k] == POOL_PARTS);
	}
	CHECK(pthread_equal(j.who[0], pthread_self()));
	for (uint32_t k = 0; k < POOL_PARTS; k++)
		for (uint32_t m = k + 1; m < POOL_PARTS; m++)
			CHECK(!pthread_equal(j.who[k], j.who[m]));
	gf_suppress_pool_free(p);
	gf_suppress_pool_free(NULL);
	printf("pool: %u jobs of %u parts, each part once a job, each on its own thread\n", POOL_JOBS,
	       POOL_PARTS);
}

/* @p x through @p b in calls of 700 and 4099 frames (not whole 1024-frame pieces), with a gap of one
 * call a third of the way in; any failure's count in *@p failed. */
static float *through(struct gf_suppress_bank *b, const float *x, int *failed)
{
	size_t n = (size_t)FRAMES * CH;
	float *y = malloc(n * sizeof(float));
	CHECK(y);
	memcpy(y, x, n * sizeof(float));
	*failed = 0;
	for (uint32_t at = 0, k = 0; at < FRAMES; k++) {
		uint32_t call = k % 2 ? 4099u : 700u, m = FRAMES - at < call ? FRAMES - at : call;
		float *piece = y + (size_t)at * CH;
		if (k == 5) {
			memset(piece, 0, (size_t)m * CH * sizeof(float));
			*failed += gf_suppress_bank_gap_by(b, piece, m, 0) != 0;
		} else {
			*failed += gf_suppress_bank_process(b, piece, m) != 0;
		}
		at += m;
	}
	return y;
}

static void cpu_case(const float *x)
{
	int failed;
	struct gf_suppress_bank *one = gf_test_bank(&mix, NULL);
	float *want = through(one, x, &failed);
	CHECK(failed == 0 && gf_suppress_bank_threads(one) == 1);
	const uint32_t asked[] = {2, 3, 16}, got[] = {2, 3, 14};
	for (size_t t = 0; t < sizeof(asked) / sizeof(asked[0]); t++) {
		struct gf_suppress_bank_opts o = {.threads = asked[t]};
		struct gf_suppress_bank *b = gf_test_bank(&mix, &o);
		char where[96], expect[96];
		gf_suppress_bank_where(b, where, sizeof(where));
		snprintf(expect, sizeof(expect), "14 channels on the CPU (%u threads)", got[t]);
		CHECK(gf_suppress_bank_threads(b) == got[t] && strcmp(where, expect) == 0);
		float *y = through(b, x, &failed);
		CHECK(failed == 0 && memcmp(y, want, (size_t)FRAMES * CH * sizeof(float)) == 0);
		printf("threads = %u: %s, the bits of one thread\n", asked[t], where);
		free(y);
		gf_suppress_bank_free(b);
	}
	struct gf_suppress_bank_opts zero = {.threads = 0}, single = {.threads = 1};
	struct gf_suppress_bank *b0 = gf_test_bank(&mix, &zero), *b1 = gf_test_bank(&mix, &single);
	CHECK(gf_suppress_bank_threads(b0) == 1 && gf_suppress_bank_threads(b1) == 1);
	gf_suppress_bank_free(b0);
	gf_suppress_bank_free(b1);
	const struct gf_suppress_params *mono[] = {&p_group};
	struct gf_suppress_bank_opts four = {.threads = 4};
	struct gf_suppress_bank *m;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(mono, 1, RATE, &four, &m, &eb), &eb);
	CHECK(gf_suppress_bank_threads(m) == 1);
	gf_suppress_bank_free(m);
	printf("threads 0 or 1, or one channel: the caller's thread alone\n");
	gf_suppress_bank_free(one);
	free(want);
}

/* A fake GPU group of 12 that fails at its call 9; @p threads for the CPU's channels. */
static struct gf_suppress_bank *group_bank(uint32_t threads)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "8", 1) == 0);
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU, .threads = threads};
	struct gf_suppress_bank *b = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER") == 0);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP);
	return b;
}

static void group_case(const float *x)
{
	struct gf_suppress_bank *one = group_bank(1), *two = group_bank(2);
	char where[96];
	gf_suppress_bank_where(two, where, sizeof(where));
	CHECK(gf_suppress_bank_threads(two) == 2 &&
	      strcmp(where, "12 channels on the GPU, 2 on the CPU (2 threads)") == 0);
	int f1, f2;
	float *want = through(one, x, &f1), *y = through(two, x, &f2);
	CHECK(f1 == 1 && f2 == 1 && gf_suppress_bank_gpu_failures(two) == 1);
	CHECK(memcmp(y, want, (size_t)FRAMES * CH * sizeof(float)) == 0);
	printf("a GPU group beside them (%s), its failure and standby: the bits of one thread\n", where);
	free(want);
	free(y);
	gf_suppress_bank_free(one);
	gf_suppress_bank_free(two);
}

int main(void)
{
	pool_case();
	uint64_t st = 0x7412ead5;
	float *x = gf_test_bank_input(FRAMES, CH, 0.01, 4000, &st);
	cpu_case(x);
	group_case(x);
	free(x);
	printf("test_suppress_bank_threads: ok\n");
	return 0;
}
