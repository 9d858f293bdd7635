/* Rate matching between two streams whose clocks drift, in virtual time.
 *
 * The test plays two devices: it calls the real capture and playback
 * callbacks in the order of two virtual clocks (capture at 48 kHz, playback
 * off by +200 ppm, -200 ppm, -2 %; periods of 256 frames, and 2048 and
 * 8192 for one case each), passing each callback its virtual time
 * in the time info, while the real worker thread filters (an impulse). The
 * worker is given the time it needs (virtual time stands still while it
 * works), so what is measured is the rate matching alone. An hour of audio
 * per case (GPUFIR_DRIFT_SECONDS), half a minute or so each: the resampler
 * and the hand-over to the worker are most of it.
 *
 * The input is a sum of low sines, so the ideal resampled signal is known
 * at any fractional time. Every 5 s of audio, a 20 ms window of output is
 * fitted with the delay D (in capture frames) at which it best equals the
 * input: rel. L2 at that D must be < 1e-3, and after lock-in D must stay
 * within DELAY_TOL frames of where it settled; no frame may be dropped
 * (no underflow or overflow); the status' measured ratio must be the
 * clocks' ratio. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "live_internal.h"
#include "liveutil.h"
#include "testutil.h"

#define RATE 48000.0
#define CH 2u
#define B 256u /* block, and both periods unless a case says otherwise */
#define WIN 960u
#define CHECK_EVERY_S 5.0
#define LOCK_S 1.0    /* lock-in allowed before the delay is held to DELAY_TOL (or 16 periods) */
#define DELAY_TOL 4.0 /* frames */
#define REL_TOL 1e-3

static const double freq[3] = {97.0, 211.0, 347.0}, amp[3] = {0.3, 0.2, 0.1};

static double signal_at(double t, unsigned c)
{
	double v = 0;
	for (int k = 0; k < 3; k++)
		v += amp[k] * sin(2 * M_PI * freq[k] * t + 0.7 * c + k);
	return v;
}

/* The frequencies are whole hertz, so the input repeats every second: one
 * second of it, computed once, is every capture period's input (sin() per
 * frame was most of this test's time). */
static float input_period[(size_t)RATE * CH];

static void input_init(void)
{
	for (uint32_t m = 0; m < (uint32_t)RATE; m++)
		for (unsigned c = 0; c < CH; c++)
			input_period[m * CH + c] = (float)signal_at(m / RATE, c);
}

/* Output window: frame j played at time (j0 + j) / fs_p; error at delay d
 * (capture frames). The frames are evenly spaced in time, so each sine is
 * evaluated once, at the first frame, and then rotated by its step per frame
 * (exact to ~1e-13 over the window, far below REL_TOL and float output). */
static double window_err(const float *w, uint64_t j0, double fs_p, double d)
{
	double t0 = (double)j0 / fs_p - d / RATE;
	double s[CH][3], co[CH][3], ds[3], dc[3];
	for (int k = 0; k < 3; k++) {
		ds[k] = sin(2 * M_PI * freq[k] / fs_p);
		dc[k] = cos(2 * M_PI * freq[k] / fs_p);
		for (unsigned c = 0; c < CH; c++) {
			s[c][k] = sin(2 * M_PI * freq[k] * t0 + 0.7 * c + k);
			co[c][k] = cos(2 * M_PI * freq[k] * t0 + 0.7 * c + k);
		}
	}
	double err = 0, ref = 0;
	for (uint32_t j = 0; j < WIN; j++) {
		for (unsigned c = 0; c < CH; c++) {
			double r = 0;
			for (int k = 0; k < 3; k++) {
				r += amp[k] * s[c][k];
				double sk = s[c][k];
				s[c][k] = sk * dc[k] + co[c][k] * ds[k];
				co[c][k] = co[c][k] * dc[k] - sk * ds[k];
			}
			double e = w[j * CH + c] - r;
			err += e * e;
			ref += r * r;
		}
	}
	return sqrt(err / ref);
}

/* The delay that fits best: a scan up to @p most (first window), then a
 * golden-section search near @p guess. */
static double fit_delay(const float *w, uint64_t j0, double fs_p, double guess, double most, double *rel)
{
	double lo = guess - 16, hi = guess + 16;
	if (guess < 0) {
		double best = 1e9;
		for (double d = 0; d < most; d += 1.0) {
			double e = window_err(w, j0, fs_p, d);
			if (e < best) {
				best = e;
				guess = d;
			}
		}
		lo = guess - 2;
		hi = guess + 2;
	}
	const double g = (sqrt(5.0) - 1) / 2;
	double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
	double fa = window_err(w, j0, fs_p, a), fb = window_err(w, j0, fs_p, b);
	for (int i = 0; i < 40; i++) {
		if (fa < fb) {
			hi = b;
			b = a;
			fb = fa;
			a = hi - g * (hi - lo);
			fa = window_err(w, j0, fs_p, a);
		} else {
			lo = a;
			a = b;
			fa = fb;
			b = lo + g * (hi - lo);
			fb = window_err(w, j0, fs_p, b);
		}
	}
	*rel = fa < fb ? fa : fb;
	return fa < fb ? a : b;
}

struct result {
	double worst_rel, d_settled, d_min, d_max, ratio, max_err_status;
	int windows;
};

static void run_case(double drift, uint32_t n, double seconds, struct result *res)
{
	double fs_p = RATE * (1.0 + drift);
	struct gf_engine *e = gf_test_passthrough_engine(CH, B, 1);
	struct gf_live *l;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_live_new_detached(&l, (uint32_t)RATE, CH, B, 1, NULL, e, &eb), &eb);
	l->duplex = 0; /* two streams, two clocks: as gf_live_new decides for two devices */
	l->ti_clock = 1;
	CHECK_OK(gf_live_clock_new(&l->clock, CH, (uint32_t)RATE));
	CHECK_OK_EB(gf_live_start(l, &eb), &eb);
	float *in = malloc((size_t)n * CH * sizeof(float)), *out = malloc((size_t)n * CH * sizeof(float));
	float win[WIN * CH];
	CHECK(in && out);
	uint64_t kc = 0, kp = 0, next_check = (uint64_t)(fs_p * 1.0), filled = 0;
	uint64_t end = (uint64_t)(seconds * RATE / n);
	double guess = -1, lock_s = fmax(LOCK_S, 16.0 * n / RATE); /* 16 updates at least */
	memset(res, 0, sizeof(*res));
	res->d_min = 1e9;
	res->d_max = -1e9;
	while (kc < end) {
		/* A capture callback brings the period that ends at its time; playback
		 * runs at an unrelated phase. */
		double tc = (double)(kc + 1) * n / RATE, tp = (double)kp * n / fs_p + 0.3e-3;
		if (tc <= tp) {
			for (uint32_t i = 0; i < n; i++) {
				uint64_t m = (kc * n + i) % (uint64_t)RATE;
				memcpy(in + i * CH, input_period + m * CH, CH * sizeof(float));
			}
			PaStreamCallbackTimeInfo ti = {.currentTime = tc};
			gf_live_capture_cb(in, NULL, n, &ti, 0, l);
			gf_test_live_wait_idle(l, B);
			kc++;
			continue;
		}
		PaStreamCallbackTimeInfo ti = {.currentTime = tp};
		gf_live_playback_cb(NULL, out, n, &ti, 0, l);
		uint64_t j0 = kp * n;
		if (getenv("GPUFIR_DRIFT_TRACE") && kp < 400 && kp % 4 == 0)
			printf("    cb %llu: loop error %.3f ratio %.6f read %u\n", (unsigned long long)kp,
			       atomic_load(&l->delay_err_milli) / 1000.0,
			       1.0 + atomic_load(&l->ratio_ppb) * 1e-9, gf_ring_read_index(l->out_ring));
		kp++;
		/* Collect the window that starts at next_check. */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t j = j0 + i;
			if (j < next_check || j >= next_check + WIN)
				continue;
			memcpy(win + (j - next_check) * CH, out + i * CH, CH * sizeof(float));
			filled++;
		}
		if (filled < WIN)
			continue;
		/* The output frame j is played at the callback's time plus j's offset in it. */
		double most = atomic_load(&l->latency) + 1000.0;
		double rel, fit = fit_delay(win, next_check, fs_p, guess, most, &rel);
		double d = fit + 0.3e-3 * RATE; /* frames are played 0.3 ms after j / fs_p */
		double at_s = (double)next_check / fs_p;
		if (at_s >= lock_s)
			guess = fit; /* before, a ratio still off can fit a wrong delay */
		if (at_s < lock_s || getenv("GPUFIR_DRIFT_VERBOSE"))
			printf("  %.0f s: delay %.3f frames, rel L2 %.2e, loop error %.3f, ratio %.9f\n",
			       at_s, d, rel, atomic_load(&l->delay_err_milli) / 1000.0,
			       1.0 + atomic_load(&l->ratio_ppb) * 1e-9);
		if (at_s >= lock_s) {
			res->windows++;
			res->worst_rel = fmax(res->worst_rel, rel);
			if (rel >= REL_TOL)
				fprintf(stderr,
					"drift %+g, period %u: window at %.0f s: rel L2 %.2e at delay %.3f\n",
					drift, n, at_s, rel, d);
			CHECK(rel < REL_TOL);
			if (res->d_settled == 0)
				res->d_settled = d;
			res->d_min = fmin(res->d_min, d);
			res->d_max = fmax(res->d_max, d);
			double m = fabs(atomic_load(&l->delay_err_milli) / 1000.0);
			res->max_err_status = fmax(res->max_err_status, m);
		}
		next_check += (uint64_t)(CHECK_EVERY_S * fs_p);
		filled = 0;
	}
	struct gf_live_stats s;
	gf_live_get_stats(l, &s);
	res->ratio = s.clock_ratio;
	printf("drift %+.4f %%, period %u: %.0f s of audio, %d windows: worst rel L2 %.2e, delay settled at "
	       "%.2f frames (latency %u), then within [%.2f, %.2f]; measured ratio %.9f (true %.9f); "
	       "underflows %llu, overflows in %llu out %llu\n",
	       drift * 100, n, seconds, res->windows, res->worst_rel, res->d_settled, s.latency_frames,
	       res->d_min, res->d_max, s.clock_ratio, 1.0 + drift, (unsigned long long)s.output_underflows,
	       (unsigned long long)s.input_overflows, (unsigned long long)s.output_overflows);
	CHECK(s.resampling == 1);
	CHECK(s.output_underflows == 0 && s.input_overflows == 0 && s.output_overflows == 0);
	CHECK(res->d_max - res->d_settled <= DELAY_TOL && res->d_settled - res->d_min <= DELAY_TOL);
	CHECK(fabs(res->d_settled - s.latency_frames) < DELAY_TOL); /* at the target, not just steady */
	CHECK(fabs(s.clock_ratio - (1.0 + drift)) < 1e-5);
	gf_live_stop(l);
	gf_live_free(l);
	gf_engine_free(e);
	free(in);
	free(out);
}

/* Long device periods too: a loop that updates once per period must keep
 * its bandwidth in Hz (test_live_clock has the rest). A creep of the delay
 * from a position summed in too few bits grows with the periods summed: the
 * case with the most of them (200 ppm at 256 frames) runs an hour, the others
 * a quarter of one, where their own faults (the loop's range and bandwidth)
 * show within minutes. */
static const struct {
	const char *name;
	double drift;
	uint32_t period;
	double seconds;
} cases[] = {{"p200ppm_256", 200e-6, B, 3600.0},
	     {"m200ppm_256", -200e-6, B, 900.0},
	     {"m2pct_256", -0.02, B, 900.0},
	     {"p200ppm_2048", 200e-6, 2048, 900.0},
	     {"m2pct_8192", -0.02, 8192, 900.0}};

/* Usage: test_live_drift [CASE...]: the cases named (CTest runs each as a
 * test of its own, so that they can run side by side), else all. */
int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *env = getenv("GPUFIR_DRIFT_SECONDS");
	double seconds = env ? atof(env) : 0; /* 0: each case's own */
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	int ran = 0;
	input_init();
	for (size_t i = 0; i < ncases; i++) {
		int wanted = argc < 2;
		for (int a = 1; a < argc; a++)
			wanted |= strcmp(argv[a], cases[i].name) == 0;
		if (!wanted)
			continue;
		struct result r;
		run_case(cases[i].drift, cases[i].period, seconds > 0 ? seconds : cases[i].seconds, &r);
		ran++;
	}
	if (ran != (argc < 2 ? (int)ncases : argc - 1)) {
		fprintf(stderr, "test_live_drift: unknown case among the arguments (cases:");
		for (size_t i = 0; i < ncases; i++)
			fprintf(stderr, " %s", cases[i].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	printf("test_live_drift: ok\n");
	return 0;
}
