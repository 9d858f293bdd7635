/*
 * --export-filters DIR: the final per-channel FIRs (after chains, gains,
 * delays and padding: exactly what the engine convolves with) as files other
 * tools read. One file per channel, because that is what most convolvers
 * (CamillaDSP, BruteFIR, SoX, REW's import) take; filters.conf ties them back
 * together for gpufir.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "taps_io.h"
#include "tools.h"

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int make_dir(const char *dir, struct gf_errbuf *eb)
{
	if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		gf_errbuf_set(eb, "%s: exists and is not a folder", dir);
		return GF_E_IO;
	}
	gf_errbuf_set(eb, "%s: cannot create the folder: %s", dir, strerror(errno));
	return GF_E_IO;
}

/* One channel's two files. */
static int write_channel(const char *dir, const struct gf_filter_set *fs, uint32_t c, uint32_t rate,
			 const char *source, struct gf_errbuf *eb)
{
	char name[64], comment[512];
	snprintf(comment, sizeof(comment), "gpufir --export-filters: channel %u of %s, %u taps at %u Hz", c,
		 source, fs->taps, rate);
	const float *h = gf_filter_set_channel(fs, c);
	snprintf(name, sizeof(name), "channel-%u.wav", c);
	char *wav = join(dir, name);
	snprintf(name, sizeof(name), "channel-%u.txt", c);
	char *txt = join(dir, name);
	int r = GF_E_NOMEM;
	if (wav && txt && !(r = gf_taps_write_wav(wav, h, fs->taps, rate, eb)))
		r = gf_taps_write_text(txt, h, fs->taps, comment, eb);
	free(wav);
	free(txt);
	return r;
}

static int write_config(const char *dir, const struct gf_filter_set *fs, uint32_t rate, const char *source,
			struct gf_errbuf *eb)
{
	char *path = join(dir, "filters.conf");
	if (!path)
		return GF_E_NOMEM;
	FILE *fp = fopen(path, "w");
	if (!fp) {
		gf_errbuf_set(eb, "%s: cannot create: %s", path, strerror(errno));
		free(path);
		return GF_E_IO;
	}
	fprintf(fp, "# gpufir --export-filters: the final filters of %s at %u Hz,\n", source, rate);
	fprintf(fp, "# one 32-bit float WAV per channel (channel-N.txt: the same taps as text).\n");
	fprintf(fp, "sample_rate = %u;\nfilters = (\n", rate);
	for (uint32_t c = 0; c < fs->channels; c++)
		fprintf(fp, "  { name = \"channel%u\"; file = \"channel-%u.wav\"; }%s\n", c, c,
			c + 1 < fs->channels ? "," : "");
	fprintf(fp, ");\nroutes = (\n");
	for (uint32_t c = 0; c < fs->channels; c++)
		fprintf(fp, "  { channel = %u; chain = [\"channel%u\"]; }%s\n", c, c,
			c + 1 < fs->channels ? "," : "");
	fprintf(fp, ");\n");
	int bad = ferror(fp);
	int r = 0;
	if (fclose(fp) != 0 || bad) {
		gf_errbuf_set(eb, "%s: write error: %s", path, strerror(errno));
		r = GF_E_IO;
	}
	free(path);
	return r;
}

int gf_export_filters(const char *dir, const struct gf_filter_set *fs, uint32_t rate, const char *source,
		      struct gf_errbuf *eb)
{
	int r = make_dir(dir, eb);
	for (uint32_t c = 0; !r && c < fs->channels; c++)
		r = write_channel(dir, fs, c, rate, source, eb);
	if (!r)
		r = write_config(dir, fs, rate, source, eb);
	return r;
}

int gf_tool_run_export(const struct gf_cli *cli)
{
	struct gf_tool_build b;
	struct gf_errbuf eb = {{0}};
	int err = gf_tool_build(cli, &b, &eb);
	const char *source = cli->config ? cli->config : "the built-in default configuration";
	if (!err) {
		gf_info("building at %u Hz (from %s)", b.rate, b.rate_from);
		err = gf_export_filters(cli->export_dir, b.fs, b.rate, source, &eb);
	}
	if (!err)
		printf("%s: %u channel%s of %u taps at %u Hz (from %s): channel-N.wav, channel-N.txt, "
		       "filters.conf\n",
		       cli->export_dir, b.fs->channels, b.fs->channels == 1 ? "" : "s", b.fs->taps, b.rate,
		       b.rate_from);
	else
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_tool_build_free(&b);
	return gf_tool_exit(err);
}
