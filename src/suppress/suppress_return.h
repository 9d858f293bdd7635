/**
 * @file suppress_return.h
 * The return to the GPU after a switch to a CPU standby, the one policy of
 * the suppressor's bank (suppress_bank.c) and the neural stage
 * (neural/neural_switch.c): the first look after a switch starts a wait; once
 * it has passed, a probe of silence runs on the GPU; a failed probe doubles
 * the wait, up to GF_SUPPRESS_RETURN_MAX_STEPS times the first.
 *
 * Threads: the control thread alone, while the worker is off the GPU (the
 * caller's own hand-over says so). Blocks for as long as the probe does,
 * each of its hops or calls bounded by GF_SUPPRESS_PROBE_WAIT_NS.
 */
#ifndef GPUFIR_SUPPRESS_RETURN_H
#define GPUFIR_SUPPRESS_RETURN_H

#include <stdint.h>

/** The longest wait between tries, in first waits. */
#define GF_SUPPRESS_RETURN_MAX_STEPS 32u

/** The deadline of each call or hop of a probe: a hop's round trip is tens of us to a few ms (a
 * thousand channels of the neural stage, milliseconds): one slower is no healthy GPU. */
#define GF_SUPPRESS_PROBE_WAIT_NS 50000000ull

/** The wait between tries. Zeroed, then gf_suppress_return_init. */
struct gf_suppress_return {
	uint64_t first_ns; /**< the first wait after a switch */
	uint64_t step_ns;  /**< the wait now */
	uint64_t next_ns;  /**< the next try; 0: no look since the switch (or a reset) */
};

/** What gf_suppress_return_try did. */
enum gf_suppress_return_step {
	GF_SUPPRESS_RETURN_FIRST,  /**< the first look since the switch: the first wait starts */
	GF_SUPPRESS_RETURN_WAIT,   /**< the wait has not passed: nothing done */
	GF_SUPPRESS_RETURN_PROBED, /**< probed; on a failure the next try is step_ns away */
};

/** A probe of the GPU from a clean state: 0 healthy, else why not. */
typedef int (*gf_suppress_probe_fn)(void *arg);

/** The first wait after a switch, @p first_ns; no look yet. */
void gf_suppress_return_init(struct gf_suppress_return *r, uint64_t first_ns);

/** A new stream, or the GPU taken back: the next look is the first since a switch. */
void gf_suppress_return_reset(struct gf_suppress_return *r);

/**
 * One look: where the wait has passed, @p probe(@p arg), its answer in @p err (set only then). A
 * healthy probe resets @p r; the caller hands the GPU back to its worker.
 */
enum gf_suppress_return_step gf_suppress_return_try(struct gf_suppress_return *r, gf_suppress_probe_fn probe,
						    void *arg, int *err);

#endif
