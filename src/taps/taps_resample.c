/*
 * An impulse response measured or designed at one rate, used at another:
 * band-limited resampling (libsamplerate, its best sinc) with the filter's
 * gain kept. A resampled signal keeps its amplitude, but an impulse response
 * at a higher rate has more taps per second, each adding to the gain: taps
 * scale by from / to so that the frequency response stays the same below
 * both Nyquist frequencies. Control thread only (allocates; seconds for long
 * IRs).
 */
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>

#include "taps_io.h"

int gf_taps_resample(const double *h, uint32_t n, uint32_t from, uint32_t to, double **out, uint32_t *m,
		     struct gf_errbuf *eb)
{
	*out = NULL;
	*m = 0;
	if (!n || !from || !to)
		return GF_E_INVAL;
	double ratio = (double)to / from;
	uint64_t len = (uint64_t)ceil(n * ratio);
	if (len > GF_TAPS_MAX) {
		gf_errbuf_set(eb, "%u taps at %u Hz are %llu at %u Hz, more than the %u-tap limit", n, from,
			      (unsigned long long)len, to, GF_TAPS_MAX);
		return GF_E_TOOLONG;
	}
	/* libsamplerate works in float: 24 bits, far below the filter's float taps' own rounding */
	float *in = malloc((size_t)n * sizeof(float)), *res = calloc((size_t)len, sizeof(float));
	double *y = malloc((size_t)len * sizeof(double));
	int r = in && res && y ? 0 : GF_E_NOMEM;
	if (!r) {
		for (uint32_t i = 0; i < n; i++)
			in[i] = (float)h[i];
		SRC_DATA d = {.data_in = in,
			      .data_out = res,
			      .input_frames = n,
			      .output_frames = (long)len,
			      .src_ratio = ratio,
			      .end_of_input = 1};
		int e = src_simple(&d, SRC_SINC_BEST_QUALITY, 1);
		if (e) {
			gf_errbuf_set(eb, "resampling from %u to %u Hz failed: %s", from, to,
				      src_strerror(e));
			r = GF_E_INVAL;
		}
	}
	if (!r) {
		double scale = (double)from / to;
		for (uint64_t i = 0; i < len; i++)
			y[i] = res[i] * scale;
		*out = y;
		*m = (uint32_t)len;
		y = NULL;
	}
	free(in);
	free(res);
	free(y);
	return r;
}
