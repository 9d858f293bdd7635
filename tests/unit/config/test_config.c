/*
 * Configuration: every shipped example loads and builds; the built-in
 * default equals config/gpufir.conf; chains pre-convolve to sequential
 * filtering; routes apply gain, delay and polarity exactly; relative paths,
 * @include and the watched-files list; the noise suppressor's settings, per
 * route, and what a reload compares. Errors: test_config_errors.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sndutil.h"
#include "suppress_bank.h"
#include "testutil.h"

static char *dir;
static const char *srcdir;

static struct gf_config *load_string_or_die(const char *text)
{
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, NULL, &c, &eb), &eb);
	return c;
}

static struct gf_filter_set *build_or_die(const struct gf_config *c, uint32_t rate, uint32_t ch)
{
	struct gf_filter_set *fs;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_build(c, rate, ch, &fs, &eb), &eb);
	CHECK(gf_filter_set_inputs(fs) == ch); /* a mixer (crossover.conf) has a FIR per path */
	CHECK(gf_filter_set_check_finite(fs) == 0);
	return fs;
}

/* ---- shipped configs ---------------------------------------------------- */

static void load_build_example(const char *path)
{
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(path, &c, &eb), &eb);
	CHECK(c->n_files >= 1 && strcmp(c->files[0], path) == 0);
	for (uint32_t i = 0; i < c->n_files; i++)
		CHECK(access(c->files[i], R_OK) == 0);
	uint32_t channels = 2;
	if (strstr(path, "stereo.conf")) /* its routes address a third channel */
		channels = 3;
	struct gf_filter_set *fs = build_or_die(c, 48000, channels);
	printf("  %-40s %6u taps, %u channels, %u files\n", strrchr(path, '/') + 1, fs->taps, channels,
	       c->n_files);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

static void test_examples(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/config/gpufir.conf", srcdir);
	load_build_example(path);
	snprintf(path, sizeof(path), "%s/config/examples", srcdir);
	DIR *d = opendir(path);
	CHECK(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0)
			continue;
		char p[4400];
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		load_build_example(p);
		n++;
	}
	closedir(d);
	CHECK(n >= 5);
}

static void test_default_equals_file(void)
{
	struct gf_config *def, *file;
	struct gf_errbuf eb = {{0}};
	char path[4096];
	snprintf(path, sizeof(path), "%s/config/gpufir.conf", srcdir);
	CHECK_OK(gf_config_default(&def));
	CHECK_OK_EB(gf_config_load(path, &file, &eb), &eb);
	CHECK(def->path == NULL && def->n_files == 0);
	CHECK(def->block_frames == file->block_frames && def->backend == file->backend &&
	      def->algo == file->algo && def->crossfade_ms == file->crossfade_ms &&
	      def->max_taps == file->max_taps && def->log_level == file->log_level &&
	      def->sample_rate == file->sample_rate && def->gpu_index == file->gpu_index &&
	      def->gpu_path == GF_GPU_PATH_LAUNCHED && file->gpu_path == GF_GPU_PATH_LAUNCHED);
	CHECK(def->block_frames == 256 && def->crossfade_ms == 20.0 && def->sample_rate == 0 &&
	      def->latency_slack_auto == 1);
	const uint32_t rates[] = {44100, 48000, 96000};
	for (int i = 0; i < 3; i++) {
		struct gf_filter_set *a = build_or_die(def, rates[i], 2),
				     *b = build_or_die(file, rates[i], 2);
		CHECK(a->taps == b->taps);
		CHECK(memcmp(a->coeffs, b->coeffs, (size_t)a->taps * 2 * sizeof(float)) == 0);
		printf("  default chain at %u Hz: %u taps\n", rates[i], a->taps);
		if (rates[i] == 48000)
			CHECK(a->taps <= 8192); /* fits the direct GPU path's constant-memory bank */
		gf_filter_set_free(a);
		gf_filter_set_free(b);
	}
	struct gf_config_suppress sd, sf; /* and the same suppressor */
	CHECK(gf_config_suppress_of(def, 0, &sd) == 1 && gf_config_suppress_of(file, 0, &sf) == 1);
	CHECK(strcmp(sd.name, sf.name) == 0 && sd.reduction_db == sf.reduction_db &&
	      sd.highpass_hz == sf.highpass_hz && !sd.noise && !sf.noise);
	gf_config_free(def);
	gf_config_free(file);
}

/* ---- chains and routes -------------------------------------------------- */

static void test_chain_equals_sequential(uint64_t *seed)
{
	enum { NA = 7, NB = 13, NC = 5, FRAMES = 2000 };
	const uint32_t lens[3] = {NA, NB, NC};
	float h[3][NB];
	char text[8192], *t = text;
	t += sprintf(t, "filters = (\n");
	for (int k = 0; k < 3; k++) {
		gf_test_fill_decaying_taps(h[k], lens[k], seed);
		t += sprintf(t, " { name = \"f%d\"; coeffs = [", k);
		for (uint32_t i = 0; i < lens[k]; i++)
			t += sprintf(t, "%s%.9e", i ? ", " : "", (double)h[k][i]);
		t += sprintf(t, "]; }%s\n", k < 2 ? "," : "");
	}
	sprintf(t, ");\nchain = [\"f0\", \"f1\", \"f2\"];\n");
	struct gf_config *c = load_string_or_die(text);
	struct gf_filter_set *fs = build_or_die(c, 48000, 1);
	CHECK(fs->taps == NA + NB + NC - 2);

	/* sequential: x -> f0 -> f1 -> f2, all in double */
	static float x[FRAMES];
	static double y[FRAMES], seq[FRAMES], tmp[FRAMES];
	gf_test_fill_noise(x, FRAMES, seed);
	for (int i = 0; i < FRAMES; i++)
		seq[i] = x[i];
	for (int k = 0; k < 3; k++) {
		memcpy(tmp, seq, sizeof(seq));
		for (int n = 0; n < FRAMES; n++) {
			double acc = 0.0;
			for (uint32_t j = 0; j < lens[k] && j <= (uint32_t)n; j++)
				acc += (double)h[k][j] * tmp[n - j];
			seq[n] = acc;
		}
	}
	gf_test_reference(x, FRAMES, 1, fs->coeffs, fs->taps, y);
	double err = 0, ref = 0;
	for (int i = 0; i < FRAMES; i++) {
		err += (y[i] - seq[i]) * (y[i] - seq[i]);
		ref += seq[i] * seq[i];
	}
	printf("  chain of 3 = sequential: rel L2 %.3g\n", sqrt(err / ref));
	CHECK(sqrt(err / ref) < 1e-6);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

static void test_routes_exact(void)
{
	const char *text =
		"filters = (\n"
		" { name = \"a\"; coeffs = [0.5, -0.25, 0.125]; },\n"
		" { name = \"b\"; coeffs = [1.0, 0.5]; },\n"
		" { name = \"loud\"; coeffs = [1.0]; gain_db = 6.0; }\n"
		");\n"
		"chain = [\"a\"];\n"
		"routes = (\n"
		" { channel = 1; chain = [\"a\", \"b\"]; gain_db = -3.0; delay_ms = 1.5; invert = true; },\n"
		" { channel = 2; delay_ms = 0.5; },\n"
		" { channel = 4; chain = [\"loud\"]; },\n"
		" { channel = 5; chain = []; invert = true; }\n"
		");\n";
	struct gf_config *c = load_string_or_die(text);
	const uint32_t rates[] = {48000, 44100};
	for (int ri = 0; ri < 2; ri++) {
		uint32_t rate = rates[ri];
		uint32_t d1 = (uint32_t)lround(1.5 * rate / 1000.0),
			 d2 = (uint32_t)lround(0.5 * rate / 1000.0);
		CHECK(d1 == (rate == 48000 ? 72u : 66u) && d2 == (rate == 48000 ? 24u : 22u));
		struct gf_filter_set *fs = build_or_die(c, rate, 6);
		CHECK(fs->taps == d1 + 4);
		const double a[] = {0.5, -0.25, 0.125}, ab[] = {0.5, 0.0, 0.0, 0.0625};
		double g = pow(10.0, -3.0 / 20.0), loud = pow(10.0, 6.0 / 20.0);
		for (uint32_t ch = 0; ch < 6; ch++) {
			const float *h = gf_filter_set_channel(fs, ch);
			for (uint32_t i = 0; i < fs->taps; i++) {
				double want = 0.0;
				if ((ch == 0 || ch == 3) && i < 3)
					want = a[i];
				else if (ch == 1 && i >= d1)
					want = -g * ab[i - d1];
				else if (ch == 2 && i >= d2 && i < d2 + 3)
					want = a[i - d2];
				else if (ch == 4 && i == 0)
					want = loud;
				else if (ch == 5 && i == 0)
					want = -1.0;
				if (h[i] != (float)want)
					fprintf(stderr, "rate %u ch %u tap %u: %.9g want %.9g\n", rate, ch, i,
						h[i], want);
				CHECK(h[i] == (float)want);
			}
		}
		gf_filter_set_free(fs);
	}
	gf_config_free(c);
}

/* Without a global chain, channels that have no route pass through unchanged. */
static void test_routes_without_chain(void)
{
	const char *text = "filters = ( { name = \"a\"; coeffs = [0.5, 0.25]; } );\n"
			   "routes = ( { channel = 0; chain = [\"a\"]; } );\n";
	struct gf_config *c = load_string_or_die(text);
	struct gf_filter_set *fs = build_or_die(c, 48000, 2);
	const float want[2][2] = {{0.5f, 0.25f}, {1.0f, 0.0f}};
	CHECK(fs->taps == 2 && memcmp(fs->coeffs, want, sizeof(want)) == 0);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

/* ---- files ---------------------------------------------------------------- */

static void test_files_and_paths(void)
{
	/* relative paths resolve against the config's folder, not the working directory */
	char *sub = gf_test_path(dir, "sub");
	CHECK(mkdir(sub, 0700) == 0 || access(sub, F_OK) == 0);
	char *conf = gf_test_path(dir, "sub/main.conf");
	char *more = gf_test_path(dir, "sub/more.conf");
	char *taps = gf_test_path(dir, "sub/t.txt");
	free(gf_test_write_text_in(dir, "sub/t.txt", "0.5\n0.25\n"));
	free(gf_test_write_text_in(dir, "sub/more.conf", "chain = [\"t\", \"lp\"];\n"));
	free(gf_test_write_text_in(
		dir, "sub/main.conf",
		"filters = (\n"
		" { name = \"t\"; file = \"t.txt\"; },\n"
		" { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 4000.0; taps = 31; }\n"
		");\n"
		"@include \"more.conf\"\n"
		"output = { file = \"rec.wav\"; };\n"));
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof(cwd)));
	CHECK(chdir("/") == 0);
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(conf, &c, &eb), &eb);
	CHECK(chdir(cwd) == 0);
	for (uint32_t i = 0; i < c->n_files; i++)
		printf("  watched: %s\n", c->files[i]);
	CHECK(c->n_files == 3);
	CHECK(strcmp(c->files[0], conf) == 0);
	int have_more = 0, have_taps = 0;
	for (uint32_t i = 1; i < 3; i++) {
		have_more |= strcmp(c->files[i], more) == 0;
		have_taps |= strcmp(c->files[i], taps) == 0;
	}
	CHECK(have_more && have_taps);
	CHECK(c->n_chain == 2 && strcmp(c->chain[1], "lp") == 0);
	CHECK(c->output.file && strstr(c->output.file, "/sub/rec.wav"));
	struct gf_filter_set *fs = build_or_die(c, 48000, 1);
	CHECK(fs->taps == 32);
	gf_filter_set_free(fs);
	gf_config_free(c);
	free(sub);
	free(conf);
	free(more);
	free(taps);
}

static void test_settings_parsed(void)
{
	const char *text =
		"sample_rate = 96000;\nblock_frames = 64;\nbackend = \"cpu\";\nalgo = \"fft\";\n"
		"gpu = 1;\ncrossfade_ms = 5;\nmax_taps = 65536;\nlog_level = \"debug\";\nlatency_slack = 3;\n"
		"status_socket = \"/run/x.sock\";\ngpu_path = \"persistent\";\n"
		"input = { device = \"USB\"; host_api = \"ALSA\"; channels = 2; };\n"
		"output = { device = 3; channels = 4; };\n"
		"filters = ( { name = \"id\"; design = \"identity\"; } );\nchain = [\"id\"];\n";
	struct gf_config *c = load_string_or_die(text);
	struct gf_errbuf eb = {{0}};
	CHECK(c->sample_rate == 96000 && c->block_frames == 64 && c->backend == GF_BACKEND_CPU &&
	      c->algo == GF_ALGO_FFT && c->gpu_index == 1 && c->crossfade_ms == 5.0 && c->max_taps == 65536 &&
	      c->log_level == GF_LOG_DEBUG && strcmp(c->status_socket, "/run/x.sock") == 0 &&
	      c->latency_slack == 3 && !c->latency_slack_auto && c->gpu_path == GF_GPU_PATH_PERSISTENT);
	CHECK(strcmp(c->input.device, "USB") == 0 && strcmp(c->input.host_api, "ALSA") == 0 &&
	      c->input.channels == 2);
	CHECK(strcmp(c->output.device, "3") == 0 && c->output.channels == 4 && !c->output.file);
	/* rate 0: build at the config's sample_rate */
	struct gf_filter_set *fs = build_or_die(c, 0, 2);
	CHECK(fs->taps == 1 && fs->coeffs[0] == 1.0f && fs->coeffs[1] == 1.0f);
	gf_filter_set_free(fs);
	gf_config_free(c);
	/* no rate anywhere: a clear error, not a design at 0 Hz */
	CHECK_OK(gf_config_default(&c));
	CHECK(gf_config_build(c, 0, 2, &fs, &eb) == GF_E_RATE && fs == NULL);
	printf("  expected error: %s\n", eb.msg);
	gf_config_free(c);
	c = load_string_or_die(
		"latency_slack = \"auto\";\nfilters = ( { name = \"id\"; design = \"identity\"; } );\n"
		"chain = [\"id\"];\n");
	CHECK(c->latency_slack_auto == 1);
	gf_config_free(c);
}

/* ---- the noise suppressor (design = "suppress") --------------------------- */

/* Not an FIR: the chain's FIR part is what it would be without it, wherever it stands. */
static void test_suppress_parsed(void)
{
	struct gf_config *c = load_string_or_die(
		"filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 31; },\n"
		"  { name = \"nr\"; design = \"suppress\"; } );\nchain = [\"nr\", \"lp\"];\n");
	struct gf_config *plain = load_string_or_die(
		"filters = ( { name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 31; } );\n"
		"chain = [\"lp\"];\n");
	struct gf_config_suppress s;
	CHECK(gf_config_has_suppress(c) && !gf_config_has_suppress(plain));
	CHECK(gf_config_suppress_of(c, 1, &s) == 1);
	CHECK(strcmp(s.name, "nr") == 0 && s.reduction_db == GF_SUPPRESS_DEFAULT_REDUCTION_DB && !s.noise);
	struct gf_filter_set *a = build_or_die(c, 48000, 2), *b = build_or_die(plain, 48000, 2);
	CHECK(a->taps == 31 && b->taps == 31);
	CHECK(memcmp(a->coeffs, b->coeffs, 31 * 2 * sizeof(float)) == 0);
	gf_filter_set_free(a);
	gf_filter_set_free(b);
	/* the bank: every channel, the suppressor's latency (its frame, within 24 ms) */
	struct gf_suppress_bank *bank;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_suppress_new(c, 48000, 2, &bank, &eb), &eb);
	uint32_t lag = bank ? gf_suppress_bank_latency(bank) : 0;
	CHECK(bank && gf_suppress_bank_active(bank) == 2 && lag > 0 &&
	      lag <= GF_SUPPRESS_MAX_FRAME_S * 48000);
	gf_suppress_bank_free(bank);
	CHECK_OK_EB(gf_config_suppress_new(plain, 48000, 2, &bank, &eb), &eb);
	CHECK(bank == NULL);
	char why[200];
	CHECK(gf_config_suppress_differs(c, c, 2, why, sizeof(why)) == 0);
	CHECK(gf_config_suppress_differs(plain, c, 2, why, sizeof(why)) == 1 && strstr(why, "added"));
	printf("  suppressor change: %s\n", why);
	gf_config_free(plain);
	gf_config_free(c);
}

/* bypass: read, a floor of 1 (built at 0 dB, so offline too), live; two suppressors that had the same
 * settings (one GPU batch) given different live settings: a restart. */
static void test_suppress_bypass(void)
{
	static const char *const fmt = "filters = ( { name = \"a\"; design = \"suppress\"; %s },\n"
				       "  { name = \"b\"; design = \"suppress\"; } );\nchain = [\"a\"];\n"
				       "routes = ( { channel = 1; chain = [\"b\"]; } );\n";
	char text[400];
	snprintf(text, sizeof(text), fmt, "");
	struct gf_config *c = load_string_or_die(text);
	snprintf(text, sizeof(text), fmt, "bypass = true;");
	struct gf_config *d = load_string_or_die(text);
	struct gf_config_suppress s;
	CHECK(gf_config_suppress_of(d, 0, &s) == 1 && s.bypass && gf_config_suppress_of(d, 1, &s) &&
	      !s.bypass);
	float floors[2];
	gf_config_suppress_floors(d, 2, NULL, floors);
	CHECK(floors[0] == 1.0f &&
	      fabsf(floors[1] - (float)pow(10.0, -GF_SUPPRESS_DEFAULT_REDUCTION_DB / 20)) < 1e-6f);
	struct gf_suppress_bank *bank;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_suppress_new(d, 48000, 2, &bank, &eb), &eb);
	CHECK(bank && gf_suppress_bank_floor(bank, 0) == 1.0f &&
	      gf_suppress_bank_floor(bank, 1) == floors[1]);
	gf_suppress_bank_free(bank);
	char why[200];
	CHECK(gf_config_suppress_live_differs(c, d, 2) == GF_SUPPRESS_LIVE_BYPASS);
	CHECK(gf_config_suppress_differs(c, d, 2, why, sizeof(why)) == 1 &&
	      strstr(why, "had the same settings"));
	printf("  suppressor change: %s\n", why);
	gf_config_free(d);
	snprintf(text, sizeof(text), fmt, "bypass = 1;");
	CHECK(gf_config_load_string(text, NULL, &d, &eb) == GF_E_CONFIG &&
	      strstr(eb.msg, "filters.a.bypass") && strstr(eb.msg, "true or false"));
	gf_config_free(c);
}

/* The neural stage's settings as parsed, per channel, and what a reload sees change (the model need
 * only be a readable file here: nothing loads it). The engine (the default runtime) given an
 * archive takes DeepFilterNet3.dfn beside it; "reference" the archive itself. */
static void test_neural_parsed(void)
{
	free(gf_test_write_text_in(dir, "m.dfn", "model\n"));
	free(gf_test_write_text_in(dir, "m2.dfn", "another model\n"));
	free(gf_test_write_text_in(dir, "m.tar.gz", "archive\n"));
	free(gf_test_write_text_in(dir, "DeepFilterNet3.dfn", "converted\n"));
	static const char *fmt =
		"filters = ( { name = \"f\"; coeffs = [1.0]; },\n  { name = \"dfn\"; design = "
		"\"deepfilter\"; model = \"%s\"; %s } );\nchain = [\"f\"];\n"
		"routes = ( { channel = 1; chain = [\"f\", \"dfn\"]; } );\n";
	enum { N = 7 };
	static const char *const variants[N][3] = {
		{"m.dfn", "", ""},
		{"m.dfn", "atten_lim_db = 20.0;", NULL}, /* live */
		{"m.dfn", "post_filter_beta = 0.02;", "neural stage post_filter_beta 0 -> 0.02"},
		{"m.dfn", "bypass = true;", NULL}, /* live */
		{"m2.dfn", "", "neural stage model"},
		{"m.tar.gz", "runtime = \"reference\";", "neural stage runtime reference"},
		{"m.tar.gz", "runtime = \"engine\";", "neural stage model"},
	};
	struct gf_config *c[N];
	for (int i = 0; i < N; i++) {
		char text[600];
		snprintf(text, sizeof(text), fmt, variants[i][0], variants[i][1]);
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_config_load_string(text, dir, &c[i], &eb), &eb);
	}
	struct gf_config_neural n;
	CHECK(gf_config_has_suppress(c[0]) && !gf_config_neural_of(c[0], 0, &n) &&
	      gf_config_neural_of(c[0], 1, &n) == 1);
	CHECK(strcmp(n.name, "dfn") == 0 && strstr(n.model, "m.dfn") && n.atten_lim_db == 100.0 &&
	      n.post_filter_beta == 0.0 && !n.bypass && !n.reference);
	CHECK(gf_config_neural_of(c[1], 1, &n) && n.atten_lim_db == 20.0);
	CHECK(gf_config_neural_of(c[5], 1, &n) && n.reference && strstr(n.model, "/m.tar.gz"));
	CHECK(gf_config_neural_of(c[6], 1, &n) && !n.reference && strstr(n.model, "/DeepFilterNet3.dfn"));
	char why[300];
	CHECK(gf_config_suppress_differs(c[0], c[0], 2, why, sizeof(why)) == 0);
	for (int i = 1; i < N; i++) {
		int differs = gf_config_suppress_differs(c[0], c[i], 2, why, sizeof(why));
		printf("  neural stage change: %s\n", differs ? why : "live");
		CHECK(differs == (variants[i][2] != NULL));
		CHECK(!differs || strstr(why, variants[i][2]) != NULL);
	}
	/* atten_lim_db and bypass alone apply to the running stage, each its own bit */
	CHECK(gf_config_suppress_live_differs(c[0], c[0], 2) == 0);
	CHECK(gf_config_suppress_live_differs(c[0], c[1], 2) == GF_NEURAL_LIVE_ATTEN);
	CHECK(gf_config_suppress_live_differs(c[1], c[3], 2) ==
	      (GF_NEURAL_LIVE_ATTEN | GF_NEURAL_LIVE_BYPASS));
	CHECK(gf_config_suppress_live_differs(c[0], c[2], 2) == 0);
	for (int i = 0; i < N; i++)
		gf_config_free(c[i]);
}

/* Per route: a channel whose chain has none is only delayed; settings and noise as given. */
static void test_suppress_routes(void)
{
	char *noise = gf_test_path(dir, "room.wav");
	uint64_t seed = 7;
	static float x[48000];
	gf_test_fill_noise(x, 48000, &seed);
	for (size_t i = 0; i < 48000; i++)
		x[i] *= 0.01f;
	gf_test_write_sound(noise, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, 48000, x);
	char *p = gf_test_write_text_in(dir, "nr.conf",
					"filters = ( { name = \"id\"; design = \"identity\"; },\n"
					"  { name = \"nr\"; design = \"suppress\"; reduction_db = 12.0;\n"
					"    noise = \"room.wav\"; } );\n"
					"chain = [\"id\", \"nr\"];\n"
					"routes = ( { channel = 1; chain = [\"id\"]; } );\n");
	struct gf_config *c, *d;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load(p, &c, &eb), &eb);
	struct gf_config_suppress s;
	CHECK(gf_config_suppress_of(c, 0, &s) == 1 && s.reduction_db == 12.0 && strcmp(s.noise, noise) == 0);
	CHECK(gf_config_suppress_of(c, 1, &s) == 0);
	CHECK(gf_config_suppress_of(c, 2, &s) == 1);
	int watched = 0;
	for (uint32_t i = 0; i < c->n_files; i++)
		watched |= strcmp(c->files[i], noise) == 0;
	CHECK(watched);
	struct gf_suppress_bank *bank;
	CHECK_OK_EB(gf_config_suppress_new(c, 48000, 3, &bank, &eb), &eb);
	CHECK(bank && gf_suppress_bank_active(bank) == 2);
	/* channel 1 comes out delayed by the same latency as the others */
	uint32_t lag = gf_suppress_bank_latency(bank);
	static float buf[3 * 4096];
	for (uint32_t i = 0; i < 4096; i++)
		buf[3 * i + 1] = (float)(i + 1);
	gf_suppress_bank_process(bank, buf, 4096);
	for (uint32_t i = 0; i < 4096; i++)
		CHECK(buf[3 * i + 1] == (i < lag ? 0.0f : (float)(i + 1 - lag)));
	gf_suppress_bank_free(bank);
	/* a reload: the same file unchanged, then another reduction */
	CHECK_OK_EB(gf_config_load(p, &d, &eb), &eb);
	char why[200];
	CHECK(gf_config_suppress_differs(c, d, 3, why, sizeof(why)) == 0);
	gf_config_free(d);
	free(p);
	p = gf_test_write_text_in(dir, "nr.conf",
				  "filters = ( { name = \"id\"; design = \"identity\"; },\n"
				  "  { name = \"nr\"; design = \"suppress\"; reduction_db = 20.0;\n"
				  "    noise = \"room.wav\"; } );\n"
				  "chain = [\"id\", \"nr\"];\n"
				  "routes = ( { channel = 1; chain = [\"id\"]; } );\n");
	CHECK_OK_EB(gf_config_load(p, &d, &eb), &eb);
	/* reduction_db alone is live: no new suppressor, the running one takes the new floor */
	CHECK(gf_config_suppress_differs(c, d, 3, why, sizeof(why)) == 0);
	CHECK(gf_config_suppress_live_differs(c, d, 3) == GF_SUPPRESS_LIVE_DEPTH);
	float floors[3];
	gf_config_suppress_floors(d, 3, NULL, floors);
	CHECK(fabsf(floors[0] - 0.1f) < 1e-6f && floors[1] == 1.0f && floors[2] == floors[0]);
	struct gf_suppress_live over = {.has_bypass = 1, .bypass = 1};
	gf_config_suppress_floors(d, 3, &over, floors);
	CHECK(floors[0] == 1.0f && floors[2] == 1.0f);
	over = (struct gf_suppress_live){.has_depth = 1, .depth_db = 40.0};
	gf_config_suppress_floors(d, 3, &over, floors);
	CHECK(fabsf(floors[0] - 0.01f) < 1e-6f && floors[1] == 1.0f);
	gf_config_free(d);
	free(p);
	p = gf_test_write_text_in(dir, "nr.conf",
				  "filters = ( { name = \"id\"; design = \"identity\"; },\n"
				  "  { name = \"nr\"; design = \"suppress\"; reduction_db = 12.0;\n"
				  "    highpass_hz = 30.0; noise = \"room.wav\"; } );\n"
				  "chain = [\"id\", \"nr\"];\n"
				  "routes = ( { channel = 1; chain = [\"id\"]; } );\n");
	CHECK_OK_EB(gf_config_load(p, &d, &eb), &eb);
	struct gf_config_suppress hs;
	CHECK(gf_config_suppress_of(d, 0, &hs) == 1 && hs.highpass_hz == 30.0);
	CHECK(gf_config_suppress_differs(c, d, 3, why, sizeof(why)) == 1 &&
	      strstr(why, "highpass_hz 0 -> 30"));
	printf("  suppressor change: %s\n", why);
	gf_config_free(d);
	gf_config_free(c);
	free(p);
	free(noise);
}

/* The built-in default ends in the suppressor (docs/config.md, "The built-in default"). */
static void test_default_suppresses(void)
{
	struct gf_config *c;
	CHECK_OK(gf_config_default(&c));
	struct gf_config_suppress s;
	CHECK(gf_config_suppress_of(c, 0, &s) == 1 && strcmp(s.name, "nr") == 0 && !s.noise);
	CHECK(s.reduction_db == GF_SUPPRESS_DEFAULT_REDUCTION_DB);
	CHECK(s.highpass_hz == 25.0); /* the rumble filter: zero phase, in the suppressor's frames */
	gf_config_free(c);
}

int main(void)
{
	srcdir = getenv("GPUFIR_SOURCE_DIR");
	if (!srcdir)
		gf_test_skip("GPUFIR_SOURCE_DIR not set");
	uint64_t seed = gf_test_seed("test_config");
	dir = gf_test_tmpdir("config");
	test_examples();
	test_default_equals_file();
	test_chain_equals_sequential(&seed);
	test_routes_exact();
	test_routes_without_chain();
	test_files_and_paths();
	test_settings_parsed();
	test_suppress_parsed();
	test_neural_parsed();
	test_suppress_routes();
	test_suppress_bypass();
	test_default_suppresses();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_config: ok\n");
	return 0;
}
