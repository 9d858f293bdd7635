/*
 * The GPU DeepFilterNet3 instance: the weights on the device, every
 * channel's state and the hop's activations as [channels][...] arrays, two
 * batched cuFFT plans, and the hop as one launch sequence on one stream.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cu_common.cuh"
#include "cu_error.cuh"
#include "dfn_kernels.cuh"

extern "C" {
#include "dfn_gpu.h"
}

/* The hop's arguments depend on the hop only modulo 3 (feature rings) and 5 (spectra, c0): 15 graphs. */
#define DFN_GPU_GRAPHS 15

/* Device arrays, each [channels][per-channel floats] (dfn_gpu_new sizes them from this table). */
#define DFN_GPU_BUFS(X)                                                                                      \
	X(in, 480)                                                                                           \
	X(out, 480) X(ana, 480) X(syn, 480) X(frame, 960) X(fft, 962) X(ring, 5 * 962) X(mean, 32)           \
		X(unit, 96) X(ferb, 3 * 32) X(fspec, 3 * 192) X(e0, 2048) X(e1, 1024) X(e2, 512) X(e3, 512)  \
			X(c0ring, 5 * 6144) X(t0, 6144) X(t1, 6144) X(x, 3072) X(emb, 512) X(v, 512)         \
				X(u, 512) X(gx, 768) X(gh, 768) X(h_enc, 256) X(h_erb0, 256) X(h_erb1, 256)  \
					X(h_df0, 256) X(h_df1, 256) X(mask, 32) X(coefs, 960) X(lsnr, 1)

struct dfn_gpu {
	int n;
	float beta, lim, alpha;
	uint64_t hop;
	int pending;		/* a hop submitted, not yet collected */
	uint64_t pending_since; /* gf_now_ns() of its submission */
	cudaStream_t s;
	cudaEvent_t done;		       /* recorded after the hop's output copies */
	cudaGraphExec_t graph[DFN_GPU_GRAPHS]; /* the hop's work for hop % 15, once captured */
	int graphs;			       /* they are in use */
	cufftHandle fwd, inv;
	int have_fwd, have_inv;
	float *d_weights, *d_win;
	float *d_lim, *h_lim;	     /* the attenuation limit as a gain, up with each hop (set_atten_lim) */
	float *d_mean0, *d_unit0;    /* every channel's normalisation at its start, for reset() */
	const float *w[DFN_T_COUNT]; /* device pointer of each tensor */
	int *d_band_off, *d_bin_band;
	float *h_in, *h_out, *h_lsnr; /* pinned staging */
#define DFN_GPU_FIELD_(name, size) float *name;
	DFN_GPU_BUFS(DFN_GPU_FIELD_)
#undef DFN_GPU_FIELD_
};

extern "C" void dfn_gpu_free(struct dfn_gpu *d)
{
	if (!d)
		return;
	if (d->s && gf_cu_stream_idle_by(d->s, gf_now_ns() + DFN_GPU_HOP_WAIT_NS) != 0)
		return; /* a hung GPU: leaking beats freeing memory a kernel may still touch */
	if (d->done)
		cudaEventDestroy(d->done);
	for (int i = 0; i < DFN_GPU_GRAPHS; i++)
		if (d->graph[i])
			cudaGraphExecDestroy(d->graph[i]);
	if (d->have_fwd)
		cufftDestroy(d->fwd);
	if (d->have_inv)
		cufftDestroy(d->inv);
#define DFN_GPU_FREE_(name, size) cudaFree(d->name);
	DFN_GPU_BUFS(DFN_GPU_FREE_)
#undef DFN_GPU_FREE_
	cudaFree(d->d_weights);
	cudaFree(d->d_win);
	cudaFree(d->d_lim);
	cudaFree(d->d_mean0);
	cudaFree(d->d_unit0);
	cudaFreeHost(d->h_lim);
	cudaFree(d->d_band_off);
	cudaFree(d->d_bin_band);
	cudaFreeHost(d->h_in);
	cudaFreeHost(d->h_out);
	cudaFreeHost(d->h_lsnr);
	if (d->s)
		cudaStreamDestroy(d->s);
	free(d);
}

/* libDF's set_atten_lim as a gain (src/dfn/dfn_spectral.h's dfn_atten_gain, the CPU forward's):
 * >= 100 dB none (0), under 0.01 dB no reduction (1). */
static float atten_gain(float db)
{
	float lim = fabsf(db);
	if (lim >= 100.0f)
		return 0.0f;
	return lim < 0.01f ? 1.0f : powf(10.0f, -lim / 20.0f);
}

static int check_params(const struct dfn_params *p, struct gf_errbuf *eb)
{
	if (p->min_db_thresh != DFN_MIN_DB_THRESH || p->max_db_erb_thresh != DFN_MAX_DB_ERB_THRESH ||
	    p->max_db_df_thresh != DFN_MAX_DB_DF_THRESH) {
		gf_errbuf_set(eb,
			      "deepfilter (GPU): only libdeepfilter's local-SNR thresholds (-15/35/35 dB) "
			      "are implemented");
		return GF_E_INVAL;
	}
	if (!(p->post_filter_beta >= 0.0f) || !(fabsf(p->atten_lim_db) >= 0.01f)) {
		gf_errbuf_set(
			eb,
			"deepfilter (GPU): post-filter beta must be >= 0 and the attenuation limit at "
			"least 0.01 dB (below that the stage passes its input through: bypass it instead)");
		return GF_E_INVAL;
	}
	return 0;
}

/* Every channel's normalisation to its start, queued on the hop's stream. */
static int set_norm(struct dfn_gpu *d, struct gf_errbuf *eb)
{
	CU_RET(eb, cudaMemcpyAsync(d->mean, d->d_mean0, (size_t)d->n * DFN_NB_ERB * sizeof(float),
				   cudaMemcpyDeviceToDevice, d->s));
	CU_RET(eb, cudaMemcpyAsync(d->unit, d->d_unit0, (size_t)d->n * DFN_NB_DF * sizeof(float),
				   cudaMemcpyDeviceToDevice, d->s));
	return 0;
}

/* Weights, window and band tables up; every state array to its initial value. */
static int upload(struct dfn_gpu *d, const struct dfn_model *m, const struct dfn_consts *k,
		  struct gf_errbuf *eb)
{
	CU_RET(eb, cudaMemcpy(d->d_weights, m->data, m->total * sizeof(float), cudaMemcpyHostToDevice));
	for (int i = 0; i < DFN_T_COUNT; i++)
		d->w[i] = d->d_weights + (m->t[i] - m->data);
	CU_RET(eb, cudaMemcpy(d->d_win, k->window, sizeof k->window, cudaMemcpyHostToDevice));
	int off[DFN_NB_ERB + 1] = {0}, band[DFN_FREQS];
	for (int b = 0; b < DFN_NB_ERB; b++) {
		off[b + 1] = off[b] + k->erb_width[b];
		for (int j = off[b]; j < off[b + 1]; j++)
			band[j] = b;
	}
	CU_RET(eb, cudaMemcpy(d->d_band_off, off, sizeof off, cudaMemcpyHostToDevice));
	CU_RET(eb, cudaMemcpy(d->d_bin_band, band, sizeof band, cudaMemcpyHostToDevice));
	float *mean = (float *)malloc((size_t)d->n * (DFN_NB_ERB + DFN_NB_DF) * sizeof(float));
	if (!mean)
		return GF_E_NOMEM;
	float *unit = mean + (size_t)d->n * DFN_NB_ERB;
	for (int c = 0; c < d->n; c++) { /* the host's numbers (dfn_consts_init): the module runs them */
		memcpy(mean + c * DFN_NB_ERB, k->mean_init, sizeof k->mean_init);
		memcpy(unit + c * DFN_NB_DF, k->unit_init, sizeof k->unit_init);
	}
	int err = CU_TRY(eb, cudaMemcpy(d->d_mean0, mean, (size_t)d->n * DFN_NB_ERB * sizeof(float),
					cudaMemcpyHostToDevice));
	if (!err)
		err = CU_TRY(eb, cudaMemcpy(d->d_unit0, unit, (size_t)d->n * DFN_NB_DF * sizeof(float),
					    cudaMemcpyHostToDevice));
	free(mean);
	*d->h_lim = d->lim;
	return err;
}

static int alloc_all(struct dfn_gpu *d, const struct dfn_model *m, struct gf_errbuf *eb)
{
	size_t n = (size_t)d->n;
#define DFN_GPU_ALLOC_(name, size)                                                                           \
	CU_RET(eb, cudaMalloc((void **)&d->name, n *(size) * sizeof(float)));                                \
	CU_RET(eb, cudaMemset(d->name, 0, n *(size) * sizeof(float)));
	DFN_GPU_BUFS(DFN_GPU_ALLOC_)
#undef DFN_GPU_ALLOC_
	CU_RET(eb, cudaMalloc((void **)&d->d_weights, m->total * sizeof(float)));
	CU_RET(eb, cudaMalloc((void **)&d->d_win, DFN_WIN * sizeof(float)));
	CU_RET(eb, cudaMalloc((void **)&d->d_lim, sizeof(float)));
	CU_RET(eb, cudaMalloc((void **)&d->d_mean0, n * DFN_NB_ERB * sizeof(float)));
	CU_RET(eb, cudaMalloc((void **)&d->d_unit0, n * DFN_NB_DF * sizeof(float)));
	CU_RET(eb, cudaMallocHost((void **)&d->h_lim, sizeof(float)));
	CU_RET(eb, cudaMalloc((void **)&d->d_band_off, (DFN_NB_ERB + 1) * sizeof(int)));
	CU_RET(eb, cudaMalloc((void **)&d->d_bin_band, DFN_FREQS * sizeof(int)));
	CU_RET(eb, cudaMallocHost((void **)&d->h_in, n * DFN_HOP * sizeof(float)));
	CU_RET(eb, cudaMallocHost((void **)&d->h_out, n * DFN_HOP * sizeof(float)));
	CU_RET(eb, cudaMallocHost((void **)&d->h_lsnr, n * sizeof(float)));
	CU_RET(eb, cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking));
	CU_RET(eb, cudaEventCreateWithFlags(&d->done, cudaEventDisableTiming));
	int len = DFN_WIN;
	CUFFT_RET(eb, cufftPlanMany(&d->fwd, 1, &len, NULL, 1, DFN_WIN, NULL, 1, DFN_FREQS, CUFFT_R2C, d->n));
	d->have_fwd = 1;
	CUFFT_RET(eb, cufftPlanMany(&d->inv, 1, &len, NULL, 1, DFN_FREQS, NULL, 1, DFN_WIN, CUFFT_C2R, d->n));
	d->have_inv = 1;
	CUFFT_RET(eb, cufftSetStream(d->fwd, d->s));
	CUFFT_RET(eb, cufftSetStream(d->inv, d->s));
	return 0;
}

extern "C" int dfn_gpu_new(const struct dfn_model *m, const struct dfn_consts *k, int channels,
			   const struct dfn_params *p, struct dfn_gpu **out, struct gf_errbuf *eb)
{
	int count = 0;
	if (!m || !k || !p || channels < 1) {
		gf_errbuf_set(eb, "deepfilter (GPU): need a model and at least one channel");
		return GF_E_INVAL;
	}
	GF_RET(check_params(p, eb));
	if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
		cudaGetLastError();
		gf_errbuf_set(eb, "deepfilter (GPU): no usable CUDA device");
		return GF_E_NOGPU;
	}
	struct dfn_gpu *d = (struct dfn_gpu *)calloc(1, sizeof *d);
	if (!d)
		return GF_E_NOMEM;
	d->n = channels;
	d->beta = p->post_filter_beta;
	d->lim = atten_gain(p->atten_lim_db);
	d->alpha = k->alpha;
	int err = alloc_all(d, m, eb);
	if (!err)
		err = upload(d, m, k, eb);
	/* the set-up's memsets and copies ran on the legacy stream, which the hop's (non-blocking) stream
	 * does not wait for: they must have landed before the first hop */
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(cudaStreamLegacy));
	if (!err)
		err = set_norm(d, eb);
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(d->s));
	if (err) {
		dfn_gpu_free(d);
		return err;
	}
	*out = d;
	return 0;
}

#define W(id) (d->w[DFN_T_##id])

/* One GRU step for every channel: the input and recurrent products as two GEMMs, then the gates. */
static void gru(struct dfn_gpu *d, const float *x, int wid, float *h)
{
	const float *b = d->w[wid + 2];
	dfn_k_gemm_nt(x, d->w[wid], b, 256, 768, d->gx, d->n, d->s);
	dfn_k_gemm_nt(h, d->w[wid + 1], b + 768, 256, 768, d->gh, d->n, d->s);
	dfn_k_gru_gates(d->gx, d->gh, h, d->n, d->s);
}

/* e0..e3, c0 (into the ring's slot for this hop) and emb, lsnr. */
static void encode(struct dfn_gpu *d)
{
	int n = d->n;
	cudaStream_t s = d->s;
	float *c0 = d->c0ring; /* slot hop % 5 of channel 0; channel stride 5 * 6144 */
	c0 += (d->hop % 5) * 6144;
	dfn_k_conv_in(d->ferb, 32, 1, 32, W(ENC_ERB0_W), W(ENC_ERB0_B), 64, DFN_ACT_RELU, d->e0, 2048, d->hop,
		      n, s);
	dfn_k_dw(d->e0, 2048, 32, 2, 0, W(ENC_ERB1_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 1024, 64, 16, W(ENC_ERB1_PW), W(ENC_ERB1_B), 64, DFN_ACT_RELU, d->e1, 1024, n, s);
	dfn_k_dw(d->e1, 1024, 16, 2, 0, W(ENC_ERB2_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 512, 64, 8, W(ENC_ERB2_PW), W(ENC_ERB2_B), 64, DFN_ACT_RELU, d->e2, 512, n, s);
	dfn_k_dw(d->e2, 512, 8, 1, 0, W(ENC_ERB3_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 512, 64, 8, W(ENC_ERB3_PW), W(ENC_ERB3_B), 64, DFN_ACT_RELU, d->e3, 512, n, s);
	dfn_k_conv_in(d->fspec, 192, 2, 96, W(ENC_DF0_DW), NULL, 64, DFN_ACT_NONE, d->t0, 6144, d->hop, n, s);
	dfn_k_pw(d->t0, 6144, 64, 96, W(ENC_DF0_PW), W(ENC_DF0_B), 64, DFN_ACT_RELU, c0, 5 * 6144, n, s);
	dfn_k_dw(c0, 5 * 6144, 96, 2, 0, W(ENC_DF1_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 3072, 64, 48, W(ENC_DF1_PW), W(ENC_DF1_B), 64, DFN_ACT_RELU, d->t1, 3072, n, s);
	dfn_k_transpose(d->t1, 64, 48, d->x, n, s);
	dfn_k_glinear(d->x, 3072, 32, 96, 16, W(ENC_DF_FC_EMB), DFN_ACT_RELU, d->emb, n, s);
	dfn_k_transpose(d->e3, 64, 8, d->v, n, s);
	dfn_k_add(d->v, d->emb, n * 512, s);
	dfn_k_glinear(d->v, 512, 16, 32, 16, W(ENC_EMB_IN), DFN_ACT_RELU, d->u, n, s);
	gru(d, d->u, DFN_T_ENC_GRU0_W, d->h_enc);
	dfn_k_glinear(d->h_enc, 256, 16, 16, 32, W(ENC_EMB_OUT), DFN_ACT_RELU, d->emb, n, s);
	dfn_k_lsnr(d->emb, W(ENC_LSNR_W), W(ENC_LSNR_B), d->lsnr, n, s);
}

/* Both decoders' head: a grouped linear of emb ([groups][gin][gout] at @p lin), ReLU, two GRU layers from @p
 * gru0. */
static void decoder_grus(struct dfn_gpu *d, int lin, int groups, int gin, int gout, int gru0, float *h0,
			 float *h1)
{
	dfn_k_glinear(d->emb, 512, groups, gin, gout, d->w[lin], DFN_ACT_RELU, d->u, d->n, d->s);
	gru(d, d->u, gru0, h0);
	gru(d, h0, gru0 + 3, h1); /* the second layer's w, r, b follow the first's */
}

/* The mask: GRUs, then up from 8 to 32 bands with the encoder's skip paths. */
static void erb_decode(struct dfn_gpu *d)
{
	int n = d->n;
	cudaStream_t s = d->s;
	decoder_grus(d, DFN_T_ERB_EMB_IN, 16, 32, 16, DFN_T_ERB_GRU0_W, d->h_erb0, d->h_erb1);
	dfn_k_glinear(d->h_erb1, 256, 16, 16, 32, W(ERB_EMB_OUT), DFN_ACT_RELU, d->v, n, s);
	dfn_k_transpose(d->v, 8, 64, d->x, n, s); /* [8][64] -> [64][8] */
	dfn_k_scale_add(d->e3, 8, W(ERB_CONV3P_W), W(ERB_CONV3P_B), d->x, n, s);
	dfn_k_dw(d->x, 512, 8, 1, 0, W(ERB_CONVT3_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 512, 64, 8, W(ERB_CONVT3_PW), W(ERB_CONVT3_B), 64, DFN_ACT_RELU, d->t1, 512, n, s);
	dfn_k_scale_add(d->e2, 8, W(ERB_CONV2P_W), W(ERB_CONV2P_B), d->t1, n, s);
	dfn_k_dw(d->t1, 512, 8, 2, 1, W(ERB_CONVT2_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 1024, 64, 16, W(ERB_CONVT2_PW), W(ERB_CONVT2_B), 64, DFN_ACT_RELU, d->t1, 1024, n, s);
	dfn_k_scale_add(d->e1, 16, W(ERB_CONV1P_W), W(ERB_CONV1P_B), d->t1, n, s);
	dfn_k_dw(d->t1, 1024, 16, 2, 1, W(ERB_CONVT1_DW), d->t0, n, s);
	dfn_k_pw(d->t0, 2048, 64, 32, W(ERB_CONVT1_PW), W(ERB_CONVT1_B), 64, DFN_ACT_RELU, d->t1, 2048, n, s);
	dfn_k_scale_add(d->e0, 32, W(ERB_CONV0P_W), W(ERB_CONV0P_B), d->t1, n, s);
	dfn_k_erb_out(d->t1, W(ERB_OUT_W), W(ERB_OUT_B), d->mask, n, s);
}

/* The deep filter's coefficients: GRUs and skip, and the convolution over the last five hops' c0. */
static void df_decode(struct dfn_gpu *d)
{
	int n = d->n;
	cudaStream_t s = d->s;
	decoder_grus(d, DFN_T_DF_EMB_IN, 8, 64, 32, DFN_T_DF_GRU0_W, d->h_df0, d->h_df1);
	dfn_k_glinear(d->emb, 512, 16, 32, 16, W(DF_SKIP), DFN_ACT_NONE, d->v, n, s);
	dfn_k_add(d->v, d->h_df1, n * 256, s);
	dfn_k_glinear(d->v, 256, 16, 16, 60, W(DF_OUT), DFN_ACT_TANH, d->coefs, n, s);
	dfn_k_df_convp(d->c0ring, W(DF_CONVP_DW), d->t0, d->hop, n, s);
	dfn_k_pw(d->t0, 960, 10, 96, W(DF_CONVP_PW), W(DF_CONVP_B), 10, DFN_ACT_RELU, d->t1, 960, n, s);
	dfn_k_coefs_add(d->coefs, d->t1, n, s);
}

/* Mark the end of a phase on the stream when profiling (@p ev non-NULL). */
static int mark(struct dfn_gpu *d, cudaEvent_t *ev, int i, struct gf_errbuf *eb)
{
	return ev ? CU_TRY(eb, cudaEventRecord(ev[i], d->s)) : 0;
}

/* The hop's copies and launches, with events between the phases of dfn_gpu_phases when @p ev is given. */
static int enqueue_work(struct dfn_gpu *d, cudaEvent_t *ev, struct gf_errbuf *eb)
{
	size_t bytes = (size_t)d->n * DFN_HOP * sizeof(float);
	int n = d->n;
	cudaStream_t s = d->s;
	GF_RET(mark(d, ev, 0, eb));
	CU_RET(eb, cudaMemcpyAsync(d->in, d->h_in, bytes, cudaMemcpyHostToDevice, s));
	CU_RET(eb, cudaMemcpyAsync(d->d_lim, d->h_lim, sizeof(float), cudaMemcpyHostToDevice, s));
	GF_RET(mark(d, ev, 1, eb));
	dfn_k_analysis(d->in, d->ana, d->d_win, d->frame, n, s);
	CUFFT_RET(eb, cufftExecR2C(d->fwd, d->frame, (cufftComplex *)d->fft));
	dfn_k_features((const cufftComplex *)d->fft, d->ring, d->d_band_off, d->alpha, d->mean, d->unit,
		       d->ferb, d->fspec, d->hop, n, s);
	GF_RET(mark(d, ev, 2, eb));
	encode(d);
	GF_RET(mark(d, ev, 3, eb));
	erb_decode(d);
	GF_RET(mark(d, ev, 4, eb));
	df_decode(d);
	GF_RET(mark(d, ev, 5, eb));
	dfn_k_spec_out(d->ring, d->d_bin_band, d->mask, d->coefs, d->beta, d->d_lim, (cufftComplex *)d->fft,
		       d->hop, n, s);
	CUFFT_RET(eb, cufftExecC2R(d->inv, (cufftComplex *)d->fft, d->frame));
	dfn_k_synthesis(d->frame, d->d_win, d->syn, d->out, n, s);
	CU_LAUNCHED(eb);
	GF_RET(mark(d, ev, 6, eb));
	CU_RET(eb, cudaMemcpyAsync(d->h_out, d->out, bytes, cudaMemcpyDeviceToHost, s));
	CU_RET(eb, cudaMemcpyAsync(d->h_lsnr, d->lsnr, n * sizeof(float), cudaMemcpyDeviceToHost, s));
	return mark(d, ev, 7, eb);
}

/* Queue the hop (its captured graph when there are graphs and no profiling events), then its event. */
static int enqueue_hop(struct dfn_gpu *d, cudaEvent_t *ev, struct gf_errbuf *eb)
{
	if (d->graphs && !ev)
		CU_RET(eb, cudaGraphLaunch(d->graph[d->hop % DFN_GPU_GRAPHS], d->s));
	else
		GF_RET(enqueue_work(d, ev, eb));
	CU_RET(eb, cudaEventRecord(d->done, d->s));
	d->hop++;
	d->pending = 1;
	d->pending_since = gf_now_ns();
	return 0;
}

extern "C" int dfn_gpu_submit(struct dfn_gpu *d, const float *in, struct gf_errbuf *eb)
{
	if (d->pending) {
		gf_errbuf_set(eb, "deepfilter (GPU): a hop is still in flight");
		return GF_E_BUSY;
	}
	memcpy(d->h_in, in, (size_t)d->n * DFN_HOP * sizeof(float));
	return enqueue_hop(d, NULL, eb);
}

extern "C" int dfn_gpu_profile(struct dfn_gpu *d, const float *in, float *out, struct dfn_gpu_phases *ph,
			       struct gf_errbuf *eb)
{
	cudaEvent_t ev[DFN_GPU_PHASES + 1] = {0};
	int err = d->pending ? GF_E_BUSY : 0;
	if (err)
		gf_errbuf_set(eb, "deepfilter (GPU): a hop is still in flight");
	for (int i = 0; !err && i <= DFN_GPU_PHASES; i++)
		err = CU_TRY(eb, cudaEventCreate(&ev[i]));
	if (!err) {
		memcpy(d->h_in, in, (size_t)d->n * DFN_HOP * sizeof(float));
		err = enqueue_hop(d, ev, eb);
	}
	if (!err)
		err = dfn_gpu_collect(d, out, NULL, 0, eb);
	for (int i = 0; !err && i < DFN_GPU_PHASES; i++)
		err = CU_TRY(eb, cudaEventElapsedTime(&ph->ms[i], ev[i], ev[i + 1]));
	for (int i = 0; i <= DFN_GPU_PHASES; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	return err;
}

extern "C" int dfn_gpu_collect(struct dfn_gpu *d, float *out, float *lsnr, uint64_t deadline_ns,
			       struct gf_errbuf *eb)
{
	if (!d->pending) {
		gf_errbuf_set(eb, "deepfilter (GPU): no hop submitted");
		return GF_E_INVAL;
	}
	uint64_t hung = d->pending_since + DFN_GPU_HOP_WAIT_NS;
	int err = gf_cu_wait_event_eb(d->done, deadline_ns && deadline_ns < hung ? deadline_ns : hung, eb);
	if (err == GF_E_TIMEOUT && gf_now_ns() < hung)
		return DFN_GPU_LATE;
	if (err)
		return err;
	d->pending = 0;
	memcpy(out, d->h_out, (size_t)d->n * DFN_HOP * sizeof(float));
	if (lsnr)
		memcpy(lsnr, d->h_lsnr, d->n * sizeof(float));
	return 0;
}

/* Capture the work of hop number @p k (modulo 15) into d->graph[k]. */
static int capture(struct dfn_gpu *d, int k, struct gf_errbuf *eb)
{
	uint64_t hop = d->hop;
	cudaGraph_t g = NULL;
	d->hop = (uint64_t)k;
	CU_RET(eb, cudaStreamBeginCapture(d->s, cudaStreamCaptureModeThreadLocal));
	int err = enqueue_work(d, NULL, eb);
	int end = CU_TRY(eb, cudaStreamEndCapture(d->s, &g)); /* ends the capture even after a failure */
	d->hop = hop;
	if (!err)
		err = end;
	if (!err)
		err = CU_TRY(eb, cudaGraphInstantiate(&d->graph[k], g, 0));
	if (g)
		cudaGraphDestroy(g);
	return err;
}

extern "C" int dfn_gpu_use_graphs(struct dfn_gpu *d, struct gf_errbuf *eb)
{
	if (d->pending) {
		gf_errbuf_set(eb, "deepfilter (GPU): a hop is still in flight");
		return GF_E_BUSY;
	}
	for (int k = 0; k < DFN_GPU_GRAPHS; k++)
		if (!d->graph[k])
			GF_RET(capture(d, k, eb));
	d->graphs = 1;
	return 0;
}

extern "C" int dfn_gpu_process(struct dfn_gpu *d, const float *in, float *out, float *lsnr,
			       struct gf_errbuf *eb)
{
	int err = dfn_gpu_submit(d, in, eb);
	return err ? err : dfn_gpu_collect(d, out, lsnr, 0, eb);
}

extern "C" void dfn_gpu_set_atten_lim(struct dfn_gpu *d, float db)
{
	d->lim = atten_gain(db);
	/* pinned: the next hop's copy reads it; no hop in flight reads it now (dfn_gpu.h's @pre) */
	*(volatile float *)d->h_lim = d->lim;
}

extern "C" int dfn_gpu_reset(struct dfn_gpu *d, struct gf_errbuf *eb)
{
	if (d->pending && gf_cu_stream_idle_by(d->s, gf_now_ns() + DFN_GPU_RESET_WAIT_NS) != 0) {
		gf_errbuf_set(eb, "deepfilter (GPU): a hop still in flight %.0f ms after the reset began",
			      1e-6 * DFN_GPU_RESET_WAIT_NS);
		return GF_E_TIMEOUT;
	}
	d->pending = 0;
	size_t n = (size_t)d->n;
#define DFN_GPU_ZERO_(name, size) CU_RET(eb, cudaMemsetAsync(d->name, 0, n *(size) * sizeof(float), d->s));
	DFN_GPU_BUFS(DFN_GPU_ZERO_)
#undef DFN_GPU_ZERO_
	GF_RET(set_norm(d, eb));
	CU_RET(eb, cudaEventRecord(d->done, d->s));
	GF_RET(gf_cu_wait_event_eb(d->done, gf_now_ns() + DFN_GPU_RESET_WAIT_NS, eb));
	d->hop = 0; /* the graphs' hop % 15 starts again with the state */
	return 0;
}
