/*
 * The entry point of libgpufir-live.so (live_module.h): the live modes of
 * main(), run with the module's own copy of every layer. The program has
 * only parsed the command line when it hands over, so this parses it again
 * and starts from a clean process state.
 */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "daemon.h"
#include "engine.h"
#include "error.h"
#include "live.h"
#include "live_module.h"
#include "log.h"

static int run_live(const struct gf_cli *cli, char *const *argv)
{
	struct gf_daemon_opts o = {
		.src =
			{
				.path = cli->config,
				.backend_set = cli->backend_set,
				.backend = cli->backend,
				.algo_set = cli->algo_set,
				.algo = cli->algo,
				.live = 1,
			},
		.argv = argv,
	};
	int rc = gf_daemon_run(&o);
	if (gf_daemon_left_stuck_work()) {
		/* SIGTERM must end the process within 2 s whatever the GPU does:
		 * skip the atexit teardown, which could wait for the stuck work. */
		fflush(NULL);
		gf_engine_release_device_work();
		_exit(rc);
	}
	return rc;
}

static int run(int argc, char **argv)
{
	struct gf_cli cli;
	struct gf_errbuf eb = {{0}};
	if (gf_cli_parse(&cli, argc, argv, &eb) != 0) { /* the program's parse passed: not expected */
		fprintf(stderr, "gpufir: %s\n", eb.msg);
		return GF_EXIT_USAGE;
	}
	if (cli.quiet)
		gf_log_set_level(GF_LOG_WARN);
	else if (cli.verbose)
		gf_log_set_level(GF_LOG_DEBUG);
	int rc = GF_EXIT_USAGE;
	if (cli.mode == GF_MODE_LIVE)
		rc = run_live(&cli, argv);
	else if (cli.mode == GF_MODE_LIST_DEVICES)
		rc = gf_exit_code(gf_live_list_devices(stdout));
	gf_cli_free(&cli);
	return rc;
}

static const struct gf_live_module g_module = {GF_LIVE_MODULE_ABI, GPUFIR_VERSION, run};

const struct gf_live_module *gf_live_module_v1(void);

const struct gf_live_module *gf_live_module_v1(void)
{
	return &g_module;
}
