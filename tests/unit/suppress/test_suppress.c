/*
 * The noise suppressor (suppress.h): with no reduction it returns the input,
 * delayed by exactly its latency; its output does not depend on how the
 * stream is cut into calls; channels are independent; on a speech-like
 * signal in white or pink noise at 5 dB SNR it raises the SI-SDR by several
 * dB, more with a noise sample; clean speech passes nearly untouched, a voice
 * that talks 2 s at a time (no pause within the minimum's window) too; a NaN
 * does not poison its state, and a gap of NaN (a muted block) teaches its noise
 * estimate nothing: suppression goes on after it as without it; a steady tone
 * is cut by the depth also after digital silence, a mute or a quieter noise
 * (an estimate left far under it); bad parameters are refused with a reason; its
 * zero-phase high-pass (highpass_hz) cuts a 10 Hz rumble, passes the voice's
 * band, adds no delay, and is off at 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suppress.h"
#include "suppressutil.h"
#include "testutil.h"

#define RATE 16000u

static uint64_t rng;

/* Pink noise (Voss-McCartney over 12 rows), unit-free. */
static float *pink(uint32_t frames, uint64_t *st)
{
	float *x = malloc(frames * sizeof(float)), rows[12] = {0};
	float sum = 0.0f;
	for (uint32_t i = 0; i < frames; i++) {
		uint32_t k = (uint32_t)__builtin_ctz(i + 1);
		if (k < 12) {
			sum -= rows[k];
			rows[k] = gf_test_randf(st) * 2.0f - 1.0f;
			sum += rows[k];
		}
		x[i] = sum + gf_test_randf(st) - 0.5f;
	}
	return x;
}

static float *white(uint32_t n, uint64_t *st)
{
	float *x = malloc(n * sizeof(float));
	for (uint32_t i = 0; i < n; i++)
		x[i] = gf_test_randf(st) * 2.0f - 1.0f; /* zero mean */
	return x;
}

static double energy(const float *x, uint32_t n)
{
	double e = 0.0;
	for (uint32_t i = 0; i < n; i++)
		e += (double)x[i] * x[i];
	return e;
}

/* @p noise (@p n_noise frames) scaled so that the clean signal stands @p snr_db above its first n. */
static void scale_to_snr(const float *clean, float *noise, uint32_t n, uint32_t n_noise, double snr_db)
{
	double g = sqrt(energy(clean, n) / (energy(noise, n) * pow(10.0, snr_db / 10.0)));
	for (uint32_t i = 0; i < n_noise; i++)
		noise[i] = (float)(noise[i] * g);
}

static double highpass_hz; /* what make() gives every suppressor */

static struct gf_suppress *make(double reduction_db, const float *noise, uint64_t noise_frames,
				uint32_t channels)
{
	struct gf_suppress_params p = {.reduction_db = reduction_db,
				       .noise = noise,
				       .noise_frames = noise_frames,
				       .highpass_hz = highpass_hz};
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	CHECK_OK_EB(gf_suppress_new(&p, channels, RATE, &s, &eb), &eb);
	return s;
}

/* Run @p x (mono) through @p s in calls of random size up to @p max_call; return the output moved
 * back by the latency (the last latency frames are the flushed tail). */
static float *run_aligned(struct gf_suppress *s, const float *x, uint32_t n, uint32_t max_call)
{
	uint32_t lat = gf_suppress_latency(s), total = n + lat;
	float *buf = calloc(total, sizeof(float));
	memcpy(buf, x, n * sizeof(float));
	for (uint32_t at = 0; at < total;) {
		uint32_t m = 1 + gf_test_rand_below(&rng, max_call);
		if (m > total - at)
			m = total - at;
		gf_suppress_process(s, buf + at, m);
		at += m;
	}
	memmove(buf, buf + lat, n * sizeof(float));
	return buf;
}

static void identity_case(void)
{
	uint32_t n = 3 * RATE;
	float *x = gf_test_noise(n, &rng);
	struct gf_suppress *s = make(0.0, NULL, 0, 1);
	CHECK(gf_suppress_latency(s) == 384); /* 24 ms at 16 kHz */
	float *y = run_aligned(s, x, n, 700);
	double err = 0.0;
	for (uint32_t i = 0; i < n; i++)
		err = fmax(err, fabs((double)y[i] - x[i]));
	printf("  reduction 0 dB: the input back, %u frames late, max |error| %.2g\n", gf_suppress_latency(s),
	       err);
	CHECK(err < 1e-5);
	gf_suppress_free(s);
	free(x);
	free(y);
}

static void calls_case(void)
{
	uint32_t n = 2 * RATE;
	float *x = gf_test_speech_like(n, RATE, &rng), *w = white(n, &rng);
	for (uint32_t i = 0; i < n; i++)
		x[i] += 0.05f * w[i];
	struct gf_suppress *a = make(18.0, NULL, 0, 1), *b = make(18.0, NULL, 0, 1);
	float *ya = run_aligned(a, x, n, 1), *yb = run_aligned(b, x, n, 5000);
	CHECK(memcmp(ya, yb, n * sizeof(float)) == 0);
	/* reset() starts over: the same input gives the same output again */
	gf_suppress_reset(b);
	float *yc = run_aligned(b, x, n, 333);
	CHECK(memcmp(ya, yc, n * sizeof(float)) == 0);
	printf("  calls of 1 frame and of up to 5000 frames, and after reset(): the same bits\n");
	gf_suppress_free(a);
	gf_suppress_free(b);
	free(x), free(w), free(ya), free(yb), free(yc);
}

/* Two channels: each is what it would be alone (the other one loud noise). */
static void channels_case(void)
{
	uint32_t n = RATE;
	float *x = gf_test_speech_like(n, RATE, &rng), *w = gf_test_noise(n, &rng);
	uint32_t lat;
	struct gf_suppress *mono = make(18.0, NULL, 0, 1), *st = make(18.0, NULL, 0, 2);
	lat = gf_suppress_latency(st);
	float *y1 = run_aligned(mono, x, n, 256);
	float *inter = calloc(2 * (size_t)(n + lat), sizeof(float));
	for (uint32_t i = 0; i < n; i++) {
		inter[2 * i] = x[i];
		inter[2 * i + 1] = w[i];
	}
	gf_suppress_process(st, inter, n + lat);
	for (uint32_t i = 0; i < n; i++)
		CHECK(inter[2 * (i + lat)] == y1[i]);
	printf("  two channels: each the same as alone\n");
	gf_suppress_free(mono);
	gf_suppress_free(st);
	free(x), free(w), free(y1), free(inter);
}

static double improvement(const char *what, int with_sample, float *(*make_noise)(uint32_t, uint64_t *))
{
	uint32_t n = 8 * RATE, skip = RATE / 2; /* the first half second: the estimate settling */
	float *clean = gf_test_speech_like(n, RATE, &rng), *noise = make_noise(n + 2 * RATE, &rng);
	scale_to_snr(clean, noise, n, n + 2 * RATE, 5.0);
	float *noisy = malloc(n * sizeof(float));
	for (uint32_t i = 0; i < n; i++)
		noisy[i] = clean[i] + noise[2 * RATE + i]; /* the sample is the noise before it */
	struct gf_suppress *s = with_sample ? make(18.0, noise, 2 * RATE, 1) : make(18.0, NULL, 0, 1);
	float *out = run_aligned(s, noisy, n, 512);
	double before = gf_test_si_sdr(clean, noisy, skip, n), after = gf_test_si_sdr(clean, out, skip, n);
	printf("  %s at 5 dB SNR%s: SI-SDR %.1f -> %.1f dB (%+.1f)\n", what,
	       with_sample ? ", noise sample" : "", before, after, after - before);
	gf_suppress_free(s);
	free(clean), free(noise), free(noisy), free(out);
	return after - before;
}

static void denoise_cases(void)
{
	CHECK(improvement("white noise", 0, white) > 5.0);
	CHECK(improvement("white noise", 1, white) > 5.0);
	CHECK(improvement("pink noise", 0, pink) > 4.0);
	CHECK(improvement("pink noise", 1, pink) > 4.0);
}

/* The SI-SDR of @p x (@p n frames) through a suppressor of 18 dB against @p clean. */
static double sdr_through(const float *clean, const float *x, uint32_t n)
{
	struct gf_suppress *s = make(18.0, NULL, 0, 1);
	float *out = run_aligned(s, x, n, 512);
	double sdr = gf_test_si_sdr(clean, out, 0, n);
	gf_suppress_free(s);
	free(out);
	return sdr;
}

static void clean_case(void)
{
	uint32_t n = 6 * RATE;
	float *clean = gf_test_speech_like(n, RATE, &rng);
	double sdr = sdr_through(clean, clean, n);
	printf("  clean speech-like signal: SI-SDR of the output %.1f dB\n", sdr);
	CHECK(sdr > 20.0);
	free(clean);
}

/* Voiced bursts of 80 to 300 ms, 40 ms apart (gaps the 50 ms smoothing does not see), from
 * @p from to @p to of @p x: speech-like (suppressutil.c) with its longer pauses left out. */
static void talk(float *x, uint32_t from, uint32_t to)
{
	for (uint32_t at = from; at < to;) {
		uint32_t len = RATE * (80 + gf_test_rand_below(&rng, 220)) / 1000;
		double f0 = 100.0 + gf_test_rand_below(&rng, 150), phase = 0.0;
		for (uint32_t i = 0; i < len && at + i < to; i++) {
			double t = (double)i / len, env = sin(M_PI * t), v = 0.0;
			phase += 2.0 * M_PI * f0 / RATE;
			for (int h = 1; h * f0 < 0.45 * RATE && h <= 30; h++)
				v += sin(h * phase) / h * (h >= 3 && h <= 8 ? 2.0 : 1.0);
			x[at + i] = (float)(0.08 * env * env * v);
		}
		at += len + RATE / 25;
	}
}

/* A voice that talks on for 2 s at a time with 0.4 s pauses between, over a quiet room 50 dB
 * down: the suppressor's minimum (over the last 0.8 to 1.6 s) finds no pause in the talk. Its own
 * quietest bins are no noise: the output is the input, within the room's noise. */
static void sustained_case(void)
{
	uint32_t n = 8 * RATE;
	float *clean = calloc(n, sizeof(float)), *room = white(n, &rng);
	for (uint32_t at = RATE / 2; at < n; at += 2 * RATE + 2 * RATE / 5)
		talk(clean, at, at + 2 * RATE < n ? at + 2 * RATE : n);
	scale_to_snr(clean, room, n, n, 50.0);
	float *x = malloc(n * sizeof(float));
	for (uint32_t i = 0; i < n; i++)
		x[i] = clean[i] + room[i];
	double sdr = sdr_through(clean, x, n);
	printf("  a voice talking 2 s at a time in a quiet room: SI-SDR of the output %.1f dB\n", sdr);
	CHECK(sdr > 33.5);
	free(clean), free(room), free(x);
}

static void nan_case(void)
{
	uint32_t n = RATE;
	float *x = gf_test_noise(n, &rng);
	x[1000] = NAN;
	x[2000] = INFINITY;
	struct gf_suppress *s = make(18.0, NULL, 0, 1);
	float *y = run_aligned(s, x, n, 128);
	for (uint32_t i = 0; i < n; i++)
		CHECK(isfinite(y[i]));
	printf("  NaN and Inf in: finite out, the state not poisoned\n");
	gf_suppress_free(s);
	free(x), free(y);
}

/* The RMS of @p y over [@p from, @p to). */
static double rms_of(const float *y, uint32_t from, uint32_t to)
{
	return sqrt(energy(y + from, to - from) / (to - from));
}

/*
 * A gap of missing input (NaN: a muted block the engine passed on, 1.4 s as
 * an offline chunk was) in steady white noise, once the estimate has settled:
 * the suppressor holds its state over it, so the noise right after is
 * suppressed as without the gap (zeros used to pull the noise estimate down
 * and the next seconds passed far less suppressed), and from 3 s after it the
 * output is the gap-free one's again.
 */
static void gap_case(void)
{
	const uint32_t n = 10 * RATE, g0 = 3 * RATE, g1 = g0 + 22400, after = g1 + RATE / 8;
	float *x = white(n, &rng), *x_gap = malloc(n * sizeof(float));
	for (uint32_t i = 0; i < n; i++)
		x[i] *= 0.05f;
	memcpy(x_gap, x, n * sizeof(float));
	for (uint32_t i = g0; i < g1; i++)
		x_gap[i] = NAN;
	struct gf_suppress *a = make(18.0, NULL, 0, 1), *b = make(18.0, NULL, 0, 1);
	float *y = run_aligned(a, x, n, 512), *z = run_aligned(b, x_gap, n, 512);
	double in = rms_of(x, after, after + RATE / 2), ry = rms_of(y, after, after + RATE / 2),
	       rz = rms_of(z, after, after + RATE / 2);
	double e = 0.0, sum = 0.0;
	for (uint32_t i = g1 + 3 * RATE; i < n; i++) {
		e += ((double)z[i] - y[i]) * ((double)z[i] - y[i]);
		sum += (double)y[i] * y[i];
	}
	printf("  a %.2f s gap of NaN in noise: the 0.5 s after it %.1f dB below the input (%.1f dB without "
	       "the gap); from 3 s after it rel L2 %.3g\n",
	       (double)(g1 - g0) / RATE, 20 * log10(rz / in), 20 * log10(ry / in), sqrt(e / sum));
	CHECK(fabs(20 * log10(rz / ry)) < 1.0);
	CHECK(sqrt(e / sum) < 1e-4);
	gf_suppress_free(a);
	gf_suppress_free(b);
	free(x), free(x_gap), free(y), free(z);
}

/* A 1 kHz tone in white noise some 17 dB under it, depth 15 dB: the cut over the last half second of
 * @p tone_s of it, after @p before_s of white noise at @p before_db relative to the tone's noise
 * (-INFINITY: digital silence, as a live capture gives before its device delivers), and, where
 * @p mute_s > 0, after @p tone_s of the tone and a mute of that long (zeros). */
static double tone_cut_db(double before_s, double before_db, double mute_s, double tone_s)
{
	const uint32_t lead = (uint32_t)(before_s * RATE), mute = (uint32_t)(mute_s * RATE);
	const uint32_t tone = (uint32_t)(tone_s * RATE), at = lead + tone, n = at + (mute ? mute + tone : 0);
	float *x = calloc(n, sizeof(float)), *w = white(n, &rng);
	float quiet = (float)(0.017 * pow(10.0, before_db / 20.0)); /* 0 at -INFINITY */
	for (uint32_t i = 0; i < n; i++)
		if (i < lead)
			x[i] = quiet * w[i];
		else if (mute_s <= 0.0 || i < at || i >= at + mute)
			x[i] = (float)(0.1 * sin(2.0 * M_PI * 1000.0 * i / RATE) + 0.017 * w[i]);
	struct gf_suppress *s = make(15.0, NULL, 0, 1);
	float *y = run_aligned(s, x, n, 512);
	double cut = 20 * log10(rms_of(x, n - RATE / 2, n) / rms_of(y, n - RATE / 2, n));
	gf_suppress_free(s);
	free(x), free(w), free(y);
	return cut;
}

/* A steady sound is learnt as noise however far under it the estimate was: after digital silence,
 * after a mute, after a quieter noise. An estimate left far under a tone would stay there for good
 * (the tone never dips, so P / L reads as speech and L keeps to its floor under the longer
 * minimum), and the tone would be cut by some 2 dB where 15 are due. */
static void steady_case(void)
{
	/* 4 s: a sound that rises far above the longer minimum reads as speech until that minimum has
	 * seen it (2.4 s at most), after digital silence too (clean speech after it stays clean). */
	double plain = tone_cut_db(0.0, 0.0, 0.0, 4.0), lead = tone_cut_db(1.0, -INFINITY, 0.0, 4.0);
	double mute = tone_cut_db(0.0, 0.0, 0.5, 4.0), quieter = tone_cut_db(3.0, -30.0, 0.0, 4.0);
	printf("  a 1 kHz tone in noise, depth 15 dB: cut %.1f dB; after 1 s of digital silence %.1f dB, "
	       "after a 0.5 s mute %.1f dB, after 3 s of a noise 30 dB quieter %.1f dB\n",
	       plain, lead, mute, quieter);
	CHECK(plain > 13.0);
	CHECK(lead > plain - 1.0);
	CHECK(mute > plain - 1.0);
	CHECK(quieter > plain - 1.0);
}

/* The gain, in dB, of a steady tone at @p hz through a suppressor with no reduction (its own gain is
 * then exactly one, so only the high-pass acts), over the last 2 of 3 seconds; and its lag in
 * frames, by cross-correlation, in *lag. */
static double tone_gain_db(double hz, int *lag)
{
	uint32_t n = 3 * RATE, from = RATE;
	float *x = malloc(n * sizeof(float));
	for (uint32_t i = 0; i < n; i++)
		x[i] = (float)(0.25 * sin(2.0 * M_PI * hz * i / RATE));
	struct gf_suppress *s = make(0.0, NULL, 0, 1);
	float *y = run_aligned(s, x, n, 700);
	double best = -1e300;
	for (int d = -8; d <= 8; d++) { /* the lag: zero where the high-pass has no phase */
		double c = 0.0;
		for (uint32_t i = from; i + 8 < n; i++)
			c += (double)x[i] * y[(int)i + d];
		if (c > best) {
			best = c;
			*lag = d;
		}
	}
	double g = 10.0 * log10(energy(y + from, n - from) / energy(x + from, n - from));
	gf_suppress_free(s);
	free(x), free(y);
	return g;
}

static void highpass_case(void)
{
	static const double hz[] = {5.0, 10.0, 60.0, 80.0, 120.0, 200.0, 1000.0};
	double g[sizeof(hz) / sizeof(hz[0])];
	int lag[sizeof(hz) / sizeof(hz[0])];
	highpass_hz = 25.0;
	printf("  highpass_hz 25:");
	for (size_t i = 0; i < sizeof(hz) / sizeof(hz[0]); i++) {
		g[i] = tone_gain_db(hz[i], &lag[i]);
		printf(" %g Hz %+.2f dB%s", hz[i], g[i], i + 1 < sizeof(hz) / sizeof(hz[0]) ? "," : "\n");
	}
	CHECK(g[0] < -10.0 && g[1] < -10.0); /* rumble: 5 and 10 Hz, both under the first bin */
	CHECK(fabs(g[2]) < 1.0);	     /* 60 Hz: the ramp's top, within 1 dB */
	for (size_t i = 3; i < sizeof(hz) / sizeof(hz[0]); i++) {
		CHECK(fabs(g[i]) < 0.5); /* the voice's band: untouched */
		CHECK(lag[i] == 0);	 /* zero phase: no delay at any frequency */
	}
	double g40;
	highpass_hz = 40.0; /* a higher cutoff cuts more of 10 Hz; 120 Hz still passes */
	CHECK((g40 = tone_gain_db(10.0, &lag[0])) < g[1] - 3.0 && fabs(tone_gain_db(120.0, &lag[0])) < 0.5);
	highpass_hz = 0.0; /* off: the rumble passes */
	double off = tone_gain_db(10.0, &lag[0]);
	printf("  10 Hz: %+.1f dB at highpass_hz 40, %+.2f dB with it off\n", g40, off);
	CHECK(fabs(off) < 0.01 && lag[0] == 0);
}

static void refusal_case(void)
{
	struct gf_errbuf eb = {{0}};
	struct gf_suppress *s = NULL;
	struct gf_suppress_params p = {.reduction_db = 55.0};
	CHECK(gf_suppress_new(&p, 1, RATE, &s, &eb) == GF_E_INVAL && !s);
	CHECK(strstr(eb.msg, "reduction_db 55"));
	float short_noise[100] = {0};
	p = (struct gf_suppress_params){.reduction_db = 10.0, .noise = short_noise, .noise_frames = 100};
	CHECK(gf_suppress_new(&p, 1, RATE, &s, &eb) == GF_E_INVAL && !s);
	CHECK(strstr(eb.msg, "noise sample has 100 frames"));
	p = (struct gf_suppress_params){.reduction_db = 10.0, .highpass_hz = 10.0};
	CHECK(gf_suppress_new(&p, 1, RATE, &s, &eb) == GF_E_INVAL && !s);
	CHECK(strstr(eb.msg, "highpass_hz 10 is neither 0 (off) nor within 20..1000 Hz"));
	p.highpass_hz = 2000.0;
	CHECK(gf_suppress_new(&p, 1, RATE, &s, &eb) == GF_E_INVAL && !s);
	p.highpass_hz = NAN;
	CHECK(gf_suppress_new(&p, 1, RATE, &s, &eb) == GF_E_INVAL && !s);
	p.highpass_hz = 0.0;
	p.noise = NULL;
	CHECK(gf_suppress_new(&p, 0, RATE, &s, &eb) == GF_E_INVAL);
	printf("  refused: %s\n", eb.msg);
	/* the frame is the largest power of two within 24 ms at every rate */
	static const uint32_t rates[] = {8000, 44100, 48000, 96000, 384000};
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		p.reduction_db = 12.0;
		CHECK_OK_EB(gf_suppress_new(&p, 1, rates[i], &s, &eb), &eb);
		uint32_t lat = gf_suppress_latency(s);
		CHECK(lat <= GF_SUPPRESS_MAX_FRAME_S * rates[i] &&
		      2.0 * lat > GF_SUPPRESS_MAX_FRAME_S * rates[i]);
		gf_suppress_free(s);
	}
}

int main(void)
{
	rng = gf_test_seed("test_suppress");
	identity_case();
	calls_case();
	channels_case();
	nan_case();
	gap_case();
	steady_case();
	refusal_case();
	clean_case();
	sustained_case();
	denoise_cases();
	highpass_case();
	highpass_hz = 25.0; /* with the high-pass, the voice and the gains are as good */
	clean_case();
	denoise_cases();
	return 0;
}
