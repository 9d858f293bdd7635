/**
 * @file cu_persist.cuh
 * Internal to cuda/: the persistent path. A resident kernel (cu_persist.cu)
 * polls a host-mapped command word and convolves each block it is handed:
 * a direct instance's taps, or an FFT instance's first two partitions while
 * a side stream adds the rest a segment ahead (cu_hybrid.cu). Before another
 * instance is built on the device it hands over to the launched path
 * (cu_handover.cu). Its table is gf_cu_path_persistent (cu_persist_path.cu).
 */
#ifndef GPUFIR_CU_PERSIST_CUH
#define GPUFIR_CU_PERSIST_CUH

#include "cu_common.cuh"

/** Persistent kernel's holder: free, in a call (audio thread), being handed over, handed over, or
 * lost (a call failed or missed its deadline: its owner never calls again). */
enum { GF_CU_PK_IDLE, GF_CU_PK_CALL, GF_CU_PK_LEAVING, GF_CU_PK_LEFT, GF_CU_PK_LOST };

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

#endif
