/*
 * gpufir's front end: parse the command line, pick the mode, own the signals
 * of offline mode, and turn results into the named exit codes of error.h.
 * Everything that does work lives in the library (offline.c, daemon.c, ...).
 * The live modes run in libgpufir-live.so (live_module.h), so that no other
 * mode maps PortAudio, JACK or libsystemd.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "cli.h"
#include "config.h"
#include "daemon.h"
#include "error.h"
#include "live_module.h"
#include "log.h"
#include "minphase.h"
#include "offline.h"
#include "response_view.h"
#include "suppress_bank.h"
#include "temp_file.h"
#include "tools.h"

#define DEFAULT_STATUS_SOCKET "/run/gpufir/status"

static atomic_int stop_signal; /* lock-free, so async-signal-safe */

static void die_by(int sig)
{
	gf_temp_unlink_now();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_stop_signal(int sig)
{
	/* Setting up writes nothing: stop now rather than when the build ends. */
	if (gf_offline_in_setup()) {
		static const char m[] = "gpufir: interrupted during set-up: nothing was written\n";
		(void)!write(STDERR_FILENO, m, sizeof(m) - 1);
		_exit(GF_EXIT_INTERRUPTED);
	}
	/* A second Ctrl-C means "now": remove the temporary output and die by the signal. */
	if (atomic_exchange(&stop_signal, sig))
		die_by(sig);
}

/* SIGINT/SIGTERM ask offline mode to stop at the next chunk and clean up
 * (@p stop_polled; the filter tools poll nothing, so there they end the
 * process like the others); every other signal that would end the process
 * removes the temporary output first (SIGPIPE: `gpufir -v ... 2>&1 | head -c1`). */
static void install_stop_handlers(int stop_polled)
{
	static const int fatal[] = {SIGHUP,  SIGPIPE, SIGQUIT,	 SIGUSR1, SIGUSR2, SIGALRM,
				    SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGPOLL};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_polled ? on_stop_signal : die_by;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART; /* file I/O carries on; the flag is polled */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = die_by;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old;
		/* a signal ignored by whoever started us (nohup) stays ignored */
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fatal[i], &sa, NULL);
	}
}

static struct gf_config_source config_source(const struct gf_cli *cli)
{
	return (struct gf_config_source){
		.path = cli->config,
		.backend_set = cli->backend_set,
		.backend = cli->backend,
		.algo_set = cli->algo_set,
		.algo = cli->algo,
	};
}

static struct gf_offline_opts offline_opts(const struct gf_cli *cli)
{
	return (struct gf_offline_opts){
		.input = cli->input,
		.output = cli->output,
		.src = config_source(cli),
		.tail = cli->tail,
		.causal = cli->causal,
		.format_subtype = cli->format_subtype,
		.progress = !cli->quiet && isatty(STDERR_FILENO),
		.log_level_set = cli->quiet || cli->verbose,
		.stop = &stop_signal,
		.gpu_set = cli->gpu_set && !cli->gpus.all && cli->gpus.n == 1,
		.gpu_index = cli->gpus.n ? cli->gpus.index[0] : 0,
		.threads = cli->threads,
	};
}

static int run_offline(const struct gf_cli *cli)
{
	struct gf_offline_opts o = offline_opts(cli);
	install_stop_handlers(1);
	struct gf_errbuf eb = {{0}};
	int err = gf_offline_run(&o, &eb);
	if (err)
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	return gf_exit_code(err);
}

/*
 * -o of a batch: a directory (created if it ends in '/' and is missing), or,
 * for a single -i without --batch, a file as in a plain run. @return 1 for a
 * directory, 0 for a file, a GF_E_* code on error.
 */
static int batch_outdir(const struct gf_cli *cli, struct gf_errbuf *eb)
{
	const char *o = cli->output;
	size_t n = strlen(o);
	struct stat st;
	if (stat(o, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 1;
	} else if (n && o[n - 1] == '/') {
		if (mkdir(o, 0777) == 0 || errno == EEXIST)
			return 1;
		gf_errbuf_set(eb, "cannot create the output directory %s: %s", o, strerror(errno));
		return GF_E_IO;
	}
	if (cli->n_inputs == 1 && !cli->batch_list && !(n && o[n - 1] == '/'))
		return 0;
	gf_errbuf_set(eb, "-o %s: a batch writes into a directory (give DIR/; it is created)", o);
	return GF_E_IO;
}

static int batch_jobs(const struct gf_cli *cli, struct gf_offline_jobs *j, struct gf_errbuf *eb)
{
	const char *outdir = NULL;
	int err = 0;
	if (cli->output) {
		int dir = batch_outdir(cli, eb);
		if (dir < 0)
			return dir;
		if (dir)
			outdir = cli->output;
		else
			return gf_offline_jobs_add(j, cli->input, cli->output, NULL, eb);
	}
	for (size_t i = 0; i < cli->n_inputs && !err; i++)
		err = gf_offline_jobs_add(j, cli->inputs ? cli->inputs[i] : cli->input, NULL, outdir, eb);
	if (!err && cli->batch_list)
		err = gf_offline_jobs_read_list(j, cli->batch_list, outdir, cli->null_list, eb);
	if (!err && cli->shard_set)
		gf_offline_jobs_shard(j, cli->shard_k, cli->shard_n);
	return err;
}

/* Many files in one process: a summary line, and the first failure's exit status. */
static int run_batch(const struct gf_cli *cli)
{
	struct gf_offline_jobs jobs = {0};
	struct gf_errbuf eb = {{0}};
	int err = batch_jobs(cli, &jobs, &eb);
	if (err) {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		gf_offline_jobs_free(&jobs);
		if (err == GF_E_NOMEM) /* the list did not fit: nothing ran (docs/usage.md) */
			return GF_EXIT_FAILURE;
		return err == GF_E_INVAL ? GF_EXIT_USAGE : gf_exit_code(err);
	}
	struct gf_offline_batch_opts bo = {
		.base = offline_opts(cli),
		.jobs = &jobs,
		.lanes = cli->jobs,
		.gpus = cli->gpu_set ? &cli->gpus : NULL,
		.skip_existing = cli->skip_existing,
	};
	bo.base.input = bo.base.output = NULL;
	install_stop_handlers(1);
	struct gf_offline_batch_result res;
	err = gf_offline_batch_run(&bo, &res, &eb);
	if (err)
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_offline_jobs_free(&jobs);
	return gf_exit_code(err);
}

static const char *backend_name(enum gf_backend_kind b)
{
	return b == GF_BACKEND_CPU ? "cpu" : b == GF_BACKEND_CUDA ? "cuda" : "auto";
}

static const char *algo_name(enum gf_algo a)
{
	return a == GF_ALGO_DIRECT ? "direct" : a == GF_ALGO_FFT ? "fft" : "auto";
}

/* The most shorter channels (or mixer paths) the taps line names: a mixer may have a million. */
#define SHORTER_MAX 16u

/* Taps up to the last nonzero coefficient: what the filter really needs. */
static uint32_t effective_taps(const struct gf_filter_set *fs, uint32_t c)
{
	const float *h = gf_filter_set_channel(fs, c);
	uint32_t n = fs->taps;
	while (n > 0 && h[n - 1] == 0.0f)
		n--;
	return n;
}

static void print_config_summary(FILE *out, const struct gf_config *cfg, const struct gf_filter_set *fs,
				 const struct gf_response_view *view, uint32_t rate)
{
	fprintf(out, "%s: OK\n", cfg->path ? cfg->path : "built-in default configuration");
	fprintf(out, "  sample rate:  %u Hz%s\n", rate,
		cfg->sample_rate ? "" : " (not set; offline mode uses the file's rate)");
	if (gf_filter_set_is_mixer(fs))
		fprintf(out,
			"  channels:     %u in, %u out (mixer of %u paths; \"channel\" below: path, "
			"\"output\": "
			"the sum of an output's paths)\n",
			fs->inputs, fs->outputs, fs->channels);
	else
		fprintf(out, "  channels:     %u\n", fs->channels);
	fprintf(out, "  filters:      %u defined", cfg->n_filters);
	for (uint32_t i = 0; i < cfg->n_chain; i++)
		fprintf(out, "%s%s", i ? " -> " : "; chain: ", cfg->chain[i]);
	if (cfg->n_routes)
		fprintf(out, "; %u route%s", cfg->n_routes, cfg->n_routes == 1 ? "" : "s");
	fputc('\n', out);
	fprintf(out, "  taps:         %u per channel (%.1f ms)", fs->taps, 1000.0 * fs->taps / rate);
	const char *sep = "; shorter: ";
	uint32_t shorter = 0;
	for (uint32_t c = 0; c < fs->channels; c++) {
		uint32_t n = effective_taps(fs, c);
		if (n != fs->taps && shorter++ < SHORTER_MAX) {
			fprintf(out, "%schannel %u has %u", sep, c, n);
			sep = ", ";
		}
	}
	if (shorter > SHORTER_MAX)
		fprintf(out, " and %u more", shorter - SHORTER_MAX);
	fputc('\n', out);
	fprintf(out, "  phase:        %s%s\n",
		gf_config_min_phase(cfg) ? "minimum" : "as designed (linear for designs)",
		cfg->phase == GF_PHASE_AUTO
			? " (phase = \"auto\": as in live mode; offline uses linear phase, aligned)"
			: "");
	gf_tool_print_delays(out, fs, view, rate);
	fprintf(out, "  engine:       backend %s, algo %s, block %u frames, crossfade %.1f ms%s%s\n",
		backend_name(cfg->backend), algo_name(cfg->algo), cfg->block_frames, cfg->crossfade_ms,
		cfg->gpu_path != GF_GPU_PATH_LAUNCHED ? ", gpu_path " : "",
		cfg->gpu_path != GF_GPU_PATH_LAUNCHED ? gf_gpu_path_name(cfg->gpu_path) : "");
	if (cfg->n_files > 1) {
		fprintf(out, "  files read:  ");
		for (uint32_t i = 1; i < cfg->n_files; i++)
			fprintf(out, " %s", cfg->files[i]);
		fputc('\n', out);
	}
}

/* --check-config: the same loading and building code as every other mode. */
static int run_check_config(const struct gf_cli *cli)
{
	struct gf_tool_build b;
	struct gf_errbuf eb = {{0}};
	struct gf_suppress_bank *bank = NULL;
	struct gf_response_view view = {0};
	int err = gf_tool_build(cli, &b, &eb);
	if (!err) /* reads its noise sample: a bad one is a config error here too */
		err = gf_chain_suppressor(b.cfg, &b.facts, NULL, &bank, &eb);
	int mixer = !err && gf_filter_set_is_mixer(b.fs);
	if (mixer && gf_response_view_new(&view, b.fs->coeffs, b.fs->channels, b.fs->taps, b.fs->path_out,
					  b.fs->outputs) != 0) {
		err = GF_E_NOMEM;
		gf_errbuf_set(&eb, "not enough memory for the mixer's response");
	}
	if (!err) {
		const struct gf_response_view *v = mixer ? &view : NULL;
		print_config_summary(stdout, b.cfg, b.fs, v, b.rate);
		gf_tool_print_suppressor(stdout, b.cfg, bank, b.fs->channels, b.rate);
		gf_tool_print_report(stdout, b.fs, v, b.rate);
	} else {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	}
	gf_response_view_free(&view);
	gf_suppress_bank_free(bank);
	gf_tool_build_free(&b);
	if (err == GF_E_NOMEM)
		return GF_EXIT_FAILURE;
	return err ? GF_EXIT_CONFIG : GF_EXIT_OK;
}

/* The system unit's socket @p sys, else the user unit's ($XDG_RUNTIME_DIR/gpufir/NAME, NAME
 * the last part of @p sys) when only that one exists: a desktop user's `gpufir --status` (and
 * `--status --json`) finds their own. */
static const char *default_socket(const char *sys, char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (access(sys, F_OK) == 0 || !xdg || xdg[0] != '/')
		return sys;
	snprintf(buf, len, "%s/gpufir/%s", xdg, strrchr(sys, '/') + 1);
	return access(buf, F_OK) == 0 ? buf : sys;
}

static int run_status(const struct gf_cli *cli)
{
	if (cli->socket)
		return cli->json ? gf_api_print_status(cli->socket) : gf_daemon_print_status(cli->socket);
	struct gf_config *cfg = NULL;
	struct gf_errbuf eb = {{0}};
	int err = gf_config_load_or_default(cli->config, &cfg, &eb);
	if (err) {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		return GF_EXIT_CONFIG;
	}
	char user[4096];
	int rc = cli->json ? gf_api_print_status(cfg->control_socket ? cfg->control_socket
								     : default_socket(GF_API_DEFAULT_SOCKET,
										      user, sizeof(user)))
			   : gf_daemon_print_status(cfg->status_socket ? cfg->status_socket
								       : default_socket(DEFAULT_STATUS_SOCKET,
											user, sizeof(user)));
	gf_config_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct gf_cli cli;
	struct gf_errbuf eb = {{0}};
	if (gf_cli_parse(&cli, argc, argv, &eb) != 0) {
		fprintf(stderr, "gpufir: %s\n", eb.msg);
		fprintf(stderr, "Try 'gpufir --help' for more information.\n");
		return GF_EXIT_USAGE;
	}
	if (cli.quiet)
		gf_log_set_level(GF_LOG_WARN);
	else if (cli.verbose)
		gf_log_set_level(GF_LOG_DEBUG);

	switch (cli.mode) {
	case GF_MODE_HELP:
		gf_cli_print_help(stdout);
		return GF_EXIT_OK;
	case GF_MODE_VERSION:
		gf_cli_print_version(stdout);
		return GF_EXIT_OK;
	case GF_MODE_OFFLINE: {
		int rc = cli.batch ? run_batch(&cli) : run_offline(&cli);
		gf_cli_free(&cli);
		return rc;
	}
	case GF_MODE_LIVE: /* PortAudio, JACK, libsystemd: only in the module (live_module.h) */
		gf_cli_free(&cli);
		return gf_live_module_run("live mode", argc, argv);
	case GF_MODE_LIST_DEVICES:
		gf_cli_free(&cli);
		return gf_live_module_run("--list-devices", argc, argv);
	case GF_MODE_CHECK_CONFIG:
		return run_check_config(&cli);
	case GF_MODE_STATUS:
		return run_status(&cli);
	case GF_MODE_EXPORT:
		install_stop_handlers(0);
		return gf_tool_run_export(&cli);
	case GF_MODE_PLOT:
		install_stop_handlers(0);
		return gf_tool_run_plot(&cli);
	default:
		return GF_EXIT_USAGE;
	}
}
