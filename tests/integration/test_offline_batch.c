/*
 * Batch mode, end to end with the real program: a batch's outputs equal the
 * per-file runs byte for byte (mixed rates, channel counts, formats and
 * lengths, through one lane and through several, so engines are reused and
 * reset across files); a corrupt file in the middle fails alone; SIGINT
 * leaves only complete outputs and --skip-existing finishes the rest;
 * --shard K/N covers the list exactly once for any N; the list file's
 * syntax; --gpu with no usable GPU.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sndfile.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "offline.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define N_FILES 9

static char *dir;
static uint64_t rng;

static char *path_in(const char *name)
{
	return gf_test_path(dir, name);
}

static char *pathf(const char *fmt, int i)
{
	char name[256];
	snprintf(name, sizeof(name), fmt, i);
	return path_in(name);
}

static void make_noise_file(const char *path, int format, int rate, uint32_t channels, uint32_t frames)
{
	float *x = gf_test_noise((size_t)frames * channels, &rng);
	for (size_t i = 0; i < (size_t)frames * channels; i++)
		x[i] *= 0.4f;
	gf_test_write_sound(path, format, rate, channels, frames, x);
	free(x);
}

static char *write_config(const char *name, uint32_t taps)
{
	float *h = malloc(taps * sizeof(float));
	CHECK(h);
	gf_test_fill_bounded_taps(h, taps, 0.9, &rng);
	char *text = gf_test_taps_text(h, taps, "\n");
	char *tname, *body;
	CHECK(asprintf(&tname, "%s.taps", name) > 0);
	char *tpath = path_in(tname);
	gf_test_write_text(tpath, text);
	CHECK(asprintf(&body, "filters = ( { name = \"f\"; file = \"%s\"; } );\nchain = [\"f\"];\n", tname) >
	      0);
	char *cpath = path_in(name);
	gf_test_write_text(cpath, body);
	free(body);
	free(text);
	free(tname);
	free(tpath);
	free(h);
	return cpath;
}

static void mkdir_in(const char *name)
{
	char *p = path_in(name);
	CHECK(mkdir(p, 0755) == 0 || errno == EEXIST);
	free(p);
}

/*
 * Same file but for the time stamp libsndfile puts in a float WAV's PEAK
 * chunk: same container, sample format, rate, channels, and the decoded
 * samples equal bit for bit.
 */
static int same_bytes(const char *a, const char *b)
{
	SF_INFO ia, ib;
	float *x = gf_test_read_sound(a, &ia, 1), *y = gf_test_read_sound(b, &ib, 1);
	int same = ia.format == ib.format && ia.samplerate == ib.samplerate && ia.channels == ib.channels &&
		   ia.frames == ib.frames &&
		   memcmp(x, y, (size_t)ia.frames * (size_t)ia.channels * sizeof(float)) == 0;
	free(x);
	free(y);
	return same;
}

/* A list file naming @p n inputs made by @p in_fmt, one per line (no outputs: -o DIR/). */
static char *write_list(const char *name, const char *in_fmt, int n)
{
	size_t cap = 1 << 16, len = 0;
	char *text = calloc(1, cap);
	CHECK(text);
	len += (size_t)snprintf(text + len, cap - len, "# inputs\n\n");
	for (int i = 0; i < n; i++) {
		char *p = pathf(in_fmt, i);
		len += (size_t)snprintf(text + len, cap - len, "%s\n", p);
		free(p);
	}
	char *lp = path_in(name);
	gf_test_write_text(lp, text);
	free(text);
	return lp;
}

/* ---- equality with per-file runs --------------------------------------------- */

static const struct {
	int format, rate;
	uint32_t channels, frames;
	const char *ext;
} shapes[N_FILES] = {
	{SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, 150000, "wav"},
	{SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, 70001, "wav"},
	{SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 44100, 1, 90000, "flac"},
	{SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, 12345, "wav"},
	{SF_FORMAT_WAV | SF_FORMAT_PCM_24, 44100, 6, 40000, "wav"},
	{SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, 200000, "wav"},
	{SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 65536, "wav"},
	{SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 48000, 2, 100, "flac"},
	{SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, 131072, "wav"},
};

static char *in_name(int i)
{
	char name[64];
	snprintf(name, sizeof(name), "in/f%d.%s", i, shapes[i].ext);
	return path_in(name);
}

static char *out_name(const char *sub, int i)
{
	char name[64];
	snprintf(name, sizeof(name), "%s/f%d.%s", sub, i, shapes[i].ext);
	return path_in(name);
}

static void test_equal_per_file(const char *cfg)
{
	mkdir_in("in");
	mkdir_in("ref");
	for (int i = 0; i < N_FILES; i++) {
		char *in = in_name(i), *ref = out_name("ref", i);
		make_noise_file(in, shapes[i].format, shapes[i].rate, shapes[i].channels, shapes[i].frames);
		struct run_result r;
		run_gpufir(ARGS("-q", "-c", cfg, "--backend", "cpu", "-i", in, "-o", ref), &r);
		CHECK_RUN(&r, GF_EXIT_OK, NULL);
		free(in);
		free(ref);
	}
	/* List file, one lane (every engine reused and reset) and three lanes. */
	const char *lanes[] = {"1", "3"};
	char *list = path_in("all.list");
	char text[8192] = "";
	for (int i = 0; i < N_FILES; i++) {
		char *in = in_name(i);
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\n", in);
		free(in);
	}
	gf_test_write_text(list, text);
	for (int k = 0; k < 2; k++) {
		char sub[32], *od;
		snprintf(sub, sizeof(sub), "out%d/", k);
		od = path_in(sub);
		struct run_result r;
		run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list, "-o", od, "-j", lanes[k]),
			   &r);
		CHECK_RUN(&r, GF_EXIT_OK, "9 written, 0 failed");
		for (int i = 0; i < N_FILES; i++) {
			char *ref = out_name("ref", i), *out = out_name(sub, i);
			if (!same_bytes(ref, out)) {
				fprintf(stderr, "%s differs from the per-file run %s\n", out, ref);
				exit(1);
			}
			free(ref);
			free(out);
		}
		CHECK(gpufir_temp_files(od) == 0);
		free(od);
	}
	/* -i A -i B -o DIR/ */
	char *a = in_name(0), *b = in_name(2), *od = path_in("out_i/");
	struct run_result r;
	run_gpufir(ARGS("-q", "-c", cfg, "--backend", "cpu", "-i", a, "-i", b, "-o", od), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	char *ra = out_name("ref", 0), *oa = out_name("out_i", 0), *rb = out_name("ref", 2),
	     *ob = out_name("out_i", 2);
	CHECK(same_bytes(ra, oa) && same_bytes(rb, ob));
	free(a), free(b), free(od), free(ra), free(oa), free(rb), free(ob), free(list);
	fprintf(stderr, "  batch outputs equal the per-file runs (1 and 3 lanes, -i -i)\n");
}

/* ---- a backend failure after a reset ------------------------------------------- */

/* Largest |a - b| over the samples of two outputs of the same shape, relative to a's peak. */
static double rel_max_diff(const char *a, const char *b)
{
	SF_INFO ia, ib;
	float *x = gf_test_read_sound(a, &ia, 1), *y = gf_test_read_sound(b, &ib, 1);
	CHECK(ia.frames == ib.frames && ia.channels == ib.channels);
	double peak = 0.0, d = 0.0;
	for (size_t i = 0; i < (size_t)ia.frames * (size_t)ia.channels; i++) {
		peak = fmax(peak, fabs(x[i]));
		d = fmax(d, fabs((double)x[i] - y[i]));
	}
	free(x);
	free(y);
	return peak > 0.0 ? d / peak : d;
}

/*
 * The second file's second chunk fails (GPUFIR_FAULT_PROCESS_AFTER=4: the
 * lane's engine made 3 calls for the first file): the CPU fallback is primed
 * from the engine's history ring, written since the reset between the files.
 * The ring's write index and the absolute positions it is read by must agree
 * after a reset, or the redone chunk starts from the wrong frames.
 */
static void test_fault_after_reset(const char *cfg)
{
	mkdir_in("fault_in");
	const uint32_t frames = 2 * 65536 + 777;
	char *a = path_in("fault_in/a.wav"), *b = path_in("fault_in/b.wav"), *ref = path_in("fault_ref.wav");
	make_noise_file(a, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, frames - 101);
	make_noise_file(b, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 2, frames);
	struct run_result r;
	run_gpufir(ARGS("-q", "-c", cfg, "--backend", "cpu", "-i", b, "-o", ref), &r);
	CHECK_RUN(&r, GF_EXIT_OK, NULL);
	char *od = path_in("fault_out/"), *out = path_in("fault_out/b.wav");
	CHECK(setenv("GPUFIR_FAULT_PROCESS_AFTER", "4", 1) == 0);
	run_gpufir(
		ARGS("-c", cfg, "--backend", "cpu", "-j", "1", "--threads", "1", "-i", a, "-i", b, "-o", od),
		&r);
	CHECK(unsetenv("GPUFIR_FAULT_PROCESS_AFTER") == 0);
	CHECK_RUN(&r, GF_EXIT_OK, "continuing on the CPU backend");
	double d = rel_max_diff(ref, out);
	fprintf(stderr, "  backend failure in the second file of a lane: max |diff| %.3g of the peak\n", d);
	CHECK(d < 1e-5);
	free(a), free(b), free(ref), free(od), free(out);
}

/* ---- a corrupt file in the middle --------------------------------------------- */

static void test_corrupt_middle(const char *cfg)
{
	mkdir_in("bad");
	char *list = path_in("bad.list"), text[4096] = "";
	for (int i = 0; i < 5; i++) {
		char *p = pathf("bad/b%d.wav", i);
		if (i == 2)
			gf_test_write_text(p, "RIFF\x10\x00\x00\x00WAVEjunk that is not audio at all");
		else
			make_noise_file(p, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 2, 30000);
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\n", p);
		free(p);
	}
	gf_test_write_text(list, text);
	char *od = path_in("bad_out/");
	struct run_result r;
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list, "-o", od, "-j", "2"), &r);
	CHECK_RUN(&r, GF_EXIT_IO, "4 written, 1 failed");
	CHECK(strstr(r.err, "b2.wav"));
	for (int i = 0; i < 5; i++) {
		char *p = pathf("bad_out/b%d.wav", i);
		CHECK(gf_test_exists(p) == (i != 2));
		free(p);
	}
	CHECK(gpufir_temp_files(od) == 0);
	free(od);
	free(list);
	fprintf(stderr, "  a corrupt file fails alone (exit 4, 4 written)\n");
}

/* ---- SIGINT, then --skip-existing -------------------------------------------- */

static int count_outputs(const char *fmt, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		char *p = pathf(fmt, i);
		k += gf_test_exists(p);
		free(p);
	}
	return k;
}

static void test_interrupt_resume(void)
{
	enum { N = 6, FRAMES = 4 * 48000 };
	char *cfg = write_config("slow.conf", 8192); /* direct form: a fraction of a second per file */
	mkdir_in("sl");
	mkdir_in("sl_ref");
	for (int i = 0; i < N; i++) {
		char *p = pathf("sl/s%d.wav", i);
		make_noise_file(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, FRAMES);
		free(p);
	}
	char *list = write_list("slow.list", "sl/s%d.wav", N);
	char *od = path_in("sl_out/");
	char o_path[4096], e_path[4096];
	snprintf(o_path, sizeof(o_path), "%s/sig.out", dir);
	snprintf(e_path, sizeof(e_path), "%s/sig.err", dir);
	pid_t pid = spawn_gpufir(
		ARGS("-c", cfg, "--backend", "cpu", "--algo", "direct", "--batch", list, "-o", od, "-j", "1"),
		o_path, e_path);
	for (int i = 0; i < 3000 && count_outputs("sl_out/s%d.wav", N) == 0; i++) {
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	CHECK(kill(pid, SIGINT) == 0);
	struct run_result r;
	wait_gpufir(pid, o_path, e_path, &r);
	CHECK_RUN(&r, GF_EXIT_INTERRUPTED, "interrupted");
	int done = count_outputs("sl_out/s%d.wav", N);
	fprintf(stderr, "  SIGINT: %d of %d outputs written, no temporary file left\n", done, N);
	CHECK(done >= 1 && done < N);
	CHECK(gpufir_temp_files(od) == 0);
	/* Every output there is complete: all frames, and what a single run writes. */
	struct stat before[N];
	for (int i = 0; i < N; i++) {
		char *out = pathf("sl_out/s%d.wav", i);
		memset(&before[i], 0, sizeof(before[i]));
		if (stat(out, &before[i]) == 0) {
			SF_INFO info;
			float *y = gf_test_read_sound(out, &info, 1);
			CHECK(info.frames == FRAMES);
			free(y);
		}
		free(out);
	}
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--algo", "direct", "--batch", list, "-o", od,
			"--skip-existing"),
		   &r);
	char want[64];
	snprintf(want, sizeof(want), "%d written, 0 failed, %d skipped", N - done, done);
	CHECK_RUN(&r, GF_EXIT_OK, want);
	for (int i = 0; i < N; i++) {
		char *in = pathf("sl/s%d.wav", i), *out = pathf("sl_out/s%d.wav", i),
		     *ref = pathf("sl_ref/s%d.wav", i);
		struct stat now;
		CHECK(stat(out, &now) == 0);
		if (before[i].st_ino) /* skipped: not rewritten */
			CHECK(now.st_ino == before[i].st_ino && now.st_mtime == before[i].st_mtime);
		run_gpufir(ARGS("-q", "-c", cfg, "--backend", "cpu", "--algo", "direct", "-i", in, "-o", ref),
			   &r);
		CHECK_RUN(&r, GF_EXIT_OK, NULL);
		if (!same_bytes(out, ref)) {
			fprintf(stderr, "%s differs from %s (skipped: %d)\n", out, ref,
				before[i].st_ino != 0);
			exit(1);
		}
		free(in), free(out), free(ref);
	}
	free(od), free(list), free(cfg);
	fprintf(stderr, "  --skip-existing finished the other %d\n", N - done);
}

/* ---- shards ------------------------------------------------------------------ */

static void test_shard_cover(void)
{
	for (size_t len = 0; len <= 9; len++) {
		for (uint32_t n = 1; n <= 13; n++) {
			int seen[16] = {0};
			for (uint32_t k = 0; k < n; k++) {
				struct gf_offline_jobs j = {0};
				struct gf_errbuf eb = {{0}};
				for (size_t i = 0; i < len; i++) {
					char in[32];
					snprintf(in, sizeof(in), "%zu.wav", i);
					CHECK_OK_EB(gf_offline_jobs_add(&j, in, NULL, "o", &eb), &eb);
				}
				gf_offline_jobs_shard(&j, k, n);
				for (size_t i = 0; i < j.n; i++)
					seen[atoi(j.v[i].input)]++;
				gf_offline_jobs_free(&j);
			}
			for (size_t i = 0; i < len; i++)
				CHECK(seen[i] == 1);
		}
	}
	uint32_t k, n;
	CHECK(gf_offline_shard_parse("0/1", &k, &n) == 0 && k == 0 && n == 1);
	CHECK(gf_offline_shard_parse("7/8", &k, &n) == 0 && k == 7 && n == 8);
	const char *bad[] = {"1/1", "8/8", "-1/4", "1/-4", "1/0", "1", "/4", "1/4x", "a/b", "1//4", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(gf_offline_shard_parse(bad[i], &k, &n) == GF_E_INVAL);
}

static void test_shard_runs(const char *cfg)
{
	test_shard_cover();
	/* End to end: 3 shards of 5 files write each file once; shard 7/9 of 5 has nothing to do. */
	mkdir_in("sh");
	for (int i = 0; i < 5; i++) {
		char *p = pathf("sh/h%d.wav", i);
		make_noise_file(p, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, 1, 5000);
		free(p);
	}
	char *list = write_list("sh.list", "sh/h%d.wav", 5), *od = path_in("sh_out/");
	const char *shard[] = {"0/3", "1/3", "2/3"};
	const char *count[] = {"2 files: 2 written", "2 files: 2 written", "1 files: 1 written"};
	for (int k = 0; k < 3; k++) {
		struct run_result r;
		run_gpufir(
			ARGS("-c", cfg, "--backend", "cpu", "--batch", list, "-o", od, "--shard", shard[k]),
			&r);
		CHECK_RUN(&r, GF_EXIT_OK, count[k]);
	}
	CHECK(count_outputs("sh_out/h%d.wav", 5) == 5);
	struct run_result r;
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list, "-o", od, "--shard", "7/9"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "0 files");
	free(list), free(od);
	fprintf(stderr, "  shards cover every list exactly once (N 1..13, lists 0..9)\n");
}

/* ---- list syntax and refusals -------------------------------------------------- */

static void test_list_syntax(const char *cfg)
{
	char *a = pathf("sh/h%d.wav", 0), *b = pathf("sh/h%d.wav", 1);
	char *oa = path_in("named_a.wav"), *ob = path_in("named b.wav");
	char *list = path_in("tab.list"), text[8192];
	snprintf(text, sizeof(text), "# comment\n%s\t%s\n\n%s\t%s\n", a, oa, b, ob);
	gf_test_write_text(list, text);
	struct run_result r;
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "2 written");
	CHECK(gf_test_exists(oa) && gf_test_exists(ob));
	/* No output and no -o DIR/: FILE:LINE says so. */
	snprintf(text, sizeof(text), "%s\t%s\n%s\n", a, oa, b);
	gf_test_write_text(list, text);
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "tab.list:2: no output");
	/* Two jobs writing one file. */
	snprintf(text, sizeof(text), "%s\t%s\n%s\t%s\n", a, oa, b, oa);
	gf_test_write_text(list, text);
	run_gpufir(ARGS("-c", cfg, "--backend", "cpu", "--batch", list), &r);
	CHECK_RUN(&r, GF_EXIT_USAGE, "would be written twice");
	/* A batch's -o must be a directory. */
	run_gpufir(ARGS("-c", cfg, "-i", a, "-i", b, "-o", oa), &r);
	CHECK_RUN(&r, GF_EXIT_IO, "writes into a directory");
	/* A missing list. */
	char *missing = path_in("no-such.list");
	run_gpufir(ARGS("-c", cfg, "--batch", missing, "-o", dir), &r);
	CHECK_RUN(&r, GF_EXIT_IO, "cannot read the batch list");
	free(a), free(b), free(oa), free(ob), free(list), free(missing);
}

/* --gpu all: with no usable GPU, auto says so and uses the CPU; --backend cuda fails. */
static void test_gpu_all(const char *cfg)
{
	char *a = pathf("sh/h%d.wav", 0), *od = path_in("gpu_out/"), *ref = path_in("gpu_ref.wav");
	struct run_result r;
	run_gpufir(ARGS("-c", cfg, "--gpu", "all", "-i", a, "-o", od), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "1 written");
	int gpu = strstr(r.err, "batch: GPU 0:") != NULL;
	if (gpu) {
		fprintf(stderr, "  --gpu all: a GPU is usable here; the no-GPU paths are not run\n");
	} else {
		CHECK_RUN(&r, GF_EXIT_OK, "no usable CUDA device");
		CHECK_RUN(&r, GF_EXIT_OK, "filtering on the CPU");
		run_gpufir(ARGS("-c", cfg, "--gpu", "0,1", "--backend", "cuda", "-i", a, "-o", od), &r);
		CHECK_RUN(&r, GF_EXIT_PROCESS, "no usable CUDA device");
		fprintf(stderr, "  --gpu all without a GPU: auto falls back (said), cuda fails (exit 5)\n");
	}
	char *out = path_in("gpu_out/h0.wav");
	if (!gpu) {
		run_gpufir(ARGS("-q", "-c", cfg, "--backend", "cpu", "-i", a, "-o", ref), &r);
		CHECK_RUN(&r, GF_EXIT_OK, NULL);
		CHECK(same_bytes(ref, out));
	}
	free(a), free(od), free(ref), free(out);
}

/* Filters measured from each input (a notch with freq_hz = "auto"): built per file in a batch. */
static void test_learned_per_file(void)
{
	char *conf = gf_test_write_text_in(
		dir, "hum.conf",
		"filters = ( { name = \"hum\"; design = \"notch\"; freq_hz = \"auto\";\n"
		"  bandwidth_hz = 5.0; attenuation_db = 40.0; } );\nchain = [\"hum\"];\n");
	mkdir_in("hum");
	mkdir_in("hum_ref");
	const double f0[2] = {50.0, 60.0};
	const uint32_t n = 6 * 48000;
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < n; i++)
			x[i] = (float)(0.003 * gf_test_randf(&rng) +
				       0.05 * sin(2.0 * M_PI * f0[k] * i / 48000.0));
		char *p = pathf("hum/m%d.wav", k), *ref = pathf("hum_ref/m%d.wav", k);
		gf_test_write_sound(p, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, 1, n, x);
		struct run_result r;
		run_gpufir(ARGS("-q", "-c", conf, "--backend", "cpu", "-i", p, "-o", ref), &r);
		CHECK_RUN(&r, GF_EXIT_OK, NULL);
		free(p), free(ref);
	}
	char *list = write_list("hum.list", "hum/m%d.wav", 2), *od = path_in("hum_out/");
	struct run_result r;
	run_gpufir(ARGS("-c", conf, "--backend", "cpu", "--batch", list, "-o", od, "-j", "1"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "2 written");
	for (int k = 0; k < 2; k++) {
		char *ref = pathf("hum_ref/m%d.wav", k), *out = pathf("hum_out/m%d.wav", k);
		CHECK(same_bytes(ref, out));
		free(ref), free(out);
	}
	free(x), free(conf), free(list), free(od);
	fprintf(stderr, "  filters measured from the input are built per file (50 and 60 Hz hum)\n");
}

int main(void)
{
	gpufir_bin();
	rng = gf_test_seed("test_offline_batch");
	dir = gf_test_tmpdir("offline_batch");
	char *cfg = write_config("batch.conf", 301);
	test_equal_per_file(cfg);
	test_corrupt_middle(cfg);
	test_fault_after_reset(cfg);
	test_shard_runs(cfg);
	test_list_syntax(cfg);
	test_gpu_all(cfg);
	test_learned_per_file();
	test_interrupt_resume();
	free(cfg);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_offline_batch: OK\n");
	return 0;
}
