/**
 * @file dfn_net.h
 * DeepFilterNet3's three networks (encoder, ERB decoder, deep-filter decoder)
 * for one channel and one hop, with the recurrent state they carry from hop
 * to hop: the reference the batched CUDA forward (cuda/dfn/) is checked
 * against. A batch is an array of struct dfn_net_state, one per channel.
 *
 * Any thread; RT-safe: nothing here allocates, locks or does I/O.
 */
#ifndef GPUFIR_DFN_NET_H
#define GPUFIR_DFN_NET_H

#include <stdint.h>

#include "dfn_layers.h"
#include "dfn_model.h"

enum {
	DFN_NB_ERB = 32,			 /**< ERB bands (feat_erb) */
	DFN_NB_DF = 96,				 /**< deep-filtered bins (feat_spec) */
	DFN_CONV_CH = 64,			 /**< convolution channels */
	DFN_EMB = 512,				 /**< embedding width */
	DFN_DF_ORDER = 5,			 /**< deep-filter taps over time */
	DFN_DF_LOOKAHEAD = 2,			 /**< hops the deep filter and the mask look ahead */
	DFN_COEFS = DFN_NB_DF * DFN_DF_ORDER * 2 /**< [bin][tap][re, im] */
};

/** One channel's recurrent state: convolution histories and GRU hidden states. Zero is the initial state. */
struct dfn_net_state {
	float erb_hist[2][DFN_NB_ERB];		   /**< feat_erb of the last two hops, slot hop & 1 */
	float spec_hist[2][2 * DFN_NB_DF];	   /**< feat_spec (re plane, im plane) likewise */
	float c0_hist[4][DFN_CONV_CH * DFN_NB_DF]; /**< c0 of the last four decoded hops, slot df_hop & 3 */
	float h_enc[DFN_GRU_H], h_erb[2][DFN_GRU_H], h_df[2][DFN_GRU_H];
	uint64_t hop;	 /**< hops the encoder has run */
	uint64_t df_hop; /**< hops the deep-filter decoder has run */
};

/** What one hop's networks produce for one channel. */
struct dfn_net_out {
	float lsnr;		/**< local SNR estimate, dB (-15 to 35) */
	float mask[DFN_NB_ERB]; /**< ERB gains, 0 to 1 */
	float coefs[DFN_COEFS]; /**< deep-filter coefficients [bin][tap][re, im], tap 0 the oldest hop */
};

/** Scratch for one channel's hop (the intermediate activations); contents do not persist. */
struct dfn_net_scratch {
	float e0[DFN_CONV_CH * 32], e1[DFN_CONV_CH * 16], e2[DFN_CONV_CH * 8], e3[DFN_CONV_CH * 8];
	float c0[DFN_CONV_CH * DFN_NB_DF];
	float t0[DFN_CONV_CH * DFN_NB_DF], t1[DFN_CONV_CH * DFN_NB_DF];
	float emb[DFN_EMB], v0[DFN_EMB * 6];
};

/** Run the encoder on this hop's features (feat_erb [32], feat_spec [2][96]): e0..e3, c0, emb and lsnr into
 * @p s and @p o. */
void dfn_net_encode(const struct dfn_model *m, struct dfn_net_state *st, const float *feat_erb,
		    const float *feat_spec, struct dfn_net_scratch *s, struct dfn_net_out *o);

/** The ERB decoder: the mask from the encoder's outputs in @p s. */
void dfn_net_erb_decode(const struct dfn_model *m, struct dfn_net_state *st, struct dfn_net_scratch *s,
			struct dfn_net_out *o);

/** The deep-filter decoder: the coefficients from @p s's emb and c0 and the c0 history. */
void dfn_net_df_decode(const struct dfn_model *m, struct dfn_net_state *st, struct dfn_net_scratch *s,
		       struct dfn_net_out *o);

/**
 * Close the hop: this hop's features become the encoder's history. The
 * deep-filter decoder keeps its own c0 history (dfn_net_df_decode), since
 * the reference skips it on hops whose local SNR needs no deep filter.
 */
void dfn_net_commit(struct dfn_net_state *st, const float *feat_erb, const float *feat_spec);

#endif
