/*
 * The mixer offline, through the real program: a 2-in -> 4-out crossover
 * (complementary linear-phase low-pass/high-pass pairs, one path inverted
 * and attenuated) on a stereo file gives a 4-channel file whose every
 * channel is the reference convolution's sum over its paths, aligned like a
 * plain chain; each pair of outputs sums back to its input within float
 * rounding; a file with other than the mixer's inputs is a config error;
 * with --backend cuda on a GPU the same checks hold (the engine runs the
 * paths as channels there and sums them), without one it fails with why;
 * --export-filters writes a config that runs the same mixer; a NaN in the
 * input mutes its piece of every output and leaves the rest exact.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "gpu.h"
#include "offline.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define TAPS 255 /* odd: the low-pass and its complement share the centre tap */
#define FRAMES 30000

static char *dir;

/* Windowed-sinc low-pass at @p fc Hz (Blackman), unity at DC. */
static void lowpass(float *h, double fc)
{
	double sum = 0.0, w[TAPS];
	for (int n = 0; n < TAPS; n++) {
		double m = n - (TAPS - 1) / 2.0, x = 2.0 * fc / RATE;
		double sinc = m == 0.0 ? x : sin(M_PI * x * m) / (M_PI * m);
		double win =
			0.42 - 0.5 * cos(2 * M_PI * n / (TAPS - 1)) + 0.08 * cos(4 * M_PI * n / (TAPS - 1));
		w[n] = sinc * win;
		sum += w[n];
	}
	for (int n = 0; n < TAPS; n++)
		h[n] = (float)(w[n] / sum);
}

/* A crossover at 2 kHz: lp on outputs 0 and 2, its complement (delta - lp) on 1 and 3; the right
 * side's high path is attenuated 6 dB and inverted, so 2 + 3 reconstruct R only after undoing it. */
static char *write_config(void)
{
	float lp[TAPS], hp[TAPS];
	lowpass(lp, 2000.0);
	for (int n = 0; n < TAPS; n++)
		hp[n] = (n == (TAPS - 1) / 2 ? 1.0f : 0.0f) - lp[n];
	char *tl = gf_test_taps_text(lp, TAPS, ", "), *th = gf_test_taps_text(hp, TAPS, ", ");
	size_t len = strlen(tl) + strlen(th) + 1024;
	char *text = malloc(len);
	CHECK(text);
	snprintf(text, len,
		 "filters = (\n { name = \"lp\"; coeffs = [%s]; },\n { name = \"hp\"; coeffs = [%s]; }\n);\n"
		 "mixer = {\n inputs = 2;\n outputs = 4;\n paths = (\n"
		 "  { in = 0; out = 0; chain = [\"lp\"]; },\n"
		 "  { in = 0; out = 1; chain = [\"hp\"]; },\n"
		 "  { in = 1; out = 2; chain = [\"lp\"]; },\n"
		 "  { in = 1; out = 3; chain = [\"hp\"]; gain_db = -6.0; invert = true; }\n"
		 " );\n};\n",
		 tl, th);
	char *path = gf_test_write_text_in(dir, "crossover.conf", text);
	free(tl);
	free(th);
	free(text);
	return path;
}

static struct gf_filter_set *build(const char *conf, uint32_t *align)
{
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_config_build_info info;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(conf, &c, &eb), &eb);
	CHECK_OK_EB(gf_config_build_ex(c, RATE, 2, &fs, &info, &eb), &eb);
	*align = info.align_frames;
	gf_config_free(c);
	return fs;
}

static void test_crossover(const char *conf, const char *in, const float *x, const char *backend)
{
	char *out = gf_test_path(dir, "out.wav");
	struct run_result r;
	if (backend)
		run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", backend), &r);
	else
		run_gpufir(ARGS("-i", in, "-o", out, "-c", conf), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	uint32_t align;
	struct gf_filter_set *fs = build(conf, &align);
	CHECK(align == (TAPS - 1) / 2);
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.channels == 4 && info.frames == FRAMES && info.samplerate == RATE);
	/* The reference of the input and the silence after it, then alignment's shift. */
	uint32_t n = FRAMES + align;
	float *xp = calloc((size_t)n * 2, sizeof(float));
	CHECK(xp);
	memcpy(xp, x, (size_t)FRAMES * 2 * sizeof(float));
	double *ref = gf_test_reference_mix(xp, n, fs);
	double err = gf_test_rel_l2(y, ref + (size_t)align * 4, (size_t)FRAMES * 4);
	printf("  %s: 4 outputs against the reference: rel L2 %.3g\n", backend ? backend : "auto", err);
	CHECK(err < 1e-6);
	/* The pairs reconstruct their inputs: L = 0 + 1, R = 2 - 3 / (-6 dB). */
	double g = pow(10.0, -6.0 / 20.0), e2[2] = {0, 0}, r2[2] = {0, 0};
	for (uint32_t i = 0; i < FRAMES; i++) {
		const float *o = y + (size_t)i * 4;
		double sum[2] = {(double)o[0] + o[1], (double)o[2] - o[3] / g};
		for (int c = 0; c < 2; c++) {
			e2[c] += (sum[c] - x[(size_t)i * 2 + c]) * (sum[c] - x[(size_t)i * 2 + c]);
			r2[c] += (double)x[(size_t)i * 2 + c] * x[(size_t)i * 2 + c];
		}
	}
	printf("  crossover sums: L rel L2 %.3g, R rel L2 %.3g\n", sqrt(e2[0] / r2[0]), sqrt(e2[1] / r2[1]));
	CHECK(sqrt(e2[0] / r2[0]) < 1e-5 && sqrt(e2[1] / r2[1]) < 1e-5);
	/* Each output on its own is a band, not the input: the check above could not pass by accident. */
	double lo = 0.0;
	for (uint32_t i = 0; i < FRAMES; i++)
		lo += ((double)y[(size_t)i * 4] - x[(size_t)i * 2]) *
		      ((double)y[(size_t)i * 4] - x[(size_t)i * 2]);
	CHECK(sqrt(lo / r2[0]) > 0.1);
	gf_filter_set_free(fs);
	free(y);
	free(xp);
	free(ref);
	free(out);
}

/* --export-filters writes the mixer again: its filters.conf filters IN to the same bits (--causal:
 * the exported files are padded to one length, so alignment is not compared here). */
static void test_export(const char *conf, const char *in)
{
	char *exp = gf_test_path(dir, "export"), *exp_conf = gf_test_path(exp, "filters.conf");
	char *o1 = gf_test_path(dir, "o1.wav"), *o2 = gf_test_path(dir, "o2.wav");
	struct run_result r;
	run_gpufir(ARGS("--export-filters", exp, "-c", conf, "--rate", "48000"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "building at 48000 Hz");
	char text[4096];
	CHECK(gf_test_read_file(exp_conf, text, sizeof(text)) > 0);
	CHECK(strstr(text, "mixer = {") && strstr(text, "{ in = 1; out = 3; chain = [\"channel3\"]; }"));
	run_gpufir(ARGS("-i", in, "-o", o1, "-c", conf, "--causal"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	run_gpufir(ARGS("-i", in, "-o", o2, "-c", exp_conf, "--causal"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	SF_INFO i1, i2;
	float *y1 = gf_test_read_sound(o1, &i1, 1), *y2 = gf_test_read_sound(o2, &i2, 1);
	CHECK(i1.channels == 4 && i2.channels == 4 && i1.frames == i2.frames);
	CHECK(memcmp(y1, y2, (size_t)i1.frames * 4 * sizeof(float)) == 0);
	free(y1);
	free(y2);
	free(exp);
	free(exp_conf);
	free(o1);
	free(o2);
}

/* A NaN in a piece of the input: the engine mutes that piece of all 4 outputs and takes the NaN as
 * zero in its memory, so every other frame is the reference's of the input with it zeroed. The
 * chunk goes in pieces and its output is twice as wide as its input: each piece's output must not
 * overwrite input not yet filtered (offline_chunk.c). */
static void test_nonfinite(const char *conf, const float *x)
{
	const uint32_t bad = 20000, m0 = bad / GF_OFFLINE_MUTE_FRAMES * GF_OFFLINE_MUTE_FRAMES;
	char *in = gf_test_path(dir, "nan.wav"), *out = gf_test_path(dir, "nan_out.wav");
	float *xn = malloc((size_t)FRAMES * 2 * sizeof(float));
	CHECK(xn);
	memcpy(xn, x, (size_t)FRAMES * 2 * sizeof(float));
	xn[(size_t)bad * 2 + 1] = NAN;
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 2, FRAMES, xn);
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "the input has 1 NaN/Inf sample");
	uint32_t align;
	struct gf_filter_set *fs = build(conf, &align);
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.channels == 4 && info.frames == FRAMES);
	uint32_t n = FRAMES + align;
	float *xp = calloc((size_t)n * 2, sizeof(float));
	CHECK(xp);
	memcpy(xp, x, (size_t)FRAMES * 2 * sizeof(float));
	xp[(size_t)bad * 2 + 1] = 0.0f;
	double *ref = gf_test_reference_mix(xp, n, fs);
	double e = 0.0, s = 0.0;
	uint32_t zeros = 0;
	for (uint32_t i = 0; i < FRAMES; i++)
		for (uint32_t c = 0; c < 4; c++) {
			float v = y[(size_t)i * 4 + c];
			CHECK(isfinite(v));
			if (i + align >= m0 && i + align < m0 + GF_OFFLINE_MUTE_FRAMES) {
				zeros += v == 0.0f;
				continue;
			}
			double d = ref[(size_t)(i + align) * 4 + c] - v;
			e += d * d;
			s += (double)v * v;
		}
	printf("  NaN at frame %u: %u of %u samples of its piece zero, the rest rel L2 %.3g\n", bad, zeros,
	       4 * GF_OFFLINE_MUTE_FRAMES, sqrt(e / s));
	CHECK(zeros == 4 * GF_OFFLINE_MUTE_FRAMES);
	CHECK(sqrt(e / s) < 1e-6);
	gf_filter_set_free(fs);
	free(ref);
	free(xp);
	free(y);
	free(xn);
	free(out);
	free(in);
}

static void test_refusals(const char *conf)
{
	char *in3 = gf_test_path(dir, "in3.wav"), *out = gf_test_path(dir, "out3.wav");
	uint64_t rng = 7;
	float *x = gf_test_noise((size_t)1000 * 3, &rng);
	gf_test_write_sound(in3, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 3, 1000, x);
	struct run_result r;
	run_gpufir(ARGS("-i", in3, "-o", out, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, GF_EXIT_CONFIG, "mixer.inputs: the mixer reads 2 channels, the audio has 3");
	CHECK(!gf_test_exists(out));
	free(x);
	free(in3);
	free(out);
}

int main(void)
{
	uint64_t rng = gf_test_seed("test_offline_mixer");
	dir = gf_test_tmpdir("offline-mixer");
	char *conf = write_config();
	char *in = gf_test_path(dir, "in.wav");
	float *x = gf_test_noise((size_t)FRAMES * 2, &rng);
	for (size_t i = 0; i < (size_t)FRAMES * 2; i++)
		x[i] *= 0.5f;
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 2, FRAMES, x);
	test_crossover(conf, in, x, "cpu");
	test_crossover(conf, in, x, NULL);
	char desc[256];
	if (gf_cuda_probe(0, desc, sizeof(desc)) == 0) {
		test_crossover(conf, in, x, "cuda");
	} else { /* no GPU: cuda asked for fails with the reason, and writes nothing */
		char *out = gf_test_path(dir, "out-cuda.wav");
		struct run_result r;
		run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cuda"), &r);
		printf("  cuda: %s\n", desc);
		CHECK(r.exit_code != GF_EXIT_OK && strstr(r.err, "backend cuda"));
		CHECK(!gf_test_exists(out));
		free(out);
	}
	test_export(conf, in);
	test_nonfinite(conf, x);
	test_refusals(conf);
	gf_test_rmtree(dir);
	free(dir);
	free(conf);
	free(in);
	free(x);
	printf("test_offline_mixer: OK\n");
	return 0;
}
