/*
 * The phase settings: phase = "minimum" on a designed filter, on a filter read
 * from a file and on a whole chain (top-level); "auto" by mode; the built-in
 * default's live delay; the linear-phase delay offline alignment removes; and
 * the errors, with file and line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "design.h"
#include "minphase.h"
#include "testutil.h"

static const double RATE = 48000.0;

static double db(double x)
{
	return 20.0 * log10(x + 1e-300);
}

static struct gf_config *load(const char *text, const char *dir)
{
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, dir, &c, &eb), &eb);
	return c;
}

static struct gf_filter_set *build(const struct gf_config *c, uint32_t ch, uint32_t *align)
{
	struct gf_filter_set *fs;
	struct gf_config_build_info info;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_build_ex(c, (uint32_t)RATE, ch, &fs, &info, &eb), &eb);
	if (align)
		*align = info.align_frames;
	return fs;
}

static double *channel(const struct gf_filter_set *fs, uint32_t c)
{
	double *h = malloc(fs->taps * sizeof(double));
	CHECK(h);
	for (uint32_t i = 0; i < fs->taps; i++)
		h[i] = gf_filter_set_channel(fs, c)[i];
	return h;
}

/* Largest dB difference where @p a is above -60 dB, from @p f0 Hz up, and each one's worst gain in [s0, s1].
 */
static double mag_error(const double *a, const double *b, uint32_t n, double f0, double s0, double s1,
			double *stop_a, double *stop_b)
{
	double e = 0.0;
	*stop_a = *stop_b = -INFINITY;
	for (int i = 0; i <= 4000; i++) {
		double f = f0 + (0.5 * RATE - f0) * i / 4000.0;
		double ga = db(gf_design_response(a, n, f, RATE)), gb = db(gf_design_response(b, n, f, RATE));
		if (ga > -60.0)
			e = fmax(e, fabs(ga - gb));
		if (f >= s0 && f <= s1)
			*stop_a = fmax(*stop_a, ga), *stop_b = fmax(*stop_b, gb);
	}
	return e;
}

/* The built-in default: linear offline (aligned by (N-1)/2), minimum phase live, same magnitude. */
static void test_default_by_mode(void)
{
	struct gf_config *off, *live;
	CHECK_OK(gf_config_default(&off));
	CHECK_OK(gf_config_default(&live));
	CHECK(off->phase == GF_PHASE_AUTO);
	live->live = 1;
	uint32_t a_off, a_live;
	struct gf_filter_set *fo = build(off, 2, &a_off), *fl = build(live, 2, &a_live);
	CHECK(fo->taps == fl->taps);
	CHECK(a_off == (fo->taps - 1) / 2 && a_live == 0);
	double *ho = channel(fo, 0), *hl = channel(fl, 0);
	double lo, hi, mean, lo_l, hi_l, mean_l;
	CHECK(gf_group_delay_band(hl, fl->taps, RATE, 300.0, 3000.0, 64, &lo, &hi, &mean) == 64);
	CHECK(gf_group_delay_band(ho, fo->taps, RATE, 300.0, 3000.0, 64, &lo_l, &hi_l, &mean_l) == 64);
	double sa, sb;
	/* from 20 Hz, as before the rumble high-pass moved into the suppressor (zero phase there) */
	double err = mag_error(ho, hl, fo->taps, 20.0, 15500.0, 24000.0, &sa, &sb);
	/* No input file, so no hum measured: no notch (the mains harmonics pass
	 * as the voice around them does). */
	double notch = INFINITY;
	for (int k = 2; k <= 4; k++)
		notch = fmin(notch, fmin(db(gf_design_response(hl, fl->taps, 50.0 * k, RATE)),
					 db(gf_design_response(hl, fl->taps, 60.0 * k, RATE))));
	printf("default chain, %u taps: live (minimum phase) group delay 300 Hz-3 kHz %.2f ms mean, "
	       "%.2f..%.2f ms; offline (linear) %.2f ms, aligned by %u samples; magnitude error %.4f dB "
	       "(above -60 dB); hiss stopband %.1f dB (linear %.1f dB); lowest gain at 100-240 Hz hum "
	       "harmonics %.2f dB "
	       "(no hum measured: no notch)\n",
	       fl->taps, 1e3 * mean / RATE, 1e3 * lo / RATE, 1e3 * hi / RATE, 1e3 * mean_l / RATE, a_off, err,
	       sb, sa, notch);
	CHECK(hi / RATE <= 3e-3); /* the bound: at most 3 ms in the voice band */
	CHECK(fabs(mean_l - (fo->taps - 1) / 2.0) < 0.01); /* linear: exactly (N-1)/2 */
	CHECK(err < 0.1);
	CHECK(sb < sa + 0.5);
	CHECK(notch > -0.5);
	free(ho);
	free(hl);
	gf_filter_set_free(fo);
	gf_filter_set_free(fl);
	gf_config_free(off);
	gf_config_free(live);
}

/* phase = "minimum" on one design, on a text file; the linear delay the others leave. */
static void test_filter_phase(void)
{
	char *dir = gf_test_tmpdir("phase");
	/* a symmetric 5-tap text file: linear phase, delay 2 */
	char *txt = gf_test_path(dir, "sym.txt");
	gf_test_write_text(txt, "0.1\n0.2\n0.4\n0.2\n0.1\n");
	static const char lin_text[] =
		"filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 101; },\n"
		"  { name = \"f\"; file = \"sym.txt\"; } );\nchain = [\"lp\", \"f\"];\n";
	struct gf_config *c = load(lin_text, dir);
	uint32_t align;
	struct gf_filter_set *fs = build(c, 1, &align);
	CHECK(fs->taps == 105 && align == 50 + 2);
	gf_filter_set_free(fs);
	gf_config_free(c);
	/* the low-pass minimum phase: only the file's 2 samples remain to align */
	static const char mp_design[] =
		"filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 101;\n"
		"    phase = \"minimum\"; },\n"
		"  { name = \"f\"; file = \"sym.txt\"; } );\nchain = [\"lp\", \"f\"];\n";
	c = load(mp_design, dir);
	fs = build(c, 1, &align);
	double *h = channel(fs, 0);
	printf("lowpass minimum phase then a symmetric file: align %u, group delay at 1 kHz %.2f samples\n",
	       align, gf_group_delay(h, fs->taps, 1000.0, RATE));
	CHECK(align == 2);
	CHECK(gf_group_delay(h, fs->taps, 1000.0, RATE) < 10.0);
	free(h);
	gf_filter_set_free(fs);
	gf_config_free(c);
	/* the file minimum phase: its taps become {0.2+, ...} with the same magnitude */
	static const char mp_file[] =
		"filters = ( { name = \"f\"; file = \"sym.txt\"; phase = \"minimum\"; } );\n"
		"chain = [\"f\"];\n";
	c = load(mp_file, dir);
	fs = build(c, 1, &align);
	h = channel(fs, 0);
	double lin[5] = {0.1, 0.2, 0.4, 0.2, 0.1};
	double sa, sb, err = mag_error(lin, h, 5, 0.0, 0.0, 0.0, &sa, &sb);
	printf("5-tap file made minimum phase: %.4f %.4f %.4f %.4f %.4f, magnitude error %.2g dB\n", h[0],
	       h[1], h[2], h[3], h[4], err);
	CHECK(align == 0 && err < 1e-3);
	CHECK(h[0] > lin[0]); /* energy moves to the front */
	free(h);
	gf_filter_set_free(fs);
	gf_config_free(c);
	free(txt);
	gf_test_rmtree(dir);
	free(dir);
}

/* A route's delay is wanted: the whole-chain minimum phase keeps it; alignment does not remove it. */
static void test_top_level_and_routes(void)
{
	static const char text[] =
		"phase = \"minimum\";\n"
		"filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 101; } );\n"
		"chain = [\"lp\"];\n"
		"routes = ( { channel = 1; delay_ms = 1.0; } );\n";
	struct gf_config *c = load(text, NULL);
	uint32_t align;
	struct gf_filter_set *fs = build(c, 2, &align);
	CHECK(align == 0 && fs->taps == 101 + 48);
	for (uint32_t i = 0; i < 48; i++)
		CHECK(gf_filter_set_channel(fs, 1)[i] == 0.0f);
	for (uint32_t i = 0; i < 101; i++)
		CHECK(gf_filter_set_channel(fs, 1)[48 + i] == gf_filter_set_channel(fs, 0)[i]);
	gf_filter_set_free(fs);
	gf_config_free(c);
	/* linear phase with the same route: channel 0's 50 samples are the shared delay */
	c = load(text + strlen("phase = \"minimum\";\n"), NULL);
	fs = build(c, 2, &align);
	CHECK(align == 50);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

static void expect_error(const char *text, const char *msg)
{
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_config_load_string(text, NULL, &c, &eb) == GF_E_CONFIG && c == NULL);
	printf("  error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, msg));
}

static void test_errors(void)
{
	expect_error(
		"filters = ( { name = \"a\"; coeffs = [1.0];\n phase = \"min\"; } );\nchain = [\"a\"];\n",
		"<string>:2: filters.a.phase: must be \"linear\" or \"minimum\" (got \"min\")");
	expect_error("phase = 1;\nfilters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = [\"a\"];\n",
		     "<string>:1: phase: must be a string");
	expect_error(
		"phase = \"fast\";\nfilters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = [\"a\"];\n",
		"<string>:1: phase: must be \"linear\" or \"minimum\" or \"auto\" (got \"fast\")");
	/* "auto" is for the whole chain only */
	expect_error("filters = ( { name = \"a\"; coeffs = [1.0]; phase = \"auto\"; } );\nchain = [\"a\"];\n",
		     "filters.a.phase: must be \"linear\" or \"minimum\" (got \"auto\")");
	/* too long for minimum phase: a build error with the line */
	static const char longf[] = "max_taps = 0;\nfilters = ( { name = \"d\"; design = \"delay\";\n"
				    "  delay_ms = 9000.0; phase = \"minimum\"; } );\nchain = [\"d\"];\n";
	struct gf_config *c = load(longf, NULL);
	struct gf_filter_set *fs = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_config_build(c, 192000, 1, &fs, &eb) == GF_E_CONFIG && !fs);
	printf("  error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, "<string>:3: filters.d.phase: minimum phase is limited to"));
	gf_config_free(c);
}

int main(void)
{
	test_default_by_mode();
	test_filter_phase();
	test_top_level_and_routes();
	test_errors();
	printf("test_config_phase: OK\n");
	return 0;
}
