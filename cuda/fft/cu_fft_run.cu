/*
 * The FFT algorithm's work on the stream (cu_fft.cu describes the method):
 * a call (gather, R2C, the spectral multiply-add, C2R, scatter), the live
 * calls' tails summed ahead, the batched prime, and the resume after another
 * path ran. Every kernel and every launch of the staged FFT path is here.
 */
#include "cu_fft.cuh"

#define GATHER_PER_BLOCK 1024

/* W[(g*C + c)*N + k] = x_c[(sf+g)*B - Hh + k], zero at and past 'end'. Frames
 * from pos on come from this chunk's interleaved input, older ones from the
 * line (x_c[t] at line[c*cap + j0 + t - pos]). Block (b = g*C + c, k range). */
__global__ void k_gather(float *__restrict__ W, const float *__restrict__ line, int64_t cap, int64_t j0,
			 const float *__restrict__ in, int64_t pos, int64_t end, int64_t sf, uint32_t B,
			 uint32_t Hh, uint32_t N, uint32_t C)
{
	const uint32_t b = blockIdx.x, g = b / C, c = b - g * C;
	const int64_t t0 = (sf + g) * (int64_t)B - Hh;
	float *w = W + (uint64_t)b * N;
	const float *lc = line + c * cap + j0 - pos;
	const uint32_t k1 = min(N, (blockIdx.y + 1) * GATHER_PER_BLOCK);
	for (uint32_t k = blockIdx.y * GATHER_PER_BLOCK + threadIdx.x; k < k1; k += blockDim.x) {
		int64_t t = t0 + k;
		w[k] = t >= end ? 0.0f : t >= pos ? in[(uint32_t)(t - pos) * C + c] : lc[t];
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

/* How k_mac_ahead forms the tail T of a segment. */
enum { TAIL_CACHED, TAIL_AHEAD, TAIL_FULL };

/** A live call (G <= 2 segments) with tails summed ahead (k_mac_ahead). */
struct mac_ahead_args {
	cufftComplex *Y, *T_out, *A;
	const cufftComplex *H, *X, *T_in;
	uint32_t NB, C, M, Mr, slot0, G;
	int64_t sf;	   /**< the call's first segment */
	int mode[2];	   /**< TAIL_* for segment sf + g */
	uint32_t fin_from; /**< g = 1, TAIL_AHEAD: partitions of A_{sf+1} summed by earlier calls */
	uint32_t acc_from, acc_to; /**< this call's share of A_{sf+G}'s partitions */
	int store;		   /**< cache the last segment's T (it is incomplete) */
	int acc_only;		   /**< only the share of A (k_mac formed Y and T: a whole sum) */
};

/*
 * Y_g = T + H_0 X_{sf+g} for a live call, with T_s = A_s + H_1 X_{s-1} where
 * A_s was summed ahead by the calls of segment s-1 (TAIL_AHEAD; segment
 * sf+1 finishes its A here), the cached T (TAIL_CACHED) or the whole sum
 * (TAIL_FULL: after a reset). The thread of the last segment then adds this
 * call's share of A_{sf+G}. One thread a bin; A lives at slot segment % 3.
 */
__global__ void k_mac_ahead(struct mac_ahead_args a)
{
	const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y, g = blockIdx.z;
	if (f >= a.NB)
		return;
	const uint64_t cs = (uint64_t)a.C * a.NB, off = (uint64_t)c * a.NB + f;
	const int slot = (int)((a.slot0 + g) % a.Mr);
	const int prev = slot == 0 ? (int)a.Mr - 1 : slot - 1;
	const int64_t seg = a.sf + g;
	float2 t = make_float2(0.0f, 0.0f);
	const int mode = g == 0 ? a.mode[0] : a.mode[1];
	if (a.acc_only) {
		/* Y and T are k_mac's */
	} else if (mode == TAIL_CACHED) {
		t = a.T_in[off];
	} else if (mode == TAIL_AHEAD) {
		const cufftComplex *As = a.A + (uint64_t)(seg % 3) * cs;
		uint32_t from = g == 0 ? a.M - 2 : a.fin_from;
		if (from > 0)
			t = As[off];
		t = mac_range(t, a.H, a.X, cs, off, slot, a.Mr, from, a.M - 2);
		t = cmac(t, a.H[cs + off], a.X[(uint64_t)prev * cs + off]);
	} else {
		t = cmac(t, a.H[cs + off], a.X[(uint64_t)prev * cs + off]);
		t = mac_range(t, a.H, a.X, cs, off, slot, a.Mr, 0, a.M - 2);
	}
	if (!a.acc_only) {
		if (a.store && g == a.G - 1 && mode != TAIL_CACHED)
			a.T_out[off] = t;
		a.Y[(uint64_t)g * cs + off] = cmac(t, a.H[off], a.X[(uint64_t)slot * cs + off]);
	}
	if (g != a.G - 1 || a.acc_to <= a.acc_from)
		return;
	/* A_{seg+1}'s partitions read segments seg+1-j: slot + 1 - j. */
	cufftComplex *An = a.A + (uint64_t)((seg + 1) % 3) * cs;
	float2 acc = a.acc_from > 0 ? An[off] : make_float2(0.0f, 0.0f);
	int next = slot + 1 == (int)a.Mr ? 0 : slot + 1;
	An[off] = mac_range(acc, a.H, a.X, cs, off, next, a.Mr, a.acc_from, a.acc_to);
}

/* out[n*C + c] = y[(g*C + c)*N + Hh + m] for frame pos+n = (sf+g)*B + m (B = 2^lb). */
__global__ void k_scatter(float *__restrict__ out, const float *__restrict__ y, int64_t pos, uint32_t frames,
			  int64_t sf, uint32_t lb, uint32_t Hh, uint32_t N, uint32_t C, unsigned *done, unsigned seq)
{
	const uint32_t total = frames * C, B = 1u << lb;
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
		uint32_t n = i / C, c = i - n * C;
		int64_t t = pos + n;
		uint32_t g = (uint32_t)((t >> lb) - sf), m = (uint32_t)t & (B - 1);
		out[i] = y[((uint64_t)g * C + c) * N + Hh + m];
	}
	if (done) { /* out is host-mapped: fence, then this block's completion word */
		__threadfence_system();
		__syncthreads();
		if (threadIdx.x == 0)
			*(volatile unsigned *)&done[blockIdx.x] = seq;
	}
}

/* Batched prime: W[(g*C + c)*N + k] = x_c[(s0+g)*B - Hh + k], x_c[t] = hist[t*C + c] for 0 <= t < n, else 0. */
__global__ void k_prime_gather(float *__restrict__ W, const float *__restrict__ hist, uint32_t n, int64_t s0,
			       uint32_t B, uint32_t Hh, uint32_t N, uint32_t C)
{
	const uint32_t b = blockIdx.x, g = b / C, c = b - g * C;
	const int64_t t0 = (s0 + g) * (int64_t)B - Hh;
	float *w = W + (uint64_t)b * N;
	const uint32_t k1 = min(N, (blockIdx.y + 1) * GATHER_PER_BLOCK);
	for (uint32_t k = blockIdx.y * GATHER_PER_BLOCK + threadIdx.x; k < k1; k += blockDim.x) {
		int64_t t = t0 + k;
		w[k] = t >= 0 && t < n ? hist[(uint64_t)t * C + c] : 0.0f;
	}
}

/* X slot (s0+g) % Mr = Xt[g] for the cnt segments of a pass. */
__global__ void k_prime_place(cufftComplex *__restrict__ X, const cufftComplex *__restrict__ Xt, int64_t s0,
			      uint32_t cnt, uint32_t Mr, uint64_t per)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (uint64_t)cnt * per;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t g = i / per, r = i - g * per;
		X[(uint64_t)((s0 + (int64_t)g) % Mr) * per + r] = Xt[i];
	}
}

/* R2C of @p G windows in W into ring slots from @p slot0, split at the wrap and
 * into power-of-two batches. */
static int forward(struct gf_cu_fft *f, uint32_t slot0, uint32_t G, struct gf_errbuf *eb)
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

static int inverse(struct gf_cu_fft *f, uint32_t G, struct gf_errbuf *eb)
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

static int launch_mac(struct gf_cu_fft *f, uint32_t slot0, int cached, int store, uint32_t G, cudaStream_t s,
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

/* What every k_mac_ahead launch reads: the spectra, the A ring, the shape, the call's segments. */
static struct mac_ahead_args ahead_args(const struct gf_cu_fft *f, int64_t sf, uint32_t slot0, uint32_t G)
{
	struct mac_ahead_args a = {};
	a.A = f->d_A;
	a.H = f->d_H;
	a.X = f->d_X;
	a.NB = f->NB;
	a.C = f->C;
	a.M = f->M;
	a.Mr = f->Mr;
	a.slot0 = slot0;
	a.G = G;
	a.sf = sf;
	return a;
}

/*
 * The live MAC with tails summed ahead: this call's share of A_{sf+G} is in
 * proportion to the frames of segment sf+G-1 received so far, so the last
 * call of a segment completes it and the first call of the next needs only
 * the partitions j = 0 and 1. A tail with nothing summed ahead (after a
 * reset or a prime) is k_mac's whole sum, spread over its lanes; the share
 * of A then follows in a second launch.
 */
static int launch_mac_ahead(struct gf_cu_fft *f, int64_t sf, uint32_t slot0, uint32_t G, int64_t end,
			    bool cached, bool store, cudaStream_t s, struct gf_errbuf *eb)
{
	const size_t half = (size_t)f->C * f->NB;
	const uint32_t parts = f->M - 2;
	const int64_t sl = sf + G - 1, filled = end - (sl << f->lb);
	struct mac_ahead_args a = ahead_args(f, sf, slot0, G);
	a.Y = f->d_Y;
	a.T_out = f->d_T + (1 - f->tf_cur) * half;
	a.T_in = f->d_T + f->tf_cur * half;
	a.store = store;
	a.mode[0] = cached				    ? TAIL_CACHED
		    : (f->a_seg == sf && f->a_done == parts) || f->a_ready == sf ? TAIL_AHEAD
										 : TAIL_FULL;
	a.mode[1] = f->a_seg == sf + 1 ? TAIL_AHEAD : TAIL_FULL;
	a.fin_from = f->a_seg == sf + 1 ? f->a_done : 0;
	a.acc_from = f->a_seg == sl + 1 ? f->a_done : 0;
	a.acc_to = (uint32_t)(((uint64_t)parts * (uint64_t)filled + f->B - 1) >> f->lb);
	a.acc_only = a.mode[0] == TAIL_FULL || (G == 2 && a.mode[1] == TAIL_FULL);
	if (a.acc_only)
		GF_RET(launch_mac(f, slot0, cached, store, G, s, eb));
	if (!a.acc_only || a.acc_to > a.acc_from) {
		k_mac_ahead<<<dim3((f->NB + 127) / 128, f->C, G), 128, 0, s>>>(a);
		CU_LAUNCHED(eb);
	}
	f->a_seg = sl + 1;
	f->a_done = a.acc_to > a.acc_from ? a.acc_to : a.acc_from;
	return 0;
}

int gf_cu_fft_run(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_in, int64_t j0, uint32_t frames,
		  float *d_out, cudaStream_t s, struct gf_errbuf *eb)
{
	const int64_t pos = in->line.pos, end = pos + frames;
	const int64_t sf = pos >> f->lb, sl = (end - 1) >> f->lb;
	const uint32_t G = (uint32_t)(sl - sf + 1);
	const uint32_t slot0 = (uint32_t)(sf % f->Mr);
	const bool last_incomplete = (end & (f->B - 1)) != 0;

	dim3 ggrid(G * f->C, (f->N + GATHER_PER_BLOCK - 1) / GATHER_PER_BLOCK);
	k_gather<<<ggrid, 256, 0, s>>>(f->d_W, in->line.d_line, in->line.cap, j0, d_in, pos, end, sf, f->B,
				       f->Hh, f->N, f->C);
	CU_LAUNCHED(eb);
	int err = forward(f, slot0, G, eb);
	if (err)
		return err;
	if (!d_out) {
		f->tf_seg = -1;
		f->a_seg = -1;
		f->a_ready = -1;
		return 0;
	}
	const bool cached = f->tf_seg == sf;
	const bool store = last_incomplete && !(cached && G == 1);
	if (f->d_A && G <= 2)
		err = launch_mac_ahead(f, sf, slot0, G, end, cached, store, s, eb);
	else {
		f->a_seg = -1;
		err = launch_mac(f, slot0, cached, store, G, s, eb);
	}
	if (err || (err = inverse(f, G, eb)))
		return err;
	k_scatter<<<blocks_for((uint64_t)frames * f->C, 256), 256, 0, s>>>(d_out, f->d_y, pos, frames, sf, f->lb,
									   f->Hh, f->N, f->C, f->done, f->done_seq);
	f->done = NULL;
	CU_LAUNCHED(eb);
	if (store)
		f->tf_cur ^= 1;
	f->tf_seg = last_incomplete ? sl : -1;
	return 0;
}

unsigned gf_cu_fft_set_done(struct gf_cu_fft *f, unsigned *done, unsigned seq, uint32_t frames)
{
	f->done = done;
	f->done_seq = seq;
	return blocks_for((uint64_t)frames * f->C, 256);
}

/* Sum partitions [from, to) of A_{seg+1} (k_mac_ahead alone, from segment seg's slot). */
static int sum_ahead(struct gf_cu_fft *f, int64_t seg, uint32_t from, uint32_t to, cudaStream_t s,
		     struct gf_errbuf *eb)
{
	struct mac_ahead_args a = ahead_args(f, seg, (uint32_t)(seg % f->Mr), 1);
	a.acc_only = 1;
	a.acc_from = from;
	a.acc_to = to;
	k_mac_ahead<<<dim3((f->NB + 127) / 128, f->C, 1), 128, 0, s>>>(a);
	CU_LAUNCHED(eb);
	return 0;
}

/*
 * After a prime of @p n frames (position n, in segment sf = n / B): A_sf
 * whole and A_{sf+1}'s share for the frames of sf already there, as the
 * calls would have left them. Here, on the control thread, so that the first
 * live call after a swap is no longer than any other.
 */
static int prime_ahead(struct gf_cu_fft *f, int64_t n, cudaStream_t s, struct gf_errbuf *eb)
{
	const uint32_t parts = f->M - 2;
	const int64_t sf = n >> f->lb, filled = n - (sf << f->lb);
	const uint32_t share = (uint32_t)(((uint64_t)parts * (uint64_t)filled + f->B - 1) >> f->lb);
	GF_RET(sum_ahead(f, sf - 1 + (int64_t)f->Mr * 3, 0, parts, s, eb)); /* kept non-negative: mod Mr and 3 */
	if (share)
		GF_RET(sum_ahead(f, sf, 0, share, s, eb));
	f->a_ready = sf;
	f->a_seg = sf + 1;
	f->a_done = share;
	return 0;
}

int gf_cu_fft_resume(struct gf_cu_fft *f, int64_t pos, cudaStream_t s, struct gf_errbuf *eb)
{
	f->tf_seg = -1;
	f->a_seg = -1;
	f->a_ready = -1;
	return f->d_A ? prime_ahead(f, pos, s, eb) : 0;
}

/* Lazy loading (docs/cuda.md): load the kernels now, not at a first launch behind a resident kernel. */
void gf_cu_fft_preload(void)
{
	cudaFuncAttributes a;
	(void)cudaFuncGetAttributes(&a, k_gather);
	(void)cudaFuncGetAttributes(&a, k_mac<32, 8>);
	(void)cudaFuncGetAttributes(&a, k_mac<128, 1>);
	(void)cudaFuncGetAttributes(&a, k_mac_ahead);
	(void)cudaFuncGetAttributes(&a, k_scatter);
	(void)cudaFuncGetAttributes(&a, k_prime_gather);
	(void)cudaFuncGetAttributes(&a, k_prime_place);
	(void)cudaGetLastError();
}

int gf_cu_fft_prime(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_hist, uint32_t n,
		    cudaStream_t s, struct gf_errbuf *eb)
{
	(void)in;
	f->tf_seg = -1;
	f->a_seg = -1;
	f->a_ready = -1;
	if (n == 0)
		return 0;
	/* The next call reads the spectra of segments sl-M+1 .. sl (it recomputes
	 * sl itself when that one is incomplete). */
	const int64_t sl = (int64_t)(n - 1) >> f->lb;
	const int64_t s_lo = sl - (int64_t)f->M + 1 > 0 ? sl - (int64_t)f->M + 1 : 0;
	const uint64_t per = (uint64_t)f->C * f->NB;
	cufftComplex *Xt = NULL;
	int err = gf_cu_dmalloc((void **)&Xt, per * f->gp * sizeof(cufftComplex), s, eb);
	float *W = NULL;
	if (!err)
		err = gf_cu_dmalloc((void **)&W, (size_t)f->gp * f->C * f->N * sizeof(float), s, eb);
	for (int64_t s0 = s_lo; !err && s0 <= sl; s0 += f->gp) {
		uint32_t cnt = (uint32_t)(sl - s0 + 1 < f->gp ? sl - s0 + 1 : f->gp);
		dim3 grid(f->gp * f->C, (f->N + GATHER_PER_BLOCK - 1) / GATHER_PER_BLOCK);
		k_prime_gather<<<grid, 256, 0, s>>>(W, d_hist, n, s0, f->B, f->Hh, f->N, f->C);
		if ((err = CU_TRY(eb, cudaGetLastError())) ||
		    (err = CUFFT_TRY(eb, cufftExecR2C(f->r2c_prime, W, Xt))))
			break;
		k_prime_place<<<blocks_for(per * cnt, 256), 256, 0, s>>>(f->d_X, Xt, s0, cnt, f->Mr, per);
		err = CU_TRY(eb, cudaGetLastError());
	}
	gf_cu_dfree(W, s);
	gf_cu_dfree(Xt, s);
	if (!err && f->d_A)
		err = prime_ahead(f, n, s, eb);
	return err;
}
