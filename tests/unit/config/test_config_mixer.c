/*
 * The mixer in the config: `mixer = { inputs; outputs; paths = (...); }`
 * builds a mixer filter set whose paths carry their chain, gain, polarity
 * and delay exactly (at two rates); a path without a chain runs the
 * top-level one, or passes through; channel counts are checked at build;
 * every validation error names the file, line and setting; unused outputs
 * and inputs warn; without a mixer nothing changes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "testutil.h"

static struct gf_config *load(const char *text)
{
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, ".", &c, &eb), &eb);
	return c;
}

#define FILTERS                                                                                              \
	"filters = (\n"                                                                                      \
	" { name = \"lp\"; coeffs = [0.5, 0.25, 0.125]; },\n"                                                \
	" { name = \"hp\"; coeffs = [1.0, -0.5]; },\n"                                                       \
	" { name = \"sup\"; design = \"suppress\"; }\n"                                                      \
	");\n"

static void test_build_exact(void)
{
	const char *text =
		FILTERS "chain = [\"hp\"];\n"
			"mixer = {\n"
			" inputs = 2;\n"
			" outputs = 4;\n"
			" paths = (\n"
			"  { in = 0; out = 0; chain = [\"lp\"]; gain_db = -6.0; },\n"
			"  { in = 0; out = 1; },\n"
			"  { in = 1; out = 2; chain = [\"lp\", \"hp\"]; invert = true; delay_ms = 1.0; },\n"
			"  { in = 1; out = 3; chain = []; },\n"
			"  { in = 0; out = 3; chain = []; gain_db = 6.0; invert = true; }\n"
			" );\n"
			"};\n";
	struct gf_config *c = load(text);
	uint32_t ni, no;
	gf_config_mixer_channels(c, &ni, &no);
	CHECK(ni == 2 && no == 4 && gf_config_min_channels(c) == 2);
	const uint32_t rates[] = {48000, 44100};
	for (int ri = 0; ri < 2; ri++) {
		uint32_t rate = rates[ri], d = (uint32_t)lround(1.0 * rate / 1000.0);
		struct gf_filter_set *fs = NULL;
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_config_build(c, rate, 2, &fs, &eb), &eb);
		CHECK(gf_filter_set_is_mixer(fs) && fs->inputs == 2 && fs->outputs == 4 && fs->channels == 5);
		CHECK(fs->taps == d + 4);
		const uint32_t in[] = {0, 0, 1, 1, 0}, out[] = {0, 1, 2, 3, 3};
		const double lp[] = {0.5, 0.25, 0.125}, hp[] = {1.0, -0.5}, lphp[] = {0.5, 0.0, 0.0, -0.0625};
		double g6 = pow(10.0, -6.0 / 20.0), p6 = pow(10.0, 6.0 / 20.0);
		for (uint32_t p = 0; p < 5; p++) {
			CHECK(fs->path_in[p] == in[p] && fs->path_out[p] == out[p]);
			const float *h = gf_filter_set_channel(fs, p);
			for (uint32_t i = 0; i < fs->taps; i++) {
				double want = 0.0;
				if (p == 0 && i < 3)
					want = g6 * lp[i];
				else if (p == 1 && i < 2)
					want = hp[i]; /* the top-level chain */
				else if (p == 2 && i >= d)
					want = -lphp[i - d];
				else if (p == 3 && i == 0)
					want = 1.0;
				else if (p == 4 && i == 0)
					want = -p6;
				if (h[i] != (float)want)
					fprintf(stderr, "rate %u path %u tap %u: %.9g want %.9g\n", rate, p,
						i, h[i], want);
				CHECK(h[i] == (float)want);
			}
		}
		gf_filter_set_free(fs);
		/* The audio must have the mixer's inputs. */
		CHECK(gf_config_build(c, rate, 3, &fs, &eb) == GF_E_CONFIG && !fs);
		CHECK(strstr(eb.msg, ":7: mixer.inputs: the mixer reads 2 channels, the audio has 3"));
	}
	gf_config_free(c);
}

/* No top-level chain: a path without one passes its input through. */
static void test_no_chain(void)
{
	struct gf_config *c =
		load("filters = ( { name = \"a\"; coeffs = [0.5, 0.25]; } );\n"
		     "mixer = { inputs = 1; outputs = 2;\n"
		     " paths = ( { in = 0; out = 0; chain = [\"a\"]; }, { in = 0; out = 1; } ); };\n");
	struct gf_filter_set *fs = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_build(c, 48000, 1, &fs, &eb), &eb);
	const float want[2][2] = {{0.5f, 0.25f}, {1.0f, 0.0f}};
	CHECK(fs->taps == 2 && memcmp(fs->coeffs, want, sizeof(want)) == 0);
	gf_filter_set_free(fs);
	gf_config_free(c);
	/* Without a mixer the set stays a plain one. */
	c = load("filters = ( { name = \"a\"; coeffs = [0.5, 0.25]; } );\nchain = [\"a\"];\n");
	CHECK_OK_EB(gf_config_build(c, 48000, 2, &fs, &eb), &eb);
	CHECK(!gf_filter_set_is_mixer(fs) && gf_filter_set_outputs(fs) == 2);
	uint32_t ni, no;
	gf_config_mixer_channels(c, &ni, &no);
	CHECK(ni == 0 && no == 0);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

struct bad {
	const char *mixer; /* after FILTERS, from line 6 (the chain on that line too) */
	int line;
	const char *want;
};

static const struct bad errors[] = {
	{"mixer = 3;\n", 6, "mixer: must be a group"},
	{"mixer = { outputs = 2; paths = ( { in = 0; out = 0; } ); };\n", 6, "mixer.inputs: missing"},
	{"mixer = { inputs = 2; paths = ( { in = 0; out = 0; } ); };\n", 6, "mixer.outputs: missing"},
	{"mixer = {\n inputs = 0; outputs = 2; paths = ( { in = 0; out = 0; } ); };\n", 7,
	 "mixer.inputs: must be 1..1024 (got 0)"},
	{"mixer = { inputs = 2; outputs = 2; };\n", 6, "mixer.paths: missing"},
	{"mixer = { inputs = 2; outputs = 2;\n paths = (); };\n", 7, "mixer.paths: must be a non-empty list"},
	{"mixer = { inputs = 2; outputs = 2; paths = (\n 1 ); };\n", 7,
	 "mixer.paths: entry 0 must be a group"},
	{"mixer = { inputs = 2; outputs = 2; paths = (\n { out = 0; } ); };\n", 7,
	 "mixer.paths[0].in: missing"},
	{"mixer = { inputs = 2; outputs = 2; paths = (\n { in = 0; } ); };\n", 7,
	 "mixer.paths[0].out: missing"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 0; },\n { in = 2; out = 1; } ); "
	 "};\n",
	 8, "mixer.paths[1].in: must be 0..1 (got 2)"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 4; } ); };\n", 7,
	 "mixer.paths[0].out: must be 0..3 (got 4)"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 1; },\n { in = 0; out = 1; } ); "
	 "};\n",
	 8, "mixer.paths[1]: a second path from input 0 to output 1 (the first: line 7)"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 1;\n chain = [\"nope\"]; } ); };\n",
	 8, "mixer.paths[0].chain: no filter named \"nope\""},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 1;\n chain = [\"sup\"]; } ); };\n",
	 8, "mixer.paths[0].chain: \"sup\" is a noise suppressor"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 1;\n gain_db = 100.0; } ); };\n", 8,
	 "mixer.paths[0].gain_db: must be"},
	{"mixer = { inputs = 2; outputs = 4; paths = (\n { in = 0; out = 1;\n delay_ms = -1.0; } ); };\n", 8,
	 "mixer.paths[0].delay_ms: must be"},
	{"routes = ( { channel = 0; } );\nmixer = { inputs = 2; outputs = 4;\n paths = ( { in = 0; out = 1; "
	 "} ); "
	 "};\n",
	 7, "mixer: routes and a mixer cannot both be set"},
	{"output = { channels = 3; };\nmixer = { inputs = 2; outputs = 4; paths = ( { in = 0; out = 1; } ); "
	 "};\n",
	 7,
	 "mixer.outputs: the mixer writes 4 channels, output.channels says 3: leave output.channels out or "
	 "set "
	 "it to 4"},
};

static void test_errors(void)
{
	char text[2048];
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		snprintf(text, sizeof(text), FILTERS "chain = [\"lp\"]; %s", errors[i].mixer);
		struct gf_config *c = NULL;
		struct gf_errbuf eb = {{0}};
		int err = gf_config_load_string(text, ".", &c, &eb);
		char want[160];
		snprintf(want, sizeof(want), ":%d: %s", errors[i].line, errors[i].want);
		printf("  case %zu: %s\n", i, eb.msg);
		CHECK(err == GF_E_CONFIG && !c);
		CHECK(strstr(eb.msg, want));
	}
	/* A suppressor in the top-level chain, which paths without a chain run. */
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_config_load_string(FILTERS "chain = [\"sup\"];\nmixer = { inputs = 1; outputs = 1;\n"
					    " paths = ( { in = 0; out = 0; chain = [\"lp\"]; } ); };\n",
				    ".", &c, &eb) == GF_E_CONFIG);
	CHECK(strstr(eb.msg, ":7: mixer (the top-level chain") && strstr(eb.msg, "noise suppressor"));
}

int main(void)
{
	test_build_exact();
	test_no_chain();
	test_errors();
	printf("test_config_mixer: ok\n");
	return 0;
}
