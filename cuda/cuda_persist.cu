/*
 * The persistent per-block path of the direct algorithm (live blocks): one
 * kernel launched when the instance is built, resident until it is freed,
 * that polls a sequence word in host-mapped memory. Per block the host
 * writes the input into mapped memory and then the word (release); the
 * kernel's blocks see the word (acquire), take the input, convolve, write
 * the output into mapped memory, fence at system scope and write their
 * completion words; the host polls those (no driver call, no launch).
 *
 *  - Grid: (tile of 32 outputs, channel, slice of the taps); warp w of a
 *    block sums its slice's taps [w*ks, (w+1)*ks) for its 32 lanes' outputs,
 *    warp 0 adds the warps' partial sums in a fixed order and writes them to
 *    the slice's own output plane; the host adds the planes in slice order
 *    (a few hundred additions): deterministic, no atomics, no zeroing pass,
 *    and a 4095-tap filter spread over enough SMs to take about a microsecond.
 *  - State in shared memory: each block keeps its channel's taps and a ring
 *    of the newest L >= taps_pad-1 + max_frames input frames (every block of
 *    a channel takes every frame, so nothing is shared between blocks and no
 *    grid-wide barrier is needed).
 *  - Commands (op): PROCESS a block, LOAD history (priming: the newest
 *    frames of a device buffer; none = silence), STOP. Every block answers
 *    each with its completion word, so the host's wait (with a deadline) is
 *    the same for all three.
 *  - The kernel runs on a stream of its own: the instance's other work
 *    (uploads for priming, the staged path) is never queued behind it. It
 *    occupies C x tiles blocks for as long as the instance lives, so it is
 *    used only where a quarter of the device holds it (room for a crossfade
 *    partner and everything else).
 */
#include <cuda/atomic>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu_common.cuh"

enum { OP_PROCESS = 1, OP_LOAD = 2, OP_STOP = 3 };

/* A kernel that is not resident and answering by then is not used (the staged path runs). */
#define PERSIST_START_NS 300000000ull

/** Host-mapped control block: the host writes the fields, then seq. */
struct persist_ctl {
	unsigned seq;
	unsigned op;
	unsigned frames;
	unsigned hist_n;
	const float *hist;     /**< OP_LOAD: n interleaved frames on the device, or NULL */
	long long hang_cycles; /**< test hook: spin this long before answering (0 = off) */
};

struct gf_cu_persist {
	uint32_t C, taps_pad, L, max_frames, tiles, tk, kz, slice;
	unsigned blocks;
	size_t smem;
	struct persist_ctl *ctl;
	struct persist_cmd *d_cmd;
	float *d_load; /**< history to load, [taps_pad-1][C]: allocated before the kernel starts */
	float *h_in, *h_out;
	unsigned *h_done;
	unsigned seq;
	cudaStream_t s;
	int running;
};

struct persist_cmd;
struct persist_args {
	struct persist_ctl *ctl;
	struct persist_cmd *cmd; /**< device memory */
	const int *quit;	 /**< host-mapped, process-wide */
	const float *taps;	 /**< [C][taps_pad], device */
	const float *in;
	float *out; /**< [kz][max_frames][C]: one plane per slice */
	unsigned *done;
	uint32_t L, plane;
	int C, taps_pad, slice, ks;
};

/** The command as block 0 relays it to the others, in device memory. */
struct persist_cmd {
	unsigned seq, op, frames, hist_n;
	const float *hist;
};

/*
 * Thread 0 of block 0 alone polls the host's word (one reader over PCIe,
 * however large the grid: many pollers of one host line slow every transfer
 * down), takes the command's fields, and relays them to the other blocks
 * through device memory, the word last (release). It also watches the
 * process-wide quit flag, so that an abandoned kernel still ends at exit.
 */
__device__ void persist_relay(struct persist_ctl *ctl, struct persist_cmd *cmd, const volatile int *quit,
			      unsigned last)
{
	cuda::atomic_ref<unsigned, cuda::thread_scope_system> hseq(ctl->seq);
	unsigned s, op, spins = 0;
	while ((s = hseq.load(cuda::memory_order_acquire)) == last)
		if ((++spins & 1023) == 0 && *quit)
			break;
	if (s == last) {
		s = last + 1;
		op = OP_STOP;
	} else {
		op = *(volatile unsigned *)&ctl->op;
		cmd->frames = *(volatile unsigned *)&ctl->frames;
		cmd->hist_n = *(volatile unsigned *)&ctl->hist_n;
		cmd->hist = *(const float *volatile *)&ctl->hist;
		volatile long long *hang = &ctl->hang_cycles;
		long long t0 = clock64(), cycles = *hang;
		while (cycles > 0 && clock64() - t0 < cycles && *hang && !*quit) { /* freeing clears it */
		}
	}
	cmd->op = op;
	cuda::atomic_ref<unsigned, cuda::thread_scope_device>(cmd->seq).store(s, cuda::memory_order_release);
}

/* Thread 0 of every block: the next command, from block 0's relay. */
__device__ unsigned persist_next(struct persist_ctl *ctl, struct persist_cmd *cmd, const volatile int *quit,
				 unsigned last)
{
	if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
		persist_relay(ctl, cmd, quit, last);
	cuda::atomic_ref<unsigned, cuda::thread_scope_device> dseq(cmd->seq);
	unsigned s;
	while ((s = dseq.load(cuda::memory_order_acquire)) == last)
		__nanosleep(20);
	return s;
}

/* The block's answer to command @p seq: fence the writes at system scope, then the word. */
__device__ void persist_answer(unsigned *done, unsigned seq)
{
	__threadfence_system();
	__syncwarp();
	if (threadIdx.x == 0)
		*(volatile unsigned *)&done[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] =
			seq;
}

__device__ void persist_load(float *s_x, uint32_t L, const float *hist, uint32_t n, int C, int c, int keep,
			     int tid, int nth)
{
	for (uint32_t i = tid; i < L; i += nth)
		s_x[i] = 0.0f;
	__syncthreads();
	uint32_t first = n > (uint32_t)keep ? n - keep : 0;
	for (uint32_t f = first + tid; f < n; f += nth)
		s_x[f & (L - 1)] = hist[(size_t)f * C + c];
}

__global__ void __launch_bounds__(1024) k_persist(struct persist_args a)
{
	extern __shared__ float4 s_raw[];
	__shared__ unsigned s_cmd[3];
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
		if (tid == 0) {
			s_cmd[0] = persist_next(a.ctl, a.cmd, a.quit, last);
			s_cmd[1] = a.cmd->op;
			s_cmd[2] = a.cmd->frames;
		}
		__syncthreads();
		const unsigned seq = s_cmd[0], op = s_cmd[1];
		const int frames = (int)s_cmd[2];
		last = seq;
		if (op == OP_STOP) {
			if (w == 0)
				persist_answer(a.done, seq);
			return;
		}
		if (op == OP_LOAD) {
			uint32_t hn = a.cmd->hist_n;
			const float *hist = a.cmd->hist;
			persist_load(s_x, a.L, hist, hist ? hn : 0, a.C, c, a.taps_pad - 1, tid, nth);
			pos = hist ? hn : 0;
			__syncthreads();
			if (w == 0)
				persist_answer(a.done, seq);
			continue;
		}
		for (int i = tid; i < frames; i += nth)
			s_x[(pos + i) & mask] = ((const volatile float *)a.in)[(size_t)i * a.C + c];
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
		if (w == 0) {
			float v = 0.0f;
			for (int q = 0; q < TK; q++) /* fixed order: deterministic */
				v += s_red[q * 32 + lane];
			if (n < frames)
				a.out[(size_t)blockIdx.z * a.plane + (size_t)n * a.C + c] = v;
			persist_answer(a.done, seq);
		}
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

/* Post command @p op (fields already written): the word last, with release. */
static unsigned persist_post(struct gf_cu_persist *p, unsigned op)
{
	p->ctl->op = op;
	unsigned seq = ++p->seq;
	__atomic_store_n(&p->ctl->seq, seq, __ATOMIC_RELEASE);
	return seq;
}

static int persist_wait(struct gf_cu_persist *p, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	return gf_cu_wait_words(p->h_done, p->blocks, p->seq, p->s, deadline_ns, eb);
}

int gf_persist_new(struct gf_cu_persist **out, struct gf_cuda_inst *in, struct gf_errbuf *eb)
{
	struct gf_cu_persist *p = (struct gf_cu_persist *)calloc(1, sizeof(*p));
	int err;
	if (!p) {
		gf_errbuf_set(eb, "cuda persistent path: out of host memory");
		return GF_E_NOMEM;
	}
	if (!persist_shape(p, in->channels, gf_direct_taps_pad(in->direct), in->max_block)) {
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
	    (err = gf_cu_halloc((void **)&p->h_in, io, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&p->h_out, io * p->kz, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&p->h_done, p->blocks * sizeof(unsigned), cudaHostAllocMapped,
				eb)) ||
	    (err = CU_TRY(eb, smem_limit_init(in->dev))))
		goto fail;
	memset(p->ctl, 0, sizeof(*p->ctl));
	memset(p->h_in, 0, io);
	memset(p->h_done, 0, p->blocks * sizeof(unsigned));
	{
		int ks = ((int)p->slice + (int)p->tk - 1) / (int)p->tk;
		struct persist_args a = {
			p->ctl,		  p->d_cmd,	 g_quit, gf_direct_taps(in->direct), p->h_in,
			p->h_out,	  p->h_done,	 p->L,	 p->max_frames * p->C,	     (int)p->C,
			(int)p->taps_pad, (int)p->slice, ks};
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
	persist_post(p, OP_LOAD);
	if ((err = persist_wait(p, gf_cu_now_ns() + PERSIST_START_NS, eb)))
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

/* Stop the kernel; if it does not answer, leak what it may still write and
 * return -1 (the kernel still runs). */
int gf_persist_free(struct gf_cu_persist *p)
{
	if (!p)
		return 0;
	if (p->running) {
		struct gf_errbuf eb = {{0}};
		*(volatile long long *)&p->ctl->hang_cycles = 0;
		persist_post(p, OP_STOP);
		if (persist_wait(p, gf_cu_now_ns() + GF_CU_WAIT_NS, &eb) ||
		    cudaStreamSynchronize(p->s) != cudaSuccess) {
			(void)cudaGetLastError();
			return -1; /* still resident */
		}
		gf_cu_resident_end();
	}
	gf_cu_dfree(p->d_cmd, p->s);
	gf_cu_dfree(p->d_load, p->s);
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

int gf_persist_load(struct gf_cu_persist *p, uint32_t n, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	const float *d_hist = p->d_load;
	p->ctl->hist = n ? d_hist : NULL;
	p->ctl->hist_n = n;
	persist_post(p, OP_LOAD);
	return persist_wait(p, deadline_ns, eb);
}

void gf_persist_hang_next(struct gf_cu_persist *p, long long cycles)
{
	p->ctl->hang_cycles = cycles;
}

int gf_persist_submit(struct gf_cu_persist *p, const float *inp, uint32_t frames)
{
	memcpy(p->h_in, inp, (size_t)frames * p->C * sizeof(float));
	p->ctl->frames = frames;
	persist_post(p, OP_PROCESS);
	return 0;
}

int gf_persist_finish(struct gf_cu_persist *p, float *outp, uint32_t frames, uint64_t deadline_ns,
		      struct gf_errbuf *eb)
{
	int err = persist_wait(p, deadline_ns, eb);
	if (err)
		return err;
	const size_t n = (size_t)frames * p->C, plane = (size_t)p->max_frames * p->C;
	memcpy(outp, p->h_out, n * sizeof(float));
	for (uint32_t z = 1; z < p->kz; z++) /* slice order: deterministic */
		for (size_t i = 0; i < n; i++)
			outp[i] += p->h_out[z * plane + i];
	return 0;
}
