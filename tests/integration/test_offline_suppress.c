/*
 * The noise suppressor (design = "suppress") offline, through the real
 * program, on a fixed-seed speech-like signal: harmonic tone bursts (a
 * gliding pitch, a formant-shaped spectrum, syllable envelopes) with pauses
 * between them.
 *
 * 1. In white noise at 5 dB SNR, a suppress chain raises the SI-SDR by at
 *    least MIN_GAIN_DB, and the output lines up with the clean signal (its
 *    cross-correlation peaks at lag 0) with IN's length.
 * 2. --causal keeps the suppressor's latency (the peak moves to +latency);
 *    with --tail too, the output holds it all (IN's length + latency);
 *    --tail alone, aligned, adds only the FIR's ring-out (none here).
 * 3. The clean signal (a -80 dBFS floor, as a quiet recording has) through
 *    the built-in default chain comes out close to itself.
 * 4. A file long enough for stripes (--threads 2) is filtered on one thread,
 *    which -v says, and gives the bits --threads 1 gives; in a batch each
 *    file starts the suppressor afresh (the same bits as the file alone).
 * 5. A file of MULTI channels spreads them over --threads 2 and 3 threads
 *    (the suppressor's line says so) with the bits of --threads 1; a batch of
 *    two such files with --threads 2 gives each file those bits too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_prog.h"
#include "sndutil.h"
#include "suppress.h"
#include "suppressutil.h"
#include "testutil.h"

#define RATE 48000
#define SECONDS 6
#define FRAMES (RATE * SECONDS)
#define SNR_DB 5.0
#define MIN_GAIN_DB 6.0
#define CLEAN_MIN_DB 25.0
#define MAX_LAG 2048
#define MULTI 5

static char *dir;
static uint32_t latency; /* the suppressor's at RATE (suppress.h: its frame, within 24 ms) */

static uint32_t suppress_latency(void)
{
	struct gf_suppress_params p = {.reduction_db = GF_SUPPRESS_DEFAULT_REDUCTION_DB};
	struct gf_suppress *s;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_new(&p, 1, RATE, &s, &eb), &eb);
	uint32_t n = gf_suppress_latency(s);
	gf_suppress_free(s);
	return n;
}

/* One syllable at @p at: a pitch gliding f0 -> f1, harmonics under two formants, a smooth envelope. */
static void syllable(float *x, uint32_t at, uint32_t len, double f0, double f1, double amp)
{
	double phase[40] = {0};
	for (uint32_t i = 0; i < len && at + i < FRAMES; i++) {
		double t = (double)i / len, f = f0 + (f1 - f0) * t;
		double env = amp * sin(M_PI * t) * sin(M_PI * t);
		double s = 0.0;
		for (int k = 1; k < 40 && k * f < 0.45 * RATE; k++) {
			double fk = k * f; /* formants near 500 and 1500 Hz */
			double g = 1.0 / (1.0 + pow((fk - 500.0) / 300.0, 2)) +
				   0.5 / (1.0 + pow((fk - 1500.0) / 400.0, 2)) + 0.02;
			phase[k] += 2.0 * M_PI * fk / RATE;
			s += g * sin(phase[k]) / k;
		}
		x[at + i] += (float)(env * s);
	}
}

/* Bursts of 120..320 ms, pauses of 80..400 ms, pitch 90..260 Hz: fixed seed, always the same. */
static void speech_like(float *x, uint64_t seed)
{
	memset(x, 0, FRAMES * sizeof(float));
	uint32_t at = RATE / 5;
	while (at < FRAMES) {
		double u = 0.5 + 0.5 * gf_test_randf(&seed), v = 0.5 + 0.5 * gf_test_randf(&seed);
		uint32_t len = (uint32_t)((0.12 + 0.2 * u) * RATE);
		double f0 = 90.0 + 170.0 * v, f1 = f0 * (0.8 + 0.4 * (0.5 + 0.5 * gf_test_randf(&seed)));
		syllable(x, at, len, f0, f1, 0.25 + 0.1 * gf_test_randf(&seed));
		at += len + (uint32_t)((0.08 + 0.32 * (0.5 + 0.5 * gf_test_randf(&seed))) * RATE);
	}
}

static double power(const float *x, uint32_t n)
{
	double p = 0.0;
	for (uint32_t i = 0; i < n; i++)
		p += (double)x[i] * x[i];
	return p / n;
}

/* White noise at @p snr_db below the signal's mean power. */
static void add_noise(float *y, const float *x, double snr_db, uint64_t seed)
{
	double g = sqrt(power(x, FRAMES) / pow(10.0, snr_db / 10.0) * 3.0); /* uniform: power 1/3 */
	for (uint32_t i = 0; i < FRAMES; i++)
		y[i] = x[i] + (float)(g * gf_test_randf(&seed));
}

/* The lag in -MAX_LAG..MAX_LAG where y[i + lag] best matches s[i], over 1..2.5 s. */
static int peak_lag(const float *y, const float *s, uint32_t n)
{
	int best = 0;
	double top = -INFINITY;
	CHECK(n >= 5 * RATE / 2 + MAX_LAG);
	for (int lag = -MAX_LAG; lag <= MAX_LAG; lag++) {
		double c = 0.0;
		for (uint32_t i = RATE; i < 5 * RATE / 2; i++)
			c += (double)y[(int64_t)i + lag] * s[i];
		if (c > top)
			top = c, best = lag;
	}
	return best;
}

static float *run_file(const char *in, const char *out, const char *const *args, uint32_t want_frames,
		       struct run_result *r)
{
	run_gpufir(args, r);
	CHECK_RUN(r, 0, NULL);
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	if (info.frames != (sf_count_t)want_frames)
		fprintf(stderr, "%s: %lld frames, want %u\n", out, (long long)info.frames, want_frames);
	CHECK(info.frames == (sf_count_t)want_frames && info.channels == 1 && info.samplerate == RATE);
	(void)in;
	return y;
}

static char *write_in(const char *name, const float *x, uint32_t frames)
{
	char *p = gf_test_path(dir, name);
	gf_test_write_sound(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 1, frames, x);
	return p;
}

static void test_noisy(const float *clean, const char *conf)
{
	static float noisy[FRAMES];
	add_noise(noisy, clean, SNR_DB, 0x5eed0002);
	char *in = write_in("noisy.wav", noisy, FRAMES), *out = gf_test_path(dir, "noisy_out.wav");
	struct run_result r;
	float *y = run_file(in, out, ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu"), FRAMES, &r);
	/* from 0.5 s: the estimate starts from the first frames, which are noise here anyway */
	uint32_t from = RATE / 2;
	double before = gf_test_si_sdr(clean, noisy, from, FRAMES),
	       after = gf_test_si_sdr(clean, y, from, FRAMES);
	int lag = peak_lag(y, clean, FRAMES);
	printf("noisy speech at %.0f dB SNR: SI-SDR %.2f dB -> %.2f dB (%+.2f dB); cross-correlation peak at "
	       "lag %d\n",
	       SNR_DB, before, after, after - before, lag);
	CHECK(after - before >= MIN_GAIN_DB);
	CHECK(lag == 0);
	free(y);

	/* --causal: the latency kept (and IN's length); with --tail, the latency's frames added. */
	y = run_file(in, out, ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu", "--causal"), FRAMES,
		     &r);
	lag = peak_lag(y, clean, FRAMES);
	printf("--causal: peak at lag %d (the suppressor's latency %u)\n", lag, latency);
	CHECK(lag == (int)latency);
	free(y);
	y = run_file(in, out, ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu", "--causal", "--tail"),
		     FRAMES + (int)latency, &r);
	CHECK(peak_lag(y, clean, FRAMES) == (int)latency);
	free(y);
	/* aligned, the suppressor rings out nothing beyond its latency: a 1-tap chain adds no frame */
	y = run_file(in, out, ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu", "--tail"), FRAMES,
		     &r);
	CHECK(peak_lag(y, clean, FRAMES) == 0);
	free(y);
	unlink(out);
	unlink(in);
	free(out);
	free(in);
}

/* The clean signal through the built-in default chain (no -c): close to itself. */
static void test_clean_default(const float *clean)
{
	static float quiet[FRAMES];
	uint64_t seed = 0x5eed0003;
	for (uint32_t i = 0; i < FRAMES; i++) /* -80 dBFS RMS: a quiet recording's floor */
		quiet[i] = clean[i] + 1.7e-4f * gf_test_randf(&seed);
	char *in = write_in("clean.wav", quiet, FRAMES), *out = gf_test_path(dir, "clean_out.wav");
	struct run_result r;
	float *y = run_file(in, out, ARGS("-i", in, "-o", out, "--backend", "cpu"), FRAMES, &r);
	CHECK(strstr(r.err, "suppressor") != NULL); /* the alignment line names it */
	uint32_t from = RATE / 10;
	double sdr = gf_test_si_sdr(quiet, y, from, FRAMES);
	int lag = peak_lag(y, quiet, FRAMES);
	printf("clean speech through the built-in default chain: SI-SDR %.2f dB (from %.1f s), peak at lag "
	       "%d\n",
	       sdr, (double)from / RATE, lag);
	CHECK(sdr > CLEAN_MIN_DB);
	CHECK(lag == 0);
	free(y);
	unlink(out);
	unlink(in);
	free(out);
	free(in);
}

static int same_file_audio(const char *a, const char *b)
{
	SF_INFO ia, ib;
	float *x = gf_test_read_sound(a, &ia, 1), *y = gf_test_read_sound(b, &ib, 1);
	int same = ia.frames == ib.frames && ia.channels == ib.channels &&
		   memcmp(x, y, (size_t)ia.frames * ia.channels * sizeof(float)) == 0;
	free(x);
	free(y);
	return same;
}

/* Stripes fall back to one thread; a batch gives each file its own suppressor. */
static void test_threads_and_batch(const float *clean, const char *conf)
{
	enum { LONG = 3 * FRAMES }; /* 18 s: several 65536-frame stripes */
	float *x = malloc(LONG * sizeof(float));
	CHECK(x);
	uint64_t seed = 0x5eed0004;
	for (uint32_t i = 0; i < LONG; i++)
		x[i] = clean[i % FRAMES] + 0.05f * gf_test_randf(&seed);
	char *in = write_in("long.wav", x, LONG), *one = gf_test_path(dir, "long_1.wav"),
	     *two = gf_test_path(dir, "long_2.wav");
	struct run_result r;
	free(run_file(in, one, ARGS("-i", in, "-o", one, "-c", conf, "--backend", "cpu", "--threads", "1"),
		      LONG, &r));
	free(run_file(in, two,
		      ARGS("-i", in, "-o", two, "-c", conf, "--backend", "cpu", "--threads", "2", "-v"), LONG,
		      &r));
	CHECK(strstr(r.err, "noise suppressor is sequential"));
	CHECK(same_file_audio(one, two));
	printf("--threads 2: one thread (the suppressor is sequential), the same bits as --threads 1\n");

	/* a batch of the long file and a short one: each as when filtered alone */
	char *shortin = write_in("short.wav", x + FRAMES, FRAMES),
	     *shortone = gf_test_path(dir, "short_1.wav");
	free(run_file(shortin, shortone, ARGS("-i", shortin, "-o", shortone, "-c", conf, "--backend", "cpu"),
		      FRAMES, &r));
	char *outdir = gf_test_path(dir, "batch/");
	char *bl = gf_test_path(dir, "batch/long.wav"), *bs = gf_test_path(dir, "batch/short.wav");
	run_gpufir(ARGS("-i", in, "-i", shortin, "-o", outdir, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(same_file_audio(one, bl) && same_file_audio(shortone, bs));
	printf("batch: each file the same bits as alone\n");
	unlink(bl);
	unlink(bs);
	free(bl);
	free(bs);
	free(outdir);
	unlink(shortin);
	unlink(shortone);
	free(shortin);
	free(shortone);
	unlink(in);
	unlink(one);
	unlink(two);
	free(in);
	free(one);
	free(two);
	free(x);
}

/* The suppressor's line of a run's log says it ran on @p threads threads. */
static int spread_over(const struct run_result *r, uint32_t threads)
{
	char want[64];
	snprintf(want, sizeof(want), "%u channels on the CPU (%u threads)", MULTI, threads);
	return strstr(r->err, want) != NULL;
}

/* MULTI channels spread over threads: the bits of one thread, alone and in a batch. */
static void test_channels_over_threads(const float *clean, const char *conf)
{
	float *x = malloc((size_t)FRAMES * MULTI * sizeof(float));
	CHECK(x);
	uint64_t seed = 0x5eed0005;
	for (uint32_t i = 0; i < FRAMES; i++)
		for (uint32_t c = 0; c < MULTI; c++) /* each channel its own stretch of the speech */
			x[(size_t)i * MULTI + c] =
				clean[(i + c * (FRAMES / MULTI)) % FRAMES] + 0.05f * gf_test_randf(&seed);
	char *in = gf_test_path(dir, "multi.wav"), *in2 = gf_test_path(dir, "multi2.wav");
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, MULTI, FRAMES, x);
	gf_test_write_sound(in2, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, MULTI, FRAMES, x);
	char *one = gf_test_path(dir, "multi_1.wav"), *many = gf_test_path(dir, "multi_n.wav");
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", one, "-c", conf, "--backend", "cpu", "--threads", "1"), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.err, "channels on the CPU (") == NULL);
	const char *threads[] = {"2", "3"};
	for (int t = 0; t < 2; t++) {
		run_gpufir(
			ARGS("-i", in, "-o", many, "-c", conf, "--backend", "cpu", "--threads", threads[t]),
			&r);
		CHECK_RUN(&r, 0, NULL);
		CHECK(spread_over(&r, (uint32_t)atoi(threads[t])) && same_file_audio(one, many));
		printf("%d channels on --threads %s: the bits of --threads 1\n", MULTI, threads[t]);
	}
	char *outdir = gf_test_path(dir, "multi_batch/"), *b1 = gf_test_path(dir, "multi_batch/multi.wav"),
	     *b2 = gf_test_path(dir, "multi_batch/multi2.wav");
	run_gpufir(ARGS("-i", in, "-i", in2, "-o", outdir, "-c", conf, "--backend", "cpu", "--threads", "2",
			"-v"),
		   &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(spread_over(&r, 2) && same_file_audio(one, b1) && same_file_audio(one, b2));
	printf("a batch of two with --threads 2: each file on 2 threads, the bits of --threads 1\n");
	const char *files[] = {b1, b2, in, in2, one, many};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	free(b1);
	free(b2);
	free(outdir);
	free(in);
	free(in2);
	free(one);
	free(many);
	free(x);
}

int main(void)
{
	gpufir_bin();
	dir = gf_test_tmpdir("offline-suppress");
	latency = suppress_latency();
	static float clean[FRAMES];
	speech_like(clean, 0x5eed0001);
	char *conf = gf_test_write_text_in(
		dir, "nr.conf",
		"filters = ( { name = \"nr\"; design = \"suppress\"; reduction_db = 18.0; } );\n"
		"chain = [\"nr\"];\n");
	test_noisy(clean, conf);
	test_clean_default(clean);
	test_threads_and_batch(clean, conf);
	test_channels_over_threads(clean, conf);
	free(conf);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_offline_suppress: ok\n");
	return 0;
}
