/**
 * @file cu_hybrid.cuh
 * Internal to the persistent path of FFT instances: its state, shared by
 * cu_hybrid.cu (the tail's kernels and chains, the calls, prime, reset,
 * handover) and cu_hybrid_launcher.cu (the thread that launches the chains).
 */
#ifndef GPUFIR_CU_HYBRID_CUH
#define GPUFIR_CU_HYBRID_CUH

#include <pthread.h>

#include "cu_fft.cuh"
#include "cu_persist.cuh"

#define HY_QUEUE 8			   /* segments handed to the launcher and not yet launched */
#define HY_POLL_MIN_NS 50000ull		   /* the launcher's polls: 8 a segment, within these bounds */
#define HY_POLL_MAX_NS 2000000ull
#define HY_POLL_FIRST_NS 250000ull     /* until two segments have come (their period unknown) */
#define HY_DRAIN_WAIT_NS 2000000000ull /* control thread: a launch in hand ends by then */
#define HY_JOIN_NS 1000000000ll	       /* free: the launcher ends by then, or is abandoned */
#define HY_WAIT_STEP_NS 20000ull       /* a wait for the launcher or the tail sleeps this long a step */

struct gf_cu_hybrid {
	struct gf_cu_fft *f; /**< the instance's: spectra H, the spectrum ring X, the shape (P = f->B) */
	uint32_t RL, RT;	 /**< line and tail rings, frames (powers of two) */
	float *d_head;		 /**< [C][2P] taps 0 .. 2P-1 */
	float *d_line;		 /**< [RL][C] every frame the kernel processed */
	float *d_tail;		 /**< [RT][C] the tail's output by frame */
	float *d_W, *d_y;	 /**< [C][N] a window, an inverse transform */
	cufftComplex *d_Y;	 /**< [C][NB] */
	void *d_work;		 /**< cuFFT's work area for the two plans */
	cufftHandle r2c, c2r;	 /**< N points x C, from the plan cache */
	int have_r2c, have_c2r;
	cudaStream_t s;		 /**< the side stream, lowest priority */
	const volatile int *d_stall; /**< test hook: the launcher stalls the side stream on it next */
	long long stall_cycles;
	uint64_t hold_ns; /**< atomic test hook: the launcher sleeps this long in its next launch */
	cudaEvent_t ev_side, ev_comp;
	unsigned *h_ready;	 /**< host-mapped: tails are ready for segments below it (mod 2^32) */
	int64_t pos;		 /**< stream position of the next frame */
	int64_t completes;	 /**< the segment the call in hand completes, or -1 */
	uint32_t need;		 /**< the call in hand's last segment (mod 2^32) */
	int deferred;		 /**< the call in hand is posted in finish */
	int dev;
	/* The launcher thread: the audio thread writes q[head % HY_QUEUE], then head (release);
	 * the launcher, polling, claims q[claim % HY_QUEUE] (a compare-and-swap on claim),
	 * launches it, then sets done (release). A drain claims what is left and launches it
	 * itself, so it never waits for a launcher that sleeps, only for one launching. */
	pthread_t thr;
	int thr_started;
	int64_t q[HY_QUEUE];
	uint64_t q_head, q_claim, q_done; /**< atomic */
	int quit;		 /**< atomic */
	int thr_err;		 /**< atomic: a launch failed (its message in leb) */
	struct gf_errbuf leb;
};

/* cu_hybrid.cu */
/** Segment k is complete in the line ring: its spectrum into the ring, then segment k+2's tail. */
int gf_cu_hybrid_chain(struct gf_cu_hybrid *h, int64_t k, struct gf_errbuf *eb);
/** The GPUFIR_CUDA_HANG_WHERE=tail hook's spin on the side stream, when it was asked for. */
int gf_cu_hybrid_stall_if_asked(struct gf_cu_hybrid *h, struct gf_errbuf *eb);
/* cu_hybrid_launcher.cu */
/** The launcher thread (pthread_create's start routine, @p arg the hybrid). */
void *gf_cu_hybrid_launcher_main(void *arg);
/** Audio thread: segment k is complete; the launcher chains it. Never waits, makes no syscall. */
int gf_cu_hybrid_request(struct gf_cu_hybrid *h, int64_t k, struct gf_errbuf *eb);
/** Every segment handed over is launched by @p deadline_ns (what is not claimed, here). */
int gf_cu_hybrid_drain(struct gf_cu_hybrid *h, uint64_t deadline_ns, struct gf_errbuf *eb);
/** Free: ask the launcher to end and wait a bounded time. @return 0, or -1 (it still runs). */
int gf_cu_hybrid_launcher_stop(struct gf_cu_hybrid *h);

#endif
