/*
 * The exit status of each kind of failure, through the real program: the
 * numbers are an interface (systemd units' RestartPreventExitStatus=, the
 * journal's names for them, scripts). A bad configuration is 6, which the
 * journal reads as NOTCONFIGURED, offline, in --check-config and at the live
 * daemon's start-up alike.
 */
#include <sndfile.h>

#include "error.h"
#include "run_prog.h"

static char *dir;

static char *write_wav(const char *name)
{
	char *p = gf_test_path(dir, name);
	SF_INFO info = {.samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf);
	float x[2 * 256] = {0.5f, -0.5f};
	CHECK(sf_writef_float(sf, x, 256) == 256);
	sf_close(sf);
	return p;
}

int main(void)
{
	dir = gf_test_tmpdir("exit_codes");
	char *in = write_wav("in.wav"), *out = gf_test_path(dir, "out.wav");
	char *bad = gf_test_write_text_in(dir, "bad.conf",
					  "filters = ( { name = \"a\"; coeffs = [1.0]; } );\n"
					  "chain = [\"nosuch\"];\n");
	char *nofile = gf_test_write_text_in(dir, "nofile.conf",
					     "filters = ( { name = \"a\"; file = \"missing.txt\"; } );\n"
					     "chain = [\"a\"];\n");
	char *missing = gf_test_path(dir, "missing.conf");
	struct run_result r;

	run_gpufir(ARGS("-i", in), &r); /* no -o */
	CHECK_RUN(&r, 2, "missing -o OUT");
	CHECK(GF_EXIT_USAGE == 2);

	/* a bad config: 6 wherever it is read, and nothing written */
	run_gpufir(ARGS("-c", bad, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "nosuch");
	CHECK(!gf_test_exists(out));
	run_gpufir(ARGS("--check-config", bad), &r);
	CHECK_RUN(&r, 6, "nosuch");
	/* a filter file the config names but that is missing: the config is wrong */
	run_gpufir(ARGS("-c", nofile, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "missing.txt");
	/* the live daemon's start-up: the config is read before any audio device */
	run_gpufir(ARGS("--live", "-c", bad), &r);
	if (r.exit_code == 1 && strstr(r.err, "needs libgpufir-live.so"))
		fprintf(stderr, "  --live: the live module is not built here; not run\n");
	else
		CHECK_RUN(&r, 6, "nosuch");

	/* a missing config file: not configured (6) too, also at the daemon's start */
	run_gpufir(ARGS("-c", missing, "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 6, "missing.conf: cannot open the config");
	run_gpufir(ARGS("--live", "-c", missing), &r);
	if (r.exit_code != 1 || !strstr(r.err, "needs libgpufir-live.so"))
		CHECK_RUN(&r, 6, "missing.conf: cannot open the config");
	/* a missing input file: input/output, 4 */
	run_gpufir(ARGS("-i", missing, "-o", out), &r);
	CHECK_RUN(&r, 4, "missing.conf");

	/* the GPU backend demanded without a usable GPU: processing, 5 */
	run_gpufir(ARGS("--backend", "cuda", "-i", in, "-o", out), &r);
	if (r.exit_code == 0)
		fprintf(stderr, "  --backend cuda: a GPU is usable here; exit 5 not run\n");
	else
		CHECK_RUN(&r, 5, "CUDA");
	printf("test_exit_codes: ok (usage 2, config 6, input 4, processing 5)\n");
	gf_test_rmtree(dir);
	free(in), free(out), free(bad), free(nofile), free(missing), free(dir);
	return 0;
}
