/**
 * @file cu_common.cuh
 * Internal to cuda/: the instance shared by the CUDA backend's files and the
 * per-channel input line both algorithms read their history from.
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

struct gf_cu_direct;
struct gf_cu_fft;
struct gf_cu_live;
struct gf_cu_persist;
struct gf_cu_hybrid;

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

/** Persistent kernel's holder: free, in a call (audio thread), being handed over, handed over, or
 * lost (a call failed or missed its deadline: its owner never calls again). */
enum { GF_CU_PK_IDLE, GF_CU_PK_CALL, GF_CU_PK_LEAVING, GF_CU_PK_LEFT, GF_CU_PK_LOST };

/** The path of a call (cu_submit.cu, submit_call); LOST: a pipelined call past its deadline,
 * which cannot resume. */
enum {
	GF_CU_SUB_PERSIST,
	GF_CU_SUB_FUSED,
	GF_CU_SUB_MAPPED,
	GF_CU_SUB_SINGLE,
	GF_CU_SUB_PIPELINED,
	GF_CU_SUB_LOST
};

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
	struct gf_cu_live *live;       /**< fused per-block path (cu_live.cu), or NULL */
	struct gf_cu_persist *persist; /**< persistent-kernel path (cu_persist.cu), or NULL */
	struct gf_cu_hybrid *hybrid;   /**< an FFT instance's persistent head and FFT tail (cu_hybrid.cu), or NULL */
	float *m_in, *m_out;	       /**< host-mapped staging of small FFT calls (max_block * channels) */
	unsigned *m_done;	       /**< host-mapped completion words of those calls */
	unsigned seq;		       /**< sequence number the last small call's kernel writes there */
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
	int sub_kind;	     /**< GF_CU_SUB_*: the path the call in flight took */
	unsigned sub_words;  /**< GF_CU_SUB_MAPPED: completion words finish waits for */
	cudaEvent_t ev_done; /**< recorded after the single-chunk path's download */
	/* Benchmarks (gf_cuda_split_calls): events around each call's enqueued work. */
	cudaEvent_t ev_split[2];   /**< NULL unless asked for */
	uint64_t split_enqueue_ns; /**< the last call's host time in submit */
	struct gf_errbuf eb;	   /**< last error of prime/process */
	char desc[192];
};

/* The backend's steps, each in the file named. */
/** From this many samples on (or beyond one chunk) a call is large: the pipeline, which DMAs straight
 * from pinned callers. Smaller calls go through staging or host-mapped memory. */
#define GF_CU_DIRECT_IO_SAMPLES 65536
static inline bool gf_cu_small_call(const struct gf_cu_inst *in, uint32_t frames)
{
	return frames <= in->chunk && (size_t)frames * in->channels < GF_CU_DIRECT_IO_SAMPLES;
}
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
/* Calls (cu_prime.cu, cu_submit.cu, cu_pipeline.cu): backend.h's prime, submit and finish. */
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
/** A large call through the copy/compute pipeline, in finish. */
int gf_cu_process_pipelined(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t frames,
			    uint64_t deadline_ns);
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

/* Fused per-block path (cu_live.cu). */
/** Largest call and filter the fused path takes (beyond them the pipelined path runs). */
#define GF_CU_LIVE_MAX_FRAMES 4096u
#define GF_CU_LIVE_MAX_TAPS 16384u
/** Larger calls read too much host memory with strided (per-channel) loads: copies win. */
#define GF_CU_LIVE_MAX_SAMPLES 16384u
/** Small FFT calls on host-mapped staging up to this many samples (frames x channels). */
#define GF_CU_MAPPED_SAMPLES 4096u
#define GF_CU_LIVE_MAX_WARPS 32   /**< warps a block (1024 threads) */
#define GF_CU_LIVE_SLICE_TAPS 512 /**< taps a block sums, about: the taps are spread over slices of blocks */
#define GF_CU_LIVE_MAX_SLICES 32
/** GPUFIR_CUDA_LIVE: 0 never, 1 wherever it fits, unset or auto: timed against the staged path at create. */
enum gf_cu_live_mode { GF_CU_LIVE_OFF, GF_CU_LIVE_ON, GF_CU_LIVE_AUTO };
enum gf_cu_live_mode gf_cu_live_mode(void);
/** Can an instance of these sizes use it? */
int gf_cu_live_fits(uint32_t channels, uint32_t taps, uint32_t max_block);
/** Load its kernels: every call size's variant and the history load. */
void gf_cu_live_preload(void);
int gf_cu_live_new(struct gf_cu_live **out, struct gf_cu_inst *in, struct gf_errbuf *eb);
void gf_cu_live_free(struct gf_cu_live *l, cudaStream_t s);
/** History = silence, position 0. */
int gf_cu_live_reset(struct gf_cu_live *l, cudaStream_t s, struct gf_errbuf *eb);
/** Load the newest frames of @p d_hist (n interleaved frames on the device) as history. */
int gf_cu_live_load(struct gf_cu_live *l, const float *d_hist, uint32_t n, cudaStream_t s,
		    struct gf_errbuf *eb);
/** Start a call: copy into mapped memory, launch the kernel. */
int gf_cu_live_submit(struct gf_cu_live *l, const float *inp, uint32_t frames, struct gf_errbuf *eb);
/** Wait for its completion words until @p deadline_ns (CLOCK_MONOTONIC), copy the output out. */
int gf_cu_live_finish(struct gf_cu_live *l, float *outp, uint32_t frames, uint64_t deadline_ns,
		      struct gf_errbuf *eb);
/* Persistent-kernel path (cu_persist.cu). */
/** Largest filter (taps as padded) and call the persistent kernel takes. */
#define GF_CU_PERSIST_MAX_TAPS 16384u
#define GF_CU_PERSIST_MAX_FRAMES 1024u
/** Does an instance of these sizes fit (sizes, and a quarter of the device's resident blocks)? */
int gf_cu_persist_fits(int dev, uint32_t channels, uint32_t taps_pad, uint32_t max_block);
/** Where the kernel keeps every frame it processed and reads a tail to add to every output
 * (cu_hybrid.cu): device rings of a power of two of frames, [frame][channel]. */
struct gf_cu_persist_rings {
	float *line;
	const float *tail;
	uint32_t line_frames, tail_frames;
};
/** Launch the kernel for @p taps_pad taps a channel at @p d_taps ([channels][taps_pad], written on
 * s_comp), with @p rings or NULL, and wait for its first answer. */
int gf_cu_persist_new(struct gf_cu_persist **out, struct gf_cu_inst *in, const float *d_taps,
		      uint32_t taps_pad, const struct gf_cu_persist_rings *rings, struct gf_errbuf *eb);
/** Stop the kernel and free; a kernel that does not answer keeps (leaks) what it may write: -1. */
int gf_cu_persist_free(struct gf_cu_persist *p);
/**
 * The kernel copies its newest taps_pad-1 frames of history (interleaved, on
 * the device: *hist, *n frames) and stops; one round trip, waited for until
 * @p deadline_ns. The thread that owns the instance's calls, between calls.
 */
int gf_cu_persist_handover(struct gf_cu_persist *p, uint64_t deadline_ns, const float **hist, uint32_t *n,
			   struct gf_errbuf *eb);
/** Ask the kernel to stop (a test hook's spin released first), waiting for its answer until @p deadline_ns. */
int gf_cu_persist_stop(struct gf_cu_persist *p, uint64_t deadline_ns, struct gf_errbuf *eb);
/** After a STOP or HANDOVER was answered: poll until the kernel has ended (0), or -1 at @p deadline_ns. */
int gf_cu_persist_reap(struct gf_cu_persist *p, uint64_t deadline_ns);
/** Enqueue on @p s a copy of the newest of @p n frames at @p d_hist into the kernel's load buffer. */
int gf_cu_persist_stage(struct gf_cu_persist *p, const float *d_hist, uint32_t n, cudaStream_t s,
			uint32_t *staged, struct gf_errbuf *eb);
/** History: the @p n frames staged (after the copy completed; n = 0: silence), the last of them at
 * stream position @p end - 1. */
int gf_cu_persist_load(struct gf_cu_persist *p, uint32_t n, int64_t end, uint64_t deadline_ns, struct gf_errbuf *eb);
/* The persistent path of an FFT instance (cu_hybrid.cu): the kernel convolves the first two
 * partitions directly, a side stream adds the others' output one segment ahead. */
/** Does @p in's FFT shape allow it (partitions, head length, block against the partition)? */
int gf_cu_hybrid_fits(const struct gf_cu_inst *in);
/** Control thread: the head taps, rings, plans and side stream; the kernel is started after it. */
int gf_cu_hybrid_new(struct gf_cu_hybrid **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		     struct gf_errbuf *eb);
/** Free; with @p leak the rings stay allocated (a kernel that did not stop may still write them).
 * @return 0, or -1: its launcher thread did not end and was abandoned with @p h, and may still read
 * the instance's FFT state, which the caller then keeps too. */
int gf_cu_hybrid_free(struct gf_cu_hybrid *h, int leak);
/** Control thread: is nothing of it running (the side stream idle, no launch in hand)? */
int gf_cu_hybrid_idle(struct gf_cu_hybrid *h);
/** Test hook: the side stream spins on @p d_flag (device pointer, host-mapped) for at most @p cycles
 * before the next segment's chain, so later calls find their tails late. Any thread. */
void gf_cu_hybrid_stall_next(struct gf_cu_hybrid *h, const int *d_flag, long long cycles);
/** Test hook: the launcher sleeps @p ns inside its next launch (claimed, not done). */
void gf_cu_hybrid_hold_launcher(struct gf_cu_hybrid *h, uint64_t ns);
/** The head's taps and the rings, for gf_cu_persist_new. */
const float *gf_cu_hybrid_head_taps(const struct gf_cu_hybrid *h, uint32_t *taps_pad, struct gf_cu_persist_rings *rings);
/** Silence at position 0 (enqueued; s_comp waits for it). */
int gf_cu_hybrid_reset(struct gf_cu_hybrid *h, struct gf_cu_inst *in, struct gf_errbuf *eb);
/** After gf_cu_fft_prime of the same @p n frames at @p d_hist: the line ring and the tails of the
 * current and next segment (enqueued; s_comp waits for it). */
int gf_cu_hybrid_prime(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *d_hist, uint32_t n,
		       struct gf_errbuf *eb);
/** Audio thread: start a call on the kernel (deferred to finish while its tail is not ready yet). */
int gf_cu_hybrid_submit(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *inp, uint32_t frames);
/** Audio thread: the call's output, by @p deadline_ns (GF_E_TIMEOUT: still in flight, a later
 * finish collects it; the input was staged at submit). */
int gf_cu_hybrid_finish(struct gf_cu_hybrid *h, struct gf_cu_inst *in, float *outp, uint32_t frames,
			uint64_t deadline_ns);
/** The kernel has handed over (its newest @p n frames at @p hist): the staged FFT path goes on from the
 * same position, with every completed segment's spectrum in the ring. */
int gf_cu_hybrid_leave(struct gf_cu_hybrid *h, struct gf_cu_inst *in, const float *hist, uint32_t n,
		       uint64_t deadline_ns);
/** Test hook: the kernel spins @p cycles GPU clocks before answering the next command. */
void gf_cu_persist_hang_next(struct gf_cu_persist *p, long long cycles);
/** Start a call: the input into mapped memory, then the command word. Never waits. */
int gf_cu_persist_submit(struct gf_cu_persist *p, const float *inp, uint32_t frames);
/** The two halves of a submit: the input into mapped memory (the kernel reads it only after the
 * word), and later the command word. */
void gf_cu_persist_stage_input(struct gf_cu_persist *p, const float *inp, uint32_t frames);
void gf_cu_persist_post_process(struct gf_cu_persist *p, uint32_t frames);
/** Wait for the kernel's answer until @p deadline_ns, then copy its output into @p outp. */
int gf_cu_persist_finish(struct gf_cu_persist *p, float *outp, uint32_t frames, uint64_t deadline_ns,
			 struct gf_errbuf *eb);
/* Stepping aside for another instance's build (cu_handover.cu). */
/** Control thread: @p in's persistent kernel runs; a later create() on its device asks it to hand
 * over. @return 0, or -1 when the registry is full (then the kernel must not stay). */
int gf_cu_pk_register(struct gf_cu_inst *in);
void gf_cu_pk_unregister(struct gf_cu_inst *in);
/**
 * Control thread, before building on @p dev: every resident persistent kernel
 * there hands over to the staged path and ends (bounded wait).
 * @return 0, or GF_E_BUSY (a kernel did not; @p eb says so)
 */
int gf_cu_pk_step_aside(int dev, struct gf_errbuf *eb);
/** Does @p in have a persistent kernel that has not handed over? */
static inline int gf_cu_pk_active(const struct gf_cu_inst *in)
{
	return in->persist && __atomic_load_n(&in->pk_state, __ATOMIC_ACQUIRE) != GF_CU_PK_LEFT;
}
/** Audio thread, submit: 1 use the kernel, 0 the staged path (handed over), -1 error (in->eb). */
int gf_cu_pk_take(struct gf_cu_inst *in);
/** Audio thread, finish of a persistent call that returned @p err: hand over if asked. */
int gf_cu_pk_end_call(struct gf_cu_inst *in, int err, uint64_t deadline_ns);
/** Control thread, an instance the engine gave up on: stop its kernel (its answer waited for until
 * @p deadline_ns, asked again next time if it does not come). @return 1 once the kernel has ended. */
int gf_cu_pk_stop_given_up(struct gf_cu_inst *in, uint64_t deadline_ns);
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

/* Direct algorithm (cu_direct.cu). */
int gf_cu_direct_new(struct gf_cu_direct **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		     struct gf_errbuf *eb);
void gf_cu_direct_free(struct gf_cu_direct *d);
/** Convolve @p frames already-appended frames at line index @p j0 into @p d_out. */
int gf_cu_direct_run(struct gf_cu_direct *d, struct gf_cu_inst *in, int64_t j0, uint32_t frames, float *d_out,
		     cudaStream_t s, struct gf_errbuf *eb);
/** Does this launch accumulate with atomics (d_out must be zeroed first)? */
int gf_cu_direct_needs_zero(const struct gf_cu_direct *d, uint32_t frames);
/** "constant bank N" or "global memory". */
const char *gf_cu_direct_where(const struct gf_cu_direct *d);
/** Taps per channel as stored (padded with zeros to a multiple of 16). */
uint32_t gf_cu_direct_taps_pad(const struct gf_cu_direct *d);
/** The taps in global memory, [channels][taps_pad] (also when a constant bank holds them). */
const float *gf_cu_direct_taps(const struct gf_cu_direct *d);
/** Arguments of the fused per-block kernel (cu_live_kernel.cuh), passed by value. */
struct gf_cu_live_args {
	float *ring;
	uint32_t L;
	int64_t pos;
	int frames, C, taps_pad, ks; /**< ks: taps a warp; a slice is blockDim.y * ks taps */
	const float *in;
	float *out;
	unsigned *done;
	unsigned seq;
	float *part;	      /**< [slices][C][part_stride]: each slice's sums (more than one slice) */
	uint32_t part_stride; /**< frames a plane holds: max_block */
	unsigned *count;      /**< [C][tiles]: arrivals of a tile's slices, wrapping to 0 */
};
/** Once per instance at create: allow the fused kernel @p smem_max bytes of shared memory. */
int gf_cu_direct_live_setup(size_t smem_max, struct gf_errbuf *eb);
/** Load the fused kernel's variants (lazy loading: see warm_staged in cu_choose.cu). */
void gf_cu_direct_live_preload(void);
/** Launch the fused kernel with R = @p r (1, 2, 4) outputs a lane, reading the taps of @p d from
 * global memory (also where a constant bank holds them). */
cudaError_t gf_cu_direct_live_launch(const struct gf_cu_direct *d, int r, dim3 grid, dim3 block, size_t smem,
				     cudaStream_t s, const struct gf_cu_live_args *a);
/** Force the launch shape (benchmarks): 0 = automatic, 4 or 16 outputs per thread. */
void gf_cu_direct_force_r(struct gf_cu_direct *d, int r);

/* Partitioned FFT algorithm (cu_fft.cu; its shape: cu_fft_shape.cu; its work: cu_fft_run.cu). */
#define GF_CU_FFT_MAX_P (1u << 20)	 /**< largest partition */
#define GF_CU_FFT_LIVE_BLOCK 16384u /**< smaller max_block: live rule (latency), else the cost model */

/** Segmentation: hop B (power of two), window N = B + Hh, M partitions of B taps (or one of all). */
struct gf_cu_fft_shape {
	uint32_t B, Hh, N, M;
};
/**
 * Shape for a filter of @p taps and calls of up to @p max_block frames, of
 * which at most @p max_frames go to the device at once (the staging chunk
 * before it is fitted to the hop). GPUFIR_CUDA_FFT_PARTITION or
 * GPUFIR_CUDA_FFT_HOP in the environment force one (benchmarks).
 */
void gf_cu_fft_pick_shape(uint32_t taps, uint32_t max_block, uint32_t max_frames,
			  struct gf_cu_fft_shape *out);
int gf_cu_fft_new(struct gf_cu_fft **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		  const struct gf_cu_fft_shape *shape, struct gf_errbuf *eb);
void gf_cu_fft_free(struct gf_cu_fft *f);
/** Does an instance of @p M partitions for calls of @p max_block frames sum its tails ahead (live)? */
int gf_cu_fft_sums_ahead(uint32_t M, uint32_t max_block);
/** History frames the FFT algorithm keeps in the line (the window, N). */
uint32_t gf_cu_fft_keep(const struct gf_cu_fft_shape *shape);
/** Hop B (the partition in the UPOLS shape). */
uint32_t gf_cu_fft_partition(const struct gf_cu_fft *f);
/** FFT size N. */
uint32_t gf_cu_fft_size(const struct gf_cu_fft *f);
/** Reset spectra (history = silence). */
int gf_cu_fft_reset(struct gf_cu_fft *f, struct gf_cu_inst *in, cudaStream_t s, struct gf_errbuf *eb);
/**
 * Process the @p frames interleaved frames in @p d_in; the line holds the
 * history before them (pos at index @p j0; line.pos not yet advanced). With
 * @p d_out NULL only the spectra are updated (priming).
 */
int gf_cu_fft_run(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_in, int64_t j0, uint32_t frames,
		  float *d_out, cudaStream_t s, struct gf_errbuf *eb);
/** Go on from stream position @p pos after another path ran (the spectrum ring holds every
 * completed segment): nothing cached, the tails summed ahead as after a prime (enqueued on @p s). */
int gf_cu_fft_resume(struct gf_cu_fft *f, int64_t pos, cudaStream_t s, struct gf_errbuf *eb);
/** Load the staged path's kernels now (lazy loading, docs/cuda.md). */
void gf_cu_fft_preload(void);
/** Completion words for the next gf_cu_fft_run's last kernel (NULL: none); returns how many it writes. */
unsigned gf_cu_fft_set_done(struct gf_cu_fft *f, unsigned *done, unsigned seq, uint32_t frames);
/**
 * Batched prime: the spectra of the last M segments of the @p n history frames
 * at @p d_hist (interleaved, on the device), in passes of one gather and one
 * batched R2C each. The line must already hold the newest frames.
 */
int gf_cu_fft_prime(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_hist, uint32_t n,
		    cudaStream_t s, struct gf_errbuf *eb);

/* Memory estimate before an instance allocates (cu_memcheck.cu). */
/** What an instance will allocate: its algorithms, FFT shape, staging chunk and line history. */
struct gf_cu_plan {
	bool direct, fft; /* both while calibration decides between them */
	struct gf_cu_fft_shape shape;
	uint32_t chunk;
	int64_t keep;
	uint32_t live_frames; /* max_block where the fused path may be built beside direct, else 0 */
};
/** Device and pinned host bytes an instance of @p pl for @p channels x @p taps will take (estimates). */
void gf_cu_estimate(const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps, double *device_bytes,
		    double *pinned_bytes);
/**
 * With @p dev current: refuse (GF_E_NOMEM, how much is needed and free in
 * @p eb) an instance whose estimate exceeds the device's free memory
 * (cudaMemGetInfo, plus what the stream-ordered pool holds unused) or the
 * host memory this process may still use for pinned buffers.
 */
int gf_cu_check_memory(int dev, const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps,
		       struct gf_errbuf *eb);

#endif
