/*
 * Parametric EQ import and the config's design = "peq": the Equalizer APO /
 * AutoEQ and REW samples shipped in config/filters parsed band by band, the
 * text's errors with their line numbers, and in a config: bands and file
 * (relative to the config, watched for reload), preamp_db, the build's
 * magnitude at each band's centre in linear and minimum phase, and the
 * errors at load and at build with file, line and setting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "design.h"
#include "peq.h"
#include "testutil.h"

static const char *srcdir;
static char *dir;

static char *read_text(const char *path, size_t *len)
{
	static char buf[1 << 16];
	long n = gf_test_read_file(path, buf, sizeof(buf) - 1);
	CHECK(n > 0);
	*len = (size_t)n;
	return buf;
}

static void check_band(const struct gf_peq_band *b, enum gf_peq_type t, double f, double g, double q,
		       int line)
{
	CHECK(b->type == t && b->freq_hz == f && b->gain_db == g && fabs(b->q - q) < 1e-12 &&
	      b->line == line);
}

static void test_autoeq_sample(void)
{
	char path[4096];
	size_t len;
	snprintf(path, sizeof(path), "%s/config/filters/autoeq-ParametricEQ.txt", srcdir);
	const char *text = read_text(path, &len);
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_parse_text(text, len, path, &p, &eb), &eb);
	CHECK(p.n == 10 && p.preamp_db == -6.2);
	check_band(&p.bands[0], GF_PEQ_LOWSHELF, 105.0, 5.5, 0.70, 2);
	check_band(&p.bands[1], GF_PEQ_PEAKING, 190.0, -2.6, 0.57, 3);
	check_band(&p.bands[9], GF_PEQ_HIGHSHELF, 10000.0, -2.1, 0.70, 11);
	gf_peq_free(&p);
}

static void test_rew_sample(void)
{
	char path[4096];
	size_t len;
	snprintf(path, sizeof(path), "%s/config/filters/rew-filters.txt", srcdir);
	const char *text = read_text(path, &len);
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_parse_text(text, len, path, &p, &eb), &eb);
	CHECK(p.n == 4 && p.preamp_db == 0.0); /* the OFF filter and the None slots are skipped */
	check_band(&p.bands[0], GF_PEQ_PEAKING, 41.0, -8.5, 4.0, 10);
	check_band(&p.bands[2], GF_PEQ_PEAKING, 112.0, -3.2, 3.5, 12);
	check_band(&p.bands[3], GF_PEQ_LOWSHELF, 80.0, 2.0, GF_PEQ_DEFAULT_Q, 13); /* LS without Q */
	gf_peq_free(&p);
}

static void test_text_forms(void)
{
	const char *text = "# comment\n\n"
			   "Preamp: -3 dB\n"
			   "Preamp: -1.5\n"
			   "Filter: ON PEQ Fc 100 Hz Gain 1.0 dB BW Oct 0.167\n"
			   "Filter 2: ON LPQ Fc 10000 Hz Q 0.400\n"
			   "\tFilter 3 : ON HP Fc 30\r\n"
			   "Filter 4: ON NO Fc 50 Hz Q 30\n"
			   "Filter 5: ON BP Fc 1000 Hz Q 2\n"
			   "Filter 6: ON AP Fc 1000 Hz Q 0.7\n"
			   "Filter 7: OFF XYZ whatever\n"
			   "Filter 8: ON HSC Fc 8000 Hz Gain -2 dB";
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_parse_text(text, strlen(text), "t.txt", &p, &eb), &eb);
	CHECK(p.n == 7 && p.preamp_db == -4.5);
	CHECK(p.bands[0].type == GF_PEQ_PEAKING && p.bands[0].bw_oct == 0.167 && p.bands[0].q == 0.0);
	check_band(&p.bands[1], GF_PEQ_LOWPASS, 10000.0, 0.0, 0.4, 6);
	check_band(&p.bands[2], GF_PEQ_HIGHPASS, 30.0, 0.0, GF_PEQ_DEFAULT_Q, 7);
	check_band(&p.bands[3], GF_PEQ_NOTCH, 50.0, 0.0, 30.0, 8);
	CHECK(p.bands[4].type == GF_PEQ_BANDPASS && p.bands[5].type == GF_PEQ_ALLPASS);
	check_band(&p.bands[6], GF_PEQ_HIGHSHELF, 8000.0, -2.0, GF_PEQ_DEFAULT_Q, 12);
	gf_peq_free(&p);
}

static void test_text_errors(void)
{
	static const struct {
		const char *text;
		const char *msg; /* what follows "e.txt:" */
	} bad[] = {
		{"Preamp: -6 dB\nFilter 1: ON XX Fc 100 Hz\n", "2: unknown filter type \"XX\""},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q 1\nChannel: L\n",
		 "2: \"Channel: L\" is not a Preamp: or Filter:"},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q 0\n", "1: Q: must be above 0"},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q -2\n", "1: Q: must be above 0"},
		{"\n\nFilter 1: ON PK Gain 1 dB Q 1\n", "3: Fc: a peaking band needs a frequency"},
		{"Filter 1: ON PK Fc 100 Hz Q 1\n", "1: Gain: a peaking band needs a gain"},
		{"Filter 1: ON LP Fc 100 Hz Gain 3 dB\n", "1: Gain: a lowpass band has no gain"},
		{"Filter 1: ON LPQ Fc 100 Hz\n", "1: Q: a LPQ filter needs Q"},
		{"Filter 1: ON NO Fc 100 Hz\n", "1: Q: a notch band needs q"},
		{"Filter 1: ON PK Fc 100 Hz Fc 200 Hz Gain 1 dB Q 1\n", "1: Fc is given twice"},
		{"Filter 1: ON PK Fc abc Hz Gain 1 dB Q 1\n", "1: \"abc\" is not a number"},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q 1 T60 3\n", "1: unknown setting \"T60\""},
		{"Filter 1: ON LS 12dB Fc 100 Hz Gain 1 dB\n", "1: unknown setting \"12dB\""},
		{"Filter 1: MAYBE PK Fc 100 Hz\n", "1: Filter: expected ON or OFF"},
		{"Filter 1: ON\n", "1: Filter: the filter type is missing"},
		{"Preamp: loud\n", "1: \"loud\" is not a number"},
		{"Preamp: -90 dB\n", "1: Preamp: must be -60..30 dB"},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q 1 BW Oct 1\n", "1: Q: a peaking band takes one of"},
		{"Filter Settings file\nheader\nFilter 1: ON PK Fc 100 Hz Gain 1 dB Q 1\nstray text\n",
		 "4: \"stray text\" is not a Preamp: or Filter:"},
		{"Filter 1: ON PK Fc 100 Hz Gain 1 dB Q 1\n\xef\xbb\xbfjunk\n", "2: "},
		{"Preamp: -1 dB\n\0Filter\n", "2: a NUL byte"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_peq p = {0};
		struct gf_errbuf eb = {{0}};
		size_t len = strlen(bad[i].text);
		if (strstr(bad[i].msg, "NUL"))
			len += 8;
		CHECK(gf_peq_parse_text(bad[i].text, len, "e.txt", &p, &eb) == GF_E_FORMAT);
		printf("  %s\n", eb.msg);
		CHECK(strncmp(eb.msg, "e.txt:", 6) == 0 &&
		      strncmp(eb.msg + 6, bad[i].msg, strlen(bad[i].msg)) == 0);
		gf_peq_free(&p);
	}
	/* a line over 1024 characters, and more bands than the limit */
	char *big = malloc(300 * 64);
	memset(big, 'x', 2000);
	big[2000] = '\0';
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	CHECK(gf_peq_parse_text(big, 2000, "e.txt", &p, &eb) == GF_E_FORMAT &&
	      strstr(eb.msg, "e.txt:1: a line longer"));
	size_t len = 0;
	for (int i = 0; i < 300; i++)
		len += (size_t)sprintf(big + len, "Filter %d: ON PK Fc %d Hz Gain 1 dB Q 1\n", i + 1,
				       100 + i);
	CHECK(gf_peq_parse_text(big, len, "e.txt", &p, &eb) == GF_E_FORMAT &&
	      strstr(eb.msg, "e.txt:257: bands: more than 256"));
	gf_peq_free(&p);
	free(big);
}

/* ---- the config's design = "peq" ----------------------------------------- */

/* Build @p conf (written into dir) at @p rate: channel 0's FIR, in double. */
static double *build(const char *conf, uint32_t rate, uint32_t *n, struct gf_config **out)
{
	char *path = gf_test_write_text_in(dir, "peq.conf", conf);
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(path, &c, &eb), &eb);
	struct gf_filter_set *fs;
	CHECK_OK_EB(gf_config_build(c, rate, 1, &fs, &eb), &eb);
	double *h = malloc(fs->taps * sizeof(double));
	for (uint32_t i = 0; i < fs->taps; i++)
		h[i] = gf_filter_set_channel(fs, 0)[i];
	*n = fs->taps;
	gf_filter_set_free(fs);
	free(path);
	if (out)
		*out = c;
	else
		gf_config_free(c);
	return h;
}

/* The file's bands and preamp, as the config reads them. */
static void sample_peq(struct gf_peq *p)
{
	char path[4096];
	size_t len;
	snprintf(path, sizeof(path), "%s/config/filters/autoeq-ParametricEQ.txt", srcdir);
	const char *text = read_text(path, &len);
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_parse_text(text, len, path, p, &eb), &eb);
}

/* The FIR within 0.06 dB (the bound, and float taps) of @p p (less @p extra_db) at every band's centre. */
static void check_centres(const double *h, uint32_t n, const struct gf_peq *p, double extra_db, double rate)
{
	for (uint32_t i = 0; i < p->n; i++) {
		double f = p->bands[i].freq_hz;
		double got = 20.0 * log10(gf_design_response(h, n, f, rate));
		double want = 20.0 * log10(gf_peq_response(p, f, rate)) + extra_db;
		if (want < -60.0) /* a notch: as deep as float taps go */
			CHECK(got < -60.0);
		else
			CHECK(fabs(got - want) <= 0.06);
	}
}

static void test_config_file(void)
{
	char sub[4200], conf[1024];
	snprintf(sub, sizeof(sub), "%s/eq", dir);
	CHECK(mkdir(sub, 0755) == 0);
	char src[4096];
	size_t len;
	snprintf(src, sizeof(src), "%s/config/filters/autoeq-ParametricEQ.txt", srcdir);
	const char *text = read_text(src, &len);
	char *eq = gf_test_path(sub, "ParametricEQ.txt");
	gf_test_write_file(eq, text, len);
	struct gf_peq p = {0};
	sample_peq(&p);
	const double rates[] = {44100.0, 48000.0, 96000.0};
	for (int phase = 0; phase < 2; phase++) {
		snprintf(conf, sizeof(conf),
			 "filters = ( { name = \"hp\"; design = \"peq\"; file = \"eq/ParametricEQ.txt\";\n"
			 "  preamp_db = -1.0; gain_db = -0.5; } );\nchain = [\"hp\"];\nphase = \"%s\";\n",
			 phase ? "minimum" : "linear");
		for (int ri = 0; ri < 3; ri++) {
			struct gf_config *c;
			uint32_t n;
			double *h = build(conf, (uint32_t)rates[ri], &n, &c);
			check_centres(h, n, &p, -1.5, rates[ri]);
			int sym = 1;
			for (uint32_t i = 0; i < n / 2; i++)
				sym = sym && fabs(h[i] - h[n - 1 - i]) <= 1e-6;
			CHECK(sym == !phase);
			int watched = 0; /* the EQ text is watched for reload, by its resolved path */
			for (uint32_t i = 0; i < c->n_files; i++)
				watched |= strcmp(c->files[i], eq) == 0;
			CHECK(watched);
			printf("  file, %s phase, %.0f Hz: %u taps, centres within 0.06 dB\n",
			       phase ? "minimum" : "linear", rates[ri], n);
			gf_config_free(c);
			free(h);
		}
	}
	gf_peq_free(&p);
	free(eq);
}

static void test_config_bands(void)
{
	const char *conf =
		"filters = ( { name = \"eq\"; design = \"peq\"; preamp_db = -3.0;\n"
		"  bands = ( { type = \"peaking\"; freq_hz = 1000.0; gain_db = 6.0; q = 1.0; },\n"
		"            { type = \"highshelf\"; freq_hz = 6000; gain_db = -4.0; slope = 0.8; },\n"
		"            { type = \"notch\"; freq_hz = 60.0; bandwidth_oct = 0.1; } ); } );\n"
		"chain = [\"eq\"];\n";
	struct gf_peq p = {.preamp_db = -3.0};
	struct gf_errbuf eb = {{0}};
	const struct gf_peq_band b[] = {{GF_PEQ_PEAKING, 1000.0, 6.0, 1.0, 0, 0, 1, 0},
					{GF_PEQ_HIGHSHELF, 6000.0, -4.0, 0, 0, 0.8, 1, 0},
					{GF_PEQ_NOTCH, 60.0, 0, 0, 0.1, 0, 0, 0}};
	for (int i = 0; i < 3; i++)
		CHECK_OK(gf_peq_add(&p, &b[i], &eb));
	uint32_t n;
	double *h = build(conf, 48000, &n, NULL);
	check_centres(h, n, &p, 0.0, 48000.0);
	CHECK(fabs(20.0 * log10(gf_design_response(h, n, 1000.0, 48000.0)) - 3.0) < 0.06); /* +6 - 3 */
	CHECK(gf_design_response(h, n, 60.0, 48000.0) < 1e-4);				   /* float taps */
	free(h);
	gf_peq_free(&p);
}

struct bad_conf {
	const char *text;
	uint32_t rate; /* 0: a load error */
	int line;
	const char *what; /* after "peq.conf:LINE: " */
};

#define PEQ(settings)                                                                                        \
	"filters = (\n { name = \"eq\"; design = \"peq\";\n" settings " }\n);\nchain = [\"eq\"];\n"
#define BAND(b) PEQ("  bands = (\n  " b " );")

static const struct bad_conf bad_confs[] = {
	{BAND("{ type = \"bell\"; freq_hz = 100.0; q = 1.0; }"), 0, 4,
	 "filters.eq.bands[0].type: unknown band type"},
	{BAND("{ type = \"peaking\"; freq_hz = 0.0; gain_db = 1.0; q = 1.0; }"), 0, 4,
	 "filters.eq.bands[0].freq_hz: a peaking band needs a frequency above 0 Hz"},
	{BAND("{ type = \"peaking\"; freq_hz = 100.0; gain_db = 1.0; q = 0.0; }"), 0, 4,
	 "filters.eq.bands[0].q: must be above 0"},
	{BAND("{ type = \"peaking\"; freq_hz = 100.0; gain_db = 1.0;\n q = -2.0; }"), 0, 5,
	 "filters.eq.bands[0].q: must be above 0"},
	{BAND("{ type = \"notch\"; freq_hz = 100.0; bandwidth_oct = 0; }"), 0, 4,
	 "filters.eq.bands[0].bandwidth_oct: must be above 0 (got 0)"},
	{BAND("{ type = \"lowshelf\"; freq_hz = 100.0; gain_db = 1.0;\n slope = 0.0; }"), 0, 5,
	 "filters.eq.bands[0].slope: must be above 0 (got 0)"},
	{BAND("{ type = \"lowpass\"; freq_hz = 100.0; gain_db = 1.0; }"), 0, 4,
	 "filters.eq.bands[0].gain_db: a lowpass band has no gain"},
	{BAND("{ type = \"peaking\"; freq_hz = 100.0; q = 1.0; }"), 0, 4,
	 "filters.eq.bands[0].gain_db: a peaking band needs"},
	{BAND("{ freq_hz = 100.0; }"), 0, 4, "filters.eq.bands[0].type: missing"},
	{BAND("{ type = \"notch\"; freq_hz = \"x\"; q = 1.0; }"), 0, 4,
	 "filters.eq.bands[0].freq_hz: must be a number"},
	{PEQ("  bands = ( );"), 0, 3, "filters.eq.bands: is empty"},
	{PEQ("  preamp_db = -1.0;"), 0, 2, "filters.eq: a peq needs one of bands"},
	{PEQ("  file = \"missing.txt\";"), 0, 3, "filters.eq.file: "},
	{PEQ("  file = \"bad.txt\";"), 0, 3, "filters.eq.file: DIR/bad.txt:2: unknown filter type \"ZZ\""},
	{PEQ("  file = \"bad.txt\"; bands = ( { type = \"notch\"; freq_hz = 50.0; q = 5.0; } );"), 0, 2,
	 "filters.eq: a peq needs one of"},
	{PEQ("  preamp_db = 50.0; bands = ( { type = \"notch\"; freq_hz = 50.0; q = 5.0; } );"), 0, 3,
	 "filters.eq.preamp_db"},
	{PEQ("  taps = 1000; bands = ( { type = \"notch\"; freq_hz = 50.0; q = 5.0; } );"), 0, 3,
	 "filters.eq.taps: must be odd"},
	{BAND("{ type = \"notch\"; freq_hz = 50.0; q = 5.0; },\n { type = \"peaking\"; freq_hz = 30000.0; "
	      "gain_db = 2.0; q = 1.0; }"),
	 48000, 5, "filters.eq.bands[1].freq_hz: 30000 Hz is not below half the sample rate"},
	{PEQ("  file = \"high.txt\";"), 44100, 3,
	 "filters.eq.file: DIR/high.txt:3: Fc: 23000 Hz is not below"},
	{BAND("{ type = \"peaking\"; freq_hz = 10.0; gain_db = 12.0; q = 100.0; }"), 96000, 4,
	 "filters.eq.bands[0]: staying within 0.05 dB"},
	{PEQ("  taps = 3;\n  bands = ( { type = \"notch\"; freq_hz = 50.0; q = 5.0; }, { type = \"lowpass\"; "
	     "freq_hz = 9000.0; } );"),
	 48000, 3, "filters.eq.taps: must be odd, at least 5 for these bands and at most 1048575 (got 3)"},
};

static void test_config_errors(void)
{
	free(gf_test_write_text_in(dir, "bad.txt", "Preamp: -1 dB\nFilter 1: ON ZZ Fc 100 Hz\n"));
	free(gf_test_write_text_in(dir, "high.txt",
				   "# fine at 48 kHz and up\n"
				   "Filter 1: ON PK Fc 1000 Hz Gain 1 dB Q 1\n"
				   "Filter 2: ON PK Fc 23000 Hz Gain 1 dB Q 1\n"));
	for (size_t i = 0; i < sizeof(bad_confs) / sizeof(bad_confs[0]); i++) {
		const struct bad_conf *b = &bad_confs[i];
		char *path = gf_test_write_text_in(dir, "peq.conf", b->text);
		struct gf_config *c = NULL;
		struct gf_errbuf eb = {{0}};
		int r = gf_config_load(path, &c, &eb);
		if (b->rate) {
			CHECK_OK_EB(r, &eb);
			struct gf_filter_set *fs = NULL;
			r = gf_config_build(c, b->rate, 1, &fs, &eb);
			CHECK(fs == NULL);
			gf_config_free(c);
		}
		printf("  %s\n", eb.msg);
		CHECK(r == GF_E_CONFIG);
		char want[8192], what[1024];
		const char *d = strstr(b->what, "DIR");
		if (d)
			snprintf(what, sizeof(what), "%.*s%s%s", (int)(d - b->what), b->what, dir, d + 3);
		else
			snprintf(what, sizeof(what), "%s", b->what);
		snprintf(want, sizeof(want), "%s:%d: %s", path, b->line, what);
		CHECK(strncmp(eb.msg, want, strlen(want)) == 0);
		free(path);
	}
}

static void test_config(void)
{
	test_config_file();
	test_config_bands();
	test_config_errors();
}

int main(void)
{
	srcdir = getenv("GPUFIR_SOURCE_DIR");
	CHECK(srcdir);
	dir = gf_test_tmpdir("peq");
	test_autoeq_sample();
	test_rew_sample();
	test_text_forms();
	test_text_errors();
	test_config();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_peq_import: OK\n");
	return 0;
}
