/*
 * An instance's life: plan (which algorithms, FFT shape, staging chunk and
 * line history), the memory check before any allocation, create (streams,
 * events, staging, the algorithms, then the path choices of cu_choose.cu),
 * reset and destroy; and the backend's function table (src/engine/backend.h)
 * with the module's table (cuda_module.h) that the engine's loader uses.
 * Control thread throughout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cu_direct.cuh"
#include "cu_fused.cuh"
#include "cu_hooks.h"
#include "cu_neural.cuh"
#include "cu_path.cuh"
#include "cu_persist.cuh"
#include "cu_plan.cuh"
#include "cu_staged.cuh"
#include "cu_suppress.cuh"

extern "C" {
#include "log.h"
#include "test_hook.h"
}

#define GF_CU_CHUNK_SAMPLES (1u << 23)	 /* 32 MB a copy: GPU work outgrows the launch costs */
#define GF_CU_DIRECT_AUTO_MAX_TAPS 32768 /* beyond this direct never wins; not worth timing */

/* Control thread. Only stream-ordered frees and cache returns: nothing here
 * waits for, or stalls, another instance's streams. */
static void inst_free(struct gf_cu_inst *in)
{
	if (!in)
		return;
	struct gf_errbuf eb = {{0}};
	(void)gf_cu_use_device(in->dev, &eb);
	if (in->h_hang) /* release a hook kernel still spinning: its stream then drains at once */
		*(volatile int *)in->h_hang = 1;
	gf_cu_pk_unregister(in);
	/* A persistent kernel that does not stop keeps the instance alive: what
	 * was retired must not be freed behind it. */
	bool kernel_runs =
		gf_cu_persist_free(in->persist) != 0 || __atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE);
	/* This instance's own work only, and bounded: what does not end is kept, as a kernel that runs. */
	if (in->s_comp && gf_cu_stream_idle_by(in->s_comp, gf_now_ns() + GF_CU_WAIT_NS) != 0)
		kernel_runs = true;
	/* A kernel still running may write the tail's rings; an FFT tail's launcher that did not
	 * end may still launch on its side stream, reading the FFT state: each keeps what it uses. */
	if (gf_cu_hybrid_free(in->hybrid, kernel_runs) != 0)
		kernel_runs = true;
	if (kernel_runs)
		gf_cu_doubt(in);
	else
		gf_cu_doubt_end(in); /* its work is done: nothing of it is in flight now */
	gf_cu_path_fused.free(in);
	gf_cu_direct_free(in->direct);
	if (!kernel_runs)
		gf_cu_fft_free(in->fft);
	gf_cu_line_free(&in->line, in->s_comp);
	gf_cu_path_mapped.free(in);
	for (int i = 0; i < 2; i++) {
		gf_cu_hfree(in->h_in[i]);
		gf_cu_hfree(in->h_out[i]);
		gf_cu_dfree(in->d_in[i], in->s_comp);
		gf_cu_dfree(in->d_out[i], in->s_comp);
		if (in->ev_h2d[i])
			cudaEventDestroy(in->ev_h2d[i]);
		if (in->ev_comp[i])
			cudaEventDestroy(in->ev_comp[i]);
		if (in->ev_d2h[i])
			cudaEventDestroy(in->ev_d2h[i]);
	}
	if (in->ev_done)
		cudaEventDestroy(in->ev_done);
	for (int i = 0; i < 2; i++)
		if (in->ev_split[i])
			cudaEventDestroy(in->ev_split[i]);
	gf_cu_hfree(in->h_hang);
	if (in->s_h2d)
		cudaStreamDestroy(in->s_h2d);
	if (in->s_comp)
		cudaStreamDestroy(in->s_comp);
	if (in->s_d2h)
		cudaStreamDestroy(in->s_d2h);
	(void)cudaGetLastError();
	free(in);
	if (!kernel_runs)
		gf_cu_inst_end();
}

static int alloc_io(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	size_t bytes = (size_t)in->chunk * in->channels * sizeof(float);
	int lo = 0, hi = 0;
	CU_RET(eb, cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CU_RET(eb, cudaStreamCreateWithFlags(&in->s_h2d, cudaStreamNonBlocking));
	/* live blocks run on s_comp: ahead of other instances' set-up and calibration */
	CU_RET(eb, cudaStreamCreateWithPriority(&in->s_comp, cudaStreamNonBlocking, hi));
	CU_RET(eb, cudaStreamCreateWithFlags(&in->s_d2h, cudaStreamNonBlocking));
	CU_RET(eb, cudaEventCreateWithFlags(&in->ev_done, cudaEventDisableTiming));
	for (int i = 0; i < 2; i++) {
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_h2d[i], cudaEventDisableTiming));
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_comp[i], cudaEventDisableTiming));
		CU_RET(eb, cudaEventCreateWithFlags(&in->ev_d2h[i], cudaEventDisableTiming));
		GF_RET(gf_cu_halloc((void **)&in->h_in[i], bytes, cudaHostAllocDefault, eb));
		GF_RET(gf_cu_halloc((void **)&in->h_out[i], bytes, cudaHostAllocDefault, eb));
		GF_RET(gf_cu_dmalloc((void **)&in->d_in[i], bytes, in->s_comp, eb));
		GF_RET(gf_cu_dmalloc((void **)&in->d_out[i], bytes, in->s_comp, eb));
		memset(in->h_in[i], 0, bytes);
		CU_RET(eb, cudaMemsetAsync(in->d_in[i], 0, bytes, in->s_comp));
	}
	return gf_cu_path_mapped.create(in, NULL, eb);
}

int gf_cu_reset_state(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	int err = in->hybrid ? gf_cu_hybrid_reset(in->hybrid, in, eb) : 0;
	if (!err)
		err = gf_cu_line_reset(&in->line, in->channels, in->s_comp, eb);
	if (!err && in->fft)
		err = gf_cu_fft_reset(in->fft, in, in->s_comp, eb);
	if (!err && in->live)
		err = gf_cu_live_reset(in->live, in->s_comp, eb);
	return err;
}

/* Frames of the largest chunk before it is fitted to the FFT hop (power of two). */
static uint32_t chunk_cap(uint32_t channels)
{
	uint32_t c = GF_CU_CHUNK_SAMPLES / channels;
	uint32_t p = 1024;
	while (p * 2 <= c)
		p *= 2;
	return p;
}

static uint32_t pick_chunk(uint32_t channels, uint32_t max_block, uint32_t hop)
{
	uint32_t p = chunk_cap(channels);
	if (hop > p)
		p = hop;
	return max_block < p ? max_block : p;
}

/* The instance's test hooks (docs/engine.md), read once here through base's mechanism. */
static void read_hooks(struct gf_cu_inst *in)
{
	static const char *const where[] = {"kernel", "tail"};
	in->fail_after = (long)gf_test_hook_value("GPUFIR_CUDA_FAIL_AFTER", "cuda");
	in->hang_after = (long)gf_test_hook_value("GPUFIR_CUDA_HANG_AFTER", "cuda");
	in->hang_tail = gf_test_hook_choice("GPUFIR_CUDA_HANG_WHERE", where, 2, "cuda") == 1;
}

static int hang_hook_init(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	int khz = 0;
	CU_RET(eb, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, in->dev));
	in->hang_cycles = (long long)(khz > 0 ? khz : 2000000) * 1000 * 3; /* 3 s */
	GF_RET(gf_cu_halloc((void **)&in->h_hang, sizeof(int), cudaHostAllocMapped, eb));
	*in->h_hang = 0;
	CU_RET(eb, cudaHostGetDevicePointer((void **)&in->d_hang, in->h_hang, 0));
	gf_warn("cuda: test hook GPUFIR_CUDA_HANG_AFTER=%ld: call %ld will hang for about 3 s",
		in->hang_after, in->hang_after + 1);
	return 0;
}

/* Which algorithms, FFT shape, staging chunk and line history an instance for
 * @p p and @p taps taps will have (cu_create builds it; cu_check_memory sizes it). */
static void plan_instance(const struct gf_engine_params *p, uint32_t taps, struct gf_cu_plan *pl)
{
	pl->direct =
		p->algo == GF_ALGO_DIRECT || (p->algo == GF_ALGO_AUTO && taps <= GF_CU_DIRECT_AUTO_MAX_TAPS);
	pl->fft = p->algo != GF_ALGO_DIRECT;
	if (p->algo == GF_ALGO_AUTO && pl->direct) { /* an earlier calibration may settle it */
		uint32_t direct_max, fft_min;
		gf_cu_calib_lookup(p->gpu_index, p->channels, p->max_block, &direct_max, &fft_min);
		if (taps <= direct_max)
			pl->fft = false;
		else if (taps >= fft_min)
			pl->direct = false;
	}
	pl->shape = (struct gf_cu_fft_shape){0, 0, 0, 0};
	if (pl->fft)
		gf_cu_fft_pick_shape(taps, p->max_block, chunk_cap(p->channels), &pl->shape);
	pl->chunk = pick_chunk(p->channels, p->max_block, pl->shape.B);
	pl->keep = pl->direct ? (int64_t)taps - 1 : 0;
	pl->live_frames = 0;
	if (pl->direct && gf_cu_live_mode() != GF_CU_LIVE_OFF &&
	    gf_cu_live_fits(p->channels, taps, p->max_block))
		pl->live_frames = p->max_block;
	if (pl->fft && (int64_t)gf_cu_fft_keep(&pl->shape) > pl->keep)
		pl->keep = gf_cu_fft_keep(&pl->shape);
}

/* backend.h check_memory: the estimate against the device's free memory, before any allocation. */
static int cu_check_memory(const struct gf_engine_params *p, uint32_t taps, struct gf_errbuf *eb)
{
	char why[160];
	if (p->channels < 1 || p->max_block < 1 || taps < 1)
		return 0; /* create() reports the parameters */
	int err = gf_cu_probe(p->gpu_index, why, sizeof(why));
	if (err) {
		gf_errbuf_set(eb, "cuda: %s", why);
		return err;
	}
	struct gf_cu_plan pl;
	plan_instance(p, taps, &pl);
	if ((err = gf_cu_use_device(p->gpu_index, eb)) || (err = gf_cu_pool_init(p->gpu_index, eb)))
		return err;
	return gf_cu_check_memory(p->gpu_index, &pl, p->channels, taps, eb);
}

static int cu_create(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **out,
		     struct gf_errbuf *eb)
{
	char why[160];
	*out = NULL;
	if (fs && gf_filter_set_is_mixer(fs)) { /* the engine never asks: it runs mixers on the CPU */
		gf_errbuf_set(eb, "cuda: a mixer (%u inputs to %u outputs) runs on the CPU backend only",
			      fs->inputs, fs->outputs);
		return GF_E_UNSUPPORTED;
	}
	if (!fs || fs->channels != p->channels || fs->taps < 1 || p->max_block < 1 || p->channels < 1) {
		gf_errbuf_set(eb, "cuda: invalid parameters (channels %u/%u, taps %u, max_block %u)",
			      fs ? fs->channels : 0, p->channels, fs ? fs->taps : 0, p->max_block);
		return GF_E_INVAL;
	}
	int err = gf_cu_probe(p->gpu_index, why, sizeof(why));
	if (err) {
		gf_errbuf_set(eb, "cuda: %s", why);
		return err;
	}
	struct gf_cu_inst *in = (struct gf_cu_inst *)calloc(1, sizeof(*in));
	if (!in) {
		gf_errbuf_set(eb, "cuda: out of host memory");
		return GF_E_NOMEM;
	}
	gf_cu_inst_begin(); /* inst_free ends it */
	in->dev = p->gpu_index;
	in->channels = p->channels;
	in->taps = fs->taps;
	in->max_block = p->max_block;
	in->gpu_path = p->gpu_path;
	read_hooks(in);

	struct gf_cu_plan pl;
	plan_instance(p, fs->taps, &pl);
	bool want_direct = pl.direct, want_fft = pl.fft;
	struct gf_cu_fft_shape shape = pl.shape;
	in->chunk = pl.chunk;
	int64_t keep = pl.keep;
	in->algo = want_direct ? GF_ALGO_DIRECT : GF_ALGO_FFT;

	double t[6];
	t[0] = (1e3 * gf_now_s());
	/* cudaSetDevice creates the context (CUDA 12+) when the probe did not.
	 * A resident persistent kernel first hands over to the staged path:
	 * building beside it could wait for it for good. */
	if ((err = gf_cu_use_device(in->dev, eb)) || (err = gf_cu_pk_step_aside(in->dev, eb)) ||
	    (err = gf_cu_pool_init(in->dev, eb)) ||
	    (err = gf_cu_check_memory(in->dev, &pl, in->channels, in->taps, eb)))
		goto fail;
	t[1] = (1e3 * gf_now_s());
	if (in->hang_after >= 0 && (err = hang_hook_init(in, eb)))
		goto fail;
	snprintf(in->desc, sizeof(in->desc), "%s", why); /* the probe's description of the device */
	if ((err = alloc_io(in, eb)) ||
	    (err = gf_cu_line_init(&in->line, in->channels, keep, in->chunk, in->s_comp, eb)) ||
	    (err = gf_cu_line_reset(&in->line, in->channels, in->s_comp, eb)))
		goto fail;
	t[2] = (1e3 * gf_now_s());
	if (want_direct && (err = gf_cu_direct_new(&in->direct, in, fs, eb)))
		goto fail;
	/* the fused path where it fits and GPUFIR_CUDA_LIVE allows it, unless measured slower */
	if (want_direct && pl.live_frames && gf_cu_live_choice(in) != 0 &&
	    (err = gf_cu_path_fused.create(in, fs, eb)))
		goto fail;
	t[3] = (1e3 * gf_now_s());
	if (want_fft && (err = gf_cu_fft_new(&in->fft, in, fs, &shape, eb)))
		goto fail;
	t[4] = (1e3 * gf_now_s());
	if (want_direct && ((err = gf_cu_pick_live(in, eb)) || (want_fft && (err = gf_cu_calibrate(in, eb)))))
		goto fail;
	/* This instance's streams only: a device-wide synchronize would wait for
	 * (and stall) the instance that is streaming while this one is built. */
	if ((err = gf_cu_reset_state(in, eb)) || (err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp))) ||
	    (err = gf_cu_pick_persist(in, fs, eb)))
		goto fail;
	t[5] = (1e3 * gf_now_s());
	gf_debug("cuda: %s, %u taps x %u ch, block %u, chunk %u: %s%s%s; setup ms: context %.1f, staging "
		 "%.1f, "
		 "direct %.1f, fft %.1f (hop %u, size %u), calibration %.1f",
		 in->desc, in->taps, in->channels, in->max_block, in->chunk, gf_cu_algo_str(in->algo),
		 in->direct ? (gf_cu_direct_where(in->direct)[0] == 'c' ? " (constant memory)"
									: " (global memory)")
			    : "",
		 in->hybrid    ? ", persistent kernel for the head, FFT tail beside it"
		 : in->persist ? ", persistent kernel"
		 : in->live    ? ", fused per-block path"
			       : "",
		 t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3],
		 in->fft ? gf_cu_fft_partition(in->fft) : 0, in->fft ? gf_cu_fft_size(in->fft) : 0,
		 t[5] - t[4]);
	/* the status and the log say which path live blocks take */
	snprintf(in->desc + strlen(in->desc), sizeof(in->desc) - strlen(in->desc), "; live blocks: %s",
		 gf_cuda_block_path(in));
	*out = in;
	return 0;
fail:
	inst_free(in);
	return err;
}

static void cu_destroy(void *inst)
{
	inst_free((struct gf_cu_inst *)inst);
}

#define STOP_WAIT_NS 2000000ull /* cu_stop: a persistent kernel's answer to its stop, each time asked */

/* Every stream of the instance idle now: nothing of it runs on the device (a path's own streams
 * are its stop()'s). */
static int streams_idle(struct gf_cu_inst *in)
{
	cudaStream_t s[3] = {in->s_h2d, in->s_comp, in->s_d2h};
	for (int i = 0; i < 3; i++)
		if (s[i] && gf_cu_stream_idle_by(s[i], 0) != 0)
			return 0;
	return 1;
}

/*
 * backend.h stop: the engine gave this instance up (a call in flight for too
 * long, or failed) and calls it no more. Release what a test hook's kernel
 * spins on, stop each path's own work (a persistent kernel: its answer waited
 * for a moment), and say whether anything of it still runs: once nothing does, it is no longer
 * in doubt, so pinned host memory can be unregistered again
 * (gf_cuda_unpin), and destroy will not wait. Control thread; the engine
 * asks again on every reap until it says so, or gives up and leaks it.
 */
static int cu_stop(void *inst)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	struct gf_errbuf eb = {{0}};
	if (gf_cu_use_device(in->dev, &eb))
		return 0;
	if (in->h_hang)
		*(volatile int *)in->h_hang = 1;
	for (const struct gf_cu_path *const *p = gf_cu_paths; *p; p++)
		if ((*p)->stop && !(*p)->stop(in, gf_now_ns() + STOP_WAIT_NS))
			return 0;
	if (!streams_idle(in))
		return 0;
	if (!__atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE))
		gf_cu_doubt_end(in);
	return 1;
}

static const char *cu_algo_name(const void *inst)
{
	return gf_cu_algo_str(((const struct gf_cu_inst *)inst)->algo);
}

static const char *cu_describe(const void *inst)
{
	return ((const struct gf_cu_inst *)inst)->desc;
}

extern "C" const struct gf_backend_ops gf_cu_backend = {
	"cuda",	 cu_create,  gf_cu_prime,  gf_cu_submit, gf_cu_finish,
	cu_stop, cu_destroy, cu_algo_name, cu_describe,	 cu_check_memory,
};

/* The table the engine's loader uses (cuda_module.h): through the module's
 * entry point (cu_entry.cu), or directly where a program links these objects. */
extern "C" const struct gf_cuda_module gf_cu_module = {
	GF_CUDA_MODULE_ABI,
	&gf_cu_backend,
	gf_cu_probe,
	gf_cu_pin,
	gf_cu_unpin,
	gf_cu_prewarm,
	gf_cu_prewarm_wait,
	gf_cu_quit_kernels,
	gf_cu_ask_persistent,
	gf_cu_suppress_new,
	gf_cu_suppress_free,
	gf_cu_suppress_process,
	gf_cu_suppress_reset,
	gf_cu_suppress_error,
	gf_cu_suppress_set_floor,
	gf_cu_suppress_hum,
	gf_cu_neural_new,
	gf_cu_neural_free,
	gf_cu_neural_submit,
	gf_cu_neural_collect,
	gf_cu_neural_reset,
	gf_cu_neural_set_atten_lim,
	gf_cu_neural_error,
};
