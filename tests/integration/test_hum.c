/*
 * freq_hz = "auto" (hum.c): mains hum off 50 or 60 Hz by a few hundredths,
 * with a missing harmonic, is found to 0.05 Hz (the bound) with
 * exactly the harmonics that stand above the noise; no hum, no notch; and
 * through the real program the found hum is notched and the log says so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hum.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000

static char *dir;

/* 8 s: white noise at -50 dBFS RMS, hum at f0 on harmonics 1, 2, 3, 5 (4 is absent). */
static float *make(const char *name, double f0, int with_hum, uint64_t *st, char **path, uint32_t *n)
{
	*n = 8 * RATE;
	float *x = malloc(*n * sizeof(float));
	CHECK(x);
	static const double amp[6] = {0, 0.05, 0.01, 0.02, 0, 0.005};
	for (uint32_t i = 0; i < *n; i++) {
		double v = 0.00316 * 1.732 * gf_test_randf(st);
		for (int k = 1; with_hum && k <= 5; k++)
			v += amp[k] * sin(2.0 * M_PI * f0 * k * i / RATE + k);
		x[i] = (float)v;
	}
	*path = gf_test_path(dir, name);
	gf_test_write_sound(*path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 1, *n, x);
	return x;
}

static void test_detect(double f0, uint64_t *st)
{
	char *p;
	uint32_t n;
	free(make("hum.wav", f0, 1, st, &p, &n));
	struct gf_hum h;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_hum_detect(p, RATE, 16, &h, &eb), &eb);
	printf("hum at %.3f Hz: found %.4f Hz (error %.4f Hz), %u harmonics:", f0, h.f0_hz, h.f0_hz - f0,
	       h.n);
	for (uint32_t i = 0; i < h.n; i++)
		printf(" %u (%.0f dB)", h.harmonic[i], h.snr_db[i]);
	printf("\n");
	CHECK(fabs(h.f0_hz - f0) < 0.05);
	CHECK(h.n == 4 && h.harmonic[0] == 1 && h.harmonic[1] == 2 && h.harmonic[2] == 3 &&
	      h.harmonic[3] == 5);
	free(p);
}

static void test_program(uint64_t *st)
{
	char *in, *none;
	uint32_t n;
	float *x = make("in.wav", 50.04, 1, st, &in, &n);
	free(make("none.wav", 50.0, 0, st, &none, &n));
	char *conf = gf_test_write_text_in(
		dir, "auto.conf",
		"filters = ( { name = \"hum\"; design = \"notch\"; freq_hz = \"auto\";\n"
		"  bandwidth_hz = 5.0; attenuation_db = 40.0; } );\nchain = [\"hum\"];\n");
	char *out = gf_test_path(dir, "out.wav");
	struct run_result r;
	run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "mains hum found at 50.0");
	CHECK(strstr(r.err, "notched harmonics (dB above the noise): 1 ("));
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	/* the hum (about -26 dBFS) is gone: what is left is the -50 dBFS noise, within 1 dB */
	double ex = 0.0, ey = 0.0;
	for (uint32_t i = RATE; i < n - RATE; i++) /* away from the ends, where the notch rings */
		ex += (double)x[i] * x[i], ey += (double)y[i] * y[i];
	double in_db = 10.0 * log10(ex / (n - 2 * RATE)), out_db = 10.0 * log10(ey / (n - 2 * RATE));
	printf("through gpufir: %.1f dBFS RMS in, %.1f dBFS out (noise alone: -50 dBFS)\n", in_db, out_db);
	CHECK(out_db < -49.0 && out_db > -51.5);
	run_gpufir(ARGS("-i", none, "-o", out, "-c", conf, "--backend", "cpu"), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "no mains hum (50 or 60 Hz) stands 12 dB above the noise");
	/* --check-config has no input: both mains frequencies, with a warning that says why */
	run_gpufir(ARGS("--check-config", "-c", conf), &r);
	CHECK_RUN(&r, GF_EXIT_OK, "is measured from the input file (offline mode)");
	free(x);
	free(y);
	free(in);
	free(none);
	free(conf);
	free(out);
}

int main(void)
{
	uint64_t st = gf_test_seed("test_hum");
	dir = gf_test_tmpdir("hum");
	test_detect(50.03, &st);
	test_detect(49.97, &st);
	test_detect(59.96, &st);
	test_detect(60.04, &st);
	test_program(&st);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_hum: OK\n");
	return 0;
}
