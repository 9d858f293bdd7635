/* The chain's builder (src/config/chain.h): what a config means to the engine, the suppressor
 * bank and the gain stage of a live stream and of an offline file, and that the stream's facts
 * (a forced backend, a GPU, the block of a chunk) win over the config's. Then a reload's plan
 * (gf_chain_diff) on pairs of configs: per stage keep, swap or restart, and the one line each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "config.h"
#include "gain_stage.h"
#include "testutil.h"

#define HEAD "sample_rate = 44100;\nblock_frames = 128;\nbackend = \"cpu\";\ngpu = 1;\n"
#define BASE HEAD "crossfade_ms = 20.0;\n"

static struct gf_config *load(const char *text)
{
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, NULL, &c, &eb), &eb);
	return c;
}

static const char *const plain = BASE "filters = ({ name = \"lp\"; design = \"lowpass\"; cutoff_hz = "
				      "8000.0; taps = 255; });\nchain = [\"lp\"];\n";
static const char *const with_nr =
	BASE "filters = ({ name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = 255; },\n"
	     "  { name = \"nr\"; design = \"suppress\"; });\nchain = [\"lp\", \"nr\"];\n";

/* Live: the config's block, its crossfade in frames, two block periods of deadline, max_taps room. */
static void live_params(void)
{
	struct gf_config *c = load(plain);
	struct gf_chain_facts f = {.mode = GF_CHAIN_LIVE, .rate = 44100, .channels = 2, .gpu_index = -1};
	struct gf_engine_params p;
	gf_chain_engine_params(c, &f, 255, &p);
	CHECK(p.backend == GF_BACKEND_CPU && p.channels == 2 && p.max_block == 128 && p.gpu_index == 1);
	CHECK(p.crossfade_frames == 882 && p.live_rate == 44100 && !p.retry && !p.job_samples);
	CHECK(p.max_taps == GF_CHAIN_DEFAULT_MAX_TAPS);
	CHECK(p.deadline_us == 2000000ull * 128 / 44100 && gf_chain_deadline_us(c) == p.deadline_us);
	gf_chain_engine_params(c, &f, GF_CHAIN_DEFAULT_MAX_TAPS + 1, &p);
	CHECK(p.max_taps == GF_CHAIN_DEFAULT_MAX_TAPS + 1); /* a longer first filter: its own length */
	/* the stream's facts win: a forced backend, another GPU */
	f.backend = GF_BACKEND_AUTO;
	gf_chain_engine_params(c, &f, 255, &p);
	CHECK(p.backend == GF_BACKEND_CPU); /* AUTO: the config's */
	gf_config_free(c);
	c = load(BASE "gpu_deadline_ms = 3.5;\nmax_taps = 4096;\nfilters = ({ name = \"lp\"; design = "
		      "\"lowpass\"; cutoff_hz = 8000.0; taps = 255; });\nchain = [\"lp\"];\n");
	gf_chain_engine_params(c, &f, 255, &p);
	CHECK(p.deadline_us == 3500 && p.max_taps == 4096);
	gf_config_free(c);
	printf("  live: block, crossfade, deadline, max_taps from the config\n");
}

/* Offline: the chunk as the block, a retry on the CPU, the job's size; no crossfade, no deadline. */
static void offline_params(void)
{
	struct gf_config *c = load(plain);
	struct gf_chain_facts f = {.mode = GF_CHAIN_OFFLINE,
				   .channels = 3,
				   .max_block = 65536,
				   .backend = GF_BACKEND_CUDA,
				   .gpu_index = 0,
				   .job_samples = 1000000,
				   .job_cpu_threads = 4};
	struct gf_engine_params p;
	gf_chain_engine_params(c, &f, 255, &p);
	CHECK(p.backend == GF_BACKEND_CUDA && p.channels == 3 && p.max_block == 65536 && p.gpu_index == 0);
	CHECK(p.retry == 1 && p.job_samples == 1000000 && p.job_cpu_threads == 4);
	CHECK(!p.crossfade_frames && !p.deadline_us && !p.live_rate && !p.max_taps);
	f.gpu_index = -1;
	gf_chain_engine_params(c, &f, 255, &p);
	CHECK(p.gpu_index == 1);
	gf_config_free(c);
	printf("  offline: the chunk, the retry, the job's size\n");
}

/* The filters at the stream's rate and channels; the suppressor only where a chain has one, over
 * the out channels; the gain stage metering the wider side. */
static void stages(void)
{
	struct gf_config *c = load(with_nr), *p = load(plain);
	struct gf_chain_facts f = {
		.mode = GF_CHAIN_LIVE, .rate = 48000, .channels = 2, .out_channels = 2, .gpu_index = -1};
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *fs = NULL;
	CHECK_OK_EB(gf_chain_filters(c, &f, &fs, NULL, &eb), &eb);
	CHECK(fs && fs->channels == 2 && fs->taps == 255);
	gf_filter_set_free(fs);
	struct gf_suppress_bank *bank = NULL;
	CHECK_OK_EB(gf_chain_suppressor(c, &f, NULL, &bank, &eb), &eb);
	CHECK(bank && gf_suppress_bank_active(bank) == 2);
	gf_suppress_bank_free(bank);
	CHECK_OK_EB(gf_chain_suppressor(p, &f, NULL, &bank, &eb), &eb);
	CHECK(bank == NULL);
	uint32_t ch, rate;
	gf_chain_gain_shape(c, 2, 6, &ch, &rate);
	CHECK(ch == 6 && rate == 44100);
	gf_chain_gain_shape(c, GF_GAIN_MAX_CHANNELS + 5, 2, &ch, &rate);
	CHECK(ch == GF_GAIN_MAX_CHANNELS);
	gf_config_free(c);
	gf_config_free(p);
	printf("  stages: filters, suppressor where configured, gain shape\n");
}

/* A config of the base settings with @p extra, the low-pass of @p taps taps and, where @p nr is
 * not NULL, a suppressor with those settings after it. */
static struct gf_config *variant(const char *extra, int taps, const char *nr)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 HEAD "%s%s\nfilters = ({ name = \"lp\"; design = \"lowpass\"; cutoff_hz = 8000.0; taps = "
		      "%d; }%s%s%s);\n"
		      "chain = [\"lp\"%s];\n",
		 strstr(extra, "crossfade_ms") ? "" : "crossfade_ms = 20.0;\n", extra, taps,
		 nr ? ",\n  { name = \"nr\"; design = \"suppress\"; " : "", nr ? nr : "", nr ? " }" : "",
		 nr ? ", \"nr\"" : "");
	return load(text);
}

static enum gf_chain_action act(const struct gf_chain_diff *d, enum gf_chain_stage s)
{
	return d->action[s];
}

static void want_line(const struct gf_chain_diff *d, enum gf_chain_stage s, const char *want)
{
	char line[600];
	gf_chain_diff_line(d, s, line, sizeof(line));
	if (strcmp(line, want) != 0) {
		fprintf(stderr, "stage %s: got \"%s\", want \"%s\"\n", gf_chain_stage_name(s), line, want);
		CHECK(0);
	}
}

/* Diff @p a against @p b; want @p restart and the joined reasons @p why. */
static void diff(const struct gf_config *a, const struct gf_config *b, struct gf_chain_diff *d, int restart,
		 const char *why)
{
	char text[1000];
	CHECK(gf_chain_diff(a, b, 2, d) == restart);
	gf_chain_diff_why(d, text, sizeof(text));
	if (strcmp(text, why) != 0) {
		fprintf(stderr, "why: got \"%s\", want \"%s\"\n", text, why);
		CHECK(0);
	}
}

/* Nothing but the filter changes: swapped in with a crossfade, the rest runs on. */
static void diff_swap(void)
{
	struct gf_config *a = variant("", 255, NULL), *b = variant("", 511, NULL),
			 *v = variant("volume_db = -6.0;", 511, NULL);
	struct gf_chain_diff d;
	diff(a, b, &d, 0, "");
	CHECK(act(&d, GF_CHAIN_STREAM) == GF_CHAIN_KEEP && act(&d, GF_CHAIN_FILTERS) == GF_CHAIN_SWAP &&
	      act(&d, GF_CHAIN_SUPPRESSOR) == GF_CHAIN_KEEP && act(&d, GF_CHAIN_GAIN) == GF_CHAIN_KEEP);
	want_line(&d, GF_CHAIN_STREAM, "stream: keep");
	want_line(&d, GF_CHAIN_FILTERS, "filters: swap");
	want_line(&d, GF_CHAIN_SUPPRESSOR, "suppressor: keep");
	want_line(&d, GF_CHAIN_GAIN, "gain: keep");
	diff(a, a, &d, 0, ""); /* the same config: swapped all the same (a reload rebuilds its filters) */
	CHECK(act(&d, GF_CHAIN_FILTERS) == GF_CHAIN_SWAP);
	diff(b, v, &d, 0, ""); /* a new volume_db is a request to the running gain stage */
	want_line(&d, GF_CHAIN_GAIN, "gain: keep (volume_db (a request) 0 dB -> -6 dB)");
	gf_config_free(a);
	gf_config_free(b);
	gf_config_free(v);
	printf("  diff: a new filter is swapped, the rest kept\n");
}

/* A stream setting or an engine parameter: the stream restarts and every stage is rebuilt. */
static void diff_restart(void)
{
	struct gf_config *a = variant("", 255, NULL);
	struct gf_config *rate =
		load("sample_rate = 48000;\nblock_frames = 128;\nbackend = \"cpu\";\n"
		     "crossfade_ms = 20.0;\ngpu = 1;\nfilters = ({ name = \"lp\"; design = "
		     "\"lowpass\"; cutoff_hz = 8000.0; taps = 255; });\nchain = [\"lp\"];\n");
	struct gf_config *xf = variant("crossfade_ms = 30.0;", 255, NULL);
	struct gf_config *two = variant("latency_slack = 3;\nalgo = \"direct\";", 255, NULL);
	struct gf_chain_diff d;
	diff(a, rate, &d, 1, "sample rate 44100 -> 48000");
	want_line(&d, GF_CHAIN_STREAM, "stream: restart (sample rate 44100 -> 48000)");
	want_line(&d, GF_CHAIN_FILTERS, "filters: restart (with the stream)");
	gf_config_free(rate);
	diff(a, xf, &d, 1, "crossfade 20 ms -> 30 ms");
	want_line(&d, GF_CHAIN_STREAM, "stream: restart (for the filters)");
	want_line(&d, GF_CHAIN_FILTERS, "filters: restart (crossfade 20 ms -> 30 ms)");
	want_line(&d, GF_CHAIN_SUPPRESSOR, "suppressor: restart (with the stream)");
	want_line(&d, GF_CHAIN_GAIN, "gain: restart (with the stream)");
	/* stream first, then the engine: the order audio crosses them */
	diff(a, two, &d, 1, "latency_slack auto -> 3, algo 0 -> 1");
	CHECK(d.cause[GF_CHAIN_STREAM] && d.cause[GF_CHAIN_FILTERS] && !d.cause[GF_CHAIN_SUPPRESSOR]);
	want_line(&d, GF_CHAIN_STREAM, "stream: restart (latency_slack auto -> 3)");
	gf_config_free(a);
	gf_config_free(xf);
	gf_config_free(two);
	printf("  diff: a stream or engine setting restarts every stage\n");
}

/* The suppressor: added or changed beyond its live settings restarts; its depth alone is kept. */
static void diff_suppressor(void)
{
	struct gf_config *none = variant("", 255, NULL), *nr = variant("", 255, "reduction_db = 12.0;");
	struct gf_config *deeper = variant("", 255, "reduction_db = 18.0;");
	struct gf_config *hp = variant("", 255, "reduction_db = 12.0; highpass_hz = 30.0;");
	struct gf_chain_diff d;
	diff(none, nr, &d, 1, "suppressor on channel 0 added");
	CHECK(d.cause[GF_CHAIN_SUPPRESSOR] && !d.cause[GF_CHAIN_STREAM] && !d.cause[GF_CHAIN_FILTERS]);
	want_line(&d, GF_CHAIN_STREAM, "stream: restart (for the suppressor)");
	want_line(&d, GF_CHAIN_FILTERS, "filters: restart (with the stream)");
	want_line(&d, GF_CHAIN_SUPPRESSOR, "suppressor: restart (suppressor on channel 0 added)");
	diff(nr, deeper, &d, 0, "");
	want_line(&d, GF_CHAIN_SUPPRESSOR, "suppressor: keep (reduction_db follows the new config)");
	want_line(&d, GF_CHAIN_FILTERS, "filters: swap");
	diff(nr, hp, &d, 1, "suppressor highpass_hz 0 -> 30");
	diff(nr, none, &d, 1, "suppressor on channel 0 removed");
	gf_config_free(none);
	gf_config_free(nr);
	gf_config_free(deeper);
	gf_config_free(hp);
	printf("  diff: the suppressor restarts when it changes, keeps its live settings\n");
}

int main(void)
{
	printf("test_chain: the chain's builder\n");
	live_params();
	offline_params();
	stages();
	diff_swap();
	diff_restart();
	diff_suppressor();
	printf("test_chain: ok\n");
	return 0;
}
