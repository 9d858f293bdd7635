/*
 * Offline alignment: OUT lines up with IN sample for sample.
 *
 * A linear-phase chain delays everything by (N - 1) / 2 samples. Offline
 * there is no reason to keep that: the writer drops that many frames at the
 * start and the engine runs as many frames of silence at the end, so OUT has
 * IN's length and timing (SoX's `fir` does the same). Only the delay the
 * config build proves to be linear phase is removed (gf_config_build_info):
 * minimum-phase and other filters, delay designs and route delays keep their
 * causal timing. A noise suppressor after the chain (design = "suppress")
 * lags by its frame length: that is removed the same way. --causal keeps the
 * raw causal output; --tail adds the ring-out after the end in either case
 * (the filter's taps - 1 frames, and the suppressor's frames still inside it).
 */
#include "offline_internal.h"

void gf_offline_align_plan(struct gf_offline_align *a, uint32_t taps, uint32_t delay, uint32_t suppress,
			   int tail, int causal)
{
	a->skip = causal ? 0 : (uint64_t)delay + suppress;
	/* without --tail, OUT keeps IN's length: the skipped frames come back from the flush */
	a->flush = tail ? (uint64_t)taps - 1u + suppress : a->skip;
}

uint32_t gf_offline_align_trim(struct gf_offline_align *a, uint32_t frames, uint32_t *offset)
{
	uint32_t drop = a->skip < frames ? (uint32_t)a->skip : frames;
	a->skip -= drop;
	*offset = drop;
	return frames - drop;
}
