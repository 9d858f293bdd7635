/*
 * Offline mode against hostile and unusual input, end to end through the real
 * gpufir program (GPUFIR_BIN). Every case checks the exit code, that the
 * message names the file, that no output (nor temporary file) is left behind
 * on failure, that the input is unchanged, and, where it succeeds, the output
 * against the double reference convolution of what libsndfile decodes.
 *
 *   broken files: empty, header only, truncated WAV (filtered up to where it
 *     ends, with a warning), truncated FLAC (filtered or a clear decode
 *     error), random bytes, text named .wav, a header with a zero rate,
 *     rates outside 8..384 kHz;
 *   sample formats: WAV unsigned 8-bit, 16/24/32-bit int, float, double;
 *   channels 1, 3, 64; rates 8000, 44100, 192000, 384000 with the built-in
 *     default chain (its hiss low-pass left out where it is above 0.45 x the
 *     rate) and an explicit cutoff above Nyquist (a config error);
 *   NaN/Inf samples in a float file (the 1024-frame piece holding them
 *     muted, nothing non-finite out, a warning saying where); one NaN through
 *     the built-in chain's noise suppressor costs only the frames around it;
 *   a backend failure mid-file (GPUFIR_FAULT_PROCESS_AFTER): the CPU
 *     fallback redoes the chunk and the file comes out exact.
 */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "fir_fft.h"
#include "offline.h"
#include "run_prog.h"
#include "sndutil.h"
#include "suppress_bank.h"
#include "testutil.h"

#define TAPS_A 61
#define TAPS_B 23

static char *dir;
static uint64_t rng;
static float taps_a[TAPS_A], taps_b[TAPS_B];

/* ---- files ------------------------------------------------------------------ */

static char *path_in(const char *name)
{
	return gf_test_path(dir, name);
}

static long file_size(const char *path)
{
	struct stat st;
	CHECK(stat(path, &st) == 0);
	return (long)st.st_size;
}

/* Copy the first @p n bytes of @p src into @p dst. */
static void truncate_copy(const char *src, const char *dst, long n)
{
	FILE *f = fopen(src, "rb");
	CHECK(f);
	char *buf = malloc((size_t)n);
	CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	gf_test_write_file(dst, buf, (size_t)n);
	free(buf);
}

/* Write @p frames of noise at @p amp (or exactly @p data if given). */
static void write_sound(const char *path, int format, int rate, uint32_t ch, uint32_t frames, float amp,
			const float *data)
{
	size_t n = (size_t)frames * ch;
	float *x = malloc(n * sizeof(float) + 1);
	CHECK(x);
	for (size_t i = 0; i < n; i++)
		x[i] = data ? data[i] : amp * gf_test_randf(&rng);
	gf_test_write_sound(path, format, rate, ch, frames, x);
	free(x);
}

/* ---- filters ------------------------------------------------------------------ */

/*
 * Mono: chain = ["a"]. More channels: 0 gets a, 1 gets b, the last (from 3
 * channels on) gets a inverted, the others pass through.
 */
static char *write_config(uint32_t ch)
{
	char *a = gf_test_taps_text(taps_a, TAPS_A, ", "), *b = gf_test_taps_text(taps_b, TAPS_B, ", ");
	char inverted[96] = "";
	if (ch > 2)
		snprintf(inverted, sizeof(inverted), ",\n  { channel = %u; chain = [\"a\"]; invert = true; }",
			 ch - 1);
	char *body;
	if (ch == 1)
		CHECK(asprintf(&body,
			       "filters = (\n  { name = \"a\"; coeffs = [ %s ]; },\n"
			       "  { name = \"b\"; coeffs = [ %s ]; }\n);\nchain = [\"a\"];\n",
			       a, b) > 0);
	else
		CHECK(asprintf(&body,
			       "filters = (\n  { name = \"a\"; coeffs = [ %s ]; },\n"
			       "  { name = \"b\"; coeffs = [ %s ]; }\n);\n"
			       "routes = ( { channel = 0; chain = [\"a\"]; },\n"
			       "  { channel = 1; chain = [\"b\"]; }%s );\n",
			       a, b, inverted) > 0);
	char name[32];
	snprintf(name, sizeof(name), "inline%u.conf", ch);
	char *path = path_in(name);
	gf_test_write_text(path, body);
	free(body);
	free(b);
	free(a);
	return path;
}

/* The filters write_config describes, channel-major, TAPS_A long. */
static float *config_filters(uint32_t ch)
{
	float *h = calloc((size_t)ch * TAPS_A, sizeof(float));
	CHECK(h);
	memcpy(h, taps_a, sizeof(taps_a));
	if (ch > 1)
		memcpy(h + TAPS_A, taps_b, sizeof(taps_b));
	for (uint32_t c = 2; c + 1 < ch; c++)
		h[(size_t)c * TAPS_A] = 1.0f;
	if (ch > 2)
		for (uint32_t k = 0; k < TAPS_A; k++)
			h[(size_t)(ch - 1) * TAPS_A + k] = -taps_a[k];
	return h;
}

/* ---- running ------------------------------------------------------------------------ */

/* Run the inline config on IN, expect success, IN unchanged; returns stderr in @p r. */
static void expect_success(const char *in, const char *const args[], struct run_result *r)
{
	uint64_t h0 = gf_test_file_hash(in);
	run_gpufir(args, r);
	CHECK_RUN(r, GF_EXIT_OK, "realtime");
	CHECK(gf_test_file_hash(in) == h0);
	CHECK(gpufir_temp_files(dir) == 0);
}

/* ---- broken files ------------------------------------------------------------------ */

static void test_broken(void)
{
	char *out = path_in("broken_out.wav"), *cfg = write_config(2);

	char *empty = path_in("empty.wav");
	gf_test_write_file(empty, "", 0);
	EXPECT_FAILURE(dir, empty, ARGS("-i", empty, "-o", out, "-c", cfg), out, GF_EXIT_IO, "empty.wav");
	EXPECT_FAILURE(dir, empty, ARGS("-i", empty, "-o", out), out, GF_EXIT_IO,
		       "empty.wav"); /* default chain */

	char *text = path_in("notes.wav");
	gf_test_write_text(text, "These are my notes about the mix, not audio.\n");
	EXPECT_FAILURE(dir, text, ARGS("-i", text, "-o", out, "-c", cfg), out, GF_EXIT_IO, "notes.wav");

	char *junk = path_in("junk.wav");
	unsigned char bytes[8192];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(gf_test_randf(&rng) * 128.0f + 128.0f);
	gf_test_write_file(junk, bytes, sizeof(bytes));
	EXPECT_FAILURE(dir, junk, ARGS("-i", junk, "-o", out, "-c", cfg), out, GF_EXIT_IO, "junk.wav");

	/* RIFF junk after a valid header start: "RIFF....WAVE" then noise. */
	memcpy(bytes, "RIFF\x00\x20\x00\x00WAVEfmt ", 16);
	char *riff = path_in("riff-junk.wav");
	gf_test_write_file(riff, bytes, sizeof(bytes));
	EXPECT_FAILURE(dir, riff, ARGS("-i", riff, "-o", out, "-c", cfg), out, GF_EXIT_IO, "riff-junk.wav");

	/* A stereo 16-bit header whose data chunk promises 1 s and holds nothing. */
	char *full = path_in("full.wav");
	write_sound(full, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, 48000, 0.5f, NULL);
	char *hdr = path_in("header-only.wav");
	truncate_copy(full, hdr, 44);
	EXPECT_FAILURE(dir, hdr, ARGS("-i", hdr, "-o", out, "-c", cfg), out, GF_EXIT_IO, "header-only.wav");

	/* A header with a sample rate of 0 Hz. */
	char *zero = path_in("zero-rate.wav");
	unsigned char h44[44];
	FILE *f = fopen(full, "rb");
	CHECK(f && fread(h44, 1, 44, f) == 44);
	fclose(f);
	memset(h44 + 24, 0, 8); /* sample rate and byte rate */
	gf_test_write_file(zero, h44, 44);
	EXPECT_FAILURE(dir, zero, ARGS("-i", zero, "-o", out, "-c", cfg), out, GF_EXIT_IO, "zero-rate.wav");

	/* Rates gpufir does not filter at: a clear error naming the file, not a config error. */
	static const int bad_rates[] = {4000, 768000};
	for (size_t i = 0; i < 2; i++) {
		char name[32];
		snprintf(name, sizeof(name), "rate%d.wav", bad_rates[i]);
		char *p = path_in(name);
		write_sound(p, SF_FORMAT_WAV | SF_FORMAT_PCM_16, bad_rates[i], 1, 2000, 0.5f, NULL);
		EXPECT_FAILURE(dir, p, ARGS("-i", p, "-o", out), out, GF_EXIT_IO, name);
		EXPECT_FAILURE(dir, p, ARGS("-i", p, "-o", out), out, GF_EXIT_IO, "not supported");
		free(p);
	}
	free(zero);
	free(hdr);
	free(full);
	free(riff);
	free(junk);
	free(text);
	free(empty);
	free(cfg);
	free(out);
}

/*
 * A WAV cut short (mid-frame) by an interrupted copy: libsndfile reads the
 * whole frames that are there; gpufir filters them, warns, and the output
 * is exact for what was read. A FLAC cut short either decodes to where it
 * ends (same check) or fails with a decode error naming the file.
 */
static void test_truncated(void)
{
	const uint32_t ch = 2, frames = 100000;
	float *h = config_filters(ch);
	char *cfg = write_config(ch), *out = path_in("trunc_out.wav");

	char *full = path_in("long24.wav"), *cut = path_in("cut24.wav");
	write_sound(full, SF_FORMAT_WAV | SF_FORMAT_PCM_24, 48000, ch, frames, 0.9f, NULL);
	long keep = 44 + 3 * 2 * 70001 + 4; /* 70001 frames and a half */
	truncate_copy(full, cut, keep);
	SF_INFO info;
	float *x = gf_test_read_sound(cut, &info, 0);
	CHECK(info.frames == 70001);
	struct run_result r;
	expect_success(cut, ARGS("-i", cut, "-o", out, "-c", cfg), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "cut24.wav: the file ends before its header says");
	gf_test_check_output(out, SF_FORMAT_WAV | SF_FORMAT_PCM_24, 48000, x, 70001, 70001, ch, h, TAPS_A,
			     "truncated WAV");
	unlink(out);
	free(x);

	char *flac = path_in("long.flac"), *cflac = path_in("cut.flac"), *oflac = path_in("cut_out.flac");
	write_sound(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 48000, ch, frames, 0.9f, NULL);
	truncate_copy(flac, cflac, file_size(flac) / 2);
	uint64_t h0 = gf_test_file_hash(cflac);
	run_gpufir(ARGS("-i", cflac, "-o", oflac, "-c", cfg), &r);
	CHECK(gf_test_file_hash(cflac) == h0 && gpufir_temp_files(dir) == 0);
	if (r.exit_code == GF_EXIT_OK) {
		x = gf_test_read_sound(cflac, &info, 0);
		gf_test_check_output(oflac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 48000, x,
				     (uint32_t)info.frames, (uint32_t)info.frames, ch, h, TAPS_A,
				     "truncated FLAC");
		free(x);
	} else {
		CHECK_RUN(&r, GF_EXIT_IO, "cut.flac: cannot decode");
		CHECK(!gf_test_exists(oflac));
		const char *msg = strstr(r.err, "cut.flac");
		fprintf(stderr, "  truncated FLAC: refused (%.*s)\n", (int)strcspn(msg, "\n"), msg);
	}
	unlink(oflac);
	free(oflac);
	free(cflac);
	free(flac);
	free(cut);
	free(full);
	free(out);
	free(cfg);
	free(h);
}

/* ---- formats, channels, rates ------------------------------------------------------ */

static void run_and_check(const char *tag, int format, int rate, uint32_t ch, uint32_t frames)
{
	char name[64];
	snprintf(name, sizeof(name), "%s.wav", tag);
	char *in = path_in(name);
	snprintf(name, sizeof(name), "%s_out.wav", tag);
	char *out = path_in(name), *cfg = write_config(ch);
	float *h = config_filters(ch);
	write_sound(in, format, rate, ch, frames, 0.9f, NULL);
	SF_INFO info;
	float *x = gf_test_read_sound(in, &info, 1);
	struct run_result r;
	expect_success(in, ARGS("-i", in, "-o", out, "-c", cfg, "--backend", "cpu"), &r);
	gf_test_check_output(out, format, rate, x, frames, frames, ch, h, TAPS_A, tag);
	unlink(out);
	unlink(in);
	free(x);
	free(h);
	free(cfg);
	free(out);
	free(in);
}

static void test_formats_channels(void)
{
	static const struct {
		const char *tag;
		int subtype;
	} fmts[] = {
		{"u8", SF_FORMAT_PCM_U8},    {"int16", SF_FORMAT_PCM_16}, {"int24", SF_FORMAT_PCM_24},
		{"int32", SF_FORMAT_PCM_32}, {"float", SF_FORMAT_FLOAT},  {"double", SF_FORMAT_DOUBLE},
	};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		run_and_check(fmts[i].tag, SF_FORMAT_WAV | fmts[i].subtype, 48000, 2, 70001);
	run_and_check("mono", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 30011);
	run_and_check("three", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 96000, 3, 66000);
	/* 64 channels: chunks get shorter (8 MiB each); 34000 frames cross one. */
	run_and_check("sixty-four", SF_FORMAT_WAVEX | SF_FORMAT_FLOAT, 48000, 64, 34000);
}

/*
 * The default chain's reference, --causal: the filter set's FIR in double
 * (FFT convolution of the whole input), then the chain's noise suppressor on
 * it in float, as gpufir runs it. Compared where the FIR is past its
 * pre-ringing and the suppressor past its latency: float rounding feeds the
 * suppressor's gains, hence 1e-5 rather than check_steady's 1e-6.
 */
static void check_default(const char *out, int rate, const float *x, uint32_t frames,
			  const struct gf_config *c, const struct gf_filter_set *fs, const char *what)
{
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.frames == (sf_count_t)frames && info.channels == 1 && info.samplerate == rate);
	double *xd = malloc(frames * sizeof(double)), *h = malloc(fs->taps * sizeof(double));
	double *full = malloc(((size_t)frames + fs->taps - 1) * sizeof(double));
	float *ref = malloc(frames * sizeof(float));
	CHECK(xd && h && full && ref);
	for (uint32_t i = 0; i < frames; i++)
		xd[i] = x[i];
	for (uint32_t k = 0; k < fs->taps; k++)
		h[k] = fs->coeffs[k];
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_fir_convolve_fft(xd, frames, h, fs->taps, full, &eb), &eb);
	for (uint32_t i = 0; i < frames; i++)
		ref[i] = (float)full[i];
	struct gf_suppress_bank *bank;
	CHECK_OK_EB(gf_config_suppress_new(c, (uint32_t)rate, 1, &bank, &eb), &eb);
	CHECK(bank); /* the default ends in its suppressor */
	uint32_t lag = gf_suppress_bank_latency(bank);
	gf_suppress_bank_process(bank, ref, frames);
	double e = 0.0, sum = 0.0;
	for (uint32_t n = fs->taps - 1 + lag; n < frames; n++) {
		CHECK(isfinite(y[n]));
		e += ((double)y[n] - ref[n]) * ((double)y[n] - ref[n]);
		sum += (double)ref[n] * ref[n];
	}
	fprintf(stderr, "  %s: rel L2 %.3g (after the first %u frames; suppressor latency %u)\n", what,
		sqrt(e / sum), fs->taps - 1 + lag, lag);
	CHECK(sum > 0.0 && sqrt(e / sum) < 1e-5);
	gf_suppress_bank_free(bank);
	free(y);
	free(xd);
	free(h);
	free(full);
	free(ref);
}

/*
 * The built-in default chain at 8, 44.1, 192 and 384 kHz: it must work at
 * every rate (at 8 kHz without its 14 kHz hiss low-pass, which it says), and
 * the output is the default filter built at that rate, applied exactly, then
 * its noise suppressor.
 */
static void test_default_rates(void)
{
	static const int rates[] = {8000, 44100, 192000, 384000};
	for (size_t i = 0; i < 4; i++) {
		int rate = rates[i];
		struct gf_config *c;
		struct gf_filter_set *fs;
		struct gf_errbuf eb = {{0}};
		CHECK_OK(gf_config_default(&c));
		CHECK_OK_EB(gf_config_build(c, (uint32_t)rate, 1, &fs, &eb), &eb);
		char name[64];
		snprintf(name, sizeof(name), "default%d.wav", rate);
		char *in = path_in(name);
		snprintf(name, sizeof(name), "default%d_out.wav", rate);
		char *out = path_in(name);
		const uint32_t frames = fs->taps - 1 + 8192 + (uint32_t)rate / 10;
		write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, rate, 1, frames, 0.5f, NULL);
		SF_INFO info;
		float *x = gf_test_read_sound(in, &info, 1);
		struct run_result r;
		expect_success(in, ARGS("-i", in, "-o", out, "--causal"), &r);
		int left_out = strstr(r.err, "hiss low-pass at 14000 Hz is left out") != NULL;
		CHECK(left_out == (14000.0 >= 0.45 * rate));
		snprintf(name, sizeof(name), "default chain at %d Hz (%u taps)", rate, fs->taps);
		check_default(out, rate, x, frames, c, fs, name);
		gf_filter_set_free(fs);
		gf_config_free(c);
		unlink(out);
		unlink(in);
		free(x);
		free(out);
		free(in);
	}
	/* The same low-pass in the user's own config is an error naming the setting. */
	char *in = path_in("user8k.wav"), *out = path_in("user8k_out.wav"), *cfg = path_in("hiss.conf");
	write_sound(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 8000, 1, 8000, 0.5f, NULL);
	gf_test_write_text(cfg,
			   "# my hiss filter\nfilters = (\n  { name = \"hiss\"; design = \"lowpass\";\n"
			   "    cutoff_hz = 14000.0; transition_hz = 2000.0; }\n);\nchain = [\"hiss\"];\n");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", out, "-c", cfg), out, GF_EXIT_CONFIG,
		       "hiss.conf:4: filters.hiss.cutoff_hz: 14000 Hz is not below half the sample rate");
	free(cfg);
	free(out);
	free(in);
}

/* ---- hostile samples ------------------------------------------------------------------ */

/*
 * NaN and Inf samples in a float file: the piece of GF_OFFLINE_MUTE_FRAMES
 * holding them is muted (not the 65536-frame chunk: 1.37 s at 48 kHz), the
 * rest is exact (the bad samples count as zero in the filter's memory),
 * nothing non-finite reaches the output, and a warning says the input had
 * them: how many, where, and what was muted.
 */
static void test_nonfinite(void)
{
	const uint32_t chunk = GF_OFFLINE_CHUNK_FRAMES, piece = GF_OFFLINE_MUTE_FRAMES;
	const uint32_t frames = 3 * chunk + 1000, bad = chunk + 500;
	float *x = malloc((size_t)frames * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		x[i] = 0.5f * gf_test_randf(&rng);
	x[bad] = NAN;
	x[bad + 7] = INFINITY;
	char *in = path_in("nan.wav"), *out = path_in("nan_out.wav"), *cfg = write_config(1);
	write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, frames, 0.0f, x);
	struct run_result r;
	expect_success(in, ARGS("-i", in, "-o", out, "-c", cfg), &r);
	CHECK_RUN(&r, GF_EXIT_OK,
		  "the input has 2 NaN/Inf samples (the first at frame 66036, 1.376 s, channel 0)");
	CHECK(strstr(r.err, "1 piece of 1024 frames holding them muted") &&
	      !strstr(r.err, "filter produced"));
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.frames == frames);
	x[bad] = x[bad + 7] = 0.0f;
	double *ref = malloc((size_t)frames * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, 1, taps_a, TAPS_A, ref);
	uint32_t m0 = bad / piece * piece, m1 = m0 + piece, zeros = 0;
	double e = 0.0, s = 0.0;
	for (uint32_t i = 0; i < frames; i++) {
		CHECK(isfinite(y[i]));
		if (i >= m0 && i < m1) {
			zeros += y[i] == 0.0f;
			continue;
		}
		e += (ref[i] - y[i]) * (ref[i] - y[i]);
		s += (double)y[i] * y[i];
	}
	fprintf(stderr, "  NaN/Inf input: frames %u..%u muted (%u zero), the others rel L2 %.3g\n", m0, m1,
		zeros, sqrt(e / s));
	CHECK(zeros == piece);
	CHECK(sqrt(e / s) < 1e-6);
	free(ref);
	free(y);
	free(x);
	free(cfg);
	free(out);
	free(in);
}

/* The RMS of @p y over frames [@p from, @p to). */
static double rms(const float *y, uint32_t from, uint32_t to)
{
	double s = 0.0;
	for (uint32_t i = from; i < to; i++)
		s += (double)y[i] * y[i];
	return sqrt(s / (to - from));
}

/*
 * One NaN at 1.0 s of a 10 s noise through the built-in chain (its FIR, then
 * its noise suppressor): the muted piece was silence to the suppressor, whose
 * noise estimate fell to it, and suppression was lost for the rest of the file
 * (RMS 0.054 against 0.0126; 479,995 of 480,000 frames changed). Now the
 * suppressor holds its state over the gap: before it the output is the
 * NaN-free run's, after it within a few percent of it, as suppressed, and
 * from 4 s on the same again (measured: 1.1e-6; about 2 s of frames change).
 */
static void test_nonfinite_suppressor(void)
{
	const uint32_t rate = 48000, frames = 10 * rate, bad = rate;
	float *x = malloc((size_t)frames * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		x[i] = 0.1f * gf_test_randf(&rng);
	char *in = path_in("sup.wav"), *out = path_in("sup_out.wav");
	char *in_nan = path_in("sup_nan.wav"), *out_nan = path_in("sup_nan_out.wav");
	write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, (int)rate, 1, frames, 0.0f, x);
	x[bad] = NAN;
	write_sound(in_nan, SF_FORMAT_WAV | SF_FORMAT_FLOAT, (int)rate, 1, frames, 0.0f, x);
	struct run_result r;
	expect_success(in, ARGS("-i", in, "-o", out, "--causal"), &r);
	expect_success(in_nan, ARGS("-i", in_nan, "-o", out_nan, "--causal"), &r);
	CHECK_RUN(&r, GF_EXIT_OK,
		  "the input has 1 NaN/Inf sample (the first at frame 48000, 1.000 s, channel 0)");
	CHECK(!strstr(r.err, "filter produced"));
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1), *z = gf_test_read_sound(out_nan, &info, 1);
	CHECK(info.frames == frames);
	uint32_t m0 = bad / GF_OFFLINE_MUTE_FRAMES * GF_OFFLINE_MUTE_FRAMES, after = bad + rate / 10,
		 changed = 0;
	double e0 = 0.0, s0 = 0.0, e1 = 0.0, s1 = 0.0, e2 = 0.0, s2 = 0.0;
	for (uint32_t i = 0; i < frames; i++) {
		double d = (double)z[i] - y[i];
		CHECK(isfinite(z[i]));
		changed += fabs(d) > 1e-6;
		if (i < m0)
			e0 += d * d, s0 += (double)y[i] * y[i];
		else if (i >= after)
			e1 += d * d, s1 += (double)y[i] * y[i];
		if (i >= 4 * rate)
			e2 += d * d, s2 += (double)y[i] * y[i];
	}
	double in_rms = rms(x, 0, bad), y_rms = rms(y, after, frames), z_rms = rms(z, after, frames);
	fprintf(stderr,
		"  NaN at 1.0 s through the default chain: %u of %u frames changed; before it rel L2 %.3g, "
		"from 1.1 s on %.3g, from 4 s on %.3g; RMS in %.4f, out %.4f (NaN-free %.4f)\n",
		changed, frames, sqrt(e0 / s0), sqrt(e1 / s1), sqrt(e2 / s2), in_rms, z_rms, y_rms);
	CHECK(sqrt(e0 / s0) < 1e-5);
	CHECK(sqrt(e1 / s1) < 0.03);
	CHECK(sqrt(e2 / s2) < 1e-4 && changed < 3 * rate); /* back to the NaN-free output */
	CHECK(fabs(20 * log10(z_rms / y_rms)) < 0.2 && z_rms < 0.5 * in_rms);
	free(z);
	free(y);
	free(x);
	free(out_nan);
	free(in_nan);
	free(out);
	free(in);
}

/* ---- a backend failure mid-file ------------------------------------------------------ */

/*
 * GPUFIR_FAULT_PROCESS_AFTER=N fails the engine's N+1-th backend call (a GPU
 * lost): offline falls back to the CPU, redoes that chunk, logs it, and the
 * file is the same as without the fault: chunk 2 of 3, the first chunk, and
 * the --tail chunk.
 */
static void test_fault(void)
{
	const uint32_t ch = 2, frames = 2 * GF_OFFLINE_CHUNK_FRAMES + 4321;
	float *h = config_filters(ch);
	char *in = path_in("fault.wav"), *out = path_in("fault_out.wav"), *cfg = write_config(ch);
	write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, ch, frames, 0.9f, NULL);
	SF_INFO info;
	float *x = gf_test_read_sound(in, &info, 1);
	static const char *const after[] = {"1", "0", "3"};
	for (size_t i = 0; i < 3; i++) {
		int tail = i == 2;
		CHECK(setenv("GPUFIR_FAULT_PROCESS_AFTER", after[i], 1) == 0);
		struct run_result r;
		if (tail)
			/* One engine: on stripes each engine counts its own calls, and none makes 4. */
			expect_success(in, ARGS("-i", in, "-o", out, "-c", cfg, "--tail", "--threads", "1"),
				       &r);
		else
			expect_success(in, ARGS("-i", in, "-o", out, "-c", cfg), &r);
		CHECK(unsetenv("GPUFIR_FAULT_PROCESS_AFTER") == 0);
		CHECK_RUN(&r, GF_EXIT_OK, "backend failed (CUDA error): continuing on the CPU backend");
		CHECK(strstr(r.err, "cpu/"));
		char what[64];
		snprintf(what, sizeof(what), "fault at backend call %d%s", atoi(after[i]) + 1,
			 tail ? " (tail)" : "");
		gf_test_check_output(out, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, x, frames,
				     frames + (tail ? TAPS_A - 1 : 0), ch, h, TAPS_A, what);
		unlink(out);
	}
	free(x);
	free(cfg);
	free(out);
	free(in);
	free(h);
}

int main(void)
{
	gpufir_bin();
	gf_log_set_level(GF_LOG_WARN); /* the config built here for reference: no info lines */
	rng = gf_test_seed("test_hostile_files");
	dir = gf_test_tmpdir("hostile");
	gf_test_fill_bounded_taps(taps_a, TAPS_A, 0.9, &rng);
	gf_test_fill_bounded_taps(taps_b, TAPS_B, 0.9, &rng);

	test_broken();
	test_truncated();
	test_formats_channels();
	test_default_rates();
	test_nonfinite();
	test_nonfinite_suppressor();
	test_fault();

	gf_test_rmtree(dir);
	free(dir);
	printf("test_hostile_files: OK\n");
	return 0;
}
