/* The live hum tracker (src/design/hum_track.c) on synthetic signals at 48 kHz,
 * fed in 200 ms pieces as the daemon's loop drains them:
 * 1. a speech-like voice without hum never adds a notch (40 s);
 * 2. the voice with 50 Hz hum on harmonics 1, 2, 3: the set is added, not
 *    before GF_HUM_TRACK_ON analyses found it, at the right frequency and
 *    with no harmonic but those (of 4 looked at, as the built-in chain); the
 *    two loud ones always, the weakest (-50 dBFS, 44 dB under the voice) when
 *    the voice lets it through three analyses in a row (all but ~1% of seeds);
 * 3. the hum stops: each harmonic stays for exactly GF_HUM_TRACK_OFF
 *    analyses after the last that found it, then goes;
 * 4. 60 Hz hum on harmonics 2, 3 and 5 (of 8 looked at) likewise;
 * 5. 50 Hz hum replaced by 60 Hz hum: the set switches family;
 * 6. the built-in chain built live with a set found (gf_config_source.hum):
 *    its FIR has no notch (live, minimum phase, its suppressor takes the
 *    hum), and its suppressor cuts those harmonics of steady hum further
 *    than without the set, and nothing far from them; without one, nothing;
 *    a chain without a suppressor keeps the notch as an FIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "design.h"
#include "hum_track.h"
#include "humsig.h"
#include "suppress_bank.h"
#include "testutil.h"

#define RATE 48000.0
#define PIECE 9600 /* 200 ms: the daemon's loop drains at least this often */
/* The analysis a steady hum is added by: ON in a row, most often the first ON (over 500 seeds:
 * 3 in 99.5%, 5 or 7 where the voice masked a harmonic for an analysis or two). */
#define FOUND_BY (GF_HUM_TRACK_ON + 5)

static unsigned raw_found; /* analyses whose own finding was a hum, before hysteresis */
#define LOGGED 256
static struct gf_hum raw_log[LOGGED]; /* each analysis's own finding, by its number (1-based) */

static int holds_all(const struct gf_hum *found, const struct gf_hum *set)
{
	for (uint32_t i = 0; i < set->n; i++) {
		uint32_t k = 0;
		while (k < found->n && found->harmonic[k] != set->harmonic[i])
			k++;
		if (k == found->n)
			return 0;
	}
	return 1;
}

/* Feed [from, to) of @p x; @return the analysis (1-based, since @p t began) at which the set
 * first changed, or 0. */
static uint64_t feed(struct gf_hum_track *t, const float *x, size_t from, size_t to)
{
	uint64_t first = 0, last = gf_hum_track_analyses(t);
	for (size_t i = from; i < to; i += PIECE) {
		struct gf_errbuf eb = {{0}};
		gf_hum_track_push(t, x + i, to - i < PIECE ? to - i : PIECE);
		int r = gf_hum_track_step(t, &eb);
		CHECK_OK_EB(r < 0 ? r : 0, &eb);
		if (r >= 0 && gf_hum_track_last(t)->n && gf_hum_track_analyses(t) != last) {
			raw_found++;
			if (gf_hum_track_analyses(t) < LOGGED)
				raw_log[gf_hum_track_analyses(t)] = *gf_hum_track_last(t);
		}
		last = gf_hum_track_analyses(t);
		if (r == 1 && !first)
			first = gf_hum_track_analyses(t);
	}
	return first;
}

/* The active set is the family of @p f0: only harmonics of @p harm, with the first @p strong of
 * them (the loud ones, which the voice cannot mask) among them. */
static void expect_family(const struct gf_hum_track *t, double f0, const uint32_t *harm, uint32_t n,
			  uint32_t strong)
{
	struct gf_hum h;
	char d[200];
	gf_hum_track_active(t, &h);
	gf_hum_describe(&h, d, sizeof(d));
	printf("  active: %s at %.3f Hz\n", d, h.f0_hz);
	CHECK(fabs(h.f0_hz - f0) < 0.05);
	CHECK(h.n >= strong && h.n <= n);
	uint32_t seen = 0;
	for (uint32_t i = 0; i < h.n; i++)
		for (uint32_t k = 0; k < n; k++)
			if (h.harmonic[i] == harm[k])
				seen |= 1u << k;
	CHECK(__builtin_popcount(seen) == (int)h.n); /* each one a member, none twice */
	for (uint32_t k = 0; k < strong; k++)
		CHECK(seen & (1u << k));
}

/* |H| in dB of the built-in chain's channel 0, built live at 48 kHz with @p hum found (NULL: none). */
/* The level (dB) of @p hz over the last second of @p y (@p n samples). */
static double level_db(const float *y, size_t n, double hz)
{
	double re = 0.0, im = 0.0;
	for (size_t i = n - (size_t)RATE; i < n; i++) {
		re += y[i] * cos(2.0 * M_PI * hz * (double)i / RATE);
		im += y[i] * sin(2.0 * M_PI * hz * (double)i / RATE);
	}
	return 10.0 * log10((re * re + im * im) / (RATE * RATE) + 1e-30);
}

/* The config's suppressor over 3 s of steady tones at @p f (-20 dBFS each): their levels out. */
static void suppressor_levels(const struct gf_config *c, const double *f, double *db, int n)
{
	size_t len = (size_t)(3 * RATE);
	float *x = calloc(len, sizeof(float));
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK(x);
	CHECK_OK_EB(gf_config_suppress_new(c, (uint32_t)RATE, 1, &b, &eb), &eb);
	CHECK(b);
	for (size_t i = 0; i < len; i++)
		for (int k = 0; k < n; k++)
			x[i] += (float)(0.14 * sin(2.0 * M_PI * f[k] * (double)i / RATE + k));
	for (size_t at = 0; at < len; at += 480)
		CHECK(gf_suppress_bank_process(b, x + at, 480) == 0);
	for (int k = 0; k < n; k++)
		db[k] = level_db(x, len, f[k]);
	gf_suppress_bank_free(b);
	free(x);
}

/* The built-in chain, live, with @p hum found (NULL: none): its FIR's response at @p f into @p db,
 * its suppressor's levels of steady tones there into @p sup. */
static void chain_response(const struct gf_hum *hum, const double *f, double *db, double *sup, int n)
{
	struct gf_config_source src = {.live = 1, .hum = hum};
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_source(&src, &c, &eb), &eb);
	CHECK(gf_config_hum_in_suppressor_any(c)); /* live, the built-in chain's suppressor takes it */
	CHECK_OK_EB(gf_config_build(c, 48000, 1, &fs, &eb), &eb);
	double *h = malloc(fs->taps * sizeof(double));
	CHECK(h);
	for (uint32_t k = 0; k < fs->taps; k++)
		h[k] = fs->coeffs[k];
	for (int i = 0; i < n; i++)
		db[i] = 20.0 * log10(gf_design_response(h, fs->taps, f[i], RATE) + 1e-30);
	printf("  built-in chain, live, hum %s: %u taps\n", hum ? "found" : "none", fs->taps);
	suppressor_levels(c, f, sup, n);
	free(h);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

/* 6. A chain without a suppressor, live with a set found: the notch stays an FIR (minimum phase). */
static void without_suppressor(const struct gf_hum *hum, const double *f)
{
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string("filters = ( { name = \"hum\"; design = \"notch\"; freq_hz = "
					  "\"auto\"; harmonics = 4; bandwidth_hz = 15.0; attenuation_db = "
					  "40.0; } );\nchain = [\"hum\"];\n",
					  NULL, &c, &eb),
		    &eb);
	c->live = 1, c->live_hum = *hum, c->hum_followed = 1; /* as gf_config_load_source sets them live */
	CHECK(!gf_config_hum_in_suppressor_any(c));
	CHECK_OK_EB(gf_config_build(c, 48000, 1, &fs, &eb), &eb);
	double *h = malloc(fs->taps * sizeof(double));
	CHECK(h);
	for (uint32_t k = 0; k < fs->taps; k++)
		h[k] = fs->coeffs[k];
	double d0 = 20.0 * log10(gf_design_response(h, fs->taps, f[0], RATE) + 1e-30);
	double d3 = 20.0 * log10(gf_design_response(h, fs->taps, f[3], RATE) + 1e-30);
	printf("  a chain without a suppressor, live, hum found: %u taps, %.1f dB at %.2f Hz, %.1f dB at "
	       "%.0f "
	       "Hz\n",
	       fs->taps, d0, f[0], d3, f[3]);
	CHECK(fs->taps > 1000 && d0 < -30.0 && fabs(d3) < 0.1);
	free(h);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

static void expect_none(const struct gf_hum_track *t)
{
	struct gf_hum h;
	gf_hum_track_active(t, &h);
	CHECK(h.f0_hz == 0.0 && h.n == 0);
}

int main(void)
{
	uint64_t rng = gf_test_seed("test_hum_track");
	size_t n = (size_t)(60 * RATE);
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	struct gf_errbuf eb = {{0}};
	struct gf_hum_track *t;
	/* The hysteresis the cases below measure against: a notch waits for a few analyses, and
	 * stays longer than that. */
	CHECK(GF_HUM_TRACK_ON >= 2 && GF_HUM_TRACK_OFF > 2 * GF_HUM_TRACK_ON);

	/* 1. Speech alone, 40 s: never a notch. */
	gf_test_speechlike(x, n, RATE, -6.0, &rng);
	CHECK_OK_EB(gf_hum_track_new(&t, RATE, 4, &eb), &eb);
	uint64_t ch = feed(t, x, 0, (size_t)(40 * RATE));
	printf("speech without hum: %llu analyses, %u found a hum by themselves, set changed at %llu (0: "
	       "never)\n",
	       (unsigned long long)gf_hum_track_analyses(t), raw_found, (unsigned long long)ch);
	CHECK(gf_hum_track_analyses(t) >= 30);
	CHECK(ch == 0);
	expect_none(t);
	gf_hum_track_free(t);

	/* 2. 50.02 Hz on harmonics 1, 2, 3 (-40, -46, -50 dBFS) from 0 s to 30 s, under the voice. */
	const uint32_t h50[] = {1, 2, 3};
	const double d50[] = {-40.0, -46.0, -50.0};
	gf_test_speechlike(x, n, RATE, -6.0, &rng);
	gf_test_add_hum(x, 0, (size_t)(30 * RATE), 1, RATE, 50.02, h50, d50, 3);
	CHECK_OK_EB(gf_hum_track_new(&t, RATE, 4, &eb), &eb);
	ch = feed(t, x, 0, (size_t)(20 * RATE));
	printf("50 Hz hum: the set changed at analysis %llu (hysteresis: not before %u)\n",
	       (unsigned long long)ch, GF_HUM_TRACK_ON);
	CHECK(ch >= GF_HUM_TRACK_ON && ch <= FOUND_BY);
	expect_family(t, 50.02, h50, 3, 2);

	/* 3. It stops at 30 s: each harmonic is kept for OFF analyses after the last one that found
	 * it (the voice can mask the weakest one just before the stop), and all are gone within OFF +
	 * the window + 2 of the stop. */
	memset(raw_log, 0, sizeof(raw_log));
	feed(t, x, (size_t)(20 * RATE), (size_t)(30 * RATE));
	expect_family(t, 50.02, h50, 3, 2); /* kept while the hum lasts (the weak one may join) */
	uint64_t a_stop = gf_hum_track_analyses(t);
	CHECK(a_stop < LOGGED);
	struct gf_hum held;
	gf_hum_track_active(t, &held);
	uint64_t last_full = a_stop;
	while (last_full > 0 && !holds_all(&raw_log[last_full], &held))
		last_full--;
	ch = feed(t, x, (size_t)(30 * RATE), n);
	printf("hum gone: removed %llu analyses after it stopped, %llu after the last analysis that "
	       "found them all (hold: %u; the window %.0f s)\n",
	       (unsigned long long)(ch - a_stop), (unsigned long long)(ch - last_full), GF_HUM_TRACK_OFF,
	       GF_HUM_TRACK_WINDOW_S);
	CHECK(last_full > 0);
	CHECK(ch >= last_full + GF_HUM_TRACK_OFF);
	CHECK(ch <= a_stop + GF_HUM_TRACK_OFF + (uint64_t)GF_HUM_TRACK_WINDOW_S + 2);
	expect_none(t);
	gf_hum_track_free(t);

	/* 4. 59.97 Hz on harmonics 2, 3, 5 (no fundamental), 8 looked at. */
	const uint32_t h60[] = {2, 3, 5};
	const double d60[] = {-44.0, -42.0, -50.0};
	gf_test_speechlike(x, n, RATE, -6.0, &rng);
	gf_test_add_hum(x, 0, n, 1, RATE, 59.97, h60, d60, 3);
	CHECK_OK_EB(gf_hum_track_new(&t, RATE, 8, &eb), &eb);
	ch = feed(t, x, 0, (size_t)(15 * RATE));
	printf("60 Hz hum: the set changed at analysis %llu\n", (unsigned long long)ch);
	CHECK(ch >= GF_HUM_TRACK_ON && ch <= FOUND_BY);
	expect_family(t, 59.97, h60, 3, 2);
	gf_hum_track_free(t);

	/* 5. 50 Hz for 15 s, then 60 Hz: the set switches to the 60 Hz family. */
	gf_test_speechlike(x, n, RATE, -6.0, &rng);
	gf_test_add_hum(x, 0, (size_t)(15 * RATE), 1, RATE, 50.02, h50, d50, 3);
	gf_test_add_hum(x, (size_t)(15 * RATE), n, 1, RATE, 59.97, h60, d60, 3);
	CHECK_OK_EB(gf_hum_track_new(&t, RATE, 8, &eb), &eb);
	feed(t, x, 0, (size_t)(15 * RATE));
	expect_family(t, 50.02, h50, 3, 2);
	feed(t, x, (size_t)(15 * RATE), (size_t)(30 * RATE));
	expect_family(t, 59.97, h60, 3, 2); /* the 5th, at -50 dBFS, may still be under the voice */
	gf_hum_track_free(t);

	/* 6. The chain built with a set found: no FIR notch live; its suppressor cuts harmonics 1 and 3
	 * of 50.02 Hz (steady, so taken for noise) further than without the set, 1 kHz alike. */
	struct gf_hum found = {.f0_hz = 50.02, .n = 2, .harmonic = {1, 3}};
	const double fr[] = {50.02, 100.04, 150.06, 1000.0};
	double with[4], without[4], sup_with[4], sup_without[4];
	chain_response(&found, fr, with, sup_with, 4);
	chain_response(NULL, fr, without, sup_without, 4);
	for (int i = 0; i < 4; i++)
		printf("  %.2f Hz: FIR %.1f dB with the set, %.1f dB without; the suppressor's output %.1f "
		       "dB "
		       "with, %.1f dB without\n",
		       fr[i], with[i], without[i], sup_with[i], sup_without[i]);
	for (int i = 0; i < 4; i++)
		CHECK(fabs(with[i]) < 0.5 && fabs(without[i]) < 0.5);
	CHECK(sup_with[0] < sup_without[0] - 6.0 && sup_with[2] < sup_without[2] - 6.0);
	CHECK(fabs(sup_with[3] - sup_without[3]) < 0.2);
	without_suppressor(&found, fr);

	/* What an analysis costs the control thread (printed, not checked). */
	const struct {
		double rate;
		uint32_t hmax;
	} cost[] = {{RATE, 4}, {RATE, 16}, {384000.0, 4}};
	for (int i = 0; i < 3; i++) {
		CHECK_OK_EB(gf_hum_track_new(&t, cost[i].rate, cost[i].hmax, &eb), &eb);
		feed(t, x, 0, (size_t)(5 * cost[i].rate));
		double best = INFINITY, sum = 0.0;
		for (int k = 0; k < 5; k++) { /* the fastest of 5: the machine is shared */
			gf_hum_track_push(t, x, (size_t)cost[i].rate);
			uint64_t t0 = gf_now_ns();
			CHECK(gf_hum_track_step(t, &eb) >= 0);
			double ms = (double)(gf_now_ns() - t0) / 1e6;
			best = fmin(best, ms), sum += ms;
		}
		printf("one analysis at %.0f Hz, %u harmonics: %.1f ms (the fastest of 5; mean %.1f ms)\n",
		       cost[i].rate, cost[i].hmax, best, sum / 5.0);
		gf_hum_track_free(t);
	}

	free(x);
	puts("test_hum_track: ok");
	return 0;
}
