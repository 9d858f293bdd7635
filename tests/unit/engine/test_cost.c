/*
 * auto by cost (src/engine/cost/cost.h): the choice with injected costs, the cost
 * cache (missing, corrupt, unwritable, atomic replacement, averaging of
 * measurements), and the program's choice through the cache file (-v says
 * which backend and why; a CPU choice never loads the CUDA module).
 */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "cpu_direct.h"
#include "error.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

static char *dir;

static struct gf_cost_calib calib(double startup_ms, double ns_per_sample)
{
	struct gf_cost_calib c;
	gf_cost_calib_defaults(&c);
	c.gpu_startup_ms = startup_ms;
	c.gpu_ns_per_sample = ns_per_sample;
	c.measured = 1;
	return c;
}

static void test_pick(void)
{
	struct gf_cost_estimate e;
	struct gf_cost_calib c = calib(300.0, 0.5);
	/* 5 s stereo at 4095 taps: milliseconds on the CPU against 300 ms of start-up. */
	struct gf_cost_job small = {.samples = 480000, .taps = 4095, .channels = 2, .max_block = 65536};
	CHECK(gf_cost_pick(&small, &c, &e) == GF_BACKEND_CPU);
	CHECK(e.cpu_ms > 0.0 && e.cpu_ms < e.gpu_ms);
	CHECK(fabs(e.gpu_ms - (300.0 + 480000 * 0.5e-6)) < 1e-9);
	CHECK(strstr(e.why, "cpu:") == e.why && strstr(e.why, "measured here"));
	/* The same filter on ten hours: the CPU's run outgrows any start-up. */
	struct gf_cost_job big = small;
	big.samples = 10ull * 3600 * 48000 * 2;
	CHECK(gf_cost_pick(&big, &c, &e) == GF_BACKEND_CUDA);
	CHECK(e.cpu_ms > e.gpu_ms && strstr(e.why, "cuda:") == e.why);
	/* The threshold follows the injected start-up: with none, the GPU wins the small job. */
	struct gf_cost_calib free_start = calib(0.0, 0.0);
	CHECK(gf_cost_pick(&small, &free_start, &e) == GF_BACKEND_CUDA);
	/* A tie goes to the CPU (nothing to start). */
	struct gf_cost_job one = small;
	double cpu = 480000 * gf_cost_cpu_ns_per_sample(4095, 2, 65536, GF_ALGO_AUTO) * 1e-6;
	struct gf_cost_calib tie = calib(cpu, 0.0);
	CHECK(gf_cost_pick(&one, &tie, &e) == GF_BACKEND_CPU);
	/* Lanes divide the CPU's run. */
	struct gf_cost_calib mid = calib(cpu * 0.75, 0.0);
	CHECK(gf_cost_pick(&one, &mid, &e) == GF_BACKEND_CUDA);
	one.cpu_threads = 2;
	CHECK(gf_cost_pick(&one, &mid, &e) == GF_BACKEND_CPU);
	/* Unknown size: CUDA if usable, as before. */
	struct gf_cost_job unknown = small;
	unknown.samples = 0;
	CHECK(gf_cost_pick(&unknown, &c, &e) == GF_BACKEND_CUDA);
	/* The default says so. */
	struct gf_cost_calib d;
	gf_cost_calib_defaults(&d);
	CHECK(d.gpu_startup_ms == GF_COST_GPU_STARTUP_DEFAULT_MS && !d.measured);
	gf_cost_pick(&small, &d, &e);
	CHECK(strstr(e.why, "by default"));
	printf("pick: %s\n", e.why);
}

static void test_model(void)
{
	/* The CPU backend's own model: forced methods are its two costs, auto the cheaper. */
	double direct = gf_cost_cpu_ns_per_sample(255, 2, 65536, GF_ALGO_DIRECT);
	CHECK(direct == gf_cpu_direct_cost(255));
	for (uint32_t taps = 1; taps <= (1u << 20); taps *= 4) {
		double a = gf_cost_cpu_ns_per_sample(taps, 2, 65536, GF_ALGO_AUTO);
		double dd = gf_cost_cpu_ns_per_sample(taps, 2, 65536, GF_ALGO_DIRECT);
		double f = gf_cost_cpu_ns_per_sample(taps, 2, 65536, GF_ALGO_FFT);
		CHECK(a > 0.0 && a <= dd && a <= f);
	}
	CHECK(gf_cost_cpu_ns_per_sample(65535, 2, 65536, GF_ALGO_AUTO) >
	      gf_cost_cpu_ns_per_sample(255, 2, 65536, GF_ALGO_AUTO));
	/* The GPU is certain only past what the cheapest CPU filter costs. */
	struct gf_cost_calib c = calib(300.0, 0.5);
	CHECK(gf_cost_gpu_certain(0, 1, &c));
	CHECK(!gf_cost_gpu_certain(480000, 1, &c));
	CHECK(gf_cost_gpu_certain(100ull * 3600 * 48000 * 2, 1, &c));
}

static void write_cache(const char *path, const char *text)
{
	gf_test_write_text(path, text);
}

static void expect_defaults(const char *text, int want)
{
	char *p = gf_test_path(dir, "bad");
	write_cache(p, text);
	struct gf_cost_calib c = calib(1.0, 1.0);
	int err = gf_cost_cache_load(p, &c);
	if (err != want || c.measured || c.gpu_startup_ms != GF_COST_GPU_STARTUP_DEFAULT_MS) {
		fprintf(stderr, "cache \"%s\": load %d (want %d), measured %d, startup %g\n", text, err, want,
			c.measured, c.gpu_startup_ms);
		exit(1);
	}
	free(p);
}

static void test_cache(void)
{
	struct gf_cost_calib c;
	char *p = gf_test_path(dir, "costs");
	/* Missing. */
	CHECK(gf_cost_cache_load(p, &c) == GF_E_IO && !c.measured);
	/* Round trip, and no temporary file left beside it. */
	struct gf_cost_calib w = calib(312.5, 0.25);
	w.gpu_exit_ms = 90.0;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_cost_cache_store(p, &w, &eb), &eb);
	CHECK_OK(gf_cost_cache_load(p, &c));
	CHECK(c.measured && fabs(c.gpu_startup_ms - 312.5) < 0.05 && fabs(c.gpu_exit_ms - 90.0) < 0.05 &&
	      fabs(c.gpu_ns_per_sample - 0.25) < 1e-4);
	CHECK(gpufir_temp_files(dir) == 0);
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", dir);
	CHECK(system(cmd) == 0);
	/* A newer gpufir's key and comments are ignored. */
	char *q = gf_test_path(dir, "newer");
	write_cache(q, "gpufir-costs 1\n# note\ngpu_startup_ms 250\nsomething_new 3\n");
	CHECK_OK(gf_cost_cache_load(q, &c));
	CHECK(c.measured && c.gpu_startup_ms == 250.0);
	/* Corrupt: each ignored as a whole. */
	expect_defaults("", GF_E_FORMAT);
	expect_defaults("gpufir-costs 2\ngpu_startup_ms 250\n", GF_E_FORMAT);
	expect_defaults("gpu_startup_ms 250\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms 25O\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms -5\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms 0\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms nan\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms inf\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms 1e300\n", GF_E_FORMAT);
	expect_defaults("gpufir-costs 1\ngpu_startup_ms 250 ms\n", GF_E_FORMAT);
	char *big = malloc(8192);
	CHECK(big);
	memset(big, '#', 8191);
	big[8191] = '\0';
	memcpy(big, "gpufir-costs 1\n", 15);
	expect_defaults(big, GF_E_IO); /* larger than a cache can be: not read at all */
	free(big);
	/* A binary file with a NUL inside. */
	char *bin = gf_test_path(dir, "bad");
	gf_test_write_file(bin, "gpufir-costs 1\ngpu_startup_ms 2\0\n", 33);
	CHECK(gf_cost_cache_load(bin, &c) == GF_E_FORMAT && !c.measured);
	/* A directory in its place. */
	char *sub = gf_test_path(dir, "adir");
	CHECK(mkdir(sub, 0755) == 0);
	CHECK(gf_cost_cache_load(sub, &c) == GF_E_IO && !c.measured);
	/* Unwritable: its folder cannot exist (a file is in the way); nothing left behind. */
	char *blocked = gf_test_path(dir, "newer/costs");
	CHECK(gf_cost_cache_store(blocked, &w, &eb) == GF_E_IO && strstr(eb.msg, "cost cache"));
	printf("unwritable: %s\n", eb.msg);
	CHECK(gf_cost_cache_store(sub, &w, &eb) == GF_E_IO); /* rename onto a directory */
	CHECK(gpufir_temp_files(dir) == 0);
	snprintf(cmd, sizeof(cmd), "! ls -A '%s' | grep -q tmp", dir);
	CHECK(system(cmd) == 0);
	/* The folder is made when missing. */
	char *nested = gf_test_path(dir, "made/costs");
	CHECK_OK_EB(gf_cost_cache_store(nested, &w, &eb), &eb);
	CHECK_OK(gf_cost_cache_load(nested, &c));
	free(nested);
	free(blocked);
	free(sub);
	free(bin);
	free(q);
	free(p);
}

static void test_path_and_record(void)
{
	char buf[4096];
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	CHECK(setenv(GF_COST_CACHE_ENV, "", 1) == 0);
	CHECK(gf_cost_cache_path(buf, sizeof(buf)) == GF_E_UNSUPPORTED);
	CHECK(unsetenv(GF_COST_CACHE_ENV) == 0);
	CHECK(setenv("XDG_CACHE_HOME", "/x/cache", 1) == 0);
	CHECK_OK(gf_cost_cache_path(buf, sizeof(buf)));
	CHECK(strcmp(buf, "/x/cache/gpufir/costs") == 0);
	CHECK(unsetenv("XDG_CACHE_HOME") == 0);
	CHECK(setenv("HOME", "/home/u", 1) == 0);
	CHECK_OK(gf_cost_cache_path(buf, sizeof(buf)));
	CHECK(strcmp(buf, "/home/u/.cache/gpufir/costs") == 0);
	if (home) {
		CHECK(setenv("HOME", home, 1) == 0);
		free(home);
	} else {
		CHECK(unsetenv("HOME") == 0);
	}

	/* A measurement replaces the default, the next averages in. */
	char *p = gf_test_path(dir, "recorded/costs");
	CHECK(setenv(GF_COST_CACHE_ENV, p, 1) == 0);
	CHECK_OK(gf_cost_cache_path(buf, sizeof(buf)));
	CHECK(strcmp(buf, p) == 0);
	struct gf_cost_calib c;
	gf_cost_record_startup(200.0, 100.0);
	gf_cost_calib_current(&c);
	CHECK(c.measured && fabs(c.gpu_startup_ms - 300.0) < 0.05 && fabs(c.gpu_exit_ms - 100.0) < 0.05);
	gf_cost_record_startup(80.0, 20.0);
	gf_cost_calib_current(&c);
	CHECK(fabs(c.gpu_startup_ms - 200.0) < 0.05 && fabs(c.gpu_exit_ms - 60.0) < 0.05);
	/* Corrupt: the next measurement starts afresh. */
	gf_test_write_text(p, "garbage\n");
	gf_cost_record_startup(150.0, 0.0);
	gf_cost_calib_current(&c);
	CHECK(c.measured && fabs(c.gpu_startup_ms - 150.0) < 0.05);
	free(p);
}

/* The program: a 1 s file is the CPU's unless the cache says CUDA starts for free. */
static void test_program(void)
{
	char *cache = gf_test_path(dir, "prog-costs");
	char *in = gf_test_path(dir, "in.wav"), *out = gf_test_path(dir, "out.wav");
	uint64_t rng = gf_test_seed("test_cost");
	float *x = gf_test_noise(48000 * 2, &rng);
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, 48000, x);
	free(x);
	CHECK(setenv(GF_COST_CACHE_ENV, cache, 1) == 0);
	struct run_result r;
	run_gpufir(ARGS("-v", "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 0, "auto backend by cost: cpu: CPU ");
	CHECK(strstr(r.err, "by default, none measured yet"));
	CHECK(!strstr(r.err, "loaded the CUDA backend")); /* never loaded for a CPU run */
	CHECK(!strstr(r.err, "no usable CUDA device"));	  /* nor probed */
	CHECK(!gf_test_exists(cache));			  /* nothing measured: nothing written */
	gf_test_write_text(cache, "gpufir-costs 1\ngpu_startup_ms 0.001\ngpu_ns_per_sample 0\n");
	run_gpufir(ARGS("-v", "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 0, "auto backend by cost: cuda: ");
	CHECK(strstr(r.err, "measured here"));
	if (getenv("GPUFIR_CUDA_MODULE")) /* a CUDA build: the choice loads the module */
		CHECK(strstr(r.err, "loaded the CUDA backend"));
	/* --backend cpu weighs nothing. */
	run_gpufir(ARGS("-v", "--backend", "cpu", "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 0, NULL);
	CHECK(!strstr(r.err, "auto backend by cost"));
	/* A corrupt cache: the defaults. */
	gf_test_write_text(cache, "gpufir-costs 1\ngpu_startup_ms oops\n");
	run_gpufir(ARGS("-v", "-i", in, "-o", out), &r);
	CHECK_RUN(&r, 0, "auto backend by cost: cpu: ");
	CHECK(strstr(r.err, "by default"));
	free(cache);
	free(in);
	free(out);
}

int main(void)
{
	dir = gf_test_tmpdir("cost");
	test_pick();
	test_model();
	test_cache();
	test_path_and_record();
	test_program();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_cost: ok\n");
	return 0;
}
