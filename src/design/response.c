/*
 * Frequency response figures of a FIR, in double precision. Points are
 * evaluated directly (a rotating phasor, re-anchored with cos/sin every few
 * thousand taps so that rounding does not drift); whole spectra come from a
 * radix-2 FFT of the zero-padded taps.
 */
#include "response.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "fftw_plan.h"

#define REANCHOR 4096u
#define FFT_MIN 65536u
#define FFT_OVERSAMPLE 8u
#define FFT_MAX (1u << 21) /* 32 MiB per spectrum; longer filters use nextpow2(n) */

/* sum_k w_k h[k] z^-k with w_k = 1 (@p weighted 0) or k (1). */
static double complex dtft(const float *h, uint32_t n, double omega, int weighted)
{
	double complex acc = 0.0, rot = cexp(-I * omega), z = 1.0;
	for (uint32_t k = 0; k < n; k++) {
		if (k % REANCHOR == 0)
			z = cexp(-I * omega * (double)k);
		double w = weighted ? (double)k : 1.0;
		acc += w * (double)h[k] * z;
		z *= rot;
	}
	return acc;
}

void gf_response_at(const float *h, uint32_t n, double rate, double freq_hz, double *re, double *im)
{
	double complex H = dtft(h, n, 2.0 * M_PI * freq_hz / rate, 0);
	*re = creal(H);
	*im = cimag(H);
}

double gf_response_group_delay(const float *h, uint32_t n, double rate, double freq_hz)
{
	double omega = 2.0 * M_PI * freq_hz / rate;
	double complex H = dtft(h, n, omega, 0);
	if (cabs(H) == 0.0)
		return NAN;
	return creal(dtft(h, n, omega, 1) / H);
}

void gf_response_eval(const float *h, uint32_t n, double rate, double freq_hz, double *mag, double *gd)
{
	double omega = 2.0 * M_PI * freq_hz / rate;
	double complex H = 0.0, K = 0.0, rot = cexp(-I * omega), z = 1.0;
	for (uint32_t k = 0; k < n; k++) {
		if (k % REANCHOR == 0)
			z = cexp(-I * omega * (double)k);
		double complex t = (double)h[k] * z;
		H += t;
		K += (double)k * t;
		z *= rot;
	}
	*mag = cabs(H);
	*gd = *mag > 0.0 ? creal(K / H) : NAN;
}

/* In-place iterative radix-2 FFT (forward, e^{-j}) of @p size, a power of two. */
static void fft(double complex *x, uint32_t size)
{
	for (uint32_t i = 1, j = 0; i < size; i++) {
		uint32_t bit = size >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double complex t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	for (uint32_t len = 2; len <= size; len <<= 1) {
		uint32_t half = len >> 1;
		for (uint32_t k = 0; k < half; k++) {
			double complex w = cexp(-2.0 * I * M_PI * (double)k / (double)len);
			for (uint32_t i = k; i < size; i += len) {
				double complex u = x[i], v = x[i + half] * w;
				x[i] = u + v;
				x[i + half] = u - v;
			}
		}
	}
}

static uint32_t fft_size(uint32_t n)
{
	uint32_t p2 = 1;
	while (p2 < n)
		p2 <<= 1;
	uint64_t want = (uint64_t)p2 * FFT_OVERSAMPLE;
	if (want < FFT_MIN)
		want = FFT_MIN;
	if (want > FFT_MAX)
		want = p2 > FFT_MAX ? p2 : FFT_MAX;
	return (uint32_t)want;
}

/* A curve's points one by one cost n each: above this many taps x points an FFT is cheaper. */
#define CURVE_DIRECT_MAX (1u << 22)

/* The nearest bin of an FFT of @p size to each frequency, written back into @p freqs. */
static void curve_bins(double rate, uint32_t size, double *freqs, size_t nf, uint32_t *at)
{
	uint32_t bins = size / 2 + 1;
	for (size_t i = 0; i < nf; i++) {
		double b = nearbyint(freqs[i] * size / rate);
		at[i] = b < 0.0 ? 0 : b >= bins ? bins - 1 : (uint32_t)b;
		freqs[i] = rate * at[i] / size;
	}
}

/* H from the taps, then K from k h[k], through one FFTW plan on the same arrays; only
 * the bins asked for are kept from each. */
static int curve_fft(const float *h, uint32_t n, double rate, double *freqs, size_t nf, double *mag,
		     double *gd)
{
	uint32_t size = fft_size(n), bins = size / 2 + 1;
	uint64_t arrays = (uint64_t)size * sizeof(double) + (uint64_t)bins * sizeof(fftw_complex);
	if (gf_fft_room(size, arrays, "the response curve", NULL) != 0)
		return GF_E_NOMEM;
	double *in = fftw_alloc_real(size);
	fftw_complex *out = fftw_alloc_complex(bins);
	uint32_t *at = malloc(nf * sizeof(*at));
	double complex *H = malloc(nf * sizeof(*H));
	fftw_plan p = in && out ? gf_fftw_plan_r2c((int)size, in, out) : NULL;
	int err = p && at && H ? 0 : GF_E_NOMEM;
	if (!err) {
		curve_bins(rate, size, freqs, nf, at);
		for (int pass = 0; pass < 2; pass++) {
			for (uint32_t k = 0; k < size; k++)
				in[k] = k < n ? (pass ? (double)k : 1.0) * h[k] : 0.0;
			fftw_execute(p);
			const double *o = (const double *)out; /* re, im: whichever type fftw_complex is */
			for (size_t i = 0; i < nf; i++) {
				double complex v = o[2 * (size_t)at[i]] + I * o[2 * (size_t)at[i] + 1];
				if (!pass) {
					H[i] = v;
					mag[i] = cabs(v);
				} else {
					gd[i] = mag[i] > 0.0 ? creal(v / H[i]) : NAN;
				}
			}
		}
	}
	gf_fftw_destroy(p);
	fftw_free(in);
	fftw_free(out);
	free(at);
	free(H);
	return err;
}

int gf_response_curve(const float *h, uint32_t n, double rate, double *freqs, size_t nf, double *mag,
		      double *gd)
{
	if ((uint64_t)n * nf > CURVE_DIRECT_MAX)
		return curve_fft(h, n, rate, freqs, nf, mag, gd);
	for (size_t i = 0; i < nf; i++)
		gf_response_eval(h, n, rate, freqs[i], &mag[i], &gd[i]);
	return 0;
}

/* Refine the peak between bins: a parabola through three bins, checked by direct evaluation. */
static void refine_peak(const float *h, uint32_t n, double rate, uint32_t size, const double *mag,
			uint32_t bins, uint32_t at, struct gf_response_stats *st)
{
	st->peak_gain = mag[at];
	st->peak_hz = rate * at / size;
	if (at == 0 || at + 1 >= bins)
		return;
	double a = mag[at - 1], b = mag[at], c = mag[at + 1];
	double den = a - 2.0 * b + c;
	if (!(den < 0.0))
		return;
	double off = 0.5 * (a - c) / den;
	double f = rate * (at + off) / size;
	double g = cabs(dtft(h, n, 2.0 * M_PI * f / rate, 0));
	if (g > st->peak_gain) {
		st->peak_gain = g;
		st->peak_hz = f;
	}
}

/* Group delay averaged over the passband (within 3 dB of the peak), weighted by |H|^2. */
static double passband_delay(const double complex *H, const double complex *K, const double *mag,
			     uint32_t bins, double peak)
{
	double num = 0.0, den = 0.0, floor = peak / M_SQRT2;
	for (uint32_t i = 0; i < bins; i++) {
		if (!(mag[i] >= floor) || mag[i] == 0.0)
			continue;
		double w = mag[i] * mag[i];
		num += w * creal(K[i] / H[i]);
		den += w;
	}
	return den > 0.0 ? num / den : NAN;
}

int gf_response_stats(const float *h, uint32_t n, double rate, struct gf_response_stats *st)
{
	st->dc_gain = st->abs_sum = 0.0;
	for (uint32_t k = 0; k < n; k++) {
		st->dc_gain += h[k];
		st->abs_sum += fabs((double)h[k]);
	}
	uint32_t size = fft_size(n), bins = size / 2 + 1;
	double complex *H = calloc(size, sizeof(*H)), *K = calloc(size, sizeof(*K));
	double *mag = malloc(bins * sizeof(*mag));
	if (!H || !K || !mag) {
		free(H), free(K), free(mag);
		return GF_E_NOMEM;
	}
	for (uint32_t k = 0; k < n; k++) {
		H[k] = h[k];
		K[k] = (double)k * h[k];
	}
	fft(H, size);
	fft(K, size);
	double top = 0.0;
	for (uint32_t i = 0; i < bins; i++)
		top = fmax(top, mag[i] = cabs(H[i]));
	uint32_t at = 0; /* the lowest bin at the top: a flat response peaks at 0 Hz */
	while (at + 1 < bins && mag[at] < top * (1.0 - 1e-9))
		at++;
	refine_peak(h, n, rate, size, mag, bins, at, st);
	st->delay_samples = passband_delay(H, K, mag, bins, st->peak_gain);
	free(H), free(K), free(mag);
	return 0;
}
