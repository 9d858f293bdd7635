/*
 * Offline alignment (offline_pipeline.c) through the real program: a
 * linear-phase chain's (N-1)/2 delay is removed and IN's length kept, so an
 * impulse comes out at its own position and a random signal lines up with
 * the zero-delay reference sample for sample; --causal keeps the raw causal
 * output; --tail adds the ring-out after the end in both cases; a
 * minimum-phase chain is not shifted; an input shorter than the delay works.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define CH 2

static char *dir;

static struct gf_filter_set *build(const char *conf, uint32_t *align)
{
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_config_build_info info;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(conf, &c, &eb), &eb);
	CHECK_OK_EB(gf_config_build_ex(c, RATE, CH, &fs, &info, &eb), &eb);
	*align = info.align_frames;
	gf_config_free(c);
	return fs;
}

/* Full causal convolution (frames + taps - 1 frames, interleaved). */
static double *full_reference(const float *x, uint32_t frames, const struct gf_filter_set *fs)
{
	uint32_t n = frames + fs->taps - 1;
	float *xp = calloc((size_t)n * CH, sizeof(float));
	double *y = malloc((size_t)n * CH * sizeof(double));
	CHECK(xp && y);
	memcpy(xp, x, (size_t)frames * CH * sizeof(float));
	gf_test_reference(xp, n, CH, fs->coeffs, fs->taps, y);
	free(xp);
	return y;
}

/* Run gpufir with @p extra options; OUT must be ref[shift ...] for @p want_frames frames. */
static void run_case(const char *conf, const char *in, const float *x, uint32_t frames, const char *opt1,
		     const char *opt2, uint32_t shift, uint32_t want_frames, const char *what)
{
	char *out = gf_test_path(dir, "out.wav");
	const char *args[12] = {"-i", in, "-o", out, "-c", conf, "--backend", "cpu"};
	int n = 8;
	if (opt1)
		args[n++] = opt1;
	if (opt2)
		args[n++] = opt2;
	args[n] = NULL;
	struct run_result r;
	run_gpufir(args, &r);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	uint32_t align;
	struct gf_filter_set *fs = build(conf, &align);
	double *ref = full_reference(x, frames, fs);
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.frames == (sf_count_t)want_frames && info.channels == CH);
	uint32_t total = frames + fs->taps - 1;
	double e = 0.0, s = 0.0;
	for (uint32_t i = 0; i < want_frames * CH; i++) {
		double want = i / CH + shift < total ? ref[(size_t)shift * CH + i] : 0.0;
		e += (y[i] - want) * (y[i] - want);
		s += want * want;
	}
	printf("  %s: %u frames in, %u out, shift %u: rel L2 %.3g\n", what, frames, want_frames, shift,
	       sqrt(e / (s > 0 ? s : 1.0)));
	CHECK(sqrt(e / (s > 0 ? s : 1.0)) < 1e-6);
	if (shift && !opt1)
		CHECK(strstr(r.err, "output aligned with the input"));
	free(y);
	free(ref);
	gf_filter_set_free(fs);
	free(out);
}

static char *write_conf(const char *name, const char *text)
{
	return gf_test_write_text_in(dir, name, text);
}

int main(void)
{
	uint64_t st = gf_test_seed("test_offline_align");
	dir = gf_test_tmpdir("align");
	char *lin = write_conf("lin.conf",
			       "filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 6000.0;\n"
			       "  taps = 101; } );\nchain = [\"lp\"];\n");
	char *mp = write_conf("mp.conf",
			      "phase = \"minimum\";\n"
			      "filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 6000.0;\n"
			      "  taps = 101; } );\nchain = [\"lp\"];\n");
	uint32_t align;
	struct gf_filter_set *fs = build(lin, &align);
	const uint32_t taps = fs->taps, d = (taps - 1) / 2;
	CHECK(taps == 101 && align == 50);
	/* an impulse at frame 1000 comes out centred on frame 1000 */
	const uint32_t fi = 4000;
	float *imp = calloc((size_t)fi * CH, sizeof(float));
	CHECK(imp);
	imp[1000 * CH] = 1.0f;
	imp[2000 * CH + 1] = -0.5f;
	char *in_imp = gf_test_path(dir, "imp.wav");
	gf_test_write_sound(in_imp, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, CH, fi, imp);
	run_case(lin, in_imp, imp, fi, NULL, NULL, d, fi, "impulse, aligned");
	SF_INFO info;
	char *out = gf_test_path(dir, "out.wav");
	float *y = gf_test_read_sound(out, &info, 1);
	float peak = 0.0f;
	uint32_t at = 0;
	for (uint32_t i = 0; i < fi; i++)
		if (fabsf(y[i * CH]) > peak)
			peak = fabsf(y[i * CH]), at = i;
	printf("  impulse at frame 1000: output peak at frame %u (%.4f = h[%u] %.4f)\n", at, peak, d,
	       fs->coeffs[d]);
	CHECK(at == 1000 && y[1000 * CH] == fs->coeffs[d]);
	free(y);
	/* random, crossing the 65536-frame chunks */
	const uint32_t fr = 150001;
	float *x = gf_test_noise((size_t)fr * CH, &st);
	char *in = gf_test_path(dir, "noise.wav");
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, CH, fr, x);
	run_case(lin, in, x, fr, NULL, NULL, d, fr, "noise, aligned");
	run_case(lin, in, x, fr, "--causal", NULL, 0, fr, "noise, --causal");
	run_case(lin, in, x, fr, "--tail", NULL, d, fr + taps - 1 - d, "noise, aligned --tail");
	run_case(lin, in, x, fr, "--tail", "--causal", 0, fr + taps - 1, "noise, --tail --causal");
	/* minimum phase: nothing to remove */
	run_case(mp, in, x, fr, NULL, NULL, 0, fr, "noise, minimum phase");
	/* shorter than the delay: the skip spans the flush */
	const uint32_t fs_short = 20;
	char *in_short = gf_test_path(dir, "short.wav");
	gf_test_write_sound(in_short, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, CH, fs_short, x);
	run_case(lin, in_short, x, fs_short, NULL, NULL, d, fs_short, "20 frames, aligned");
	run_case(lin, in_short, x, fs_short, "--tail", NULL, d, fs_short + taps - 1 - d, "20 frames, --tail");
	gf_filter_set_free(fs);
	free(imp);
	free(x);
	free(in_imp);
	free(in);
	free(in_short);
	free(out);
	free(lin);
	free(mp);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_offline_align: OK\n");
	return 0;
}
