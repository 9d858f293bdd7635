/* Signals and measures for the noise suppressor's tests (suppressutil.h). */
#include "suppressutil.h"

#include <math.h>
#include <stdlib.h>

#include "testutil.h"

float *gf_test_speech_like(uint32_t frames, uint32_t rate, uint64_t *st)
{
	float *x = calloc(frames, sizeof(float));
	CHECK(x);
	uint32_t at = rate / 5;
	while (at < frames) {
		uint32_t len = rate * (80 + gf_test_rand_below(st, 220)) / 1000;
		double f0 = 100.0 + gf_test_rand_below(st, 150), glide = (gf_test_randf(st) - 0.5) * 60.0;
		double phase = 0.0;
		for (uint32_t i = 0; i < len && at + i < frames; i++) {
			double t = (double)i / len, f = f0 + glide * t, env = sin(M_PI * t);
			phase += 2.0 * M_PI * f / rate;
			double v = 0.0;
			for (int h = 1; h * f < 0.45 * rate && h <= 30; h++)
				v += sin(h * phase) / h * (h >= 3 && h <= 8 ? 2.0 : 1.0); /* a formant */
			x[at + i] = (float)(0.08 * env * env * v);
		}
		at += len + (gf_test_rand_below(st, 4) == 0 ? rate * 3 / 10 : rate / 25);
	}
	return x;
}

double gf_test_si_sdr(const float *ref, const float *est, uint32_t from, uint32_t n)
{
	double dot = 0.0, rr = 0.0;
	for (uint32_t i = from; i < n; i++) {
		dot += (double)ref[i] * est[i];
		rr += (double)ref[i] * ref[i];
	}
	double a = dot / rr, se = 0.0, ee = 0.0;
	for (uint32_t i = from; i < n; i++) {
		double s = a * ref[i], e = est[i] - s;
		se += s * s;
		ee += e * e;
	}
	return 10.0 * log10(se / ee);
}

double gf_test_worst_channel_rel_l2(const float *got, const float *want, uint32_t channels, uint32_t frames,
				    double *max_abs)
{
	double worst = 0.0, top = 0.0;
	for (uint32_t c = 0; c < channels; c++) {
		double d = 0.0, r = 0.0;
		for (uint32_t i = 0; i < frames; i++) {
			double a = got[(size_t)i * channels + c], b = want[(size_t)i * channels + c];
			d += (a - b) * (a - b);
			r += b * b;
			top = fmax(top, fabs(a - b));
		}
		worst = fmax(worst, sqrt(d / (r > 0.0 ? r : 1.0)));
	}
	if (max_abs)
		*max_abs = top;
	return worst;
}

struct gf_suppress_bank *gf_test_bank(const struct gf_test_bank_mix *m, const struct gf_suppress_bank_opts *o)
{
	const struct gf_suppress_params **per = calloc(m->channels, sizeof(*per));
	CHECK(per && m->group + m->others <= m->channels);
	for (uint32_t c = 0; c < m->group + m->others; c++)
		per[c] = c < m->group ? m->group_params : m->other_params;
	struct gf_suppress_bank *b = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_suppress_bank_new_ex(per, m->channels, m->rate, o, &b, &eb), &eb);
	free(per);
	return b;
}

float *gf_test_bank_input(uint32_t frames, uint32_t channels, double step, uint32_t cycle, uint64_t *st)
{
	float *x = malloc((size_t)frames * channels * sizeof(float));
	CHECK(x);
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < channels; c++)
			x[(size_t)i * channels + c] =
				0.3f * (float)sin(step * (c + 1) * i) * (i % cycle < cycle / 2) +
				0.02f * gf_test_randf(st);
	return x;
}

struct gf_test_bank_calls gf_test_bank_run(struct gf_suppress_bank *b, float *buf, uint32_t channels,
					   uint32_t frames, uint32_t call)
{
	struct gf_test_bank_calls r = {.first = -1};
	for (uint32_t at = 0, k = 0; at < frames; at += call, k++) {
		uint32_t n = frames - at < call ? frames - at : call;
		int err = gf_suppress_bank_process(b, buf + (size_t)at * channels, n);
		if (!err)
			continue;
		r.failures++;
		if (r.first < 0) {
			r.first = (int)k;
			r.first_err = err;
		}
	}
	return r;
}
