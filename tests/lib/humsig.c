/* Test signals for the hum detector (humsig.h). */
#include "humsig.h"

#include <math.h>

#include "testutil.h"

/* A two-pole resonator at @p f Hz, @p bw Hz wide. */
struct reson {
	double a1, a2, g, y1, y2;
};

static void reson_set(struct reson *r, double f, double bw, double rate)
{
	double rad = exp(-M_PI * bw / rate);
	r->a1 = 2.0 * rad * cos(2.0 * M_PI * f / rate);
	r->a2 = -rad * rad;
	r->g = 1.0 - rad;
}

static double reson_run(struct reson *r, double x)
{
	double y = r->g * x + r->a1 * r->y1 + r->a2 * r->y2;
	r->y2 = r->y1;
	r->y1 = y;
	return y;
}

static double uniform(uint64_t *rng)
{
	return 0.5 * (gf_test_randf(rng) + 1.0);
}

void gf_test_speechlike(float *x, size_t n, double rate, double peak_dbfs, uint64_t *rng)
{
	struct reson f1 = {0}, f2 = {0};
	double phase = 0.0, f_start = 120.0, f_end = 120.0, pitch = 120.0, jitter = 1.0;
	size_t syl_len = 1, syl_at = 0;
	int kind = 0; /* 0 voiced, 1 unvoiced, 2 pause */
	double amp = pow(10.0, peak_dbfs / 20.0), floor_amp = pow(10.0, -70.0 / 20.0);
	for (size_t i = 0; i < n; i++) {
		if (i - syl_at >= syl_len) { /* a new syllable: 120..380 ms */
			syl_at = i;
			syl_len = (size_t)((0.12 + 0.26 * uniform(rng)) * rate);
			double u = uniform(rng);
			kind = u < 0.7 ? 0 : u < 0.85 ? 1 : 2;
			f_start = f_end * (0.9 + 0.2 * uniform(rng)); /* intonation glides on */
			if (f_start < 85.0 || f_start > 260.0)
				f_start = 95.0 + 150.0 * uniform(rng);
			f_end = f_start * (0.8 + 0.4 * uniform(rng));
			reson_set(&f1, 300.0 + 500.0 * uniform(rng), 90.0, rate);
			reson_set(&f2, 900.0 + 1400.0 * uniform(rng), 120.0, rate);
		}
		double pos = (double)(i - syl_at) / (double)syl_len, env = sin(M_PI * pos);
		double e = 0.0;
		if (kind == 0) {
			phase += pitch * jitter / rate;
			if (phase >= 1.0) { /* a glottal pulse; the next period jittered by ~1% */
				phase -= 1.0;
				e = 1.0;
				jitter = 1.0 + 0.01 * gf_test_randf(rng);
			}
			pitch = f_start + (f_end - f_start) * pos;
			e *= 60.0;
		} else if (kind == 1) {
			e = 0.3 * gf_test_randf(rng);
		}
		x[i] = (float)(reson_run(&f2, reson_run(&f1, e)) * env * env);
	}
	float peak = 0.0f;
	for (size_t i = 0; i < n; i++)
		peak = fabsf(x[i]) > peak ? fabsf(x[i]) : peak;
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(amp * x[i] / (peak > 0.0f ? peak : 1.0f) + floor_amp * gf_test_randf(rng));
}

void gf_test_add_hum(float *x, size_t from, size_t to, size_t stride, double rate, double f0,
		     const uint32_t *harm, const double *dbfs, size_t nh)
{
	for (size_t i = from; i < to; i++) {
		double s = 0.0;
		for (size_t k = 0; k < nh; k++)
			s += pow(10.0, dbfs[k] / 20.0) *
			     sin(2.0 * M_PI * f0 * harm[k] * (double)i / rate + k);
		x[i * stride] += (float)s;
	}
}

/* The phasors e^(-i 2 pi f i / rate) and the Hann window's e^(i 2 pi i / n) are rotated by their
 * step per sample rather than computed (three cos/sin per sample were seconds of the hum test's
 * hundreds of calls), and set exactly again every RESYNC samples: the rotation's rounding grows by
 * about 1e-16 a step, so it stays far below what a dB level shows. */
#define RESYNC 4096

double gf_test_tone_dbfs(const float *x, size_t n, size_t stride, double rate, double f_hz)
{
	double re = 0.0, im = 0.0, wsum = 0.0;
	double wt = 2.0 * M_PI / (double)n, ft = 2.0 * M_PI * f_hz / rate;
	double dwc = cos(wt), dws = sin(wt), dfc = cos(ft), dfs = sin(ft);
	double wc = 1.0, ws = 0.0, fc = 1.0, fs = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (i % RESYNC == 0) {
			wc = cos(wt * (double)i), ws = sin(wt * (double)i);
			fc = cos(ft * (double)i), fs = sin(ft * (double)i);
		}
		double w = 0.5 - 0.5 * wc;
		re += w * x[i * stride] * fc;
		im -= w * x[i * stride] * fs;
		wsum += w;
		double t = wc * dwc - ws * dws;
		ws = ws * dwc + wc * dws, wc = t;
		t = fc * dfc - fs * dfs;
		fs = fs * dfc + fc * dfs, fc = t;
	}
	double a = 2.0 * sqrt(re * re + im * im) / wsum; /* peak amplitude of the tone */
	return 20.0 * log10(a / sqrt(2.0) + 1e-30);
}
