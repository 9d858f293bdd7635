/*
 * The suppressor bank's choice of the GPU (suppress_bank.h), without a GPU:
 * - a bank asked for the GPU where none can be set up (a device that does not
 *   exist: so also on a machine with one) runs on the CPU, and its output is
 *   bit-identical to a CPU bank's;
 * - GPUFIR_FAULT_SUPPRESS_FAKE_GPU puts a CPU suppressor of the group's
 *   channels where the GPU's would be, and GPUFIR_FAULT_SUPPRESS_GPU_AFTER=K
 *   fails its call K+1: the bank switches to its standby CPU suppressors at
 *   once, counts one failure, returns the error for that call only, mutes the
 *   group's channels of that call and no other channel, and stays finite;
 *   reset() puts it back on the "GPU";
 * - GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER=K: call K+1's hop is back after its
 *   deadline: that call's group muted and counted late, no failure, the group
 *   stays on the GPU, every other call the CPU bank's bits;
 * - GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER=K: from call K+1 the hop is never
 *   back: each call waits until the deadline, opts.deadline_us from the call's
 *   start for process(), the caller's for process_by() (a stream's block,
 *   however little the engine left of it), and is late; once the hop has been
 *   in flight GF_SUPPRESS_GPU_HOP_WAIT_NS it is hung: the switch.
 * - gf_suppress_bank_try_return after a switch: scheduled return_ms later,
 *   then the group back on the "GPU", its output a fresh CPU bank's; while
 *   the hop is still hung, the probe fails and the group stays on the CPU;
 * - channels that differ only in highpass_hz are not one group.
 * The mix: 12 channels with one set of parameters (the group), 2 with another,
 * 2 without a suppressor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "suppress_bank.h"
#include "suppress_gpu.h"
#include "suppressutil.h"
#include "testutil.h"

#define RATE 16000u
#define CH 16u
#define GROUP 12u
#define CALL 256u
#define FRAMES (RATE * 2u)
#define NO_SUCH_GPU 4096
#define FAIL_AFTER 20u

static uint64_t rng;
static struct gf_suppress_params p_group = {.reduction_db = 18.0}, p_other = {.reduction_db = 9.0};

/* Channels 0..GROUP-1 the group's parameters, then two others, then two without. */
static const struct gf_test_bank_mix mix = {CH, RATE, GROUP, 2, &p_group, &p_other};

/* Every call of CALL frames through @p b; the index of the one call that failed (with the hook's
 * GF_E_CUDA), or -1. */
static int run(struct gf_suppress_bank *b, float *buf)
{
	struct gf_test_bank_calls r = gf_test_bank_run(b, buf, CH, FRAMES, CALL);
	CHECK(r.failures == 0 || (r.failures == 1 && r.first_err == GF_E_CUDA));
	return r.first;
}

static void no_gpu_case(const float *x)
{
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU, .deadline_us = 5000};
	struct gf_suppress_bank *cpu = gf_test_bank(&mix, NULL), *asked = gf_test_bank(&mix, &o);
	char where[96];
	gf_suppress_bank_where(asked, where, sizeof(where));
	CHECK(gf_suppress_bank_gpu_channels(asked) == 0 && strcmp(where, "14 channels on the CPU") == 0);
	size_t n = (size_t)FRAMES * CH;
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	memcpy(a, x, n * sizeof(float));
	memcpy(b, x, n * sizeof(float));
	CHECK(run(cpu, a) < 0 && run(asked, b) < 0);
	CHECK(memcmp(a, b, n * sizeof(float)) == 0);
	CHECK(gf_suppress_bank_gpu_failures(asked) == 0);
	printf("asked for the GPU without one: %s, bit-identical to a CPU bank\n", where);
	gf_suppress_bank_free(cpu);
	gf_suppress_bank_free(asked);
	free(a);
	free(b);
}

/* The group's channels of call @p k all zero. */
static int group_muted(const float *y, int k)
{
	for (uint32_t i = 0; i < CALL; i++)
		for (uint32_t c = 0; c < GROUP; c++)
			if (y[((size_t)k * CALL + i) * CH + c] != 0.0f)
				return 0;
	return 1;
}

/* Channel @p c of @p y and @p ref equal over frames [from, to). */
static int same_channel(const float *y, const float *ref, uint32_t c, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		if (y[(size_t)i * CH + c] != ref[(size_t)i * CH + c])
			return 0;
	return 1;
}

static void fault_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "20", 1) == 0);
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU, .deadline_us = 5000};
	struct gf_suppress_bank *cpu = gf_test_bank(&mix, NULL), *b = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER") == 0);
	char where[96];
	gf_suppress_bank_where(b, where, sizeof(where));
	printf("with the fake GPU: %s\n", where);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP &&
	      strcmp(where, "12 channels on the GPU, 2 on the CPU") == 0);
	size_t n = (size_t)FRAMES * CH;
	float *ref = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	memcpy(ref, x, n * sizeof(float));
	memcpy(y, x, n * sizeof(float));
	CHECK(run(cpu, ref) < 0);
	int k = run(b, y);
	CHECK(k == (int)FAIL_AFTER && gf_suppress_bank_gpu_failures(b) == 1 &&
	      gf_suppress_bank_gpu_channels(b) == 0);
	CHECK(group_muted(y, k));
	for (size_t i = 0; i < n; i++)
		CHECK(isfinite(y[i]));
	/* before the failure the stand-in gave the CPU bank's bits (the gather and scatter are exact);
	 * the channels outside the group never noticed */
	for (uint32_t c = 0; c < CH; c++)
		CHECK(same_channel(y, ref, c, 0, c < GROUP ? (uint32_t)k * CALL : FRAMES));
	/* after it, the standby suppressors run: the group's channels carry sound again */
	double e = 0.0;
	for (uint32_t i = FRAMES - RATE / 2; i < FRAMES; i++)
		e += fabsf(y[(size_t)i * CH]);
	CHECK(e > 0.0);
	gf_suppress_bank_reset(b);
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP && gf_suppress_bank_gpu_failures(b) == 1);
	printf("the fake GPU's call %u failed: switched to the CPU (1 failure), that call's group muted, "
	       "the rest untouched; back on it after reset\n",
	       FAIL_AFTER + 1);
	gf_suppress_bank_free(cpu);
	gf_suppress_bank_free(b);
	free(ref);
	free(y);
}

/* Call @p k (of CALL frames) of @p buf through @p b, by @p deadline (0: process()); its error, and
 * the seconds it took in @p took. */
static int timed_call(struct gf_suppress_bank *b, float *buf, uint32_t k, uint64_t deadline, double *took)
{
	double t0 = gf_now_s();
	float *at = buf + (size_t)k * CALL * CH;
	int err = deadline ? gf_suppress_bank_process_by(b, at, CALL, deadline)
			   : gf_suppress_bank_process(b, at, CALL);
	*took = gf_now_s() - t0;
	return err;
}

/* One late hop: call LATE_AT of the stand-in is back after its deadline. Its group's channels are
 * muted for that call alone, counted as late, and the group stays on the "GPU": since the hop ran,
 * every other call's output is the CPU bank's, bit for bit (today's switch to the standby would
 * count a failure and leave the GPU). */
static void late_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER", "20", 1) == 0);
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU, .deadline_us = 5000};
	struct gf_suppress_bank *cpu = gf_test_bank(&mix, NULL), *b = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_LATE_AFTER") == 0);
	size_t n = (size_t)FRAMES * CH;
	float *ref = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	memcpy(ref, x, n * sizeof(float));
	memcpy(y, x, n * sizeof(float));
	CHECK(run(cpu, ref) < 0);
	CHECK(run(b, y) < 0); /* late is no error */
	CHECK(gf_suppress_bank_gpu_late(b) == 1 && gf_suppress_bank_gpu_failures(b) == 0 &&
	      gf_suppress_bank_gpu_channels(b) == GROUP);
	CHECK(group_muted(y, FAIL_AFTER));
	for (uint32_t c = 0; c < CH; c++) {
		if (c >= GROUP) {
			CHECK(same_channel(y, ref, c, 0, FRAMES));
			continue;
		}
		CHECK(same_channel(y, ref, c, 0, FAIL_AFTER * CALL));
		CHECK(same_channel(y, ref, c, (FAIL_AFTER + 1) * CALL, FRAMES));
	}
	printf("the fake GPU's call %u late: that call's group muted, 1 late, 0 failures, still on the GPU, "
	       "every other call the CPU bank's bits\n",
	       FAIL_AFTER + 1);
	gf_suppress_bank_free(cpu);
	gf_suppress_bank_free(b);
	free(ref);
	free(y);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {0, 1000000L * (long)ms};
	nanosleep(&ts, NULL);
}

/* After the fake GPU's error at call FAIL_AFTER + 1 (the switch), the control thread's
 * try_return: the first look schedules a try return_ms later, which probes the "GPU" and puts the
 * group back on it, while calls go on. From the call after, the group's channels are a CPU bank's
 * started at that call (the GPU restarts clean); the others never noticed. */
static void return_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER", "20", 1) == 0);
	struct gf_suppress_bank_opts o = {
		.gpu = 1, .gpu_index = NO_SUCH_GPU, .deadline_us = 5000, .return_ms = 2};
	struct gf_suppress_bank *cpu = gf_test_bank(&mix, NULL), *b = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_AFTER") == 0);
	struct gf_suppress_bank *fresh = gf_test_bank(&mix, NULL);
	size_t n = (size_t)FRAMES * CH;
	float *ref = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)),
	      *z = malloc(n * sizeof(float));
	memcpy(ref, x, n * sizeof(float));
	memcpy(y, x, n * sizeof(float));
	memcpy(z, x, n * sizeof(float));
	CHECK(run(cpu, ref) < 0);
	const uint32_t back = FAIL_AFTER + 2; /* the first call on the GPU again */
	double took;
	for (uint32_t k = 0; k < back; k++) {
		CHECK(timed_call(b, y, k, 0, &took) == (k == FAIL_AFTER ? GF_E_CUDA : 0));
		gf_suppress_bank_try_return(b); /* the control thread, between blocks */
		if (k == FAIL_AFTER) {
			CHECK(gf_suppress_bank_gpu_channels(b) == 0); /* scheduled, not yet */
			sleep_ms(5);
		}
	}
	CHECK(gf_suppress_bank_gpu_channels(b) == GROUP && gf_suppress_bank_gpu_returns(b) == 1 &&
	      gf_suppress_bank_gpu_failures(b) == 1);
	for (uint32_t k = back; k < FRAMES / CALL; k++)
		CHECK(timed_call(b, y, k, 0, &took) == 0);
	for (uint32_t k = back; k < FRAMES / CALL; k++)
		CHECK(timed_call(fresh, z, k, 0, &took) == 0);
	for (uint32_t c = 0; c < CH; c++)
		CHECK(same_channel(y, c < GROUP ? z : ref, c, c < GROUP ? back * CALL : 0, FRAMES));
	printf("after the switch, try_return probed the fake GPU and took the group back (1 return): from "
	       "then on its channels are a fresh CPU bank's bits, the others never noticed\n");
	gf_suppress_bank_free(cpu);
	gf_suppress_bank_free(b);
	gf_suppress_bank_free(fresh);
	free(ref);
	free(y);
	free(z);
}

/* From call 2 on the hop is never back. Each call waits for it until its deadline (process(): its
 * own 20 ms; process_by(): the 5 ms left of the caller's), mutes the group, counts late and stays
 * on the GPU; only once the hop has been in flight GF_SUPPRESS_GPU_HOP_WAIT_NS is it hung: the
 * switch to the standby, one failure (GF_E_TIMEOUT), the group on the CPU. */
static void hang_one(struct gf_suppress_bank *b, float *y, uint64_t by_ns, const char *what)
{
	double took = 0.0;
	for (uint32_t k = 0; k < 2; k++)
		CHECK(timed_call(b, y, k, 0, &took) == 0);
	double t0 = gf_now_s(), first = 0.0;
	uint32_t k = 2;
	int err = 0;
	for (; k < FRAMES / CALL && !err; k++) {
		err = timed_call(b, y, k, by_ns ? gf_now_ns() + by_ns : 0, &took);
		CHECK(group_muted(y, (int)k));
		if (k == 2)
			first = took;
		if (!err)
			CHECK(gf_suppress_bank_gpu_channels(b) == GROUP &&
			      gf_suppress_bank_gpu_failures(b) == 0);
	}
	double hung = gf_now_s() - t0, bound = 1e-9 * (double)GF_SUPPRESS_GPU_HOP_WAIT_NS;
	printf("%s: call 3 waited %.1f ms and was late; hung after %.0f ms (%llu calls late): switched to "
	       "the CPU\n",
	       what, 1e3 * first, 1e3 * hung, (unsigned long long)gf_suppress_bank_gpu_late(b));
	CHECK(err == GF_E_TIMEOUT && hung >= bound && hung < bound + 0.1);
	CHECK(gf_suppress_bank_gpu_late(b) == k - 3 && gf_suppress_bank_gpu_late(b) >= 2);
	CHECK(gf_suppress_bank_gpu_failures(b) == 1 && gf_suppress_bank_gpu_channels(b) == 0);
	if (by_ns)
		CHECK(first >= 0.005 && first < 0.015);
	else
		CHECK(first >= 0.020 && first < 0.035);
	/* still hung: a try to return fails its probe, and the group stays on the CPU */
	gf_suppress_bank_try_return(b);
	sleep_ms(5);
	gf_suppress_bank_try_return(b);
	CHECK(gf_suppress_bank_gpu_channels(b) == 0 && gf_suppress_bank_gpu_returns(b) == 0);
}

static void hang_case(const float *x)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER", "2", 1) == 0);
	struct gf_suppress_bank_opts o = {
		.gpu = 1, .gpu_index = NO_SUCH_GPU, .deadline_us = 20000, .return_ms = 2};
	struct gf_suppress_bank *own = gf_test_bank(&mix, &o), *by = gf_test_bank(&mix, &o);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0 &&
	      unsetenv("GPUFIR_FAULT_SUPPRESS_GPU_HANG_AFTER") == 0);
	size_t n = (size_t)FRAMES * CH;
	float *y = malloc(n * sizeof(float));
	memcpy(y, x, n * sizeof(float));
	hang_one(own, y, 0, "a hop never back, process()");
	memcpy(y, x, n * sizeof(float));
	hang_one(by, y, 5000000u, "a hop never back, process_by() 5 ms");
	gf_suppress_bank_free(own);
	gf_suppress_bank_free(by);
	free(y);
}

/* Fewer than GF_SUPPRESS_GPU_MIN_CHANNELS with one set of parameters: the CPU, without asking. */
static void few_case(void)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	const struct gf_suppress_params *per[GF_SUPPRESS_GPU_MIN_CHANNELS] = {0};
	for (uint32_t c = 0; c + 1 < GF_SUPPRESS_GPU_MIN_CHANNELS; c++)
		per[c] = &p_group;
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU};
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, GF_SUPPRESS_GPU_MIN_CHANNELS, RATE, &o, &b, &eb), &eb);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0);
	CHECK(gf_suppress_bank_gpu_channels(b) == 0);
	gf_suppress_bank_free(b);
}

/* The GPU runs one set of identical parameters: the high-pass is one of them. 8 channels with it and
 * 7 without are two sets, of which only the 8 reach GF_SUPPRESS_GPU_MIN_CHANNELS. */
static void highpass_case(void)
{
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	struct gf_suppress_params hp = {.reduction_db = 18.0, .highpass_hz = 25.0};
	const struct gf_suppress_params *per[15];
	for (uint32_t c = 0; c < 15; c++)
		per[c] = c % 2 ? &p_group : &hp; /* 8 with, 7 without */
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = NO_SUCH_GPU};
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, 15, RATE, &o, &b, &eb), &eb);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0);
	char where[96];
	gf_suppress_bank_where(b, where, sizeof(where));
	printf("8 channels with highpass_hz 25, 7 without: %s\n", where);
	CHECK(strcmp(where, "8 channels on the GPU, 7 on the CPU") == 0);
	gf_suppress_bank_free(b);
}

int main(void)
{
	rng = gf_test_seed("test_suppress_bank");
	float *x = gf_test_bank_input(FRAMES, CH, 0.01, 4000, &rng);
	no_gpu_case(x);
	fault_case(x);
	late_case(x);
	return_case(x);
	hang_case(x);
	few_case();
	highpass_case();
	free(x);
	return 0;
}
