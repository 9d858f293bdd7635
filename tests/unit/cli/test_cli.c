/*
 * Command-line parsing: every mode parses into the right fields, every
 * mistake is a usage error with a message that names the problem, and the
 * real program turns those into exit status 2 with a hint. Also checks that
 * --help describes every option, and the progress line's format.
 */
#include <sndfile.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "progress.h"
#include "run_prog.h"
#include "testutil.h"

#define MAX_ARGS 16

/* Parse a NULL-terminated list of arguments (argv[0] added). */
static int parse(struct gf_cli *cli, struct gf_errbuf *eb, const char *const args[])
{
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = (char *)"gpufir";
	for (int i = 0; args[i]; i++) {
		CHECK(argc <= MAX_ARGS);
		argv[argc++] = (char *)args[i];
	}
	argv[argc] = NULL;
	memset(eb, 0, sizeof(*eb));
	return gf_cli_parse(cli, argc, argv, eb);
}

static void parse_ok(struct gf_cli *cli, const char *const args[])
{
	struct gf_errbuf eb;
	int err = parse(cli, &eb, args);
	if (err) {
		fprintf(stderr, "unexpected parse error for");
		for (int i = 0; args[i]; i++)
			fprintf(stderr, " %s", args[i]);
		fprintf(stderr, ": %s\n", eb.msg);
	}
	CHECK(err == 0);
}

/* A usage error whose message contains @p needle. */
static void parse_fails(const char *needle, const char *const args[])
{
	struct gf_cli cli;
	struct gf_errbuf eb;
	int err = parse(&cli, &eb, args);
	if (err != GF_E_INVAL || !strstr(eb.msg, needle)) {
		fprintf(stderr, "args:");
		for (int i = 0; args[i]; i++)
			fprintf(stderr, " '%s'", args[i]);
		fprintf(stderr, "\n  expected GF_E_INVAL with \"%s\", got %d: \"%s\"\n", needle, err, eb.msg);
		exit(1);
	}
	CHECK(gf_exit_code(err) == GF_EXIT_USAGE);
}

static void test_offline_mode(void)
{
	struct gf_cli c;
	parse_ok(&c, ARGS("-i", "in.wav", "-o", "out.wav"));
	CHECK(c.mode == GF_MODE_OFFLINE);
	CHECK(strcmp(c.input, "in.wav") == 0 && strcmp(c.output, "out.wav") == 0);
	CHECK(!c.config && !c.tail && !c.backend_set && !c.algo_set && c.format_subtype == 0);
	CHECK(!c.quiet && !c.verbose);

	parse_ok(&c, ARGS("--input=a.flac", "--output", "b.flac", "-c", "x.conf", "--backend", "cpu",
			  "--algo=fft", "--tail", "--format", "pcm_24", "-q"));
	CHECK(c.mode == GF_MODE_OFFLINE);
	CHECK(strcmp(c.input, "a.flac") == 0 && strcmp(c.output, "b.flac") == 0);
	CHECK(strcmp(c.config, "x.conf") == 0);
	CHECK(c.backend_set && c.backend == GF_BACKEND_CPU);
	CHECK(c.algo_set && c.algo == GF_ALGO_FFT);
	CHECK(c.tail && c.quiet && !c.verbose);
	CHECK(c.format_subtype == SF_FORMAT_PCM_24);

	/* Short forms, option order free (GNU permutation). */
	parse_ok(&c,
		 ARGS("-v", "-o", "o.wav", "-t", "-b", "cuda", "-a", "direct", "-f", "FLOAT", "-i", "i.wav"));
	CHECK(c.mode == GF_MODE_OFFLINE && c.verbose && c.tail);
	CHECK(c.backend == GF_BACKEND_CUDA && c.algo == GF_ALGO_DIRECT);
	CHECK(c.format_subtype == SF_FORMAT_FLOAT);
	parse_ok(&c, ARGS("-i", "i.wav", "-o", "o.wav", "--backend=auto", "--algo", "auto", "--format=double",
			  "--config=c.conf", "--verbose"));
	CHECK(c.backend_set && c.backend == GF_BACKEND_AUTO && c.algo == GF_ALGO_AUTO);
	CHECK(c.format_subtype == SF_FORMAT_DOUBLE && strcmp(c.config, "c.conf") == 0);
	/* "./-x" is how a file named "-x" is given. */
	parse_ok(&c, ARGS("-i", "./-x.wav", "-o", "-"));
	CHECK(strcmp(c.input, "./-x.wav") == 0 && strcmp(c.output, "-") == 0);
}

static void test_other_modes(void)
{
	struct gf_cli c;
	parse_ok(&c, ARGS("--live"));
	CHECK(c.mode == GF_MODE_LIVE && !c.config);
	parse_ok(&c, ARGS("--live", "-c", "/etc/gpufir/gpufir.conf", "--backend", "cuda", "--algo", "fft"));
	CHECK(c.mode == GF_MODE_LIVE && strcmp(c.config, "/etc/gpufir/gpufir.conf") == 0);
	CHECK(c.backend_set && c.backend == GF_BACKEND_CUDA && c.algo == GF_ALGO_FFT);

	parse_ok(&c, ARGS("--list-devices"));
	CHECK(c.mode == GF_MODE_LIST_DEVICES);

	parse_ok(&c, ARGS("--check-config", "a.conf"));
	CHECK(c.mode == GF_MODE_CHECK_CONFIG && strcmp(c.config, "a.conf") == 0);
	parse_ok(&c, ARGS("--check-config", "-c", "b.conf"));
	CHECK(c.mode == GF_MODE_CHECK_CONFIG && strcmp(c.config, "b.conf") == 0);
	parse_ok(&c, ARGS("b.conf", "--check-config", "-c", "b.conf"));
	CHECK(strcmp(c.config, "b.conf") == 0);
	parse_ok(&c, ARGS("--check-config"));
	CHECK(c.mode == GF_MODE_CHECK_CONFIG && !c.config);

	parse_ok(&c, ARGS("--status"));
	CHECK(c.mode == GF_MODE_STATUS && !c.socket && !c.config);
	parse_ok(&c, ARGS("--status", "/tmp/gpufir.sock"));
	CHECK(c.mode == GF_MODE_STATUS && strcmp(c.socket, "/tmp/gpufir.sock") == 0);
	parse_ok(&c, ARGS("--status", "-c", "x.conf"));
	CHECK(c.mode == GF_MODE_STATUS && !c.socket && strcmp(c.config, "x.conf") == 0);

	parse_ok(&c, ARGS("--help"));
	CHECK(c.mode == GF_MODE_HELP);
	parse_ok(&c, ARGS("-h"));
	CHECK(c.mode == GF_MODE_HELP);
	parse_ok(&c, ARGS("--live", "--list-devices", "--help")); /* help wins over a conflict */
	CHECK(c.mode == GF_MODE_HELP);
	parse_ok(&c, ARGS("--version"));
	CHECK(c.mode == GF_MODE_VERSION);
	parse_ok(&c, ARGS("-V"));
	CHECK(c.mode == GF_MODE_VERSION);
}

static void test_errors(void)
{
	parse_fails("nothing to do", ARGS("-q"));
	parse_fails("missing -o", ARGS("-i", "in.wav"));
	parse_fails("missing -i", ARGS("-o", "out.wav"));
	parse_fails("missing -o", ARGS("-i", "in.wav", "--tail", "-c", "x.conf"));
	parse_fails("unknown backend 'opencl'", ARGS("-i", "a", "-o", "b", "--backend", "opencl"));
	parse_fails("unknown backend", ARGS("--live", "-b", ""));
	parse_fails("unknown algorithm 'fast'", ARGS("-i", "a", "-o", "b", "--algo=fast"));
	parse_fails("unknown output format 'PCM_17'", ARGS("-i", "a", "-o", "b", "--format", "PCM_17"));
	parse_fails("option '-i' needs a value", ARGS("-i"));
	parse_fails("option '--input' needs a value", ARGS("-o", "b", "--input"));
	parse_fails("option '--backend' needs a value", ARGS("-i", "a", "-o", "b", "--backend"));
	parse_fails("-i/--input needs a file name, got option '-o'", ARGS("-i", "-o", "b.wav"));
	parse_fails("needs a file name, got an empty string", ARGS("-i", "", "-o", "b.wav"));
	parse_fails("-o/--output given twice", ARGS("-i", "a", "-o", "b", "-o", "c"));
	/* every option but -i at most once: a second value would silently win */
	parse_fails("-c/--config given twice", ARGS("-i", "a", "-o", "b", "-c", "x", "--config=y"));
	parse_fails("--backend given twice", ARGS("-i", "a", "-o", "b", "-b", "cpu", "-b", "cuda"));
	parse_fails("--algo given twice", ARGS("-i", "a", "-o", "b", "-a", "fft", "--algo", "fft"));
	parse_fails("--format given twice", ARGS("-i", "a", "-o", "b", "-f", "FLOAT", "-f", "PCM_16"));
	parse_fails("--tail given twice", ARGS("-i", "a", "-o", "b", "-t", "--tail"));
	parse_fails("--causal given twice", ARGS("-i", "a", "-o", "b", "--causal", "--causal"));
	parse_fails("--threads given twice", ARGS("-i", "a", "-o", "b", "--threads", "2", "--threads", "3"));
	parse_fails("-q/--quiet given twice", ARGS("-i", "a", "-o", "b", "-q", "-q"));
	parse_fails("-v/--verbose given twice", ARGS("-i", "a", "-o", "b", "-v", "--verbose"));
	parse_fails("--rate given twice", ARGS("--plot", "--rate", "48000", "--rate", "44100"));
	parse_fails("--live given twice", ARGS("--live", "--live"));
	parse_fails("--export-filters given twice", ARGS("--export-filters", "d", "--export-filters", "e"));
	parse_fails("conflicting modes", ARGS("--live", "-i", "a", "-o", "b"));
	parse_fails("conflicting modes: --live and --list-devices", ARGS("--list-devices", "--live"));
	parse_fails("conflicting modes", ARGS("--check-config", "x.conf", "--status"));
	parse_fails("conflicting modes", ARGS("-i", "a", "--status"));
	parse_fails("unknown or ambiguous option '--bogus'", ARGS("--bogus"));
	parse_fails("unknown or ambiguous option '--li'", ARGS("--li"));
	parse_fails("unknown or ambiguous option '--tail=yes'", ARGS("-i", "a", "-o", "b", "--tail=yes"));
	parse_fails("unknown option '-x'", ARGS("-i", "a", "-o", "b", "-x"));
	parse_fails("--tail applies only to offline mode", ARGS("--live", "--tail"));
	parse_fails("--format applies only to offline mode", ARGS("--check-config", "--format", "FLOAT"));
	parse_fails("--backend applies only to offline mode and --live", ARGS("--list-devices", "-b", "cpu"));
	parse_fails("--algo applies only", ARGS("--status", "--algo", "fft"));
	parse_fails("-c/--config does not apply to --list-devices", ARGS("--list-devices", "-c", "x"));
	parse_fails("--quiet and --verbose", ARGS("-i", "a", "-o", "b", "-q", "-v"));
	parse_fails("unexpected argument 'extra'", ARGS("-i", "a", "-o", "b", "extra"));
	parse_fails("unexpected argument 'x'", ARGS("--live", "x"));
	parse_fails("unexpected argument 'b'", ARGS("--check-config", "a", "b"));
	parse_fails("two config files", ARGS("--check-config", "-c", "a.conf", "b.conf"));
	parse_fails("unexpected argument", ARGS("--status", "s1", "s2"));
}

/* The parser resets getopt: a failed parse does not disturb the next one. */
static void test_batch_options(void)
{
	struct gf_cli c;
	parse_ok(&c, ARGS("-i", "a.wav", "-o", "b.wav"));
	CHECK(!c.batch && c.n_inputs == 1 && !c.inputs);
	parse_ok(&c, ARGS("-i", "a.wav", "-i", "b.wav", "-i", "c.wav", "-o", "out"));
	CHECK(c.batch && c.n_inputs == 3 && strcmp(c.inputs[2], "c.wav") == 0 &&
	      strcmp(c.input, "a.wav") == 0);
	gf_cli_free(&c);
	parse_ok(&c, ARGS("-i", "a.wav", "-o", "dir/"));
	CHECK(c.batch);
	parse_ok(&c, ARGS("--batch", "-", "--shard", "2/5", "--skip-existing", "-j", "8", "--gpu", "0,1"));
	CHECK(c.mode == GF_MODE_OFFLINE && c.batch && strcmp(c.batch_list, "-") == 0);
	CHECK(c.shard_set && c.shard_k == 2 && c.shard_n == 5 && c.skip_existing && c.jobs == 8);
	CHECK(c.gpu_set && !c.gpus.all && c.gpus.n == 2 && c.gpus.index[1] == 1);
	parse_ok(&c, ARGS("-i", "a.wav", "-o", "b.wav", "--gpu", "1"));
	CHECK(!c.batch && c.gpu_set && c.gpus.n == 1 && c.gpus.index[0] == 1);
	parse_ok(&c, ARGS("-i", "a.wav", "-o", "d", "--gpu", "all"));
	CHECK(c.batch && c.gpus.all);
	parse_fails("--shard needs K/N", ARGS("--batch", "l", "-o", "d/", "--shard", "4/4"));
	parse_fails("--shard needs K/N", ARGS("--batch", "l", "-o", "d/", "--shard", "x"));
	parse_fails("-j/--jobs needs a count", ARGS("--batch", "l", "-o", "d/", "-j", "0"));
	parse_fails("--gpu needs", ARGS("--batch", "l", "-o", "d/", "--gpu", "0,0"));
	parse_fails("--gpu needs", ARGS("--batch", "l", "-o", "d/", "--gpu", "-1"));
	parse_fails("--batch given twice", ARGS("--batch", "l", "--batch", "m"));
	parse_fails("-j/--jobs given twice", ARGS("--batch", "l", "-o", "d/", "-j", "2", "-j", "3"));
	parse_fails("--shard given twice",
		    ARGS("--batch", "l", "-o", "d/", "--shard", "0/2", "--shard", "1/2"));
	parse_fails("--gpu given twice", ARGS("--batch", "l", "-o", "d/", "--gpu", "0", "--gpu", "1"));
	parse_fails("--skip-existing given twice",
		    ARGS("--batch", "l", "-o", "d/", "--skip-existing", "--skip-existing"));
	parse_fails("-0/--null given twice", ARGS("--batch", "l", "-o", "d/", "-0", "--null"));
	parse_fails("-0/--null applies to --batch LIST", ARGS("-i", "a", "-i", "b", "-o", "d/", "-0"));
	parse_fails("applies only to offline mode", ARGS("--live", "--null"));
	parse_ok(&c, ARGS("--batch", "-", "-0", "-o", "d/"));
	CHECK(c.batch && c.null_list && strcmp(c.batch_list, "-") == 0);
	parse_ok(&c, ARGS("-i", "a", "-i", "a", "-o", "d/")); /* -i is the one option given many times */
	CHECK(c.n_inputs == 2);
	gf_cli_free(&c);
	parse_fails("a batch needs an output directory", ARGS("-i", "a", "-i", "b"));
	parse_fails("a batch needs input files", ARGS("-o", "d/", "--skip-existing"));
	parse_fails("applies only to offline mode", ARGS("--live", "--shard", "0/2"));
	parse_fails("-i/--input needs a file name", ARGS("-i", "a", "-i", "", "-o", "d/"));
}

static void test_reparse(void)
{
	struct gf_cli c;
	parse_fails("unknown option", ARGS("-Z"));
	parse_ok(&c, ARGS("-i", "a", "-o", "b"));
	CHECK(c.mode == GF_MODE_OFFLINE);
	parse_fails("option '-o' needs a value", ARGS("-i", "a", "-o"));
	parse_ok(&c, ARGS("--list-devices"));
	CHECK(c.mode == GF_MODE_LIST_DEVICES);
}

static void test_help_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f);
	gf_cli_print_help(f);
	fclose(f);
	static const char *const must[] = {
		"--input",
		"--output",
		"--config",
		"--backend",
		"--algo",
		"--tail",
		"--format",
		"--quiet",
		"--verbose",
		"--live",
		"--list-devices",
		"--check-config",
		"--status",
		"--help",
		"--version",
		"--batch",
		"--shard",
		"--skip-existing",
		"--jobs",
		"--gpu",
		"--null",
		"-0,",
		"-j,",
		"-i,",
		"-o,",
		"-c,",
		"-b,",
		"-a,",
		"-t,",
		"-f,",
		"-q,",
		"-v,",
		"-h,",
		"-V,",
		"Exit status",
		"130",
		"PCM_24",
		"/run/gpufir/status",
	};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		if (!strstr(text, must[i])) {
			fprintf(stderr, "--help does not mention \"%s\"\n", must[i]);
			exit(1);
		}
	}
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	gf_cli_print_version(f);
	fclose(f);
	CHECK(strstr(text, "gpufir " GPUFIR_VERSION) && strstr(text, "libsndfile"));
	free(text);
}

static void test_progress_format(void)
{
	char line[160];
	gf_progress_format(line, sizeof(line), 0.5, 12.34, 65.0);
	CHECK(strstr(line, " 50.0%") && strstr(line, "12.3x realtime") && strstr(line, "ETA 1:05"));
	CHECK(strstr(line, "[###############...............]"));
	gf_progress_format(line, sizeof(line), 1.0, 100.0, 0.0);
	CHECK(strstr(line, "100.0%") && strstr(line, "ETA 0:00"));
	gf_progress_format(line, sizeof(line), 0.01, 0.5, 3725.0);
	CHECK(strstr(line, "ETA 1:02:05"));
	gf_progress_format(line, sizeof(line), -1.0, 3.0, -1.0);
	CHECK(strstr(line, "3.0x realtime") && !strstr(line, "%"));
}

/* The program itself: usage errors exit 2 with the message and a one-line hint. */
static void test_program(void)
{
	struct run_result r;
	run_gpufir(ARGS("-i", "in.wav"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "missing -o");
	CHECK(strstr(r.err, "Try 'gpufir --help'"));
	run_gpufir(ARGS("--backend", "opencl", "-i", "a", "-o", "b"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "unknown backend 'opencl'");
	run_gpufir(ARGS("-i"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "needs a value");
	run_gpufir(ARGS("--live", "--list-devices"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "conflicting modes");
	run_gpufir(ARGS("-q"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "nothing to do");
	run_gpufir(ARGS("-i", "a", "-o", "b", "-b", "cpu", "-b", "cuda"), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "--backend given twice");

	run_gpufir(ARGS("--help"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(strstr(r.out, "--check-config") && r.err[0] == '\0');
	run_gpufir(ARGS("--version"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	CHECK(strncmp(r.out, "gpufir ", 7) == 0);
}

int main(void)
{
	test_offline_mode();
	test_other_modes();
	test_errors();
	test_batch_options();
	test_reparse();
	test_help_text();
	test_progress_format();
	test_program();
	printf("test_cli: OK\n");
	return 0;
}
