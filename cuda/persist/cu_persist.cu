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
 *    slow every transfer down (measured: 198 us a block when every block
 *    polled), so the relay warp alone polls and fetches the input.
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_fused.cuh"
#include "cu_persist.cuh"
#include "cu_persist_kernel.cuh"

/* A kernel that is not resident and answering by then is not used (the staged path runs). */
#define PERSIST_START_NS 300000000ull

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
	if (taps_pad > GF_CU_PERSIST_MAX_TAPS || max_block > GF_CU_PERSIST_MAX_FRAMES)
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
	p->tk = tk < 1 ? 1 : tk > GF_CU_LIVE_MAX_WARPS ? GF_CU_LIVE_MAX_WARPS : tk;
	p->blocks = p->tiles * channels * kz;
	/* The last slice may run past taps_pad (zero taps): its reads must still be old frames. */
	p->L = gf_cu_pow2_at_least((uint64_t)kz * p->slice - 1 + max_block);
	p->smem = ((size_t)p->slice + p->L + 32 * p->tk) * sizeof(float);
	return 1;
}

int gf_cu_persist_fits(int dev, uint32_t channels, uint32_t taps_pad, uint32_t max_block)
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

int gf_cu_persist_new(struct gf_cu_persist **out, struct gf_cu_inst *in, const float *d_taps,
		      uint32_t taps_pad, const struct gf_cu_persist_rings *rings, struct gf_errbuf *eb)
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
	if (gf_cu_persist_free(p)) {
		in->stuck_kernel = 1;
		gf_cu_doubt(in);
	}
	return err;
}

int gf_cu_persist_reap(struct gf_cu_persist *p, uint64_t deadline_ns)
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
int gf_cu_persist_free(struct gf_cu_persist *p)
{
	if (!p)
		return 0;
	struct gf_errbuf eb = {{0}};
	if (gf_cu_persist_stop(p, gf_now_ns() + GF_CU_WAIT_NS, &eb) ||
	    gf_cu_persist_reap(p, gf_now_ns() + GF_CU_WAIT_NS))
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

int gf_cu_persist_stop(struct gf_cu_persist *p, uint64_t deadline_ns, struct gf_errbuf *eb)
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

int gf_cu_persist_handover(struct gf_cu_persist *p, uint64_t deadline_ns, const float **hist, uint32_t *n,
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
int gf_cu_persist_stage(struct gf_cu_persist *p, const float *d_hist, uint32_t n, cudaStream_t s,
			uint32_t *staged, struct gf_errbuf *eb)
{
	uint32_t m = n < p->taps_pad - 1 ? n : p->taps_pad - 1;
	*staged = m;
	if (m)
		CU_RET(eb, cudaMemcpyAsync(p->d_load, d_hist + (size_t)(n - m) * p->C,
					   (size_t)m * p->C * sizeof(float), cudaMemcpyDeviceToDevice, s));
	return 0;
}

int gf_cu_persist_load(struct gf_cu_persist *p, uint32_t n, int64_t end, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	const float *d_hist = p->d_load;
	p->ctl->hist = n ? d_hist : NULL;
	p->ctl->hist_n = n;
	p->ctl->hist_end = (unsigned)end;
	persist_post(p, OP_LOAD, 0);
	return persist_wait(p, deadline_ns, eb);
}

void gf_cu_persist_hang_next(struct gf_cu_persist *p, long long cycles)
{
	*(volatile long long *)&p->ctl->hang_cycles = cycles; /* 0 also ends a spin in progress */
	p->hang = cycles > 0;
}

void gf_cu_persist_stage_input(struct gf_cu_persist *p, const float *inp, uint32_t frames)
{
	memcpy(p->h_in, inp, (size_t)frames * p->C * sizeof(float));
}

void gf_cu_persist_post_process(struct gf_cu_persist *p, uint32_t frames)
{
	persist_post(p, OP_PROCESS, frames);
}

int gf_cu_persist_submit(struct gf_cu_persist *p, const float *inp, uint32_t frames)
{
	gf_cu_persist_stage_input(p, inp, frames);
	gf_cu_persist_post_process(p, frames);
	return 0;
}

int gf_cu_persist_finish(struct gf_cu_persist *p, float *outp, uint32_t frames, uint64_t deadline_ns,
			 struct gf_errbuf *eb)
{
	int err = persist_wait(p, deadline_ns, eb);
	if (err)
		return err;
	memcpy(outp, p->h_out, (size_t)frames * p->C * sizeof(float));
	return 0;
}
