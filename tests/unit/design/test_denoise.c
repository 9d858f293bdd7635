/*
 * design = "denoise" (denoise.c through the config): a noise sample whose
 * power sits in one band gives a filter that cuts that band by reduction_db
 * and passes the rest; with the program's spectrum the gain is Wiener's
 * (a tone far above the noise passes); and every error names the file and
 * line: missing noise file, another rate, silence, too short, bad settings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "design.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000

static char *dir;

/* @p seconds of noise band-limited to [f0, f1] (a sum of random-phase sines) plus a white floor. */
static char *band_noise(const char *name, int rate, double seconds, double f0, double f1, double floor_rms,
			double tone_hz, uint64_t *st)
{
	uint32_t n = (uint32_t)(seconds * rate);
	float *x = calloc(n ? n : 1, sizeof(float));
	CHECK(x);
	for (double f = f0; f <= f1; f += 7.3) {
		double ph = 3.14159 * (gf_test_randf(st) + 1.0);
		for (uint32_t i = 0; i < n; i++)
			x[i] += (float)(0.01 * sin(2.0 * M_PI * f * i / rate + ph));
	}
	for (uint32_t i = 0; i < n; i++)
		x[i] += (float)(floor_rms * 1.732 * gf_test_randf(st)) +
			(float)(tone_hz > 0.0 ? 0.5 * sin(2.0 * M_PI * tone_hz * i / rate) : 0.0);
	char *p = gf_test_path(dir, name);
	gf_test_write_sound(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, rate, 1, n, x);
	free(x);
	return p;
}

static double gain_db(const struct gf_filter_set *fs, double f)
{
	double *h = malloc(fs->taps * sizeof(double));
	CHECK(h);
	for (uint32_t i = 0; i < fs->taps; i++)
		h[i] = fs->coeffs[i];
	double g = 20.0 * log10(gf_design_response(h, fs->taps, f, RATE) + 1e-300);
	free(h);
	return g;
}

static struct gf_filter_set *build_text(const char *text, const char *program, struct gf_errbuf *eb, int *err)
{
	struct gf_config *c = NULL;
	struct gf_filter_set *fs = NULL;
	*err = gf_config_load_string(text, dir, &c, eb);
	if (*err)
		return NULL;
	c->program_file = program;
	*err = gf_config_build(c, RATE, 1, &fs, eb);
	gf_config_free(c);
	return fs;
}

static void test_band_cut(uint64_t *st)
{
	char *nz = band_noise("band.wav", RATE, 3.0, 2000.0, 4000.0, 1e-4, 0.0, st);
	static const char text[] =
		"filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"band.wav\";\n"
		"  reduction_db = 15.0; use_input = false; } );\nchain = [\"dn\"];\n";
	struct gf_errbuf eb = {{0}};
	int err;
	struct gf_filter_set *fs = build_text(text, NULL, &eb, &err);
	CHECK_OK_EB(err, &eb);
	double in = gain_db(fs, 3000.0), out1 = gain_db(fs, 500.0), out2 = gain_db(fs, 10000.0);
	printf("band noise 2-4 kHz, noise alone: %u taps; gain at 3 kHz %.2f dB, 500 Hz %.2f dB, 10 kHz %.2f "
	       "dB\n",
	       fs->taps, in, out1, out2);
	CHECK(fs->taps == 4095);
	CHECK(in < -13.0 && in > -15.5); /* bounded by reduction_db */
	CHECK(fabs(out1) < 1.0 && fabs(out2) < 1.0);
	for (uint32_t i = 0; i < fs->taps / 2; i++) /* linear phase */
		CHECK(fs->coeffs[i] == fs->coeffs[fs->taps - 1 - i]);
	gf_filter_set_free(fs);
	/* the program: a 3 kHz tone 40 dB above the noise there passes; the rest of the band is cut */
	char *prog = band_noise("prog.wav", RATE, 3.0, 2000.0, 4000.0, 1e-4, 3000.0, st);
	static const char wtext[] =
		"filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"band.wav\";\n"
		"  reduction_db = 15.0; taps = 2047; } );\nchain = [\"dn\"];\n";
	fs = build_text(wtext, prog, &eb, &err);
	CHECK_OK_EB(err, &eb);
	double tone = gain_db(fs, 3000.0), rest = gain_db(fs, 2300.0), clean = gain_db(fs, 500.0);
	printf("with the program's spectrum (Wiener): gain at the 3 kHz tone %.2f dB, at 2.3 kHz %.2f dB, "
	       "500 Hz "
	       "%.2f dB\n",
	       tone, rest, clean);
	CHECK(fs->taps == 2047);
	CHECK(tone > -1.5 && rest < -10.0);
	gf_filter_set_free(fs);
	free(prog);
	free(nz);
}

static void expect_error(const char *text, int at_build, const char *msg)
{
	struct gf_errbuf eb = {{0}};
	int err;
	struct gf_filter_set *fs = build_text(text, NULL, &eb, &err);
	CHECK(!fs && err == GF_E_CONFIG);
	printf("  %s error: %s\n", at_build ? "build" : "load", eb.msg);
	if (!strstr(eb.msg, msg))
		fprintf(stderr, "expected: %s\n", msg);
	CHECK(strstr(eb.msg, msg));
}

static void test_errors(uint64_t *st)
{
	char *r44 = band_noise("n44.wav", 44100, 2.0, 100.0, 200.0, 1e-3, 0.0, st);
	char *quiet = band_noise("quiet.wav", RATE, 2.0, 100.0, 90.0, 0.0, 0.0, st); /* all zeros */
	char *shorty = band_noise("short.wav", RATE, 0.2, 100.0, 200.0, 1e-3, 0.0, st);
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n noise = \"nope.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     0, "<string>:2: filters.dn.noise: ");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n noise = \"nope.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     0, "nope.wav: cannot open the noise file: No such file or directory");
	/* a FIFO would block the reader: refused at once */
	char *fifo = gf_test_path(dir, "fifo.wav");
	CHECK(mkfifo(fifo, 0600) == 0);
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n noise = \"fifo.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     0, "<string>:2: filters.dn.noise: ") /* and says what it is: */;
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"fifo.wav\"; } );\nchain = "
		     "[\"dn\"];\n",
		     0, "fifo.wav: the noise file is a FIFO, not a regular file");
	free(fifo);
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; } );\nchain = [\"dn\"];\n", 0,
		     "filters.dn.noise: missing");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"band.wav\";\n"
		     "  reduction_db = 90.0; } );\nchain = [\"dn\"];\n",
		     0, "<string>:2: filters.dn.reduction_db:");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n\n noise = \"n44.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     1, "<string>:3: filters.dn.noise: ");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"n44.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     1, "is at 44100 Hz but the filter runs at 48000 Hz");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n noise = \"quiet.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     1, "<string>:2: filters.dn.noise: ");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"quiet.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     1, "is silent");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\";\n noise = \"short.wav\"; } );\n"
		     "chain = [\"dn\"];\n",
		     1, "too short to measure: give at least");
	expect_error("filters = ( { name = \"dn\"; design = \"denoise\"; noise = \"band.wav\";\n"
		     "  taps = 100; } );\nchain = [\"dn\"];\n",
		     0, "<string>:2: filters.dn.taps: must be odd");
	free(r44);
	free(quiet);
	free(shorty);
}

int main(void)
{
	uint64_t st = gf_test_seed("test_denoise");
	dir = gf_test_tmpdir("denoise");
	test_band_cut(&st);
	test_errors(&st);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_denoise: OK\n");
	return 0;
}
