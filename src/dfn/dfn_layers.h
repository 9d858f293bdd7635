/**
 * @file dfn_layers.h
 * The layers DeepFilterNet3 is made of, for one channel and one hop: the
 * reference arithmetic the CUDA kernels (cuda/dfn/) are tested against.
 * Activations are [channels][frequencies] row-major, as ONNX's NCHW with one
 * time step; weights are in ONNX's layout (dfn_model.h).
 *
 * Any thread; RT-safe: nothing here allocates, locks or does I/O.
 */
#ifndef GPUFIR_DFN_LAYERS_H
#define GPUFIR_DFN_LAYERS_H

enum dfn_act { DFN_ACT_NONE, DFN_ACT_RELU, DFN_ACT_TANH, DFN_ACT_SIGMOID };

/** Apply @p act to @p n values in place. */
void dfn_activate(float *x, int n, enum dfn_act act);

/**
 * The encoder's input convolution, kernel 3 (time) x 3 (frequency), frequency
 * padded by one each side, time causal: @p frames[k] is the [cin][f] input of
 * hop t-2+k. Output o reads input channel o * cin / cout (groups = cin).
 * @p w is [cout][1][3][3]; @p b may be NULL.
 */
void dfn_conv_in(const float *const frames[3], int cin, int f, const float *w, const float *b, int cout,
		 float *out);

/** Depthwise convolution over frequency, kernel 3, padding 1, stride 1 or 2: [ch][fin] ->
 * [ch][(fin-1)/stride+1]. */
void dfn_conv_dw(const float *in, int ch, int fin, int stride, const float *w, float *out);

/** Depthwise transposed convolution, kernel 3, stride 2, padding 1, output padding 1: [ch][fin] -> [ch][2
 * fin]. */
void dfn_convt_dw(const float *in, int ch, int fin, const float *w, float *out);

/** Pointwise (1x1) convolution [cin][f] -> [cout][f], @p w [cout][cin], bias @p b, then @p act. */
void dfn_conv_pw(const float *in, int cin, int f, const float *w, const float *b, int cout, enum dfn_act act,
		 float *out);

/** Per-channel scale and bias (a depthwise 1x1 convolution) and ReLU: out[c][f] = relu(w[c] in[c][f] + b[c]).
 */
void dfn_conv_scale(const float *in, int ch, int f, const float *w, const float *b, float *out);

/**
 * Grouped linear layer: @p groups blocks, each [gin] -> [gout], @p w
 * [groups][gin][gout]; out[g gout + h] = sum_i in[g gin + i] w[g][i][h], then @p act.
 */
void dfn_glinear(const float *in, int groups, int gin, int gout, const float *w, enum dfn_act act,
		 float *out);

/**
 * One step of ONNX's GRU (gates z, r, h; linear_before_reset = 1), hidden
 * size 256: @p h is updated in place from input @p x [@p nin] (@pre nin a multiple of 8). @p w [768][nin],
 * @p r [768][256], @p b [1536] (input biases, then recurrent).
 */
void dfn_gru_step(const float *x, int nin, const float *w, const float *r, const float *b, float *h);

#define DFN_GRU_H 256

#endif
