/*
 * The persistent per-block path of the direct algorithm (live blocks): one
 * kernel launched when the instance is built, resident until it is freed,
 * that polls a command word in host-mapped memory. Per block the host writes
 * the input into mapped memory and then the word (release); one warp of the
 * kernel sees it, copies the input into device memory and relays the word to
 * the other blocks; they convolve, and the last block to finish writes the
 * output into mapped memory, fences at system scope and writes one
 * completion word, which the host polls (no driver call, no launch).
 *
 *  - One 64-bit command word (sequence number, op, frames, test hook bit):
 *    one read over PCIe per poll carries the whole command.
 *  - One reader of host memory: many blocks reading the same host lines
 *    slow every transfer down (run 11: 198 us a block with every block
 *    polling), so the relay warp alone polls and fetches the input.
 *  - Grid: (tile of 32 outputs, channel, slice of the taps); warp w of a
 *    block sums its slice's taps [w*ks, (w+1)*ks) for its 32 lanes' outputs,
 *    the warps' partial sums are added in a fixed order and written to the
 *    slice's plane in device memory; the last block to finish (a counter)
 *    adds the planes in slice order: deterministic, no atomics in the sums.
 *    One answer a command: the host waits for one word, not one per block
 *    of the grid.
 *  - State in shared memory: each block keeps its slice's taps and a ring
 *    of the newest L >= taps_pad-1 + max_frames input frames of its channel
 *    (every block of a channel takes every frame, so nothing is shared
 *    between blocks and no grid-wide barrier is needed).
 *  - Commands (op): PROCESS a block, LOAD history (priming: the newest
 *    frames of a device buffer; none = silence), STOP, and HANDOVER (copy
 *    the newest taps_pad-1 frames of history into that buffer, then stop:
 *    the staged path goes on from there). Each is answered with the
 *    completion word, so the host's wait (with a deadline) is the same for
 *    all of them.
 *  - The kernel runs on a stream of its own: the instance's other work
 *    (uploads for priming, the staged path) is never queued behind it. It
 *    occupies its grid until the instance is freed or hands over (another
 *    instance is built: cu_handover.cu), so it is used only where a quarter
 *    of the device holds it (room for everything else).
 */
#include <cuda/atomic>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_common.cuh"

enum { OP_PROCESS = 1, OP_LOAD = 2, OP_STOP = 3, OP_HANDOVER = 4 };

/* A kernel that is not resident and answering by then is not used (the staged path runs). */
#define PERSIST_START_NS 300000000ull

/* The command word: sequence number (low 32 bits), op, frames, the hang hook. */
#define CMD_SEQ(w) ((unsigned)(w))
#define CMD_OP(w) ((unsigned)((w) >> 32) & 0xffu)
#define CMD_FRAMES(w) ((unsigned)((w) >> 40) & 0xffffu)
#define CMD_HANG (1ull << 63)

__host__ __device__ static inline unsigned long long cmd_word(unsigned seq, unsigned op, unsigned frames)
{
	return (unsigned long long)seq | (unsigned long long)op << 32 | (unsigned long long)frames << 40;
}

/** Host-mapped control block: the host writes the fields, then word. */
struct persist_ctl {
	unsigned long long word;
	const float *hist;     /**< OP_LOAD: hist_n interleaved frames on the device, or NULL */
	unsigned hist_n;
	unsigned hist_end;     /**< OP_LOAD: the stream position after them (mod 2^32) */
	long long hang_cycles; /**< test hook: spin this long before relaying (with CMD_HANG) */
};

/** The command as the relay passes it on, in device memory. */
struct persist_cmd {
	unsigned long long word;
	const float *hist;
	unsigned hist_n, hist_end;
	unsigned answers; /**< blocks that answered the command in hand (0 .. blocks-1) */
};

struct gf_cu_persist {
	uint32_t C, taps_pad, L, max_frames, tiles, tk, kz, slice;
	unsigned blocks;
	size_t smem;
	struct persist_ctl *ctl;
	struct persist_cmd *d_cmd;
	float *d_load; /**< history to load, [taps_pad-1][C]: allocated before the kernel starts */
	float *d_in;   /**< the block's input, as the relay copied it */
	float *d_part; /**< [kz][max_frames][C]: one plane per slice */
	float *h_in, *h_out;
	unsigned *h_done;
	unsigned seq;
	int hang; /**< the next command carries CMD_HANG */
	cudaStream_t s;
	int running; /**< launched, and its end not yet seen */
	int stopped; /**< it answered a STOP or HANDOVER: it ends by itself */
};

struct persist_args {
	struct persist_ctl *ctl;
	struct persist_cmd *cmd; /**< device memory */
	const int *quit;	 /**< host-mapped, process-wide */
	const float *taps;	 /**< [C][taps_pad], device */
	const float *h_in;	 /**< host-mapped input */
	float *d_in, *part;	 /**< device: the input's copy, the slices' planes */
	float *out;		 /**< host-mapped output */
	float *hist_out;	 /**< device: OP_HANDOVER's history, [taps_pad-1][C] */
	unsigned *done;		 /**< host-mapped completion word */
	float *line;		 /**< device: [frame & line_mask][C], every frame processed, or NULL */
	const float *tail;	 /**< device: [frame & tail_mask][C], added to every output, or NULL */
	uint32_t line_mask, tail_mask;
	uint32_t L, plane;
	int C, taps_pad, slice, ks;
};

/*
 * Warp 0 of block 0 alone reads host memory: lane 0 polls the command word,
 * then the warp copies the block's input into device memory and publishes
 * the word there (release). It also watches the process-wide quit flag, so
 * that an abandoned kernel still ends at exit.
 */
__device__ unsigned long long persist_relay(const struct persist_args &a, unsigned last)
{
	const int lane = threadIdx.x;
	unsigned long long w = 0;
	unsigned spins = 0;
	for (;;) {
		int stop = 0;
		if (lane == 0) {
			cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> hw(a.ctl->word);
			w = hw.load(cuda::memory_order_acquire);
			stop = CMD_SEQ(w) == last && (++spins & 1023) == 0 && *(const volatile int *)a.quit;
		}
		w = __shfl_sync(0xffffffffu, w, 0);
		if (__shfl_sync(0xffffffffu, stop, 0)) {
			w = cmd_word(last + 1, OP_STOP, 0);
			break;
		}
		if (CMD_SEQ(w) != last)
			break;
	}
	if (CMD_OP(w) == OP_PROCESS) {
		const unsigned n = CMD_FRAMES(w) * (unsigned)a.C;
		for (unsigned i = lane; i < n; i += 32)
			a.d_in[i] = ((const volatile float *)a.h_in)[i];
		__threadfence(); /* the copy, before the word the others acquire */
	} else if (CMD_OP(w) == OP_LOAD && lane == 0) {
		a.cmd->hist = *(const float *const volatile *)&a.ctl->hist;
		a.cmd->hist_n = *(const volatile unsigned *)&a.ctl->hist_n;
		a.cmd->hist_end = *(const volatile unsigned *)&a.ctl->hist_end;
	}
	if (lane == 0 && (w & CMD_HANG)) {
		volatile long long *hang = &a.ctl->hang_cycles;
		long long t0 = clock64(), cycles = *hang;
		while (cycles > 0 && clock64() - t0 < cycles && *hang && !*(const volatile int *)a.quit) {
			/* freeing clears it */
		}
	}
	__syncwarp();
	if (lane == 0)
		cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(a.cmd->word)
			.store(w & ~CMD_HANG, cuda::memory_order_release);
	return w & ~CMD_HANG;
}

/* Thread 0 of every block (warp 0 of block 0: the relay): the next command word. */
__device__ unsigned long long persist_next(const struct persist_args &a, unsigned last)
{
	if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
		return persist_relay(a, last);
	unsigned long long w = 0;
	if (threadIdx.x == 0) {
		cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> dw(a.cmd->word);
		while (CMD_SEQ(w = dw.load(cuda::memory_order_acquire)) == last)
			__nanosleep(20);
	}
	return __shfl_sync(0xffffffffu, w, 0);
}

/*
 * Every thread of the block: this block's part of command @p seq is written.
 * The last block to answer adds the slices' planes (PROCESS: @p n outputs of
 * frames from @p pos on, and the tail's output where there is one) in order
 * into the host's output, fences at system scope, then writes the word.
 */
__device__ void persist_answer(const struct persist_args &a, unsigned seq, unsigned n, uint32_t pos, int tid,
			       int nth)
{
	__shared__ int s_last;
	__threadfence(); /* this thread's plane writes, before the count */
	__syncthreads();
	if (tid == 0) { /* wraps to 0 after the last block: every command is answered by all */
		const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
		s_last = atomicInc(&a.cmd->answers, blocks - 1) == blocks - 1;
	}
	__syncthreads();
	if (!s_last)
		return;
	__threadfence(); /* the other blocks' planes, after their counts */
	for (unsigned i = tid; i < n; i += nth) {
		float v = __ldcg(&a.part[i]);
		for (unsigned z = 1; z < gridDim.z; z++) /* slice order: deterministic */
			v += __ldcg(&a.part[(size_t)z * a.plane + i]);
		if (a.tail) { /* the FFT tail's output for this frame (cu_hybrid.cu) */
			unsigned f = i / (unsigned)a.C, c = i - f * (unsigned)a.C;
			v += __ldcg(&a.tail[(size_t)((pos + f) & a.tail_mask) * a.C + c]);
		}
		a.out[i] = v;
	}
	__threadfence_system();
	__syncthreads();
	if (tid == 0)
		*(volatile unsigned *)a.done = seq;
}

/* The newest @p keep of @p n history frames, the last of them at position end - 1. */
__device__ void persist_load(float *s_x, uint32_t L, const float *hist, uint32_t n, uint32_t end, int C, int c,
			     int keep, int tid, int nth)
{
	for (uint32_t i = tid; i < L; i += nth)
		s_x[i] = 0.0f;
	__syncthreads();
	uint32_t first = n > (uint32_t)keep ? n - keep : 0;
	for (uint32_t f = first + tid; f < n; f += nth)
		s_x[(end - n + f) & (L - 1)] = hist[(size_t)f * C + c];
}

/* Two blocks of 1024 threads an SM (32 registers a thread) where an SM holds
 * 2048 threads (sm_80, sm_90): the grids gf_persist_fits admits there. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ < 900
#define PERSIST_MIN_BLOCKS 1
#else
#define PERSIST_MIN_BLOCKS 2
#endif
__global__ void __launch_bounds__(1024, PERSIST_MIN_BLOCKS) k_persist(struct persist_args a)
{
	extern __shared__ float4 s_raw[];
	__shared__ unsigned long long s_word;
	float *s_h = reinterpret_cast<float *>(s_raw); /* this slice's taps */
	float *s_x = s_h + a.slice, *s_red = s_x + a.L;
	const int c = blockIdx.y, lane = threadIdx.x, w = threadIdx.y, TK = blockDim.y;
	const int tid = w * 32 + lane, nth = 32 * TK, n = blockIdx.x * 32 + lane;
	const int kbase = blockIdx.z * a.slice;
	const uint32_t mask = a.L - 1;
	for (int i = tid; i < a.slice; i += nth)
		s_h[i] = kbase + i < a.taps_pad ? a.taps[(size_t)c * a.taps_pad + kbase + i] : 0.0f;
	for (uint32_t i = tid; i < a.L; i += nth)
		s_x[i] = 0.0f;
	unsigned last = 0;
	uint32_t pos = 0; /* modulo 2^32: only pos mod L matters */
	for (;;) {
		if (w == 0) {
			unsigned long long cw = persist_next(a, last);
			if (lane == 0)
				s_word = cw;
		}
		__syncthreads();
		const unsigned long long cw = s_word;
		const unsigned seq = CMD_SEQ(cw), op = CMD_OP(cw);
		const int frames = (int)CMD_FRAMES(cw);
		last = seq;
		if (op == OP_STOP || op == OP_HANDOVER) {
			if (op == OP_HANDOVER && blockIdx.x == 0 && blockIdx.z == 0) { /* one block a channel */
				const uint32_t keep = (uint32_t)a.taps_pad - 1;
				for (uint32_t i = tid; i < keep; i += nth)
					a.hist_out[(size_t)i * a.C + c] = s_x[(pos - keep + i) & mask];
			}
			persist_answer(a, seq, 0, pos, tid, nth);
			return;
		}
		if (op == OP_LOAD) {
			const float *hist = *(const float *const volatile *)&a.cmd->hist;
			uint32_t hn = *(const volatile unsigned *)&a.cmd->hist_n;
			uint32_t end = *(const volatile unsigned *)&a.cmd->hist_end;
			persist_load(s_x, a.L, hist, hist ? hn : 0, end, a.C, c, a.taps_pad - 1, tid, nth);
			pos = end;
			__syncthreads();
			persist_answer(a, seq, 0, pos, tid, nth);
			continue;
		}
		/* One block a channel also keeps the frames for the FFT tail. */
		const bool keeper = a.line && blockIdx.x == 0 && blockIdx.z == 0;
		for (int i = tid; i < frames; i += nth) {
			float v = __ldcg(&a.d_in[(size_t)i * a.C + c]);
			s_x[(pos + i) & mask] = v;
			if (keeper)
				a.line[(size_t)((pos + i) & a.line_mask) * a.C + c] = v;
		}
		__syncthreads();
		float acc = 0.0f;
		const int k0 = w * a.ks, k1 = min(k0 + a.ks, a.slice);
		if (n < frames) {
			const uint32_t base = pos + n - kbase;
			for (int k = k0; k < k1; k++)
				acc = fmaf(s_h[k], s_x[(base - k) & mask], acc);
		}
		s_red[w * 32 + lane] = acc;
		__syncthreads();
		if (w == 0 && n < frames) {
			float v = 0.0f;
			for (int q = 0; q < TK; q++) /* fixed order: deterministic */
				v += s_red[q * 32 + lane];
			a.part[(size_t)blockIdx.z * a.plane + (size_t)n * a.C + c] = v;
		}
		persist_answer(a, seq, (unsigned)frames * (unsigned)a.C, pos, tid, nth);
		pos += (uint32_t)frames;
	}
}

/*
 * The kernel's shared-memory limit is raised once, to the device's largest,
 * before any instance of it runs: changing a kernel's attributes while it is
 * resident may wait for it, and this one never ends by itself.
 */
#define PERSIST_MAX_DEVICES 16
static pthread_mutex_t g_smem_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t g_smem_max[PERSIST_MAX_DEVICES];
static int g_smem_state[PERSIST_MAX_DEVICES]; /* 0 not tried, 1 set, -1 failed */

/* The device must be current (the instance's). */
static cudaError_t smem_limit_init(int dev)
{
	if (dev < 0 || dev >= PERSIST_MAX_DEVICES)
		return cudaErrorInvalidDevice;
	pthread_mutex_lock(&g_smem_mu);
	if (g_smem_state[dev] == 0) {
		int optin = 0;
		cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
		if (e == cudaSuccess)
			e = cudaFuncSetAttribute(k_persist, cudaFuncAttributeMaxDynamicSharedMemorySize,
						 optin - 1024);
		g_smem_max[dev] = (size_t)optin - 1024; /* room for the kernel's static shared words */
		g_smem_state[dev] = e == cudaSuccess ? 1 : -1;
		(void)cudaGetLastError();
	}
	cudaError_t r = g_smem_state[dev] == 1 ? cudaSuccess : cudaErrorInvalidValue;
	pthread_mutex_unlock(&g_smem_mu);
	return r;
}

/* Shape and shared memory of an instance; 0 if it does not fit the path. */
static int persist_shape(struct gf_cu_persist *p, uint32_t channels, uint32_t taps_pad, uint32_t max_block)
{
	if (taps_pad > GF_PERSIST_MAX_TAPS || max_block > GF_PERSIST_MAX_FRAMES)
		return 0;
	p->C = channels;
	p->taps_pad = taps_pad;
	p->max_frames = max_block;
	p->tiles = (max_block + 31) / 32;
	/* Slices of about 512 taps (16 warps x 32), at most 8, while the grid stays small. */
	uint32_t kz = (taps_pad + 511) / 512;
	kz = kz > 8 ? 8 : kz;
	while (kz > 1 && (uint64_t)p->tiles * channels * kz > 64)
		kz--;
	p->kz = kz;
	p->slice = (taps_pad + kz - 1) / kz;
	p->slice = (p->slice + 31) & ~31u;
	uint32_t tk = p->slice / 32;
	p->tk = tk < 1 ? 1 : tk > GF_LIVE_MAX_WARPS ? GF_LIVE_MAX_WARPS : tk;
	p->blocks = p->tiles * channels * kz;
	/* The last slice may run past taps_pad (zero taps): its reads must still be old frames. */
	p->L = gf_cu_pow2_at_least((uint64_t)kz * p->slice - 1 + max_block);
	p->smem = ((size_t)p->slice + p->L + 32 * p->tk) * sizeof(float);
	return 1;
}

int gf_persist_fits(int dev, uint32_t channels, uint32_t taps_pad, uint32_t max_block)
{
	struct gf_cu_persist p;
	if (!persist_shape(&p, channels, taps_pad, max_block))
		return 0;
	int sms = 0, per_sm = 0;
	if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    smem_limit_init(dev) != cudaSuccess || p.smem > g_smem_max[dev] ||
	    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_persist, 32 * (int)p.tk, p.smem) !=
		    cudaSuccess) {
		(void)cudaGetLastError();
		return 0;
	}
	/* A quarter of the device: the crossfade partner and everything else keep room. */
	return (uint64_t)p.blocks * 4 <= (uint64_t)sms * (uint64_t)per_sm;
}

/* Process-wide: set at exit, it ends every persistent kernel, the abandoned
 * ones too (the runtime's teardown would otherwise wait for them forever). */
static int *g_quit;
static pthread_mutex_t g_quit_mu = PTHREAD_MUTEX_INITIALIZER;

extern "C" void gf_cu_quit_kernels(void)
{
	if (g_quit)
		*(volatile int *)g_quit = 1;
}

static void quit_at_exit(void)
{
	gf_cu_quit_kernels();
	/* Give the kernels a moment to see it before the runtime tears down. */
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
}

static int quit_flag_init(struct gf_errbuf *eb)
{
	int err = 0;
	pthread_mutex_lock(&g_quit_mu);
	if (!g_quit) {
		cudaError_t e = cudaHostAlloc((void **)&g_quit, sizeof(int), cudaHostAllocMapped);
		if (e == cudaSuccess) {
			*g_quit = 0;
			atexit(quit_at_exit); /* after the runtime's own: runs before its teardown */
		} else {
			g_quit = NULL;
			err = CU_TRY(eb, e);
		}
	}
	pthread_mutex_unlock(&g_quit_mu);
	return err;
}

/* Post command @p op (other fields already written): the word last, with release. */
static unsigned persist_post(struct gf_cu_persist *p, unsigned op, unsigned frames)
{
	unsigned seq = ++p->seq;
	unsigned long long w = cmd_word(seq, op, frames) | (p->hang ? CMD_HANG : 0);
	p->hang = 0;
	__atomic_store_n(&p->ctl->word, w, __ATOMIC_RELEASE);
	return seq;
}

static int persist_wait(struct gf_cu_persist *p, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	return gf_cu_wait_words(p->h_done, 1, p->seq, p->s, deadline_ns, eb);
}

int gf_persist_new(struct gf_cu_persist **out, struct gf_cuda_inst *in, const float *d_taps, uint32_t taps_pad,
		   const struct gf_persist_rings *rings, struct gf_errbuf *eb)
{
	struct gf_cu_persist *p = (struct gf_cu_persist *)calloc(1, sizeof(*p));
	int err;
	if (!p) {
		gf_errbuf_set(eb, "cuda persistent path: out of host memory");
		return GF_E_NOMEM;
	}
	if (!persist_shape(p, in->channels, taps_pad, in->max_block)) {
		free(p);
		gf_errbuf_set(eb, "cuda persistent path: the filter or block is too large for it");
		return GF_E_INVAL;
	}
	size_t io = (size_t)p->max_frames * p->C * sizeof(float);
	int lo = 0, hi = 0;
	if ((err = CU_TRY(eb, cudaDeviceGetStreamPriorityRange(&lo, &hi))) ||
	    (err = CU_TRY(eb, cudaStreamCreateWithPriority(&p->s, cudaStreamNonBlocking, hi))) ||
	    (err = quit_flag_init(eb)) ||
	    (err = gf_cu_halloc((void **)&p->ctl, sizeof(*p->ctl), cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_dmalloc((void **)&p->d_cmd, sizeof(struct persist_cmd), in->s_comp, eb)) ||
	    (err = CU_TRY(eb, cudaMemsetAsync(p->d_cmd, 0, sizeof(struct persist_cmd), in->s_comp))) ||
	    (err = gf_cu_dmalloc((void **)&p->d_load, (size_t)p->taps_pad * p->C * sizeof(float), in->s_comp,
				 eb)) ||
	    (err = gf_cu_dmalloc((void **)&p->d_in, io, in->s_comp, eb)) ||
	    (err = gf_cu_dmalloc((void **)&p->d_part, io * p->kz, in->s_comp, eb)) ||
	    (err = gf_cu_halloc((void **)&p->h_in, io, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&p->h_out, io, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&p->h_done, sizeof(unsigned), cudaHostAllocMapped, eb)) ||
	    (err = CU_TRY(eb, smem_limit_init(in->dev))))
		goto fail;
	memset(p->ctl, 0, sizeof(*p->ctl));
	memset(p->h_in, 0, io);
	*p->h_done = 0;
	{
		struct persist_args a = {};
		a.ctl = p->ctl;
		a.cmd = p->d_cmd;
		a.quit = g_quit;
		a.taps = d_taps;
		a.h_in = p->h_in;
		a.d_in = p->d_in;
		a.part = p->d_part;
		a.out = p->h_out;
		a.hist_out = p->d_load;
		a.done = p->h_done;
		if (rings) {
			a.line = rings->line;
			a.line_mask = rings->line_frames - 1;
			a.tail = rings->tail;
			a.tail_mask = rings->tail_frames - 1;
		}
		a.L = p->L;
		a.plane = p->max_frames * p->C;
		a.C = (int)p->C;
		a.taps_pad = (int)p->taps_pad;
		a.slice = (int)p->slice;
		a.ks = ((int)p->slice + (int)p->tk - 1) / (int)p->tk;
		/* The taps are uploaded on the instance's s_comp: the kernel reads them first. */
		if ((err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp))))
			goto fail;
		k_persist<<<dim3(p->tiles, p->C, p->kz), dim3(32, p->tk), p->smem, p->s>>>(a);
		if ((err = CU_TRY(eb, cudaGetLastError())))
			goto fail;
	}
	p->running = 1;
	gf_cu_resident_begin();
	/* A first command proves the kernel is resident and answering. */
	p->ctl->hist = NULL;
	p->ctl->hist_n = 0;
	p->ctl->hist_end = 0;
	persist_post(p, OP_LOAD, 0);
	if ((err = persist_wait(p, gf_now_ns() + PERSIST_START_NS, eb)))
		goto fail;
	*out = p;
	return 0;
fail:
	if (gf_persist_free(p)) {
		in->stuck_kernel = 1;
		gf_cu_doubt(in);
	}
	return err;
}

int gf_persist_reap(struct gf_cu_persist *p, uint64_t deadline_ns)
{
	if (!p->running)
		return 0;
	for (;;) {
		cudaError_t e = cudaStreamQuery(p->s);
		if (e != cudaErrorNotReady) { /* ended (an error too: it runs no more) */
			(void)cudaGetLastError();
			break;
		}
		if (gf_now_ns() >= deadline_ns)
			return -1;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	p->running = 0;
	gf_cu_resident_end();
	return 0;
}

/* Stop the kernel; if it does not answer, leak what it may still write and
 * return -1 (the kernel still runs). */
int gf_persist_free(struct gf_cu_persist *p)
{
	if (!p)
		return 0;
	struct gf_errbuf eb = {{0}};
	if (gf_persist_stop(p, gf_now_ns() + GF_CU_WAIT_NS, &eb) ||
	    gf_persist_reap(p, gf_now_ns() + GF_CU_WAIT_NS))
		return -1; /* still resident */
	gf_cu_dfree(p->d_cmd, p->s);
	gf_cu_dfree(p->d_load, p->s);
	gf_cu_dfree(p->d_in, p->s);
	gf_cu_dfree(p->d_part, p->s);
	if (p->s)
		cudaStreamDestroy(p->s);
	gf_cu_hfree(p->ctl);
	gf_cu_hfree(p->h_in);
	gf_cu_hfree(p->h_out);
	gf_cu_hfree(p->h_done);
	(void)cudaGetLastError();
	free(p);
	return 0;
}

/* Post @p op, a command the kernel ends after (STOP, HANDOVER), and wait for its answer. */
static int persist_last(struct gf_cu_persist *p, unsigned op, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	persist_post(p, op, 0);
	int err = persist_wait(p, deadline_ns, eb);
	if (!err)
		p->stopped = 1;
	return err;
}

int gf_persist_stop(struct gf_cu_persist *p, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	if (!p->running || p->stopped)
		return 0;
	*(volatile long long *)&p->ctl->hang_cycles = 0;
	int err = persist_last(p, OP_STOP, deadline_ns, eb);
	if (err == GF_E_CUDA) { /* the stream failed: the kernel has ended */
		p->stopped = 1;
		err = 0;
	}
	return err;
}

int gf_persist_handover(struct gf_cu_persist *p, uint64_t deadline_ns, const float **hist, uint32_t *n,
			struct gf_errbuf *eb)
{
	int err = persist_last(p, OP_HANDOVER, deadline_ns, eb);
	if (err)
		return err;
	*hist = p->d_load;
	*n = p->taps_pad - 1;
	return 0;
}

/*
 * The kernel reads history only from its own buffer, allocated before it was
 * launched: memory allocated later in stream order (the caller's upload) is
 * not the kernel's to read under the stream-ordered allocator's rules.
 */
int gf_persist_stage(struct gf_cu_persist *p, const float *d_hist, uint32_t n, cudaStream_t s,
		     uint32_t *staged, struct gf_errbuf *eb)
{
	uint32_t m = n < p->taps_pad - 1 ? n : p->taps_pad - 1;
	*staged = m;
	if (m)
		CU_RET(eb, cudaMemcpyAsync(p->d_load, d_hist + (size_t)(n - m) * p->C,
					   (size_t)m * p->C * sizeof(float), cudaMemcpyDeviceToDevice, s));
	return 0;
}

int gf_persist_load(struct gf_cu_persist *p, uint32_t n, int64_t end, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	const float *d_hist = p->d_load;
	p->ctl->hist = n ? d_hist : NULL;
	p->ctl->hist_n = n;
	p->ctl->hist_end = (unsigned)end;
	persist_post(p, OP_LOAD, 0);
	return persist_wait(p, deadline_ns, eb);
}

void gf_persist_hang_next(struct gf_cu_persist *p, long long cycles)
{
	p->ctl->hang_cycles = cycles;
	p->hang = cycles > 0;
}

int gf_persist_submit(struct gf_cu_persist *p, const float *inp, uint32_t frames)
{
	memcpy(p->h_in, inp, (size_t)frames * p->C * sizeof(float));
	persist_post(p, OP_PROCESS, frames);
	return 0;
}

int gf_persist_finish(struct gf_cu_persist *p, float *outp, uint32_t frames, uint64_t deadline_ns,
		      struct gf_errbuf *eb)
{
	int err = persist_wait(p, deadline_ns, eb);
	if (err)
		return err;
	memcpy(outp, p->h_out, (size_t)frames * p->C * sizeof(float));
	return 0;
}
