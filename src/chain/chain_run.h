/**
 * @file chain_run.h
 * What runs of a chain, block by block: the engine, then the suppressor bank
 * (its suppressors and the neural stage), then the gain stage. One process
 * function for the live worker and the offline pipeline, so both run the
 * stages in one order with one rule for a muted block (a gap to the
 * suppressor, whose noise estimate does not learn from it).
 *
 * The stages are built off the audio path (src/config/chain.h) and owned by
 * the caller; this holds pointers to them. Live, gf_chain_process() is
 * real-time safe: it allocates nothing, takes no lock, logs nothing, and
 * every wait in it ends at the block's one deadline. Offline (retry set) it
 * may redo a failed call on the CPU, which builds an instance: the offline
 * engine thread is also its engine's control thread.
 *
 * Folder src/chain/ (this run and the gain stage): this header is its entry
 * point. It stands on the suppressor and the engine.
 */
#ifndef GPUFIR_CHAIN_RUN_H
#define GPUFIR_CHAIN_RUN_H

#include <stdint.h>

#include "engine.h"
#include "gain_stage.h"
#include "suppress_bank.h"

/** The stages of one stream's chain, in the order a block crosses them. */
struct gf_chain_run {
	struct gf_engine *engine;	   /**< the filter set's engine (required) */
	struct gf_suppress_bank *suppress; /**< after the engine; NULL: none */
	struct gf_gain_stage *gain;	   /**< volume, mute, meters, last; NULL: none (offline) */
	uint32_t in_channels;		   /**< the input's channels (the gain stage meters them) */
	uint32_t out_channels;		   /**< the engine's output channels */
	int retry; /**< offline: a failed engine call is redone on the CPU (engine params.retry) and
		      a failure ends the block before the suppressor; live: 0 */
};

/**
 * One block of @p frames frames through @p c: @p in (NULL: the engine's ring-out, offline's
 * tail) filtered into @p out, then the suppressor on @p out (a muted block, NaN/Inf input or
 * late, as a gap), then the gain stage, metering @p meter_in (NULL: the capture side unmetered).
 * Every wait ends at @p deadline_ns (gf_now_ns() time; 0: none, the engine's and the bank's own
 * bounds). @p sup_err (may be NULL) gets the suppressor's error, 0 if it ran or there is none.
 * @return the engine's error, 0 on success
 */
int gf_chain_process(const struct gf_chain_run *c, const float *in, const float *meter_in, float *out,
		     uint32_t frames, uint64_t deadline_ns, int *sup_err);

#endif
