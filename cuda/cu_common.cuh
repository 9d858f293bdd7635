/**
 * @file cu_common.cuh
 * Internal to cuda/: the instance (what every path shares: streams, staging,
 * the per-channel input line both algorithms read their history from) and
 * the services every path uses (device, pool, waits, measured choices). Each
 * path and algorithm declares its own functions in its folder's header
 * (cu_path.cuh lists them).
 *
 * Threads: everything here runs on the thread that owns the instance (control
 * thread for create/destroy, audio thread for prime/process). Functions that
 * run in process() only enqueue work on a stream: no allocation, no sync.
 */
#ifndef GPUFIR_CU_COMMON_CUH
#define GPUFIR_CU_COMMON_CUH

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdint.h>
#include <time.h>

extern "C" {
#include "backend.h"
#include "cuda_module.h"
#include "error.h"
}

#include "cu_error.cuh"

/**
 * Per-channel linear input buffer: x at absolute frame t of channel c lives at
 * d_line[c * cap + (t - origin)]. At least @c keep frames before the current
 * position stay readable; when a chunk would run past the end, the newest
 * @c keep frames move to the front (cap >= 2*keep + chunk makes that move
 * non-overlapping and rare).
 */
struct gf_cu_line {
	float *d_line;
	int64_t cap;	/**< frames per channel */
	int64_t keep;	/**< history frames the algorithm reads before the current position */
	int64_t origin; /**< absolute frame of index 0 */
	int64_t pos;	/**< absolute frame of the next input */
};

/* Each path's and algorithm's own state, in its folder (cu_path.cuh lists them). */
struct gf_cu_direct;
struct gf_cu_fft;
struct gf_cu_live;
struct gf_cu_persist;
struct gf_cu_hybrid;
struct gf_cu_mapped;
struct gf_cu_path;

/* The CUDA side of backend.h's gf_cuda_* entry points (cu_device.cu, cu_instance.cu): the
 * engine reaches them through gf_cu_module (cuda_module.h). */
extern "C" {
extern const struct gf_backend_ops gf_cu_backend;
int gf_cu_probe(int gpu_index, char *desc, uint32_t desc_len);
int gf_cu_pin(void *ptr, size_t bytes);
int gf_cu_unpin(void *ptr);
void gf_cu_prewarm(int gpu_index);
void gf_cu_prewarm_wait(void);
void gf_cu_quit_kernels(void); /* cu_persist.cu */
void gf_cu_ask_persistent(void); /* gpu.h's gf_cuda_ask_persistent */
}

/** The least power of two >= @p v (a ring's size for wrap-by-mask). */
static inline uint32_t gf_cu_pow2_at_least(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return (uint32_t)p;
}

/** One backend instance: one filter set on one device. */
struct gf_cu_inst {
	int dev;
	uint32_t channels, taps, max_block;
	uint32_t chunk; /**< frames per staging chunk (the pipeline's unit) */
	enum gf_algo algo;
	enum gf_gpu_path gpu_path; /**< the engine's: may a persistent kernel run live blocks */
	cudaStream_t s_h2d, s_comp, s_d2h;
	cudaEvent_t ev_h2d[2], ev_comp[2], ev_d2h[2];
	float *h_in[2], *h_out[2]; /**< pinned staging, chunk * channels floats */
	float *d_in[2], *d_out[2]; /**< device staging, interleaved */
	struct gf_cu_line line;
	struct gf_cu_direct *direct;
	struct gf_cu_fft *fft;
	struct gf_cu_live *live;       /**< fused per-block path (fused/), or NULL */
	struct gf_cu_persist *persist; /**< persistent-kernel path (persist/), or NULL */
	struct gf_cu_hybrid *hybrid;   /**< an FFT instance's persistent head and FFT tail (cu_hybrid.cu), or NULL */
	struct gf_cu_mapped *mapped;   /**< the mapped path's host-mapped staging (staged/), or NULL */
	long fail_after;	       /**< GPUFIR_CUDA_FAIL_AFTER test hook; -1 = off */
	long hang_after;	       /**< GPUFIR_CUDA_HANG_AFTER test hook; -1 = off */
	int hang_tail;		       /**< GPUFIR_CUDA_HANG_WHERE=tail: the hook stalls an FFT tail's side stream */
	int *h_hang, *d_hang;  /**< mapped flag the hook's kernel spins on (host and device address) */
	long long hang_cycles; /**< the hook kernel's bound: a few seconds of GPU clock */
	int stuck_kernel; /**< atomic: its persistent kernel (or FFT tail launcher) did not stop: free
			     nothing behind it */
	/* The persistent kernel hands over to the staged path before another
	 * instance is built on the device (cu_handover.cu). */
	int pk_state;	      /**< atomic GF_CU_PK_*: who holds the kernel */
	int pk_ask;	      /**< atomic: leave at the end of the next call */
	uint64_t pk_last_ns;  /**< atomic: when the last call ended (an idle one is taken over) */
	int pk_registered;    /**< atomic: in the registry (written under its lock) */
	int in_doubt;	       /**< atomic: counted by gf_cu_doubt (cu_pool.cu) */
	uint64_t calls;
	/* submit/finish: one call in flight (cu_submit.cu) */
	uint32_t sub_frames; /**< frames submitted, 0 = none */
	const float *sub_in; /**< a large (pipelined) call's input, read in finish */
	const struct gf_cu_path *sub_path; /**< the path the call in flight took (cu_path.cuh) */
	int sub_lost;	     /**< it missed its deadline on a path that cannot resume it */
	cudaEvent_t ev_done; /**< recorded after the single-chunk path's download */
	/* Benchmarks (gf_cuda_split_calls): events around each call's enqueued work. */
	cudaEvent_t ev_split[2];   /**< NULL unless asked for */
	uint64_t split_enqueue_ns; /**< the last call's host time in submit */
	struct gf_errbuf eb;	   /**< last error of prime/process */
	char desc[192];
};

/* The backend's steps, each in the file named; each path's in its folder's header. */
static inline const char *gf_cu_algo_str(enum gf_algo a)
{
	return a == GF_ALGO_DIRECT ? "direct" : "fft";
}
/** The hardware queues the context is made with (cu_device.cu). */
int gf_cu_connections(void);
/** Host buffers gf_cu_pin has registered and gf_cu_unpin not yet unregistered (cu_device.cu). */
int gf_cu_pinned_count(void);
/** Silence at position 0 in every part of the instance's state (cu_instance.cu). */
int gf_cu_reset_state(struct gf_cu_inst *in, struct gf_errbuf *eb);
/* Choices by measurement at create (cu_choose.cu). */
/** AUTO: time direct against FFT, keep the faster, free the other. */
int gf_cu_calibrate(struct gf_cu_inst *in, struct gf_errbuf *eb);
/** The fused path's measured choice for this shape: -1 not measured yet, 0 staged, 1 fused. */
int gf_cu_live_choice(const struct gf_cu_inst *in);
/** Time the fused path against the staged one where not measured yet; keep the faster. */
int gf_cu_pick_live(struct gf_cu_inst *in, struct gf_errbuf *eb);
/** The opt-in persistent kernel where it fits and the engine's gpu_path asks for it. */
int gf_cu_pick_persist(struct gf_cu_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb);
/* Calls (cu_prime.cu, cu_submit.cu; each path's in cu_path.cuh): backend.h's prime, submit, finish. */
int gf_cu_prime(void *inst, const float *history, uint32_t frames);
int gf_cu_submit(void *inst, const float *inp, uint32_t frames);
int gf_cu_finish(void *inst, float *outp, uint64_t deadline_ns);
/** A whole call (calibration, path timing): submit, then finish with a generous deadline. */
int gf_cu_process_call(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t frames);
/** Enqueue one chunk already in @p d_in on @p s: line update, convolution into @p d_out (none when
 * priming). Advances the stream position. */
int gf_cu_run_chunk(struct gf_cu_inst *in, const float *d_in, float *d_out, uint32_t frames, cudaStream_t s,
		    struct gf_errbuf *eb);
/** Poll @p ev until it completes or @p deadline_ns passes (never a blocking synchronize). */
int gf_cu_wait_event(struct gf_cu_inst *in, cudaEvent_t ev, uint64_t deadline_ns);
/** The same for work outside an instance (the suppressor, cuda/suppress): the message into @p eb. */
int gf_cu_wait_event_eb(cudaEvent_t ev, uint64_t deadline_ns, struct gf_errbuf *eb);
/** Control thread: poll until everything on @p s has ended (0; an error ends it too) or
 * @p deadline_ns has passed (-1). The bounded form of cudaStreamSynchronize. */
int gf_cu_stream_idle_by(cudaStream_t s, uint64_t deadline_ns);
/** Count one path timing (gf_cuda_paths_timed, cu_hooks.cu). */
void gf_cu_note_path_timed(void);

/* Allocation and device selection that do not stall other instances (cu_pool.cu). */
/** cudaSetDevice only when this thread's current device (as set here) differs. */
int gf_cu_use_device(int dev, struct gf_errbuf *eb);
/** Once per device: keep freed pool memory reserved (no release at synchronize). */
int gf_cu_pool_init(int dev, struct gf_errbuf *eb);
/** Stream-ordered device memory from the default pool. */
int gf_cu_dmalloc(void **p, size_t bytes, cudaStream_t s, struct gf_errbuf *eb);
void gf_cu_dfree(void *p, cudaStream_t s);
/** Pinned host memory (cudaHostAlloc flags) from a process-wide cache; never cudaFreeHost'd while cached. */
int gf_cu_halloc(void **p, size_t bytes, unsigned flags, struct gf_errbuf *eb);
void gf_cu_hfree(void *p);
/** A cached 1-D R2C or C2R plan of n points x batch (no work area: set one). *made_new: a plan was built. */
int gf_cu_plan_get(cufftHandle *h, size_t *ws, int dev, long long n, long long batch, cufftType type,
		   int *made_new, struct gf_errbuf *eb);
void gf_cu_plan_put(cufftHandle h);
/** Free the cached buffers and plans no instance holds (gf_cuda_release_caches). */
void gf_cu_release_caches(void);
/** An instance is alive from begin to end; the last end frees what was retired meanwhile. */
void gf_cu_inst_begin(void);
void gf_cu_inst_end(void);
/** The instance's work missed a deadline, or its kernel did not stop: it is in
 * doubt until its work is known done (gf_cu_doubt_end). Atomic, no lock: the
 * audio thread marks it. Idempotent per instance. */
void gf_cu_doubt(struct gf_cu_inst *in);
void gf_cu_doubt_end(struct gf_cu_inst *in);
/** A persistent kernel was launched / has ended (atomic count). */
void gf_cu_resident_begin(void);
void gf_cu_resident_end(void);
/** Could a wait for the whole device hang now: work in doubt, or a resident
 * persistent kernel (which ends only when told)? Then nothing may wait for it. */
int gf_cu_device_wait_may_hang(void);

/** Measured choices of a live path against the one launched per block, per shape (kept in
 * cu_pool.cu with the algorithm calibration). */
enum gf_cu_choice {
	GF_CU_CHOICE_FUSED,   /**< the fused kernel against the staged path */
	GF_CU_CHOICE_PERSIST, /**< the persistent kernel against the fused or staged path */
	GF_CU_CHOICES
};
/** @return -1 not measured yet, 0 the other path, 1 this one. */
int gf_cu_choice_lookup(enum gf_cu_choice what, int dev, uint32_t channels, uint32_t max_block,
			uint32_t taps_pad);
void gf_cu_choice_store(enum gf_cu_choice what, int dev, uint32_t channels, uint32_t max_block,
			uint32_t taps_pad, int taken);

/**
 * Wait until all @p n words at @p w equal @p seq (the kernel writes them after
 * its output), until @p deadline_ns; the stream is queried for errors while it
 * takes long. @return 0, GF_E_CUDA (stream error), GF_E_TIMEOUT (deadline missed: the
 * work is still in flight)
 */
int gf_cu_wait_words(volatile unsigned *w, unsigned n, unsigned seq, cudaStream_t s, uint64_t deadline_ns,
		     struct gf_errbuf *eb);
/**
 * Calibration results per (device, channels, max_block), reused by later
 * instances: direct won at up to *direct_max taps, FFT from *fft_min taps on
 * (0 and UINT32_MAX when unknown). Direct's cost grows with the taps and the
 * FFT's hardly does, so one measurement settles every shorter or longer filter.
 */
void gf_cu_calib_lookup(int dev, uint32_t channels, uint32_t max_block, uint32_t *direct_max,
			uint32_t *fft_min);
void gf_cu_calib_store(int dev, uint32_t channels, uint32_t max_block, uint32_t taps, int direct_won);
/** Benchmarks (the split hooks of cu_hooks.cu, bench/cuda_floor.cu): create the two events around
 * the work a call enqueues. @return 0, or -1 (already made, or no events). */
int gf_cu_split_arm(cudaEvent_t ev[2]);
/** The span between @p ev[0] and @p ev[1] (waits for ev[1]) and @p enqueue_ns, in us. @return 0 or -1. */
int gf_cu_split_read(cudaEvent_t ev[2], uint64_t enqueue_ns, double *enqueue_us, double *gpu_us);
/** Default deadline of a call's wait when the caller gives none. */
#define GF_CU_WAIT_NS 2000000000ull

/* Line helpers (cu_line.cu). */
int gf_cu_line_init(struct gf_cu_line *l, uint32_t channels, int64_t keep, uint32_t chunk, cudaStream_t s,
		    struct gf_errbuf *eb);
void gf_cu_line_free(struct gf_cu_line *l, cudaStream_t s);
/**
 * After a reset: the newest frames of the @p n interleaved history frames at
 * @p d_hist (device) become the history before position n.
 */
int gf_cu_line_load(struct gf_cu_line *l, uint32_t channels, const float *d_hist, uint32_t n, cudaStream_t s,
		    struct gf_errbuf *eb);
/** The same with the newest frame at position @p end - 1 (the stream goes on at @p end). */
int gf_cu_line_load_at(struct gf_cu_line *l, uint32_t channels, const float *d_hist, uint32_t n, int64_t end,
		       cudaStream_t s, struct gf_errbuf *eb);
/** Load the line's kernels now (lazy loading: a first launch behind a resident kernel may wait for it). */
void gf_cu_line_preload(void);
/** Zero the line and restart at position 0 (history = silence). */
int gf_cu_line_reset(struct gf_cu_line *l, uint32_t channels, cudaStream_t s, struct gf_errbuf *eb);
/**
 * Append @p frames interleaved frames from @p d_in (moving history first if
 * needed). With @p tail_only only the newest @c keep frames are written (the
 * caller reads this chunk's own frames from d_in). @p d_zero_out, when not
 * NULL, is cleared (frames*channels floats) in the same launch. Does not
 * advance pos. *j0 receives the line index of pos.
 */
int gf_cu_line_append(struct gf_cu_line *l, uint32_t channels, const float *d_in, uint32_t frames,
		      int tail_only, float *d_zero_out, cudaStream_t s, struct gf_errbuf *eb, int64_t *j0);

#endif
