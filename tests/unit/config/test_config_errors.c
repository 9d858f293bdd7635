/*
 * Configuration errors: each validation error, at load or at build, names the
 * file, line and setting (table-driven, every case printed), the noise
 * suppressor's too (its settings, one per chain, its noise sample), and the neural
 * stage's (its settings, its model file, one per chain, its rate, its runtime); a missing file
 * names its path; unknown settings only warn, with file and line.
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
/* Endpoints @p io, then a valid filter and chain. */
#define PW(io) io "filters = ( { name = \"a\"; coeffs = [1.0]; } );\nchain = [\"a\"];\n"
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
	{"control_port = 70000;\n", GF_E_CONFIG, 1, "control_port", "0..65535"},
	{"\ncontrol_port = \"8080\";\n", GF_E_CONFIG, 2, "control_port", "must be an integer"},
	{"control_socket = \"\";\n", GF_E_CONFIG, 1, "control_socket", "must not be empty"},
	{"control_address = 127;\n", GF_E_CONFIG, 1, "control_address", "must be a string"},
	{"control_allowed_origins = \"http://a:1\";\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "must be an array of origins"},
	{"control_allowed_origins = [\"*\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "\"*\" and \"null\" would let any page in"},
	{"control_allowed_origins = [\"null\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "must name one"},
	{"control_allowed_origins = [\"box.lan:8080\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "must start with http:// or https://"},
	{"control_allowed_origins = [\"http://box.lan:8080/\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "no path, query or trailing slash"},
	{"control_allowed_origins = [\"http://box.lan:99999\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "not 1..65535"},
	{"control_allowed_origins = [\"http://box.lan:80\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "default port"},
	{"control_allowed_origins = [\"http://[::1\"];\n", GF_E_CONFIG, 1, "control_allowed_origins",
	 "unclosed"},
	{"control_allowed_origins = [\"https://\"];\n", GF_E_CONFIG, 1, "control_allowed_origins", "no host"},
	{"\ncontrol_allowed_origins = (\"http://ok:1\", 2);\n", GF_E_CONFIG, 2, "control_allowed_origins",
	 "element 1 must be an origin"},
	{"\nlatency_slack = \"fast\";\n", GF_E_CONFIG, 2, "latency_slack", "\"auto\" or 0..16"},
	{"backend = \"gpu\";\n", GF_E_CONFIG, 1, "backend", "\"auto\", \"cpu\", \"cuda\""},
	{"algo = 3;\n", GF_E_CONFIG, 1, "algo", "must be a string"},
	{"log_level = \"loud\";\n", GF_E_CONFIG, 1, "log_level", "must be one of"},
	{"\ngpu_path = \"resident\";\n", GF_E_CONFIG, 2, "gpu_path",
	 "must be one of \"launched\", \"auto\", \"persistent\" (got \"resident\")"},
	{"gpu = -1;\n", GF_E_CONFIG, 1, "gpu", "0..255"},
	{"max_taps = 20000000;\n", GF_E_CONFIG, 1, "max_taps", "0..16777216"},
	{"status_socket = \"\";\n", GF_E_CONFIG, 1, "status_socket", "empty"},
	{"input = 5;\n", GF_E_CONFIG, 1, "input", "must be a group"},
	{"output = {\n  channels = 5000;\n};\n", GF_E_CONFIG, 2, "output.channels", "0..1024"},
	{"input = { host_api = 1; };\n", GF_E_CONFIG, 1, "input.host_api", "must be a string"},
	/* PipeWire on one side: the other side is gpufir's own node (a source, or a sink). */
	{PW("input = { host_api = \"pipewire\"; };\noutput = { host_api = \"JACK\"; };\n"), GF_E_CONFIG, 2,
	 "output.host_api",
	 "\"JACK\" cannot go with input.host_api = \"PipeWire\": the output is gpufir's own "
	 "PipeWire source"},
	{PW("output = { host_api = \"PipeWire\"; };\ninput = {\n host_api = \"ALSA\"; };\n"), GF_E_CONFIG, 3,
	 "input.host_api",
	 "\"ALSA\" cannot go with output.host_api = \"PipeWire\": the input is gpufir's own "
	 "PipeWire sink"},
	{PW("input = { host_api = \"PipeWire\"; device = 2; };\n"), GF_E_CONFIG, 1, "input.device",
	 "the node.name of the source to capture, a string"},
	{PW("output = { host_api = \"PipeWire\";\n device = 3; };\n"), GF_E_CONFIG, 2, "output.device",
	 "the node.name of the sink to play to, a string (pw-cli ls Node lists them), not a PortAudio device "
	 "index"},
	{PW("output = { host_api = \"PipeWire\"; };\ninput = { device = 0; };\n"), GF_E_CONFIG, 2,
	 "input.device", "gpufir's sink's node.name"},
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
	{FILTER("nr", "design = \"suppress\";\n reduction_db = 50.0;"), GF_E_CONFIG, 3,
	 "filters.nr.reduction_db", "0..40"},
	{FILTER("nr", "design = \"suppress\";\n reduction_db = \"lots\";"), GF_E_CONFIG, 3,
	 "filters.nr.reduction_db", "must be a number"},
	{FILTER("nr", "design = \"suppress\";\n highpass_hz = 10.0;"), GF_E_CONFIG, 3,
	 "filters.nr.highpass_hz", "must be 0 (off) or 20..1000 Hz (got 10)"},
	{FILTER("nr", "design = \"suppress\";\n highpass_hz = 2000.0;"), GF_E_CONFIG, 3,
	 "filters.nr.highpass_hz", "0..1000"},
	{FILTER("nr", "design = \"suppress\";\n highpass_hz = -25.0;"), GF_E_CONFIG, 3,
	 "filters.nr.highpass_hz", "0..1000"},
	{FILTER("nr", "design = \"suppress\";\n noise = \"no-such-noise.wav\";"), GF_E_CONFIG, 3,
	 "filters.nr.noise", "No such file"},
	{"filters = (\n { name = \"a\"; design = \"suppress\"; },\n { name = \"b\"; design = \"suppress\"; "
	 "}\n);\n"
	 "chain = [\"a\",\n \"b\"];\n",
	 GF_E_CONFIG, 6, "chain",
	 "\"b\" is a second suppressor (design = \"suppress\") in this chain, after \"a\""},
	{FILTER("dfn", "design = \"deepfilter\"; model = \"model.tar.gz\";\n atten_lim_db = 0.0;"),
	 GF_E_CONFIG, 3, "filters.dfn.atten_lim_db", "1..100"},
	{FILTER("dfn", "design = \"deepfilter\"; model = \"model.tar.gz\";\n post_filter_beta = 2.0;"),
	 GF_E_CONFIG, 3, "filters.dfn.post_filter_beta", "0..0.5"},
	{FILTER("dfn", "design = \"deepfilter\";\n model = \"no-such-model.tar.gz\";"), GF_E_CONFIG, 3,
	 "filters.dfn.model", "No such file"},
	{FILTER("dfn", "design = \"deepfilter\";"), GF_E_CONFIG, 2, "filters.dfn",
	 "the default DeepFilterNet3 model is not installed"},
	{FILTER("dfn", "design = \"deepfilter\"; model = \"model.tar.gz\";\n runtime = \"gpu\";"),
	 GF_E_CONFIG, 3, "filters.dfn.runtime",
	 "must be \"engine\" (gpufir's own inference) or \"reference\""},
	/* the engine's own inference (the default runtime) loads the tarball's conversion beside it */
	{FILTER("dfn", "design = \"deepfilter\";\n model = \"model.tar.gz\";"), GF_E_CONFIG, 3,
	 "filters.dfn.model", "runtime \"engine\" loads the converted model beside"},
	{FILTER("dfn", "design = \"deepfilter\"; runtime = \"reference\";"), GF_E_CONFIG, 2, "filters.dfn",
	 "the default DeepFilterNet3 model is not installed"},
	{"filters = (\n { name = \"a\"; design = \"deepfilter\"; model = \"model.tar.gz\"; runtime = "
	 "\"reference\"; },\n { name = \"b\"; design = \"deepfilter\"; model = \"model.tar.gz\"; runtime = "
	 "\"reference\"; }\n);\nchain = [\"a\",\n \"b\"];\n",
	 GF_E_CONFIG, 6, "chain", "\"b\" is a second neural stage (design = \"deepfilter\") in this chain"},
	{"filters = ( { name = \"a\"; design = \"suppress\"; } );\nchain = [\"a\"];\nroutes = (\n { channel "
	 "= 0;\n"
	 " chain = [\"a\", \"a\"]; }\n);\n",
	 GF_E_CONFIG, 5, "routes[0].chain", "at most one"},
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
/* The suppressor's noise sample, read when its bank is made (gf_config_suppress_new). */
static const struct bad_build suppress_errors[] = {
	{{FILTER("nr", "design = \"suppress\";\n noise = \"noise44.wav\";"), GF_E_CONFIG, 3,
	  "filters.nr.noise", "at 44100 Hz but the filter runs at 48000 Hz"},
	 48000,
	 2},
	{{FILTER("nr", "design = \"suppress\";\n noise = \"silent.wav\";"), GF_E_CONFIG, 3,
	  "filters.nr.noise", "is silent"},
	 48000,
	 1},
	/* the neural stage: DeepFilterNet3 at 48 kHz only; its runtime looked for in an empty folder */
	{{FILTER("dfn", "design = \"deepfilter\"; runtime = \"reference\";\n model = \"model.tar.gz\";"),
	  GF_E_CONFIG, 2, "filters.dfn", "DeepFilterNet3 runs at 48000 Hz only, not 16000 Hz"},
	 16000,
	 1},
	{{FILTER("dfn", "design = \"deepfilter\"; runtime = \"reference\";\n model = \"model.tar.gz\";"),
	  GF_E_CONFIG, 2, "filters.dfn", "the DeepFilterNet runtime could not be loaded"},
	 48000,
	 2},
	/* the engine's own inference on a .dfn that is not a model: named, at build */
	{{FILTER("dfn", "design = \"deepfilter\";\n model = \"garbage.dfn\";"), GF_E_CONFIG, 2, "filters.dfn",
	  "garbage.dfn"},
	 48000,
	 2},
	{{"filters = (\n { name = \"a\"; design = \"deepfilter\"; model = \"garbage.dfn\"; },\n { name = "
	  "\"b\"; "
	  "design = \"deepfilter\"; model = \"garbage.dfn\"; }\n);\nchain = [\"a\"];\n"
	  "routes = ( { channel = 1; chain = [\"b\"]; } );\n",
	  GF_E_CONFIG, 3, "filters.b", "channel 1 runs a second neural stage (\"a\")"},
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
	free(gf_test_write_text_in(dir, "model.tar.gz", "not a model\n"));
	free(gf_test_write_text_in(dir, "garbage.dfn", "not a model\n"));
	setenv("GPUFIR_DEEPFILTER_DIR", dir, 1); /* no runtime, no default model there */
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
	write_wav("noise44.wav", 44100, 1024);
	char *silent = gf_test_path(dir, "silent.wav");
	static const float zeros[4800];
	gf_test_write_sound(silent, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, 4800, zeros);
	free(silent);
	for (size_t i = 0; i < sizeof(suppress_errors) / sizeof(suppress_errors[0]); i++) {
		const struct bad_build *b = &suppress_errors[i];
		char *p = gf_test_write_text_in(dir, "bad.conf", b->b.text);
		struct gf_config *c;
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_config_load(p, &c, &eb), &eb);
		struct gf_suppress_bank *bank = (struct gf_suppress_bank *)1;
		int r = gf_config_suppress_new(c, b->rate, b->channels, &bank, &eb);
		CHECK(bank == NULL);
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

int main(void)
{
	dir = gf_test_tmpdir("config-errors");
	test_errors();
	test_unknown_keys_warn();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_config_errors: ok\n");
	return 0;
}
