/*
 * Minimum phase by the real cepstrum (homomorphic method), and group delay.
 *
 * For H = FFT_M(h): c = IFFT(log|H|) is real and even; folding it onto its
 * causal half (c[0], 2c[1..M/2-1], c[M/2], zeros) and taking exp(FFT(.))
 * gives the minimum-phase spectrum with the same magnitude, and its IFFT's
 * first n samples are the filter. The true cepstrum is infinite; the FFT
 * aliases it, which is why M is GF_MINPHASE_OVERSAMPLE x n or more.
 */
#include "minphase.h"

#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fftw_plan.h"

static size_t fft_len(uint32_t n)
{
	size_t m = 4096;
	while (m < (size_t)n * GF_MINPHASE_OVERSAMPLE && m < ((size_t)1 << 23))
		m <<= 1;
	while (m < (size_t)n * GF_MINPHASE_MIN_OVERSAMPLE)
		m <<= 1;
	return m;
}

/* log|H| on the M/2+1 bins of spec, clamped GF_MINPHASE_FLOOR_DB below the peak. */
static int log_magnitude(fftw_complex *spec, size_t bins)
{
	double peak = 0.0;
	for (size_t k = 0; k < bins; k++)
		peak = fmax(peak, cabs(spec[k]));
	if (!(peak > 0.0) || !isfinite(peak))
		return GF_E_INVAL;
	double floor = peak * pow(10.0, -GF_MINPHASE_FLOOR_DB / 20.0);
	for (size_t k = 0; k < bins; k++)
		spec[k] = log(fmax(cabs(spec[k]), floor));
	return 0;
}

/* One FFT size's arrays and plans, forward (x -> spec) and inverse. */
struct mp_fft {
	size_t m, bins;
	double *x;
	fftw_complex *spec;
	fftw_plan fwd, inv;
};

static void mp_fft_free(struct mp_fft *t)
{
	if (t->fwd)
		gf_fftw_destroy(t->fwd);
	if (t->inv)
		gf_fftw_destroy(t->inv);
	fftw_free(t->x);
	fftw_free(t->spec);
}

/* h (n taps) -> its minimum-phase counterpart, through the plans of @p t. */
static int fold_cepstrum(struct mp_fft *t, double *h, uint32_t n)
{
	size_t m = t->m;
	double *x = t->x;
	memset(x, 0, m * sizeof(double));
	memcpy(x, h, n * sizeof(double));
	fftw_execute(t->fwd);
	int r = log_magnitude(t->spec, t->bins);
	if (r)
		return r;
	fftw_execute(t->inv); /* x = M * real cepstrum (the c2r input is destroyed, it is not needed) */
	for (size_t k = 1; k < m / 2; k++)
		x[k] *= 2.0 / (double)m;
	x[0] /= (double)m;
	x[m / 2] /= (double)m;
	memset(x + m / 2 + 1, 0, (m / 2 - 1) * sizeof(double));
	fftw_execute(t->fwd);
	for (size_t k = 0; k < t->bins; k++)
		t->spec[k] = cexp(t->spec[k]);
	fftw_execute(t->inv);
	for (uint32_t k = 0; k < n; k++)
		h[k] = x[k] / (double)m;
	return 0;
}

int gf_minphase(double *h, uint32_t n, struct gf_errbuf *eb)
{
	if (n > GF_MINPHASE_MAX_TAPS)
		return GF_E_TOOLONG;
	if (n <= 1)
		return n == 1 && h[0] != 0.0 ? (h[0] = fabs(h[0]), 0) : GF_E_INVAL;
	struct mp_fft t = {.m = fft_len(n)};
	t.bins = t.m / 2 + 1;
	char what[64];
	snprintf(what, sizeof(what), "minimum phase of %u taps", n);
	int r = gf_fft_room(t.m, t.m * sizeof(double) + t.bins * sizeof(fftw_complex), what, eb);
	if (r)
		return r;
	t.x = fftw_malloc(t.m * sizeof(double));
	t.spec = fftw_malloc(t.bins * sizeof(fftw_complex));
	if (t.x && t.spec) {
		t.fwd = gf_fftw_plan_r2c((int)t.m, t.x, t.spec);
		t.inv = gf_fftw_plan_c2r((int)t.m, t.spec, t.x);
	}
	r = t.fwd && t.inv ? fold_cepstrum(&t, h, n) : gf_fft_nomem(t.m, what, eb);
	mp_fft_free(&t);
	return r;
}

/* H(f) and sum k h[k] e^{-j w k}; the rotation is re-seeded every 1024 taps to stay exact. */
static void dft_pair(const double *h, uint32_t n, double w, double complex *H, double complex *D)
{
	double complex s = 0.0, d = 0.0;
	for (uint32_t k0 = 0; k0 < n; k0 += 1024) {
		double complex z = cexp(-I * w * (double)k0), step = cexp(-I * w);
		uint32_t end = n - k0 < 1024 ? n : k0 + 1024;
		for (uint32_t k = k0; k < end; k++) {
			s += h[k] * z;
			d += (double)k * h[k] * z;
			z *= step;
		}
	}
	*H = s;
	*D = d;
}

double gf_group_delay(const double *h, uint32_t n, double freq_hz, double rate)
{
	double complex H, D;
	dft_pair(h, n, 2.0 * M_PI * freq_hz / rate, &H, &D);
	return cabs(H) > 0.0 ? creal(D / H) : 0.0;
}

uint32_t gf_group_delay_band(const double *h, uint32_t n, double rate, double lo_hz, double hi_hz,
			     uint32_t points, double *min, double *max, double *mean)
{
	hi_hz = fmin(hi_hz, 0.499 * rate);
	*min = *max = *mean = 0.0;
	if (points < 2 || !(lo_hz < hi_hz))
		return 0;
	double *mag = malloc(points * sizeof(double)), *gd = malloc(points * sizeof(double));
	double peak = 0.0;
	uint32_t used = 0;
	if (!mag || !gd)
		goto out;
	for (uint32_t i = 0; i < points; i++) {
		/* log-spaced: the band spans decades, and the interesting part is low */
		double f = lo_hz * pow(hi_hz / lo_hz, (double)i / (points - 1));
		double complex H, D;
		dft_pair(h, n, 2.0 * M_PI * f / rate, &H, &D);
		mag[i] = cabs(H);
		gd[i] = mag[i] > 0.0 ? creal(D / H) : 0.0;
		peak = fmax(peak, mag[i]);
	}
	double sum = 0.0;
	for (uint32_t i = 0; i < points; i++) {
		if (!(mag[i] >= 0.1 * peak))
			continue;
		*min = used ? fmin(*min, gd[i]) : gd[i];
		*max = used ? fmax(*max, gd[i]) : gd[i];
		sum += gd[i];
		used++;
	}
	*mean = used ? sum / used : 0.0;
out:
	free(mag);
	free(gd);
	return used;
}
