/* Adaptive slack (latency_slack = "auto"): the stream starts at the tightest
 * latency, and each underrun episode (consecutive playback callbacks that
 * found the output ring short) adds one playback period of slack, up to
 * slack_max. The playback callback sees the new slack on its next call and
 * resyncs (live_audio.c): one period of silence, then a constant delay one
 * period longer. A host that stalls once costs one glitch, not one per
 * stall. Runs on the playback callback: atomics only. */
#include "live_internal.h"

void gf_live_slack_underrun(struct gf_live *l)
{
	if (l->play.in_underrun)
		return; /* the same episode: its frames were already counted */
	l->play.in_underrun = 1;
	uint32_t s = atomic_load_explicit(&l->slack_now, memory_order_relaxed);
	if (l->slack_auto && s < l->slack_max)
		atomic_store_explicit(&l->slack_now, s + 1, memory_order_relaxed);
}

void gf_live_slack_clean(struct gf_live *l)
{
	l->play.in_underrun = 0;
}
