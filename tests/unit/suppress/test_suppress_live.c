/*
 * The suppressor's live controls (suppress.h: gf_suppress_set_floor, the bank's
 * gf_suppress_bank_set_floor): a steady tone, which the suppressor takes for
 * noise and cuts to its floor, is switched to bypass, back, and to another
 * depth while it runs. The output never jumps from one sample to the next by
 * more than the same tone unswitched does (no click); its level moves by at
 * most the ramp's share a hop (a step at once would move it all in one hop);
 * it reaches the new floor within the ramp; a reset starts at the floor set,
 * with no ramp; the bank passes each channel's floor to its own suppressor,
 * and one floor to a GPU group (a CPU stand-in here), which cannot be split.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "suppress.h"
#include "suppress_bank.h"
#include "suppress_bins.h"
#include "testutil.h"

#define RATE 48000u
#define HOP 576u   /* suppress.h: N = 1152 at 48 kHz */
#define TONE 0.5f  /* the tone's amplitude */
#define FREQ 1000. /* 48 samples a period: a hop holds 12, so a hop's RMS of a steady tone is exact */
#define DEEP_DB 40.0

static float *tone(uint32_t frames)
{
	float *x = malloc(frames * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		x[i] = TONE * (float)sin(2.0 * M_PI * FREQ * i / RATE);
	return x;
}

static struct gf_suppress *make(double db)
{
	struct gf_suppress_params p = {.reduction_db = db};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, 1, RATE, &s, &eb), &eb);
	CHECK(gf_suppress_latency(s) == 2 * HOP);
	return s;
}

static double largest_jump(const float *y, uint32_t from, uint32_t to)
{
	double m = 0.0;
	for (uint32_t i = from + 1; i < to; i++)
		m = fmax(m, fabs((double)y[i] - y[i - 1]));
	return m;
}

static double hop_rms(const float *y, uint32_t hop)
{
	double e = 0.0;
	for (uint32_t i = 0; i < HOP; i++)
		e += (double)y[hop * HOP + i] * y[hop * HOP + i];
	return sqrt(e / HOP);
}

/* A switch at hop @p at of @p y: the largest change of level from one hop to the next, as a share of
 * the tone's RMS, over the hops after it; and the hops until the level is within 2 % of @p level. */
static double largest_step(const float *y, uint32_t at, uint32_t hops, double level, uint32_t *settled)
{
	double full = TONE / sqrt(2.0), m = 0.0;
	*settled = UINT32_MAX;
	for (uint32_t h = at; h + 1 < hops; h++) {
		m = fmax(m, fabs(hop_rms(y, h + 1) - hop_rms(y, h)) / full);
		if (*settled == UINT32_MAX && fabs(hop_rms(y, h + 1) / full - level) < 0.02)
			*settled = h + 1 - at;
	}
	return m;
}

/* Run @p x through @p s in calls of @p block frames, with @p floor set at hop @p at (UINT32_MAX: none). */
static void run(struct gf_suppress *s, float *x, uint32_t frames, uint32_t block, uint32_t at, float floor)
{
	for (uint32_t done = 0; done < frames; done += block) {
		if (at != UINT32_MAX && done <= at * HOP && at * HOP < done + block)
			gf_suppress_set_floor(s, floor);
		gf_suppress_process(s, x + done, frames - done < block ? frames - done : block);
	}
}

/* From a deep floor to bypass and back, and to a shallower depth: each switch ramped. */
static void switch_case(const char *what, double from_db, int bypass, double to_db, double level)
{
	const uint32_t hops = 400, frames = hops * HOP, at = 300; /* 3.6 s learnt, then the switch */
	float *ref = tone(frames), *y = tone(frames);
	struct gf_suppress *s = make(from_db);
	/* the unswitched reference: the tone itself through a suppressor held at bypass */
	struct gf_suppress *r = make(0.0);
	run(r, ref, frames, 256, UINT32_MAX, 1.0f);
	run(s, y, frames, 256, at, gf_suppress_floor_gain(to_db, bypass));
	double before = hop_rms(y, at - 1) / (TONE / sqrt(2.0));
	CHECK(before < 2.0 * pow(10.0, -from_db / 20.0)); /* the tone was cut to the floor */
	uint32_t settled;
	double step = largest_step(y, at - 1, hops, level, &settled);
	double jump = largest_jump(y, 0, frames), ref_jump = largest_jump(ref, 0, frames);
	printf("%s: level %.4f -> %.4f, largest step %.3f of the tone a hop, settled in %u hops; largest "
	       "jump "
	       "%.5f (unswitched %.5f)\n",
	       what, before, hop_rms(y, hops - 1) / (TONE / sqrt(2.0)), step, settled, jump, ref_jump);
	CHECK(jump <= ref_jump * 1.001);
	/* the ramp's three frames each move the gain by a third of the way: a hop sees at most that */
	CHECK(step <= fabs(level - before) / 3.0 + 0.03);
	/* from the hop before the switch: the hop it is set in, three frames of ramp, the overlap-add's
	 * hop, and the level within 2 % of the tone: 72 ms at most */
	CHECK(settled <= 6);
	gf_suppress_free(s);
	gf_suppress_free(r);
	free(ref);
	free(y);
}

/* A reset starts at the floor last set: the next frame is already there. */
static void reset_case(void)
{
	const uint32_t frames = 20 * HOP;
	float *y = tone(frames);
	struct gf_suppress *s = make(DEEP_DB);
	gf_suppress_set_floor(s, 1.0f);
	gf_suppress_reset(s);
	gf_suppress_process(s, y, frames);
	/* from the third hop on (latency N = two hops) the tone is whole, with no ramp up to it */
	CHECK(fabs(hop_rms(y, 3) / (TONE / sqrt(2.0)) - 1.0) < 0.01);
	gf_suppress_free(s);
	free(y);
}

/* The bank gives each channel its own floor: bypass on channel 0, the deep floor kept on 1. */
static void bank_case(void)
{
	const uint32_t hops = 300, frames = hops * HOP;
	struct gf_suppress_params p = {.reduction_db = DEEP_DB};
	const struct gf_suppress_params *per[2] = {&p, &p};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *b = NULL;
	CHECK_OK_EB(gf_suppress_bank_new(per, 2, RATE, &b, &eb), &eb);
	CHECK(fabsf(gf_suppress_bank_floor(b, 0) - gf_suppress_floor_gain(DEEP_DB, 0)) < 1e-7f);
	float *x = tone(frames), *y = malloc(2 * frames * sizeof(float));
	CHECK(y);
	for (uint32_t i = 0; i < frames; i++)
		y[2 * i] = y[2 * i + 1] = x[i];
	const uint32_t at = 250;
	CHECK_OK(gf_suppress_bank_process(b, y, at * HOP));
	float floors[2] = {1.0f, gf_suppress_floor_gain(DEEP_DB, 0)};
	CHECK_OK(gf_suppress_bank_set_floor(b, floors));
	CHECK(gf_suppress_bank_floor(b, 0) == 1.0f);
	CHECK_OK(gf_suppress_bank_process(b, y + 2 * (size_t)at * HOP, (hops - at) * HOP));
	double full = TONE / sqrt(2.0), e0 = 0.0, e1 = 0.0;
	for (uint32_t i = (hops - 1) * HOP; i < frames; i++) {
		e0 += (double)y[2 * i] * y[2 * i];
		e1 += (double)y[2 * i + 1] * y[2 * i + 1];
	}
	double l0 = sqrt(e0 / HOP) / full, l1 = sqrt(e1 / HOP) / full;
	printf("bank: channel 0 bypassed at %.4f, channel 1 at its floor %.4f\n", l0, l1);
	CHECK(fabs(l0 - 1.0) < 0.01 && l1 < 2.0 * pow(10.0, -DEEP_DB / 20.0));
	gf_suppress_bank_free(b);
	free(x);
	free(y);
}

/* A GPU group (a CPU suppressor in the GPU's place: GPUFIR_FAULT_SUPPRESS_FAKE_GPU) takes its floor
 * too: bypass on all of its channels; floors that would split it are refused, the first one's kept. */
static void group_case(void)
{
	enum { C = 8 };
	const uint32_t hops = 300, frames = hops * HOP, at = 250;
	struct gf_suppress_params p = {.reduction_db = DEEP_DB};
	const struct gf_suppress_params *per[C];
	for (int c = 0; c < C; c++)
		per[c] = &p;
	struct gf_suppress_bank_opts o = {.gpu = 1, .gpu_index = 4096};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *b = NULL;
	CHECK(setenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU", "1", 1) == 0);
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, C, RATE, &o, &b, &eb), &eb);
	CHECK(unsetenv("GPUFIR_FAULT_SUPPRESS_FAKE_GPU") == 0);
	CHECK(gf_suppress_bank_gpu_channels(b) == C);
	float *x = tone(frames), *y = malloc((size_t)C * frames * sizeof(float)), floors[C];
	CHECK(y);
	for (uint32_t i = 0; i < frames; i++)
		for (int c = 0; c < C; c++)
			y[(size_t)i * C + c] = x[i];
	CHECK_OK(gf_suppress_bank_process(b, y, at * HOP));
	for (int c = 0; c < C; c++)
		floors[c] = c == 3 ? 0.5f : 1.0f;
	CHECK(gf_suppress_bank_set_floor(b, floors) == GF_E_INVAL); /* one batch, one floor: the first's */
	CHECK(gf_suppress_bank_floor(b, 3) == 1.0f);
	CHECK_OK(gf_suppress_bank_process(b, y + (size_t)at * HOP * C, (hops - at) * HOP));
	for (int c = 0; c < C; c++) {
		double e = 0.0;
		for (uint32_t i = (hops - 1) * HOP; i < frames; i++)
			e += (double)y[(size_t)i * C + c] * y[(size_t)i * C + c];
		CHECK(fabs(sqrt(e / HOP) / (TONE / sqrt(2.0)) - 1.0) < 0.01);
	}
	printf("group: its %d channels bypassed together\n", C);
	gf_suppress_bank_free(b);
	free(x);
	free(y);
}

int main(void)
{
	double deep = pow(10.0, -DEEP_DB / 20.0);
	switch_case("bypass on", DEEP_DB, 1, DEEP_DB, 1.0);
	switch_case("depth 40 -> 10 dB", DEEP_DB, 0, 10.0, pow(10.0, -10.0 / 20.0));
	switch_case("depth 10 -> 40 dB", 10.0, 0, DEEP_DB, deep);
	switch_case("bypass off", 0.0, 0, DEEP_DB, deep);
	reset_case();
	bank_case();
	group_case();
	printf("ok\n");
	return 0;
}
