/**
 * @file cu_persist_kernel.cuh
 * Internal to cuda/: the persistent kernel and the command protocol it
 * shares with the host (cu_persist.cu describes both and is the one file
 * that includes this).
 */
#ifndef GPUFIR_CU_PERSIST_KERNEL_CUH
#define GPUFIR_CU_PERSIST_KERNEL_CUH

#include <cuda/atomic>

#include "cu_persist.cuh"

enum { OP_PROCESS = 1, OP_LOAD = 2, OP_STOP = 3, OP_HANDOVER = 4 };

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
 * 2048 threads (sm_80, sm_90): the grids gf_cu_persist_fits admits there. */
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

#endif
