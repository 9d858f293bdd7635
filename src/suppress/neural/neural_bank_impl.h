/*
 * The neural stage's state, shared by its two files: neural_bank.c (framing,
 * the CPU's helpers, the stage's API) and neural_switch.c (the GPU's hops, the
 * switch to the CPU standby and the return). Not a public header.
 */
#ifndef GPUFIR_NEURAL_BANK_IMPL_H
#define GPUFIR_NEURAL_BANK_IMPL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "neural_bank.h"
#include "neural_pool.h"
#include "suppress_return.h"

struct gf_neural_bank {
	const struct gf_neural_ops *ops; /* the CPU's: the stage's backend, or the GPU's standby */
	void *inst;
	uint32_t channels, active, latency;
	uint32_t *chan; /* active: their channel numbers, ascending */
	float *fill;	/* active x hop, planar: the hop being gathered */
	float *job_in;	/* active x hop: the hop in flight (or last run) */
	float *job_out; /* active x hop: its output, written by the helpers or the GPU's collect */
	float *play;	/* active x hop: the output played out now */
	uint32_t pos;	/* frames of the current hop gathered (and played) */
	int have_play;	/* play holds a hop's output (else its channels are silence) */
	float *dry;	/* latency x channels, interleaved: every channel's delay line */
	uint32_t dry_pos;
	struct gf_neural_pool *pool;
	uint64_t submitted_ns; /* when the hop in flight was started */
	float gain, gain_step; /* the model's share of the output (1 - the dry's), ramped */
	_Atomic int bypass;
	_Atomic uint32_t atten_bits; /* the limit asked for, float bits: gf_neural_atten_ask/_asked */
	float atten_job;	     /* the CPU's job's: the helpers apply it where it changed */
	int atten_new;		     /* the job carries a new limit (or restarts the standby) */
	_Atomic int given_up;
	_Atomic uint64_t late, dropped, failures;
	struct gf_neural_bank *kept_next; /* kept for good (free() with a hop hung): the next one */

	/* The GPU (neural_switch.c); gops NULL where the stage runs on the CPU alone. */
	const struct gf_neural_ops *gops;
	void *ginst;
	int gpu_now;	    /* worker: hops go to the GPU */
	int gpending;	    /* worker: a GPU hop in flight, not yet collected */
	float gpu_atten;    /* worker: the limit the GPU has */
	_Atomic int on_gpu; /* gpu_now, published for the control thread and the status */
	_Atomic int ready;  /* control thread: the GPU probed healthy; the worker takes it at a hop */
	float *hist;	    /* prime x active x hop: the last hops gathered, the newest this one */
	uint32_t prime;	    /* hops the standby catches up on when it takes over */
	uint32_t hist_next; /* the oldest hop of hist, overwritten next */
	int prime_due;	    /* worker: the standby's next job restarts it on hist */
	int job_prime;	    /* the job in flight is that restart (the helpers read it) */
	uint32_t job_hist;  /* its oldest hop of hist */
	float *probe;	    /* control thread: 2 x active x hop for the return's probe hops */
	struct gf_suppress_return ret; /* control thread: the wait before a return */
	_Atomic uint64_t gpu_failures, gpu_returns;
};

/* The attenuation limit asked for, as float bits in one atomic: set by the control thread, read by
 * the worker at a hop (relaxed: a limit a hop late is harmless). */
static inline void gf_neural_atten_ask(struct gf_neural_bank *b, float db)
{
	uint32_t bits;
	memcpy(&bits, &db, sizeof(bits));
	atomic_store(&b->atten_bits, bits);
}

static inline float gf_neural_atten_asked(struct gf_neural_bank *b)
{
	uint32_t bits = atomic_load_explicit(&b->atten_bits, memory_order_relaxed);
	float db;
	memcpy(&db, &bits, sizeof(db));
	return db;
}

/* neural_switch.c, for neural_bank.c: */

/* The GPU's instance for the stage where @p o asks for one and it can be made (else the CPU alone,
 * said once): 0, or GF_E_NOMEM. Control thread, from new(). */
int gf_neural_switch_new(struct gf_neural_bank *b, const struct gf_neural_params *p,
			 const struct gf_neural_bank_opts *o);
void gf_neural_switch_free(struct gf_neural_bank *b);
/* A full hop while on the GPU: 1 when the GPU took it (collected, late, or dropped behind a late
 * one), 0 when the CPU is to run it: not on the GPU, or the GPU failed or hung now (the switch made:
 * the standby restarts on the last hops). Worker. */
int gf_neural_switch_hop(struct gf_neural_bank *b, uint64_t deadline);
/* Within a hop: a late GPU hop back is collected (its remaining frames play); one that failed
 * switches to the standby (from the next hop). Worker. */
void gf_neural_switch_poll(struct gf_neural_bank *b);
/* The GPU from its reset state again (audio stopped), where it can be reset; the kept hops cleared
 * where @p idle (no helper's job still out: a hung standby's restart may still read them). Control
 * thread. */
void gf_neural_switch_reset(struct gf_neural_bank *b, int idle);

/* neural_bank.c, for neural_switch.c: the hop in flight is done: its output plays from the current
 * frame of the hop on. */
void gf_neural_bank_collected(struct gf_neural_bank *b);

#endif
