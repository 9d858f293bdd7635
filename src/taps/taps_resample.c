/*
 * An impulse response measured or designed at one rate, used at another:
 * band-limited resampling (libsamplerate, its best sinc) with the filter's
 * gain kept. A resampled signal keeps its amplitude, but an impulse response
 * at a higher rate has more taps per second, each adding to the gain: taps
 * scale by from / to so that the frequency response stays the same below
 * both Nyquist frequencies.
 *
 * The resampler's sinc rings for about 143 zero crossings on both sides of
 * each sample, so the resampled IR starts before the original's frame 0 and
 * ends after its last frame. Cut at either end, a tap near that end loses
 * part of its sinc and the gain is wrong (a unit impulse at frame 0 lost
 * 0.5 dB at DC, 3.5 dB at 8 -> 48 kHz). So the input is padded with zeros on
 * both sides and the whole response kept; a causal FIR cannot start before
 * frame 0, so the IR comes out delayed by the leading padding, the same
 * delay for every IR resampled between the same two rates (channels stay
 * aligned with each other), a whole number of taps at the usual rates.
 * Control thread only (allocates; seconds for long IRs).
 */
#include <math.h>
#include <samplerate.h>
#include <stdlib.h>

#include "taps_io.h"

/* libsamplerate's SRC_SINC_BEST_QUALITY: the sinc's half-length in zero crossings (340239 coefficients
 * at 2381 a crossing: 142.9), one more for rounding. Zero crossings are input frames when
 * upsampling, output frames when downsampling. */
#define SINC_HALF_ZEROS 144.0

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * Input frames of zeros in front: at least the sinc's reach, rounded up to a
 * whole number of output frames where the rates allow it cheaply (44.1 <->
 * 48 kHz: 147 input frames are 160 output frames), so that the delay is a
 * whole number of taps.
 */
static uint32_t lead_frames(uint32_t from, uint32_t to, uint32_t *tail)
{
	double ratio = (double)to / from;
	uint32_t reach = (uint32_t)ceil(SINC_HALF_ZEROS * (ratio < 1.0 ? 1.0 / ratio : 1.0));
	uint64_t step = from / gcd64(from, to); /* input frames that span a whole number of output frames */
	*tail = reach;
	if (step > 4u * (uint64_t)reach)
		return reach;
	return (uint32_t)((reach + step - 1) / step * step);
}

int gf_taps_resample(const double *h, uint32_t n, uint32_t from, uint32_t to, double **out, uint32_t *m,
		     double *delay, struct gf_errbuf *eb)
{
	*out = NULL;
	*m = 0;
	*delay = 0.0;
	if (!n || !from || !to)
		return GF_E_INVAL;
	double ratio = (double)to / from;
	uint32_t tail, lead = lead_frames(from, to, &tail);
	uint64_t n_in = (uint64_t)lead + n + tail, len = (uint64_t)ceil(n_in * ratio);
	if (len > GF_TAPS_MAX) {
		gf_errbuf_set(eb, "%u taps at %u Hz are %llu at %u Hz, more than the %u-tap limit", n, from,
			      (unsigned long long)len, to, GF_TAPS_MAX);
		return GF_E_TOOLONG;
	}
	/* libsamplerate works in float: 24 bits, far below the filter's float taps' own rounding */
	float *in = calloc((size_t)n_in, sizeof(float)), *res = calloc((size_t)len, sizeof(float));
	double *y = malloc((size_t)len * sizeof(double));
	int r = in && res && y ? 0 : GF_E_NOMEM;
	if (!r) {
		for (uint32_t i = 0; i < n; i++)
			in[lead + i] = (float)h[i];
		SRC_DATA d = {.data_in = in,
			      .data_out = res,
			      .input_frames = (long)n_in,
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
		*delay = lead * ratio;
		y = NULL;
	}
	free(in);
	free(res);
	free(y);
	return r;
}
