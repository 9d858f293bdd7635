/*
 * Files larger than RAM, without making one: offline mode streams, so its
 * peak memory must not grow with the file's length. The real gpufir program
 * filters a 1-minute and a 10-minute mono 8 kHz file with the built-in
 * default chain; the peak RSS of each run (wait4's rusage of that child)
 * must differ by less than 2 MiB. The last second of the long output is
 * checked against the reference (the chain's FIR, then its noise suppressor
 * over the whole file), so the long run did filter to the end.
 */
#define _GNU_SOURCE /* asprintf */
#include <math.h>
#include <sndfile.h>
#include <string.h>

#include "config.h"
#include "run_prog.h"
#include "suppress_bank.h"
#include "testutil.h"

#define RATE 8000

static char *dir;
static uint64_t rng;

/* Write @p frames of noise in pieces (the test itself stays small too). */
static void write_noise(const char *path, uint32_t frames)
{
	SF_INFO info = {.samplerate = RATE, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
	SNDFILE *f = sf_open(path, SFM_WRITE, &info);
	CHECK(f);
	float buf[8192];
	for (uint32_t done = 0; done < frames;) {
		uint32_t n = frames - done < 8192 ? frames - done : 8192;
		for (uint32_t i = 0; i < n; i++)
			buf[i] = 0.5f * gf_test_randf(&rng);
		CHECK(sf_writef_float(f, buf, n) == (sf_count_t)n);
		done += n;
	}
	CHECK(sf_close(f) == 0);
}

/* Filter @p in to @p out; @return the child's peak RSS in KiB. */
static long filter_rss(const char *in, const char *out)
{
	char o_path[4096], e_path[4096];
	snprintf(o_path, sizeof(o_path), "%s/run.out", dir);
	snprintf(e_path, sizeof(e_path), "%s/run.err", dir);
	pid_t pid = spawn_gpufir(ARGS("-i", in, "-o", out, "--backend", "cpu", "--causal"), o_path, e_path);
	struct rusage ru;
	struct run_result r;
	wait_gpufir_usage(pid, o_path, e_path, &r, &ru);
	CHECK_RUN(&r, GF_EXIT_OK, "realtime");
	return ru.ru_maxrss;
}

/* Read @p n frames of @p path from frame @p from. */
static float *read_range(const char *path, sf_count_t from, uint32_t n, sf_count_t *total)
{
	SF_INFO info = {0};
	SNDFILE *f = sf_open(path, SFM_READ, &info);
	CHECK(f);
	*total = info.frames;
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	CHECK(sf_seek(f, from, SEEK_SET) == from);
	CHECK(sf_readf_float(f, x, n) == (sf_count_t)n);
	sf_close(f);
	return x;
}

/*
 * The last @p n output frames against the reference: the default chain's FIR
 * over the whole input (--causal: nothing removed), then its noise
 * suppressor, whose state runs through the whole file. The suppressor runs in
 * float on a reference that is the FIR's in double: a rounding step either
 * side of 16-bit quantization, so 2 LSB.
 */
static void check_tail(const char *in, const char *out, uint32_t frames, uint32_t n)
{
	struct gf_config *c;
	struct gf_filter_set *fs;
	struct gf_suppress_bank *bank;
	struct gf_errbuf eb = {{0}};
	CHECK_OK(gf_config_default(&c));
	CHECK_OK_EB(gf_config_build(c, RATE, 1, &fs, &eb), &eb);
	CHECK_OK_EB(gf_config_suppress_new(c, RATE, 1, &bank, &eb), &eb);
	CHECK(bank);
	sf_count_t total_in, total_out;
	float *x = read_range(in, 0, frames, &total_in);
	float *y = read_range(out, frames - n, n, &total_out);
	CHECK(total_in == frames && total_out == frames);
	double *ref = malloc((size_t)frames * sizeof(double));
	CHECK(ref);
	gf_test_reference(x, frames, 1, fs->coeffs, fs->taps, ref);
	for (uint32_t i = 0; i < frames; i++) /* the suppressor's input, as the engine hands it over */
		x[i] = (float)ref[i];
	gf_suppress_bank_process(bank, x, frames);
	const float *want = x + (frames - n);
	double e = 0.0, s = 0.0;
	long worst = 0;
	for (uint32_t i = 0; i < n; i++) {
		e += ((double)y[i] - want[i]) * ((double)y[i] - want[i]);
		s += (double)want[i] * want[i];
		long d = labs(lrint(y[i] * 32768.0) - lrint(want[i] * 32768.0));
		worst = d > worst ? d : worst;
	}
	fprintf(stderr, "  last %u frames of %u: max %ld LSB (2 allowed), rel L2 %.3g\n", n, frames, worst,
		sqrt(e / s));
	CHECK(s > 0.0 && worst <= 2);
	gf_suppress_bank_free(bank);
	free(ref);
	free(x);
	free(y);
	gf_filter_set_free(fs);
	gf_config_free(c);
}

int main(void)
{
	gpufir_bin();
	gf_log_set_level(GF_LOG_WARN);
	rng = gf_test_seed("test_offline_memory");
	dir = gf_test_tmpdir("memory");
	char *in1, *in10, *out;
	CHECK(asprintf(&in1, "%s/1min.wav", dir) > 0 && asprintf(&in10, "%s/10min.wav", dir) > 0 &&
	      asprintf(&out, "%s/out.wav", dir) > 0);
	const uint32_t f1 = 60 * RATE, f10 = 600 * RATE;
	write_noise(in1, f1);
	write_noise(in10, f10);

	long rss1 = filter_rss(in1, out);
	long rss10 = filter_rss(in10, out);
	fprintf(stderr,
		"  peak RSS: 1 min %ld KiB, 10 min %ld KiB (difference %+ld KiB; the file is %ld KiB)\n",
		rss1, rss10, rss10 - rss1, (long)f10 * 2 / 1024);
	CHECK(rss10 - rss1 < 2048);
	check_tail(in10, out, f10, RATE);

	gf_test_rmtree(dir);
	free(out);
	free(in10);
	free(in1);
	free(dir);
	printf("test_offline_memory: OK\n");
	return 0;
}
