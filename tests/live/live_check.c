/* test_live_jack's checks of a recording (live_check.h). */
#include "live_check.h"

#include <fftw3.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

long live_check_find_delay(const float *got, uint32_t got_frames, const double *ref, uint32_t maxlag)
{
	uint32_t len = maxlag + LIVE_CHECK_XCORR_LEN;
	uint32_t n = 1;
	while (n < len + LIVE_CHECK_XCORR_LEN)
		n <<= 1;
	float *a = fftwf_alloc_real(n), *b = fftwf_alloc_real(n);
	fftwf_complex *fa = fftwf_alloc_complex(n / 2 + 1), *fb = fftwf_alloc_complex(n / 2 + 1);
	CHECK(a && b && fa && fb);
	memset(a, 0, n * sizeof(float));
	memset(b, 0, n * sizeof(float));
	for (uint32_t i = 0; i < len && i < got_frames; i++)
		a[i] = got[(size_t)i * LIVE_CHECK_CH];
	for (uint32_t i = 0; i < LIVE_CHECK_XCORR_LEN; i++)
		b[i] = (float)ref[(size_t)i * LIVE_CHECK_CH];
	fftwf_plan pa = fftwf_plan_dft_r2c_1d((int)n, a, fa, FFTW_ESTIMATE);
	fftwf_plan pb = fftwf_plan_dft_r2c_1d((int)n, b, fb, FFTW_ESTIMATE);
	fftwf_plan pc = fftwf_plan_dft_c2r_1d((int)n, fa, a, FFTW_ESTIMATE);
	fftwf_execute(pa);
	fftwf_execute(pb);
	for (uint32_t k = 0; k <= n / 2; k++) { /* A * conj(B) */
		float re = fa[k][0] * fb[k][0] + fa[k][1] * fb[k][1];
		float im = fa[k][1] * fb[k][0] - fa[k][0] * fb[k][1];
		fa[k][0] = re;
		fa[k][1] = im;
	}
	fftwf_execute(pc);
	long best = 0;
	for (uint32_t lag = 1; lag < maxlag; lag++)
		if (a[lag] > a[best])
			best = lag;
	fftwf_destroy_plan(pa);
	fftwf_destroy_plan(pb);
	fftwf_destroy_plan(pc);
	fftwf_free(a);
	fftwf_free(b);
	fftwf_free(fa);
	fftwf_free(fb);
	return best;
}

double live_check_window_error(const float *got, long delay, const double *ref, uint32_t frames, uint32_t w)
{
	uint32_t len = frames - w < LIVE_CHECK_WINDOW ? frames - w : LIVE_CHECK_WINDOW;
	return gf_test_rel_l2(got + ((size_t)delay + w) * LIVE_CHECK_CH, ref + (size_t)w * LIVE_CHECK_CH,
			      (size_t)len * LIVE_CHECK_CH);
}

void live_check_windows(const char *what, const float *got, uint32_t got_frames, long delay,
			const double *ref, uint32_t frames)
{
	CHECK(delay >= 0 && (uint64_t)delay + frames <= got_frames);
	uint32_t bad = 0;
	double worst = 0.0;
	for (uint32_t w = 0; w < frames; w += LIVE_CHECK_WINDOW) {
		double e = live_check_window_error(got, delay, ref, frames, w);
		worst = e > worst ? e : worst;
		if (!(e < LIVE_CHECK_TOL) && bad++ < 5)
			fprintf(stderr, "%s: window at frame %u (%.2f s): rel L2 %.3g\n", what, w,
				(double)w / LIVE_CHECK_RATE, e);
	}
	printf("%s: %u windows of %u frames, worst rel L2 %.3g, %u over %.0e\n", what,
	       (frames + LIVE_CHECK_WINDOW - 1) / LIVE_CHECK_WINDOW, LIVE_CHECK_WINDOW, worst, bad,
	       LIVE_CHECK_TOL);
	CHECK(bad == 0);
}

float *live_check_read_wav(const char *path, uint32_t *frames)
{
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	if (!sf)
		fprintf(stderr, "%s: %s\n", path, sf_strerror(NULL));
	CHECK(sf);
	CHECK(info.channels == (int)LIVE_CHECK_CH && info.samplerate == (int)LIVE_CHECK_RATE);
	/* RF64 downgraded under 4 GiB: a RIFF WAVE (extensible format tag). */
	CHECK((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV ||
	      (info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAVEX);
	CHECK((info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_FLOAT);
	float *x = malloc((size_t)info.frames * LIVE_CHECK_CH * sizeof(float) + 1);
	CHECK(x);
	CHECK(sf_readf_float(sf, x, info.frames) == info.frames);
	sf_close(sf);
	*frames = (uint32_t)info.frames;
	return x;
}

void live_check_bad_windows(const float *got, long delay, const double *ref, uint32_t frames, long *first,
			    long *last)
{
	*first = *last = -1;
	for (uint32_t w = 0; w < frames; w += LIVE_CHECK_WINDOW) {
		if (!(live_check_window_error(got, delay, ref, frames, w) < LIVE_CHECK_TOL)) {
			*first = *first < 0 ? (long)(w / LIVE_CHECK_WINDOW) : *first;
			*last = (long)(w / LIVE_CHECK_WINDOW);
		}
	}
}
