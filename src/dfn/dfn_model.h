/**
 * @file dfn_model.h
 * The DeepFilterNet3 weight file: the flat file scripts/dfn-convert.py writes
 * from the official ONNX model (DeepFilterNet3_onnx.tar.gz), loaded and checked
 * tensor by tensor against the architecture src/dfn implements.
 *
 * Layer dfn (src/dfn/: gpufir's own DeepFilterNet3 inference). Control thread:
 * loading reads the file and allocates. A loaded model is read-only and may be
 * shared by any number of forward instances on any threads.
 *
 * File layout (little-endian): magic "GFDFN3\0\0", uint32 version (1), uint32
 * tensor count, then per tensor uint32 name length, the name, uint32 ndim,
 * uint32 dims[ndim] and float32 data (row-major, ONNX's layout), and last a
 * uint32 CRC-32 (zlib's) of every byte before it.
 */
#ifndef GPUFIR_DFN_MODEL_H
#define GPUFIR_DFN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* X(ID, name, ndim, d0, d1, d2, d3): every tensor of the file, in file order. */
#define DFN_TENSORS(X)                                                                                       \
	X(CONFIG, "config", 1, 11, 0, 0, 0)                                                                  \
	X(ENC_ERB0_W, "enc.erb_conv0.w", 4, 64, 1, 3, 3)                                                     \
	X(ENC_ERB0_B, "enc.erb_conv0.b", 1, 64, 0, 0, 0)                                                     \
	X(ENC_ERB1_DW, "enc.erb_conv1.dw", 4, 64, 1, 1, 3)                                                   \
	X(ENC_ERB1_PW, "enc.erb_conv1.pw", 4, 64, 64, 1, 1)                                                  \
	X(ENC_ERB1_B, "enc.erb_conv1.b", 1, 64, 0, 0, 0)                                                     \
	X(ENC_ERB2_DW, "enc.erb_conv2.dw", 4, 64, 1, 1, 3)                                                   \
	X(ENC_ERB2_PW, "enc.erb_conv2.pw", 4, 64, 64, 1, 1)                                                  \
	X(ENC_ERB2_B, "enc.erb_conv2.b", 1, 64, 0, 0, 0)                                                     \
	X(ENC_ERB3_DW, "enc.erb_conv3.dw", 4, 64, 1, 1, 3)                                                   \
	X(ENC_ERB3_PW, "enc.erb_conv3.pw", 4, 64, 64, 1, 1)                                                  \
	X(ENC_ERB3_B, "enc.erb_conv3.b", 1, 64, 0, 0, 0)                                                     \
	X(ENC_DF0_DW, "enc.df_conv0.dw", 4, 64, 1, 3, 3)                                                     \
	X(ENC_DF0_PW, "enc.df_conv0.pw", 4, 64, 64, 1, 1)                                                    \
	X(ENC_DF0_B, "enc.df_conv0.b", 1, 64, 0, 0, 0)                                                       \
	X(ENC_DF1_DW, "enc.df_conv1.dw", 4, 64, 1, 1, 3)                                                     \
	X(ENC_DF1_PW, "enc.df_conv1.pw", 4, 64, 64, 1, 1)                                                    \
	X(ENC_DF1_B, "enc.df_conv1.b", 1, 64, 0, 0, 0)                                                       \
	X(ENC_DF_FC_EMB, "enc.df_fc_emb.w", 3, 32, 96, 16, 0)                                                \
	X(ENC_EMB_IN, "enc.emb_in.w", 3, 16, 32, 16, 0)                                                      \
	X(ENC_GRU0_W, "enc.emb_gru0.w", 3, 1, 768, 256, 0)                                                   \
	X(ENC_GRU0_R, "enc.emb_gru0.r", 3, 1, 768, 256, 0)                                                   \
	X(ENC_GRU0_B, "enc.emb_gru0.b", 2, 1, 1536, 0, 0)                                                    \
	X(ENC_EMB_OUT, "enc.emb_out.w", 3, 16, 16, 32, 0)                                                    \
	X(ENC_LSNR_W, "enc.lsnr.w", 2, 512, 1, 0, 0)                                                         \
	X(ENC_LSNR_B, "enc.lsnr.b", 1, 1, 0, 0, 0)                                                           \
	X(ERB_EMB_IN, "erb.emb_in.w", 3, 16, 32, 16, 0)                                                      \
	X(ERB_GRU0_W, "erb.emb_gru0.w", 3, 1, 768, 256, 0)                                                   \
	X(ERB_GRU0_R, "erb.emb_gru0.r", 3, 1, 768, 256, 0)                                                   \
	X(ERB_GRU0_B, "erb.emb_gru0.b", 2, 1, 1536, 0, 0)                                                    \
	X(ERB_GRU1_W, "erb.emb_gru1.w", 3, 1, 768, 256, 0)                                                   \
	X(ERB_GRU1_R, "erb.emb_gru1.r", 3, 1, 768, 256, 0)                                                   \
	X(ERB_GRU1_B, "erb.emb_gru1.b", 2, 1, 1536, 0, 0)                                                    \
	X(ERB_EMB_OUT, "erb.emb_out.w", 3, 16, 16, 32, 0)                                                    \
	X(ERB_CONV3P_W, "erb.conv3p.w", 4, 64, 1, 1, 1)                                                      \
	X(ERB_CONV3P_B, "erb.conv3p.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONVT3_DW, "erb.convt3.dw", 4, 64, 1, 1, 3)                                                    \
	X(ERB_CONVT3_PW, "erb.convt3.pw", 4, 64, 64, 1, 1)                                                   \
	X(ERB_CONVT3_B, "erb.convt3.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONV2P_W, "erb.conv2p.w", 4, 64, 1, 1, 1)                                                      \
	X(ERB_CONV2P_B, "erb.conv2p.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONVT2_DW, "erb.convt2.dw", 4, 64, 1, 1, 3)                                                    \
	X(ERB_CONVT2_PW, "erb.convt2.pw", 4, 64, 64, 1, 1)                                                   \
	X(ERB_CONVT2_B, "erb.convt2.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONV1P_W, "erb.conv1p.w", 4, 64, 1, 1, 1)                                                      \
	X(ERB_CONV1P_B, "erb.conv1p.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONVT1_DW, "erb.convt1.dw", 4, 64, 1, 1, 3)                                                    \
	X(ERB_CONVT1_PW, "erb.convt1.pw", 4, 64, 64, 1, 1)                                                   \
	X(ERB_CONVT1_B, "erb.convt1.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_CONV0P_W, "erb.conv0p.w", 4, 64, 1, 1, 1)                                                      \
	X(ERB_CONV0P_B, "erb.conv0p.b", 1, 64, 0, 0, 0)                                                      \
	X(ERB_OUT_W, "erb.conv0_out.w", 4, 1, 64, 1, 3)                                                      \
	X(ERB_OUT_B, "erb.conv0_out.b", 1, 1, 0, 0, 0)                                                       \
	X(DF_EMB_IN, "df.emb_in.w", 3, 8, 64, 32, 0)                                                         \
	X(DF_GRU0_W, "df.gru0.w", 3, 1, 768, 256, 0)                                                         \
	X(DF_GRU0_R, "df.gru0.r", 3, 1, 768, 256, 0)                                                         \
	X(DF_GRU0_B, "df.gru0.b", 2, 1, 1536, 0, 0)                                                          \
	X(DF_GRU1_W, "df.gru1.w", 3, 1, 768, 256, 0)                                                         \
	X(DF_GRU1_R, "df.gru1.r", 3, 1, 768, 256, 0)                                                         \
	X(DF_GRU1_B, "df.gru1.b", 2, 1, 1536, 0, 0)                                                          \
	X(DF_SKIP, "df.skip.w", 3, 16, 32, 16, 0)                                                            \
	X(DF_CONVP_DW, "df.convp.dw", 4, 10, 32, 5, 1)                                                       \
	X(DF_CONVP_PW, "df.convp.pw", 4, 10, 10, 1, 1)                                                       \
	X(DF_CONVP_B, "df.convp.b", 1, 10, 0, 0, 0)                                                          \
	X(DF_OUT, "df.out.w", 3, 16, 16, 60, 0)

#define DFN_ENUM_(id, name, nd, a, b, c, d) DFN_T_##id,
/** The tensors of a model, in file order. */
enum dfn_tensor { DFN_TENSORS(DFN_ENUM_) DFN_T_COUNT };
#undef DFN_ENUM_

/** The "config" tensor's entries: the [df] settings of config.ini the architecture depends on. */
enum dfn_cfg {
	DFN_CFG_SR,
	DFN_CFG_FFT_SIZE,
	DFN_CFG_HOP_SIZE,
	DFN_CFG_NB_ERB,
	DFN_CFG_NB_DF,
	DFN_CFG_DF_ORDER,
	DFN_CFG_DF_LOOKAHEAD,
	DFN_CFG_MIN_NB_ERB_FREQS,
	DFN_CFG_NORM_TAU,
	DFN_CFG_LSNR_MAX,
	DFN_CFG_LSNR_MIN,
	DFN_CFG_COUNT
};

#define DFN_MODEL_VERSION 1
/** Largest model file read (the DeepFilterNet3 file is about 8.5 MB). */
#define DFN_MODEL_MAX_BYTES (64u << 20)

/** A loaded model: one float array per tensor, in one allocation. */
struct dfn_model {
	const float *t[DFN_T_COUNT]; /**< each tensor's data, row-major */
	size_t n[DFN_T_COUNT];	     /**< each tensor's element count */
	float *data;		     /**< the allocation t[] points into */
	size_t total;		     /**< weights in all */
};

/**
 * Load and check the model file @p path. Every tensor's name and shape must
 * match DFN_TENSORS, the config its settings, every weight be finite and the
 * CRC-32 hold. Control thread; allocates.
 * @return 0, GF_E_IO (unreadable: the path and why in @p eb), GF_E_FORMAT
 *         (wrong or corrupt: the tensor or field that differs in @p eb) or GF_E_NOMEM
 */
int dfn_model_load(const char *path, struct dfn_model **out, struct gf_errbuf *eb);

/** dfn_model_load() of a file already in memory (@p what names it in messages). */
int dfn_model_parse(const void *buf, size_t len, const char *what, struct dfn_model **out,
		    struct gf_errbuf *eb);

/** Free a model (NULL is fine). No forward instance may still use it. */
void dfn_model_free(struct dfn_model *m);

/** zlib's CRC-32 of @p n bytes: the file's trailing checksum. */
uint32_t dfn_model_crc32(const void *p, size_t n);

/** The name of tensor @p id ("enc.erb_conv0.w"), or "?" out of range. */
const char *dfn_tensor_name(int id);

#endif
