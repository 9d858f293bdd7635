/**
 * @file dfn_kernels.cuh
 * Internal to cuda/dfn/: the batched kernels of DeepFilterNet3's forward and
 * their launchers. Every launcher takes the channel count @p n and the
 * stream; arrays are channel-major ([n][...]), each channel's part laid out
 * as the CPU forward's (src/dfn/dfn_layers.h). Launchers return after the
 * launch (errors surface at the instance's cudaGetLastError).
 */
#ifndef GPUFIR_DFN_KERNELS_CUH
#define GPUFIR_DFN_KERNELS_CUH

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdint.h>

extern "C" {
#include "dfn_layers.h"
}

/** frame = [ana, in] under the window; ana = in (NaN and Inf made 0). */
void dfn_k_analysis(const float *d_in, float *d_ana, const float *d_win, float *d_frame, int n, cudaStream_t s);

/**
 * Scale the FFT output by 1/960 into the spectra ring (slot hop % 5) and
 * compute the features into their rings (slot hop % 3), updating the norms.
 * @p d_band_off: the 33 bin offsets of the ERB bands.
 */
void dfn_k_features(const cufftComplex *d_fft, float *d_ring, const int *d_band_off, float alpha, float *d_mean,
		    float *d_unit, float *d_ferb, float *d_fspec, uint64_t hop, int n, cudaStream_t s);

/** dfn_conv_in over the feature ring (@p fstride floats a slot, 3 slots a channel); output [n][cout][f]. */
void dfn_k_conv_in(const float *d_ring, int fstride, int cin, int f, const float *w, const float *b, int cout,
		   enum dfn_act act, float *d_out, int ostride, uint64_t hop, int n, cudaStream_t s);

/** dfn_conv_dw (@p transposed 0) or dfn_convt_dw (1): [n][64][fin] (channel stride @p istride) -> dense [n][64][fout]. */
void dfn_k_dw(const float *d_in, int istride, int fin, int stride, int transposed, const float *w, float *d_out,
	      int n, cudaStream_t s);

/** dfn_conv_pw: [n][cin][f] (channel stride @p istride) -> [n][cout][f] (stride @p ostride). */
void dfn_k_pw(const float *d_in, int istride, int cin, int f, const float *w, const float *b, int cout,
	      enum dfn_act act, float *d_out, int ostride, int n, cudaStream_t s);

/** [n][ch][f] -> [n][f][ch]. */
void dfn_k_transpose(const float *d_in, int ch, int f, float *d_out, int n, cudaStream_t s);

/** dfn_glinear, input channel stride @p istride, output [n][groups * gout]. */
void dfn_k_glinear(const float *d_in, int istride, int groups, int gin, int gout, const float *w,
		   enum dfn_act act, float *d_out, int n, cudaStream_t s);

/** d_y[i] += d_x[i] for @p count values. */
void dfn_k_add(float *d_y, const float *d_x, int count, cudaStream_t s);

/** C[n][m] = sum_k A[n][k] W[m][k] + b[m]: A [n][kdim], W [mdim][kdim], C [n][mdim]. */
void dfn_k_gemm_nt(const float *d_a, const float *w, const float *b, int kdim, int mdim, float *d_c, int n,
		   cudaStream_t s);

/** The GRU's gates from the two products (biases included): h updated in place. */
void dfn_k_gru_gates(const float *d_gx, const float *d_gh, float *d_h, int n, cudaStream_t s);

/** lsnr = sigmoid(emb . w + b) * 50 - 15. */
void dfn_k_lsnr(const float *d_emb, const float *w, const float *b, float *d_lsnr, int n, cudaStream_t s);

/** d[c][j] += relu(w[c] e[c][j] + b[c]) on [n][64][f]. */
void dfn_k_scale_add(const float *d_e, int f, const float *w, const float *b, float *d_d, int n, cudaStream_t s);

/** The ERB decoder's output convolution (64 -> 1, kernel 3) and sigmoid: mask [n][32]. */
void dfn_k_erb_out(const float *d_d, const float *w, const float *b, float *d_mask, int n, cudaStream_t s);

/** df_convp's grouped convolution over the c0 ring (slot hop % 5 the current): [n][10][96]. */
void dfn_k_df_convp(const float *d_c0ring, const float *w, float *d_out, uint64_t hop, int n, cudaStream_t s);

/** coefs[j][k] += p[k][j] ([n][96][10] and [n][10][96]). */
void dfn_k_coefs_add(float *d_coefs, const float *d_p, int n, cudaStream_t s);

/**
 * The enhanced spectrum of hop t-2 into @p d_y: the mask (band of each bin in
 * @p d_bin_band), the deep filter over bins 0..95, the post-filter (beta > 0),
 * the attenuation limit (*d_lim > 0: a gain on the device, so that a captured hop takes a new one).
 */
void dfn_k_spec_out(const float *d_ring, const int *d_bin_band, const float *d_mask, const float *d_coefs,
		    float beta, const float *d_lim, cufftComplex *d_y, uint64_t hop, int n, cudaStream_t s);

/** out = first half of the windowed frame + syn; syn = its second half. */
void dfn_k_synthesis(const float *d_frame, const float *d_win, float *d_syn, float *d_out, int n, cudaStream_t s);

#endif
