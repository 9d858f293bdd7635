/* What the daemon tells the world: systemd's STATUS= line, the status
 * socket's "key: value" block, and the periodic stats log line. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_control.h"
#include "daemon_internal.h"
#include "neural_bank.h"
#include "log.h"
#include "reload.h"

const char *gf_dm_state_name(const struct daemon *d)
{
	if (d->state != D_LOST)
		return d->state == D_RUNNING ? "running" : "starting";
	return d->server_lost ? "audio server lost, retrying" : "audio device lost, retrying";
}

/* Audio gpufir lost: frames dropped or played as silence. A late block (engine
 * time over the period) is counted apart: the latency's slack absorbs it. */
static uint64_t own_xruns(const struct gf_live_stats *s)
{
	return s->input_overflows + s->output_underflows + s->output_overflows;
}

/* "building filters for 2.1 s" while a build runs, else "". */
static void build_text(const struct daemon *d, char *buf, size_t len)
{
	buf[0] = '\0';
	if (d->build)
		snprintf(buf, len, "%s: building filters for %.1f s", gf_dm_build_name(d->build),
			 (gf_now_ms() - d->build->t0_ms) / 1000.0);
}

/* The engine's late and given-up work, and its return to the GPU (docs/daemon.md). */
static void status_engine(const struct gf_engine_stats *es, char *buf, size_t len)
{
	snprintf(buf, len,
		 "engine_late_blocks: %" PRIu64 "\nengine_hangs: %" PRIu64 "\nengine_gpu_returns: %" PRIu64
		 "\nengine_dying: %" PRIu64 "\nengine_cpu_too_slow: %" PRIu64 "\n",
		 es->late_blocks, es->hangs, es->returns, es->dying, es->cpu_too_slow);
}

/* The one-line STATUS= text. */
static void status_line(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_live_stats *s = &d->ls;
	char bt[80];
	build_text(d, bt, sizeof(bt));
	if (!d->engine) {
		snprintf(buf, len, "starting: %s", bt[0] ? bt : "no engine");
		return;
	}
	if (d->state == D_LOST) {
		snprintf(buf, len, "audio %s lost: retrying (attempt %u): %.400s",
			 d->server_lost ? "server" : "device", d->retries + 1, d->lost_reason);
		return;
	}
	struct gf_engine_stats es;
	gf_engine_get_stats(d->engine, &es);
	char sup[48] = "", ch[32];
	if (d->suppress)
		snprintf(sup, sizeof(sup), " + suppressor %u", gf_suppress_bank_latency(d->suppress));
	uint32_t ci = gf_reload_channels(d->cfg), co = gf_reload_out_channels(d->cfg);
	if (ci == co)
		snprintf(ch, sizeof(ch), "%u", ci);
	else /* a mixer: a crossover, a downmix */
		snprintf(ch, sizeof(ch), "%u -> %u", ci, co);
	snprintf(buf, len,
		 "%s%s%u Hz, %s ch, %u taps, %s/%s, latency %u frames%s, xruns %" PRIu64 " (device %" PRIu64
		 "), late blocks %" PRIu64 ", block p99 %.0f us%s%s%s%.300s",
		 es.cpu_too_slow ? "muted: the GPU failed and the CPU cannot run this filter in real time; "
				 : "",
		 d->state == D_STARTING ? "starting: " : "", d->cfg->sample_rate, ch,
		 gf_engine_taps(d->engine), gf_engine_backend_name(d->engine), gf_engine_algo_name(d->engine),
		 s->latency_frames, sup, own_xruns(s), s->device_xruns, s->late_blocks, s->block_us_p99,
		 bt[0] ? ", " : "", bt, d->last_reload[0] ? ", " : "", d->last_reload);
}

void gf_dm_status_update(struct daemon *d, int force)
{
	char line[512];
	int64_t now = gf_now_ms();
	gf_dm_volume_tick(d); /* every loop pass: the state file's debounce */
	if (!force && now < d->next_status_ms)
		return;
	d->next_status_ms = now + STATUS_EVERY_MS;
	status_line(d, line, sizeof(line));
	if (strcmp(line, d->status_sent) != 0) {
		gf_notify_status(line);
		snprintf(d->status_sent, sizeof(d->status_sent), "%s", line);
	}
}

static double dbfs(float peak)
{
	return peak > 0.0f ? 20.0 * log10(peak) : -INFINITY;
}

static void margin_text(int32_t m, char *buf, size_t len)
{
	if (m == INT32_MAX)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%" PRId32, m);
}

/* The status lines that explain underruns: recent window, then since the stream started. */
static void status_timing(const struct gf_live_stats *s, char *buf, size_t len)
{
	char m[16], mw[16];
	margin_text(s->margin_frames_min, m, sizeof(m));
	margin_text(s->margin_frames_worst, mw, sizeof(mw));
	snprintf(buf, len,
		 "margin_frames_min: %s\nmargin_frames_worst: %s\nwake_us_max: %.1f\nwake_us_worst: %.1f\n"
		 "callback_gap_us_max: %.1f\ncallback_gap_us_worst: %.1f\n",
		 m, mw, s->wake_us_max, s->wake_us_worst, s->callback_gap_us_max, s->callback_gap_us_worst);
}

/* How the latency came about: device period, slack, resyncs (period changes, slack steps). */
static void status_latency(const struct gf_live_stats *s, char *buf, size_t len)
{
	snprintf(
		buf, len,
		"device_period: %u\nlatency_slack: %u\nlatency_slack_mode: %s\nslack_step_missed_frames: %u\n"
		"output_underflows_slack_steps: %" PRIu64 "\nresyncs: %" PRIu64
		"\nclocks: %s\nclock_ratio: %.9f\ndelay_error_frames: %.3f\nclock_skipped_frames: %" PRIu64
		"\nclock_inserted_frames: %" PRIu64 "\nworker_rt_priority: %d\nmemory_locked: %d\n",
		s->device_period, s->latency_slack, s->latency_slack_auto ? "auto" : "fixed",
		s->slack_step_missed, s->slack_steps_missed, s->resyncs,
		s->resampling ? "two (resampling)" : "one", s->clock_ratio, s->delay_error_frames,
		s->clock_skipped_frames, s->clock_inserted_frames, s->worker_rt_prio, s->memory_locked);
}

/* The neural stage (design = "deepfilter"): which, its latency (a part of suppressor_frames, the
 * stages after the FIR in all), and how its hops kept their deadlines (docs/daemon.md). */
static void status_neural(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_neural_bank *nb = gf_suppress_bank_neural(d->suppress);
	struct gf_config_neural nc = {0};
	for (uint32_t c = 0; nb && c < gf_reload_out_channels(d->cfg) && !nc.name; c++)
		gf_config_neural_of(d->cfg, c, &nc);
	if (!nc.name) {
		snprintf(buf, len, "neural: none\n");
		return;
	}
	uint32_t rate = d->cfg->sample_rate, n = gf_neural_bank_latency(nb);
	struct gf_api_stage live = {0}; /* the live controls in force: the API's or the config's */
	struct gf_errbuf eb = {{0}};
	gf_daemon_stage_get(d, GF_API_NEURAL, &live, &eb);
	snprintf(buf, len,
		 "neural: %s\nneural_model: %.400s\nneural_backend: %s\nneural_channels: %u\nneural_threads: "
		 "%u\nneural_atten_lim_db: %.1f\nneural_bypass: %s\nneural_frames: %u\nneural_ms: "
		 "%.3f\nneural_late: %" PRIu64 "\nneural_dropped: %" PRIu64 "\nneural_failures: %" PRIu64
		 "\nneural_gpu: %s\nneural_gpu_failures: %" PRIu64 "\nneural_gpu_returns: %" PRIu64 "\n",
		 nc.name, nc.model, gf_neural_bank_backend(nb), gf_neural_bank_active(nb),
		 gf_neural_bank_threads(nb), live.db, live.bypass ? "yes" : "no", n,
		 rate ? 1000.0 * n / rate : 0.0, gf_neural_bank_late(nb), gf_neural_bank_dropped(nb),
		 gf_neural_bank_failures(nb), gf_neural_bank_on_gpu(nb) ? "yes" : "no",
		 gf_neural_bank_gpu_failures(nb), gf_neural_bank_gpu_returns(nb));
}

/* The noise suppressor: which, its latency, and the path's in all (docs/daemon.md). */
static void status_suppressor(const struct daemon *d, const struct gf_live_stats *s, char *buf, size_t len)
{
	uint32_t rate = d->cfg->sample_rate, n = gf_suppress_bank_latency(d->suppress);
	uint32_t total = s->latency_frames + n;
	struct gf_config_suppress cs = {0};
	for (uint32_t c = 0; d->suppress && c < gf_reload_out_channels(d->cfg) && !cs.name; c++)
		gf_config_suppress_of(d->cfg, c, &cs);
	char where[160];
	gf_suppress_bank_where(d->suppress, where, sizeof(where));
	struct gf_api_stage live = {0}; /* the live controls in force: the API's or the config's */
	struct gf_errbuf eb = {{0}};
	gf_daemon_stage_get(d, GF_API_SUPPRESSOR, &live, &eb);
	if (cs.name)
		snprintf(buf, len,
			 "suppressor: %s\nsuppressor_channels: %u\nsuppressor_reduction_db: %.1f\n"
			 "suppressor_bypass: %s\n"
			 "suppressor_noise: %s\nsuppressor_where: %s\nsuppressor_gpu_channels: %u\n"
			 "suppress_gpu_failures: %" PRIu64 "\nsuppress_gpu_late: %" PRIu64
			 "\nsuppress_gpu_returns: %" PRIu64 "\n",
			 cs.name, gf_suppress_bank_active(d->suppress), live.db, live.bypass ? "yes" : "no",
			 cs.noise ? cs.noise : "none", where, gf_suppress_bank_gpu_channels(d->suppress),
			 gf_suppress_bank_gpu_failures(d->suppress), gf_suppress_bank_gpu_late(d->suppress),
			 gf_suppress_bank_gpu_returns(d->suppress));
	else
		snprintf(buf, len, "suppressor: none\n");
	size_t used = strlen(buf);
	status_neural(d, buf + used, len - used);
	used = strlen(buf);
	snprintf(buf + used, len - used,
		 "suppressor_frames: %u\nsuppressor_ms: %.3f\ntotal_latency_frames: %u\ntotal_latency_ms: "
		 "%.3f\n",
		 n, rate ? 1000.0 * n / rate : 0.0, total, rate ? 1000.0 * total / rate : 0.0);
}

/* An auto slack step: what the underrun that caused it measured, so that a
 * log tells how late the worker was and why (docs/live.md, "Why an underrun
 * happened"). The timings are the stats window's that saw the step. */
static void log_slack_step(const struct gf_live_stats *s, uint32_t rate)
{
	double ms = rate ? 1000.0 / rate : 0.0;
	gf_notice("auto slack: the underrun missed %u frames (%.2f ms); the audio thread's longest stall "
		  "%u frames (%.2f ms) beyond a period; in that window worker wake-up %.0f us, engine block "
		  "%.0f us, callback interval %.0f us, playback margin %d frames (worst since start: "
		  "wake-up %.0f us, callback interval %.0f us)",
		  s->slack_step_missed, ms * s->slack_step_missed, s->slack_step_stall,
		  ms * s->slack_step_stall, s->wake_us_max, s->block_us_max, s->callback_gap_us_max,
		  s->margin_frames_min, s->wake_us_worst, s->callback_gap_us_worst);
}

/* The latency changed while playing (a new device period, an auto slack
 * step): say so in the log, STATUS= and (through the stats) the socket. */
void gf_dm_latency_check(struct daemon *d)
{
	const struct gf_live_stats *s = &d->ls;
	if (!d->live || !s->latency_frames || s->latency_frames == d->latency_seen)
		return;
	if (d->latency_seen) {
		uint32_t rate = s->sample_rate ? s->sample_rate : d->cfg->sample_rate;
		gf_notice("latency now %u frames (%.2f ms), was %u: device period %u, slack %u period%s "
			  "(%s), resync %" PRIu64,
			  s->latency_frames, rate ? 1000.0 * s->latency_frames / rate : 0.0, d->latency_seen,
			  s->device_period, s->latency_slack, s->latency_slack == 1 ? "" : "s",
			  s->latency_slack_auto ? "auto" : "fixed", s->resyncs);
		if (s->latency_slack_auto && s->latency_slack != d->slack_seen)
			log_slack_step(s, rate);
		d->latency_seen = s->latency_frames;
		d->slack_seen = s->latency_slack;
		gf_dm_status_update(d, 1);
		return;
	}
	d->latency_seen = s->latency_frames;
	d->slack_seen = s->latency_slack;
}

/* "build: none|start-up|reload" and, while one runs, how long it has. */
static void status_build(const struct daemon *d, char *buf, size_t len)
{
	if (!d->build)
		snprintf(buf, len, "build: none\n");
	else
		snprintf(buf, len, "build: %s\nbuild_s: %.1f\n", gf_dm_build_name(d->build),
			 (gf_now_ms() - d->build->t0_ms) / 1000.0);
}

/* The status block before the first engine exists (the start-up build runs). */
static void status_block_starting(const struct daemon *d, char *buf, size_t len)
{
	char bl[80];
	status_build(d, bl, sizeof(bl));
	snprintf(buf, len, "gpufir %s\nstate: starting\npid: %ld\nuptime_s: %.1f\nconfig: %s\n%s",
		 GPUFIR_VERSION, (long)getpid(), (gf_now_ms() - d->t0_ms) / 1000.0,
		 d->cfg && d->cfg->path ? d->cfg->path : "(built-in default)", bl);
}

/* The status socket's answer: "key: value" lines (docs/daemon.md lists them). */
static void status_block(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_live_stats *s = &d->ls;
	if (!d->engine || !d->cfg) {
		status_block_starting(d, buf, len);
		return;
	}
	struct gf_engine_stats es = {0};
	gf_engine_get_stats(d->engine, &es);
	int64_t now = gf_now_ms();
	uint32_t rate = d->cfg->sample_rate;
	char timing[400], lat[320], bl[80], eng[240], sup[2400];
	status_timing(s, timing, sizeof(timing));
	status_suppressor(d, s, sup, sizeof(sup));
	status_engine(&es, eng, sizeof(eng));
	status_build(d, bl, sizeof(bl));
	status_latency(s, lat, sizeof(lat));
	snprintf(buf, len,
		 "gpufir %s\nstate: %s\npid: %ld\nuptime_s: %.1f\nconfig: %s\n"
		 "sample_rate: %u\nchannels: %u\noutput_channels: %u\nblock_frames: %u\nlatency_frames: "
		 "%u\nlatency_ms: %.3f\n%s%s"
		 "backend: %s\nalgo: %s\ndevice: %s\ntaps: %u\nswaps: %" PRIu64 "\n"
		 "blocks: %" PRIu64 "\nframes: %" PRIu64 "\ninput_overflows: %" PRIu64
		 "\noutput_underflows: %" PRIu64 "\noutput_overflows: %" PRIu64 "\nlate_blocks: %" PRIu64
		 "\nlate_blocks_swap: %" PRIu64 "\nlate_blocks_host: %" PRIu64
		 "\nlate_blocks_swap_host: %" PRIu64 "\ndevice_xruns: %" PRIu64 "\nrecord_errors: %" PRIu64
		 "\nnonfinite_blocks: %" PRIu64 "\nengine_errors: %" PRIu64 "\nengine_fallbacks: %" PRIu64
		 "\nengine_timeouts: %" PRIu64 "\nengine_abandoned: %" PRIu64
		 "\n%sworkers_abandoned: %u\nengine_takeup_frames_max: %" PRIu64
		 "\nblock_us_median: %.1f\nblock_us_p99: %.1f\nblock_us_max: %.1f\n%s"
		 "peak_dbfs: %.1f\nclipped: %" PRIu64 "\nreloads: %" PRIu64 "\nreload_failures: %" PRIu64
		 "\nlast_reload: %s\nlast_reload_age_s: %.1f\n%soutages: %u\nrespawns: %u\n%s%s%s",
		 GPUFIR_VERSION, gf_dm_state_name(d), (long)getpid(), (now - d->t0_ms) / 1000.0,
		 d->cfg->path ? d->cfg->path : "(built-in default)", rate, gf_reload_channels(d->cfg),
		 gf_reload_out_channels(d->cfg), d->cfg->block_frames, s->latency_frames,
		 rate ? 1000.0 * s->latency_frames / rate : 0.0, sup, lat, gf_engine_backend_name(d->engine),
		 gf_engine_algo_name(d->engine), gf_engine_describe(d->engine), gf_engine_taps(d->engine),
		 es.swaps, s->blocks, es.frames, s->input_overflows, s->output_underflows,
		 s->output_overflows, s->late_blocks, s->late_blocks_swap, s->late_blocks_host,
		 s->late_blocks_swap_host, s->device_xruns, s->record_errors, es.nonfinite_blocks, es.errors,
		 es.fallbacks, es.timeouts, es.abandoned, eng, d->engines_abandoned, es.takeup_frames_max,
		 s->block_us_median, s->block_us_p99, s->block_us_max, timing, dbfs(s->peak), s->clipped,
		 d->reloads, d->reload_failures, d->last_reload[0] ? d->last_reload : "none",
		 d->last_reload_ms ? (now - d->last_reload_ms) / 1000.0 : 0.0, bl, d->outages, d->respawns,
		 d->state == D_LOST ? "lost_reason: " : "", d->state == D_LOST ? d->lost_reason : "",
		 d->state == D_LOST ? "\n" : "");
	size_t used = strlen(buf);
	if (used < len)
		gf_dm_hum_status(d, buf + used, len - used);
}

void gf_dm_log_window_reset(struct daemon *d)
{
	d->logw.peak = 0.0f;
	d->logw.callback_gap_us = d->logw.wake_us = 0.0;
	d->logw.margin_frames = INT32_MAX;
}

void gf_dm_log_window_fold(struct daemon *d)
{
	const struct gf_live_stats *s = &d->ls;
	d->logw.peak = fmaxf(d->logw.peak, s->peak);
	d->logw.callback_gap_us = fmax(d->logw.callback_gap_us, s->callback_gap_us_max);
	d->logw.wake_us = fmax(d->logw.wake_us, s->wake_us_max);
	if (s->margin_frames_min < d->logw.margin_frames)
		d->logw.margin_frames = s->margin_frames_min;
}

/* Block times over the stats line's own interval (not the last poll's). */
static void block_times_text(struct daemon *d, char *buf, size_t len)
{
	struct gf_live_block_times t = {0};
	if (d->live)
		gf_live_block_times(d->live, GF_LIVE_WINDOW_LOG, &t);
	if (t.blocks == 0)
		snprintf(buf, len, "no block since the last stats");
	else
		snprintf(buf, len, "block us median %.0f p99 %.0f max %.0f over %" PRIu64 " blocks",
			 t.median_us, t.p99_us, t.max_us, t.blocks);
}

void gf_dm_stats_log(struct daemon *d)
{
	if (!d->engine)
		return;
	const struct gf_live_stats *s = &d->ls;
	struct gf_engine_stats es = {0};
	gf_engine_get_stats(d->engine, &es);
	char margin[16], times[160];
	margin_text(d->logw.margin_frames, margin, sizeof(margin));
	block_times_text(d, times, sizeof(times));
	gf_info("stats: %s, blocks %" PRIu64 ", xruns in %" PRIu64 " out %" PRIu64 " over %" PRIu64
		", late blocks %" PRIu64 " (%" PRIu64 " in swaps, %" PRIu64
		" the host's), device xruns %" PRIu64 ", %s, margin min %s"
		" frames, wake max %.0f us, callback gap max %.0f us, peak %.1f dBFS, clipped %" PRIu64
		", nonfinite %" PRIu64 ", swaps %" PRIu64 ", reloads %" PRIu64 " (failed %" PRIu64 ")",
		gf_dm_state_name(d), s->blocks, s->input_overflows, s->output_underflows, s->output_overflows,
		s->late_blocks, s->late_blocks_swap, s->late_blocks_host, s->device_xruns, times, margin,
		d->logw.wake_us, d->logw.callback_gap_us, dbfs(d->logw.peak), s->clipped, es.nonfinite_blocks,
		es.swaps, d->reloads, d->reload_failures);
	gf_dm_log_window_reset(d);
}

void gf_dm_status_serve(struct daemon *d)
{
	char buf[GF_STATUS_MAX];
	status_block(d, buf, sizeof(buf));
	size_t used = strlen(buf);
	gf_dm_volume_status(d, buf + used, sizeof(buf) - used);
	gf_status_server_serve(d->status, buf);
}

/* The status socket @p c asks for: status_socket, or the service's RuntimeDirectory (/run/gpufir).
 * @return 0 when there is none */
static int status_path(const struct gf_config *c, char *path, size_t len)
{
	const char *rt = getenv("RUNTIME_DIRECTORY");
	if (c->status_socket)
		snprintf(path, len, "%s", c->status_socket);
	else if (rt && *rt && !strchr(rt, ':')) /* several directories: ':'-separated */
		snprintf(path, len, "%s/status", rt);
	else
		return 0;
	return 1;
}

/* The new path is bound before the old socket goes: one that cannot be keeps the old. */
void gf_dm_status_open(struct daemon *d)
{
	char path[512];
	struct gf_errbuf eb = {{0}};
	gf_dm_api_open(d); /* the control API's sockets follow the config too */
	if (!status_path(d->cfg, path, sizeof(path)))
		return;
	if (d->status && strcmp(gf_status_server_path(d->status), path) == 0)
		return;
	struct gf_status_server *s = NULL;
	if (gf_status_server_new(&s, path, &eb) != 0) {
		if (d->status)
			gf_warn("status socket stays at %s: %s", gf_status_server_path(d->status), eb.msg);
		else
			gf_warn("no status socket: %s", eb.msg);
		return;
	}
	gf_status_server_free(d->status);
	d->status = s;
	gf_info("status socket: %s", path);
}

int gf_dm_status_probe(const struct daemon *d, const struct gf_config *c, struct gf_errbuf *eb)
{
	char path[512];
	if (!status_path(c, path, sizeof(path)) ||
	    (d->status && strcmp(gf_status_server_path(d->status), path) == 0))
		return 0;
	struct gf_status_server *s = NULL;
	struct gf_errbuf why = {{0}};
	int err = gf_status_server_new(&s, path, &why);
	gf_status_server_free(s);
	if (err)
		gf_errbuf_set(eb, "status_socket: cannot listen at %s: %s", path, why.msg);
	return err;
}

/*
 * The socket's file may be removed under the daemon (someone cleaning
 * /run/gpufir, a tmpfiles rule): the listening socket then lives on but no
 * client can reach it, and `gpufir --status` would fail until a restart.
 * A stat a second notices it, and the socket is made again at the same path.
 */
void gf_dm_status_recheck(struct daemon *d)
{
	int64_t now = gf_now_ms();
	if (!d->status || now < d->next_sock_check_ms)
		return;
	d->next_sock_check_ms = now + STATUS_RECHECK_MS;
	struct gf_errbuf eb = {{0}};
	int r = gf_status_server_renew(&d->status, &eb);
	if (r == 1) {
		gf_notice("status socket %s was removed or replaced: listening there again",
			  gf_status_server_path(d->status));
		d->sock_renew_failed = 0;
	} else if (r < 0 && !d->sock_renew_failed) {
		gf_warn("status socket %s was removed or replaced and cannot be made again: %s (trying "
			"every %d s)",
			gf_status_server_path(d->status), eb.msg, STATUS_RECHECK_MS / 1000);
		d->sock_renew_failed = 1;
	}
}
