/* The live stream's counters and health, read by the control thread: stats
 * snapshots (gf_live_get_stats) and the periodic check that audio still
 * flows (gf_live_poll). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "live_internal.h"
#include "log.h"

#define STALL_NS 2000000000ull /* poll: no capture (or no block) for this long = device lost */

static const struct gf_live_extremes no_extremes = {0.0f, INT32_MAX, 0, 0};

static void fold(struct gf_live_extremes *into, const struct gf_live_extremes *x)
{
	into->peak = x->peak > into->peak ? x->peak : into->peak;
	into->margin = x->margin < into->margin ? x->margin : into->margin;
	into->gap_ns = x->gap_ns > into->gap_ns ? x->gap_ns : into->gap_ns;
	into->wake_ns = x->wake_ns > into->wake_ns ? x->wake_ns : into->wake_ns;
}

/* The extremes since the previous call (the worker's and callbacks' accumulators reset), and
 * the worst since start. */
static struct gf_live_extremes take_extremes(struct gf_live *l)
{
	struct gf_live_extremes x = {
		.peak = gf_gain_stage_peak_take(l->gain), /* the playback meters: one scan of the output */
		.margin = atomic_exchange(&l->margin_min, INT32_MAX),
		.gap_ns = atomic_exchange(&l->cb_gap_max_ns, 0),
		.wake_ns = atomic_exchange(&l->wake_max_ns, 0),
	};
	l->cb_gap_worst_ns = x.gap_ns > l->cb_gap_worst_ns ? x.gap_ns : l->cb_gap_worst_ns;
	l->wake_worst_ns = x.wake_ns > l->wake_worst_ns ? x.wake_ns : l->wake_worst_ns;
	l->margin_worst = x.margin < l->margin_worst ? x.margin : l->margin_worst;
	return x;
}

/* The window's extremes into @p s: since the previous call, or (@p held) over the held window
 * before and the one filling now; @p roll starts a new one. */
static void report_extremes(struct gf_live *l, struct gf_live_stats *s, int held, int roll)
{
	struct gf_live_extremes x = take_extremes(l);
	fold(&l->xcur, &x);
	if (held) {
		x = l->xprev;
		fold(&x, &l->xcur);
	}
	if (roll) {
		l->xprev = l->xcur;
		l->xcur = no_extremes;
	}
	s->peak = x.peak;
	s->callback_gap_us_max = x.gap_ns / 1e3;
	s->callback_gap_us_worst = l->cb_gap_worst_ns / 1e3;
	s->wake_us_max = x.wake_ns / 1e3;
	s->wake_us_worst = l->wake_worst_ns / 1e3;
	s->margin_frames_min = x.margin;
	s->margin_frames_worst = l->margin_worst;
}

void gf_live_get_stats(struct gf_live *l, struct gf_live_stats *s)
{
	gf_live_get_stats_held(l, s, 0);
}

void gf_live_get_stats_held(struct gf_live *l, struct gf_live_stats *s, uint64_t min_window_ns)
{
	memset(s, 0, sizeof(*s));
	s->blocks = atomic_load(&l->blocks);
	s->input_overflows = atomic_load(&l->in_overflow);
	s->output_underflows = atomic_load(&l->out_underflow);
	s->late_blocks = atomic_load(&l->late);
	s->late_blocks_swap = atomic_load(&l->late_swap);
	s->late_blocks_host = atomic_load(&l->late_host);
	s->late_blocks_swap_host = atomic_load(&l->late_swap_host);
	s->worker_rt_prio = atomic_load(&l->worker_rt_prio);
	s->memory_locked = l->memory_locked;
	s->device_xruns = atomic_load(&l->dev_xruns);
	s->record_errors = l->rec ? gf_recorder_errors(l->rec) : 0;
	uint64_t now = gf_now_ns();
	int roll = !l->poll_window.count || now - l->poll_window_ns >= min_window_ns;
	if (roll) {
		gf_timehist_window(l->hist, GF_LIVE_WINDOW_POLL, &l->poll_window);
		l->poll_window_ns = now;
	}
	s->block_us_median = l->poll_window.median_us;
	s->block_us_p99 = l->poll_window.p99_us;
	s->block_us_max = l->poll_window.max_us;
	s->clipped = gf_gain_stage_clipped_total(l->gain);
	s->latency_frames = l->playback ? atomic_load(&l->latency) : 0;
	s->suppress_frames = gf_suppress_bank_latency(l->suppress);
	s->sample_rate = l->rate;
	s->channels = l->channels;
	s->out_channels = l->out_channels;
	s->running = l->running && !l->device_error;
	s->device_error = l->device_error;
	s->output_overflows = atomic_load(&l->out_overflow);
	s->record_dropped = atomic_load(&l->rec_dropped);
	s->record_frames = l->rec ? gf_recorder_frames(l->rec) : 0;
	s->engine_errors = atomic_load(&l->engine_errors);
	s->capture_frames = atomic_load(&l->capture_pos);
	s->device_period = atomic_load(&l->cb_frames);
	s->resyncs = atomic_load(&l->resyncs);
	s->latency_slack = atomic_load(&l->slack_now);
	s->latency_slack_auto = l->slack_auto;
	s->slack_step_missed = atomic_load(&l->slack_step_missed);
	s->slack_step_stall = atomic_load(&l->slack_step_stall);
	s->slack_steps_missed = atomic_load(&l->slack_steps_missed);
	s->resampling = l->clock != NULL;
	s->clock_ratio = 1.0 + atomic_load(&l->ratio_ppb) * 1e-9;
	s->delay_error_frames = atomic_load(&l->delay_err_milli) / 1000.0;
	s->clock_skipped_frames = atomic_load(&l->clock_skipped);
	s->clock_inserted_frames = atomic_load(&l->clock_inserted);
	report_extremes(l, s, min_window_ns > 0, roll);
}

void gf_live_block_times(struct gf_live *l, unsigned window, struct gf_live_block_times *t)
{
	struct gf_timehist_summary h;
	gf_timehist_window(l->hist, window, &h);
	*t = (struct gf_live_block_times){h.count, h.median_us, h.p99_us, h.max_us};
}

uint64_t gf_live_capture_position(const struct gf_live *l)
{
	return atomic_load_explicit(&l->capture_pos, memory_order_acquire);
}

static uint64_t elapsed_ns(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - since->tv_sec) * 1000000000u + (uint64_t)now.tv_nsec -
	       (uint64_t)since->tv_nsec;
}

/* Why the stream is unhealthy, or NULL. */
static const char *check_health(struct gf_live *l, char *buf, size_t len)
{
	PaStream *streams[2] = {l->in_stream, l->out_stream};
	for (int i = 0; i < 2; i++) {
		if (!streams[i])
			continue;
		PaError a = Pa_IsStreamActive(streams[i]);
		if (a != 1) {
			snprintf(buf, len, "%s stopped unexpectedly (%s)", i ? l->out_desc : l->in_desc,
				 a < 0 ? Pa_GetErrorText(a) : "device lost or audio server gone");
			return buf;
		}
	}
	/* PipeWire reports a lost server or stream as an error. A stream the
	 * graph does not run (no source linked: a microphone unplugged, until the
	 * session manager links another) is idle, not lost: the node stays for
	 * the apps recording it, and the capture resumes when a source comes. */
	if (l->pw)
		return gf_live_pw_lost(l, buf, len);
	/* Blocks advance only while capture delivers and the worker keeps up. */
	uint64_t blocks = atomic_load(&l->blocks), cap = atomic_load(&l->capture_pos);
	if (blocks != l->poll_pos) {
		l->poll_pos = blocks;
		l->poll_cap = cap;
		clock_gettime(CLOCK_MONOTONIC, &l->poll_time);
	} else if (elapsed_ns(&l->poll_time) > STALL_NS) {
		if (cap == l->poll_cap)
			snprintf(buf, len, "%s delivered no audio for %.1f s", l->in_desc,
				 elapsed_ns(&l->poll_time) / 1e9);
		else
			snprintf(buf, len, "audio worker stalled: no block for %.1f s",
				 elapsed_ns(&l->poll_time) / 1e9);
		return buf;
	}
	return NULL;
}

int gf_live_poll(struct gf_live *l)
{
	if (!l->running || l->device_error)
		return l->device_error;
	char why[512];
	if (check_health(l, why, sizeof(why))) {
		l->device_error = GF_E_AUDIO;
		gf_err("live: %s", why);
	} else if (l->pw) {
		/* The latency changes while the stream runs (a period change, a slack step): the
		 * graph hears of each within a poll. */
		gf_live_pw_latency(l, atomic_load(&l->latency) + gf_suppress_bank_latency(l->suppress));
	}
	return l->device_error;
}

int gf_live_idle(const struct gf_live *l)
{
	return l->pw && gf_live_pw_idle(l);
}
