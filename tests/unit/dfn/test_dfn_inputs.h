/**
 * @file test_dfn_inputs.h
 * What the DeepFilterNet3 tests share: where the reference runtime and the
 * models are, the fixed inputs, libdeepfilter run through dlopen(), and the
 * comparison of two outputs.
 */
#ifndef GPUFIR_TEST_DFN_INPUTS_H
#define GPUFIR_TEST_DFN_INPUTS_H

#include <stddef.h>

#include "dfn.h"

/** A run-time setting the tests compare under. */
struct dfn_test_setting {
	float lim_db, beta; /**< attenuation limit (dB), post-filter beta */
};
/** libdeepfilter's defaults, a 12 dB attenuation limit, the post-filter at 0.02. */
#define DFN_TEST_SETTINGS 3
extern const struct dfn_test_setting dfn_test_settings[DFN_TEST_SETTINGS];
/** dfn_params_default() with setting @p i's limit and beta. */
void dfn_test_params(int i, struct dfn_params *p);

/** The folder of libdeepfilter.so and its model: GPUFIR_DEEPFILTER_DIR, else BUILD/deepfilter. */
const char *dfn_test_dir(void);

/** Load the converted model (GPUFIR_DFN_MODEL, else DIR/DeepFilterNet3.dfn); exit 77 where there is none. */
struct dfn_model *dfn_test_model(void);

/**
 * The fixed inputs, [channels][hops * 480]: noisy speech (samples/noisy_speech.wav),
 * speech under loud babble-like noise, and noise alone with a tone, 6 s each.
 */
float *dfn_test_inputs(int *channels, size_t *hops);

/** What every DeepFilterNet3 test starts from: the model and the fixed inputs. */
struct dfn_test_case {
	struct dfn_model *m;
	float *x; /**< [ch][hops * 480] */
	int ch;
	size_t hops;
};
/** dfn_test_model() and dfn_test_inputs(); exit 77 where the model is missing. */
void dfn_test_open(struct dfn_test_case *t);
void dfn_test_close(struct dfn_test_case *t);

/**
 * libdeepfilter's df_process_frame over @p hops hops of @p in into @p out (one
 * channel), with its attenuation limit and post-filter beta; exit 77 without it.
 */
void dfn_test_reference(const float *in, size_t hops, float atten_lim_db, float pf_beta, float *out);

/** The difference of @p got from @p want: max |got - want| and 10 log10(sum want^2 / sum (got - want)^2). */
void dfn_test_diff(const float *want, const float *got, size_t n, double *max_abs, double *snr_db);

#endif
