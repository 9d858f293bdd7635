/**
 * @file sndutil.h
 * Sound-file helpers for the tests (libsndfile): write and read whole files,
 * and check a filtered file against the double reference convolution, the
 * way gpufir's own reader and writer see the samples.
 */
#ifndef GPUFIR_TEST_SNDUTIL_H
#define GPUFIR_TEST_SNDUTIL_H

#include <sndfile.h>
#include <stdint.h>

/**
 * Write @p frames frames of @p x (interleaved, @p channels) to @p path as
 * @p format at @p rate; integer formats clip rather than wrap around.
 */
void gf_test_write_sound(const char *path, int format, int rate, uint32_t channels, uint32_t frames,
			 const float *x);

/**
 * gf_test_write_sound, then cut the file after @p keep of its frames, as an
 * interrupted copy leaves it: the header still promises all @p frames.
 * WAV or AIFF of a fixed-size encoding (the audio is the file's last chunk).
 */
void gf_test_write_cut_sound(const char *path, int format, int rate, uint32_t channels, uint32_t frames,
			     const float *x, uint32_t keep);

/**
 * Decode all of @p path as float, as gpufir's reader does. info->frames
 * becomes the frames actually read; with @p whole, anything short of what the
 * header promised fails the test (without it, a file cut short is read to
 * where it ends). @return a malloc'ed buffer
 */
float *gf_test_read_sound(const char *path, SF_INFO *info, int whole);

/** Bits of the integer sample format in @p format; 0 for float and double. */
int gf_test_subtype_bits(int format);

/** Full-scale integer code of @p v at @p bits, saturated as libsndfile's clipping conversion does. */
long gf_test_quantize(double v, int bits);

/**
 * Check that @p out is @p x (frames_in x channels, as decoded from the
 * input) filtered through @p h (channel-major, @p taps each), silence
 * appended up to @p frames_out: same format, rate, channels and length;
 * float output within rel L2 1e-6 of the reference; integer output within
 * 1 LSB of the quantized reference (plus float32's own error, 1e-6 of the
 * peak, where an LSB is finer than that), and beyond 16 bits also within
 * rel L2 1e-6. Prints the error under the label @p what.
 */
void gf_test_check_output(const char *out, int want_format, int rate, const float *x, uint32_t frames_in,
			  uint32_t frames_out, uint32_t channels, const float *h, uint32_t taps,
			  const char *what);

#endif
