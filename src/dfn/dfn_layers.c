/*
 * DeepFilterNet3's layers for one channel and one hop, in plain loops: the
 * arithmetic every faster path is checked against.
 */
#include "dfn_layers.h"

#include <math.h>

static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

void dfn_activate(float *x, int n, enum dfn_act act)
{
	for (int i = 0; i < n; i++) {
		if (act == DFN_ACT_RELU)
			x[i] = x[i] > 0.0f ? x[i] : 0.0f;
		else if (act == DFN_ACT_TANH)
			x[i] = tanhf(x[i]);
		else if (act == DFN_ACT_SIGMOID)
			x[i] = sigmoidf(x[i]);
	}
}

void dfn_conv_in(const float *const frames[3], int cin, int f, const float *w, const float *b, int cout,
		 float *out)
{
	for (int o = 0; o < cout; o++) {
		int ci = o * cin / cout;
		const float *wo = w + o * 9;
		for (int j = 0; j < f; j++) {
			float acc = b ? b[o] : 0.0f;
			for (int kt = 0; kt < 3; kt++) {
				const float *x = frames[kt] + ci * f;
				for (int kf = 0; kf < 3; kf++) {
					int jj = j + kf - 1;
					if (jj >= 0 && jj < f)
						acc += wo[kt * 3 + kf] * x[jj];
				}
			}
			out[o * f + j] = acc;
		}
	}
}

void dfn_conv_dw(const float *in, int ch, int fin, int stride, const float *w, float *out)
{
	int fout = (fin - 1) / stride + 1;
	for (int c = 0; c < ch; c++) {
		const float *x = in + c * fin;
		for (int j = 0; j < fout; j++) {
			float acc = 0.0f;
			for (int k = 0; k < 3; k++) {
				int jj = j * stride + k - 1;
				if (jj >= 0 && jj < fin)
					acc += w[c * 3 + k] * x[jj];
			}
			out[c * fout + j] = acc;
		}
	}
}

void dfn_convt_dw(const float *in, int ch, int fin, const float *w, float *out)
{
	int fout = 2 * fin;
	for (int c = 0; c < ch; c++) {
		const float *x = in + c * fin;
		for (int o = 0; o < fout; o++) {
			/* o = 2 i + k - 1: the inputs that land on output o */
			float acc = 0.0f;
			for (int k = 0; k < 3; k++) {
				int t = o + 1 - k;
				if (t >= 0 && (t & 1) == 0 && t / 2 < fin)
					acc += w[c * 3 + k] * x[t / 2];
			}
			out[c * fout + o] = acc;
		}
	}
}

void dfn_conv_pw(const float *in, int cin, int f, const float *w, const float *b, int cout, enum dfn_act act,
		 float *out)
{
	for (int o = 0; o < cout; o++) {
		float *y = out + o * f;
		for (int j = 0; j < f; j++)
			y[j] = b ? b[o] : 0.0f;
		for (int i = 0; i < cin; i++) {
			float wi = w[o * cin + i];
			const float *x = in + i * f;
			for (int j = 0; j < f; j++)
				y[j] += wi * x[j];
		}
		dfn_activate(y, f, act);
	}
}

void dfn_conv_scale(const float *in, int ch, int f, const float *w, const float *b, float *out)
{
	for (int c = 0; c < ch; c++)
		for (int j = 0; j < f; j++) {
			float v = w[c] * in[c * f + j] + b[c];
			out[c * f + j] = v > 0.0f ? v : 0.0f;
		}
}

void dfn_glinear(const float *in, int groups, int gin, int gout, const float *w, enum dfn_act act, float *out)
{
	for (int g = 0; g < groups; g++) {
		const float *x = in + g * gin;
		const float *wg = w + (long)g * gin * gout;
		float *y = out + g * gout;
		for (int h = 0; h < gout; h++)
			y[h] = 0.0f;
		for (int i = 0; i < gin; i++)
			for (int h = 0; h < gout; h++)
				y[h] += x[i] * wg[i * gout + h];
	}
	dfn_activate(out, groups * gout, act);
}

/*
 * Eight running sums, added pairwise at the end: independent sums the compiler
 * can keep in one vector register (a single sum is a chain it may not reorder).
 * @pre n is a multiple of 8 (the GRU's 256 are).
 */
static float dot(const float *a, const float *b, int n)
{
	float acc[8] = {0};
	for (int i = 0; i < n; i += 8)
		for (int k = 0; k < 8; k++)
			acc[k] += a[i + k] * b[i + k];
	return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

void dfn_gru_step(const float *x, int nin, const float *w, const float *r, const float *b, float *h)
{
	enum { H = DFN_GRU_H };
	float z[H], rg[H], n[H];
	for (int j = 0; j < H; j++) {
		float xz = dot(w + (long)j * nin, x, nin) + b[j];
		float xr = dot(w + (long)(H + j) * nin, x, nin) + b[H + j];
		float hz = dot(r + (long)j * H, h, H) + b[3 * H + j];
		float hr = dot(r + (long)(H + j) * H, h, H) + b[4 * H + j];
		z[j] = sigmoidf(xz + hz);
		rg[j] = sigmoidf(xr + hr);
	}
	for (int j = 0; j < H; j++) {
		float xn = dot(w + (long)(2 * H + j) * nin, x, nin) + b[2 * H + j];
		float hn = dot(r + (long)(2 * H + j) * H, h, H) + b[5 * H + j];
		n[j] = tanhf(xn + rg[j] * hn);
	}
	for (int j = 0; j < H; j++)
		h[j] = (1.0f - z[j]) * n[j] + z[j] * h[j];
}
