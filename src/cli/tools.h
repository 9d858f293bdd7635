/**
 * @file tools.h
 * The filter tools of the command line: --check-config's report,
 * --export-filters and --plot. Each loads the config, builds its final
 * per-channel FIRs at one rate (the same code every mode runs), and looks at
 * them, writes them or draws them.
 *
 * Control thread only; they block on files. They never exit: each returns an
 * exit status of error.h (GF_EXIT_*), errors logged.
 */
#ifndef GPUFIR_TOOLS_H
#define GPUFIR_TOOLS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "chain.h"
#include "cli.h"
#include "config.h"
#include "error.h"
#include "filter_set.h"

/** Rate the tools build at when neither --rate, -i IN nor the config gives one. */
#define GF_TOOL_RATE_DEFAULT 48000u

/** What a tool looks at: the config, its FIRs, and the rate and where it came from. */
struct gf_tool_build {
	struct gf_config *cfg;
	struct gf_chain_facts facts; /**< the stream the chain is built for: live without -i IN */
	struct gf_filter_set *fs;
	uint32_t rate;
	const char *rate_from; /**< "--rate", "the input file", "the config", "the default" */
	const char **inputs;   /**< every file the build read (the config, its includes and
				    filter files, -i IN), NULL-terminated: a tool never writes one */
};

/**
 * Load cli->config (or the built-in default) and build it at --rate, else
 * -i IN's rate (with IN's channel count), else the config's sample_rate,
 * else GF_TOOL_RATE_DEFAULT. The channel count is IN's, else the config's
 * devices', else what its routes need, at least 2.
 * @return 0 or an error (details in @p eb); free @p b with gf_tool_build_free
 */
int gf_tool_build(const struct gf_cli *cli, struct gf_tool_build *b, struct gf_errbuf *eb);

/** Accepts a zeroed or half-built @p b. */
void gf_tool_build_free(struct gf_tool_build *b);

/**
 * Refuse to replace the existing file @p st (named @p target in the message)
 * when it is one of @p inputs (by device and inode: any spelling, a hard
 * link). @return 0 or GF_E_IO
 */
int gf_tool_not_an_input(const char *const *inputs, const struct stat *st, const char *target,
			 struct gf_errbuf *eb);

/** An error's exit status in the tools: bad config 3, I/O 4, out of memory 1. */
int gf_tool_exit(int err);

struct gf_suppress_bank;
struct gf_response_view;
/**
 * --check-config's lines on the noise suppressor (design = "suppress") and the
 * neural stage (design = "deepfilter") of @p bank (NULL: none, nothing
 * printed): their settings, their channels and the latency each adds.
 */
void gf_tool_print_suppressor(FILE *out, const struct gf_config *cfg, const struct gf_suppress_bank *bank,
			      uint32_t channels, uint32_t rate);

/**
 * --export-filters DIR: per channel N, DIR/channel-N.wav (mono 32-bit float)
 * and DIR/channel-N.txt (one tap a line), and DIR/filters.conf, a config
 * that loads the WAV files as routes (so the export reloads bit for bit).
 * The set is written into a hidden folder beside DIR and replaces DIR as a
 * whole (created if missing, not its parents; an existing DIR may hold only
 * a previous export's files), so DIR holds the old set or the new one, never
 * a mix. A DIR that is a symlink or not a folder, or that holds one of
 * @p inputs (NULL-terminated, may be NULL), is refused. @p source names the
 * config in the files' comments (control characters shown as '?').
 * @return 0 or GF_E_IO / GF_E_NOMEM, the file named in @p eb
 */
int gf_export_filters(const char *dir, const struct gf_filter_set *fs, uint32_t rate, const char *source,
		      const char *const *inputs, struct gf_errbuf *eb);

/** Modes: each returns the process's exit status. */
int gf_tool_run_export(const struct gf_cli *cli);
int gf_tool_run_plot(const struct gf_cli *cli);

/**
 * --check-config's per-channel figures (gains, peak, worst case, delay) and
 * a clipping warning with the gain_db that removes the risk; a mixer's per
 * output, from @p view (response_view.h; NULL for a plain set).
 */
void gf_tool_print_report(FILE *out, const struct gf_filter_set *fs, const struct gf_response_view *view,
			  uint32_t rate);

/**
 * Print "  delay:  ..." lines for --check-config: each channel's group delay
 * over GF_DELAY_BAND_LO_HZ..GF_DELAY_BAND_HI_HZ (minphase.h; mean, and range),
 * channels with identical taps on one line; a mixer's per distinct output sum
 * of @p view (the first GF_RESPONSE_VIEW_STATS_MAX; NULL for a plain set).
 */
void gf_tool_print_delays(FILE *out, const struct gf_filter_set *fs, const struct gf_response_view *view,
			  double rate);

#endif
