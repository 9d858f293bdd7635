/*
 * Zero-latency uniformly partitioned overlap-save with cuFFT (R2C/C2R,
 * batched over segments and channels).
 *
 * Partition P, FFT size N = 2P, M = ceil(taps/P) partitions with spectra H_j.
 * Segment s is input frames [sP, sP+P); its window is frames [sP-P, sP+P) and
 * X_s its spectrum, kept in a ring (the frequency-domain delay line). Output
 * frame sP+m is sample P+m of IFFT(sum_j H_j X_{s-j}). Partitions j >= 1 only
 * read completed segments, so their sum T_s is computed once and cached while
 * segment s fills up over several calls; each call then only transforms the
 * partly filled window (the head partition j = 0), adds T_s and transforms back.
 * A call that spans many segments (offline) does all of them in one batch.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cu_common.cuh"

#define GF_FFT_MAX_PLANS 24

struct gf_fft {
	uint32_t P, N, NB, M, C, Mr, gmax;
	cufftComplex *d_H; /**< [M][C][NB], scaled by 1/N */
	cufftComplex *d_X; /**< ring [Mr][C][NB] */
	cufftComplex *d_T; /**< [2][C][NB] cached tail of segment tf_seg, double-buffered */
	cufftComplex *d_Y; /**< [gmax][C][NB] */
	float *d_W;	   /**< [gmax][C][N] windows */
	float *d_y;	   /**< [gmax][C][N] inverse transforms */
	void *d_work;
	int nplans;
	cufftHandle r2c[GF_FFT_MAX_PLANS], c2r[GF_FFT_MAX_PLANS]; /**< batch (1 << i) * C */
	int made_r2c, made_c2r;
	int64_t tf_seg;
	int tf_cur; /**< which half of d_T holds the cached tail */
};

uint32_t gf_fft_keep(uint32_t partition)
{
	return 2 * partition;
}

static uint32_t next_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return (uint32_t)p;
}

uint32_t gf_fft_pick_partition(uint32_t taps, uint32_t max_block)
{
	/* At least the block (fewer segments a call), at least ~4*sqrt(taps) so
	 * that a long filter's per-segment tail sum stays short and wide; at most
	 * the filter's own length (one partition) and 2^18. */
	const char *env = getenv("GPUFIR_CUDA_FFT_PARTITION");
	if (env && atoi(env) >= 16)
		return next_pow2((uint32_t)atoi(env));
	uint64_t p = next_pow2(max_block);
	uint32_t s = 1;
	while ((uint64_t)s * s < (uint64_t)taps * 16)
		s++;
	if (next_pow2(s) > p)
		p = next_pow2(s);
	if (p > next_pow2(taps))
		p = next_pow2(taps);
	if (p > 262144) /* beyond this the transforms cost more than the partitions save */
		p = 262144;
	if (p < 32)
		p = 32;
	return (uint32_t)p;
}

uint32_t gf_fft_partition(const struct gf_fft *f)
{
	return f->P;
}

static unsigned blocks_for(uint64_t n, unsigned block)
{
	uint64_t g = (n + block - 1) / block;
	return (unsigned)(g < 1 ? 1 : g > 1048576 ? 1048576 : g);
}

#define GATHER_PER_BLOCK 1024

/* W[(g*C + c)*N + k] = x_c[(sf+g)*P - P + k], zero at and past 'end'. Frames
 * from pos on come from this chunk's interleaved input, older ones from the
 * line (x_c[t] at line[c*cap + j0 + t - pos]). Block (b = g*C + c, k range). */
__global__ void k_gather(float *__restrict__ W, const float *__restrict__ line, int64_t cap, int64_t j0,
			 const float *__restrict__ in, int64_t pos, int64_t end, int64_t sf, uint32_t P,
			 uint32_t N, uint32_t C)
{
	const uint32_t b = blockIdx.x, g = b / C, c = b - g * C;
	const int64_t t0 = (sf + g) * (int64_t)P - P;
	float *w = W + (uint64_t)b * N;
	const float *lc = line + c * cap + j0 - pos;
	const uint32_t k1 = min(N, (blockIdx.y + 1) * GATHER_PER_BLOCK);
	for (uint32_t k = blockIdx.y * GATHER_PER_BLOCK + threadIdx.x; k < k1; k += blockDim.x) {
		int64_t t = t0 + k;
		w[k] = t >= end ? 0.0f : t >= pos ? in[(uint32_t)(t - pos) * C + c] : lc[t];
	}
}

/* Filter partitions j0..j0+cnt-1 into W, zero padded to N, scaled by 1/N. */
__global__ void k_pad_taps(float *__restrict__ W, const float *__restrict__ h, uint32_t taps, uint32_t j0,
			   uint32_t cnt, uint32_t P, uint32_t N, uint32_t C)
{
	uint64_t total = (uint64_t)cnt * C * N;
	float scale = 1.0f / (float)N;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t b = i / N;
		uint32_t k = (uint32_t)(i % N), c = (uint32_t)(b % C), j = j0 + (uint32_t)(b / C);
		uint64_t tap = (uint64_t)j * P + k;
		W[i] = (k < P && tap < taps) ? h[(uint64_t)c * taps + tap] * scale : 0.0f;
	}
}

/*
 * Y_g = T + H_0 X_{sf+g}, T = sum_{j=1}^{M-1} H_j X_{sf+g-j} (or the cached
 * tail for g == 0). Block: BX bins x BY lanes over j, the lanes summed in
 * shared memory (BY > 1 for long filters with few bins in flight, so a live
 * block's tail sum spreads wide). The last segment's T is cached when it is
 * still incomplete, into the other half of the double buffer: block g = 0
 * may still be reading the previous tail.
 */
template <int BX, int BY>
__global__ void k_mac(cufftComplex *__restrict__ Y, const cufftComplex *__restrict__ H,
		      const cufftComplex *__restrict__ X, const cufftComplex *__restrict__ T_in,
		      cufftComplex *__restrict__ T_out, uint32_t NB, uint32_t C, uint32_t M, uint32_t Mr,
		      uint32_t slot0, int use_cached, int store_last, uint32_t G)
{
	__shared__ float2 s_acc[BY][BX];
	const uint32_t f = blockIdx.x * BX + threadIdx.x, c = blockIdx.y, g = blockIdx.z;
	const bool ok = f < NB;
	const uint64_t cs = (uint64_t)C * NB, off = (uint64_t)c * NB + f;
	const int slot = (int)((slot0 + g) % Mr);
	const bool cached = use_cached && g == 0;
	float2 acc = make_float2(0.0f, 0.0f);
	if (ok && !cached) {
		for (uint32_t j = 1 + threadIdx.y; j < M; j += BY) {
			int s = slot - (int)j;
			s += s < 0 ? (int)Mr : 0;
			float2 h = H[j * cs + off], x = X[(uint64_t)s * cs + off];
			acc.x = fmaf(h.x, x.x, fmaf(-h.y, x.y, acc.x));
			acc.y = fmaf(h.x, x.y, fmaf(h.y, x.x, acc.y));
		}
	}
	if (BY > 1) {
		s_acc[threadIdx.y][threadIdx.x] = acc;
		__syncthreads();
		if (threadIdx.y != 0)
			return;
		for (int y = 1; y < BY; y++)
			acc.x += s_acc[y][threadIdx.x].x, acc.y += s_acc[y][threadIdx.x].y;
	}
	if (!ok)
		return;
	float2 t = acc;
	if (cached)
		t = T_in[off];
	else if (store_last && g == G - 1)
		T_out[off] = t;
	float2 h = H[off], x = X[(uint64_t)slot * cs + off];
	t.x = fmaf(h.x, x.x, fmaf(-h.y, x.y, t.x));
	t.y = fmaf(h.x, x.y, fmaf(h.y, x.x, t.y));
	Y[(uint64_t)g * cs + off] = t;
}

/* out[n*C + c] = y[(g*C + c)*N + P + m] for frame pos+n = (sf+g)*P + m (P = 2^lp). */
__global__ void k_scatter(float *__restrict__ out, const float *__restrict__ y, int64_t pos, uint32_t frames,
			  int64_t sf, uint32_t lp, uint32_t C)
{
	const uint32_t total = frames * C, P = 1u << lp;
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
		uint32_t n = i / C, c = i - n * C;
		int64_t t = pos + n;
		uint32_t g = (uint32_t)((t >> lp) - sf), m = (uint32_t)t & (P - 1);
		out[i] = y[((uint64_t)g * C + c) * (2u * P) + P + m];
	}
}

static int make_plans(struct gf_fft *f, cudaStream_t s, struct gf_errbuf *eb)
{
	size_t ws_max = 0;
	long long n = f->N;
	for (int i = 0; i < GF_FFT_MAX_PLANS && (1u << i) <= f->gmax; i++) {
		long long batch = (long long)(1u << i) * f->C;
		size_t ws = 0;
		CUFFT_RET(eb, cufftCreate(&f->r2c[i]));
		f->made_r2c = i + 1;
		CUFFT_RET(eb, cufftSetAutoAllocation(f->r2c[i], 0));
		CUFFT_RET(eb, cufftMakePlanMany64(f->r2c[i], 1, &n, NULL, 1, n, NULL, 1, f->NB, CUFFT_R2C,
						  batch, &ws));
		ws_max = ws > ws_max ? ws : ws_max;
		CUFFT_RET(eb, cufftCreate(&f->c2r[i]));
		f->made_c2r = i + 1;
		CUFFT_RET(eb, cufftSetAutoAllocation(f->c2r[i], 0));
		CUFFT_RET(eb, cufftMakePlanMany64(f->c2r[i], 1, &n, NULL, 1, f->NB, NULL, 1, n, CUFFT_C2R,
						  batch, &ws));
		ws_max = ws > ws_max ? ws : ws_max;
		f->nplans = i + 1;
	}
	if (ws_max)
		CU_RET(eb, cudaMalloc(&f->d_work, ws_max));
	for (int i = 0; i < f->nplans; i++) {
		CUFFT_RET(eb, cufftSetWorkArea(f->r2c[i], f->d_work));
		CUFFT_RET(eb, cufftSetWorkArea(f->c2r[i], f->d_work));
		CUFFT_RET(eb, cufftSetStream(f->r2c[i], s));
		CUFFT_RET(eb, cufftSetStream(f->c2r[i], s));
	}
	return 0;
}

/* Largest planned power-of-two batch (in segments) not above n. */
static int plan_for(const struct gf_fft *f, uint32_t n)
{
	int i = 0;
	while (i + 1 < f->nplans && (2u << i) <= n)
		i++;
	return i;
}

/* R2C of @p G windows in W into ring slots from @p slot0, split at the wrap and
 * into power-of-two batches. */
static int forward(struct gf_fft *f, uint32_t slot0, uint32_t G, struct gf_errbuf *eb)
{
	uint32_t g = 0;
	while (g < G) {
		uint32_t slot = (slot0 + g) % f->Mr;
		uint32_t n = G - g;
		if (n > f->Mr - slot)
			n = f->Mr - slot;
		int pi = plan_for(f, n);
		n = 1u << pi;
		CUFFT_RET(eb, cufftExecR2C(f->r2c[pi], f->d_W + (size_t)g * f->C * f->N,
					   f->d_X + (size_t)slot * f->C * f->NB));
		g += n;
	}
	return 0;
}

static int inverse(struct gf_fft *f, uint32_t G, struct gf_errbuf *eb)
{
	uint32_t g = 0;
	while (g < G) {
		int pi = plan_for(f, G - g);
		CUFFT_RET(eb, cufftExecC2R(f->c2r[pi], f->d_Y + (size_t)g * f->C * f->NB,
					   f->d_y + (size_t)g * f->C * f->N));
		g += 1u << pi;
	}
	return 0;
}

static int make_spectra(struct gf_fft *f, const struct gf_filter_set *fs, cudaStream_t s,
			struct gf_errbuf *eb)
{
	float *d_h = NULL;
	size_t n = (size_t)fs->channels * fs->taps;
	int err = CU_TRY(eb, cudaMalloc(&d_h, n * sizeof(float)));
	if (!err)
		err = CU_TRY(eb,
			     cudaMemcpyAsync(d_h, fs->coeffs, n * sizeof(float), cudaMemcpyHostToDevice, s));
	for (uint32_t j = 0; !err && j < f->M;) {
		int pi = plan_for(f, f->M - j);
		uint32_t cnt = 1u << pi;
		k_pad_taps<<<blocks_for((uint64_t)cnt * f->C * f->N, 256), 256, 0, s>>>(
			f->d_W, d_h, fs->taps, j, cnt, f->P, f->N, f->C);
		err = CU_TRY(eb, cudaGetLastError());
		if (!err)
			err = CUFFT_TRY(eb,
					cufftExecR2C(f->r2c[pi], f->d_W, f->d_H + (size_t)j * f->C * f->NB));
		j += cnt;
	}
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(s));
	if (d_h)
		cudaFree(d_h);
	return err;
}

int gf_fft_new(struct gf_fft **out, struct gf_cuda_inst *in, const struct gf_filter_set *fs,
	       uint32_t partition, struct gf_errbuf *eb)
{
	int err;
	struct gf_fft *f = (struct gf_fft *)calloc(1, sizeof(*f));
	if (!f) {
		gf_errbuf_set(eb, "cuda fft: out of host memory");
		return GF_E_NOMEM;
	}
	f->P = partition;
	f->N = 2 * partition;
	f->NB = partition + 1;
	f->C = fs->channels;
	f->M = (fs->taps + partition - 1) / partition;
	f->gmax = (in->chunk + partition - 1) / partition + 1;
	f->Mr = f->M + f->gmax;
	f->tf_seg = -1;
	size_t spec = (size_t)f->C * f->NB * sizeof(cufftComplex), win = (size_t)f->C * f->N * sizeof(float);
	if ((err = CU_TRY(eb, cudaMalloc(&f->d_H, spec * f->M))) ||
	    (err = CU_TRY(eb, cudaMalloc(&f->d_X, spec * f->Mr))) ||
	    (err = CU_TRY(eb, cudaMalloc(&f->d_T, 2 * spec))) ||
	    (err = CU_TRY(eb, cudaMalloc(&f->d_Y, spec * f->gmax))) ||
	    (err = CU_TRY(eb, cudaMalloc(&f->d_W, win * f->gmax))) ||
	    (err = CU_TRY(eb, cudaMalloc(&f->d_y, win * f->gmax))) || (err = make_plans(f, in->s_comp, eb)) ||
	    /* plan setup may have queued work on the legacy stream, which our
	     * non-blocking streams do not wait for */
	    (err = CU_TRY(eb, cudaDeviceSynchronize())) || (err = make_spectra(f, fs, in->s_comp, eb)) ||
	    (err = gf_fft_reset(f, in, in->s_comp, eb)))
		goto fail;
	*out = f;
	return 0;
fail:
	gf_fft_free(f);
	return err;
}

void gf_fft_free(struct gf_fft *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->made_r2c; i++)
		cufftDestroy(f->r2c[i]);
	for (int i = 0; i < f->made_c2r; i++)
		cufftDestroy(f->c2r[i]);
	cudaFree(f->d_work);
	cudaFree(f->d_H);
	cudaFree(f->d_X);
	cudaFree(f->d_T);
	cudaFree(f->d_Y);
	cudaFree(f->d_W);
	cudaFree(f->d_y);
	free(f);
}

int gf_fft_reset(struct gf_fft *f, struct gf_cuda_inst *in, cudaStream_t s, struct gf_errbuf *eb)
{
	(void)in;
	CU_RET(eb, cudaMemsetAsync(f->d_X, 0, (size_t)f->Mr * f->C * f->NB * sizeof(cufftComplex), s));
	f->tf_seg = -1;
	return 0;
}

static int launch_mac(struct gf_fft *f, uint32_t slot0, int cached, int store, uint32_t G, cudaStream_t s,
		      struct gf_errbuf *eb)
{
	const size_t half = (size_t)f->C * f->NB;
	const cufftComplex *t_in = f->d_T + f->tf_cur * half;
	cufftComplex *t_out = f->d_T + (1 - f->tf_cur) * half;
	/* Split the partition sum over 8 lanes when the filter is long and the
	 * bins alone give few threads (live blocks); else one thread a bin. */
	bool wide = f->M > 16 && (uint64_t)f->NB * f->C * G < (1u << 18);
	if (wide) {
		dim3 grid((f->NB + 31) / 32, f->C, G), block(32, 8);
		k_mac<32, 8><<<grid, block, 0, s>>>(f->d_Y, f->d_H, f->d_X, t_in, t_out, f->NB, f->C, f->M,
						    f->Mr, slot0, cached, store, G);
	} else {
		dim3 grid((f->NB + 127) / 128, f->C, G), block(128, 1);
		k_mac<128, 1><<<grid, block, 0, s>>>(f->d_Y, f->d_H, f->d_X, t_in, t_out, f->NB, f->C, f->M,
						     f->Mr, slot0, cached, store, G);
	}
	CU_LAUNCHED(eb);
	return 0;
}

int gf_fft_run(struct gf_fft *f, struct gf_cuda_inst *in, const float *d_in, int64_t j0, uint32_t frames,
	       float *d_out, cudaStream_t s, struct gf_errbuf *eb)
{
	const int64_t pos = in->line.pos, end = pos + frames;
	const int64_t sf = pos / f->P, sl = (end - 1) / f->P;
	const uint32_t G = (uint32_t)(sl - sf + 1);
	const uint32_t slot0 = (uint32_t)(sf % f->Mr);
	const bool last_incomplete = end % f->P != 0;
	uint32_t lp = 0;
	while ((1u << lp) < f->P)
		lp++;

	dim3 ggrid(G * f->C, (f->N + GATHER_PER_BLOCK - 1) / GATHER_PER_BLOCK);
	k_gather<<<ggrid, 256, 0, s>>>(f->d_W, in->line.d_line, in->line.cap, j0, d_in, pos, end, sf, f->P,
				       f->N, f->C);
	CU_LAUNCHED(eb);
	int err = forward(f, slot0, G, eb);
	if (err)
		return err;
	if (!d_out) {
		f->tf_seg = -1;
		return 0;
	}
	const bool cached = f->tf_seg == sf;
	const bool store = last_incomplete && !(cached && G == 1);
	if ((err = launch_mac(f, slot0, cached, store, G, s, eb)) || (err = inverse(f, G, eb)))
		return err;
	k_scatter<<<blocks_for((uint64_t)frames * f->C, 256), 256, 0, s>>>(d_out, f->d_y, pos, frames, sf, lp,
									   f->C);
	CU_LAUNCHED(eb);
	if (store)
		f->tf_cur ^= 1;
	f->tf_seg = last_incomplete ? sl : -1;
	return 0;
}
