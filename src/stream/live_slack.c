/* Adaptive slack (latency_slack = "auto"): the stream starts at the tightest
 * latency. An underrun episode is the run of playback callbacks that found
 * the output ring short; it ends at the first callback that finds a whole
 * period there (the worker caught up). The episode's missed frames measure
 * how late the worker was: `need` = slack + ceil(missed / period) would just
 * have absorbed it. A host's stalls are not all alike, though: on the
 * virtual machines measured (docs/live.md, "Adaptive slack") the first stall
 * to cause an underrun came within seconds and was 2-3 periods, while the
 * worst of ten minutes was 6-10. Growing to exactly `need` cost one glitch
 * per larger stall (0 -> 3 -> 4 -> 6: three in a soak). So the slack grows
 * to twice `need` plus one period: room for stalls twice the size of the
 * one that proved the host stalls; and at least to the periods of the
 * longest stall the audio thread itself has shown (the longest interval
 * between capture callbacks beyond one period, measured since the first
 * second: the same hypervisor stalls the device thread and the worker, and
 * only a worker stall costs audio), plus one; up to slack_max. The playback
 * callback resyncs in the same call (live_audio.c): the added periods are
 * played as silence right after the underrun's own, and the delay is
 * constant again, longer. Runs on the playback callback: plain fields and
 * atomics only. */
#include "live_internal.h"

uint32_t gf_live_slack_next(uint32_t slack, uint32_t missed, uint32_t stall, uint32_t n, uint32_t max)
{
	if (slack >= max || n == 0)
		return slack;
	uint64_t need = (uint64_t)slack + ((uint64_t)missed + n - 1) / n;
	if (need <= slack)
		need = slack + 1;
	uint64_t next = 2 * need + 1;
	uint64_t host = ((uint64_t)stall + n - 1) / n + 1;
	next = host > next ? host : next;
	return next < max ? (uint32_t)next : max;
}

/* The audio thread's longest stall beyond one period @p n, in frames. */
static uint32_t stall_frames(struct gf_live *l, uint32_t n)
{
	uint64_t gap = atomic_load_explicit(&l->cb_gap_run_ns, memory_order_relaxed);
	uint64_t f = gap * l->rate / 1000000000u;
	f = f > n ? f - n : 0;
	return f < UINT32_MAX ? (uint32_t)f : UINT32_MAX;
}

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
	uint32_t missed = l->play.missed;
	l->play.in_underrun = 0;
	l->play.missed = 0;
	uint32_t s = atomic_load_explicit(&l->slack_now, memory_order_relaxed);
	if (!l->slack_auto || s >= l->slack_max)
		return;
	/* What the control thread logs with the step (the measured lateness). */
	uint32_t stall = stall_frames(l, n);
	atomic_store_explicit(&l->slack_step_missed, missed, memory_order_relaxed);
	atomic_store_explicit(&l->slack_step_stall, stall, memory_order_relaxed);
	atomic_store_explicit(&l->slack_steps_missed,
			      atomic_load_explicit(&l->slack_steps_missed, memory_order_relaxed) + missed,
			      memory_order_relaxed);
	atomic_store_explicit(&l->slack_now, gf_live_slack_next(s, missed, stall, n, l->slack_max),
			      memory_order_relaxed);
}
