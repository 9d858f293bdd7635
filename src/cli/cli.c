#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "offline.h"

/* Long-only mode switches get values past the char range that carry their mode. */
enum {
	OPT_MODE = 256,
	OPT_LIVE = OPT_MODE + GF_MODE_LIVE,
	OPT_LIST_DEVICES = OPT_MODE + GF_MODE_LIST_DEVICES,
	OPT_CHECK_CONFIG = OPT_MODE + GF_MODE_CHECK_CONFIG,
	OPT_STATUS = OPT_MODE + GF_MODE_STATUS,
	OPT_EXPORT = OPT_MODE + GF_MODE_EXPORT,
	OPT_PLOT = OPT_MODE + GF_MODE_PLOT,
	OPT_RATE = OPT_MODE + 64,
	OPT_CAUSAL = 512, /* long-only, not a mode */
	OPT_BATCH = OPT_MODE + 96,
	OPT_SHARD,
	OPT_SKIP_EXISTING,
	OPT_GPU,
	OPT_THREADS,
	OPT_JSON,
};

#define MAX_OPTS 40 /* distinct options; more than long_opts holds */

static const char short_opts[] = ":i:o:c:b:a:tf:j:0qvhV"; /* ':' first: report missing values */

static const struct option long_opts[] = {
	{"input", required_argument, NULL, 'i'},
	{"output", required_argument, NULL, 'o'},
	{"config", required_argument, NULL, 'c'},
	{"backend", required_argument, NULL, 'b'},
	{"algo", required_argument, NULL, 'a'},
	{"tail", no_argument, NULL, 't'},
	{"causal", no_argument, NULL, OPT_CAUSAL},
	{"format", required_argument, NULL, 'f'},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"shard", required_argument, NULL, OPT_SHARD},
	{"skip-existing", no_argument, NULL, OPT_SKIP_EXISTING},
	{"null", no_argument, NULL, '0'},
	{"jobs", required_argument, NULL, 'j'},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"gpu", required_argument, NULL, OPT_GPU},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"live", no_argument, NULL, OPT_LIVE},
	{"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
	{"check-config", no_argument, NULL, OPT_CHECK_CONFIG},
	{"status", no_argument, NULL, OPT_STATUS},
	{"json", no_argument, NULL, OPT_JSON},
	{"export-filters", required_argument, NULL, OPT_EXPORT},
	{"plot", no_argument, NULL, OPT_PLOT},
	{"rate", required_argument, NULL, OPT_RATE},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* What the option loop saw, before it is checked as a whole. */
struct seen {
	int help, version;
	int modes[GF_MODE_VERSION + 1]; /* per mode: 1 if an option selected it */
	const char *operand;		/* the first positional argument, if any */
	const char *second;		/* the second one: always an error */
	int n_operands;
	int config;	     /* -c given */
	int offline_only;    /* the first offline-only option, or 0 */
	int engine_opt;	     /* --backend/--algo given ('b' or 'a') */
	int rate;	     /* --rate given */
	int given[MAX_OPTS]; /* every option seen, to refuse one given twice */
	int n_given;
};

const char *gf_cli_mode_name(enum gf_cli_mode m)
{
	switch (m) {
	case GF_MODE_OFFLINE:
		return "-i/-o (offline)";
	case GF_MODE_LIVE:
		return "--live";
	case GF_MODE_LIST_DEVICES:
		return "--list-devices";
	case GF_MODE_CHECK_CONFIG:
		return "--check-config";
	case GF_MODE_STATUS:
		return "--status";
	case GF_MODE_EXPORT:
		return "--export-filters";
	case GF_MODE_PLOT:
		return "--plot";
	case GF_MODE_HELP:
		return "--help";
	case GF_MODE_VERSION:
		return "--version";
	default:
		return "(none)";
	}
}

static const char *opt_name(int c)
{
	switch (c) {
	case 'i':
		return "-i/--input";
	case 'o':
		return "-o/--output";
	case 'c':
		return "-c/--config";
	case 'b':
		return "--backend";
	case 'a':
		return "--algo";
	case 't':
		return "--tail";
	case OPT_CAUSAL:
		return "--causal";
	case 'f':
		return "--format";
	case OPT_EXPORT:
		return "--export-filters";
	case 'j':
		return "-j/--jobs";
	case OPT_BATCH:
		return "--batch";
	case OPT_SHARD:
		return "--shard";
	case OPT_SKIP_EXISTING:
		return "--skip-existing";
	case OPT_GPU:
		return "--gpu";
	case OPT_THREADS:
		return "--threads";
	case '0':
		return "-0/--null";
	case 'q':
		return "-q/--quiet";
	case 'v':
		return "-v/--verbose";
	case 'h':
		return "-h/--help";
	case 'V':
		return "-V/--version";
	case OPT_RATE:
		return "--rate";
	default:
		return c > OPT_MODE && c <= OPT_MODE + GF_MODE_VERSION ? gf_cli_mode_name(c - OPT_MODE) : "?";
	}
}

/*
 * Every option but -i (a batch's inputs) is given at most once: a second
 * value would silently win over the first (usage.md: "an option given twice"
 * is refused).
 */
static int take_once(struct seen *s, int c, struct gf_errbuf *eb)
{
	if (c == 'i' || c == '?' || c == ':')
		return 0;
	for (int k = 0; k < s->n_given; k++) {
		if (s->given[k] == c) {
			gf_errbuf_set(eb, "%s given twice", opt_name(c));
			return GF_E_INVAL;
		}
	}
	if (s->n_given < MAX_OPTS)
		s->given[s->n_given++] = c;
	return 0;
}

/* A file-name value must be non-empty and not look like the next option. */
static int take_path(const char **dst, int c, const char *arg, struct gf_errbuf *eb)
{
	if (arg[0] == '\0') {
		gf_errbuf_set(eb, "%s needs a file name, got an empty string", opt_name(c));
		return GF_E_INVAL;
	}
	/* getopt happily takes "-o" as the value of "-i": almost always a missing value. */
	if (arg[0] == '-' && arg[1] != '\0') {
		gf_errbuf_set(eb, "%s needs a file name, got option '%s' (write ./%s for such a file)",
			      opt_name(c), arg, arg);
		return GF_E_INVAL;
	}
	*dst = arg;
	return 0;
}

/* -i may be given many times (a batch); the first stays in cli->input. */
static int take_input(struct gf_cli *cli, const char *arg, struct gf_errbuf *eb)
{
	const char *first = NULL;
	int err = take_path(&first, 'i', arg, eb);
	if (err)
		return err;
	if (cli->n_inputs == 0) {
		cli->input = arg;
		cli->n_inputs = 1;
		return 0;
	}
	if (!cli->inputs) {
		cli->inputs = malloc(2 * sizeof(*cli->inputs));
		if (!cli->inputs)
			return GF_E_NOMEM;
		cli->inputs[0] = cli->input;
	} else if ((cli->n_inputs & (cli->n_inputs - 1)) == 0) { /* grow at powers of two */
		const char **v = realloc(cli->inputs, 2 * cli->n_inputs * sizeof(*v));
		if (!v)
			return GF_E_NOMEM;
		cli->inputs = v;
	}
	cli->inputs[cli->n_inputs++] = arg;
	return 0;
}

static int parse_count(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (arg[0] < '1' || arg[0] > '9' || *end || v > 4096)
		return GF_E_INVAL;
	*out = (uint32_t)v;
	return 0;
}

static int getopt_error(int c, char *const argv[], struct gf_errbuf *eb)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	if (c == ':') {
		gf_errbuf_set(eb, "option '%s' needs a value", arg);
	} else if (strncmp(arg, "--", 2) == 0) {
		gf_errbuf_set(eb, "unknown or ambiguous option '%s'", arg);
	} else if (optopt) {
		gf_errbuf_set(eb, "unknown option '-%c'", optopt);
	} else {
		gf_errbuf_set(eb, "unknown option '%s'", arg);
	}
	return GF_E_INVAL;
}

/* Keep the first option of a group: the message names it if the group does not fit the mode. */
static void note_first(int *first, int c)
{
	if (!*first)
		*first = c;
}

static int unknown_value(struct gf_errbuf *eb, const char *what, const char *arg, const char *choices)
{
	gf_errbuf_set(eb, "unknown %s '%s' (use %s)", what, arg, choices);
	return GF_E_INVAL;
}

/* --rate HZ: a whole number of Hz in the range gf_config_build accepts. */
static int take_rate(struct gf_cli *cli, const char *arg, struct gf_errbuf *eb)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (end == arg || *end != '\0' || errno || arg[0] == '-' || v < GF_RATE_MIN || v > GF_RATE_MAX) {
		gf_errbuf_set(eb, "--rate needs a sample rate in Hz (%u..%u), got '%s'", GF_RATE_MIN,
			      GF_RATE_MAX, arg);
		return GF_E_INVAL;
	}
	cli->rate = (unsigned)v;
	return 0;
}

/* The batch's options: each makes the offline run a batch. */
static int take_batch_option(struct gf_cli *cli, struct seen *s, int c, struct gf_errbuf *eb)
{
	note_first(&s->offline_only, c);
	cli->batch = cli->batch || c != OPT_GPU;
	switch (c) {
	case 'j':
		if (parse_count(optarg, &cli->jobs) == 0)
			return 0;
		gf_errbuf_set(eb, "-j/--jobs needs a count from 1 to 4096, got '%s'", optarg);
		return GF_E_INVAL;
	case OPT_BATCH:
		s->modes[GF_MODE_OFFLINE] = 1;
		if (!optarg[0]) {
			gf_errbuf_set(eb, "--batch needs a list file (or - for standard input)");
			return GF_E_INVAL;
		}
		cli->batch_list = optarg;
		return 0;
	case OPT_SHARD:
		cli->shard_set = 1;
		if (gf_offline_shard_parse(optarg, &cli->shard_k, &cli->shard_n) == 0)
			return 0;
		gf_errbuf_set(eb, "--shard needs K/N with 0 <= K < N (e.g. 0/4), got '%s'", optarg);
		return GF_E_INVAL;
	case OPT_SKIP_EXISTING:
		cli->skip_existing = 1;
		return 0;
	case '0':
		cli->null_list = 1;
		return 0;
	default: /* OPT_GPU */
		cli->gpu_set = 1;
		if (gf_offline_gpus_parse(optarg, &cli->gpus) == 0)
			return 0;
		gf_errbuf_set(eb, "--gpu needs 'all' or device numbers like 0 or 0,1, got '%s'", optarg);
		return GF_E_INVAL;
	}
}

/* Handle one option from getopt_long. */
static int take_option(struct gf_cli *cli, struct seen *s, int c, char *const argv[], struct gf_errbuf *eb)
{
	switch (c) {
	case 'i':
		s->modes[GF_MODE_OFFLINE] = 1;
		return take_input(cli, optarg, eb);
	case 'o':
		s->modes[GF_MODE_OFFLINE] = 1;
		return take_path(&cli->output, c, optarg, eb);
	case 'c':
		s->config = 1;
		return take_path(&cli->config, c, optarg, eb);
	case 'b':
		note_first(&s->engine_opt, c);
		cli->backend_set = 1;
		if (gf_backend_parse(optarg, &cli->backend) == 0)
			return 0;
		return unknown_value(eb, "backend", optarg, "auto, cpu or cuda");
	case 'a':
		note_first(&s->engine_opt, c);
		cli->algo_set = 1;
		if (gf_algo_parse(optarg, &cli->algo) == 0)
			return 0;
		return unknown_value(eb, "algorithm", optarg, "auto, direct or fft");
	case 't':
		note_first(&s->offline_only, c);
		cli->tail = 1;
		return 0;
	case OPT_CAUSAL:
		note_first(&s->offline_only, c);
		cli->causal = 1;
		return 0;
	case 'f':
		note_first(&s->offline_only, c);
		if (gf_offline_parse_format(optarg, &cli->format_subtype) == 0)
			return 0;
		gf_errbuf_set(eb, "unknown output format '%s' (use one of %s)", optarg,
			      gf_offline_format_list());
		return GF_E_INVAL;
	case 'j':
	case '0':
	case OPT_BATCH:
	case OPT_SHARD:
	case OPT_SKIP_EXISTING:
	case OPT_GPU:
		return take_batch_option(cli, s, c, eb);
	case OPT_THREADS:
		note_first(&s->offline_only, c);
		if (parse_count(optarg, &cli->threads) == 0)
			return 0;
		gf_errbuf_set(eb, "--threads needs a count from 1 to 4096, got '%s'", optarg);
		return GF_E_INVAL;
	case 'q':
		cli->quiet = 1;
		return 0;
	case 'v':
		cli->verbose = 1;
		return 0;
	case 'h':
		s->help = 1;
		return 0;
	case 'V':
		s->version = 1;
		return 0;
	case OPT_LIVE:
	case OPT_LIST_DEVICES:
	case OPT_CHECK_CONFIG:
	case OPT_STATUS:
	case OPT_PLOT:
		s->modes[c - OPT_MODE] = 1;
		return 0;
	case OPT_EXPORT:
		s->modes[GF_MODE_EXPORT] = 1;
		return take_path(&cli->export_dir, c, optarg, eb);
	case OPT_JSON:
		cli->json = 1;
		return 0;
	case OPT_RATE:
		s->rate = 1;
		return take_rate(cli, optarg, eb);
	default:
		return getopt_error(c, argv, eb);
	}
}

/* Exactly one mode: the offline one, or one of the --MODE switches. */
static int pick_mode(struct gf_cli *cli, struct seen *s, struct gf_errbuf *eb)
{
	/* --plot and --export-filters read -i IN for its rate, --plot writes -o SVG */
	if (s->modes[GF_MODE_PLOT] || s->modes[GF_MODE_EXPORT]) {
		if (s->modes[GF_MODE_EXPORT] && cli->output) {
			gf_errbuf_set(eb,
				      "-o/--output does not apply to --export-filters (DIR is its operand)");
			return GF_E_INVAL;
		}
		s->modes[GF_MODE_OFFLINE] = 0;
	}
	for (int m = GF_MODE_OFFLINE; m <= GF_MODE_PLOT; m++) {
		if (!s->modes[m])
			continue;
		if (cli->mode != GF_MODE_NONE) {
			gf_errbuf_set(eb, "conflicting modes: %s and %s (choose one)",
				      gf_cli_mode_name(cli->mode), gf_cli_mode_name(m));
			return GF_E_INVAL;
		}
		cli->mode = (enum gf_cli_mode)m;
	}
	if (cli->mode == GF_MODE_NONE) {
		gf_errbuf_set(eb, "nothing to do: give -i IN -o OUT, --live, --list-devices, "
				  "--check-config, --status, --plot or --export-filters DIR");
		return GF_E_INVAL;
	}
	return 0;
}

/* Options that mean nothing in the chosen mode are errors, not silently ignored. */
static int check_mode_options(struct gf_cli *cli, const struct seen *s, struct gf_errbuf *eb)
{
	enum gf_cli_mode m = cli->mode;
	if (s->offline_only && m != GF_MODE_OFFLINE) {
		gf_errbuf_set(eb, "%s applies only to offline mode (-i IN -o OUT), not %s",
			      opt_name(s->offline_only), gf_cli_mode_name(m));
		return GF_E_INVAL;
	}
	if (s->engine_opt && m != GF_MODE_OFFLINE && m != GF_MODE_LIVE) {
		gf_errbuf_set(eb, "%s applies only to offline mode and --live, not %s",
			      opt_name(s->engine_opt), gf_cli_mode_name(m));
		return GF_E_INVAL;
	}
	if (s->rate && m != GF_MODE_CHECK_CONFIG && m != GF_MODE_EXPORT && m != GF_MODE_PLOT) {
		gf_errbuf_set(eb,
			      "--rate applies only to --check-config, --export-filters and --plot, not %s",
			      gf_cli_mode_name(m));
		return GF_E_INVAL;
	}
	if (cli->json && m != GF_MODE_STATUS) {
		gf_errbuf_set(eb, "--json applies only to --status, not %s", gf_cli_mode_name(m));
		return GF_E_INVAL;
	}
	if (s->config && m == GF_MODE_LIST_DEVICES) {
		gf_errbuf_set(eb, "-c/--config does not apply to --list-devices");
		return GF_E_INVAL;
	}
	if (cli->quiet && cli->verbose) {
		gf_errbuf_set(eb, "--quiet and --verbose contradict each other");
		return GF_E_INVAL;
	}
	return 0;
}

/* Positional operands: --check-config FILE and --status SOCKET take one; nothing else does. */
static int take_operand(struct gf_cli *cli, const struct seen *s, struct gf_errbuf *eb)
{
	if (s->n_operands == 0)
		return 0;
	int allowed = cli->mode == GF_MODE_CHECK_CONFIG || cli->mode == GF_MODE_STATUS;
	if (!allowed || s->n_operands > 1) {
		gf_errbuf_set(eb, "unexpected argument '%s'%s", allowed ? s->second : s->operand,
			      cli->mode == GF_MODE_OFFLINE ? " (input and output go after -i and -o)" : "");
		return GF_E_INVAL;
	}
	if (s->operand[0] == '\0') {
		gf_errbuf_set(eb, "empty argument for %s", gf_cli_mode_name(cli->mode));
		return GF_E_INVAL;
	}
	if (cli->mode == GF_MODE_STATUS) {
		cli->socket = s->operand;
		return 0;
	}
	if (cli->config && strcmp(cli->config, s->operand) != 0) {
		gf_errbuf_set(eb, "--check-config: two config files given ('%s' and '%s')", cli->config,
			      s->operand);
		return GF_E_INVAL;
	}
	cli->config = s->operand;
	return 0;
}

static int check_offline(struct gf_cli *cli, struct gf_errbuf *eb)
{
	if (cli->mode != GF_MODE_OFFLINE)
		return 0;
	size_t ol = cli->output ? strlen(cli->output) : 0;
	if (cli->n_inputs > 1 || (ol && cli->output[ol - 1] == '/') ||
	    (cli->gpu_set && (cli->gpus.all || cli->gpus.n > 1)))
		cli->batch = 1;
	if (cli->batch && !cli->input && !cli->batch_list) {
		gf_errbuf_set(eb, "missing -i IN or --batch LIST: a batch needs input files");
		return GF_E_INVAL;
	}
	if (cli->null_list && !cli->batch_list) {
		gf_errbuf_set(eb, "-0/--null applies to --batch LIST: it says the list's names end in NUL "
				  "bytes");
		return GF_E_INVAL;
	}
	if (cli->batch && !cli->output && !cli->batch_list) {
		gf_errbuf_set(eb, "missing -o DIR/: a batch needs an output directory");
		return GF_E_INVAL;
	}
	if (cli->batch)
		return 0;
	if (!cli->input) {
		gf_errbuf_set(eb, "missing -i IN: offline mode needs an input file");
		return GF_E_INVAL;
	}
	if (!cli->output) {
		gf_errbuf_set(eb, "missing -o OUT: offline mode needs an output file");
		return GF_E_INVAL;
	}
	return 0;
}

static int parse_all(struct gf_cli *cli, int argc, char *const argv[], struct gf_errbuf *eb)
{
	struct seen s;
	memset(&s, 0, sizeof(s));
	optind = 0; /* glibc: 0 re-initialises getopt completely */
	opterr = 0; /* we print our own messages */
	for (;;) {
		int c = getopt_long(argc, argv, short_opts, long_opts, NULL);
		if (c == -1)
			break;
		int err = take_once(&s, c, eb);
		if (!err)
			err = take_option(cli, &s, c, argv, eb);
		if (err)
			return err;
	}
	for (int i = optind; i < argc; i++) {
		if (s.n_operands == 0)
			s.operand = argv[i];
		else if (s.n_operands == 1)
			s.second = argv[i];
		s.n_operands++;
	}
	if (s.help || s.version) {
		cli->mode = s.help ? GF_MODE_HELP : GF_MODE_VERSION;
		return 0;
	}
	int err = pick_mode(cli, &s, eb);
	if (!err)
		err = check_mode_options(cli, &s, eb);
	if (!err)
		err = take_operand(cli, &s, eb);
	if (!err)
		err = check_offline(cli, eb);
	return err;
}

void gf_cli_free(struct gf_cli *cli)
{
	free(cli->inputs);
	cli->inputs = NULL;
}

int gf_cli_parse(struct gf_cli *cli, int argc, char *const argv[], struct gf_errbuf *eb)
{
	memset(cli, 0, sizeof(*cli));
	int err = parse_all(cli, argc, argv, eb);
	if (err)
		gf_cli_free(cli);
	return err;
}
