/*
 * Linear convolution of two FIRs by FFT (FFTW, double precision), for
 * pre-convolving a chain: direct convolution of two 131071-tap designs took
 * 7 s on the control thread (a daemon's watchdog is 10 s); this takes tens
 * of milliseconds. FFTW_ESTIMATE: plans are made once per size and call, and
 * measuring would cost more than the transform.
 */
#include <fftw3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fir_fft.h"
#include "fftw_plan.h"

/* Smallest 2^a 3^b 5^c >= n: sizes FFTW handles fast. */
static size_t fft_size(size_t n)
{
	size_t best = 1;
	while (best < n)
		best <<= 1;
	for (size_t p5 = 1; p5 < best; p5 *= 5)
		for (size_t p3 = p5; p3 < best; p3 *= 3) {
			size_t s = p3;
			while (s < n)
				s <<= 1;
			if (s < best)
				best = s;
		}
	return best;
}

int gf_fir_convolve_fft(const double *a, uint32_t na, const double *b, uint32_t nb, double *y,
			struct gf_errbuf *eb)
{
	size_t n = (size_t)na + nb - 1, size = fft_size(n), bins = size / 2 + 1;
	char what[96];
	snprintf(what, sizeof(what), "convolving filters of %u and %u taps", na, nb);
	int r = gf_fft_room(size, 2 * (size * sizeof(double) + bins * sizeof(fftw_complex)), what, eb);
	if (r)
		return r;
	double *ta = fftw_alloc_real(size), *tb = fftw_alloc_real(size);
	fftw_complex *fa = fftw_alloc_complex(bins), *fb = fftw_alloc_complex(bins);
	fftw_plan pa = NULL, pb = NULL, pi = NULL;
	if (ta && tb && fa && fb) {
		pa = gf_fftw_plan_r2c((int)size, ta, fa);
		pb = gf_fftw_plan_r2c((int)size, tb, fb);
		pi = gf_fftw_plan_c2r((int)size, fa, ta);
	}
	if (!pa || !pb || !pi) {
		r = gf_fft_nomem(size, what, eb);
		goto out;
	}
	memset(ta, 0, size * sizeof(double));
	memset(tb, 0, size * sizeof(double));
	memcpy(ta, a, (size_t)na * sizeof(double));
	memcpy(tb, b, (size_t)nb * sizeof(double));
	fftw_execute(pa);
	fftw_execute(pb);
	double scale = 1.0 / (double)size;
	for (size_t k = 0; k < bins; k++) {
		double re = fa[k][0] * fb[k][0] - fa[k][1] * fb[k][1];
		double im = fa[k][0] * fb[k][1] + fa[k][1] * fb[k][0];
		fa[k][0] = re * scale;
		fa[k][1] = im * scale;
	}
	fftw_execute(pi); /* c2r overwrites fa: it is not needed again */
	memcpy(y, ta, n * sizeof(double));
	r = 0;
out:
	if (pa)
		gf_fftw_destroy(pa);
	if (pb)
		gf_fftw_destroy(pb);
	if (pi)
		gf_fftw_destroy(pi);
	fftw_free(ta);
	fftw_free(tb);
	fftw_free(fa);
	fftw_free(fb);
	return r;
}
