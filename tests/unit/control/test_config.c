/*
 * Configuration: every shipped example loads and builds; the built-in
 * default equals config/gpufir.conf; each validation error names the file,
 * line and setting (table-driven); unknown keys only warn; chains
 * pre-convolve to sequential filtering; routes apply gain, delay and
 * polarity exactly; relative paths, @include and the watched-files list.
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
	CHECK(fs->channels == ch);
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
	      def->sample_rate == file->sample_rate && def->gpu_index == file->gpu_index);
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
	gf_config_free(def);
	gf_config_free(file);
}

/* ---- validation errors -------------------------------------------------- */

struct bad {
	const char *text;
	int code;
	int line;	     /* 0: message is "FILE: SETTING: why" */
	const char *setting; /* NULL: a syntax error ("FILE:LINE: text") */
	const char *why;
};

/*
 * Most cases: one filter NAME whose settings start on line 2 (and may go on
 * over more lines), used by the chain; or a valid filter and chain on lines
 * 1-2, then the routes from line 4.
 */
#define FILTER(name, settings)                                                                               \
	"filters = (\n { name = \"" name "\"; " settings " }\n);\nchain = [\"" name "\"];\n"
#define ROUTES(routes)                                                                                       \
	"filters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = [\"a\"];\nroutes = (\n" routes "\n);\n"

static const struct bad load_errors[] = {
	{"filters = ( { name = \"a\"; coeffs = [1.0, 2]; } );\nchain = [\"a\"];\n", GF_E_CONFIG, 1, NULL, ""},
	{"sample_rate = 48000;\nblock_frames = = 128;\n", GF_E_CONFIG, 2, NULL, "syntax error"},
	{"\nblock_frames = 8;\n", GF_E_CONFIG, 2, "block_frames", "16..8192"},
	{"block_frames = \"128\";\n", GF_E_CONFIG, 1, "block_frames", "must be an integer"},
	{"block_frames = 128.5;\n", GF_E_CONFIG, 1, "block_frames", "whole number"},
	{"sample_rate = 1000;\n", GF_E_CONFIG, 1, "sample_rate", "8000..384000"},
	{"crossfade_ms = -1.0;\n", GF_E_CONFIG, 1, "crossfade_ms", "0..10000"},
	{"\n\ncrossfade_ms = 20000;\n", GF_E_CONFIG, 3, "crossfade_ms", "0..10000"},
	{"latency_slack = 17;\n", GF_E_CONFIG, 1, "latency_slack", "0..16"},
	{"\nlatency_slack = \"fast\";\n", GF_E_CONFIG, 2, "latency_slack", "\"auto\" or 0..16"},
	{"backend = \"gpu\";\n", GF_E_CONFIG, 1, "backend", "\"auto\", \"cpu\", \"cuda\""},
	{"algo = 3;\n", GF_E_CONFIG, 1, "algo", "must be a string"},
	{"log_level = \"loud\";\n", GF_E_CONFIG, 1, "log_level", "must be one of"},
	{"gpu = -1;\n", GF_E_CONFIG, 1, "gpu", "0..255"},
	{"max_taps = 20000000;\n", GF_E_CONFIG, 1, "max_taps", "0..16777216"},
	{"status_socket = \"\";\n", GF_E_CONFIG, 1, "status_socket", "empty"},
	{"input = 5;\n", GF_E_CONFIG, 1, "input", "must be a group"},
	{"output = {\n  channels = 5000;\n};\n", GF_E_CONFIG, 2, "output.channels", "0..1024"},
	{"input = { host_api = 1; };\n", GF_E_CONFIG, 1, "input.host_api", "must be a string"},
	{"block_frames = 128;\n", GF_E_CONFIG, 0, "filters", "missing"},
	{"filters = ();\nchain = [];\n", GF_E_CONFIG, 1, "filters", "is empty"},
	{"filters = ( 1 );\n", GF_E_CONFIG, 1, "filters", "must be a group"},
	{"filters = { a = { coeffs = [1.0]; }; };\n", GF_E_CONFIG, 1, "filters", "must be a list"},
	{"filters = (\n { coeffs = [1.0]; }\n);\n", GF_E_CONFIG, 2, "filters[0].name", "missing"},
	{"filters = (\n { name = \"a\"; coeffs = [1.0]; },\n { name = \"a\";\n coeffs = [2.0]; }\n);\n",
	 GF_E_CONFIG, 3, "filters.a.name", "duplicate filter name (first defined at line 2)"},
	{"filters = (\n { name = \"a\"; coeffs = [1.0]; design = \"lowpass\"; }\n);\n", GF_E_CONFIG, 2,
	 "filters.a", "exactly one of coeffs, file, design"},
	{"filters = (\n { name = \"a\"; }\n);\n", GF_E_CONFIG, 2, "filters.a", "exactly one of"},
	{"filters = (\n { name = \"a\";\n   coeffs = [];\n }\n);\n", GF_E_CONFIG, 3, "filters.a.coeffs",
	 "is empty"},
	{"filters = (\n { name = \"a\";\n   coeffs = [\"x\"];\n }\n);\n", GF_E_CONFIG, 3, "filters.a.coeffs",
	 "must be a number"},
	{"filters = (\n { name = \"a\";\n   coeffs = ( 1.0,\n 2,\n true );\n }\n);\n", GF_E_CONFIG, 5,
	 "filters.a.coeffs", "element 2 must be a number"},
	{"filters = (\n { name = \"a\";\n   coeffs = 1.0;\n }\n);\n", GF_E_CONFIG, 3, "filters.a.coeffs",
	 "must be an array"},
	{"filters = (\n { name = \"a\"; coeffs = [1e999]; }\n);\n", GF_E_CONFIG, 2, "filters.a.coeffs",
	 "not finite"},
	{"filters = ( { name = \"a\"; coeffs = [1.0]; } );\n", GF_E_CONFIG, 0, "chain", "missing"},
	{"filters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = [\"a\",\n \"b\"];\n", GF_E_CONFIG, 3,
	 "chain", "no filter named \"b\""},
	{"filters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = \"a\";\n", GF_E_CONFIG, 2, "chain",
	 "must be an array of filter names"},
	{ROUTES(" { channel = 0;\n chain = [\"zz\"]; }"), GF_E_CONFIG, 5, "routes[0].chain",
	 "no filter named \"zz\""},
	{ROUTES(" { channel = 1; },\n { channel = 1; }"), GF_E_CONFIG, 5, "routes[1].channel",
	 "channel 1 already has a route (line 4)"},
	{ROUTES(" { gain_db = 1.0; }"), GF_E_CONFIG, 4, "routes[0].channel", "missing"},
	{ROUTES(" { channel = 0;\n invert = 1; }"), GF_E_CONFIG, 5, "routes[0].invert", "true or false"},
	{ROUTES(" { channel = 0;\n delay_ms = 20000.0; }"), GF_E_CONFIG, 5, "routes[0].delay_ms", "0..10000"},
	{ROUTES(" { channel = 0;\n gain_db = 100.0; }"), GF_E_CONFIG, 5, "routes[0].gain_db", "-150..60"},
	{FILTER("a", "\n   design = \"allpass\";"), GF_E_CONFIG, 3, "filters.a.design",
	 "unknown design \"allpass\""},
	{FILTER("a", "design = \"lowpass\"; taps = 101;"), GF_E_CONFIG, 2, "filters.a.cutoff_hz", "missing"},
	{FILTER("a", "design = \"lowpass\"; cutoff_hz = 100.0;"), GF_E_CONFIG, 2, "filters.a.taps",
	 "taps (odd) or transition_hz"},
	{FILTER("a", "design = \"highpass\"; cutoff_hz = 100.0;\n taps = 256;"), GF_E_CONFIG, 3,
	 "filters.a.taps", "must be odd"},
	{FILTER("a", "design = \"highpass\"; cutoff_hz = 100.0;\n taps = 0;"), GF_E_CONFIG, 3,
	 "filters.a.taps", "1..16777216"},
	{FILTER("a", "design = \"lowpass\";\n cutoff_hz = -5.0; taps = 11;"), GF_E_CONFIG, 3,
	 "filters.a.cutoff_hz", "above 0"},
	{FILTER("a", "design = \"bandpass\"; low_hz = 500.0;\n high_hz = 400.0; taps = 11;"), GF_E_CONFIG, 3,
	 "filters.a.high_hz", "above low_hz"},
	{FILTER("a", "design = \"bandstop\"; high_hz = 400.0; taps = 11;"), GF_E_CONFIG, 2,
	 "filters.a.low_hz", "missing"},
	{FILTER("hum", "design = \"notch\"; freq_hz = 50.0;"), GF_E_CONFIG, 2, "filters.hum",
	 "exactly one of taps, bandwidth_hz, q"},
	{FILTER("hum", "design = \"notch\"; freq_hz = [50.0, 60.0];\n bandwidth_hz = 55.0;"), GF_E_CONFIG, 3,
	 "filters.hum.bandwidth_hz", "below freq_hz (50 Hz)"},
	{FILTER("hum", "design = \"notch\"; bandwidth_hz = 5.0;"), GF_E_CONFIG, 2, "filters.hum.freq_hz",
	 "missing"},
	{FILTER("hum", "design = \"notch\"; freq_hz = 50.0; q = 0.5;"), GF_E_CONFIG, 2, "filters.hum.q",
	 "1..10000"},
	{FILTER("a", "design = \"lowpass\"; cutoff_hz = 100.0; taps = 11;\n attenuation_db = 5.0;"),
	 GF_E_CONFIG, 3, "filters.a.attenuation_db", "20..200"},
	{FILTER("d", "design = \"delay\";"), GF_E_CONFIG, 2, "filters.d.delay_ms", "missing"},
	{FILTER("a", "\n   file = \"no-such-file.txt\";"), GF_E_CONFIG, 3, "filters.a.file", "No such file"},
	{FILTER("a", "file = \"taps.txt\";\n format = \"mp3\";"), GF_E_CONFIG, 3, "filters.a.format",
	 "\"text\" or \"wav\""},
	{FILTER("a", "file = \"ir.wav\";\n channel = -1;"), GF_E_CONFIG, 3, "filters.a.channel", "0..1023"},
	{FILTER("a", "file = \"ir.wav\";\n length = 0;"), GF_E_CONFIG, 3, "filters.a.length", "1..16777216"},
	{FILTER("a", "coeffs = [1.0];\n gain_db = 100.0;"), GF_E_CONFIG, 3, "filters.a.gain_db", "-150..60"},
};

/* Build-time (rate- and file-dependent) errors: load succeeds, build fails. */
struct bad_build {
	struct bad b;
	uint32_t rate, channels;
};

static const struct bad_build build_errors[] = {
	{{FILTER("a", "design = \"lowpass\";\n cutoff_hz = 30000.0; taps = 11;"), GF_E_CONFIG, 3,
	  "filters.a.cutoff_hz", "not below half the sample rate (24000 Hz at 48000 Hz)"},
	 48000,
	 2},
	{{FILTER("a", "design = \"bandpass\"; low_hz = 5000.0;\n high_hz = 9000.0; taps = 11;"), GF_E_CONFIG,
	  3, "filters.a.high_hz", "(8000 Hz at 16000 Hz)"},
	 16000,
	 1},
	{{FILTER("a", "design = \"notch\"; freq_hz = [50.0,\n 9000.0]; taps = 101;"), GF_E_CONFIG, 2,
	  "filters.a.freq_hz", "9000 Hz"},
	 16000,
	 1},
	{{FILTER("a", "\n file = \"garbage.txt\";"), GF_E_CONFIG, 3, "filters.a.file",
	  "garbage.txt:3: column 1: not a number"},
	 48000,
	 2},
	{{FILTER("a", "\n file = \"nan.txt\";"), GF_E_NONFINITE, 3, "filters.a.file", "nan.txt:2: 'nan'"},
	 48000,
	 2},
	{{FILTER("room", "\n file = \"ir44.wav\";"), GF_E_RATE, 3, "filters.room.file",
	  "at 44100 Hz but the filter runs at 48000 Hz"},
	 48000,
	 2},
	{{FILTER("room", "file = \"ir44.wav\";\n channel = 1;"), GF_E_CONFIG, 2, "filters.room.file",
	  "channel 1, but the file has 1 channel"},
	 44100,
	 2},
	{{FILTER("room", "file = \"ir44.wav\";\n offset = 10; length = 100;"), GF_E_CONFIG, 2,
	  "filters.room.file", "offset 10 + length 100 exceed the file's 64 frames"},
	 44100,
	 2},
	{{ROUTES(" { channel = 0; },\n { channel = 3; }"), GF_E_CONFIG, 5, "routes[1].channel",
	  "channel 3, but the audio has 2 channels (0..1)"},
	 48000,
	 2},
	{{"max_taps = 100;\n"
	  "filters = ( { name = \"a\"; design = \"lowpass\"; cutoff_hz = 1000.0; taps = 255; } );\n"
	  "chain = [\"a\"];\n",
	  GF_E_TOOLONG, 2, "filters.a", "255 taps, more than max_taps = 100 (line 1)"},
	 48000,
	 2},
	{{"max_taps = 300;\n"
	  "filters = (\n { name = \"a\"; design = \"lowpass\"; cutoff_hz = 1000.0; taps = 255; },\n"
	  " { name = \"b\"; coeffs = [1.0, 2.0]; }\n);\nchain = [\"a\", \"a\", \"b\"];\n",
	  GF_E_TOOLONG, 1, "max_taps", "the chain reaches 509 taps, more than max_taps = 300"},
	 48000,
	 2},
	{{"max_taps = 300;\n"
	  "filters = ( { name = \"a\"; design = \"lowpass\"; cutoff_hz = 1000.0; taps = 255; } );\n"
	  "chain = [\"a\"];\nroutes = ( { channel = 1; delay_ms = 1.0; } );\n",
	  GF_E_TOOLONG, 1, "max_taps", "the filter has 303 taps, more than max_taps = 300"},
	 48000,
	 2},
};

static void check_message(const struct bad *b, const char *path, int r, const char *msg)
{
	printf("  expected error %d: %s\n", r, msg);
	if (r != b->code)
		fprintf(stderr, "got %d, want %d\n", r, b->code);
	CHECK(r == b->code);
	char prefix[4400];
	if (!b->setting)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, b->line);
	else if (b->line)
		snprintf(prefix, sizeof(prefix), "%s:%d: %s: ", path, b->line, b->setting);
	else
		snprintf(prefix, sizeof(prefix), "%s: %s: ", path, b->setting);
	if (strncmp(msg, prefix, strlen(prefix)) != 0)
		fprintf(stderr, "want prefix: %s\n", prefix);
	CHECK(strncmp(msg, prefix, strlen(prefix)) == 0);
	if (!strstr(msg, b->why))
		fprintf(stderr, "want text: %s\n", b->why);
	CHECK(strstr(msg, b->why) != NULL);
}

static void write_wav(const char *name, int rate, uint32_t frames)
{
	char *p = gf_test_path(dir, name);
	float x[1024] = {1.0f, 0.5f};
	CHECK(frames <= 1024);
	gf_test_write_sound(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, rate, 1, frames, x);
	free(p);
}

static void test_errors(void)
{
	free(gf_test_write_text_in(dir, "taps.txt", "1.0\n"));
	free(gf_test_write_text_in(dir, "garbage.txt", "1.0\n2.0\nzap\n"));
	free(gf_test_write_text_in(dir, "nan.txt", "1.0\nnan\n"));
	write_wav("ir.wav", 48000, 16);
	write_wav("ir44.wav", 44100, 64);
	for (size_t i = 0; i < sizeof(load_errors) / sizeof(load_errors[0]); i++) {
		const struct bad *b = &load_errors[i];
		char *p = gf_test_write_text_in(dir, "bad.conf", b->text);
		struct gf_config *c = (struct gf_config *)1;
		struct gf_errbuf eb = {{0}};
		int r = gf_config_load(p, &c, &eb);
		CHECK(c == NULL);
		check_message(b, p, r, eb.msg);
		/* the same text from a string names "<string>" */
		struct gf_errbuf eb2 = {{0}};
		CHECK(gf_config_load_string(b->text, dir, &c, &eb2) == b->code && c == NULL);
		CHECK(strncmp(eb2.msg, "<string>:", 9) == 0);
		free(p);
	}
	for (size_t i = 0; i < sizeof(build_errors) / sizeof(build_errors[0]); i++) {
		const struct bad_build *b = &build_errors[i];
		char *p = gf_test_write_text_in(dir, "bad.conf", b->b.text);
		struct gf_config *c;
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_config_load(p, &c, &eb), &eb);
		struct gf_filter_set *fs = (struct gf_filter_set *)1;
		int r = gf_config_build(c, b->rate, b->channels, &fs, &eb);
		CHECK(fs == NULL);
		check_message(&b->b, p, r, eb.msg);
		gf_config_free(c);
		free(p);
	}
	/* a missing config file is an I/O error naming the path */
	struct gf_config *c;
	struct gf_errbuf eb;
	char *p = gf_test_path(dir, "nope.conf");
	CHECK(gf_config_load(p, &c, &eb) == GF_E_IO && c == NULL);
	CHECK(strstr(eb.msg, p) && strstr(eb.msg, "No such file"));
	free(p);
}

/* Unknown settings warn (with file:line) but load. */
static void test_unknown_keys_warn(void)
{
	char *p = gf_test_write_text_in(dir, "warn.conf",
					"sample_rate = 48000;\n"
					"colour = \"blue\";\n"
					"filters = (\n"
					" { name = \"a\"; coeffs = [1.0];\n"
					"   cutoff_hz = 100.0;\n"
					"   flavour = 1; },\n"
					" { name = \"unused\"; coeffs = [1.0]; }\n"
					");\n"
					"input = { device = \"x\"; volume = 11; };\n"
					"routes = ( { channel = 0; pan = 0.5; } );\n"
					"chain = [\"a\"];\n");
	char *log = gf_test_path(dir, "warn.log");
	fflush(stderr);
	int saved = dup(2);
	int fd = open(log, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	int r = gf_config_load(p, &c, &eb);
	fflush(stderr);
	dup2(saved, 2);
	close(fd);
	close(saved);
	CHECK_OK_EB(r, &eb);
	static char text[8192];
	CHECK(gf_test_read_file(log, text, sizeof(text)) >= 0);
	printf("%s", text);
	char want[4400];
	const char *lines[] = {":2: colour: unknown setting",
			       ":5: filters.a.cutoff_hz: not used by a coeffs filter",
			       ":6: filters.a.flavour: unknown setting",
			       ":9: input.volume: unknown setting",
			       ":10: routes[0].pan: unknown setting",
			       ":7: filters.unused: defined but not used"};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", p, lines[i]);
		CHECK(strstr(text, want) != NULL);
	}
	CHECK(c->input.device && strcmp(c->input.device, "x") == 0);
	gf_config_free(c);
	free(p);
	free(log);
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
		"status_socket = \"/run/x.sock\";\n"
		"input = { device = \"USB\"; host_api = \"ALSA\"; channels = 2; };\n"
		"output = { device = 3; channels = 4; };\n"
		"filters = ( { name = \"id\"; design = \"identity\"; } );\nchain = [\"id\"];\n";
	struct gf_config *c = load_string_or_die(text);
	struct gf_errbuf eb = {{0}};
	CHECK(c->sample_rate == 96000 && c->block_frames == 64 && c->backend == GF_BACKEND_CPU &&
	      c->algo == GF_ALGO_FFT && c->gpu_index == 1 && c->crossfade_ms == 5.0 && c->max_taps == 65536 &&
	      c->log_level == GF_LOG_DEBUG && strcmp(c->status_socket, "/run/x.sock") == 0 &&
	      c->latency_slack == 3 && !c->latency_slack_auto);
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

int main(void)
{
	srcdir = getenv("GPUFIR_SOURCE_DIR");
	if (!srcdir)
		gf_test_skip("GPUFIR_SOURCE_DIR not set");
	uint64_t seed = gf_test_seed("test_config");
	dir = gf_test_tmpdir("config");
	test_examples();
	test_default_equals_file();
	test_errors();
	test_unknown_keys_warn();
	test_chain_equals_sequential(&seed);
	test_routes_exact();
	test_routes_without_chain();
	test_files_and_paths();
	test_settings_parsed();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_config: ok\n");
	return 0;
}
