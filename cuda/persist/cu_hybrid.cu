/*
 * The persistent path of an FFT instance: the zero-latency head of a long
 * filter runs in the persistent kernel (cu_persist.cu), the rest a segment
 * ahead of need on a side stream (a non-uniform partition, as low-latency
 * convolvers split a filter):
 *
 *  - With partition P (UPOLS, cu_fft.cu), output segment s is
 *    IFFT(sum_j H_j X_{s-j}). Partitions 0 and 1 (taps [0, 2P)) read the
 *    segment being filled; partitions j >= 2 read only segments completed
 *    before s-1 began. So the kernel convolves taps [0, 2P) directly, and
 *    the tail y_T(s) = IFFT(sum_{j>=2} H_j X_{s-j}) of segment s is formed
 *    while segment s-1 plays: a whole segment (P >= 2 blocks) ahead.
 *  - The kernel keeps every frame it processes in a device ring (line).
 *    When a call completes segment k, the audio thread hands k to the
 *    instance's launcher thread (a store into a lock-free queue, nothing
 *    more) and launches nothing itself: launches cost microseconds each,
 *    cuFFT's tens, which made 1 call in 16-32 late by that much. Nor does it
 *    wake the launcher: a semaphore post there (a futex wake) was the call
 *    that completes a segment in 30 of the slowest 50 of 5000 blocks. The
 *    launcher polls the queue eight times a segment instead. It enqueues on
 *    the side stream: the window of k from the ring, its R2C into the FFT's
 *    spectrum ring, the MAC of partitions 2..M-1 for segment k+2, the C2R,
 *    and the scatter of its P output frames into the tail ring, whose one
 *    block then sets a host-mapped word: tails are ready below k+3.
 *  - The kernel adds tail[frame] to each output in its final, fixed-order
 *    sum: deterministic, like the rest of it.
 *  - A call whose segment's tail is not ready yet is posted in finish, once
 *    it is, within the block's deadline (a missed one leaves the call
 *    deferred, as any late call: a later finish posts and collects it).
 *  - Handover (another instance is built on the device): the staged line is
 *    loaded at the same stream position, and the spectrum ring holds every
 *    completed segment, so the staged FFT path goes on once the tails are
 *    summed ahead as a prime leaves them (enqueued: O(M) MACs).
 * Work on the side stream is ordered against s_comp by events, and only
 * prime, reset and handover (control thread, or the audio thread between
 * calls) cross between them, each after a drain: the caller launches what
 * the launcher has not claimed, and waits (bounded) only for a launch in hand.
 * A launcher that does not end at free is abandoned with what it may touch.
 * The launcher thread is in cu_hybrid_launcher.cu, the shared state in
 * cu_hybrid.cuh.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "cu_hybrid.cuh"

/* A live shape (tails summed ahead: M > 2, N = 2P) whose partition spans two blocks or more;
 * whether the kernel can hold the head, gf_cu_persist_fits says. */
int gf_cu_hybrid_fits(const struct gf_cu_inst *in)
{
	const struct gf_cu_fft *f = in->fft;
	return f && f->d_A && f->B >= 2 * in->max_block;
}

/* W[c*N + i] = x_c[t0 + i] from the line ring (zero before the stream's start). */
__global__ void k_hy_gather(float *__restrict__ W, const float *__restrict__ line, uint32_t RL, int64_t t0,
			    uint32_t N, uint32_t C)
{
	const uint32_t c = blockIdx.x;
	for (uint32_t i = blockIdx.y * blockDim.x + threadIdx.x; i < N; i += gridDim.y * blockDim.x) {
		int64_t t = t0 + i;
		W[(size_t)c * N + i] = t < 0 ? 0.0f : line[(size_t)((uint64_t)t & (RL - 1)) * C + c];
	}
}

/* Y = sum_{j=2}^{M-1} H_j X_{s-j}, s at ring slot @p slot. */
__global__ void k_hy_mac(cufftComplex *__restrict__ Y, const cufftComplex *__restrict__ H,
			 const cufftComplex *__restrict__ X, uint32_t NB, uint32_t C, uint32_t M, uint32_t Mr,
			 int slot)
{
	const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x, c = blockIdx.y;
	if (f >= NB)
		return;
	const uint64_t cs = (uint64_t)C * NB, off = (uint64_t)c * NB + f;
	Y[off] = mac_range(make_float2(0.0f, 0.0f), H, X, cs, off, slot, Mr, 0, M - 2);
}

/* tail[frame s*P + m] = y[c*N + P + m]; one block, which then sets *ready (host-mapped) when given. */
__global__ void k_hy_scatter(float *__restrict__ tail, uint32_t RT, const float *__restrict__ y, int64_t t0,
			     uint32_t P, uint32_t N, uint32_t C, unsigned *ready, unsigned value)
{
	for (uint32_t i = threadIdx.x; i < P * C; i += blockDim.x) {
		uint32_t m = i / C, c = i - m * C;
		tail[(size_t)((uint64_t)(t0 + m) & (RT - 1)) * C + c] = y[(size_t)c * N + P + m];
	}
	if (ready) { /* the tail, before the word the host reads */
		__threadfence_system();
		__syncthreads();
		if (threadIdx.x == 0)
			*(volatile unsigned *)ready = value;
	}
}

__global__ void k_hy_mark(unsigned *ready, unsigned value)
{
	__threadfence_system();
	*(volatile unsigned *)ready = value;
}

/* line[(t & (RL-1))*C + c] = hist[t*C + c] for the newest min(n, RL) of n frames. */
__global__ void k_hy_line_load(float *__restrict__ line, uint32_t RL, const float *__restrict__ hist, uint32_t n,
			       uint32_t C)
{
	const uint32_t first = n > RL ? n - RL : 0;
	for (uint64_t i = (uint64_t)first * C + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (uint64_t)n * C;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t t = i / C, c = i - t * C;
		line[(t & (RL - 1)) * C + c] = hist[i];
	}
}

/* @p waiter runs nothing enqueued from now on before what @p on holds so far. */
static int join(cudaStream_t waiter, cudaStream_t on, cudaEvent_t ev, struct gf_errbuf *eb)
{
	CU_RET(eb, cudaEventRecord(ev, on));
	CU_RET(eb, cudaStreamWaitEvent(waiter, ev, 0));
	return 0;
}

/* Y = the tail's spectrum of segment s (>= 0; the ring's slots of segments before the stream's
 * first are zero). */
static int launch_mac(struct gf_cu_hybrid *h, int64_t s, struct gf_errbuf *eb)
{
	const struct gf_cu_fft *f = h->f;
	k_hy_mac<<<dim3((f->NB + 127) / 128, f->C), 128, 0, h->s>>>(h->d_Y, f->d_H, f->d_X, f->NB, f->C, f->M, f->Mr,
								     (int)(s % f->Mr));
	CU_LAUNCHED(eb);
	return 0;
}

/* Its inverse transform's P output frames into the tail ring; with @p ready, set it to @p value after. */
static int launch_scatter(struct gf_cu_hybrid *h, int64_t s, unsigned *ready, unsigned value, struct gf_errbuf *eb)
{
	const struct gf_cu_fft *f = h->f;
	k_hy_scatter<<<1, 1024, 0, h->s>>>(h->d_tail, h->RT, h->d_y, s * f->B, f->B, f->N, f->C, ready, value);
	CU_LAUNCHED(eb);
	return 0;
}

/* Segment s's tail output, whole. */
static int tail_of(struct gf_cu_hybrid *h, int64_t s, unsigned *ready, unsigned value, struct gf_errbuf *eb)
{
	GF_RET(launch_mac(h, s, eb));
	CUFFT_RET(eb, cufftExecC2R(h->c2r, h->d_Y, h->d_y));
	return launch_scatter(h, s, ready, value, eb);
}

/* Segment k is complete in the line ring: its spectrum into the ring, then segment k+2's tail. */
int gf_cu_hybrid_chain(struct gf_cu_hybrid *h, int64_t k, struct gf_errbuf *eb)
{
	const struct gf_cu_fft *f = h->f;
	k_hy_gather<<<dim3(f->C, (f->N + 1023) / 1024), 256, 0, h->s>>>(h->d_W, h->d_line, h->RL, k * f->B - f->B,
									 f->N, f->C);
	CU_LAUNCHED(eb);
	CUFFT_RET(eb, cufftExecR2C(h->r2c, h->d_W, f->d_X + (size_t)(k % f->Mr) * f->C * f->NB));
	return tail_of(h, k + 2, h->h_ready, (unsigned)(k + 3), eb);
}

/* GPUFIR_CUDA_HANG_AFTER with GPUFIR_CUDA_HANG_WHERE=tail: what runs next on the side stream
 * waits for this spin (bounded, and ended by the flag at free). */
__global__ void k_hy_stall(const volatile int *flag, long long cycles)
{
	long long t0 = clock64();
	while (!*flag && clock64() - t0 < cycles) {
	}
}

int gf_cu_hybrid_stall_if_asked(struct gf_cu_hybrid *h, struct gf_errbuf *eb)
{
	const volatile int *flag = __atomic_exchange_n(&h->d_stall, NULL, __ATOMIC_ACQUIRE);
	if (flag) {
		k_hy_stall<<<1, 1, 0, h->s>>>(flag, h->stall_cycles);
		CU_LAUNCHED(eb);
	}
	return 0;
}

static int plans(struct gf_cu_hybrid *h, struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	size_t ws_a = 0, ws_b = 0;
	int made_a = 0, made_b = 0;
	GF_RET(gf_cu_plan_get(&h->r2c, &ws_a, in->dev, h->f->N, h->f->C, CUFFT_R2C, &made_a, eb));
	h->have_r2c = 1;
	GF_RET(gf_cu_plan_get(&h->c2r, &ws_b, in->dev, h->f->N, h->f->C, CUFFT_C2R, &made_b, eb));
	h->have_c2r = 1;
	size_t ws = ws_a > ws_b ? ws_a : ws_b;
	if (ws)
		GF_RET(gf_cu_dmalloc(&h->d_work, ws, in->s_comp, eb));
	CUFFT_RET(eb, cufftSetWorkArea(h->r2c, h->d_work));
	CUFFT_RET(eb, cufftSetWorkArea(h->c2r, h->d_work));
	CUFFT_RET(eb, cufftSetStream(h->r2c, h->s));
	CUFFT_RET(eb, cufftSetStream(h->c2r, h->s));
	/* A new plan's set-up may have queued work on the legacy stream (as in gf_cu_fft_new). */
	if (made_a || made_b)
		CU_RET(eb, cudaStreamSynchronize(cudaStreamLegacy));
	return 0;
}

static int hy_alloc(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		    struct gf_errbuf *eb)
{
	const struct gf_cu_fft *f = h->f;
	const uint32_t C = f->C, head = 2 * f->B;
	cudaStream_t s = in->s_comp;
	int lo = 0, hi = 0;
	CU_RET(eb, cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CU_RET(eb, cudaStreamCreateWithPriority(&h->s, cudaStreamNonBlocking, lo));
	CU_RET(eb, cudaEventCreateWithFlags(&h->ev_side, cudaEventDisableTiming));
	CU_RET(eb, cudaEventCreateWithFlags(&h->ev_comp, cudaEventDisableTiming));
	GF_RET(gf_cu_dmalloc((void **)&h->d_head, (size_t)C * head * sizeof(float), s, eb));
	GF_RET(gf_cu_dmalloc((void **)&h->d_line, (size_t)h->RL * C * sizeof(float), s, eb));
	GF_RET(gf_cu_dmalloc((void **)&h->d_tail, (size_t)h->RT * C * sizeof(float), s, eb));
	GF_RET(gf_cu_dmalloc((void **)&h->d_W, (size_t)C * f->N * sizeof(float), s, eb));
	GF_RET(gf_cu_dmalloc((void **)&h->d_y, (size_t)C * f->N * sizeof(float), s, eb));
	GF_RET(gf_cu_dmalloc((void **)&h->d_Y, (size_t)C * f->NB * sizeof(cufftComplex), s, eb));
	GF_RET(gf_cu_halloc((void **)&h->h_ready, sizeof(unsigned), cudaHostAllocMapped, eb));
	*h->h_ready = 0;
	GF_RET(plans(h, in, eb));
	/* The head: each channel's first 2P taps (the filter is longer: M > 2). fs is the
	 * caller's: the copy is done before create returns (gf_cu_persist_new synchronizes s_comp). */
	CU_RET(eb, cudaMemcpy2DAsync(h->d_head, head * sizeof(float), fs->coeffs, fs->taps * sizeof(float),
				     head * sizeof(float), C, cudaMemcpyHostToDevice, s));
	return 0;
}

/*
 * Every kernel of the chain (ours and cuFFT's) runs once before the persistent
 * kernel starts. CUDA loads a kernel's code at its first launch (lazy loading,
 * the default since CUDA 12.2), and that load waits for the kernels running on
 * the device: behind a resident persistent kernel it never ended (the first
 * chain missed its deadline in every case, H200, CUDA 13). What this writes
 * is garbage the reset then clears.
 */
static int warm_up(struct gf_cu_hybrid *h, struct gf_errbuf *eb)
{
	k_hy_gather<<<dim3(h->f->C, 1), 256, 0, h->s>>>(h->d_W, h->d_line, h->RL, 0, h->f->N, h->f->C);
	CU_LAUNCHED(eb);
	CUFFT_RET(eb, cufftExecR2C(h->r2c, h->d_W, h->d_Y));
	GF_RET(tail_of(h, 0, h->h_ready, 0, eb));
	k_hy_line_load<<<1, 256, 0, h->s>>>(h->d_line, h->RL, h->d_W, 0, h->f->C);
	CU_LAUNCHED(eb);
	k_hy_mark<<<1, 1, 0, h->s>>>(h->h_ready, 0);
	CU_LAUNCHED(eb);
	return 0;
}

int gf_cu_hybrid_new(struct gf_cu_hybrid **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		     struct gf_errbuf *eb)
{
	struct gf_cu_hybrid *h = (struct gf_cu_hybrid *)calloc(1, sizeof(*h));
	if (!h) {
		gf_errbuf_set(eb, "cuda: out of host memory");
		return GF_E_NOMEM;
	}
	struct gf_cu_fft *f = in->fft;
	h->f = f;
	/* The line: a chain reads segment k's window [kP-P, kP+P) while the kernel writes
	 * frames up to (k+2)P. The tail: segments s, s+1 and s+2 at once. */
	h->RL = 4 * f->B;
	h->RT = 4 * f->B;
	h->dev = in->dev;
	int err = hy_alloc(h, in, fs, eb);
	if (!err)
		err = warm_up(h, eb);
	if (!err)
		err = gf_cu_hybrid_reset(h, in, eb);
	if (!err && pthread_create(&h->thr, NULL, gf_cu_hybrid_launcher_main, h) != 0) {
		gf_errbuf_set(eb, "cuda: cannot start the FFT tail's launcher thread");
		err = GF_E_NOMEM;
	}
	h->thr_started = !err;
	if (err) {
		gf_cu_hybrid_free(h, 0);
		return err;
	}
	*out = h;
	return 0;
}

int gf_cu_hybrid_idle(struct gf_cu_hybrid *h)
{
	/* Every segment handed over launched (the launcher takes what is queued), none in hand. */
	if (__atomic_load_n(&h->q_head, __ATOMIC_ACQUIRE) != __atomic_load_n(&h->q_done, __ATOMIC_ACQUIRE))
		return 0;
	return gf_cu_stream_idle_by(h->s, 0) == 0;
}

void gf_cu_hybrid_stall_next(struct gf_cu_hybrid *h, const int *d_flag, long long cycles)
{
	h->stall_cycles = cycles;
	__atomic_store_n(&h->d_stall, (const volatile int *)d_flag, __ATOMIC_RELEASE);
}

void gf_cu_hybrid_hold_launcher(struct gf_cu_hybrid *h, uint64_t ns)
{
	__atomic_store_n(&h->hold_ns, ns, __ATOMIC_RELEASE);
}

int gf_cu_hybrid_free(struct gf_cu_hybrid *h, int leak)
{
	if (!h)
		return 0;
	if (gf_cu_hybrid_launcher_stop(h))
		return -1; /* it may still launch on the stream and read the FFT state: all kept */
	if (h->s && gf_cu_stream_idle_by(h->s, gf_now_ns() + GF_CU_WAIT_NS)) /* its own work only */
		return -1; /* a chain that does not end: kept, as what it reads */
	if (h->have_r2c)
		gf_cu_plan_put(h->r2c);
	if (h->have_c2r)
		gf_cu_plan_put(h->c2r);
	if (!leak) {
		gf_cu_dfree(h->d_line, h->s);
		gf_cu_dfree(h->d_tail, h->s);
		gf_cu_dfree(h->d_head, h->s);
	}
	gf_cu_dfree(h->d_W, h->s);
	gf_cu_dfree(h->d_y, h->s);
	gf_cu_dfree(h->d_Y, h->s);
	gf_cu_dfree(h->d_work, h->s);
	gf_cu_hfree(h->h_ready);
	if (h->ev_side)
		cudaEventDestroy(h->ev_side);
	if (h->ev_comp)
		cudaEventDestroy(h->ev_comp);
	if (h->s)
		cudaStreamDestroy(h->s);
	(void)cudaGetLastError();
	free(h);
	return 0;
}

const float *gf_cu_hybrid_head_taps(const struct gf_cu_hybrid *h, uint32_t *taps_pad,
				    struct gf_cu_persist_rings *rings)
{
	*taps_pad = 2 * h->f->B;
	rings->line = h->d_line;
	rings->line_frames = h->RL;
	rings->tail = h->d_tail;
	rings->tail_frames = h->RT;
	return h->d_head;
}

/* Before s_comp's own reset (gf_cu_reset_state): earlier chains end first, and s_comp's
 * next work waits for the rings to be silence. */
int gf_cu_hybrid_reset(struct gf_cu_hybrid *h, struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	GF_RET(gf_cu_hybrid_drain(h, gf_now_ns() + HY_DRAIN_WAIT_NS, eb));
	GF_RET(join(h->s, in->s_comp, h->ev_comp, eb));
	CU_RET(eb, cudaMemsetAsync(h->d_line, 0, (size_t)h->RL * h->f->C * sizeof(float), h->s));
	CU_RET(eb, cudaMemsetAsync(h->d_tail, 0, (size_t)h->RT * h->f->C * sizeof(float), h->s));
	k_hy_mark<<<1, 1, 0, h->s>>>(h->h_ready, 2); /* segments 0 and 1: silence */
	CU_LAUNCHED(eb);
	h->pos = 0;
	h->completes = -1;
	h->deferred = 0;
	return join(in->s_comp, h->s, h->ev_side, eb);
}

int gf_cu_hybrid_prime(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *d_hist, uint32_t n,
		       struct gf_errbuf *eb)
{
	GF_RET(gf_cu_hybrid_drain(h, gf_now_ns() + HY_DRAIN_WAIT_NS, eb));
	GF_RET(join(h->s, in->s_comp, h->ev_comp, eb)); /* the spectra of the prime, the upload */
	if (n > 0) {
		uint32_t m = n < h->RL ? n : h->RL;
		k_hy_line_load<<<(m * h->f->C + 255) / 256, 256, 0, h->s>>>(h->d_line, h->RL, d_hist, n, h->f->C);
		CU_LAUNCHED(eb);
	}
	const int64_t sf = (int64_t)n >> h->f->lb;
	GF_RET(tail_of(h, sf, NULL, 0, eb));
	GF_RET(tail_of(h, sf + 1, h->h_ready, (unsigned)(sf + 2), eb));
	h->pos = n;
	h->completes = -1;
	h->deferred = 0;
	return join(in->s_comp, h->s, h->ev_side, eb); /* d_hist is freed on s_comp */
}

static bool tail_ready(const struct gf_cu_hybrid *h)
{
	unsigned ready = *(const volatile unsigned *)h->h_ready;
	return (int)(ready - (h->need + 1u)) >= 0;
}

int gf_cu_hybrid_submit(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	const int64_t end = h->pos + frames;
	h->need = (uint32_t)((end - 1) >> h->f->lb);
	int err = __atomic_load_n(&h->thr_err, __ATOMIC_ACQUIRE);
	if (err) {
		gf_errbuf_set(&in->eb, "%s", h->leb.msg);
		return err;
	}
	h->deferred = !tail_ready(h);
	gf_cu_persist_stage_input(in->persist, inp, frames); /* the caller's buffer is its own again */
	if (!h->deferred)
		gf_cu_persist_post_process(in->persist, frames);
	h->completes = (end >> h->f->lb) != (h->pos >> h->f->lb) ? (end >> h->f->lb) - 1 : -1;
	h->pos = end;
	return 0;
}

/* The tail this call needs, by @p deadline_ns: polled in short sleeps, not a spin, since
 * what forms it is launched by a thread (the launcher) of lower priority than a real-time
 * caller, which a spin on its CPU could hold off. */
static int wait_tail(struct gf_cu_hybrid *h, struct gf_cu_inst *in, uint64_t deadline_ns)
{
	while (!tail_ready(h)) {
		if (gf_now_ns() >= deadline_ns) {
			gf_errbuf_set(&in->eb,
				      "cuda: the FFT tail of segment %u was not ready by the block's deadline",
				      h->need);
			return GF_E_TIMEOUT;
		}
		struct timespec ts = {0, (long)HY_WAIT_STEP_NS};
		nanosleep(&ts, NULL);
	}
	return 0;
}

int gf_cu_hybrid_finish(struct gf_cu_hybrid *h, struct gf_cu_inst *in, float *outp, uint32_t frames,
			uint64_t deadline_ns)
{
	if (h->deferred) {
		GF_RET(wait_tail(h, in, deadline_ns)); /* late: still deferred, a later finish goes on */
		gf_cu_persist_post_process(in->persist, frames);
		h->deferred = 0;
	}
	int err = gf_cu_persist_finish(in->persist, outp, frames, deadline_ns, &in->eb);
	if (err) /* GF_E_TIMEOUT: in flight, the segment still to hand over once answered */
		return err;
	/* Answered: the segment's last frames are in the line. */
	if (h->completes >= 0)
		err = gf_cu_hybrid_request(h, h->completes, &in->eb);
	h->completes = -1;
	return err;
}

int gf_cu_hybrid_leave(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *hist, uint32_t n,
		       uint64_t deadline_ns)
{
	struct gf_errbuf *eb = &in->eb;
	GF_RET(gf_cu_hybrid_drain(h, deadline_ns, eb)); /* the staged path reads every chained spectrum */
	GF_RET(join(in->s_comp, h->s, h->ev_side, eb));
	GF_RET(gf_cu_line_reset(&in->line, in->channels, in->s_comp, eb));
	GF_RET(gf_cu_line_load_at(&in->line, in->channels, hist, n, h->pos, in->s_comp, eb));
	return gf_cu_fft_resume(h->f, h->pos, in->s_comp, eb); /* the tails summed ahead, as after a prime */
}
