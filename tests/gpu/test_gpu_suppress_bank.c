/*
 * The suppressor bank on a real GPU (suppress_bank.h): 64 channels of one
 * set of parameters (with highpass_hz; and 2 of another, on the CPU) asked
 * for the GPU run there, in calls of a live block with the stream's deadline, and equal a
 * CPU bank within test_gpu_suppress.c's TOL_REL_L2 per channel (the same
 * argument holds: only cuFFT's rounding differs); no hop misses the deadline.
 * Then GPUFIR_FAULT_SUPPRESS_GPU_AFTER on the real GPU path: the bank
 * switches to its standby CPU suppressors, counts one failure, mutes that
 * call's GPU channels, stays finite and carries sound again afterwards.
 * A late hop on the real GPU (a call given a deadline already past: one poll,
 * the hop still in flight): counted late, no failure, still on the GPU; at
 * most that call's frames after the hop are muted, and every other call equals the CPU
 * bank: the next call collected the hop and fed the muted frames' input, so
 * the stream stayed whole and aligned. And the return: after the fault
 * hook's switch, gf_suppress_bank_try_return probes the GPU and takes the
 * group back; from then on it equals a CPU bank started at that call.
 * And a bank over threads (offline and batch) with a group large enough to be
 * cut (SPLIT_CH channels, SPLIT_THREADS threads): its GPU suppressors, one a
 * part on its own thread, give the output of one GPU suppressor for the whole
 * group within TOL_REL_L2, and its description names the parts; both where
 * the group is one run of the interleave (each part read and written in
 * place) and where other channels sit between its own (gathered).
 *
 * Skips (77) where no CUDA device is usable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "suppress_bank.h"
#include "suppressutil.h"
#include "testutil.h"

#define TOL_REL_L2 1e-4
#define RATE 48000u
#define GROUP 64u
#define CH (GROUP + 2u)
#define CALL 256u	   /* a live block */
#define DEADLINE_US 10667u /* two block periods at 48 kHz, as the daemon's engine deadline */
#define FRAMES (RATE * 2u / CALL * CALL)
#define FAIL_AFTER 100u
#define SPLIT_CH 2048u /* 4 parts of 512 channels, the fewest a part runs */
#define SPLIT_THREADS 4u
#define SPLIT_FRAMES (RATE / 2u)
#define SPLIT_CALL 8192u /* offline's large chunks */

static uint64_t rng;
/* The group's as the built-in chain's suppressor: with its high-pass. */
static struct gf_suppress_params p_group = {.reduction_db = 18.0, .highpass_hz = 25.0},
				 p_other = {.reduction_db = 9.0};

static const struct gf_test_bank_mix mix = {CH, RATE, GROUP, CH - GROUP, &p_group, &p_other};

/* Every call through @p b; the index of the call that failed, or -1. */
static int run(struct gf_suppress_bank *b, float *buf)
{
	return gf_test_bank_run(b, buf, CH, FRAMES, CALL).first;
}

static float *copy_of(const float *x)
{
	size_t n = (size_t)FRAMES * CH * sizeof(float);
	float *y = malloc(n);
	memcpy(y, x, n);
	return y;
}

static void match_case(const float *x, const float *ref)
{
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 0, .deadline_us = DEADLINE_US};
	struct gf_suppress_bank *b = gf_test_bank(&mix, &o);
	char where[96];
	gf_suppress_bank_where(b, where, sizeof(where));
	printf("bank: %s\n", where);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP);
	float *y = copy_of(x);
	CHECK(run(b, y) < 0 && gf_suppress_bank_gpu_failures(b) == 0 &&
	      gf_suppress_bank_gpu_channels(b) == GROUP);
	double rel = gf_test_worst_channel_rel_l2(y, ref, CH, FRAMES, NULL);
	printf("GPU bank equals the CPU bank: largest per-channel rel L2 %.2e (bound %.0e), no hop late at "
	       "%u us\n",
	       rel, TOL_REL_L2, DEADLINE_US);
	CHECK(rel < TOL_REL_L2);
	gf_suppress_bank_free(b);
	free(y);
}

static void fault_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "100", 1) == 0);
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 0, .deadline_us = DEADLINE_US};
	struct gf_suppress_bank *b = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER") == 0);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP);
	float *y = copy_of(x);
	int k = run(b, y);
	CHECK(k == (int)FAIL_AFTER && gf_suppress_bank_gpu_failures(b) == 1 &&
	      gf_suppress_bank_gpu_channels(b) == 0);
	double after = 0.0;
	for (size_t i = 0; i < (size_t)FRAMES * CH; i++)
		CHECK(isfinite(y[i]));
	for (uint32_t i = 0; i < CALL; i++)
		for (uint32_t c = 0; c < GROUP; c++)
			CHECK(y[((size_t)k * CALL + i) * CH + c] == 0.0f);
	for (uint32_t i = FRAMES - RATE / 4; i < FRAMES; i++)
		after += fabsf(y[(size_t)i * CH]);
	CHECK(after > 0.0);
	gf_suppress_bank_reset(b);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP);
	printf("fault hook on the GPU: call %u failed, switched to the CPU (1 failure), muted, finite; on "
	       "the "
	       "GPU again after reset\n",
	       FAIL_AFTER + 1);
	gf_suppress_bank_free(b);
	free(y);
}

/* Channel-wise rel L2 of calls [@p from, @p to) of @p y against @p ref. */
static double rel_calls(const float *y, const float *ref, uint32_t from, uint32_t to)
{
	size_t at = (size_t)from * CALL * CH;
	return gf_test_worst_channel_rel_l2(y + at, ref + at, CH, (to - from) * CALL, NULL);
}

static void late_case(const float *x, const float *ref)
{
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 0, .deadline_us = DEADLINE_US};
	struct gf_suppress_bank *b = gf_test_bank(&mix, &o);
	float *y = copy_of(x);
	uint32_t late_at = 0, calls = FRAMES / CALL;
	for (uint32_t k = 0; k < calls; k++) {
		float *at = y + (size_t)k * CALL * CH;
		/* from call 50, until one is late: a deadline already past, the hop's event polled once */
		int want_late = k >= 50 && !late_at;
		CHECK(gf_suppress_bank_process_by(b, at, CALL, want_late ? 1 : 0) == 0);
		if (want_late && gf_suppress_bank_gpu_late(b) == 1)
			late_at = k;
	}
	CHECK(late_at >= 50 && late_at < 70);
	CHECK(gf_suppress_bank_gpu_late(b) == 1 && gf_suppress_bank_gpu_failures(b) == 0 &&
	      gf_suppress_bank_gpu_channels(b) == GROUP);
	uint32_t muted = 0; /* the call's frames after the late hop's end (none where a hop ends it) */
	for (uint32_t i = 0; i < CALL; i++)
		muted += y[((size_t)late_at * CALL + i) * CH] == 0.0f;
	printf("the late call: %u of its %u frames muted\n", muted, CALL);
	double before = rel_calls(y, ref, 0, late_at), after = rel_calls(y, ref, late_at + 1, calls);
	printf("a late hop on the GPU at call %u: 1 late, 0 failures, still on the GPU; rel L2 before %.2e, "
	       "after %.2e (bound %.0e)\n",
	       late_at + 1, before, after, TOL_REL_L2);
	CHECK(before < TOL_REL_L2 && after < TOL_REL_L2);
	gf_suppress_bank_free(b);
	free(y);
}

static void return_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "100", 1) == 0);
	struct gf_suppress_bank_opts o = {
		.gpu = 1, .gpu_index = 0, .deadline_us = DEADLINE_US, .return_ms = 1};
	struct gf_suppress_bank *b = gf_test_bank(&mix, &o), *fresh = gf_test_bank(&mix, NULL);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER") == 0);
	float *y = copy_of(x), *z = copy_of(x);
	uint32_t back = 0, calls = FRAMES / CALL;
	for (uint32_t k = 0; k < calls; k++) {
		if (!back && gf_suppress_bank_gpu_returns(b) == 1)
			back = k;
		gf_suppress_bank_process(b, y + (size_t)k * CALL * CH, CALL);
		if (back)
			gf_suppress_bank_process(fresh, z + (size_t)k * CALL * CH, CALL);
		gf_suppress_bank_try_return(b);
		if (k == FAIL_AFTER) {
			struct timespec ts = {0, 2000000L};
			nanosleep(&ts, NULL);
		}
	}
	CHECK(back > FAIL_AFTER && back < FAIL_AFTER + 5 && gf_suppress_bank_gpu_channels(b) == GROUP);
	double rel = 0.0;
	for (uint32_t c = 0; c < GROUP; c++) { /* the group's channels against the fresh bank's */
		double e = 0.0, r = 0.0;
		for (size_t i = (size_t)back * CALL; i < FRAMES; i++) {
			double d = (double)y[i * CH + c] - z[i * CH + c];
			e += d * d;
			r += (double)z[i * CH + c] * z[i * CH + c];
		}
		rel = fmax(rel, sqrt(e / (r > 0.0 ? r : 1.0)));
	}
	printf("the return on the GPU: back at call %u, then the group equals a CPU bank started there: rel "
	       "L2 %.2e\n",
	       back + 1, rel);
	CHECK(rel < TOL_REL_L2);
	gf_suppress_bank_free(b);
	gf_suppress_bank_free(fresh);
	free(y);
	free(z);
}

/* A bank of SPLIT_CH channels over @p threads threads: channel c on p_group, except every
 * @p other_every-th (0: none) on p_other, on the CPU. */
static struct gf_suppress_bank *split_bank(uint32_t threads, uint32_t other_every)
{
	const struct gf_suppress_params *per[SPLIT_CH];
	for (uint32_t c = 0; c < SPLIT_CH; c++)
		per[c] = other_every && c % other_every == other_every - 1 ? &p_other : &p_group;
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 0, .threads = threads};
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, SPLIT_CH, RATE, &o, &b, &eb), &eb);
	return b;
}

/* The group cut over threads against one GPU suppressor for it all: in place where the group is
 * one run of the interleave (@p other_every 0), through the parts' buffers where it is not. */
static void split_case(uint32_t other_every, const char *parts)
{
	struct gf_suppress_bank *b1 = split_bank(1, other_every),
				*bs = split_bank(SPLIT_THREADS, other_every);
	char where[96];
	gf_suppress_bank_where(bs, where, sizeof(where));
	printf("split bank: %s\n", where);
	CHECK(strstr(where, parts) != NULL &&
	      gf_suppress_bank_gpu_channels(bs) == gf_suppress_bank_gpu_channels(b1));
	float *x = gf_test_bank_input(SPLIT_FRAMES, SPLIT_CH, 0.0007, 12000, &rng);
	size_t bytes = (size_t)SPLIT_FRAMES * SPLIT_CH * sizeof(float);
	float *y = malloc(bytes);
	memcpy(y, x, bytes);
	CHECK(gf_test_bank_run(b1, x, SPLIT_CH, SPLIT_FRAMES, SPLIT_CALL).first < 0);
	CHECK(gf_test_bank_run(bs, y, SPLIT_CH, SPLIT_FRAMES, SPLIT_CALL).first < 0);
	double max_abs = 0.0, rel = gf_test_worst_channel_rel_l2(y, x, SPLIT_CH, SPLIT_FRAMES, &max_abs);
	printf("split over %u threads (%s) equals one GPU suppressor: largest per-channel rel L2 %.2e, "
	       "largest difference %.2e\n",
	       SPLIT_THREADS, other_every ? "gathered" : "in place", rel, max_abs);
	CHECK(rel < TOL_REL_L2 && gf_suppress_bank_gpu_failures(bs) == 0);
	gf_suppress_bank_free(b1);
	gf_suppress_bank_free(bs);
	free(x);
	free(y);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	gf_test_need_gpu();
	rng = gf_test_seed("test_gpu_suppress_bank");
	float *x = gf_test_bank_input(FRAMES, CH, 0.003, 12000, &rng), *ref = copy_of(x);
	struct gf_suppress_bank *cpu = gf_test_bank(&mix, NULL);
	CHECK(run(cpu, ref) < 0);
	gf_suppress_bank_free(cpu);
	match_case(x, ref);
	fault_case(x);
	late_case(x, ref);
	return_case(x);
	split_case(0, "4 parts");
	split_case(64, "3 parts"); /* 2016 channels on the GPU: 3 parts of at least 512 */
	free(x);
	free(ref);
	return 0;
}
