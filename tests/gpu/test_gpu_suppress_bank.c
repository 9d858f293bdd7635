/*
 * The suppressor bank on a real GPU (suppress_bank.h): 64 channels of one
 * set of parameters (with highpass_hz; and 2 of another, on the CPU) asked
 * for the GPU run there, in calls of a live block with the stream's deadline, and equal a
 * CPU bank within test_gpu_suppress.c's TOL_REL_L2 per channel (the same
 * argument holds: only cuFFT's rounding differs); no hop misses the deadline.
 * Then GPUFIR_FAULT_SUPPRESS_GPU_AFTER on the real GPU path: the bank
 * switches to its standby CPU suppressors, counts one failure, mutes that
 * call's GPU channels, stays finite and carries sound again afterwards.
 *
 * Skips (77) where no CUDA device is usable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "suppress_bank.h"
#include "testutil.h"

#define TOL_REL_L2 1e-4
#define RATE 48000u
#define GROUP 64u
#define CH (GROUP + 2u)
#define CALL 256u	   /* a live block */
#define DEADLINE_US 10667u /* two block periods at 48 kHz, as the daemon's engine deadline */
#define FRAMES (RATE * 2u / CALL * CALL)
#define FAIL_AFTER 100u

static uint64_t rng;
/* The group's as the built-in chain's suppressor: with its high-pass. */
static struct gf_suppress_params p_group = {.reduction_db = 18.0, .highpass_hz = 25.0},
				 p_other = {.reduction_db = 9.0};

static float *make_input(void)
{
	float *x = malloc((size_t)FRAMES * CH * sizeof(float));
	for (uint32_t i = 0; i < FRAMES; i++)
		for (uint32_t c = 0; c < CH; c++)
			x[(size_t)i * CH + c] = 0.3f * (float)sin(0.003 * (c + 1) * i) * (i % 12000 < 6000) +
						0.02f * (2.0f * gf_test_randf(&rng) - 1.0f);
	return x;
}

static struct gf_suppress_bank *make_bank(const struct gf_suppress_bank_opts *o)
{
	const struct gf_suppress_params *per[CH];
	for (uint32_t c = 0; c < CH; c++)
		per[c] = c < GROUP ? &p_group : &p_other;
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, CH, RATE, o, &b, &eb), &eb);
	return b;
}

/* Every call through @p b; the index of the call that failed, or -1. */
static int run(struct gf_suppress_bank *b, float *buf)
{
	int failed = -1;
	for (uint32_t at = 0, k = 0; at < FRAMES; at += CALL, k++)
		if (gf_suppress_bank_process(b, buf + (size_t)at * CH, CALL) && failed < 0)
			failed = (int)k;
	return failed;
}

static double worst_rel_l2(const float *got, const float *want)
{
	double worst = 0.0;
	for (uint32_t c = 0; c < CH; c++) {
		double d = 0.0, r = 0.0;
		for (uint32_t i = 0; i < FRAMES; i++) {
			double a = got[(size_t)i * CH + c], b = want[(size_t)i * CH + c];
			d += (a - b) * (a - b);
			r += b * b;
		}
		worst = fmax(worst, sqrt(d / (r > 0.0 ? r : 1.0)));
	}
	return worst;
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
	struct gf_suppress_bank *b = make_bank(&o);
	char where[96];
	gf_suppress_bank_where(b, where, sizeof(where));
	printf("bank: %s\n", where);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP);
	float *y = copy_of(x);
	CHECK(run(b, y) < 0 && gf_suppress_bank_gpu_failures(b) == 0 &&
	      gf_suppress_bank_gpu_channels(b) == GROUP);
	double rel = worst_rel_l2(y, ref);
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
	struct gf_suppress_bank *b = make_bank(&o);
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

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	char desc[256];
	if (gf_cuda_probe(0, desc, sizeof(desc)))
		gf_test_skip(desc);
	printf("device: %s\n", desc);
	rng = gf_test_seed("test_gpu_suppress_bank");
	float *x = make_input(), *ref = copy_of(x);
	struct gf_suppress_bank *cpu = make_bank(NULL);
	CHECK(run(cpu, ref) < 0);
	gf_suppress_bank_free(cpu);
	match_case(x, ref);
	fault_case(x);
	free(x);
	free(ref);
	return 0;
}
