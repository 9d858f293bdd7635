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
	free(x);
	free(ref);
	return 0;
}
