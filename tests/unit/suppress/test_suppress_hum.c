/*
 * Mains hum in the suppressor's frames (suppress_hum.h): the floor table M
 * sits on the hum's harmonics up to the highest asked for and below Nyquist,
 * and is 1 elsewhere; the slot hands tables over whole, the newest winning;
 * a suppressor with a hum set cuts steady hum harmonics well below what its
 * floor allowed and leaves a tone far away as it was; with no set (or none yet) it gives the same bits as one
 * that never had one; a set handed over while it runs acts from the next
 * frame on and changes nothing before; with reduction_db = 0 the frames pass
 * everything but the hum.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suppress.h"
#include "suppress_hum.h"
#include "testutil.h"

#define RATE 16000u
#define N 384u /* the frame at 16 kHz */
#define NB (N / 2 + 1)
#define SECONDS 4u

static const struct gf_suppress_hum hum50 = {.f0_hz = 50.02, .n = 3, .harmonic = {1, 3, 5}};

static void mask_case(void)
{
	float m[NB];
	double df = (double)RATE / N;
	CHECK(gf_suppress_hum_mask(m, NB, N, RATE, NULL, 16) == 1);
	CHECK(gf_suppress_hum_mask(m, NB, N, RATE, &hum50, 0) == 1); /* top 0: none */
	CHECK(gf_suppress_hum_mask(m, NB, N, RATE, &hum50, 3) == 0);
	float depth = (float)pow(10.0, -GF_SUPPRESS_HUM_DEPTH_DB / 20.0);
	uint32_t b50 = (uint32_t)lround(50.02 / df), b150 = (uint32_t)lround(150.06 / df);
	CHECK(fabsf(m[b50] - depth) < 1e-6f && fabsf(m[b150] - depth) < 1e-6f);
	CHECK(m[(uint32_t)lround(250.1 / df)] == 1.0f); /* the 5th is above top = 3 */
	CHECK(m[(uint32_t)lround(1000.0 / df)] == 1.0f);
	for (uint32_t b = 0; b < NB; b++) /* 1 beyond core + taper of every harmonic */
		if (fabs(b - 50.02 / df) > 1.5 && fabs(b - 150.06 / df) > 1.5)
			CHECK(m[b] == 1.0f);
	struct gf_suppress_hum high = {.f0_hz = 3000.0, .n = 2, .harmonic = {1, 3}}; /* 9 kHz: above 8 */
	CHECK(gf_suppress_hum_mask(m, NB, N, RATE, &high, 16) == 0);
	CHECK(m[NB - 1] == 1.0f && m[(uint32_t)lround(3000.0 / df)] < 0.1f);
}

static void slot_case(void)
{
	float mem[3 * 4];
	struct gf_suppress_gain_slot s;
	int changed = -1;
	gf_suppress_gain_slot_init(&s, mem, 4, NULL);
	CHECK(gf_suppress_gain_slot_take(&s, &changed) == NULL && changed == 0);
	for (int v = 1; v <= 2; v++) { /* two tables before the reader looks: the second wins */
		float *t = gf_suppress_gain_slot_back(&s);
		for (int i = 0; i < 4; i++)
			t[i] = (float)(10 * v + i);
		gf_suppress_gain_slot_publish(&s, 0);
	}
	const float *got = gf_suppress_gain_slot_take(&s, &changed);
	CHECK(got && changed == 1 && got[0] == 20.0f && got[3] == 23.0f);
	CHECK(gf_suppress_gain_slot_take(&s, &changed) == got && changed == 0);
	float *t = gf_suppress_gain_slot_back(&s);
	CHECK(t != got); /* the writer never fills the table the reader holds */
	gf_suppress_gain_slot_publish(&s, 1);
	CHECK(gf_suppress_gain_slot_take(&s, &changed) == NULL && changed == 1);
}

/* Hum on @p hum50's harmonics at -20 dBFS each, tones at 100 and 1000 Hz at -30 dBFS, white noise at
 * -60 dBFS: all steady, so the suppressor takes all of it for noise. */
static float *steady(uint32_t n, uint64_t *st)
{
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	const double hz[] = {50.02, 150.06, 250.1, 100.0, 1000.0}, amp[] = {0.14, 0.14, 0.14, 0.045, 0.045};
	for (uint32_t i = 0; i < n; i++) {
		double v = 0.001 * ((double)gf_test_rand_below(st, 1u << 24) / (1u << 23) - 1.0);
		for (int k = 0; k < 5; k++)
			v += amp[k] * sin(2.0 * M_PI * hz[k] * i / RATE + k);
		x[i] = (float)v;
	}
	return x;
}

/* @p x through a suppressor (@p reduction_db; hum @p h from the start, or set at frame @p set_at when
 * that is not 0), aligned: the output moved back by the latency. */
static float *run(const float *x, uint32_t n, double reduction_db, const struct gf_suppress_hum *h,
		  uint32_t set_at)
{
	struct gf_suppress_params p = {
		.reduction_db = reduction_db, .hum_harmonics = h ? 16 : 0, .hum = h && !set_at ? h : NULL};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, 1, RATE, &s, &eb), &eb);
	uint32_t lat = gf_suppress_latency(s), total = n + lat;
	float *y = calloc(total, sizeof(float));
	CHECK(y);
	memcpy(y, x, n * sizeof(float));
	for (uint32_t at = 0; at < total; at += 100) {
		if (set_at && at == set_at)
			gf_suppress_set_hum(s, h);
		gf_suppress_process(s, y + at, total - at < 100 ? total - at : 100);
	}
	memmove(y, y + lat, n * sizeof(float));
	gf_suppress_free(s);
	return y;
}

/* The level (dB) of the component at @p hz over the last second of @p y (n samples). */
static double tone_db(const float *y, uint32_t n, double hz)
{
	double re = 0.0, im = 0.0;
	for (uint32_t i = n - RATE; i < n; i++) {
		re += y[i] * cos(2.0 * M_PI * hz * i / RATE);
		im += y[i] * sin(2.0 * M_PI * hz * i / RATE);
	}
	return 10.0 * log10((re * re + im * im) / ((double)RATE * RATE) + 1e-30);
}

static void suppress_case(uint64_t *st)
{
	uint32_t n = SECONDS * RATE;
	float *x = steady(n, st), *without = run(x, n, 15.0, NULL, 0), *with = run(x, n, 15.0, &hum50, 0);
	const double hz[] = {50.02, 150.06, 250.1, 100.0, 1000.0};
	double d[5];
	for (int k = 0; k < 5; k++) {
		d[k] = tone_db(with, n, hz[k]) - tone_db(without, n, hz[k]);
		printf("  %.2f Hz: %+.1f dB with the hum set against without\n", hz[k], d[k]);
	}
	for (int k = 0; k < 3; k++)
		CHECK(d[k] < -6.0); /* the harmonics: cut further than g_min allowed */
	/* 1 kHz: far from every harmonic, the same gain (what moves is the hum's leakage into a 1 s DFT) */
	CHECK(fabs(d[4]) < 0.1);
	/* 100 Hz, a steady tone taken for noise between two harmonics' bins: their tapers reach it */
	CHECK(d[3] > -8.0);
	/* No set: the same bits as a suppressor that never had one. */
	float *none = run(x, n, 15.0, &(struct gf_suppress_hum){0}, 0);
	CHECK(memcmp(none, without, n * sizeof(float)) == 0);
	/* Set at 2 s while running: the same bits up to the frame that takes it, the hum cut after. */
	uint32_t at = 2 * RATE;
	float *late = run(x, n, 15.0, &hum50, at);
	CHECK(memcmp(late, without, (at - N) * sizeof(float)) == 0);
	CHECK(tone_db(late, n, 50.02) - tone_db(without, n, 50.02) < -6.0);
	free(x), free(without), free(with), free(none), free(late);
}

/* reduction_db = 0: the frames run, the gain is 1 but for the hum's bins: a voice-band tone passes
 * exactly (as the identity does), the hum goes. */
static void hum_only_case(uint64_t *st)
{
	uint32_t n = SECONDS * RATE;
	float *x = steady(n, st), *y = run(x, n, 0.0, &hum50, 0);
	double d1k = tone_db(y, n, 1000.0) - tone_db(x, n, 1000.0),
	       d50 = tone_db(y, n, 50.02) - tone_db(x, n, 50.02);
	printf("  reduction_db 0: 1 kHz %+.3f dB, 50 Hz %+.1f dB\n", d1k, d50);
	CHECK(fabs(d1k) < 0.1);
	CHECK(d50 < -10.0);
	free(x), free(y);
}

int main(void)
{
	uint64_t st = gf_test_seed("test_suppress_hum");
	mask_case();
	slot_case();
	suppress_case(&st);
	hum_only_case(&st);
	puts("test_suppress_hum: ok");
	return 0;
}
