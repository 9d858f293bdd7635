/*
 * design = "peq" through the real program: an Equalizer APO text read by a
 * config, `gpufir -i in.wav -o out.wav -c peq.conf`, and the gain measured
 * at the peaking band's centre, beside it and at the notch equals the bands'
 * exact response (peq.h) in linear and in minimum phase.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peq.h"
#include "run_prog.h"
#include "sndutil.h"
#include "testutil.h"

#define RATE 48000
#define SECONDS 4

static const double freqs[] = {1000.0, 150.0, 60.0}; /* the peak's centre, beside it, the notch */

/* Amplitude of the @p f Hz component of x over seconds 1..3 (whole cycles, away from the ends). */
static double amplitude(const float *x, double f)
{
	double re = 0.0, im = 0.0;
	for (uint32_t i = RATE; i < 3 * RATE; i++) {
		re += x[i] * cos(2.0 * M_PI * f * i / RATE);
		im += x[i] * sin(2.0 * M_PI * f * i / RATE);
	}
	return 2.0 * hypot(re, im) / (2.0 * RATE);
}

int main(void)
{
	char *dir = gf_test_tmpdir("peq-offline");
	const uint32_t n = SECONDS * RATE;
	float *x = malloc(n * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < n; i++) {
		double v = 0.0;
		for (int k = 0; k < 3; k++)
			v += 0.1 * sin(2.0 * M_PI * freqs[k] * i / RATE + k);
		x[i] = (float)v;
	}
	char *in = gf_test_path(dir, "in.wav"), *out = gf_test_path(dir, "out.wav");
	gf_test_write_sound(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, RATE, 1, n, x);
	const char *text = "Preamp: -3 dB\n"
			   "Filter 1: ON PK Fc 1000 Hz Gain 6.0 dB Q 2.00\n"
			   "Filter 2: ON NO Fc 60 Hz Q 10\n";
	free(gf_test_write_text_in(dir, "ParametricEQ.txt", text));
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_peq_parse_text(text, strlen(text), "ParametricEQ.txt", &p, &eb), &eb);
	for (int phase = 0; phase < 2; phase++) {
		char conf_text[512];
		snprintf(conf_text, sizeof(conf_text),
			 "filters = ( { name = \"eq\"; design = \"peq\"; file = \"ParametricEQ.txt\"; } );\n"
			 "chain = [\"eq\"];\nphase = \"%s\";\n",
			 phase ? "minimum" : "linear");
		char *conf = gf_test_write_text_in(dir, "peq.conf", conf_text);
		struct run_result r;
		run_gpufir(ARGS("-i", in, "-o", out, "-c", conf, "--backend", "cpu"), &r);
		CHECK_RUN(&r, GF_EXIT_OK, "filters.eq: 2 bands");
		SF_INFO info;
		float *y = gf_test_read_sound(out, &info, 1);
		CHECK(info.frames == (sf_count_t)n && info.samplerate == RATE);
		for (int k = 0; k < 3; k++) {
			double got = 20.0 * log10(amplitude(y, freqs[k]) / amplitude(x, freqs[k]));
			double want = 20.0 * log10(gf_peq_response(&p, freqs[k], RATE));
			printf("  %s phase: %6.0f Hz: %+8.3f dB measured, %+8.3f dB from the bands\n",
			       phase ? "minimum" : "linear", freqs[k], got, want);
			if (k < 2)
				CHECK(fabs(got - want) <= 0.1);
			else
				CHECK(got < -60.0); /* the notch */
		}
		CHECK(fabs(20.0 * log10(amplitude(y, 1000.0) / amplitude(x, 1000.0)) - 3.0) <=
		      0.1); /* +6 - 3 */
		free(y);
		free(conf);
	}
	gf_peq_free(&p);
	free(x);
	free(in);
	free(out);
	gf_test_rmtree(dir);
	free(dir);
	printf("test_peq_offline: OK\n");
	return 0;
}
