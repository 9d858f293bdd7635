/*
 * The spectral stages around DeepFilterNet3's networks, following libDF
 * (libDF/src/lib.rs and tract.rs of DeepFilterNet v0.5.6) operation by
 * operation, in single precision as it computes.
 */
#include "dfn_spectral.h"

#include <math.h>

static float freq2erb(float hz)
{
	return 9.265f * log1pf(hz / (24.7f * 9.265f));
}

static float erb2freq(float erb)
{
	return 24.7f * 9.265f * (expf(erb / 9.265f) - 1.0f);
}

static void erb_widths(int *w)
{
	const int sr = 48000, min_nb = 2;
	float freq_width = (float)sr / DFN_WIN, erb_low = freq2erb(0.0f), erb_high = freq2erb(sr / 2);
	float step = (erb_high - erb_low) / DFN_NB_ERB;
	int prev = 0, over = 0, sum = 0;
	for (int i = 1; i <= DFN_NB_ERB; i++) {
		int fb = (int)roundf(erb2freq(erb_low + i * step) / freq_width);
		int nb = fb - prev - over;
		if (nb < min_nb) {
			over = min_nb - nb;
			nb = min_nb;
		} else {
			over = 0;
		}
		w[i - 1] = nb;
		prev = fb;
	}
	w[DFN_NB_ERB - 1] += 1;
	for (int i = 0; i < DFN_NB_ERB; i++)
		sum += w[i];
	if (sum > DFN_FREQS)
		w[DFN_NB_ERB - 1] -= sum - DFN_FREQS;
}

/* calc_norm_alpha: exp(-hop/sr/tau), rounded to the fewest decimals that keep it below 1. */
static float norm_alpha(void)
{
	float alpha = expf(-((float)DFN_HOP / 48000.0f) / 1.0f), a = 1.0f;
	for (int prec = 3; a >= 1.0f; prec++) {
		float p = powf(10.0f, (float)prec);
		a = roundf(alpha * p) / p;
	}
	return a;
}

void dfn_consts_init(struct dfn_consts *k)
{
	for (int i = 0; i < DFN_WIN; i++) {
		double s = sin(0.5 * M_PI * (i + 0.5) / (DFN_WIN / 2));
		k->window[i] = (float)sin(0.5 * M_PI * s * s);
	}
	erb_widths(k->erb_width);
	k->alpha = norm_alpha();
	dfn_norm_init(k->mean_init, k->unit_init);
}

void dfn_norm_init(float *mean_norm, float *unit_norm)
{
	for (int i = 0; i < DFN_NB_ERB; i++)
		mean_norm[i] = -60.0f + i * ((-90.0f - -60.0f) / (DFN_NB_ERB - 1));
	for (int i = 0; i < DFN_NB_DF; i++)
		unit_norm[i] = 0.001f + i * ((0.0001f - 0.001f) / (DFN_NB_DF - 1));
}

void dfn_analysis_frame(const struct dfn_consts *k, const float *in, float *mem, float *frame)
{
	for (int i = 0; i < DFN_HOP; i++) {
		frame[i] = mem[i] * k->window[i];
		frame[DFN_HOP + i] = in[i] * k->window[DFN_HOP + i];
		mem[i] = in[i];
	}
}

void dfn_features(const struct dfn_consts *k, const float *spec, float *mean_norm, float *unit_norm,
		  float *feat_erb, float *feat_spec)
{
	float a = k->alpha;
	for (int b = 0, bin = 0; b < DFN_NB_ERB; b++) {
		float kb = 1.0f / k->erb_width[b], e = 0.0f;
		for (int j = 0; j < k->erb_width[b]; j++, bin++)
			e += (spec[2 * bin] * spec[2 * bin] + spec[2 * bin + 1] * spec[2 * bin + 1]) * kb;
		float x = log10f(e + 1e-10f) * 10.0f;
		mean_norm[b] = x * (1.0f - a) + mean_norm[b] * a;
		feat_erb[b] = (x - mean_norm[b]) / 40.0f;
	}
	for (int f = 0; f < DFN_NB_DF; f++) {
		float re = spec[2 * f], im = spec[2 * f + 1];
		unit_norm[f] = hypotf(re, im) * (1.0f - a) + unit_norm[f] * a;
		float s = sqrtf(unit_norm[f]);
		feat_spec[f] = re / s;
		feat_spec[DFN_NB_DF + f] = im / s;
	}
}

void dfn_apply_mask(const struct dfn_consts *k, const float *gains, float *spec)
{
	for (int b = 0, bin = 0; b < DFN_NB_ERB; b++)
		for (int j = 0; j < k->erb_width[b]; j++, bin++) {
			spec[2 * bin] *= gains[b];
			spec[2 * bin + 1] *= gains[b];
		}
}

void dfn_deep_filter(const float *const spec[DFN_DF_ORDER], const float *coefs, float *out)
{
	for (int f = 0; f < DFN_NB_DF; f++) {
		float re = 0.0f, im = 0.0f;
		for (int t = 0; t < DFN_DF_ORDER; t++) {
			float sr = spec[t][2 * f], si = spec[t][2 * f + 1];
			float cr = coefs[(f * DFN_DF_ORDER + t) * 2],
			      ci = coefs[(f * DFN_DF_ORDER + t) * 2 + 1];
			re += sr * cr - si * ci;
			im += sr * ci + si * cr;
		}
		out[2 * f] = re;
		out[2 * f + 1] = im;
	}
}

void dfn_post_filter(const float *noisy, float *enh, float beta)
{
	const float eps = 1e-12f, pi = 3.14159265358979323846f;
	for (int f = 0; f < DFN_FREQS - DFN_FREQS % 4; f++) {
		float n = hypotf(noisy[2 * f], noisy[2 * f + 1]), e = hypotf(enh[2 * f], enh[2 * f + 1]);
		float g = fmaxf(fminf(e / (n + eps), 1.0f), eps);
		float gs = g * sinf(g * pi / 2.0f), q = g / gs;
		float pf = ((beta + 1.0f) * g / (1.0f + beta * q * q)) / g;
		enh[2 * f] *= pf;
		enh[2 * f + 1] *= pf;
	}
}

void dfn_synthesis(const struct dfn_consts *k, float *frame, float *mem, float *out)
{
	for (int i = 0; i < DFN_HOP; i++) {
		out[i] = frame[i] * k->window[i] + mem[i];
		mem[i] = frame[DFN_HOP + i] * k->window[DFN_HOP + i];
	}
}
