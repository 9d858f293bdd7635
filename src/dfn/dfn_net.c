/*
 * DeepFilterNet3's networks for one channel and one hop (deepfilternet3.py
 * of DeepFilterNet v0.5.6, as exported to ONNX): the encoder's convolutions
 * and GRU, the ERB decoder's GRUs and transposed convolutions, the deep-filter
 * decoder's GRUs and its convolution over the last five hops.
 */
#include "dfn_net.h"

#include <math.h>
#include <string.h>

#define W(id) (m->t[DFN_T_##id])

/* [ch][f] -> [f][ch]: the networks flatten frequency-major, channels inner. */
static void transpose(const float *in, int ch, int f, float *out)
{
	for (int c = 0; c < ch; c++)
		for (int j = 0; j < f; j++)
			out[j * ch + c] = in[c * f + j];
}

/* A depthwise convolution, then a pointwise one with the folded batch norm, then ReLU. */
static void conv_sep(const float *in, int fin, int stride, const float *dw, const float *pw, const float *b,
		     float *tmp, float *out)
{
	int fout = (fin - 1) / stride + 1;
	dfn_conv_dw(in, DFN_CONV_CH, fin, stride, dw, tmp);
	dfn_conv_pw(tmp, DFN_CONV_CH, fout, pw, b, DFN_CONV_CH, DFN_ACT_RELU, out);
}

static void encode_erb(const struct dfn_model *m, struct dfn_net_state *st, const float *feat_erb,
		       struct dfn_net_scratch *s)
{
	const float *frames[3] = {st->erb_hist[st->hop & 1], st->erb_hist[(st->hop + 1) & 1], feat_erb};
	dfn_conv_in(frames, 1, DFN_NB_ERB, W(ENC_ERB0_W), W(ENC_ERB0_B), DFN_CONV_CH, s->e0);
	dfn_activate(s->e0, DFN_CONV_CH * 32, DFN_ACT_RELU);
	conv_sep(s->e0, 32, 2, W(ENC_ERB1_DW), W(ENC_ERB1_PW), W(ENC_ERB1_B), s->t0, s->e1);
	conv_sep(s->e1, 16, 2, W(ENC_ERB2_DW), W(ENC_ERB2_PW), W(ENC_ERB2_B), s->t0, s->e2);
	conv_sep(s->e2, 8, 1, W(ENC_ERB3_DW), W(ENC_ERB3_PW), W(ENC_ERB3_B), s->t0, s->e3);
}

/* c0, and from c1 the deep-filter path's contribution to the embedding (into s->emb). */
static void encode_df(const struct dfn_model *m, struct dfn_net_state *st, const float *feat_spec,
		      struct dfn_net_scratch *s)
{
	const float *frames[3] = {st->spec_hist[st->hop & 1], st->spec_hist[(st->hop + 1) & 1], feat_spec};
	dfn_conv_in(frames, 2, DFN_NB_DF, W(ENC_DF0_DW), NULL, DFN_CONV_CH, s->t0);
	dfn_conv_pw(s->t0, DFN_CONV_CH, DFN_NB_DF, W(ENC_DF0_PW), W(ENC_DF0_B), DFN_CONV_CH, DFN_ACT_RELU,
		    s->c0);
	conv_sep(s->c0, DFN_NB_DF, 2, W(ENC_DF1_DW), W(ENC_DF1_PW), W(ENC_DF1_B), s->t0, s->t1);
	transpose(s->t1, DFN_CONV_CH, DFN_NB_DF / 2, s->t0);
	dfn_glinear(s->t0, 32, 96, 16, W(ENC_DF_FC_EMB), DFN_ACT_RELU, s->emb);
}

void dfn_net_encode(const struct dfn_model *m, struct dfn_net_state *st, const float *feat_erb,
		    const float *feat_spec, struct dfn_net_scratch *s, struct dfn_net_out *o)
{
	encode_erb(m, st, feat_erb, s);
	encode_df(m, st, feat_spec, s);
	float *e3t = s->v0, *x = s->v0 + DFN_EMB;
	transpose(s->e3, DFN_CONV_CH, 8, e3t);
	for (int i = 0; i < DFN_EMB; i++)
		e3t[i] += s->emb[i];
	dfn_glinear(e3t, 16, 32, 16, W(ENC_EMB_IN), DFN_ACT_RELU, x);
	dfn_gru_step(x, DFN_GRU_H, W(ENC_GRU0_W), W(ENC_GRU0_R), W(ENC_GRU0_B), st->h_enc);
	dfn_glinear(st->h_enc, 16, 16, 32, W(ENC_EMB_OUT), DFN_ACT_RELU, s->emb);
	float l = W(ENC_LSNR_B)[0];
	for (int i = 0; i < DFN_EMB; i++)
		l += s->emb[i] * W(ENC_LSNR_W)[i];
	o->lsnr = 1.0f / (1.0f + expf(-l)) * 50.0f - 15.0f;
}

/* One decoder step: the skip path p(e) added to @p d ([64][f]), then the (transposed) separable conv. */
static void erb_up(const struct dfn_model *m, const float *e, int f, int pid, float *d, int tid, float *tmp,
		   float *out)
{
	dfn_conv_scale(e, DFN_CONV_CH, f, m->t[pid], m->t[pid + 1], tmp);
	for (int i = 0; i < DFN_CONV_CH * f; i++)
		d[i] += tmp[i];
	if (tid == DFN_T_ERB_CONVT3_DW) {
		dfn_conv_dw(d, DFN_CONV_CH, f, 1, m->t[tid], tmp);
		dfn_conv_pw(tmp, DFN_CONV_CH, f, m->t[tid + 1], m->t[tid + 2], DFN_CONV_CH, DFN_ACT_RELU,
			    out);
		return;
	}
	dfn_convt_dw(d, DFN_CONV_CH, f, m->t[tid], tmp);
	dfn_conv_pw(tmp, DFN_CONV_CH, 2 * f, m->t[tid + 1], m->t[tid + 2], DFN_CONV_CH, DFN_ACT_RELU, out);
}

/*
 * Both decoders' head: a grouped linear of emb ([groups][gin][gout] at tensor
 * @p lin), ReLU, into @p x, then two GRU layers (tensors from @p gru0: w, r,
 * b of the first, then of the second) updating @p h[0] and @p h[1].
 */
static void decoder_grus(const struct dfn_model *m, const float *emb, int lin, int groups, int gin, int gout,
			 int gru0, float *x, float h[2][DFN_GRU_H])
{
	dfn_glinear(emb, groups, gin, gout, m->t[lin], DFN_ACT_RELU, x);
	dfn_gru_step(x, DFN_GRU_H, m->t[gru0], m->t[gru0 + 1], m->t[gru0 + 2], h[0]);
	dfn_gru_step(h[0], DFN_GRU_H, m->t[gru0 + 3], m->t[gru0 + 4], m->t[gru0 + 5], h[1]);
}

void dfn_net_erb_decode(const struct dfn_model *m, struct dfn_net_state *st, struct dfn_net_scratch *s,
			struct dfn_net_out *o)
{
	float *x = s->v0, *y = s->v0 + DFN_EMB, *d = s->v0 + 2 * DFN_EMB;
	decoder_grus(m, s->emb, DFN_T_ERB_EMB_IN, 16, 32, 16, DFN_T_ERB_GRU0_W, x, st->h_erb);
	dfn_glinear(st->h_erb[1], 16, 16, 32, W(ERB_EMB_OUT), DFN_ACT_RELU, y);
	transpose(y, 8, DFN_CONV_CH, d); /* [8][64] -> [64][8] */
	erb_up(m, s->e3, 8, DFN_T_ERB_CONV3P_W, d, DFN_T_ERB_CONVT3_DW, s->t0, s->t1);
	erb_up(m, s->e2, 8, DFN_T_ERB_CONV2P_W, s->t1, DFN_T_ERB_CONVT2_DW, s->t0, d);
	erb_up(m, s->e1, 16, DFN_T_ERB_CONV1P_W, d, DFN_T_ERB_CONVT1_DW, s->t0, s->t1);
	dfn_conv_scale(s->e0, DFN_CONV_CH, 32, W(ERB_CONV0P_W), W(ERB_CONV0P_B), s->t0);
	const float *w = W(ERB_OUT_W);
	for (int j = 0; j < DFN_NB_ERB; j++) {
		float acc = W(ERB_OUT_B)[0];
		for (int c = 0; c < DFN_CONV_CH; c++)
			for (int k = 0; k < 3; k++) {
				int jj = j + k - 1;
				if (jj >= 0 && jj < DFN_NB_ERB)
					acc += w[c * 3 + k] * (s->t1[c * 32 + jj] + s->t0[c * 32 + jj]);
			}
		o->mask[j] = 1.0f / (1.0f + expf(-acc));
	}
}

/* df_convp: a grouped convolution over the last five hops' c0 (tap 0 the oldest), pointwise, ReLU: [10][96].
 */
static void df_convp(const struct dfn_model *m, const struct dfn_net_state *st, const float *c0, float *tmp,
		     float *out)
{
	enum { F = DFN_NB_DF, O = 2 * DFN_DF_ORDER };
	const float *frames[5];
	for (int k = 0; k < 4; k++)
		frames[k] = st->c0_hist[(st->df_hop + k) & 3];
	frames[4] = c0;
	const float *w = W(DF_CONVP_DW); /* [10][32][5][1] */
	for (int o = 0; o < O; o++) {
		int g = o / DFN_DF_ORDER;
		float *y = tmp + o * F;
		memset(y, 0, F * sizeof *y);
		for (int i = 0; i < 32; i++)
			for (int k = 0; k < 5; k++) {
				float wk = w[(o * 32 + i) * 5 + k];
				const float *x = frames[k] + (g * 32 + i) * F;
				for (int j = 0; j < F; j++)
					y[j] += wk * x[j];
			}
	}
	dfn_conv_pw(tmp, O, F, W(DF_CONVP_PW), W(DF_CONVP_B), O, DFN_ACT_RELU, out);
}

void dfn_net_df_decode(const struct dfn_model *m, struct dfn_net_state *st, struct dfn_net_scratch *s,
		       struct dfn_net_out *o)
{
	float *x = s->v0, *skip = s->v0 + DFN_EMB, *c = s->v0 + 2 * DFN_EMB;
	decoder_grus(m, s->emb, DFN_T_DF_EMB_IN, 8, 64, 32, DFN_T_DF_GRU0_W, x, st->h_df);
	dfn_glinear(s->emb, 16, 32, 16, W(DF_SKIP), DFN_ACT_NONE, skip);
	for (int i = 0; i < DFN_GRU_H; i++)
		c[i] = st->h_df[1][i] + skip[i];
	dfn_glinear(c, 16, 16, 60, W(DF_OUT), DFN_ACT_TANH, o->coefs);
	df_convp(m, st, s->c0, s->t0, s->t1);
	for (int j = 0; j < DFN_NB_DF; j++)
		for (int k = 0; k < 2 * DFN_DF_ORDER; k++)
			o->coefs[j * 2 * DFN_DF_ORDER + k] += s->t1[k * DFN_NB_DF + j];
	memcpy(st->c0_hist[st->df_hop & 3], s->c0, sizeof st->c0_hist[0]);
	st->df_hop++;
}

void dfn_net_commit(struct dfn_net_state *st, const float *feat_erb, const float *feat_spec)
{
	memcpy(st->erb_hist[st->hop & 1], feat_erb, sizeof st->erb_hist[0]);
	memcpy(st->spec_hist[st->hop & 1], feat_spec, sizeof st->spec_hist[0]);
	st->hop++;
}
