/*
 * The choice among the GPU paths, in one place (docs/cuda.md, "Which path
 * runs"). Per call: the first path of gf_cu_paths that fits. At create, on the
 * control thread before the instance is published, which paths it builds:
 * the algorithm (AUTO: direct against FFT, by measurement), the fused
 * per-block path against the staged one (by measurement), and the persistent
 * kernel where the engine's gpu_path asks for it ("auto": measured against
 * the path launched per block). Each measured result is kept per shape
 * (cu_pool.cu), so a second instance of the same shape measures nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_direct.cuh"
#include "cu_fft.cuh"
#include "cu_fused.cuh"
#include "cu_hooks.h"
#include "cu_path.cuh"
#include "cu_persist.cuh"

extern "C" {
#include "log.h"
}

/* The order a call tries the paths in: a path an instance built takes its calls before the
 * launched paths beside it; of those, the mapped path only the FFT algorithm's small calls, the
 * staged one the other small calls, and the pipeline anything larger (or anything at all). */
const struct gf_cu_path *const gf_cu_paths[] = {
	&gf_cu_path_persistent, &gf_cu_path_fused,     &gf_cu_path_mapped,
	&gf_cu_path_staged,     &gf_cu_path_pipelined, NULL,
};

const struct gf_cu_path *gf_cu_path_for(const struct gf_cu_inst *in, uint32_t frames)
{
	const struct gf_cu_path *const *p = gf_cu_paths;
	while (p[1] && !(*p)->fits(in, frames))
		p++;
	return *p;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median wall time (ns) of a whole call of @p frames frames of silence, paced
 * 1 ms apart like live blocks: back to back, a path of several launches
 * overlaps its host work with the previous call's and looks cheaper than it
 * is when the GPU has been idle for a period. */
static int time_round_trip(struct gf_cu_inst *in, uint32_t frames, double *ns)
{
	enum { WARM = 3, REPS = 11 };
	const struct timespec gap = {0, 1000000};
	size_t n = (size_t)frames * in->channels;
	float *x = (float *)calloc(n, sizeof(float)), *y = (float *)malloc(n * sizeof(float));
	uint64_t t[REPS];
	int err = x && y ? 0 : GF_E_NOMEM;
	for (int i = 0; i < WARM + REPS && !err; i++) {
		nanosleep(&gap, NULL);
		uint64_t a = gf_now_ns();
		err = gf_cu_process_call(in, x, y, frames);
		if (i >= WARM)
			t[i - WARM] = gf_now_ns() - a;
	}
	if (!err) {
		qsort(t, REPS, sizeof(t[0]), cmp_u64);
		*ns = (double)t[REPS / 2];
	}
	free(x);
	free(y);
	return err;
}

/* AUTO: time both algorithms on a call of this instance's typical size and
 * keep the faster: whole round trips where the fused per-block path would
 * run (it and the FFT path differ in more than device time), device time
 * otherwise. Control thread; a few milliseconds; the result is kept for
 * later instances of the same shape (gf_cu_calib_store). */
int gf_cu_calibrate(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	uint32_t frames = in->max_block < in->chunk ? in->max_block : in->chunk;
	int reps = 5;
	double t_direct = 0.0, t_fft = 0.0;
	in->algo = GF_ALGO_DIRECT;
	int err = in->live ? time_round_trip(in, frames, &t_direct)
			   : gf_cuda_time_calls(in, frames, reps, &t_direct, NULL);
	if (!err) {
		in->algo = GF_ALGO_FFT;
		err = in->live ? time_round_trip(in, frames, &t_fft)
			       : gf_cuda_time_calls(in, frames, reps, &t_fft, NULL);
	}
	if (!err)
		err = CU_TRY(&in->eb, cudaStreamSynchronize(in->s_comp));
	if (err) {
		gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	in->algo = t_direct <= t_fft ? GF_ALGO_DIRECT : GF_ALGO_FFT;
	gf_debug("cuda: calibration, %u taps x %u ch, calls of %u frames: direct%s %.1f us, fft %.1f us (%s)",
		 in->taps, in->channels, frames, in->live ? " (fused, round trip)" : "",
		 in->live ? t_direct / 1e3 : t_direct * 1e3, in->live ? t_fft / 1e3 : t_fft * 1e3,
		 gf_cu_algo_str(in->algo));
	gf_cu_calib_store(in->dev, in->channels, in->max_block, in->taps, in->algo == GF_ALGO_DIRECT);
	if (in->algo == GF_ALGO_DIRECT) {
		gf_cu_fft_free(in->fft);
		in->fft = NULL;
	} else {
		gf_cu_path_fused.free(in);
		gf_cu_direct_free(in->direct);
		in->direct = NULL;
	}
	return 0;
}

/* GPUFIR_CUDA_LIVE unset or auto: the fused path's measured choice for this shape,
 * -1 not measured yet (gf_cu_pick_live measures it), 0 staged, 1 fused; set: 1. */
int gf_cu_live_choice(const struct gf_cu_inst *in)
{
	if (gf_cu_live_mode() != GF_CU_LIVE_AUTO)
		return 1;
	return gf_cu_choice_lookup(GF_CU_CHOICE_FUSED, in->dev, in->channels, in->max_block,
				   gf_cu_direct_taps_pad(in->direct));
}

/*
 * GPUFIR_CUDA_LIVE unset or auto, a shape not measured yet: time whole round
 * trips of max_block frames on the fused path and on the staged one (paced,
 * as live blocks are) and keep the faster. The fused kernel costs one launch
 * per block and no copies; where a launch costs more than the copies, the
 * staged path wins. Control thread, before the instance is published; about
 * 30 ms, once per shape (gf_cu_choice_store). The state is reset after.
 */
int gf_cu_pick_live(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	if (!in->live || gf_cu_live_choice(in) >= 0)
		return 0;
	gf_cu_note_path_timed();
	double t_fused = 0.0, t_staged = 0.0;
	int err = time_round_trip(in, in->max_block, &t_fused);
	struct gf_cu_live *l = in->live;
	in->live = NULL;
	if (!err)
		err = time_round_trip(in, in->max_block, &t_staged);
	in->live = l;
	if (err) {
		gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	int keep = t_fused < t_staged;
	gf_debug("cuda: live path, %u taps x %u ch, blocks of %u: fused %.1f us, staged %.1f us (%s)",
		 in->taps, in->channels, in->max_block, t_fused / 1e3, t_staged / 1e3, keep ? "fused" : "staged");
	gf_cu_choice_store(GF_CU_CHOICE_FUSED, in->dev, in->channels, in->max_block,
			   gf_cu_direct_taps_pad(in->direct), keep);
	if (!keep)
		gf_cu_path_fused.free(in);
	return 0;
}

/*
 * CUDA loads a kernel's code at its first launch (lazy loading), and that load
 * may wait for every kernel on the device: behind a resident persistent kernel
 * it never ends. So before the kernel starts, the launched path (fused or
 * staged) runs once (its kernels and cuFFT's are loaded; the handover goes on
 * there), the kernels it may need later are loaded, and the state is reset.
 */
static int warm_staged(struct gf_cu_inst *in, struct gf_errbuf *eb)
{
	size_t n = (size_t)in->max_block * in->channels;
	float *x = (float *)calloc(n, sizeof(float)), *y = (float *)malloc(n * sizeof(float));
	int err = x && y ? gf_cu_process_call(in, x, y, in->max_block) : GF_E_NOMEM;
	free(x);
	free(y);
	gf_cu_line_preload();
	if (in->fft)
		gf_cu_fft_preload();
	if (in->live) /* a prime, or the calls after a handover, launch them beside the kernel */
		gf_cu_live_preload();
	if (!err)
		err = gf_cu_reset_state(in, eb);
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp));
	if (err && in->eb.msg[0] && !eb->msg[0])
		gf_errbuf_set(eb, "%s", in->eb.msg);
	return err;
}

/* Keep the kernel where a later build can ask it to step aside (cu_handover.cu). */
static void keep_persist(struct gf_cu_inst *in)
{
	if (gf_cu_pk_register(in) != 0) {
		gf_debug("cuda: persistent kernel not used: too many resident in this process");
		gf_cu_path_persistent.free(in);
	}
}

/*
 * The persistent kernel or the staged path for a direct instance's live
 * blocks, or an FFT instance's whose first two partitions it can hold (the
 * rest runs a segment ahead beside it, cu_hybrid.cu). Opt-in (docs/cuda.md):
 * it needs the context's 32 hardware queues
 * and keeps its SMs busy; a later build on the device makes it hand over to
 * the launched path first (cu_handover.cu). gpu_path "persistent" takes it
 * wherever it fits; "auto" times it against the path launched per block
 * (fused or staged, gf_cu_pick_live) on whole round trips of max_block frames
 * and keeps the faster (per shape, so a second instance of the same shape
 * measures nothing); "launched": never. Control thread, before the instance
 * is published.
 */
int gf_cu_pick_persist(struct gf_cu_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	int force = in->gpu_path == GF_GPU_PATH_PERSISTENT ? 1 : in->gpu_path == GF_GPU_PATH_AUTO ? -1 : 0;
	const bool direct = in->algo == GF_ALGO_DIRECT && in->direct;
	if ((!direct && !(in->algo == GF_ALGO_FFT && gf_cu_hybrid_fits(in))) || force == 0)
		return 0;
	const int connections = gf_cu_connections();
	if (connections < 32) { /* a queue shared with the kernel could stall another stream */
		gf_debug("cuda: persistent kernel not used: the context has %d hardware queues, not 32 "
			 "(CUDA started in this process before gpu_path asked for the persistent path; "
			 "or set CUDA_DEVICE_MAX_CONNECTIONS=32)",
			 connections);
		return 0;
	}
	uint32_t tp = direct ? gf_cu_direct_taps_pad(in->direct) : 2 * gf_cu_fft_partition(in->fft);
	if (!gf_cu_persist_fits(in->dev, in->channels, tp, in->max_block))
		return 0;
	/* The choice is kept per shape: an FFT instance's by its whole filter, longer than any direct one's. */
	uint32_t key = direct ? tp : in->taps;
	int known = force < 0 ? gf_cu_choice_lookup(GF_CU_CHOICE_PERSIST, in->dev, in->channels,
						    in->max_block, key)
			      : 1;
	if (known == 0)
		return 0;
	struct gf_errbuf peb = {{0}};
	int err = warm_staged(in, eb);
	if (err)
		return err;
	err = gf_cu_path_persistent.create(in, fs, &peb);
	if (err) { /* the staged path stays; a broken device shows there too */
		gf_debug("cuda: persistent kernel not used: %s", peb.msg);
		in->persist = NULL;
		return 0;
	}
	if (known == 1) {
		keep_persist(in);
		return 0;
	}
	double t_persist = 0.0, t_staged = 0.0;
	gf_cu_note_path_timed();
	err = time_round_trip(in, in->max_block, &t_persist);
	struct gf_cu_persist *p = in->persist;
	in->persist = NULL;
	if (!err)
		err = time_round_trip(in, in->max_block, &t_staged);
	in->persist = p;
	if (!err)
		err = gf_cu_reset_state(in, eb);
	if (!err)
		err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp));
	if (!err)
		err = gf_cu_persist_load(in->persist, 0, 0, gf_now_ns() + GF_CU_WAIT_NS, eb);
	if (err) {
		if (in->eb.msg[0] && !eb->msg[0])
			gf_errbuf_set(eb, "%s", in->eb.msg);
		return err;
	}
	int keep = t_persist < t_staged;
	const char *launched = in->live ? "fused" : "staged";
	gf_debug("cuda: live path, %u taps x %u ch, blocks of %u: persistent %.1f us, %s %.1f us (%s)",
		 in->taps, in->channels, in->max_block, t_persist / 1e3, launched, t_staged / 1e3,
		 keep ? "persistent" : launched);
	gf_cu_choice_store(GF_CU_CHOICE_PERSIST, in->dev, in->channels, in->max_block, key, keep);
	if (keep)
		keep_persist(in);
	else
		gf_cu_path_persistent.free(in);
	return 0;
}
