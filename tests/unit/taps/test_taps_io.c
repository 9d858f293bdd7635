/*
 * Filter files: text taps (separators, comments, errors with file:line,
 * non-finite values) and impulse responses through libsndfile (channel,
 * offset, length, rate mismatch, PCM scaling, memory images).
 */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sndutil.h"
#include "taps_io.h"
#include "testutil.h"

static char *dir;

static void test_text_ok(void)
{
	char *p = gf_test_write_text_in(dir, "ok.txt",
					"# header comment\n"
					"0.5\n"
					"\n"
					"  -0.25   # trailing comment\r\n"
					"1e-3, 2.5e+1 ,3\n"
					"\t4;5\n"
					"-0\n"
					"0x1p-2");
	double *h;
	uint32_t n;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_taps_read_text(p, &h, &n, &eb), &eb);
	const double want[] = {0.5, -0.25, 1e-3, 25.0, 3.0, 4.0, 5.0, -0.0, 0.25};
	CHECK(n == sizeof(want) / sizeof(want[0]));
	for (uint32_t i = 0; i < n; i++)
		CHECK(h[i] == want[i]);
	free(h);
	free(p);
}

/* Each bad file gives @p code and a message starting "PATH:LINE: " containing @p what. */
static void expect_text_error(const char *text, int code, int line, const char *what)
{
	char *p = gf_test_write_text_in(dir, "bad.txt", text);
	double *h = (double *)1;
	uint32_t n = 1;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_read_text(p, &h, &n, &eb);
	printf("  expected error %d: %s\n", r, eb.msg);
	CHECK(r == code);
	CHECK(h == NULL && n == 0);
	char prefix[4200];
	if (line > 0)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", p, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", p);
	CHECK(strncmp(eb.msg, prefix, strlen(prefix)) == 0);
	CHECK(strstr(eb.msg, what) != NULL);
	free(p);
}

static void test_text_errors(void)
{
	expect_text_error("1.0\n2.0\nabc\n", GF_E_FORMAT, 3, "column 1: not a number");
	expect_text_error("1.0\n# c\n2.0 3.0x\n", GF_E_FORMAT, 3, "column 5: not a number");
	expect_text_error("1.0\nnan\n", GF_E_NONFINITE, 2, "not a finite number");
	expect_text_error("1.0\n\n\n-inf\n", GF_E_NONFINITE, 4, "-inf");
	expect_text_error("1e999\n", GF_E_NONFINITE, 1, "1e999");
	expect_text_error("# only comments\n\n", GF_E_FORMAT, 0, "no coefficients");
	expect_text_error("", GF_E_FORMAT, 0, "no coefficients");
	expect_text_error("1.0\n\x01\x02\n", GF_E_FORMAT, 2, "not a number");

	double *h;
	uint32_t n;
	struct gf_errbuf eb = {{0}};
	char *p = gf_test_path(dir, "missing.txt");
	CHECK(gf_taps_read_text(p, &h, &n, &eb) == GF_E_IO);
	CHECK(strstr(eb.msg, p) && strstr(eb.msg, "No such file"));
	free(p);
	/* a device never ends: refused rather than read forever */
	CHECK(gf_taps_read_text("/dev/zero", &h, &n, &eb) == GF_E_IO);
	CHECK(strstr(eb.msg, "not a regular file"));
}

/* A 2-channel file whose frame i holds (i + 1, -(i + 1)) / 1024: exact in float and PCM16. */
static char *write_wav(const char *name, int rate, int format, int frames, int channels, int nan_at)
{
	char *p = gf_test_path(dir, name);
	float *buf = malloc((size_t)frames * channels * sizeof(float));
	CHECK(buf);
	for (int i = 0; i < frames; i++)
		for (int c = 0; c < channels; c++)
			buf[i * channels + c] = (float)((c ? -1 : 1) * (i + 1) / 1024.0);
	if (nan_at >= 0)
		buf[nan_at * channels] = NAN;
	gf_test_write_sound(p, format, rate, (uint32_t)channels, (uint32_t)frames, buf);
	free(buf);
	return p;
}

static void check_values(const double *h, uint32_t n, uint32_t channel, uint64_t offset)
{
	for (uint32_t i = 0; i < n; i++)
		CHECK(h[i] == (channel ? -1.0 : 1.0) * (double)(offset + i + 1) / 1024.0);
}

static void test_wav_ok(void)
{
	char *p = write_wav("ir.wav", 48000, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 100, 2, -1);
	double *h;
	uint32_t n, rate;
	struct gf_errbuf eb = {{0}};
	struct gf_ir_select all = {0}, part = {.channel = 1, .offset = 10, .length = 20};
	CHECK_OK_EB(gf_taps_read_wav(p, 48000, &all, &h, &n, &rate, &eb), &eb);
	CHECK(n == 100 && rate == 48000);
	check_values(h, n, 0, 0);
	free(h);
	CHECK_OK_EB(gf_taps_read_wav(p, 0, &part, &h, &n, NULL, &eb), &eb);
	CHECK(n == 20);
	check_values(h, n, 1, 10);
	free(h);
	/* offset alone takes the rest of the file */
	struct gf_ir_select tail = {.offset = 95};
	CHECK_OK_EB(gf_taps_read_wav(p, 48000, &tail, &h, &n, NULL, &eb), &eb);
	CHECK(n == 5);
	check_values(h, n, 0, 95);
	free(h);

	/* the same bytes from memory */
	static char img[65536];
	long size = gf_test_read_file(p, img, sizeof(img));
	CHECK(size > 0);
	CHECK_OK_EB(gf_taps_read_wav_mem(img, (size_t)size, "mem.wav", 48000, &part, &h, &n, &rate, &eb),
		    &eb);
	CHECK(n == 20 && rate == 48000);
	check_values(h, n, 1, 10);
	free(h);
	free(p);

	/* PCM is normalised to [-1, 1): 16-bit value v reads as v / 32768 */
	p = write_wav("ir16.flac", 44100, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 50, 1, -1);
	CHECK(gf_taps_is_sound_file(p));
	CHECK_OK_EB(gf_taps_read_wav(p, 44100, &all, &h, &n, NULL, &eb), &eb);
	CHECK(n == 50);
	check_values(h, n, 0, 0);
	free(h);
	free(p);
}

static void expect_wav_error(const char *p, uint32_t rate, struct gf_ir_select sel, int code,
			     const char *what1, const char *what2)
{
	double *h = (double *)1;
	uint32_t n = 1;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_read_wav(p, rate, &sel, &h, &n, NULL, &eb);
	printf("  expected error %d: %s\n", r, eb.msg);
	CHECK(r == code);
	CHECK(h == NULL && n == 0);
	CHECK(strncmp(eb.msg, p, strlen(p)) == 0);
	CHECK(strstr(eb.msg, what1) != NULL);
	CHECK(!what2 || strstr(eb.msg, what2) != NULL);
}

/* An impulse response cut short (an interrupted copy) is an error, never a shorter filter. */
static void test_wav_truncated(void)
{
	static const int formats[] = {SF_FORMAT_WAV | SF_FORMAT_PCM_24, SF_FORMAT_WAV | SF_FORMAT_FLOAT,
				      SF_FORMAT_AIFF | SF_FORMAT_PCM_16};
	float x[200 * 2];
	for (int i = 0; i < 200 * 2; i++)
		x[i] = (float)i / 1024.0f;
	for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++) {
		char name[32];
		snprintf(name, sizeof(name), "cut%zu.%s", k, k == 2 ? "aiff" : "wav");
		char *p = gf_test_path(dir, name);
		gf_test_write_cut_sound(p, formats[k], 48000, 2, 200, x, 120);
		printf("truncated %s, 120 of 200 frames:\n", name);
		expect_wav_error(p, 48000, (struct gf_ir_select){0}, GF_E_FORMAT,
				 "truncated: header says 200 frames, 120 read", NULL);
		free(p);
	}
}

static void test_wav_errors(void)
{
	char *p = write_wav("ir44.wav", 44100, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 100, 2, -1);
	struct gf_ir_select all = {0};
	expect_wav_error(p, 48000, all, GF_E_RATE, "44100 Hz", "48000 Hz");
	expect_wav_error(p, 44100, (struct gf_ir_select){.channel = 2}, GF_E_CONFIG, "channel 2",
			 "2 channels");
	expect_wav_error(p, 44100, (struct gf_ir_select){.offset = 100}, GF_E_CONFIG, "offset 100",
			 "100 frames");
	expect_wav_error(p, 44100, (struct gf_ir_select){.offset = 90, .length = 11}, GF_E_CONFIG,
			 "offset 90 + length 11", NULL);
	free(p);
	p = write_wav("nan.wav", 48000, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 100, 1, 42);
	expect_wav_error(p, 48000, all, GF_E_NONFINITE, "sample 42", "not finite");
	free(p);
	p = gf_test_write_text_in(dir, "text.wav", "0.5\n0.25\n");
	expect_wav_error(p, 48000, all, GF_E_FORMAT, "not a sound file", NULL);
	free(p);
	p = gf_test_path(dir, "missing.wav");
	expect_wav_error(p, 48000, all, GF_E_IO, "cannot open", NULL);
	free(p);

	test_wav_truncated();

	/* memory images: garbage and a truncated header are format errors, not crashes */
	double *h;
	uint32_t n;
	struct gf_errbuf eb;
	CHECK(gf_taps_read_wav_mem("RIFF\x10\0\0\0WAVEfmt ", 16, "x", 0, &all, &h, &n, NULL, &eb) ==
	      GF_E_FORMAT);
	CHECK(gf_taps_read_wav_mem("", 0, "x", 0, &all, &h, &n, NULL, &eb) == GF_E_FORMAT);
}

static void test_extension(void)
{
	CHECK(gf_taps_is_sound_file("a/b/room.WAV"));
	CHECK(gf_taps_is_sound_file("x.flac"));
	CHECK(!gf_taps_is_sound_file("eq.txt"));
	CHECK(!gf_taps_is_sound_file("dir.wav/taps"));
	CHECK(!gf_taps_is_sound_file("noext"));
}

int main(void)
{
	dir = gf_test_tmpdir("taps_io");
	test_text_ok();
	test_text_errors();
	test_wav_ok();
	test_wav_errors();
	test_extension();
	gf_test_rmtree(dir);
	free(dir);
	printf("test_taps_io: ok\n");
	return 0;
}
