/*
 * FIR designs measured with a dense DFT of their taps: passband ripple and
 * stopband attenuation of the windowed-sinc designs against their spec,
 * notch depth and width, flatness away from the notches, linear phase, and
 * the errors for impossible parameters.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "design.h"
#include "testutil.h"

static const double RATE = 48000.0;

static double db(double x)
{
	return 20.0 * log10(x + 1e-300);
}

/* Largest |gain in dB| over [f0, f1] (passband ripple) and largest gain in dB (stopband). */
static void measure(const double *h, uint32_t n, double f0, double f1, double *max_abs_db, double *max_db)
{
	const int points = 1500;
	*max_abs_db = 0.0;
	*max_db = -INFINITY;
	for (int i = 0; i <= points; i++) {
		double f = f0 + (f1 - f0) * i / points;
		double g = db(gf_design_response(h, n, f, RATE));
		*max_abs_db = fabs(g) > *max_abs_db ? fabs(g) : *max_abs_db;
		*max_db = g > *max_db ? g : *max_db;
	}
}

static void check_linear_phase(const double *h, uint32_t n)
{
	CHECK(n % 2 == 1);
	for (uint32_t i = 0; i < n / 2; i++)
		CHECK(fabs(h[i] - h[n - 1 - i]) <= 1e-12 * (fabs(h[i]) + 1e-3));
}

/* Run @p d at @p rate, or fail the test at the caller's line. @return the *n taps, malloc'ed */
#define DESIGN(d, rate, n) design_or_die((d), (rate), (n), __LINE__)
static double *design_or_die(const struct gf_design *d, double rate, uint32_t *n, int line)
{
	double *h;
	struct gf_errbuf eb = {{0}};
	gf_check_ok_or_die(gf_design_run(d, rate, &h, n, &eb), &eb, __FILE__, line, "gf_design_run");
	return h;
}

struct band {
	double f0, f1;
	int pass; /* 1 passband, 0 stopband */
};

/* Design, then check every band: ripple < 0.01 dB in passbands, <= -75 dB in stopbands. */
static void check_sinc(const struct gf_design *d, const struct band *bands, int nb)
{
	uint32_t n;
	double *h = DESIGN(d, RATE, &n);
	CHECK(gf_design_taps(d, RATE) == n);
	check_linear_phase(h, n);
	for (int b = 0; b < nb; b++) {
		double ripple, peak;
		measure(h, n, bands[b].f0, bands[b].f1, &ripple, &peak);
		printf("  %-8s %5u taps  %7.0f..%7.0f Hz  %s %.5f dB\n", gf_design_type_name(d->type), n,
		       bands[b].f0, bands[b].f1, bands[b].pass ? "ripple" : "peak",
		       bands[b].pass ? ripple : peak);
		if (bands[b].pass)
			CHECK(ripple < 0.01);
		else
			CHECK(peak <= -75.0);
	}
	free(h);
}

static void test_sinc_designs(void)
{
	const double tw = 1000.0; /* full transition width */
	static const struct {
		enum gf_design_type type;
		double cutoff_hz, low_hz, high_hz;
		struct band bands[3];
		int nb;
	} cases[] = {
		{GF_DESIGN_LOWPASS, 8000, 0, 0, {{0, 7500, 1}, {8500, 24000, 0}}, 2},
		{GF_DESIGN_HIGHPASS, 1000, 0, 0, {{0, 500, 0}, {1500, 24000, 1}}, 2},
		{GF_DESIGN_BANDPASS, 0, 2000, 6000, {{0, 1500, 0}, {2500, 5500, 1}, {6500, 24000, 0}}, 3},
		{GF_DESIGN_BANDSTOP, 0, 2000, 6000, {{0, 1500, 1}, {2500, 5500, 0}, {6500, 24000, 1}}, 3},
	};
	struct gf_design d;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gf_design_init(&d, cases[i].type);
		d.cutoff_hz = cases[i].cutoff_hz;
		d.low_hz = cases[i].low_hz;
		d.high_hz = cases[i].high_hz;
		d.transition_hz = tw;
		check_sinc(&d, cases[i].bands, cases[i].nb);
	}

	/* taps given: the transition it reaches follows from Kaiser's formula */
	gf_design_init(&d, GF_DESIGN_LOWPASS);
	d.cutoff_hz = 12000.0;
	d.taps = 255;
	double t = gf_design_kaiser_transition_hz(80.0, 255, RATE);
	struct band lp2[] = {{0, 12000 - t / 2, 1}, {12000 + t / 2, 24000, 0}};
	check_sinc(&d, lp2, 2);
}

static void test_kaiser_formula(void)
{
	/* (80 - 7.95) / (2.285 * 2 pi 1000 / 48000) = 240.9 -> 242 taps, made odd: 243 */
	CHECK(gf_design_kaiser_taps(80.0, 1000.0, 48000.0) == 243);
	CHECK(fabs(gf_design_kaiser_beta(80.0) - 7.857) < 1e-3);
	CHECK(fabs(gf_design_kaiser_beta(40.0) - 3.3953) < 1e-3);
	CHECK(gf_design_kaiser_beta(20.0) == 0.0);
	double t = gf_design_kaiser_transition_hz(80.0, 243, 48000.0);
	CHECK(t > 990.0 && t <= 1000.0);
	CHECK(gf_design_kaiser_taps(80.0, 0.001, 48000.0) == 0); /* over the 16 Mi limit */
}

/* A notch at @p f0 and its multiples up to @p harmonics; the width is the caller's. */
static void init_notch(struct gf_design *d, double f0, uint32_t harmonics)
{
	gf_design_init(d, GF_DESIGN_NOTCH);
	d->freq_hz[0] = f0;
	d->n_freq = 1;
	d->harmonics = harmonics;
}

/* -3 dB width of the notch around f0: walk out until the gain is back above -3 dB. */
static double notch_width(const double *h, uint32_t n, double f0)
{
	double lo = f0, hi = f0, step = 0.05;
	while (db(gf_design_response(h, n, lo, RATE)) < -3.0103)
		lo -= step;
	while (db(gf_design_response(h, n, hi, RATE)) < -3.0103)
		hi += step;
	return hi - lo;
}

static void test_notch(void)
{
	struct gf_design d;
	uint32_t n;
	init_notch(&d, 50.0, 3);
	d.bandwidth_hz = 10.0;
	double *h = DESIGN(&d, RATE, &n);
	CHECK(gf_design_taps(&d, RATE) == n);
	check_linear_phase(h, n);
	printf("  notch 50 Hz x3, 10 Hz wide, 80 dB: %u taps\n", n);
	for (int k = 1; k <= 3; k++) {
		double depth = db(gf_design_response(h, n, 50.0 * k, RATE));
		double w = notch_width(h, n, 50.0 * k);
		printf("  notch %3d Hz: depth %.1f dB, -3 dB width %.2f Hz\n", 50 * k, depth, w);
		CHECK(depth < -100.0);
		CHECK(fabs(w - 10.0) < 1.5);
	}
	/* flat (< 0.01 dB) from 3 widths past the last notch up, and at DC side */
	double ripple, peak;
	measure(h, n, 180.0, 24000.0, &ripple, &peak);
	printf("  notch flatness 180..24000 Hz: %.5f dB\n", ripple);
	CHECK(ripple < 0.01);
	measure(h, n, 0.0, 20.0, &ripple, &peak);
	printf("  notch flatness 0..20 Hz: %.5f dB\n", ripple);
	CHECK(ripple < 0.01);
	/* between two notches, well away from both */
	measure(h, n, 72.0, 78.0, &ripple, &peak);
	CHECK(ripple < 0.05);
	free(h);
}

static void test_notch_two_mains_and_q(void)
{
	struct gf_design d;
	uint32_t n;
	/* 50 and 60 Hz families share 300 Hz: it must be placed once, not make the system singular */
	gf_design_init(&d, GF_DESIGN_NOTCH);
	d.freq_hz[0] = 50.0;
	d.freq_hz[1] = 60.0;
	d.n_freq = 2;
	d.harmonics = 6;
	d.bandwidth_hz = 8.0;
	d.attenuation_db = 60.0;
	double *h = DESIGN(&d, RATE, &n);
	const double f[] = {50, 60, 100, 120, 150, 180, 200, 240, 250, 300, 360};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		CHECK(db(gf_design_response(h, n, f[i], RATE)) < -100.0);
	free(h);

	/* constant Q: width grows with frequency */
	init_notch(&d, 60.0, 4);
	d.q = 6.0;
	h = DESIGN(&d, RATE, &n);
	for (int k = 1; k <= 4; k++) {
		double w = notch_width(h, n, 60.0 * k);
		printf("  constant-Q notch %d Hz: width %.2f Hz (want %.1f)\n", 60 * k, w, 60.0 * k / 6.0);
		CHECK(db(gf_design_response(h, n, 60.0 * k, RATE)) < -100.0);
		CHECK(fabs(w - 60.0 * k / 6.0) < 0.2 * 60.0 * k / 6.0);
	}
	free(h);

	/* harmonics above Nyquist are dropped, not an error */
	init_notch(&d, 1000.0, 100);
	d.taps = 1001;
	h = DESIGN(&d, 8000.0, &n);
	CHECK(n == 1001);
	free(h);
}

static void test_identity_delay(void)
{
	struct gf_design d;
	uint32_t n;
	gf_design_init(&d, GF_DESIGN_IDENTITY);
	double *h = DESIGN(&d, RATE, &n);
	CHECK(n == 1 && h[0] == 1.0);
	free(h);
	gf_design_init(&d, GF_DESIGN_DELAY);
	d.delay_ms = 1.5;
	h = DESIGN(&d, RATE, &n);
	CHECK(n == 73 && h[72] == 1.0 && h[0] == 0.0 && h[71] == 0.0);
	free(h);
}

/* Errors name the setting first ("KEY: why") so the config module can add file:line. */
static void expect_error(const struct gf_design *d, double rate, const char *key, const char *also)
{
	struct gf_errbuf eb = {{0}};
	double *h = (double *)1;
	uint32_t n = 7;
	int r = gf_design_run(d, rate, &h, &n, &eb);
	printf("  expected error: %s\n", eb.msg);
	CHECK(gf_design_taps(d, rate) == 0);
	CHECK(r == GF_E_CONFIG);
	CHECK(h == NULL && n == 0);
	CHECK(strncmp(eb.msg, key, strlen(key)) == 0 && eb.msg[strlen(key)] == ':');
	CHECK(!also || strstr(eb.msg, also));
}

static void test_errors(void)
{
	struct gf_design d;
	gf_design_init(&d, GF_DESIGN_LOWPASS);
	d.cutoff_hz = 30000.0;
	d.taps = 101;
	expect_error(&d, RATE, "cutoff_hz", "24000");
	d.cutoff_hz = 1000.0;
	d.taps = 100;
	expect_error(&d, RATE, "taps", "odd");
	d.taps = 0;
	expect_error(&d, RATE, "taps", "transition_hz");
	gf_design_init(&d, GF_DESIGN_BANDPASS);
	d.low_hz = 3000.0;
	d.high_hz = 2000.0;
	d.taps = 101;
	expect_error(&d, RATE, "high_hz", NULL);
	d.high_hz = 30000.0;
	expect_error(&d, RATE, "high_hz", "half the sample rate");
	init_notch(&d, 50.0, 1);
	expect_error(&d, RATE, "freq_hz", "exactly one of");
	d.bandwidth_hz = 60.0;
	expect_error(&d, RATE, "bandwidth_hz", NULL);
	d.bandwidth_hz = 10.0;
	d.freq_hz[0] = 5000.0;
	expect_error(&d, 8000.0, "freq_hz", "4000");
	gf_design_init(&d, GF_DESIGN_HIGHPASS);
	d.cutoff_hz = 100.0;
	d.transition_hz = 100.0;
	d.attenuation_db = 10.0;
	expect_error(&d, RATE, "attenuation_db", NULL);
	/* bounded work: 100 notches over a million taps is refused, not ground through */
	init_notch(&d, 50.0, 100);
	d.taps = 1000001;
	expect_error(&d, RATE, "harmonics", "too much work");
}

int main(void)
{
	test_kaiser_formula();
	test_sinc_designs();
	test_notch();
	test_notch_two_mains_and_q();
	test_identity_delay();
	test_errors();
	printf("test_design: ok\n");
	return 0;
}
