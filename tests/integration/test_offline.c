/*
 * Offline mode, end to end: the real gpufir program (GPUFIR_BIN) filters
 * random files written with libsndfile (int16, int24 and float WAV, FLAC;
 * 1, 2 and 6 channels; lengths that are not a multiple of the chunk), and
 * the output is compared with the double-precision reference convolution of
 * the decoded input: rel L2 < 1e-6 for float output, within 1 LSB of the
 * quantized reference for integer output. Then --tail, --format, clipping,
 * every error path (exit code, message, no output left behind, input bytes
 * unchanged), SIGINT/SIGTERM, --check-config, and the bundled sample.
 */
#define _GNU_SOURCE /* asprintf, strsignal */
#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <signal.h>
#include <sndfile.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define TAPS_A 97 /* text-file FIR (channel 0, and the mono chain) */
#define TAPS_B 31 /* inline FIR (channel 1) */

static char *dir;    /* scratch directory of this run */
static uint64_t rng; /* test random state (seeded, printed) */
static float taps_a[TAPS_A], taps_b[TAPS_B];

/* ---- files ---------------------------------------------------------------- */

static char *path_in(const char *name)
{
	return gf_test_path(dir, name);
}

/*
 * A config whose filters the test knows exactly: "a" from a text file
 * (relative path), "b" inline. Mono: chain = ["a"]. More channels: channel 0
 * gets a, channel 1 gets b, the others pass through.
 */
static char *write_config(const char *name, uint32_t channels)
{
	char *tpath = path_in("taps_a.txt");
	char *text = gf_test_taps_text(taps_a, TAPS_A, "\n");
	gf_test_write_text(tpath, text);
	free(text);
	char *inl = gf_test_taps_text(taps_b, TAPS_B, ", ");
	char *body;
	CHECK(asprintf(&body,
		       "# test configuration\n"
		       "filters = (\n"
		       "  { name = \"a\"; file = \"taps_a.txt\"; format = \"text\"; },\n"
		       "  { name = \"b\"; coeffs = [ %s ]; }\n"
		       ");\n%s",
		       inl,
		       channels == 1 ? "chain = [\"a\"];\n"
				     : "routes = ( { channel = 0; chain = [\"a\"]; },\n"
				       "           { channel = 1; chain = [\"b\"]; } );\n") > 0);
	char *cpath = path_in(name);
	gf_test_write_text(cpath, body);
	free(body);
	free(inl);
	free(tpath);
	return cpath;
}

/* The per-channel FIRs write_config describes, channel-major, @p *taps long. */
static float *expected_filters(uint32_t channels, uint32_t *taps)
{
	*taps = TAPS_A;
	float *h = calloc((size_t)channels * TAPS_A, sizeof(float));
	CHECK(h);
	memcpy(h, taps_a, sizeof(taps_a));
	if (channels > 1)
		memcpy(h + TAPS_A, taps_b, sizeof(taps_b));
	for (uint32_t c = 2; c < channels; c++)
		h[(size_t)c * TAPS_A] = 1.0f;
	return h;
}

/* Write @p frames of uniform noise at @p amp; return the samples as libsndfile decodes them. */
static float *make_input(const char *path, int format, uint32_t channels, uint32_t frames, float amp)
{
	size_t n = (size_t)frames * channels;
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	for (size_t i = 0; i < n; i++)
		x[i] = amp * gf_test_randf(&rng);
	gf_test_write_sound(path, format, RATE, channels, frames, x);
	free(x);
	/* Read back: the reference filters what gpufir reads, not what we meant. */
	SF_INFO ri;
	x = gf_test_read_sound(path, &ri, 1);
	CHECK(ri.frames == (sf_count_t)frames && ri.channels == (int)channels);
	return x;
}

/*
 * Check OUT against the reference of the decoded input @p x through the
 * filters of write_config: format, length (frames, plus taps-1 with --tail)
 * and samples.
 */
static void check_output(const char *out, int want_format, const float *x, uint32_t frames, uint32_t channels,
			 int tail, const char *what)
{
	uint32_t taps;
	float *h = expected_filters(channels, &taps);
	gf_test_check_output(out, want_format, RATE, x, frames, frames + (tail ? taps - 1 : 0), channels, h,
			     taps, what);
	free(h);
}

/* ---- correct output ------------------------------------------------------- */

struct format_case {
	const char *name;
	int format;
	uint32_t channels, frames;
};

static void test_formats(void)
{
	/* 65536 frames a chunk: every length below crosses a chunk edge off the grid. */
	static const struct format_case cases[] = {
		{"int16 mono WAV", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 100003},
		{"int24 stereo WAV", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 2, 70001},
		{"float 6-channel WAV", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 6, 65537},
		{"int16 stereo FLAC", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 2, 131071},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct format_case *c = &cases[i];
		const char *ext = (c->format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC ? "flac" : "wav";
		char name[64];
		snprintf(name, sizeof(name), "in%zu.%s", i, ext);
		char *in = path_in(name);
		snprintf(name, sizeof(name), "out%zu.%s", i, ext);
		char *out = path_in(name);
		char *cfg = write_config("formats.conf", c->channels);
		float *x = make_input(in, c->format, c->channels, c->frames, 0.99f);
		uint64_t h0 = gf_test_file_hash(in);
		struct run_result r;
		run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "--backend", "cpu"), &r);
		CHECK_RUN(&r, GF_EXIT_OK, "realtime");
		CHECK(gf_test_file_hash(in) == h0);
		check_output(out, c->format, x, c->frames, c->channels, 0, c->name);
		free(x);
		free(cfg);
		free(in);
		free(out);
	}
	CHECK(gpufir_temp_files(dir) == 0);
}

/* --tail (taps-1 more frames), --format, a container chosen by extension, algo choice. */
static void test_tail_and_format(void)
{
	char *in = path_in("t.wav"), *out = path_in("t_out.wav"), *cfg = write_config("t.conf", 2);
	const uint32_t frames = 66001;
	float *x = make_input(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 2, frames, 0.9f);
	struct run_result r;

	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "--tail", "--format", "FLOAT"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	check_output(out, SF_FORMAT_WAV | SF_FORMAT_FLOAT, x, frames, 2, 1, "--tail --format FLOAT");

	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "-t", "-f", "pcm_24", "--algo", "direct", "--backend",
			"cpu"),
		   &r);
	CHECK_RUN(&r, GF_EXIT_OK, "cpu/direct");
	check_output(out, SF_FORMAT_WAV | SF_FORMAT_PCM_24, x, frames, 2, 1, "--tail PCM_24 direct");

	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "--format", "DOUBLE", "--algo", "fft"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "/fft");
	check_output(out, SF_FORMAT_WAV | SF_FORMAT_DOUBLE, x, frames, 2, 0, "--format DOUBLE fft");

	/* The output's extension picks the container; the sample format stays. */
	char *flac = path_in("t_out.flac");
	run_gpufir(ARGS("-i", in, "-o", flac, "-c", cfg, "--quiet"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(r.err[0] == '\0'); /* --quiet: no summary */
	check_output(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, x, frames, 2, 0, "WAV in, .flac out");

	/* A format the container cannot hold is a usage error, and nothing is written. */
	char *bad = path_in("t_bad.wav");
	run_gpufir(ARGS("-i", in, "-o", bad, "-c", cfg, "--format", "VORBIS"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "cannot hold VORBIS");
	CHECK(!gf_test_exists(bad) && gpufir_temp_files(dir) == 0);
	free(bad);
	free(flac);
	free(x);
	free(in);
	free(out);
	free(cfg);
}

/* Samples beyond full scale are clipped by integer formats and counted exactly. */
static void test_clipping(void)
{
	char *in = path_in("clip.wav"), *out = path_in("clip_out.wav"), *cfg = path_in("gain.conf");
	gf_test_write_text(cfg, "filters = ( { name = \"x2\"; coeffs = [ 2.0 ]; } );\nchain = [\"x2\"];\n");
	const uint32_t frames = 20000;
	float *x = make_input(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, frames, 0.9f);
	unsigned long expect = 0;
	float peak = 0.0f;
	for (uint32_t i = 0; i < frames; i++) {
		expect += fabsf(2.0f * x[i]) > 1.0f;
		peak = fmaxf(peak, fabsf(2.0f * x[i]));
	}
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg), &r);
	char msg[128];
	snprintf(msg, sizeof(msg), "%lu samples clipped (peak %+.2f dBFS)", expect, 20.0 * log10(peak));
	CHECK_RUN(&r, GF_EXIT_OK, msg);
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	for (uint32_t i = 0; i < frames; i++) {
		long want = gf_test_quantize(2.0 * x[i], 16);
		CHECK(lrint(ldexp(y[i], 15)) == want); /* clipped, not wrapped around */
	}
	/* Float output keeps the overs, and says so. */
	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "--format", "FLOAT"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "above full scale");
	CHECK(!strstr(r.err, "clipped"));
	free(y);
	free(x);
	free(in);
	free(out);
	free(cfg);
}

/*
 * A config whose sample_rate differs from the file's: designed filters follow
 * the file (with a warning); a WAV impulse response at another rate is an error.
 */
static void test_rates(void)
{
	char *in = path_in("r.wav"), *out = path_in("r_out.wav"), *cfg = path_in("rate.conf");
	float *x = make_input(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 1, 4000, 0.5f);
	free(x);
	gf_test_write_text(cfg, "sample_rate = 44100;\nfilters = ( { name = \"lp\"; design = \"lowpass\";\n"
				"  cutoff_hz = 8000.0; taps = 63; } );\nchain = [\"lp\"];\n");
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "sample_rate = 44100 Hz but");
	CHECK(strstr(r.err, "designing the filters at 48000 Hz"));

	char *ir = path_in("ir44k.wav");
	gf_test_write_sound(ir, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, TAPS_A, taps_a);
	gf_test_write_text(cfg,
			   "filters = ( { name = \"ir\"; file = \"ir44k.wav\"; } );\nchain = [\"ir\"];\n");
	unlink(out);
	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg), &r);
	CHECK_RUN(&r, GF_EXIT_CONFIG, "44100");
	CHECK(strstr(r.err, "48000") && !gf_test_exists(out));
	free(ir);
	free(in);
	free(out);
	free(cfg);
}

/* ---- errors --------------------------------------------------------------- */

static void test_input_errors(void)
{
	char *out = path_in("e_out.wav"), *cfg = write_config("e.conf", 1);
	char *missing = path_in("no-such-file.wav");
	EXPECT_FAILURE(dir, NULL, ARGS("-i", missing, "-o", out, "-c", cfg), out, GF_EXIT_IO,
		       "no-such-file.wav");
	EXPECT_FAILURE(dir, NULL, ARGS("-i", missing, "-o", out), out, GF_EXIT_IO, "No such file");

	/* Random bytes with a .wav name. */
	char *junk = path_in("junk.wav");
	unsigned char bytes[4096];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(gf_test_randf(&rng) * 128.0f + 128.0f);
	gf_test_write_file(junk, bytes, sizeof(bytes));
	EXPECT_FAILURE(dir, junk, ARGS("-i", junk, "-o", out, "-c", cfg), out, GF_EXIT_IO, "junk.wav");

	/* A WAV header promising 96000 bytes of data, and no data. */
	static const unsigned char header[44] = {
		'R',  'I',  'F', 'F', 0x24, 0x77, 0x01, 0x00, 'W', 'A',	 'V',  'E',  'f',  'm',	 't',
		' ',  16,   0,	 0,   0,    1,	  0,	1,    0,   0x80, 0xbb, 0,    0,	   0x00, 0x77,
		0x01, 0x00, 2,	 0,   16,   0,	  'd',	'a',  't', 'a',	 0x00, 0x77, 0x01, 0x00,
	};
	char *hdr = path_in("header-only.wav");
	gf_test_write_file(hdr, header, sizeof(header));
	EXPECT_FAILURE(dir, hdr, ARGS("-i", hdr, "-o", out, "-c", cfg), out, GF_EXIT_IO, "header-only.wav");

	/* A directory as input. */
	EXPECT_FAILURE(dir, NULL, ARGS("-i", dir, "-o", out), out, GF_EXIT_IO, dir);
	free(hdr);
	free(junk);
	free(missing);
	free(cfg);
	free(out);
}

static void test_output_errors(void)
{
	char *in = path_in("o_in.wav"), *cfg = write_config("o.conf", 1);
	float *x = make_input(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 5000, 0.5f);
	free(x);
	uint64_t h0 = gf_test_file_hash(in);

	/* OUT == IN: by name, by another spelling, through a hard link. */
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", in, "-c", cfg), NULL, GF_EXIT_USAGE,
		       "is the input file");
	char *dotted;
	CHECK(asprintf(&dotted, "%s/./o_in.wav", dir) > 0);
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", dotted), NULL, GF_EXIT_USAGE, "is the input file");
	char *lnk = path_in("o_link.wav");
	CHECK(link(in, lnk) == 0);
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", lnk), NULL, GF_EXIT_USAGE, "is the input file");
	unlink(lnk);

	/* Output directory missing, or not writable. */
	char *nodir = path_in("no-such-dir/out.wav");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", nodir, "-c", cfg), nodir, GF_EXIT_IO, "no-such-dir");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", "/proc/gpufir-test-out.wav"), NULL, GF_EXIT_IO,
		       "cannot create the output in directory /proc");
	if (geteuid() != 0) { /* root writes anywhere */
		char *ro = path_in("readonly");
		CHECK(mkdir(ro, 0555) == 0);
		char *ro_out = path_in("readonly/out.wav");
		EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", ro_out), ro_out, GF_EXIT_IO,
			       "Permission denied");
		CHECK(rmdir(ro) == 0);
		free(ro_out);
		free(ro);
	}
	/* OUT is a directory, or standard output. */
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", dir), NULL, GF_EXIT_IO, "is a directory");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", "-"), "-", GF_EXIT_USAGE, "standard output");

	/* Bad configurations: syntax (file:line), a missing taps file, an unknown key type. */
	char *out = path_in("o_out.wav"), *bad = path_in("bad.conf");
	gf_test_write_text(bad, "filters = (\n  { name = \"a\"; coeffs = [ 0.5, ]; }\n);\nchain = [\"a\"]\n");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", out, "-c", bad), out, GF_EXIT_CONFIG, "bad.conf:");
	gf_test_write_text(
		bad, "filters = ( { name = \"a\"; file = \"missing-taps.txt\"; } );\nchain = [\"a\"];\n");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", out, "-c", bad), out, GF_EXIT_CONFIG,
		       "missing-taps.txt");
	gf_test_write_text(bad, "filters = ( { name = \"a\"; coeffs = [ 1.0 ]; } );\nchain = [\"nope\"];\n");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", out, "-c", bad), out, GF_EXIT_CONFIG, "nope");
	char *nocfg = path_in("no-such.conf");
	EXPECT_FAILURE(dir, in, ARGS("-i", in, "-o", out, "-c", nocfg), out, GF_EXIT_CONFIG, "no-such.conf");
	/* --backend cuda in a build or machine without a GPU: a processing error, said plainly. */
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", cfg, "--backend", "cuda"), &r);
	if (r.exit_code != GF_EXIT_OK) {
		CHECK_RUN(&r, GF_EXIT_PROCESS, "CUDA");
		CHECK(!gf_test_exists(out));
	}
	CHECK(gpufir_temp_files(dir) == 0);
	CHECK(gf_test_file_hash(in) == h0);
	unlink(out);
	free(nocfg);
	free(bad);
	free(out);
	free(nodir);
	free(lnk);
	free(dotted);
	free(cfg);
	free(in);
}

/* ---- signals -------------------------------------------------------------- */

/*
 * SIGINT/SIGTERM while filtering: exit 130, the temporary file removed, an
 * existing OUT untouched. A long direct-form filter keeps the run busy for
 * many seconds, so the signal always lands mid-file.
 */
static void test_signals(void)
{
	char *in = path_in("long.wav"), *out = path_in("long_out.wav"), *cfg = path_in("long.conf");
	char *tpath = path_in("long_taps.txt");
	static float h[32768]; /* 60 s x 32768 taps: seconds of work even for a fast direct form */
	gf_test_fill_decaying_taps(h, 32768, &rng);
	char *text = gf_test_taps_text(h, 32768, "\n");
	gf_test_write_text(tpath, text);
	free(text);
	gf_test_write_text(
		cfg, "filters = ( { name = \"long\"; file = \"long_taps.txt\"; } );\nchain = [\"long\"];\n");
	float *x = make_input(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1, 60 * RATE, 0.5f);
	free(x);
	static const char precious[] = "an older result the user wants to keep";
	static const int sigs[] = {SIGINT, SIGTERM};
	for (size_t i = 0; i < 2; i++) {
		gf_test_write_text(out, precious);
		uint64_t h_out = gf_test_file_hash(out), h_in = gf_test_file_hash(in);
		char o_path[4096], e_path[4096];
		snprintf(o_path, sizeof(o_path), "%s/sig.out", dir);
		snprintf(e_path, sizeof(e_path), "%s/sig.err", dir);
		pid_t pid = spawn_gpufir(
			ARGS("-i", in, "-o", out, "-c", cfg, "--backend", "cpu", "--algo", "direct"), o_path,
			e_path);
		gpufir_wait_for_temp_file(dir, pid);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK(kill(pid, sigs[i]) == 0);
		struct run_result r;
		wait_gpufir(pid, o_path, e_path, &r);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		fprintf(stderr, "  %s: stopped %.2f s after the signal\n", strsignal(sigs[i]), dt);
		CHECK_RUN(&r, GF_EXIT_INTERRUPTED, "interrupted");
		CHECK(gf_test_file_hash(out) == h_out && gf_test_file_hash(in) == h_in);
		CHECK(gpufir_temp_files(dir) == 0);
	}
	unlink(in); /* 5.8 MB: do not keep it around */
	free(tpath);
	free(in);
	free(out);
	free(cfg);
}

/* ---- --check-config ------------------------------------------------------- */

static void test_check_config(void)
{
	char *cfg = write_config("cc.conf", 2);
	struct run_result r;
	run_gpufir(ARGS("--check-config", cfg), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(strstr(r.out, "cc.conf: OK") && strstr(r.out, "97 per channel") && strstr(r.out, "48000 Hz") &&
	      strstr(r.out, "channels:     2"));
	run_gpufir(ARGS("--check-config"), &r); /* the built-in default */
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(strstr(r.out, "built-in default") && strstr(r.out, "chain:"));
	char *bad = path_in("cc_bad.conf");
	gf_test_write_text(bad, "sample_rate = 48000;\nfilters = ( { name = \"a\"; coeffs = [ 1.0 ]; } );\n"
				"chain = [\"a\"];\nblock_frames = \"many\";\n");
	run_gpufir(ARGS("--check-config", "-c", bad), &r);
	CHECK_RUN(&r, GF_EXIT_CONFIG, "cc_bad.conf:4");
	free(bad);
	free(cfg);
}

/* ---- the bundled sample ----------------------------------------------------- */

static double goertzel_power(const float *x, size_t n, double freq)
{
	double w = 2.0 * M_PI * freq / RATE, c = 2.0 * cos(w), s1 = 0.0, s2 = 0.0;
	for (size_t i = 0; i < n; i++) {
		double s0 = x[i] + c * s1 - s2;
		s2 = s1;
		s1 = s0;
	}
	return s1 * s1 + s2 * s2 - c * s1 * s2;
}

static double band_energy(const float *x, size_t n, double lo, double hi)
{
	float *in = fftwf_alloc_real(n);
	fftwf_complex *spec = fftwf_alloc_complex(n / 2 + 1);
	CHECK(in && spec);
	fftwf_plan p = fftwf_plan_dft_r2c_1d((int)n, in, spec, FFTW_ESTIMATE);
	CHECK(p);
	memcpy(in, x, n * sizeof(float));
	fftwf_execute(p);
	double e = 0.0;
	for (size_t k = 0; k <= n / 2; k++) {
		double f = (double)k * RATE / (double)n;
		if (f >= lo && f <= hi)
			e += (double)spec[k][0] * spec[k][0] + (double)spec[k][1] * spec[k][1];
	}
	fftwf_destroy_plan(p);
	fftwf_free(in);
	fftwf_free(spec);
	return e;
}

static void test_sample(void)
{
	const char *src = getenv("GPUFIR_SOURCE_DIR");
	if (!src) {
		fprintf(stderr, "  GPUFIR_SOURCE_DIR unset: bundled sample not checked\n");
		return;
	}
	char *in, *out = path_in("denoised.wav");
	CHECK(asprintf(&in, "%s/samples/noisy_speech.wav", src) > 0);
	uint64_t h0 = gf_test_file_hash(in);
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	CHECK(gf_test_file_hash(in) == h0);
	SF_INFO ii, oi;
	float *x = gf_test_read_sound(in, &ii, 1), *y = gf_test_read_sound(out, &oi, 1);
	CHECK(ii.frames == oi.frames && ii.channels == 1 && oi.format == ii.format);
	size_t n = (size_t)ii.frames;
	double hum = 10.0 * log10(goertzel_power(y, n, 50.0) / goertzel_power(x, n, 50.0));
	double speech = 10.0 * log10(band_energy(y, n, 300.0, 3000.0) / band_energy(x, n, 300.0, 3000.0));
	fprintf(stderr, "  sample: 50 Hz hum %+.1f dB, 300-3000 Hz speech band %+.2f dB\n", hum, speech);
	CHECK(hum < -30.0);
	CHECK(fabs(speech) < 1.0);
	free(x);
	free(y);
	unlink(out);
	free(out);
	free(in);
}

int main(void)
{
	gpufir_bin();
	rng = gf_test_seed("test_offline");
	dir = gf_test_tmpdir("offline");
	gf_test_fill_bounded_taps(taps_a, TAPS_A, 0.9, &rng);
	gf_test_fill_bounded_taps(taps_b, TAPS_B, 0.9, &rng);

	test_formats();
	test_tail_and_format();
	test_clipping();
	test_rates();
	test_input_errors();
	test_output_errors();
	test_check_config();
	test_signals();
	test_sample();

	gf_test_rmtree(dir);
	free(dir);
	printf("test_offline: OK\n");
	return 0;
}
