/*
 * One long file filtered in stripes on several CPU threads (offline_stripe.c),
 * through the real gpufir program: the output must be, sample for sample, what
 * one thread writes (which test_offline checks against the reference
 * convolution), whatever the thread count, for the FFT and the direct form,
 * with --tail (the ring-out runs on the engine that filtered the last chunk),
 * with a NaN in the middle (the piece that holds it is muted in both) and
 * with 33 channels (chunks of 32768 frames: stripes still start at 65536-frame
 * partition edges).
 * -v must show that the run was striped, so the comparison cannot pass by
 * both runs taking the same path. SIGINT mid-file stops every thread: exit
 * 130, no output, no temporary file left.
 */
#define _GNU_SOURCE /* asprintf, strsignal */
#include <math.h>
#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define CHUNK 65536u /* GF_OFFLINE_CHUNK_FRAMES: stripes are whole chunks */

static char *dir;
static uint64_t rng;

static char *write_filter(const char *name, uint32_t taps)
{
	float *h = malloc(taps * sizeof(float));
	CHECK(h);
	gf_test_fill_decaying_taps(h, taps, &rng);
	char *tname, *cname, *body;
	CHECK(asprintf(&tname, "%s.txt", name) > 0 && asprintf(&cname, "%s.conf", name) > 0);
	char *text = gf_test_taps_text(h, taps, "\n");
	free(gf_test_write_text_in(dir, tname, text));
	CHECK(asprintf(&body, "filters = ( { name = \"f\"; file = \"%s\"; } );\nchain = [\"f\"];\n", tname) >
	      0);
	char *cfg = gf_test_write_text_in(dir, cname, body);
	free(body);
	free(text);
	free(tname);
	free(cname);
	free(h);
	return cfg;
}

/* Noise of @p frames frames of @p ch channels; a NaN at @p nan_at (0: none). */
static char *write_input_ch(const char *name, uint32_t ch, uint32_t frames, uint32_t nan_at)
{
	float *x = gf_test_noise((size_t)frames * ch, &rng);
	for (size_t i = 0; i < (size_t)frames * ch; i++)
		x[i] *= 0.5f;
	if (nan_at)
		x[(size_t)nan_at * ch + 1] = NAN;
	char *path = gf_test_path(dir, name);
	gf_test_write_sound(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, ch, frames, x);
	free(x);
	return path;
}

static char *write_input(const char *name, uint32_t frames, uint32_t nan_at)
{
	return write_input_ch(name, 2, frames, nan_at);
}

/* FNV-1a over the decoded samples' bits and the length: the file's bytes differ
 * run to run (a float WAV's PEAK chunk holds the time). */
static uint64_t samples_hash(const char *path)
{
	SF_INFO info;
	float *y = gf_test_read_sound(path, &info, 1);
	uint64_t h = 1469598103934665603ull ^ (uint64_t)info.frames;
	const unsigned char *b = (const unsigned char *)y;
	for (size_t i = 0; i < (size_t)info.frames * (size_t)info.channels * sizeof(float); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	free(y);
	return h;
}

/* Filter @p in with @p threads threads (extra options @p a1, @p a2 or NULL); @return its samples' hash. */
static uint64_t run_threads(const char *cfg, const char *in, const char *threads, const char *a1,
			    const char *a2, int want_striped)
{
	char *out = gf_test_path(dir, "out.wav");
	struct run_result r;
	if (a1 && a2)
		run_gpufir(ARGS("-v", "--backend", "cpu", "--threads", threads, "-c", cfg, "-i", in, "-o",
				out, a1, a2),
			   &r);
	else if (a1)
		run_gpufir(ARGS("-v", "--backend", "cpu", "--threads", threads, "-c", cfg, "-i", in, "-o",
				out, a1),
			   &r);
	else
		run_gpufir(
			ARGS("-v", "--backend", "cpu", "--threads", threads, "-c", cfg, "-i", in, "-o", out),
			&r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	int striped = strstr(r.err, "CPU threads over stripes") != NULL;
	if (striped != want_striped) {
		fprintf(stderr, "--threads %s: striped %d, expected %d\n%s", threads, striped, want_striped,
			r.err);
		exit(1);
	}
	uint64_t h = samples_hash(out);
	unlink(out);
	free(out);
	return h;
}

/* The same bytes on 1, 2 and 5 threads. */
static void same_on_any_count(const char *what, const char *cfg, const char *in, const char *a1,
			      const char *a2)
{
	uint64_t h1 = run_threads(cfg, in, "1", a1, a2, 0);
	uint64_t h2 = run_threads(cfg, in, "2", a1, a2, 1);
	uint64_t h5 = run_threads(cfg, in, "5", a1, a2, 1);
	printf("%-28s 1 thread %016llx, 2 threads %016llx, 5 threads %016llx\n", what, (unsigned long long)h1,
	       (unsigned long long)h2, (unsigned long long)h5);
	CHECK(h1 == h2 && h1 == h5);
}

static void test_identical(void)
{
	/* 8191 taps: stripes of 2 chunks (history 8191 + 65536 frames); 10 of them and a part. */
	uint32_t frames = 20 * CHUNK + 12345;
	char *cfg = write_filter("fft", 8191);
	char *in = write_input("in.wav", frames, 0);
	same_on_any_count("fft, 8191 taps", cfg, in, NULL, NULL);
	same_on_any_count("fft, 8191 taps, --tail", cfg, in, "--tail", NULL);
	char *nan_in = write_input("nan.wav", frames, 7 * CHUNK + 999);
	same_on_any_count("fft, NaN in chunk 7", cfg, nan_in, NULL, NULL);
	char *dcfg = write_filter("direct", 1023);
	same_on_any_count("direct, 1023 taps", dcfg, in, "--algo", "direct");
	unlink(in);
	unlink(nan_in);
	free(nan_in);
	free(in);
	free(dcfg);
	free(cfg);
}

/* 33 channels: chunks of 32768 frames (the 8 MB cap, down to a power of two),
 * stripes still at multiples of 65536 frames. */
static void test_many_channels(void)
{
	char *cfg = write_filter("wide", 1023);
	char *in = write_input_ch("wide.wav", 33, 3 * 131072 + 7000, 0);
	same_on_any_count("fft, 1023 taps, 33 channels", cfg, in, NULL, NULL);
	unlink(in);
	free(in);
	free(cfg);
}

/* A file of one stripe is not striped: nothing to share. */
static void test_short_file(void)
{
	char *cfg = write_filter("short", 8191);
	char *in = write_input("short.wav", CHUNK + 100, 0);
	run_threads(cfg, in, "4", NULL, NULL, 0);
	unlink(in);
	free(in);
	free(cfg);
}

/* SIGINT while three threads filter a long direct-form file: all of them stop. */
static void test_sigint(void)
{
	char *cfg = write_filter("long", 16384);
	char *in = write_input("long.wav", 40 * RATE, 0), *out = gf_test_path(dir, "long_out.wav");
	char o_path[4096], e_path[4096];
	snprintf(o_path, sizeof(o_path), "%s/sig.out", dir);
	snprintf(e_path, sizeof(e_path), "%s/sig.err", dir);
	pid_t pid = spawn_gpufir(ARGS("-v", "-i", in, "-o", out, "-c", cfg, "--backend", "cpu", "--algo",
				      "direct", "--threads", "3"),
				 o_path, e_path);
	gpufir_wait_for_temp_file(dir, pid);
	struct timespec ts = {0, 200000000}; /* into the filtering, past the engines' set-up */
	nanosleep(&ts, NULL);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(kill(pid, SIGINT) == 0);
	struct run_result r;
	wait_gpufir(pid, o_path, e_path, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("SIGINT: stopped %.2f s after the signal\n", dt);
	CHECK_RUN(&r, GF_EXIT_INTERRUPTED, "interrupted");
	CHECK(strstr(r.err, "3 CPU threads over stripes") != NULL);
	CHECK(!gf_test_exists(out) && gpufir_temp_files(dir) == 0);
	unlink(in);
	free(out);
	free(in);
	free(cfg);
}

int main(void)
{
	gpufir_bin();
	rng = gf_test_seed("test_offline_stripes");
	dir = gf_test_tmpdir("offline-stripes");
	test_identical();
	test_many_channels();
	test_short_file();
	test_sigint();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_offline_stripes: ok\n");
	return 0;
}
