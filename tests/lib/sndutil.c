#include "sndutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

void gf_test_write_sound(const char *path, int format, int rate, uint32_t channels, uint32_t frames,
			 const float *x)
{
	SF_INFO info = {.samplerate = rate, .channels = (int)channels, .format = format};
	SNDFILE *f = sf_open(path, SFM_WRITE, &info);
	if (!f)
		fprintf(stderr, "%s: %s\n", path, sf_strerror(NULL));
	CHECK(f);
	sf_command(f, SFC_SET_CLIPPING, NULL, SF_TRUE);
	CHECK(sf_writef_float(f, x, frames) == (sf_count_t)frames);
	CHECK(sf_close(f) == 0);
}

float *gf_test_read_sound(const char *path, SF_INFO *info, int whole)
{
	memset(info, 0, sizeof(*info));
	SNDFILE *f = sf_open(path, SFM_READ, info);
	if (!f)
		fprintf(stderr, "%s: %s\n", path, sf_strerror(NULL));
	CHECK(f);
	float *y = malloc((size_t)info->frames * info->channels * sizeof(float) + 1);
	CHECK(y);
	sf_count_t got = sf_readf_float(f, y, info->frames);
	if (whole && got != info->frames)
		fprintf(stderr, "%s: read %lld of %lld frames\n", path, (long long)got,
			(long long)info->frames);
	CHECK(!whole || got == info->frames);
	info->frames = got;
	sf_close(f);
	return y;
}

void gf_test_write_cut_sound(const char *path, int format, int rate, uint32_t channels, uint32_t frames,
			     const float *x, uint32_t keep)
{
	gf_test_write_sound(path, format, rate, channels, frames, x);
	int bits = gf_test_subtype_bits(format);
	off_t bytes = bits ? bits / 8 : (format & SF_FORMAT_SUBMASK) == SF_FORMAT_DOUBLE ? 8 : 4;
	struct stat st;
	CHECK(keep < frames && stat(path, &st) == 0);
	CHECK(truncate(path, st.st_size - (off_t)(frames - keep) * bytes * (off_t)channels) == 0);
}

int gf_test_subtype_bits(int format)
{
	switch (format & SF_FORMAT_SUBMASK) {
	case SF_FORMAT_PCM_U8:
	case SF_FORMAT_PCM_S8:
		return 8;
	case SF_FORMAT_PCM_16:
		return 16;
	case SF_FORMAT_PCM_24:
		return 24;
	case SF_FORMAT_PCM_32:
		return 32;
	default:
		return 0; /* float */
	}
}

long gf_test_quantize(double v, int bits)
{
	double scale = ldexp(1.0, bits - 1);
	return (long)fmin(fmax(nearbyint(v * scale), -scale), scale - 1.0);
}

/* Integer output: y holds code / 2^(bits-1) exactly; compare codes with the quantized reference. */
static void check_codes(const float *y, const double *ref, size_t n, uint32_t channels, int bits, double e,
			const char *what)
{
	/*
	 * Allowed: 1 LSB of rounding, plus what float32 processing itself may be
	 * off (1e-6 of the peak): nothing at 16 bits, a few LSB at 24, where an
	 * LSB is float32's own resolution.
	 */
	double peak = 0.0;
	for (size_t i = 0; i < n; i++)
		peak = fmax(peak, fabs(ref[i]));
	long allowed = 1 + (long)floor(1e-6 * peak * ldexp(1.0, bits - 1));
	long worst = 0;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		long d = labs(lrint(ldexp(y[i], bits - 1)) - gf_test_quantize(ref[i], bits));
		if (d > worst) {
			worst = d;
			off = i;
		}
	}
	fprintf(stderr, "  %s: max |error| %ld LSB (%d-bit, %ld allowed), rel L2 %.3g\n", what, worst, bits,
		allowed, e);
	if (worst > allowed)
		fprintf(stderr, "  worst at frame %zu channel %zu: ref %.9f\n", off / channels,
			off % channels, ref[off]);
	CHECK(worst <= allowed);
	if (bits > 16)
		CHECK(e < 1e-6); /* beyond 16 bits, quantization is below float32's error */
}

void gf_test_check_output(const char *out, int want_format, int rate, const float *x, uint32_t frames_in,
			  uint32_t frames_out, uint32_t channels, const float *h, uint32_t taps,
			  const char *what)
{
	SF_INFO info;
	float *y = gf_test_read_sound(out, &info, 1);
	if (info.format != want_format || info.frames != (sf_count_t)frames_out ||
	    info.channels != (int)channels || info.samplerate != rate) {
		fprintf(stderr,
			"%s: format 0x%x (want 0x%x), %lld frames (want %u), %d ch (want %u), %d Hz (want "
			"%d)\n",
			what, info.format, want_format, (long long)info.frames, frames_out, info.channels,
			channels, info.samplerate, rate);
		exit(1);
	}
	size_t n = (size_t)frames_out * channels;
	float *xe = calloc(n + 1, sizeof(float)); /* input + silence for the tail */
	double *ref = malloc(n * sizeof(double) + 1);
	CHECK(xe && ref && frames_in <= frames_out);
	memcpy(xe, x, (size_t)frames_in * channels * sizeof(float));
	gf_test_reference(xe, frames_out, channels, h, taps, ref);
	int bits = gf_test_subtype_bits(want_format);
	double e = gf_test_rel_l2(y, ref, n);
	if (bits == 0) {
		fprintf(stderr, "  %s: rel L2 %.3g\n", what, e);
		CHECK(e < 1e-6);
	} else {
		check_codes(y, ref, n, channels, bits, e, what);
	}
	free(xe);
	free(ref);
	free(y);
}
