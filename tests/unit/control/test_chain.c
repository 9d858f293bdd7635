/* The chain's builder (src/config/chain.h): what a config means to the engine, the suppressor
 * bank and the gain stage of a live stream and of an offline file, and that the stream's facts
 * (a forced backend, a GPU, the block of a chunk) win over the config's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "config.h"
#include "gain_stage.h"
#include "testutil.h"

#define BASE                                                                                                 \
	"sample_rate = 44100;\nblock_frames = 128;\nbackend = \"cpu\";\ncrossfade_ms = 20.0;\n"              \
	"gpu = 1;\n"

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

int main(void)
{
	printf("test_chain: the chain's builder\n");
	live_params();
	offline_params();
	stages();
	printf("test_chain: ok\n");
	return 0;
}
