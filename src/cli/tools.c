/*
 * What the filter tools share: which rate and channel count to build at, and
 * the build itself (gf_config_build, as every mode runs it).
 */
#include "tools.h"

#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define CHANNELS_DEFAULT 2u

/* The config's channel count: its devices', else what its routes need, at least 2. */
static uint32_t config_channels(const struct gf_config *cfg)
{
	if (cfg->input.channels)
		return cfg->input.channels;
	if (cfg->output.channels)
		return cfg->output.channels;
	uint32_t routed = gf_config_min_channels(cfg);
	return routed > CHANNELS_DEFAULT ? routed : CHANNELS_DEFAULT;
}

static int input_format(const char *path, uint32_t *rate, uint32_t *channels, struct gf_errbuf *eb)
{
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	if (!sf) {
		gf_errbuf_set(eb, "%s: cannot open as a sound file: %s", path, sf_strerror(NULL));
		return GF_E_IO;
	}
	sf_close(sf);
	*rate = (uint32_t)info.samplerate;
	*channels = (uint32_t)info.channels;
	return 0;
}

int gf_tool_build(const struct gf_cli *cli, struct gf_tool_build *b, struct gf_errbuf *eb)
{
	memset(b, 0, sizeof(*b));
	uint32_t in_rate = 0, in_channels = 0;
	int err = cli->input ? input_format(cli->input, &in_rate, &in_channels, eb) : 0;
	if (!err)
		err = gf_config_load_or_default(cli->config, &b->cfg, eb);
	if (err)
		return err;
	/* Without an input file the tools show what the service (live mode) runs;
	 * with -i IN, what offline filtering of IN runs (phase = "auto" differs). */
	b->cfg->live = !cli->input;
	if (cli->rate) {
		b->rate = cli->rate;
		b->rate_from = "--rate";
	} else if (in_rate) {
		b->rate = in_rate;
		b->rate_from = "the input file";
	} else if (b->cfg->sample_rate) {
		b->rate = b->cfg->sample_rate;
		b->rate_from = "the config";
	} else {
		b->rate = GF_TOOL_RATE_DEFAULT;
		b->rate_from = "the default";
	}
	uint32_t channels = in_channels ? in_channels : config_channels(b->cfg);
	return gf_config_build(b->cfg, b->rate, channels, &b->fs, eb);
}

void gf_tool_build_free(struct gf_tool_build *b)
{
	gf_filter_set_free(b->fs);
	gf_config_free(b->cfg);
	memset(b, 0, sizeof(*b));
}

int gf_tool_exit(int err)
{
	switch (err) {
	case 0:
		return GF_EXIT_OK;
	case GF_E_NOMEM:
		return GF_EXIT_FAILURE;
	case GF_E_IO:
		return GF_EXIT_IO;
	default:
		return GF_EXIT_CONFIG;
	}
}
