/*
 * DeepFilterNet3 on the CPU, channel by channel over batched state: the hop
 * as libDF's DfTract::process runs it (tract.rs), with its rules for silent
 * input, the stages the local SNR selects and the attenuation limit.
 */
#include "dfn.h"

#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dfn_net.h"
#include "fftwf_lock.h"
#include "dfn_spectral.h"

/* One channel's state beside its networks': STFT memories, normalisation, the last five spectra. */
struct dfn_chan {
	float ana_mem[DFN_HOP], syn_mem[DFN_HOP];
	float mean_norm[DFN_NB_ERB], unit_norm[DFN_NB_DF];
	float spec[DFN_DF_ORDER][2 * DFN_FREQS]; /* spectrum of hop h in slot h % 5 */
	uint64_t hop;				 /* spectra analysed (the networks count their own) */
	int quiet;				 /* libDF's skip counter */
	struct dfn_net_state net;
};

struct dfn_cpu {
	const struct dfn_model *m;
	int n;
	struct dfn_params p;
	float lim; /* the attenuation limit as a gain; 0 for none */
	struct dfn_consts k;
	struct dfn_chan *ch;
	struct dfn_net_scratch *s;
	struct dfn_net_out *o;
	float *frame, *spec, *feat_erb, *feat_spec; /* one channel's hop */
	float *clean;				    /* its input with NaN and Inf made 0 */
	fftwf_plan fwd, inv;
};

void dfn_params_default(struct dfn_params *p)
{
	p->atten_lim_db = 100.0f;
	p->post_filter_beta = 0.0f;
	p->min_db_thresh = DFN_MIN_DB_THRESH;
	p->max_db_erb_thresh = DFN_MAX_DB_ERB_THRESH;
	p->max_db_df_thresh = DFN_MAX_DB_DF_THRESH;
}

static void chan_init(struct dfn_chan *c)
{
	memset(c, 0, sizeof *c);
	dfn_norm_init(c->mean_norm, c->unit_norm);
}

int dfn_cpu_new(const struct dfn_model *m, int channels, const struct dfn_params *p, struct dfn_cpu **out,
		struct gf_errbuf *eb)
{
	if (!m || channels < 1 || !p) {
		gf_errbuf_set(eb, "deepfilter: need a model and at least one channel");
		return GF_E_INVAL;
	}
	if (!(p->post_filter_beta >= 0.0f) || !isfinite(p->atten_lim_db)) {
		gf_errbuf_set(eb,
			      "deepfilter: post-filter beta must be >= 0 and the attenuation limit finite");
		return GF_E_INVAL;
	}
	struct dfn_cpu *d = calloc(1, sizeof *d);
	int err = GF_E_NOMEM;
	if (!d)
		return err;
	d->m = m;
	d->n = channels;
	d->p = *p;
	d->lim = dfn_atten_gain(p->atten_lim_db);
	dfn_consts_init(&d->k);
	d->ch = malloc((size_t)channels * sizeof *d->ch);
	d->s = malloc(sizeof *d->s);
	d->o = malloc(sizeof *d->o);
	d->frame = fftwf_malloc(DFN_WIN * sizeof(float));
	d->spec = fftwf_malloc(2 * DFN_FREQS * sizeof(float));
	d->feat_erb = malloc(DFN_NB_ERB * sizeof(float));
	d->feat_spec = malloc(2 * DFN_NB_DF * sizeof(float));
	d->clean = malloc(DFN_HOP * sizeof(float));
	if (!d->ch || !d->s || !d->o || !d->frame || !d->spec || !d->feat_erb || !d->feat_spec || !d->clean)
		goto fail;
	for (int i = 0; i < channels; i++)
		chan_init(&d->ch[i]);
	gf_fftwf_planner_lock(); /* one planner for the process, not thread-safe */
	d->fwd = fftwf_plan_dft_r2c_1d(DFN_WIN, d->frame, (fftwf_complex *)d->spec, FFTW_ESTIMATE);
	d->inv = fftwf_plan_dft_c2r_1d(DFN_WIN, (fftwf_complex *)d->spec, d->frame, FFTW_ESTIMATE);
	gf_fftwf_planner_unlock();
	if (!d->fwd || !d->inv) {
		err = GF_E_FFT;
		gf_errbuf_set(eb, "deepfilter: FFTW could not plan a %d-point transform", DFN_WIN);
		goto fail;
	}
	*out = d;
	return 0;
fail:
	dfn_cpu_free(d);
	return err;
}

void dfn_cpu_set_atten_lim(struct dfn_cpu *d, float db)
{
	d->p.atten_lim_db = db;
	d->lim = dfn_atten_gain(db);
}

void dfn_cpu_reset(struct dfn_cpu *d)
{
	for (int i = 0; i < d->n; i++)
		chan_init(&d->ch[i]);
}

void dfn_cpu_free(struct dfn_cpu *d)
{
	if (!d)
		return;
	gf_fftwf_planner_lock();
	if (d->fwd)
		fftwf_destroy_plan(d->fwd);
	if (d->inv)
		fftwf_destroy_plan(d->inv);
	gf_fftwf_planner_unlock();
	fftwf_free(d->frame);
	fftwf_free(d->spec);
	free(d->feat_erb);
	free(d->feat_spec);
	free(d->clean);
	free(d->ch);
	free(d->s);
	free(d->o);
	free(d);
}

/*
 * NaN or Inf in the input counts as silence (0): in the STFT's memory, the
 * normalisation means and the GRUs it would stay for good, and the channel
 * would put out NaN from then on.
 */
static const float *finite_input(struct dfn_cpu *d, const float *in)
{
	for (int i = 0; i < DFN_HOP; i++)
		if (!isfinite(in[i])) {
			for (int k = 0; k < DFN_HOP; k++)
				d->clean[k] = isfinite(in[k]) ? in[k] : 0.0f;
			return d->clean;
		}
	return in;
}

/* libDF skips a hop (output zero, no state advanced) after more than five in a row of mean square < 1e-7. */
static int silent(struct dfn_chan *c, const float *in)
{
	float e = 0.0f;
	for (int i = 0; i < DFN_HOP; i++)
		e += in[i] * in[i];
	c->quiet = e / DFN_HOP < 1e-7f ? c->quiet + 1 : 0;
	return c->quiet > 5;
}

/* Run the networks the local SNR calls for and build the enhanced spectrum of hop t-2 into d->spec. */
static void enhance(struct dfn_cpu *d, struct dfn_chan *c, const float *spec_now, float *lsnr)
{
	uint64_t h = c->hop - 1; /* this hop's spectrum */
	dfn_features(&d->k, spec_now, c->mean_norm, c->unit_norm, d->feat_erb, d->feat_spec);
	dfn_net_encode(d->m, &c->net, d->feat_erb, d->feat_spec, d->s, d->o);
	float l = d->o->lsnr;
	int noise = l < d->p.min_db_thresh, clean = !noise && l > d->p.max_db_erb_thresh;
	int gains = !noise && !clean, df = gains && !(l > d->p.max_db_df_thresh);
	const float *delayed = c->spec[(h + DFN_DF_ORDER - DFN_DF_LOOKAHEAD) % DFN_DF_ORDER];
	memcpy(d->spec, delayed, sizeof c->spec[0]);
	if (gains)
		dfn_net_erb_decode(d->m, &c->net, d->s, d->o);
	else if (noise)
		memset(d->o->mask, 0, sizeof d->o->mask);
	if (gains || noise) {
		dfn_apply_mask(&d->k, d->o->mask, d->spec);
		c->quiet = 0; /* libDF restarts its count on every masked hop, silent or not */
	} else {
		c->quiet++;
	}
	if (df) {
		const float *taps[DFN_DF_ORDER];
		for (int t = 0; t < DFN_DF_ORDER; t++) /* tap 0 the oldest, hop t-4 */
			taps[t] = c->spec[(h + 1 + t) % DFN_DF_ORDER];
		dfn_net_df_decode(d->m, &c->net, d->s, d->o);
		dfn_deep_filter(taps, d->o->coefs, d->spec);
	}
	dfn_net_commit(&c->net, d->feat_erb, d->feat_spec);
	if (gains && d->p.post_filter_beta > 0.0f)
		dfn_post_filter(delayed, d->spec, d->p.post_filter_beta);
	if (d->lim > 0.0f)
		for (int i = 0; i < 2 * DFN_FREQS; i++)
			d->spec[i] = d->spec[i] * (1.0f - d->lim) + d->lim * delayed[i];
	*lsnr = l;
}

static void process_chan(struct dfn_cpu *d, struct dfn_chan *c, const float *in, float *out, float *lsnr)
{
	in = finite_input(d, in);
	if (silent(c, in)) {
		memset(out, 0, DFN_HOP * sizeof *out);
		*lsnr = -15.0f;
		return;
	}
	float *now = c->spec[c->hop++ % DFN_DF_ORDER];
	dfn_analysis_frame(&d->k, in, c->ana_mem, d->frame);
	fftwf_execute(d->fwd);
	for (int i = 0; i < 2 * DFN_FREQS; i++)
		now[i] = d->spec[i] * (1.0f / DFN_WIN);
	if (d->lim == 1.0f) { /* a limit under 0.01 dB: libDF passes the input through */
		memcpy(out, in, DFN_HOP * sizeof *out);
		*lsnr = 35.0f;
		return;
	}
	enhance(d, c, now, lsnr);
	d->spec[1] = 0.0f; /* the inverse real FFT ignores the imaginary parts of DC and Nyquist */
	d->spec[2 * DFN_FREQS - 1] = 0.0f;
	fftwf_execute(d->inv);
	dfn_synthesis(&d->k, d->frame, c->syn_mem, out);
}

void dfn_cpu_process(struct dfn_cpu *d, const float *in, float *out, float *lsnr)
{
	for (int i = 0; i < d->n; i++) {
		float l;
		process_chan(d, &d->ch[i], in + (size_t)i * DFN_HOP, out + (size_t)i * DFN_HOP, &l);
		if (lsnr)
			lsnr[i] = l;
	}
}
