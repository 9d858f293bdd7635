/*
 * The fused per-block path of the direct algorithm (live blocks): one kernel
 * per call does everything between the host's copy into mapped memory and
 * the host seeing the result.
 *
 *  - History: a mirrored ring per channel, 2L floats for L >= taps-1 + the
 *    largest call (a power of two): frame t lives at t mod L and at
 *    t mod L + L, so any L consecutive frames are contiguous and nothing is
 *    ever moved. The kernel reads the history before the call from the ring
 *    and the call's own frames from host-mapped input, and writes those
 *    frames into the ring: the frames read ([pos-taps+1, pos)) and written
 *    ([pos, pos+frames)) never share a slot, so one launch can do both.
 *  - Convolution: block (tile of 32*R outputs, channel, slice of about 512
 *    taps: the taps spread over the grid, so a 64-frame call of 4095 taps
 *    runs 32 blocks, not 4); warp w of a slice sums its ks taps for its 32
 *    lanes' outputs (lane = output: the taps' reads are warp-uniform
 *    broadcasts from global memory through L1, the window's shared loads
 *    consecutive), the warps' partial sums are added in a fixed order in
 *    shared memory, and the last of a tile's blocks to finish adds the
 *    slices' sums in slice order: the output is deterministic, with no atomics
 *    in the sums and no zeroing pass, written interleaved straight into
 *    host-mapped output.
 *  - Completion: the block that writes a tile's output fences at system
 *    scope and then writes the call's sequence number into the tile's
 *    host-mapped word; the host polls those words (no driver call while it
 *    waits), with a deadline. Slice 0's blocks write the tile's new frames
 *    into the ring; every other slice reads only frames before the call.
 *  - The instance's high-priority stream s_comp (where the fault hooks
 *    launch too); the device is set once per thread (cached).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_direct.cuh"
#include "cu_fused.cuh"
#include "cu_path.cuh"

extern "C" {
#include "test_hook.h"
}

struct gf_cu_live {
	uint32_t C, taps_pad, L, max_frames;
	const struct gf_cu_direct *direct; /**< the taps (the kernel reads their global copy) */
	float *d_ring;			/**< [C][2L] */
	float *d_part;			/**< [slices][C][max_frames], with more than one slice */
	unsigned *d_count;		/**< [C][tiles] arrivals, wrapping to 0 */
	float *h_in, *h_out;
	unsigned *h_done;
	unsigned seq, max_blocks;
	unsigned words; /**< completion words of the call in flight */
	/* benchmarks: GPUFIR_CUDA_LIVE_WARPS, GPUFIR_CUDA_LIVE_R, GPUFIR_CUDA_LIVE_SLICE (0 = automatic) */
	int max_warps, force_r, slice_taps;
	int64_t pos;
	cudaStream_t s; /**< the instance's s_comp */
};

enum gf_cu_live_mode gf_cu_live_mode(void)
{
	static const char *const modes[] = {"0", "1", "auto"}; /* enum gf_cu_live_mode order */
	int m = gf_test_hook_choice("GPUFIR_CUDA_LIVE", modes, 3, "cuda");
	return m < 0 ? GF_CU_LIVE_AUTO : (enum gf_cu_live_mode)m;
}

int gf_cu_live_fits(uint32_t channels, uint32_t taps, uint32_t max_block)
{
	return taps <= GF_CU_LIVE_MAX_TAPS && max_block <= GF_CU_LIVE_MAX_FRAMES &&
	       (uint64_t)max_block * channels <= GF_CU_LIVE_MAX_SAMPLES;
}

/* A shape knob for benchmarks: the variable's value within [lo, hi], else 0 (automatic). */
static int env_int(const char *name, int lo, int hi)
{
	int64_t x = gf_test_hook_value(name, "cuda");
	return x >= lo && x <= hi ? (int)x : 0;
}

/* Launch shape of a call: R outputs a lane; the taps in S slices (grid z) of TK warps of ks taps. */
struct live_shape {
	int r, tk, ks, slices;
	unsigned gx;
	size_t smem;
};

static void live_shape(const struct gf_cu_live *l, uint32_t frames, struct live_shape *sh)
{
	sh->r = l->force_r ? l->force_r : frames <= 64 ? 1 : frames <= 512 ? 2 : 4;
	const int tp = (int)l->taps_pad, per = l->slice_taps ? l->slice_taps : GF_CU_LIVE_SLICE_TAPS;
	int S = (tp + per - 1) / per;
	S = S < 1 ? 1 : S > GF_CU_LIVE_MAX_SLICES ? GF_CU_LIVE_MAX_SLICES : S;
	int kslice = (tp + S - 1) / S;
	int tk = kslice / 64, cap = l->max_warps ? l->max_warps : GF_CU_LIVE_MAX_WARPS;
	sh->tk = tk < 1 ? 1 : tk > cap ? cap : tk;
	int ks = (kslice + sh->tk - 1) / sh->tk;
	sh->ks = (ks + 3) & ~3;
	sh->slices = (tp + sh->tk * sh->ks - 1) / (sh->tk * sh->ks); /* none left empty */
	const int T = 32 * sh->r, win = sh->tk * sh->ks + T - 1;
	sh->gx = (frames + T - 1) / T;
	sh->smem = ((size_t)((win + 3) & ~3) + (size_t)sh->tk * T) * sizeof(float);
}

/* ring[c][t mod L] (and its mirror) = hist[t*C + c] for the newest frames before n. */
__global__ void k_live_load(float *__restrict__ ring, uint32_t L, const float *__restrict__ hist, uint32_t n,
			    uint32_t first, uint32_t C)
{
	const uint32_t total = (n - first) * C;
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
		uint32_t f = first + i / C, c = i % C, j = f & (L - 1);
		float v = hist[(size_t)f * C + c];
		ring[(size_t)c * 2 * L + j] = v;
		ring[(size_t)c * 2 * L + j + L] = v;
	}
}

void gf_cu_live_preload(void)
{
	cudaFuncAttributes a;
	gf_cu_direct_live_preload();
	(void)cudaFuncGetAttributes(&a, k_live_load);
	(void)cudaGetLastError();
}

int gf_cu_live_new(struct gf_cu_live **out, struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	struct gf_cu_live *l = (struct gf_cu_live *)calloc(1, sizeof(*l));
	int err;
	if (!l) {
		gf_errbuf_set(eb, "cuda live: out of host memory");
		return GF_E_NOMEM;
	}
	l->C = in->channels;
	l->max_frames = in->max_block;
	l->direct = in->direct;
	l->taps_pad = gf_cu_direct_taps_pad(in->direct);
	l->L = gf_cu_pow2_at_least((uint64_t)l->taps_pad + l->max_frames);
	l->max_blocks = (l->max_frames + 31) / 32 * l->C; /* R = 1 launches the most blocks */
	l->max_warps = env_int("GPUFIR_CUDA_LIVE_WARPS", 1, GF_CU_LIVE_MAX_WARPS);
	l->force_r = env_int("GPUFIR_CUDA_LIVE_R", 1, 4);
	if (l->force_r == 3)
		l->force_r = 4;
	l->slice_taps = env_int("GPUFIR_CUDA_LIVE_SLICE", 16, (int)GF_CU_LIVE_MAX_TAPS);
	struct live_shape sh;
	live_shape(l, l->max_frames, &sh); /* the slices do not depend on the call's size */
	size_t io = (size_t)l->max_frames * l->C * sizeof(float);
	size_t smem_max =
		((size_t)GF_CU_LIVE_MAX_TAPS + 16 + 128 + GF_CU_LIVE_MAX_WARPS * 128) * sizeof(float);
	l->s = in->s_comp;
	if ((err = gf_cu_direct_live_setup(smem_max, eb)) ||
	    (err = gf_cu_dmalloc((void **)&l->d_ring, (size_t)2 * l->L * l->C * sizeof(float), l->s, eb)) ||
	    (sh.slices > 1 && (err = gf_cu_dmalloc((void **)&l->d_part, (size_t)sh.slices * io, l->s, eb))) ||
	    (err = gf_cu_dmalloc((void **)&l->d_count, l->max_blocks * sizeof(unsigned), l->s, eb)) ||
	    (err = gf_cu_halloc((void **)&l->h_in, io, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&l->h_out, io, cudaHostAllocMapped, eb)) ||
	    (err = gf_cu_halloc((void **)&l->h_done, l->max_blocks * sizeof(unsigned), cudaHostAllocMapped,
				eb)))
		goto fail;
	memset(l->h_in, 0, io);
	memset(l->h_done, 0, l->max_blocks * sizeof(unsigned));
	if ((err = gf_cu_live_reset(l, l->s, eb)) || (err = CU_TRY(eb, cudaStreamSynchronize(l->s))))
		goto fail;
	*out = l;
	return 0;
fail:
	gf_cu_live_free(l, NULL);
	return err;
}

void gf_cu_live_free(struct gf_cu_live *l, cudaStream_t s)
{
	(void)s;
	if (!l)
		return;
	gf_cu_dfree(l->d_ring, l->s); /* the stream is the instance's */
	gf_cu_dfree(l->d_part, l->s);
	gf_cu_dfree(l->d_count, l->s);
	gf_cu_hfree(l->h_in);
	gf_cu_hfree(l->h_out);
	gf_cu_hfree(l->h_done);
	(void)cudaGetLastError();
	free(l);
}

int gf_cu_live_reset(struct gf_cu_live *l, cudaStream_t s, struct gf_errbuf *eb)
{
	/* The ring is written on l->s; order the reset with it whatever stream the caller uses. */
	(void)s;
	CU_RET(eb, cudaMemsetAsync(l->d_ring, 0, (size_t)2 * l->L * l->C * sizeof(float), l->s));
	CU_RET(eb, cudaMemsetAsync(l->d_count, 0, l->max_blocks * sizeof(unsigned), l->s));
	l->pos = 0;
	return 0;
}

int gf_cu_live_load(struct gf_cu_live *l, const float *d_hist, uint32_t n, cudaStream_t s,
		    struct gf_errbuf *eb)
{
	uint32_t keep = l->taps_pad - 1, first = n > keep ? n - keep : 0;
	(void)s; /* d_hist was written on the instance's stream, which is l->s */
	if (n > first) {
		uint64_t work = (uint64_t)(n - first) * l->C;
		unsigned g = (unsigned)((work + 255) / 256 > 4096 ? 4096 : (work + 255) / 256);
		k_live_load<<<g, 256, 0, l->s>>>(l->d_ring, l->L, d_hist, n, first, l->C);
		CU_LAUNCHED(eb);
	}
	l->pos = n;
	return 0;
}

int gf_cu_wait_words(volatile unsigned *w, unsigned n, unsigned seq, cudaStream_t s, uint64_t deadline_ns,
		     struct gf_errbuf *eb)
{
	unsigned i = 0;
	uint64_t spins = 0, next_query = 0;
	while (i < n) {
		if (w[i] == seq) {
			i++;
			continue;
		}
		if ((++spins & 255) != 0)
			continue;
		uint64_t t = gf_now_ns();
		if (t >= deadline_ns) {
			unsigned done = 0;
			for (unsigned k = 0; k < n; k++)
				done += w[k] == seq;
			gf_errbuf_set(eb,
				      "cuda: work still in flight at the deadline (%u of %u blocks answered)",
				      done, n);
			return GF_E_TIMEOUT;
		}
		if (next_query == 0)
			next_query = t + 200000; /* past 200 us: ask the driver whether the stream failed */
		else if (t >= next_query) {
			cudaError_t e = cudaStreamQuery(s);
			if (e != cudaSuccess && e != cudaErrorNotReady)
				return CU_TRY(eb, e);
			next_query = t + 200000;
		}
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the output is read after the words */
	return 0;
}

int gf_cu_live_submit(struct gf_cu_live *l, const float *inp, uint32_t frames, struct gf_errbuf *eb)
{
	struct live_shape sh;
	live_shape(l, frames, &sh);
	memcpy(l->h_in, inp, (size_t)frames * l->C * sizeof(float));
	unsigned seq = ++l->seq;
	struct gf_cu_live_args a = {l->d_ring,	l->L,	   l->pos,   (int)frames, (int)l->C, (int)l->taps_pad,
				 sh.ks,		l->h_in,   l->h_out, l->h_done,	  seq,	     l->d_part,
				 l->max_frames, l->d_count};
	CU_RET(eb, gf_cu_direct_live_launch(l->direct, sh.r, dim3(sh.gx, l->C, sh.slices), dim3(32, sh.tk),
					 sh.smem, l->s, &a));
	l->words = sh.gx * l->C;
	l->pos += frames;
	return 0;
}

int gf_cu_live_finish(struct gf_cu_live *l, float *outp, uint32_t frames, uint64_t deadline_ns,
		      struct gf_errbuf *eb)
{
	int err = gf_cu_wait_words(l->h_done, l->words, l->seq, l->s, deadline_ns, eb);
	if (!err)
		memcpy(outp, l->h_out, (size_t)frames * l->C * sizeof(float));
	return err;
}

/* ---- the path's table (cu_path.cuh) ---- */

static int fused_create(struct gf_cu_inst *in, const struct gf_filter_set *, struct gf_errbuf *eb)
{
	return gf_cu_live_new(&in->live, in, eb);
}

/* Live blocks of the direct algorithm, where the instance built the path (every call of one fits:
 * max_block is within GF_CU_LIVE_MAX_FRAMES). */
static int fused_fits(const struct gf_cu_inst *in, uint32_t)
{
	return in->live && in->algo == GF_ALGO_DIRECT;
}

static int fused_submit(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	return gf_cu_live_submit(in->live, inp, frames, &in->eb);
}

static int fused_finish(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	return gf_cu_live_finish(in->live, outp, frames, deadline_ns, &in->eb);
}

static void fused_free(struct gf_cu_inst *in)
{
	gf_cu_live_free(in->live, in->s_comp);
	in->live = NULL;
}

const struct gf_cu_path gf_cu_path_fused = {
	"fused", fused_create, fused_fits, fused_submit, fused_finish, NULL, fused_free, 1,
};
