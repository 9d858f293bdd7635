/**
 * @file cli.h
 * Command-line parsing for the gpufir program (getopt_long, GNU style),
 * kept apart from main() so that every mode and every usage error can be
 * unit-tested without running anything.
 *
 * Control thread only. Parsing never prints and never exits: errors come
 * back as GF_E_INVAL with a one-line message in the caller's gf_errbuf.
 *
 * Folder src/cli/ (main, the command line, the filter tools, the live
 * module's loader and entry point): the top, which alone sees offline and
 * the daemon. Main thread; it may block.
 */
#ifndef GPUFIR_CLI_H
#define GPUFIR_CLI_H

#include <stdio.h>

#include "engine.h"
#include "error.h"
#include "offline.h"

enum gf_cli_mode {
	GF_MODE_NONE = 0,     /**< nothing selected (only while parsing) */
	GF_MODE_OFFLINE,      /**< -i IN -o OUT */
	GF_MODE_LIVE,	      /**< --live */
	GF_MODE_LIST_DEVICES, /**< --list-devices */
	GF_MODE_CHECK_CONFIG, /**< --check-config [FILE] */
	GF_MODE_STATUS,	      /**< --status [SOCKET] */
	GF_MODE_EXPORT,	      /**< --export-filters DIR */
	GF_MODE_PLOT,	      /**< --plot [-o SVG] */
	GF_MODE_HELP,	      /**< --help */
	GF_MODE_VERSION,      /**< --version */
};

/** The parsed command line. Strings point into argv. */
struct gf_cli {
	enum gf_cli_mode mode;
	const char *input;	/**< -i: offline input file (--plot, --export-filters: its rate); the first of
				   several */
	const char **inputs;	/**< every -i when more than one (allocated: gf_cli_free), else NULL */
	size_t n_inputs;	/**< -i count */
	const char *output;	/**< -o: offline output file (--plot: the SVG, NULL = response.svg) */
	const char *export_dir; /**< --export-filters operand */
	unsigned rate;		/**< --rate: build filters at this rate; 0 = not given */
	const char *config;	/**< -c, or --check-config's operand; NULL = built-in default */
	const char *socket;	/**< --status operand; NULL = from the config */
	int json;		/**< --status --json: the control API's GetStatus, from its socket */
	int backend_set;	/**< 1 when --backend was given */
	enum gf_backend_kind backend;
	int algo_set; /**< 1 when --algo was given */
	enum gf_algo algo;
	int tail;		/**< --tail: keep the filter's ring-out (taps-1 frames) */
	int causal;		/**< --causal: keep the linear-phase delay (no alignment) */
	int format_subtype;	/**< --format as an SF_FORMAT_* subtype; 0 = keep the input's */
	int quiet;		/**< --quiet: warnings and errors only, no progress bar */
	int verbose;		/**< --verbose: debug messages */
	int batch;		/**< batch: several -i, --batch, -o DIR/, or a batch-only option */
	const char *batch_list; /**< --batch LIST ("-": standard input) */
	int null_list;		/**< -0/--null: LIST's records end in NUL bytes */
	int shard_set;		/**< --shard K/N */
	uint32_t shard_k, shard_n;
	int skip_existing; /**< --skip-existing */
	uint32_t jobs;	   /**< -j/--jobs: files in flight; 0 = one per CPU */
	uint32_t threads;  /**< --threads: CPU threads one file may use; 0 = its share of the CPUs */
	int gpu_set;	   /**< --gpu given */
	struct gf_offline_gpus gpus;
};

/**
 * Parse @p argv into @p cli (which is zeroed first). Resets getopt's state,
 * so it may be called repeatedly.
 * @return 0, or GF_E_INVAL with the reason in @p eb (exit GF_EXIT_USAGE)
 */
int gf_cli_parse(struct gf_cli *cli, int argc, char *const argv[], struct gf_errbuf *eb);

/** Free what gf_cli_parse allocated (several -i). Accepts a zeroed or failed parse. */
void gf_cli_free(struct gf_cli *cli);

/** The full --help text: every mode and option, exit codes, examples. */
void gf_cli_print_help(FILE *out);

/** The two-line synopsis printed with usage errors. */
void gf_cli_print_usage(FILE *out);

/** --version: program version, build features and library versions. */
void gf_cli_print_version(FILE *out);

/** Name of a mode's option, for messages ("--live", "-i/-o", ...). */
const char *gf_cli_mode_name(enum gf_cli_mode m);

#endif
