/*
 * DeepFilterNet3's forward, batched over channels: one thread per output
 * value for the convolutions, grouped linears and spectral stages (each a
 * short loop, as the CPU forward's), a shared-memory tiled GEMM for the GRUs'
 * products, which are most of the arithmetic.
 */
#include "dfn_kernels.cuh"

enum { T = 256 }; /* threads per block of the elementwise kernels */

static unsigned blocks(long count)
{
	return (unsigned)((count + T - 1) / T);
}

__device__ static float act_apply(float x, int act)
{
	if (act == DFN_ACT_RELU)
		return x > 0.0f ? x : 0.0f;
	if (act == DFN_ACT_TANH)
		return tanhf(x);
	if (act == DFN_ACT_SIGMOID)
		return 1.0f / (1.0f + expf(-x));
	return x;
}

__global__ static void k_analysis(const float *in, float *ana, const float *win, float *frame, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 480)
		return;
	long c = idx / 480;
	int i = (int)(idx % 480);
	float x = isfinite(in[idx]) ? in[idx] : 0.0f; /* NaN and Inf count as silence (dfn.h) */
	frame[c * 960 + i] = ana[idx] * win[i];
	frame[c * 960 + 480 + i] = x * win[480 + i];
	ana[idx] = x;
}

void dfn_k_analysis(const float *d_in, float *d_ana, const float *d_win, float *d_frame, int n, cudaStream_t s)
{
	k_analysis<<<blocks((long)n * 480), T, 0, s>>>(d_in, d_ana, d_win, d_frame, n);
}

/* One block per channel: the scaled spectrum into the ring, then the ERB and complex features. */
__global__ static void k_features(const cufftComplex *fft, float *ring, const int *band_off, float alpha,
				  float *mean, float *unit, float *ferb, float *fspec, uint64_t hop)
{
	long c = blockIdx.x;
	float *now = ring + (c * 5 + hop % 5) * 962;
	for (int j = threadIdx.x; j < 481; j += blockDim.x) {
		cufftComplex v = fft[c * 481 + j];
		now[2 * j] = v.x * (1.0f / 960);
		now[2 * j + 1] = v.y * (1.0f / 960);
	}
	__syncthreads();
	int t = threadIdx.x, slot = (int)(hop % 3);
	if (t < 32) {
		int w = band_off[t + 1] - band_off[t];
		float kb = 1.0f / w, e = 0.0f;
		for (int bin = band_off[t]; bin < band_off[t + 1]; bin++)
			e += (now[2 * bin] * now[2 * bin] + now[2 * bin + 1] * now[2 * bin + 1]) * kb;
		float x = log10f(e + 1e-10f) * 10.0f;
		float m = x * (1.0f - alpha) + mean[c * 32 + t] * alpha;
		mean[c * 32 + t] = m;
		ferb[(c * 3 + slot) * 32 + t] = (x - m) / 40.0f;
	} else if (t >= 32 && t < 32 + 96) {
		int f = t - 32;
		float re = now[2 * f], im = now[2 * f + 1];
		float u = hypotf(re, im) * (1.0f - alpha) + unit[c * 96 + f] * alpha;
		unit[c * 96 + f] = u;
		float sq = sqrtf(u);
		fspec[(c * 3 + slot) * 192 + f] = re / sq;
		fspec[(c * 3 + slot) * 192 + 96 + f] = im / sq;
	}
}

void dfn_k_features(const cufftComplex *d_fft, float *d_ring, const int *d_band_off, float alpha, float *d_mean,
		    float *d_unit, float *d_ferb, float *d_fspec, uint64_t hop, int n, cudaStream_t s)
{
	k_features<<<n, 128, 0, s>>>(d_fft, d_ring, d_band_off, alpha, d_mean, d_unit, d_ferb, d_fspec, hop);
}

__global__ static void k_conv_in(const float *ring, int fstride, int cin, int f, const float *w, const float *b,
				 int cout, int act, float *out, int ostride, uint64_t hop, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * cout * f)
		return;
	long c = idx / (cout * f);
	int o = (int)(idx / f % cout), j = (int)(idx % f), ci = o * cin / cout;
	float acc = b ? b[o] : 0.0f;
	for (int kt = 0; kt < 3; kt++) {
		const float *x = ring + (c * 3 + (hop + 1 + kt) % 3) * fstride + ci * f; /* kt 0: hop t-2 */
		for (int kf = 0; kf < 3; kf++) {
			int jj = j + kf - 1;
			if (jj >= 0 && jj < f)
				acc += w[o * 9 + kt * 3 + kf] * x[jj];
		}
	}
	out[c * ostride + (long)o * f + j] = act_apply(acc, act);
}

void dfn_k_conv_in(const float *d_ring, int fstride, int cin, int f, const float *w, const float *b, int cout,
		   enum dfn_act act, float *d_out, int ostride, uint64_t hop, int n, cudaStream_t s)
{
	k_conv_in<<<blocks((long)n * cout * f), T, 0, s>>>(d_ring, fstride, cin, f, w, b, cout, act, d_out, ostride,
							   hop, n);
}

__global__ static void k_dw(const float *in, int istride, int fin, int stride, int transposed, const float *w,
			    float *out, int n)
{
	int fout = transposed ? 2 * fin : (fin - 1) / stride + 1;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 64 * fout)
		return;
	long cc = idx / fout; /* channel * 64 + conv channel */
	int j = (int)(idx % fout), ch = (int)(cc % 64);
	const float *x = in + cc / 64 * istride + (long)ch * fin;
	float acc = 0.0f;
	for (int k = 0; k < 3; k++) {
		if (transposed) {
			int t = j + 1 - k;
			if (t >= 0 && (t & 1) == 0 && t / 2 < fin)
				acc += w[ch * 3 + k] * x[t / 2];
		} else {
			int jj = j * stride + k - 1;
			if (jj >= 0 && jj < fin)
				acc += w[ch * 3 + k] * x[jj];
		}
	}
	out[idx] = acc;
}

void dfn_k_dw(const float *d_in, int istride, int fin, int stride, int transposed, const float *w, float *d_out,
	      int n, cudaStream_t s)
{
	int fout = transposed ? 2 * fin : (fin - 1) / stride + 1;
	k_dw<<<blocks((long)n * 64 * fout), T, 0, s>>>(d_in, istride, fin, stride, transposed, w, d_out, n);
}

__global__ static void k_pw(const float *in, int istride, int cin, int f, const float *w, const float *b,
			    int cout, int act, float *out, int ostride, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * cout * f)
		return;
	long c = idx / (cout * f);
	int o = (int)(idx / f % cout), j = (int)(idx % f);
	const float *x = in + c * istride + j;
	float acc = b ? b[o] : 0.0f;
	for (int i = 0; i < cin; i++)
		acc += w[o * cin + i] * x[(long)i * f];
	out[c * ostride + (long)o * f + j] = act_apply(acc, act);
}

void dfn_k_pw(const float *d_in, int istride, int cin, int f, const float *w, const float *b, int cout,
	      enum dfn_act act, float *d_out, int ostride, int n, cudaStream_t s)
{
	k_pw<<<blocks((long)n * cout * f), T, 0, s>>>(d_in, istride, cin, f, w, b, cout, act, d_out, ostride, n);
}

__global__ static void k_transpose(const float *in, int ch, int f, float *out, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * ch * f)
		return;
	long c = idx / (ch * f);
	int r = (int)(idx % (ch * f)), k = r / f, j = r % f;
	out[c * ch * f + (long)j * ch + k] = in[idx];
}

void dfn_k_transpose(const float *d_in, int ch, int f, float *d_out, int n, cudaStream_t s)
{
	k_transpose<<<blocks((long)n * ch * f), T, 0, s>>>(d_in, ch, f, d_out, n);
}

__global__ static void k_glinear(const float *in, int istride, int groups, int gin, int gout, const float *w,
				 int act, float *out, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	int width = groups * gout;
	if (idx >= (long)n * width)
		return;
	long c = idx / width;
	int r = (int)(idx % width), g = r / gout, h = r % gout;
	const float *x = in + c * istride + g * gin;
	const float *wg = w + (long)g * gin * gout + h;
	float acc = 0.0f;
	for (int i = 0; i < gin; i++)
		acc += x[i] * wg[i * gout];
	out[idx] = act_apply(acc, act);
}

void dfn_k_glinear(const float *d_in, int istride, int groups, int gin, int gout, const float *w,
		   enum dfn_act act, float *d_out, int n, cudaStream_t s)
{
	k_glinear<<<blocks((long)n * groups * gout), T, 0, s>>>(d_in, istride, groups, gin, gout, w, act, d_out, n);
}

__global__ static void k_add(float *y, const float *x, long count)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx < count)
		y[idx] += x[idx];
}

void dfn_k_add(float *d_y, const float *d_x, int count, cudaStream_t s)
{
	k_add<<<blocks(count), T, 0, s>>>(d_y, d_x, count);
}

/*
 * C = A W^T + b, tiled 64 (channels) x 64 (outputs) per block, 16 deep,
 * 256 threads each holding a 4 x 4 block of C in registers.
 */
enum { BM = 64, BN = 64, BK = 16 };

__global__ static void __launch_bounds__(256) k_gemm_nt(const float *a, const float *w, const float *b, int kdim,
							 int mdim, float *c, int n)
{
	__shared__ float s_a[BK][BM + 4], s_w[BK][BN + 4];
	int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	long row0 = (long)blockIdx.y * BM;
	int col0 = blockIdx.x * BN;
	float acc[4][4] = {{0}};
	for (int k0 = 0; k0 < kdim; k0 += BK) {
		for (int l = threadIdx.x; l < BM * BK; l += 256) {
			int r = l / BK, k = l % BK;
			long row = row0 + r;
			s_a[k][r] = row < n && k0 + k < kdim ? a[row * kdim + k0 + k] : 0.0f;
			int col = col0 + r;
			s_w[k][r] = col < mdim && k0 + k < kdim ? w[(long)col * kdim + k0 + k] : 0.0f;
		}
		__syncthreads();
		for (int k = 0; k < BK; k++) {
			float av[4], wv[4];
			for (int i = 0; i < 4; i++) {
				av[i] = s_a[k][ty * 4 + i];
				wv[i] = s_w[k][tx * 4 + i];
			}
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += av[i] * wv[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++) {
		long row = row0 + ty * 4 + i;
		for (int j = 0; j < 4; j++) {
			int col = col0 + tx * 4 + j;
			if (row < n && col < mdim)
				c[row * mdim + col] = acc[i][j] + b[col];
		}
	}
}

void dfn_k_gemm_nt(const float *d_a, const float *w, const float *b, int kdim, int mdim, float *d_c, int n,
		   cudaStream_t s)
{
	dim3 grid((mdim + BN - 1) / BN, (n + BM - 1) / BM);
	k_gemm_nt<<<grid, 256, 0, s>>>(d_a, w, b, kdim, mdim, d_c, n);
}

__global__ static void k_gru_gates(const float *gx, const float *gh, float *h, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 256)
		return;
	long c = idx / 256;
	int j = (int)(idx % 256);
	const float *x = gx + c * 768, *r = gh + c * 768;
	float z = 1.0f / (1.0f + expf(-(x[j] + r[j])));
	float rg = 1.0f / (1.0f + expf(-(x[256 + j] + r[256 + j])));
	float nn = tanhf(x[512 + j] + rg * r[512 + j]);
	h[idx] = (1.0f - z) * nn + z * h[idx];
}

void dfn_k_gru_gates(const float *d_gx, const float *d_gh, float *d_h, int n, cudaStream_t s)
{
	k_gru_gates<<<blocks((long)n * 256), T, 0, s>>>(d_gx, d_gh, d_h, n);
}

__global__ static void k_lsnr(const float *emb, const float *w, const float *b, float *lsnr, int n)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= n)
		return;
	float l = b[0];
	for (int i = 0; i < 512; i++)
		l += emb[(long)c * 512 + i] * w[i];
	lsnr[c] = 1.0f / (1.0f + expf(-l)) * 50.0f - 15.0f;
}

void dfn_k_lsnr(const float *d_emb, const float *w, const float *b, float *d_lsnr, int n, cudaStream_t s)
{
	k_lsnr<<<blocks(n), T, 0, s>>>(d_emb, w, b, d_lsnr, n);
}

__global__ static void k_scale_add(const float *e, int f, const float *w, const float *b, float *d, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 64 * f)
		return;
	int ch = (int)(idx / f % 64);
	float v = w[ch] * e[idx] + b[ch];
	d[idx] += v > 0.0f ? v : 0.0f;
}

void dfn_k_scale_add(const float *d_e, int f, const float *w, const float *b, float *d_d, int n, cudaStream_t s)
{
	k_scale_add<<<blocks((long)n * 64 * f), T, 0, s>>>(d_e, f, w, b, d_d, n);
}

__global__ static void k_erb_out(const float *d, const float *w, const float *b, float *mask, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 32)
		return;
	long c = idx / 32;
	int j = (int)(idx % 32);
	float acc = b[0];
	for (int ch = 0; ch < 64; ch++)
		for (int k = 0; k < 3; k++) {
			int jj = j + k - 1;
			if (jj >= 0 && jj < 32)
				acc += w[ch * 3 + k] * d[c * 2048 + ch * 32 + jj];
		}
	mask[idx] = 1.0f / (1.0f + expf(-acc));
}

void dfn_k_erb_out(const float *d_d, const float *w, const float *b, float *d_mask, int n, cudaStream_t s)
{
	k_erb_out<<<blocks((long)n * 32), T, 0, s>>>(d_d, w, b, d_mask, n);
}

__global__ static void k_df_convp(const float *ring, const float *w, float *out, uint64_t hop, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 960)
		return;
	long c = idx / 960;
	int o = (int)(idx % 960 / 96), j = (int)(idx % 96), g = o / 5;
	float acc = 0.0f;
	for (int i = 0; i < 32; i++)
		for (int k = 0; k < 5; k++) { /* k 0: hop t-4 */
			const float *x = ring + (c * 5 + (hop + 1 + k) % 5) * 6144 + (g * 32 + i) * 96;
			acc += w[(o * 32 + i) * 5 + k] * x[j];
		}
	out[idx] = acc;
}

void dfn_k_df_convp(const float *d_c0ring, const float *w, float *d_out, uint64_t hop, int n, cudaStream_t s)
{
	k_df_convp<<<blocks((long)n * 960), T, 0, s>>>(d_c0ring, w, d_out, hop, n);
}

__global__ static void k_coefs_add(float *coefs, const float *p, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 960)
		return;
	long c = idx / 960;
	int j = (int)(idx % 960 / 10), k = (int)(idx % 10);
	coefs[idx] += p[c * 960 + k * 96 + j];
}

void dfn_k_coefs_add(float *d_coefs, const float *d_p, int n, cudaStream_t s)
{
	k_coefs_add<<<blocks((long)n * 960), T, 0, s>>>(d_coefs, d_p, n);
}

/* libDF's post-filter gain of one bin (dfn_post_filter). */
__device__ static float post_gain(float nr, float ni, float er, float ei, float beta)
{
	const float eps = 1e-12f, pi = 3.14159265358979323846f;
	float g = fmaxf(fminf(hypotf(er, ei) / (hypotf(nr, ni) + eps), 1.0f), eps);
	float gs = g * sinf(g * pi / 2.0f), q = g / gs;
	return ((beta + 1.0f) * g / (1.0f + beta * q * q)) / g;
}

__global__ static void k_spec_out(const float *ring, const int *bin_band, const float *mask, const float *coefs,
				  float beta, const float *d_lim, cufftComplex *y, uint64_t hop, int n)
{
	float lim = *d_lim;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 481)
		return;
	long c = idx / 481;
	int f = (int)(idx % 481);
	const float *del = ring + (c * 5 + (hop + 3) % 5) * 962; /* hop t-2 */
	float re, im;
	if (f < 96) {
		re = 0.0f;
		im = 0.0f;
		for (int t = 0; t < 5; t++) { /* tap 0: hop t-4 */
			const float *sp = ring + (c * 5 + (hop + 1 + t) % 5) * 962;
			float sr = sp[2 * f], si = sp[2 * f + 1];
			float cr = coefs[c * 960 + (f * 5 + t) * 2], ci = coefs[c * 960 + (f * 5 + t) * 2 + 1];
			re += sr * cr - si * ci;
			im += sr * ci + si * cr;
		}
	} else {
		float g = mask[c * 32 + bin_band[f]];
		re = del[2 * f] * g;
		im = del[2 * f + 1] * g;
	}
	if (beta > 0.0f && f < 480) {
		float pf = post_gain(del[2 * f], del[2 * f + 1], re, im, beta);
		re *= pf;
		im *= pf;
	}
	if (lim > 0.0f) {
		re = re * (1.0f - lim) + lim * del[2 * f];
		im = im * (1.0f - lim) + lim * del[2 * f + 1];
	}
	if (f == 0 || f == 480)
		im = 0.0f;
	y[idx] = make_cuFloatComplex(re, im);
}

void dfn_k_spec_out(const float *d_ring, const int *d_bin_band, const float *d_mask, const float *d_coefs,
		    float beta, const float *d_lim, cufftComplex *d_y, uint64_t hop, int n, cudaStream_t s)
{
	k_spec_out<<<blocks((long)n * 481), T, 0, s>>>(d_ring, d_bin_band, d_mask, d_coefs, beta, d_lim, d_y, hop,
						       n);
}

__global__ static void k_synthesis(const float *frame, const float *win, float *syn, float *out, int n)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)n * 480)
		return;
	long c = idx / 480;
	int i = (int)(idx % 480);
	out[idx] = frame[c * 960 + i] * win[i] + syn[idx];
	syn[idx] = frame[c * 960 + 480 + i] * win[480 + i];
}

void dfn_k_synthesis(const float *d_frame, const float *d_win, float *d_syn, float *d_out, int n, cudaStream_t s)
{
	k_synthesis<<<blocks((long)n * 480), T, 0, s>>>(d_frame, d_win, d_syn, d_out, n);
}
