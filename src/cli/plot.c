/*
 * --plot: the final filters drawn as an SVG file (response_svg.c draws it; a
 * mixer per output, response_view.c), written beside the target and renamed
 * over it when complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "response_view.h"
#include "temp_file.h"
#include "tools.h"

/* The SVG into a temporary beside @p path, renamed over it when complete. */
static int write_plot(const char *path, const struct gf_tool_build *b, const char *source,
		      struct gf_errbuf *eb)
{
	struct gf_temp_file t;
	int err = gf_temp_open(&t, path, GF_TEMP_REGULAR_ONLY, eb);
	if (err)
		return err;
	struct stat st;
	if (fstatat(t.dirfd, t.name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		err = gf_tool_not_an_input(b->inputs, &st, path, eb);
	int fd = err ? -1 : dup(t.fd); /* fclose closes the copy; the commit checks the original */
	FILE *o = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!err && !o) {
		gf_errbuf_set(eb, "%s: cannot write: %s", path, strerror(errno));
		err = GF_E_IO;
		if (fd >= 0)
			close(fd);
	}
	if (o) {
		const struct gf_filter_set *fs = b->fs;
		err = gf_response_plot_set(o, NULL, NULL, fs->coeffs, fs->channels, fs->taps, fs->path_out,
					   fs->outputs, b->rate, source);
		if (fclose(o) != 0 && !err)
			err = GF_E_IO;
		if (err)
			gf_errbuf_set(eb, "%s: %s", path, err == GF_E_IO ? "write error" : gf_strerror(err));
	}
	if (err) {
		gf_temp_discard(&t);
		return err;
	}
	return gf_temp_commit(&t, path, eb);
}

int gf_tool_run_plot(const struct gf_cli *cli)
{
	struct gf_tool_build b;
	struct gf_errbuf eb = {{0}};
	const char *path = cli->output ? cli->output : "response.svg";
	int err = gf_tool_build(cli, &b, &eb);
	if (!err)
		err = write_plot(path, &b, cli->config, &eb);
	if (!err && gf_filter_set_is_mixer(b.fs))
		printf("%s: a mixer of %u paths into %u outputs, per output, at %u Hz (from %s)\n", path,
		       b.fs->channels, b.fs->outputs, b.rate, b.rate_from);
	else if (!err)
		printf("%s: %u channel%s at %u Hz (from %s)\n", path, b.fs->channels,
		       b.fs->channels == 1 ? "" : "s", b.rate, b.rate_from);
	else
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_tool_build_free(&b);
	return gf_tool_exit(err);
}
