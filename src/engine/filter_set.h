/**
 * @file filter_set.h
 * A set of FIR filters, all of the same length (shorter ones are
 * zero-padded). This is what the engine convolves with.
 *
 * A plain set has one FIR per audio channel: FIR c filters input c into
 * output c. A mixer (path_in non-NULL) maps @c inputs channels to @c outputs
 * channels: FIR p (a "path") filters input path_in[p] into output
 * path_out[p], and each output is the sum of its paths (none: silence).
 * A path's gain, polarity and delay are in its taps.
 */
#ifndef GPUFIR_FILTER_SET_H
#define GPUFIR_FILTER_SET_H

#include <stdint.h>

struct gf_filter_set {
	uint32_t channels; /**< number of FIRs: audio channels, or a mixer's paths */
	uint32_t taps;	   /**< length of every FIR, >= 1 */
	float *coeffs;	   /**< channels * taps, FIR-major: coeffs[c * taps + k] */
	/* A mixer only (gf_filter_set_new_mixer); path_in NULL for a plain set. */
	uint32_t inputs, outputs;     /**< the mixer's channel counts */
	uint32_t *path_in, *path_out; /**< per FIR: its input and output channel */
};

/** Allocate a zeroed set. Control thread. @return 0 or GF_E_NOMEM / GF_E_INVAL */
int gf_filter_set_new(struct gf_filter_set **out, uint32_t channels, uint32_t taps);

/**
 * Allocate a zeroed mixer of @p paths FIRs from @p inputs to @p outputs
 * channels; the caller fills path_in, path_out (all 0 here) and the taps.
 * @return 0 or GF_E_NOMEM / GF_E_INVAL
 */
int gf_filter_set_new_mixer(struct gf_filter_set **out, uint32_t inputs, uint32_t outputs, uint32_t paths,
			    uint32_t taps);

/** Deep copy. */
int gf_filter_set_dup(struct gf_filter_set **out, const struct gf_filter_set *src);

/** Coefficients of FIR @p c. */
static inline float *gf_filter_set_channel(const struct gf_filter_set *fs, uint32_t c)
{
	return fs->coeffs + (uint64_t)c * fs->taps;
}

static inline int gf_filter_set_is_mixer(const struct gf_filter_set *fs)
{
	return fs->path_in != 0;
}

/** Input channels the set reads. */
static inline uint32_t gf_filter_set_inputs(const struct gf_filter_set *fs)
{
	return fs->path_in ? fs->inputs : fs->channels;
}

/** Output channels the set writes. */
static inline uint32_t gf_filter_set_outputs(const struct gf_filter_set *fs)
{
	return fs->path_in ? fs->outputs : fs->channels;
}

/** Input channel of FIR @p p. */
static inline uint32_t gf_filter_set_path_in(const struct gf_filter_set *fs, uint32_t p)
{
	return fs->path_in ? fs->path_in[p] : p;
}

/** Output channel of FIR @p p. */
static inline uint32_t gf_filter_set_path_out(const struct gf_filter_set *fs, uint32_t p)
{
	return fs->path_out ? fs->path_out[p] : p;
}

/** @return GF_E_NONFINITE if any coefficient is NaN or Inf, else 0. */
int gf_filter_set_check_finite(const struct gf_filter_set *fs);

/**
 * The FIRs of @p mixer as a plain set: FIR p filters channel p. A backend of
 * plain sets runs a mixer's paths this way (the engine gathers and sums).
 */
int gf_filter_set_paths_plain(struct gf_filter_set **out, const struct gf_filter_set *mixer);

/** @return GF_E_INVAL if a mixer's path names a channel out of range, else 0. */
int gf_filter_set_check_paths(const struct gf_filter_set *fs);

/** Accepts NULL. */
void gf_filter_set_free(struct gf_filter_set *fs);

#endif
