/*
 * What the filter tools share: which rate and channel count to build at, and
 * the build itself (the chain's builder, chain.h, as every mode runs it).
 */
#include "tools.h"

#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "safe_file.h"

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

/* IN's rate and channels; IN must be a regular file (a FIFO would block the open). */
static int input_format(const char *path, uint32_t *rate, uint32_t *channels, struct gf_errbuf *eb)
{
	SF_INFO info = {0};
	int fd = gf_file_open_read(path, "input", 0, eb);
	if (fd < 0)
		return fd;
	SNDFILE *sf = sf_open_fd(fd, SFM_READ, &info, SF_TRUE);
	if (!sf) {
		close(fd);
		gf_errbuf_set(eb, "%s: cannot open as a sound file: %s", path, sf_strerror(NULL));
		return GF_E_IO;
	}
	sf_close(sf);
	*rate = (uint32_t)info.samplerate;
	*channels = (uint32_t)info.channels;
	return 0;
}

/* What the build read: the config's files, then -i IN. */
static int list_inputs(struct gf_tool_build *b, const struct gf_cli *cli)
{
	uint32_t n = b->cfg->n_files;
	b->inputs = calloc((size_t)n + 2, sizeof(*b->inputs));
	if (!b->inputs)
		return GF_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		b->inputs[i] = b->cfg->files[i];
	b->inputs[n] = cli->input;
	return 0;
}

int gf_tool_not_an_input(const char *const *inputs, const struct stat *st, const char *target,
			 struct gf_errbuf *eb)
{
	for (size_t i = 0; inputs && inputs[i]; i++) {
		struct stat si;
		if (stat(inputs[i], &si) == 0 && si.st_dev == st->st_dev && si.st_ino == st->st_ino) {
			if (strcmp(target, inputs[i]) == 0)
				gf_errbuf_set(eb,
					      "%s is an input of this run: gpufir never overwrites an input; "
					      "give another name",
					      target);
			else
				gf_errbuf_set(eb,
					      "%s is %s, an input of this run: gpufir never overwrites an "
					      "input; give another name",
					      target, inputs[i]);
			return GF_E_IO;
		}
	}
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
	b->facts = (struct gf_chain_facts){
		.mode = b->cfg->live ? GF_CHAIN_LIVE : GF_CHAIN_OFFLINE,
		.rate = b->rate,
		.channels = in_channels ? in_channels : config_channels(b->cfg),
		.gpu_index = -1,
	};
	err = list_inputs(b, cli);
	if (!err)
		err = gf_chain_filters(b->cfg, &b->facts, &b->fs, NULL, eb);
	if (!err) /* the suppressors run over the filter set's channels, as in the modes */
		b->facts.out_channels = b->fs->channels;
	return err;
}

void gf_tool_build_free(struct gf_tool_build *b)
{
	gf_filter_set_free(b->fs);
	free(b->inputs);
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
