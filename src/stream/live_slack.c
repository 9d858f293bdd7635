/* Adaptive slack (latency_slack = "auto"): the stream starts at the tightest
 * latency. An underrun episode is the run of playback callbacks that found
 * the output ring short; it ends at the first callback that finds a whole
 * period there (the worker caught up). Then the slack grows by the periods
 * the episode missed (at least one, up to slack_max): the slack that would
 * have absorbed that stall. The playback callback resyncs in the same call
 * (live_audio.c): the added periods are played as silence right after the
 * underrun's own, one glitch, and the delay is constant again, longer. A
 * host that stalls now and then costs one glitch per larger stall, not one
 * per stall. Runs on the playback callback: plain fields and atomics only. */
#include "live_internal.h"

void gf_live_slack_underrun(struct gf_live *l, uint32_t missing)
{
	l->play.in_underrun = 1;
	uint32_t room = UINT32_MAX - l->play.missed;
	l->play.missed += missing < room ? missing : room;
}

void gf_live_slack_check(struct gf_live *l, uint32_t n)
{
	if (!l->play.in_underrun || gf_ring_read_space(l->out_ring) < n)
		return;
	uint32_t steps = (l->play.missed + n - 1) / n;
	l->play.in_underrun = 0;
	l->play.missed = 0;
	uint32_t s = atomic_load_explicit(&l->slack_now, memory_order_relaxed);
	if (!l->slack_auto || s >= l->slack_max)
		return;
	steps = steps ? steps : 1;
	s = steps < l->slack_max - s ? s + steps : l->slack_max;
	atomic_store_explicit(&l->slack_now, s, memory_order_relaxed);
}
