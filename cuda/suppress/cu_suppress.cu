/*
 * The noise suppressor on the GPU (the module's side of suppress_gpu.h): the
 * CPU suppressor's streaming STFT (suppress.c) and per-bin recursions
 * (suppress_bins.c) for every channel of a hop in one batch. Part of the CUDA
 * module, which links no engine: the host hands over the shape (frame,
 * constants, window, seed) that the CPU suppressor computed, and
 * src/suppress/suppress_gpu.c is the suppressor layer's thin layer over this.
 *
 * A hop's round trip, all on one stream: a new hum table (the hum's factor
 * on the floor per bin, where it changed: gf_cu_suppress_hum) and the hop's interleaved input from
 * pinned memory to the device; k_analyse windows every channel's frame (the
 * previous hop and this one); one batched R2C; k_bins runs the recursions for
 * every (channel, bin) and scales the spectrum; one batched C2R; k_synth
 * windows, overlap-adds and writes the finished hop interleaved; the hop back
 * to pinned memory; an event the host polls until a deadline.
 *
 * The output must equal the CPU's: the window, constants and noise seed are
 * the CPU suppressor's own (gf_suppress_shape_of, on the host), and the kernels do the
 * CPU's float operations in its order with the _rn intrinsics, which nvcc
 * never fuses into an FMA (the CPU build, plain x86-64, has none). What is
 * left is the rounding of cuFFT against FFTW.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cu_common.cuh"
#include "cu_suppress.cuh"

extern "C" {
#include "suppress_bins.h"
#include "suppress_gpu.h"
}

/* new()'s and reset()'s waits: control thread, the first launches load modules. */
#define SETUP_WAIT_NS 10000000000ull
/* reset()'s wait for a hop left in flight (late or hung): a try to return to the GPU, on the control
 * thread, fails this fast while the GPU is hung, rather than block SETUP_WAIT_NS each time. */
#define PENDING_WAIT_NS 100000000ull
#define THREADS 256

/* What changes from frame to frame but is the same for every bin (suppress_bins.c's branches on
 * the frame count, decided on the host as the CPU decides them). */
struct frame_flags {
	int first;	 /* the first frame without a noise seed: the state starts from it */
	int start;	 /* the start without a seed: L is the plain mean */
	int window_ends; /* the minimum's window turns over after this frame */
	float start_a;	 /* the plain mean's factor, frames / (frames + 1) */
	int hold;	 /* the frame holds missing input: gains from the state, which stays */
};

/* Device state: channel c's bin i of each array at [c * nb + i]. */
struct bin_state {
	float *S, *Smin, *Stmp, *p, *L, *Y2, *Sold;
};

struct gf_cu_suppress {
	uint32_t channels, n, hop, nb;
	int device;
	uint32_t pos;		     /* frames of the current hop written so far, all channels */
	uint32_t frames;	     /* frames run since reset (saturates), as suppress_bins.c counts */
	uint32_t hold;		     /* hops still to come that hold a missing (non-finite) sample */
	int held;		     /* the hop in flight held one */
	int seeded;		     /* the noise estimate starts from a noise sample */
	int failed;		     /* a hop failed or hung: silence until reset() */
	int pending;		     /* the last hop is in flight: late, collected by the next call */
	uint64_t pending_since;	     /* when it was submitted: hung GF_SUPPRESS_GPU_HOP_WAIT_NS later */
	uint32_t owed, repaid;	     /* frames taken while a hop was in flight; those fed to the GPU since */
	float *h_owed;		     /* the first hop of them, interleaved (more are fed as silence) */
	unsigned cur;		     /* which of d_hops holds the newest hop */
	float scale;		     /* the inverse transform's 1 / n */
	struct gf_suppress_consts k; /* k.g_min: the hop's floor, from floor */
	struct gf_suppress_floor floor;
	float *h_in, *h_out; /* pinned, hop x channels interleaved */
	float *h_hum;	     /* pinned, nb: the hum's factor on the floor per bin on its way up (d_hum) */
	float *h_hum_next;   /* nb: the table gf_cu_suppress_hum took, for the next hop */
	int hum_due;	     /* h_hum_next goes up before the next hop's bins */
	float *d_hops[2];    /* the last two hops' input, interleaved */
	float *d_win, *d_seed, *d_hp, *d_hum, *d_time, *d_gain, *d_carry, *d_out, *d_mem;
	cufftComplex *d_spec;
	void *d_work; /* the plans' shared work area */
	struct bin_state st;
	cufftHandle r2c, c2r; /* from the module's plan cache (cu_pool.cu) */
	int have_r2c, have_c2r;
	int alive; /* counted among the module's live instances (gf_cu_inst_begin) */
	cudaStream_t stream;
	cudaEvent_t done;
	struct gf_errbuf eb;
};

/* ---- kernels ------------------------------------------------------------ */

/* Every channel's frame through the window: the older hop, then the newer; out channel-major. */
__global__ void k_analyse(const float *__restrict__ prev, const float *__restrict__ cur,
			  const float *__restrict__ win, float *__restrict__ time, uint32_t channels,
			  uint32_t n, uint32_t hop)
{
	size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (size_t)channels * n)
		return;
	uint32_t c = (uint32_t)(idx % channels), i = (uint32_t)(idx / channels); /* reads coalesce */
	float x = i < hop ? prev[(size_t)i * channels + c] : cur[(size_t)(i - hop) * channels + c];
	time[(size_t)c * n + i] = __fmul_rn(x, win[i]);
}

__device__ __forceinline__ float power_at(const cufftComplex *spec, uint32_t i)
{
	return __fadd_rn(__fmul_rn(spec[i].x, spec[i].x), __fmul_rn(spec[i].y, spec[i].y));
}

__device__ __forceinline__ float maxf(float a, float b)
{
	return a > b ? a : b;
}

/* The power smoothed over three bins (1/4, 1/2, 1/4), mirrored at the ends. */
__device__ __forceinline__ float smoothed_power(const cufftComplex *spec, uint32_t i, uint32_t nb)
{
	uint32_t lo = i > 0 ? i - 1 : 1, hi = i + 1 < nb ? i + 1 : nb - 2;
	float a = __fadd_rn(__fmul_rn(0.25f, power_at(spec, lo)), __fmul_rn(0.5f, power_at(spec, i)));
	return __fadd_rn(a, __fmul_rn(0.25f, power_at(spec, hi)));
}

__device__ __forceinline__ float ramp(float x, float lo, float hi)
{
	float r = __fdiv_rn(__fsub_rn(x, lo), __fsub_rn(hi, lo));
	return r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
}

/* a x + (1 - a) y, as the CPU rounds it: two products, then their sum. */
__device__ __forceinline__ float mix(float a, float x, float y)
{
	return __fadd_rn(__fmul_rn(a, x), __fmul_rn(__fsub_rn(1.0f, a), y));
}

/* suppress_bins.c's bin_gain for bin j of the state, floored at k.g_min times @p hum (the hum's factor
 * in its bins, 1 elsewhere): the same operations in the
 * same order. */
__device__ float bin_gain(const struct bin_state st, const struct gf_suppress_consts k, struct frame_flags f,
			  size_t j, float P, float Pf, float hum)
{
	float S0 = st.S[j], smin0 = st.Smin[j], stmp = st.Stmp[j], Lp = st.L[j], sold = st.Sold[j];
	if (f.first)
		S0 = smin0 = stmp = Lp = sold = maxf(Pf, GF_SUPPRESS_POWER_FLOOR);
	float S = mix(k.a_s, S0, Pf);
	float smin = maxf(fminf(smin0, S), GF_SUPPRESS_POWER_FLOOR);
	stmp = fminf(stmp, S);
	float slong = fminf(smin, sold);
	if (f.window_ends) {
		sold = smin;
		smin = maxf(stmp, GF_SUPPRESS_POWER_FLOOR);
		stmp = S;
	}
	float seen = ramp(__fdiv_rn(S, smin), GF_SUPPRESS_PRESENCE_LO, GF_SUPPRESS_PRESENCE_HI);
	seen = maxf(seen, __fmul_rn(ramp(__fdiv_rn(S, slong), GF_SUPPRESS_STEADY_LO, GF_SUPPRESS_STEADY_HI),
				    ramp(__fdiv_rn(P, Lp), GF_SUPPRESS_SNR_LO, GF_SUPPRESS_SNR_HI)));
	seen = maxf(seen, ramp(__fdiv_rn(S, slong), GF_SUPPRESS_LONG_LO, GF_SUPPRESS_LONG_HI));
	float p = mix(k.a_p, st.p[j], seen);
	float a = f.start ? f.start_a : __fadd_rn(k.a_d, __fmul_rn(__fsub_rn(1.0f, k.a_d), p));
	float L = mix(a, Lp, P);
	L = fminf(L, __fmul_rn(GF_SUPPRESS_NOISE_OVER_MIN, smin));
	L = maxf(L, hum < 1.0f ? __fmul_rn(GF_SUPPRESS_HUM_UNDER_MIN, smin)
			       : __fmul_rn(GF_SUPPRESS_NOISE_UNDER_MIN, slong));
	float snr = maxf(__fsub_rn(__fdiv_rn(P, L), 1.0f), 0.0f);
	float xi =
		__fadd_rn(__fdiv_rn(__fmul_rn(k.a_dd, st.Y2[j]), L), __fmul_rn(__fsub_rn(1.0f, k.a_dd), snr));
	xi = maxf(xi, GF_SUPPRESS_XI_MIN);
	float g = maxf(__fdiv_rn(xi, __fadd_rn(1.0f, xi)), __fmul_rn(hum, k.g_min));
	if (f.hold)
		return g;
	st.S[j] = S;
	st.Smin[j] = smin;
	st.Stmp[j] = stmp;
	st.Sold[j] = sold;
	st.p[j] = p;
	st.L[j] = L;
	st.Y2[j] = __fmul_rn(__fmul_rn(g, g), P);
	return g;
}

/* One block per channel: every bin's gain from the unscaled spectrum first (the smoothing reads
 * the neighbours), floored per bin (g_min, times the hum's factor in its bins), times the high-pass table
 * (all ones when there is none: x * 1 is x, so the output is the CPU's, which skips the product),
 * then the spectrum scaled. */
__global__ void k_bins(struct bin_state st, struct gf_suppress_consts k, struct frame_flags f,
		       const float *__restrict__ hp, const float *__restrict__ hum, cufftComplex *spec_all,
		       float *gain_all, uint32_t nb)
{
	size_t base = (size_t)blockIdx.x * nb;
	cufftComplex *spec = spec_all + base;
	float *gain = gain_all + base;
	for (uint32_t i = threadIdx.x; i < nb; i += blockDim.x)
		gain[i] = __fmul_rn(
			bin_gain(st, k, f, base + i, power_at(spec, i), smoothed_power(spec, i, nb), hum[i]),
			hp[i]);
	__syncthreads();
	for (uint32_t i = threadIdx.x; i < nb; i += blockDim.x) {
		spec[i].x = __fmul_rn(spec[i].x, gain[i]);
		spec[i].y = __fmul_rn(spec[i].y, gain[i]);
	}
}

/* The synthesis window and the overlap-add (suppress.c's frame(): ola[i] += time[i] * win[i] *
 * scale): the first half finishes the hop, written interleaved; the second half is carried. */
__global__ void k_synth(const float *__restrict__ time, const float *__restrict__ win,
			float *__restrict__ carry, float *__restrict__ out, uint32_t channels, uint32_t n,
			uint32_t hop, float scale)
{
	size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (size_t)channels * hop)
		return;
	uint32_t c = (uint32_t)(idx % channels), i = (uint32_t)(idx / channels); /* writes coalesce */
	const float *t = time + (size_t)c * n;
	size_t h = (size_t)c * hop + i;
	out[idx] = __fadd_rn(carry[h], __fmul_rn(__fmul_rn(t[i], win[i]), scale));
	carry[h] = __fadd_rn(0.0f, __fmul_rn(__fmul_rn(t[hop + i], win[hop + i]), scale));
}

/* The state new() and reset() start from (suppress_bins.c's reset): the seed's powers, or zeros
 * that the first frame overwrites. */
__global__ void k_reset(struct bin_state st, const float *__restrict__ seed, uint32_t channels, uint32_t nb)
{
	size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= (size_t)channels * nb)
		return;
	float v = 0.0f;
	if (seed) {
		float s = seed[j % nb];
		v = s > GF_SUPPRESS_POWER_FLOOR ? s : GF_SUPPRESS_POWER_FLOOR;
	}
	st.S[j] = st.Smin[j] = st.Stmp[j] = st.L[j] = st.Sold[j] = v;
	st.p[j] = st.Y2[j] = 0.0f;
}

/* ---- setup -------------------------------------------------------------- */

static unsigned blocks_for(size_t items)
{
	return (unsigned)((items + THREADS - 1) / THREADS);
}

static float *carve(float **m, size_t count)
{
	float *p = *m;
	*m += count;
	return p;
}

/* One device block for every float array (the spectrum apart: cufftComplex has its own alignment)
 * and the pinned hops, from the module's stream-ordered pool and pinned cache (cu_pool.cu): a
 * suppressor is built and freed while another instance streams, where cudaFree and cudaFreeHost
 * would stall it, or never return behind a persistent kernel (docs/cuda.md). */
static int alloc_device(struct gf_cu_suppress *s)
{
	size_t C = s->channels, hopc = C * s->hop, binc = C * s->nb;
	size_t floats = 4 * hopc + s->n + 3 * s->nb + C * s->n + binc * (1 + GF_SUPPRESS_BIN_ARRAYS);
	GF_RET(gf_cu_dmalloc((void **)&s->d_mem, floats * sizeof(float), s->stream, &s->eb));
	float *m = s->d_mem;
	s->d_time = carve(&m, C * s->n); /* first: cuFFT's input on the allocation's alignment */
	s->d_hops[0] = carve(&m, hopc);
	s->d_hops[1] = carve(&m, hopc);
	s->d_carry = carve(&m, hopc);
	s->d_out = carve(&m, hopc);
	s->d_win = carve(&m, s->n);
	s->d_seed = carve(&m, s->nb);
	s->d_hp = carve(&m, s->nb);
	s->d_hum = carve(&m, s->nb);
	s->d_gain = carve(&m, binc);
	float **state[] = {&s->st.S, &s->st.Smin, &s->st.Stmp, &s->st.p, &s->st.L, &s->st.Y2, &s->st.Sold};
	static_assert(sizeof(state) / sizeof(state[0]) == GF_SUPPRESS_BIN_ARRAYS, "one pointer per array");
	for (int i = 0; i < GF_SUPPRESS_BIN_ARRAYS; i++)
		*state[i] = carve(&m, binc);
	GF_RET(gf_cu_dmalloc((void **)&s->d_spec, binc * sizeof(cufftComplex), s->stream, &s->eb));
	GF_RET(gf_cu_halloc((void **)&s->h_in, hopc * sizeof(float), cudaHostAllocDefault, &s->eb));
	GF_RET(gf_cu_halloc((void **)&s->h_out, hopc * sizeof(float), cudaHostAllocDefault, &s->eb));
	GF_RET(gf_cu_halloc((void **)&s->h_hum, s->nb * sizeof(float), cudaHostAllocDefault, &s->eb));
	/* stream-ordered on s->stream: in place before take_shape's copies on the legacy stream */
	CU_RET(&s->eb, cudaStreamSynchronize(s->stream));
	if (!(s->h_owed = (float *)calloc(hopc, sizeof(float))) ||
	    !(s->h_hum_next = (float *)calloc(s->nb, sizeof(float))))
		return GF_E_NOMEM;
	return 0;
}

/* One batched plan each way (every channel's frame in one call), packed, from the module's plan
 * cache: a new plan waits for the device's kernels, a cached one is a reload's without a wait. The
 * two run one after the other on s->stream, so they share one work area. */
static int make_plans(struct gf_cu_suppress *s)
{
	size_t ws_a = 0, ws_b = 0;
	int made_a = 0, made_b = 0;
	GF_RET(gf_cu_plan_get(&s->r2c, &ws_a, s->device, s->n, s->channels, CUFFT_R2C, &made_a, &s->eb));
	s->have_r2c = 1;
	GF_RET(gf_cu_plan_get(&s->c2r, &ws_b, s->device, s->n, s->channels, CUFFT_C2R, &made_b, &s->eb));
	s->have_c2r = 1;
	size_t ws = ws_a > ws_b ? ws_a : ws_b;
	if (ws)
		GF_RET(gf_cu_dmalloc(&s->d_work, ws, s->stream, &s->eb));
	CUFFT_RET(&s->eb, cufftSetWorkArea(s->r2c, s->d_work));
	CUFFT_RET(&s->eb, cufftSetWorkArea(s->c2r, s->d_work));
	CUFFT_RET(&s->eb, cufftSetStream(s->r2c, s->stream));
	CUFFT_RET(&s->eb, cufftSetStream(s->c2r, s->stream));
	/* A new plan's set-up may have queued work on the legacy stream, which s->stream does not wait
	 * for (as in gf_cu_fft_new). */
	if (made_a || made_b)
		CU_RET(&s->eb, cudaStreamSynchronize(cudaStreamLegacy));
	return 0;
}

/* The host's shape (the CPU suppressor's frame, constants, window, seed and high-pass table), copied to
 * the device; no table is a table of ones. The hum table starts at 1 in every bin (no hum). */
static int take_shape(struct gf_cu_suppress *s, const struct gf_suppress_shape *sh)
{
	s->n = sh->n;
	s->hop = sh->hop;
	s->nb = sh->nb;
	s->k = sh->k;
	gf_suppress_floor_init(&s->floor, sh->k.g_min);
	s->seeded = sh->seed != NULL;
	s->scale = 1.0f / (float)s->n; /* as suppress.c scales FFTW's unnormalised inverse */
	GF_RET(alloc_device(s));
	CU_RET(&s->eb, cudaMemcpy(s->d_win, sh->win, s->n * sizeof(float), cudaMemcpyHostToDevice));
	if (sh->seed)
		CU_RET(&s->eb,
		       cudaMemcpy(s->d_seed, sh->seed, s->nb * sizeof(float), cudaMemcpyHostToDevice));
	float *ones = (float *)malloc(s->nb * sizeof(float));
	if (!ones)
		return GF_E_NOMEM;
	for (uint32_t i = 0; i < s->nb; i++)
		ones[i] = 1.0f;
	cudaError_t e = cudaMemcpy(s->d_hp, sh->highpass ? sh->highpass : ones, s->nb * sizeof(float),
				   cudaMemcpyHostToDevice);
	if (e == cudaSuccess)
		e = cudaMemcpy(s->d_hum, ones, s->nb * sizeof(float), cudaMemcpyHostToDevice);
	free(ones);
	CU_RET(&s->eb, e);
	/* These copies ran on the legacy stream, which s->stream (non-blocking) does not wait for, and a
	 * copy from pageable memory may return before its DMA lands: landed before the first hop, as in
	 * dfn_gpu_new. The legacy stream alone: no other instance's stream is waited for. */
	CU_RET(&s->eb, cudaStreamSynchronize(cudaStreamLegacy));
	return 0;
}

/* What the host could get wrong: the kernels index by these. */
static int check_shape(struct gf_cu_suppress *s, const struct gf_suppress_shape *sh)
{
	if (!s->channels || !sh || !sh->win || sh->n < 4 || sh->hop * 2 != sh->n || sh->nb != sh->n / 2 + 1 ||
	    !sh->k.min_window) {
		gf_errbuf_set(&s->eb, "suppress: %s",
			      s->channels ? "bad shape" : "0 channels: need at least one");
		return GF_E_INVAL;
	}
	return 0;
}

static int open_device(struct gf_cu_suppress *s, int device)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess || device < 0 || device >= count) {
		(void)cudaGetLastError();
		gf_errbuf_set(&s->eb, "suppress: no CUDA device %d", device);
		return GF_E_NOGPU;
	}
	s->device = device;
	CU_RET(&s->eb, cudaSetDevice(device));
	GF_RET(gf_cu_pool_init(device, &s->eb)); /* freed device memory stays reserved */
	gf_cu_inst_begin(); /* what the caches retire meanwhile waits for our end (free) */
	s->alive = 1;
	CU_RET(&s->eb, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
	CU_RET(&s->eb, cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
	return 0;
}

/* ---- a hop -------------------------------------------------------------- */

static struct frame_flags flags_for(const struct gf_cu_suppress *s)
{
	struct frame_flags f;
	f.first = s->frames == 0 && !s->seeded;
	f.start = !s->seeded && s->frames < s->k.start_frames;
	f.window_ends = (s->frames + 1) % s->k.min_window == 0;
	f.start_a = (float)s->frames / (float)(s->frames + 1);
	f.hold = s->hold > 0;
	return f;
}

/* Enqueue the hop in h_in through every step, its output into h_out, then the event. */
static int enqueue_hop(struct gf_cu_suppress *s)
{
	size_t C = s->channels, hopc = C * s->hop;
	unsigned cur = s->cur ^ 1u; /* the older hop's buffer takes the newest */
	if (s->hum_due) {	    /* no hop is in flight here (collected first): h_hum is free to refill */
		memcpy(s->h_hum, s->h_hum_next, s->nb * sizeof(float));
		CU_RET(&s->eb, cudaMemcpyAsync(s->d_hum, s->h_hum, s->nb * sizeof(float),
					       cudaMemcpyHostToDevice, s->stream));
		s->hum_due = 0;
	}
	CU_RET(&s->eb, cudaMemcpyAsync(s->d_hops[cur], s->h_in, hopc * sizeof(float), cudaMemcpyHostToDevice,
				       s->stream));
	k_analyse<<<blocks_for(C * s->n), THREADS, 0, s->stream>>>(
		s->d_hops[cur ^ 1u], s->d_hops[cur], s->d_win, s->d_time, s->channels, s->n, s->hop);
	CU_LAUNCHED(&s->eb);
	CUFFT_RET(&s->eb, cufftExecR2C(s->r2c, s->d_time, s->d_spec));
	struct frame_flags f = flags_for(s);
	s->k.g_min = gf_suppress_floor_next(&s->floor); /* the live depth, ramped as the CPU does */
	k_bins<<<s->channels, THREADS, 0, s->stream>>>(s->st, s->k, f, s->d_hp, s->d_hum, s->d_spec,
						       s->d_gain, s->nb);
	CU_LAUNCHED(&s->eb);
	CUFFT_RET(&s->eb, cufftExecC2R(s->c2r, s->d_spec, s->d_time));
	k_synth<<<blocks_for(hopc), THREADS, 0, s->stream>>>(s->d_time, s->d_win, s->d_carry, s->d_out,
							     s->channels, s->n, s->hop, s->scale);
	CU_LAUNCHED(&s->eb);
	CU_RET(&s->eb,
	       cudaMemcpyAsync(s->h_out, s->d_out, hopc * sizeof(float), cudaMemcpyDeviceToHost, s->stream));
	CU_RET(&s->eb, cudaEventRecord(s->done, s->stream));
	s->cur = cur;
	s->held = f.hold;
	s->hold -= s->hold > 0;
	return 0;
}

/* The hop in flight, waited for until @p deadline_ns (0: none) or until it counts as hung, whichever
 * is first: 0 (back), GF_SUPPRESS_GPU_LATE (not yet, not hung), GF_E_TIMEOUT (hung) or GF_E_CUDA. */
static int collect(struct gf_cu_suppress *s, uint64_t deadline_ns)
{
	uint64_t hung = s->pending_since + GF_SUPPRESS_GPU_HOP_WAIT_NS;
	int err =
		gf_cu_wait_event_eb(s->done, deadline_ns && deadline_ns < hung ? deadline_ns : hung, &s->eb);
	if (err == GF_E_TIMEOUT && gf_now_ns() < hung)
		return GF_SUPPRESS_GPU_LATE;
	if (err)
		return err;
	s->pending = 0;
	if ((!s->held || s->frames > 0 || s->seeded) && s->frames < UINT32_MAX) /* as suppress_bins.c */
		s->frames++;
	return 0;
}

/* A full hop: run it and wait for its output until @p deadline_ns; collect()'s answer. */
static int run_hop(struct gf_cu_suppress *s, uint64_t deadline_ns)
{
	GF_RET(enqueue_hop(s));
	s->pending = 1;
	s->pending_since = gf_now_ns();
	return collect(s, deadline_ns);
}

/* ---- the C API ---------------------------------------------------------- */

extern "C" int gf_cu_suppress_reset(void *inst)
{
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)inst;
	size_t hopc = (size_t)s->channels * s->hop;
	CU_RET(&s->eb, cudaSetDevice(s->device));
	if (s->pending)
		GF_RET(gf_cu_wait_event_eb(s->done, gf_now_ns() + PENDING_WAIT_NS, &s->eb));
	k_reset<<<blocks_for((size_t)s->channels * s->nb), THREADS, 0, s->stream>>>(
		s->st, s->seeded ? s->d_seed : NULL, s->channels, s->nb);
	CU_LAUNCHED(&s->eb);
	for (int i = 0; i < 2; i++)
		CU_RET(&s->eb, cudaMemsetAsync(s->d_hops[i], 0, hopc * sizeof(float), s->stream));
	CU_RET(&s->eb, cudaMemsetAsync(s->d_carry, 0, hopc * sizeof(float), s->stream));
	CU_RET(&s->eb, cudaEventRecord(s->done, s->stream));
	GF_RET(gf_cu_wait_event_eb(s->done, gf_now_ns() + SETUP_WAIT_NS, &s->eb));
	memset(s->h_in, 0, hopc * sizeof(float));
	memset(s->h_out, 0, hopc * sizeof(float));
	s->pos = 0;
	s->frames = 0;
	s->hold = 0;
	s->held = 0;
	s->failed = 0;
	s->pending = 0;
	s->owed = s->repaid = 0;
	gf_suppress_floor_init(&s->floor, s->floor.target); /* a new stream: no ramp, as the CPU's */
	s->eb.msg[0] = '\0';
	return 0;
}

extern "C" void gf_cu_suppress_set_floor(void *inst, float g)
{
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)inst;
	gf_suppress_floor_set(&s->floor, g, s->k.ramp_frames);
}

/* One hop of silence through every step, so that process() finds the kernels and cuFFT's loaded;
 * reset() then forgets it. */
static int warm_up(struct gf_cu_suppress *s)
{
	GF_RET(gf_cu_suppress_reset(s));
	GF_RET(enqueue_hop(s));
	GF_RET(gf_cu_wait_event_eb(s->done, gf_now_ns() + SETUP_WAIT_NS, &s->eb));
	return gf_cu_suppress_reset(s);
}

extern "C" int gf_cu_suppress_new(const struct gf_suppress_shape *sh, uint32_t channels, int device,
				  void **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)calloc(1, sizeof(*s));
	if (!s)
		return GF_E_NOMEM;
	s->channels = channels;
	int err = check_shape(s, sh);
	err = err ? err : open_device(s, device);
	err = err ? err : take_shape(s, sh);
	err = err ? err : make_plans(s);
	err = err ? err : warm_up(s);
	if (err) {
		if (eb)
			gf_errbuf_set(eb, "%s", s->eb.msg);
		gf_cu_suppress_free(s);
		return err;
	}
	*out = s;
	return 0;
}

extern "C" void gf_cu_suppress_free(void *inst)
{
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)inst;
	if (!s)
		return;
	if (s->stream) { /* nothing freed under work still running; a hung GPU leaks instead */
		(void)cudaSetDevice(s->device);
		if (gf_cu_stream_idle_by(s->stream, gf_now_ns() + SETUP_WAIT_NS) != 0)
			return;
	}
	if (s->have_r2c)
		gf_cu_plan_put(s->r2c);
	if (s->have_c2r)
		gf_cu_plan_put(s->c2r);
	gf_cu_dfree(s->d_work, s->stream);
	gf_cu_dfree(s->d_mem, s->stream);
	gf_cu_dfree(s->d_spec, s->stream);
	gf_cu_hfree(s->h_in);
	gf_cu_hfree(s->h_out);
	gf_cu_hfree(s->h_hum);
	free(s->h_owed);
	free(s->h_hum_next);
	if (s->done)
		cudaEventDestroy(s->done);
	if (s->stream)
		cudaStreamDestroy(s->stream);
	if (s->alive)
		gf_cu_inst_end();
	free(s);
}

/* Taken here, sent up by the next hop (enqueue_hop): a hop in flight may still read h_hum. */
extern "C" void gf_cu_suppress_hum(void *inst, const float *hum)
{
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)inst;
	for (uint32_t i = 0; i < s->nb; i++)
		s->h_hum_next[i] = hum ? hum[i] : 1.0f;
	s->hum_due = 1;
}

extern "C" const char *gf_cu_suppress_error(const void *inst)
{
	return ((const struct gf_cu_suppress *)inst)->eb.msg;
}

/* @p count samples of @p from into @p to, each NaN or Inf as 0: 1 when there was one. Two plain
 * loops the compiler vectorises: this copy is the host's whole share of a hop's work, and at
 * thousands of channels it is what bounds the GPU suppressor (bench_suppress's "copy chRT"). */
static int copy_finite(float *__restrict__ to, const float *__restrict__ from, size_t count)
{
	unsigned bad = 0;
	for (size_t i = 0; i < count; i++) {
		uint32_t bits;
		memcpy(&bits, &from[i], sizeof(bits));
		unsigned inf_nan = (bits & 0x7f800000u) == 0x7f800000u;
		bad |= inf_nan;
		to[i] = inf_nan ? 0.0f : from[i];
	}
	return bad != 0;
}

/* Exchange @p take frames at @p buf (@p stride floats a frame, the channels first in each) with
 * the current hop's: input in (@p buf NULL: the owed frames from repaid on), the previous frame's
 * output out (or dropped). A NaN or Inf is missing input: 0 and a hold of the two frames holding
 * it, as the CPU does (suppress.h). */
static void exchange(struct gf_cu_suppress *s, float *buf, uint32_t stride, uint32_t take)
{
	size_t C = s->channels, at = (size_t)s->pos * C, count = (size_t)take * C;
	if (!buf) {
		size_t o = (size_t)s->repaid * C, cap = (size_t)s->hop * C;
		size_t kept =
			o < cap ? (cap - o < count ? cap - o : count) : 0; /* past the first hop: silence */
		if (copy_finite(s->h_in + at, s->h_owed + o, kept))
			s->hold = 2;
		memset(s->h_in + at + kept, 0, (count - kept) * sizeof(float));
		return;
	}
	if (stride == C) { /* the whole interleave: one run each way */
		if (copy_finite(s->h_in + at, buf, count))
			s->hold = 2;
		if (s->failed)
			memset(buf, 0, count * sizeof(float));
		else
			memcpy(buf, s->h_out + at, count * sizeof(float));
		return;
	}
	int bad = 0;
	for (uint32_t f = 0; f < take; f++) {
		float *row = buf + (size_t)f * stride;
		bad |= copy_finite(s->h_in + at + f * C, row, C);
		if (s->failed)
			memset(row, 0, C * sizeof(float));
		else
			memcpy(row, s->h_out + at + f * C, C * sizeof(float));
	}
	if (bad)
		s->hold = 2;
}

/* @p frames frames at @p buf (@p stride floats a frame) taken while a hop is in flight (h_in and
 * h_out are the GPU's): their input kept for later (the first hop of it), their output silence. */
static void owe(struct gf_cu_suppress *s, float *buf, uint32_t stride, uint32_t frames)
{
	size_t C = s->channels, cap = (size_t)s->hop * C;
	for (uint32_t f = 0; f < frames; f++) {
		float *row = buf + (size_t)f * stride;
		size_t o = ((size_t)s->owed + f) * C;
		if (o < cap)
			memcpy(s->h_owed + o, row,
			       C * sizeof(float)); /* a NaN kept: it holds the frames once fed */
		memset(row, 0, C * sizeof(float));
	}
	s->owed = s->owed + frames > s->owed ? s->owed + frames : UINT32_MAX;
}

/* Feed the owed frames (@p buf NULL) or @p frames of @p buf through the hops, each collected by
 * @p deadline_ns; frames that come after a late hop are owed. collect()'s answer. */
static int feed(struct gf_cu_suppress *s, float *buf, uint32_t stride, uint32_t frames, uint64_t deadline_ns)
{
	for (uint32_t done = 0; done < frames;) {
		uint32_t take = s->hop - s->pos;
		if (take > frames - done)
			take = frames - done;
		exchange(s, buf ? buf + (size_t)done * stride : NULL, stride, take);
		s->pos += take;
		done += take;
		if (!buf)
			s->repaid += take;
		if (s->pos < s->hop)
			continue;
		s->pos = 0;
		int err = run_hop(s, deadline_ns); /* 0: until hung */
		if (err == GF_SUPPRESS_GPU_LATE && buf)
			owe(s, buf + (size_t)done * stride, stride, frames - done);
		if (err)
			return err;
	}
	return 0;
}

/* The hop in flight back and the frames owed since fed: 0, or collect()'s answer. */
static int catch_up(struct gf_cu_suppress *s, uint64_t deadline_ns)
{
	if (s->pending)
		GF_RET(collect(s, deadline_ns));
	while (s->repaid < s->owed) /* one hop at a time: a late one leaves the rest owed */
		GF_RET(feed(s, NULL, s->channels, s->owed - s->repaid < s->hop ? s->owed - s->repaid : s->hop,
			    deadline_ns));
	s->owed = s->repaid = 0;
	return 0;
}

/* Late (GF_SUPPRESS_GPU_LATE) is no failure: the frames after the late hop are silence and owed, the
 * hop stays in flight, and the next call collects it before it takes any frame. A hop in flight for
 * GF_SUPPRESS_GPU_HOP_WAIT_NS is hung: a failure (GF_E_TIMEOUT), as an error (GF_E_CUDA) is. */
extern "C" int gf_cu_suppress_process(void *inst, float *buf, uint32_t stride, uint32_t frames,
				      uint64_t deadline_ns)
{
	struct gf_cu_suppress *s = (struct gf_cu_suppress *)inst;
	if (!s->failed && cudaSetDevice(s->device) != cudaSuccess) { /* the thread's device: cheap once set */
		(void)cudaGetLastError();
		gf_errbuf_set(&s->eb, "suppress: cannot select CUDA device %d", s->device);
		s->failed = GF_E_CUDA;
	}
	int err = s->failed ? s->failed : catch_up(s, deadline_ns);
	if (err == GF_SUPPRESS_GPU_LATE) {
		owe(s, buf, stride, frames);
		return err;
	}
	if (!err)
		err = feed(s, buf, stride, frames, deadline_ns);
	if (err < 0 && !s->failed)
		s->failed = err;
	for (uint32_t f = 0; s->failed && f < frames; f++)
		memset(buf + (size_t)f * stride, 0, s->channels * sizeof(float));
	return err;
}
