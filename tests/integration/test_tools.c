/*
 * The filter tools: --export-filters (the exported files load back as a
 * config with the same taps, bit for bit), and --check-config's figures
 * against their closed forms (a unit impulse, a gain of 2, a delayed
 * impulse, a designed low-pass), with the clipping warning.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "design.h"
#include "response.h"
#include "run_prog.h"
#include "sndutil.h"
#include "taps_io.h"
#include "testutil.h"
#include "tools.h"

static char *dir;

static struct gf_filter_set *build(const char *conf_path, uint32_t rate, uint32_t channels)
{
	struct gf_config *c = NULL;
	struct gf_filter_set *fs = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(conf_path, &c, &eb), &eb);
	CHECK_OK_EB(gf_config_build(c, rate, channels, &fs, &eb), &eb);
	gf_config_free(c);
	return fs;
}

static void check_same(const struct gf_filter_set *a, const struct gf_filter_set *b)
{
	CHECK(a->channels == b->channels && a->taps == b->taps);
	CHECK(memcmp(a->coeffs, b->coeffs, (size_t)a->channels * a->taps * sizeof(float)) == 0);
}

/* Per-channel chains, gains, a delay, a polarity and a design: every part of the final FIR. */
static const char *const conf_text =
	"filters = (\n"
	"  { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 9000.0; taps = 101; },\n"
	"  { name = \"eq\"; coeffs = [0.9, -0.3, 0.125, 1e-7]; gain_db = 2.5; }\n"
	");\n"
	"chain = [\"lp\"];\n"
	"routes = (\n"
	"  { channel = 1; chain = [\"lp\", \"eq\"]; delay_ms = 0.5; invert = true; },\n"
	"  { channel = 2; chain = [\"eq\"]; gain_db = -6.0; }\n"
	");\n";

static void test_export_round_trip(void)
{
	char *conf = gf_test_write_text_in(dir, "in.conf", conf_text);
	const uint32_t rate = 44100;
	struct gf_filter_set *fs = build(conf, rate, 3);
	char *out = gf_test_path(dir, "api");
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_export_filters(out, fs, rate, conf, NULL, &eb), &eb);
	char *exported = gf_test_path(out, "filters.conf");
	struct gf_filter_set *back = build(exported, rate, 3);
	check_same(fs, back);
	/* the text files hold the same floats */
	for (uint32_t c = 0; c < fs->channels; c++) {
		char name[32];
		snprintf(name, sizeof(name), "channel-%u.txt", c);
		char *p = gf_test_path(out, name);
		double *h;
		uint32_t n;
		CHECK_OK_EB(gf_taps_read_text(p, &h, &n, &eb), &eb);
		CHECK(n == fs->taps);
		for (uint32_t k = 0; k < n; k++)
			CHECK((float)h[k] == gf_filter_set_channel(fs, c)[k]);
		free(h);
		free(p);
	}
	/* a sample rate other than the export's is refused, naming both rates */
	struct gf_config *c = NULL;
	struct gf_filter_set *bad = NULL;
	CHECK_OK_EB(gf_config_load(exported, &c, &eb), &eb);
	CHECK(gf_config_build(c, 48000, 3, &bad, &eb) == GF_E_RATE);
	CHECK(strstr(eb.msg, "44100 Hz") && strstr(eb.msg, "48000 Hz"));
	gf_config_free(c);
	gf_filter_set_free(back);
	free(exported);
	free(out);

	/* the program: --rate, the config's channel count (its routes need 3) */
	out = gf_test_path(dir, "cli");
	struct run_result r;
	run_gpufir(ARGS("--export-filters", out, "-c", conf, "--rate", "44100"), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.out, "3 channels of") && strstr(r.out, "44100 Hz (from --rate)"));
	exported = gf_test_path(out, "filters.conf");
	back = build(exported, rate, 3);
	check_same(fs, back);
	run_gpufir(ARGS("--check-config", exported), &r);
	CHECK_RUN(&r, 0, NULL);
	gf_filter_set_free(back);
	free(exported);
	free(out);
	gf_filter_set_free(fs);

	run_gpufir(ARGS("--export-filters", "/proc/no/such/dir", "-c", conf), &r);
	CHECK_RUN(&r, GF_EXIT_IO, "/proc/no/such/dir");
	free(conf);
}

static void check_stats(const float *h, uint32_t n, double dc, double peak, double peak_hz, double abs_sum,
			double delay)
{
	struct gf_response_stats st;
	CHECK_OK(gf_response_stats(h, n, 48000.0, &st));
	printf("  dc %.9g peak %.9g at %.3f Hz, sum|h| %.9g, delay %.6f\n", st.dc_gain, st.peak_gain,
	       st.peak_hz, st.abs_sum, st.delay_samples);
	CHECK(fabs(st.dc_gain - dc) < 1e-12 && fabs(st.abs_sum - abs_sum) < 1e-12);
	CHECK(fabs(st.peak_gain - peak) < 1e-9 && fabs(st.peak_hz - peak_hz) < 1e-6);
	CHECK(fabs(st.delay_samples - delay) < 1e-6);
}

static void test_report_closed_forms(void)
{
	const float unit[] = {1.0f};
	check_stats(unit, 1, 1.0, 1.0, 0.0, 1.0, 0.0);
	const float two[] = {0.0f, 0.0f, 0.0f, 2.0f, 0.0f}; /* gain 2, 3 samples late */
	check_stats(two, 5, 2.0, 2.0, 0.0, 2.0, 3.0);
	const float inv[] = {-0.5f};
	check_stats(inv, 1, -0.5, 0.5, 0.0, 0.5, 0.0);
	/* a two-tap difference: |H| = 2 sin(w/2) peaks at Nyquist, delay 0.5 */
	const float diff[] = {1.0f, -1.0f};
	check_stats(diff, 2, 0.0, 2.0, 24000.0, 2.0, 0.5);

	/* a designed low-pass: DC = sum h, peak within the Kaiser ripple, below the cutoff, delay (N-1)/2 */
	struct gf_design d;
	gf_design_init(&d, GF_DESIGN_LOWPASS);
	d.cutoff_hz = 6000.0;
	d.taps = 255;
	d.attenuation_db = 60.0;
	double *hd;
	uint32_t n;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_design_run(&d, 48000.0, &hd, &n, &eb), &eb);
	float *h = malloc(n * sizeof(float));
	double dc = 0.0, l1 = 0.0;
	for (uint32_t k = 0; k < n; k++) {
		h[k] = (float)hd[k];
		dc += h[k];
		l1 += fabs((double)h[k]);
	}
	struct gf_response_stats st;
	CHECK_OK(gf_response_stats(h, n, 48000.0, &st));
	double ripple = pow(10.0, -60.0 / 20.0);
	printf("  lowpass %u taps: dc %.9g peak %.9g at %.1f Hz, sum|h| %.6g, delay %.6f\n", n, st.dc_gain,
	       st.peak_gain, st.peak_hz, st.abs_sum, st.delay_samples);
	CHECK(fabs(st.dc_gain - dc) < 1e-12 && fabs(st.abs_sum - l1) < 1e-12);
	CHECK(st.peak_gain >= fabs(dc) && st.peak_gain <= 1.0 + 2.0 * ripple);
	CHECK(st.peak_hz < 6000.0);
	CHECK(fabs(st.delay_samples - (n - 1) / 2.0) < 1e-6);
	/* the peak is the true maximum: no frequency on a fine grid beats it */
	for (int i = 0; i <= 4800; i++) {
		double re, im;
		gf_response_at(h, n, 48000.0, i * 5.0, &re, &im);
		CHECK(hypot(re, im) <= st.peak_gain * (1.0 + 1e-9));
	}
	free(h);
	free(hd);
}

/* The program's report and warning. */
static void test_check_config_report(void)
{
	char *conf = gf_test_write_text_in(dir, "two.conf",
					   "filters = ( { name = \"g\"; coeffs = [0.0, 2.0]; } );\n"
					   "chain = [\"g\"];\n");
	struct run_result r;
	run_gpufir(ARGS("--check-config", conf, "--rate", "44100"), &r);
	CHECK_RUN(&r, 0, NULL);
	printf("%s", r.out);
	CHECK(strstr(r.out, "sample rate:  44100 Hz"));
	CHECK(strstr(r.out, "channel 0:    DC +6.02 dB (2), peak +6.02 dB at 0.0 Hz, worst case +6.02 dB "
			    "(sum |h| = 2), passband delay 1.0 samples (0.023 ms)"));
	CHECK(strstr(r.out, "warning:      channel 1 can clip: its gain peaks at +6.02 dB; gain_db = -6.1"));
	free(conf);
	conf = gf_test_write_text_in(dir, "unit.conf",
				     "filters = ( { name = \"u\"; coeffs = [1.0]; } );\nchain = [\"u\"];\n");
	run_gpufir(ARGS("--check-config", conf), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.out, "channel 0:    DC +0.00 dB (1), peak +0.00 dB at 0.0 Hz, worst case +0.00 dB "
			    "(sum |h| = 1), passband delay 0.0 samples (0.000 ms)"));
	CHECK(!strstr(r.out, "warning"));
	free(conf);
	/* the suppressor: its settings, channels and latency; a bad noise file is a config error */
	conf = gf_test_write_text_in(
		dir, "nr.conf",
		"filters = ( { name = \"u\"; coeffs = [1.0]; },\n"
		"  { name = \"nr\"; design = \"suppress\"; reduction_db = 12.0; } );\n"
		"chain = [\"u\", \"nr\"];\nroutes = ( { channel = 1; chain = [\"u\"]; } );\n");
	run_gpufir(ARGS("--check-config", conf), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(strstr(r.out,
		     "suppressor:   nr (design = \"suppress\", reduction up to 12.0 dB, noise estimate "
		     "from the audio itself) on channel 0, after the FIR; adds 1152 frames (24.00 ms) of "
		     "latency"));
	free(conf);
	char *noise = gf_test_path(dir, "noise44.wav");
	static const float n44[4410] = {0.5f};
	gf_test_write_sound(noise, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 4410, n44);
	conf = gf_test_write_text_in(dir, "nr44.conf",
				     "filters = ( { name = \"nr\"; design = \"suppress\";\n"
				     "  noise = \"noise44.wav\"; } );\nchain = [\"nr\"];\n");
	run_gpufir(ARGS("--check-config", conf), &r);
	CHECK_RUN(&r, GF_EXIT_CONFIG, "nr44.conf:2: filters.nr.noise: ");
	CHECK(strstr(r.err, "at 44100 Hz but the filter runs at 48000 Hz"));
	free(noise);
	free(conf);
}

/* A mono float WAV of @p n taps at @p rate. */
static void write_ir(const char *name, int rate, const float *h, uint32_t n)
{
	char *p = gf_test_path(dir, name);
	gf_test_write_sound(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, rate, 1, n, h);
	free(p);
}

static int build_at(const char *text, uint32_t rate, struct gf_filter_set **fs, struct gf_errbuf *eb)
{
	struct gf_config *c = NULL;
	*fs = NULL;
	int r = gf_config_load_string(text, dir, &c, eb);
	if (!r)
		r = gf_config_build(c, rate, 1, fs, eb);
	gf_config_free(c);
	return r;
}

/* $samplerate$ and a list by rate: the build takes the file for its rate, or names the rate it lacks. */
static void test_rate_files(void)
{
	const float a[] = {0.5f, 0.25f}, b[] = {-1.0f, 0.0f, 0.125f};
	write_ir("room-44100.wav", 44100, a, 2);
	write_ir("room-48000.wav", 48000, b, 3);
	write_ir("room-96000.wav", 88200, a, 2); /* named for one rate, made at another */
	const char *tok = "filters = ( { name = \"room\"; file = \"room-$samplerate$.wav\"; } );\n"
			  "chain = [\"room\"];\n";
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(build_at(tok, 44100, &fs, &eb), &eb);
	CHECK(fs->taps == 2 && memcmp(fs->coeffs, a, sizeof(a)) == 0);
	gf_filter_set_free(fs);
	CHECK_OK_EB(build_at(tok, 48000, &fs, &eb), &eb);
	CHECK(fs->taps == 3 && memcmp(fs->coeffs, b, sizeof(b)) == 0);
	gf_filter_set_free(fs);
	CHECK(build_at(tok, 96000, &fs, &eb) == GF_E_RATE && !fs);
	printf("  expected error: %s\n", eb.msg);
	CHECK(strstr(eb.msg,
		     "room-96000.wav: the impulse response is at 88200 Hz but the filter runs at 96000 Hz"));
	CHECK(build_at(tok, 32000, &fs, &eb) == GF_E_CONFIG);
	printf("  expected error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, "filters.room.file: ") && strstr(eb.msg, "room-32000.wav: cannot open"));
	/* the existing expansions are watched for reload */
	struct gf_config *c = NULL;
	CHECK_OK_EB(gf_config_load_string(tok, dir, &c, &eb), &eb);
	int seen = 0;
	for (uint32_t i = 0; i < c->n_files; i++)
		seen += strstr(c->files[i], "room-44100.wav") || strstr(c->files[i], "room-48000.wav") ||
			strstr(c->files[i], "room-96000.wav");
	CHECK(seen == 3);
	gf_config_free(c);

	free(gf_test_write_text_in(dir, "eq-44k.txt", "0.5\n0.25\n"));
	free(gf_test_write_text_in(dir, "eq-48k.txt", "-1\n0\n0.125\n"));
	const char *list = "filters = ( { name = \"eq\"; file = ( { rate = 44100; file = \"eq-44k.txt\"; },\n"
			   "  { rate = 48000; file = \"eq-48k.txt\"; } ); } );\nchain = [\"eq\"];\n";
	CHECK_OK_EB(build_at(list, 44100, &fs, &eb), &eb);
	CHECK(fs->taps == 2 && memcmp(fs->coeffs, a, sizeof(a)) == 0);
	gf_filter_set_free(fs);
	CHECK_OK_EB(build_at(list, 48000, &fs, &eb), &eb);
	CHECK(fs->taps == 3 && memcmp(fs->coeffs, b, sizeof(b)) == 0);
	gf_filter_set_free(fs);
	CHECK(build_at(list, 96000, &fs, &eb) == GF_E_RATE);
	printf("  expected error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, "filters.eq.file: no file for 96000 Hz (the list gives 44100, 48000 Hz)"));
	CHECK(gf_config_load_string(
		      "filters = ( { name = \"eq\"; file = ( { rate = 44100; file = \"eq-44k.txt\"; },"
		      " { rate = 44100; file = \"eq-48k.txt\"; } ); } );\nchain = [\"eq\"];\n",
		      dir, &c, &eb) == GF_E_CONFIG);
	CHECK(strstr(eb.msg, "two files for 44100 Hz"));
	CHECK(gf_config_load_string(
		      "filters = ( { name = \"eq\"; file = ( { rate = 44100; file = \"nope.txt\"; }"
		      " ); } );\nchain = [\"eq\"];\n",
		      dir, &c, &eb) == GF_E_CONFIG);
	CHECK(strstr(eb.msg, "nope.txt"));

	/* offline: the input's rate picks the file, and the log says which */
	char *conf = gf_test_write_text_in(dir, "rate.conf", tok);
	char *in = gf_test_path(dir, "impulse.wav"), *out = gf_test_path(dir, "out.wav");
	const float imp[4] = {1.0f, 0.0f, 0.0f, 0.0f};
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, 4, imp);
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, 0, "room-48000.wav for 48000 Hz");
	SF_INFO info = {0};
	float *y = gf_test_read_sound(out, &info, 1);
	CHECK(info.frames == 4 && y[0] == b[0] && y[1] == b[1] && y[2] == b[2] && y[3] == 0.0f);
	free(y);
	/* --check-config at another rate reports the file it took */
	run_gpufir(ARGS("--check-config", conf, "--rate", "44100"), &r);
	CHECK_RUN(&r, 0, "room-44100.wav for 44100 Hz");
	free(conf);
	free(in);
	free(out);
}

static void parse_ok(struct gf_cli *c, const char *const args[])
{
	char *argv[32] = {"gpufir"};
	int n = 1;
	while (args[n - 1])
		argv[n] = (char *)args[n - 1], n++;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_cli_parse(c, n, argv, &eb), &eb);
}

static void parse_fails(const char *needle, const char *const args[])
{
	char *argv[32] = {"gpufir"};
	int n = 1;
	while (args[n - 1])
		argv[n] = (char *)args[n - 1], n++;
	struct gf_cli c;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_cli_parse(&c, n, argv, &eb) == GF_E_INVAL);
	printf("  usage error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, needle));
}

static void test_cli(void)
{
	struct gf_cli c;
	parse_ok(&c, ARGS("--export-filters", "out", "-c", "a.conf", "--rate", "96000"));
	CHECK(c.mode == GF_MODE_EXPORT && strcmp(c.export_dir, "out") == 0 && c.rate == 96000);
	parse_ok(&c, ARGS("--export-filters", "out", "-i", "in.wav"));
	CHECK(c.mode == GF_MODE_EXPORT && strcmp(c.input, "in.wav") == 0 && c.rate == 0);
	parse_ok(&c, ARGS("--check-config", "a.conf", "--rate", "8000"));
	CHECK(c.mode == GF_MODE_CHECK_CONFIG && c.rate == 8000);
	parse_fails("--rate needs a sample rate", ARGS("--check-config", "--rate", "44.1k"));
	parse_fails("--rate needs a sample rate", ARGS("--check-config", "--rate", "7999"));
	parse_fails("--rate applies only", ARGS("--live", "--rate", "48000"));
	parse_fails("-o/--output does not apply to --export-filters",
		    ARGS("--export-filters", "d", "-o", "x.wav"));
	parse_fails("conflicting modes", ARGS("--export-filters", "d", "--check-config"));
	parse_ok(&c, ARGS("--plot", "-c", "a.conf", "-o", "r.svg", "-i", "in.wav"));
	CHECK(c.mode == GF_MODE_PLOT && strcmp(c.output, "r.svg") == 0 && strcmp(c.input, "in.wav") == 0);
	parse_ok(&c, ARGS("--plot"));
	CHECK(c.mode == GF_MODE_PLOT && !c.output && !c.input && !c.config);
	parse_fails("--tail applies only to offline mode", ARGS("--plot", "--tail"));
	parse_fails("--backend applies only to offline mode and --live", ARGS("--plot", "-b", "cpu"));
	parse_fails("conflicting modes", ARGS("--plot", "--live"));
}

int main(void)
{
	test_cli();
	dir = gf_test_tmpdir("tools");
	test_report_closed_forms();
	test_export_round_trip();
	test_check_config_report();
	test_rate_files();
	gf_test_rmtree(dir);
	free(dir);
	puts("test_tools: OK");
	return 0;
}
