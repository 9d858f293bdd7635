/* The daemon's engine and stream: starting and stopping audio, an engine a
 * stuck worker holds and its replacement (built on the build thread),
 * device loss with retry and backoff, and the health check that notices it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_internal.h"
#include "error.h"
#include "log.h"
#include "reload.h"

/* The block times the status and the control API report cover at least this long: the
 * loop runs a health check on every pass, and a pass per API request would otherwise
 * leave windows of one block or none (GetProcessingLoad reading 0 under load). */
#define STATS_WINDOW_NS 500000000ull

static void stream_log_started(struct daemon *d)
{
	struct gf_live_stats s;
	gf_live_get_stats(d->live, &s);
	uint32_t rate = s.sample_rate ? s.sample_rate : d->cfg->sample_rate;
	/* live.c logs the devices; this line keeps the latency in the daemon's own words. */
	gf_info("stream: %u Hz, %u ch in, %u out, block %u frames, latency %u frames (%.2f ms)", rate,
		s.channels ? s.channels : gf_reload_channels(d->cfg),
		s.out_channels ? s.out_channels : gf_reload_out_channels(d->cfg), d->cfg->block_frames,
		s.latency_frames, rate ? 1000.0 * s.latency_frames / rate : 0.0);
	if (d->suppress) {
		uint32_t n = gf_suppress_bank_latency(d->suppress), total = s.latency_frames + n;
		char where[160];
		gf_suppress_bank_where(d->suppress, where, sizeof(where));
		gf_info("suppressor: %s, %u frames (%.2f ms) after the engine: %u frames (%.2f ms) in all",
			where, n, rate ? 1000.0 * n / rate : 0.0, total, rate ? 1000.0 * total / rate : 0.0);
	}
	gf_info("engine: %s", gf_engine_describe(d->engine));
}

void gf_daemon_live_params(const struct gf_config *c, struct gf_live_params *p)
{
	*p = (struct gf_live_params){
		.sample_rate = c->sample_rate,
		.block_frames = c->block_frames,
		.latency_slack = c->latency_slack,
		.latency_slack_auto = c->latency_slack_auto,
		.input = {c->input.device, c->input.host_api, c->input.channels},
		.output = {c->output.device, c->output.host_api, c->output.channels},
		.record_path = c->output.file,
	};
}

int gf_dm_stream_start(struct daemon *d, struct gf_errbuf *eb)
{
	if (d->audio_stuck) {
		gf_errbuf_set(eb, "an earlier audio call did not return: gpufir must restart");
		return GF_E_AUDIO;
	}
	if (d->engine_stuck) {
		gf_errbuf_set(eb, "the engine is held by a stuck audio worker");
		return GF_E_BUSY;
	}
	struct gf_live_params lp;
	gf_daemon_live_params(d->cfg, &lp);
	/* The audio is stopped here: a stream started again (after a device loss)
	 * starts its suppressor afresh, as its engine starts from silence. */
	if (d->suppress)
		gf_suppress_bank_reset(d->suppress);
	lp.suppress = d->suppress;
	lp.tap = gf_dm_hum_tap(d);		   /* NULL unless a notch follows the hum (daemon_hum.c) */
	int err = gf_dm_gain_new(d, &lp.gain, eb); /* volume and meters, at the volume in force */
	if (!err)
		err = gf_dm_audio_open(d, &lp, &d->live, eb); /* bounded: the loop answers meanwhile */
	if (err) {
		gf_dm_gain_release(d, !d->audio_stuck); /* an open left behind may still run it */
		return err;
	}
	d->state = D_STARTING;
	d->state_since_ms = gf_now_ms();
	d->last_blocks = 0;
	d->latency_seen = 0;
	d->cap_at_advance = 0;
	d->last_advance_ms = d->state_since_ms;
	stream_log_started(d);
	return 0;
}

/* Engines a stuck worker still runs: kept reachable here, never freed. */
#define MAX_KEPT_ENGINES 16
static struct gf_engine *kept_engines[MAX_KEPT_ENGINES];
static struct gf_suppress_bank *kept_suppress[MAX_KEPT_ENGINES]; /* their suppressors, held too */

/*
 * The stream's worker did not stop (stuck inside the engine, e.g. in a GPU
 * driver call) and was abandoned with the engine it holds: that engine may
 * never be freed or run again. Unless the daemon is stopping, the loop has
 * the build thread make a CPU engine of the same settings
 * (gf_dm_engine_replace_due), and the stream restarts on it: engines are
 * never built on the control thread.
 */
static void engine_abandon(struct daemon *d)
{
	if (d->engines_abandoned < MAX_KEPT_ENGINES) {
		kept_engines[d->engines_abandoned] = d->engine;
		kept_suppress[d->engines_abandoned] = d->suppress;
	}
	d->engines_abandoned++;
	d->engine_stuck = 1; /* still answers queries (atomic reads) */
	d->force_cpu = 1;
	if (!d->stop)
		gf_err("engine: abandoned with its stuck worker (%u so far); building a CPU engine to "
		       "replace it",
		       d->engines_abandoned);
}

void gf_dm_engine_replace_due(struct daemon *d)
{
	if (!d->engine_stuck || d->build || d->stop)
		return; /* a running build (a reload) may bring the engine itself: gf_reload_job_next */
	int err = gf_dm_build_start(d, GF_DM_BUILD_ENGINE, "replacing a stuck worker's engine");
	if (err) {
		gf_err("engine: cannot start a build to replace a stuck worker's engine (%s): exiting",
		       gf_strerror(err));
		d->stop = 1;
		d->exit_code = GF_EXIT_PROCESS;
	}
}

void gf_dm_engine_replaced(struct daemon *d, struct gf_dm_build *b)
{
	struct gf_reload_job *j = &b->job;
	if (j->err) {
		gf_err("engine: abandoned with its stuck worker, and no CPU engine can replace it (%s): "
		       "exiting",
		       gf_reload_reason(&j->r));
		d->stop = 1;
		d->exit_code = GF_EXIT_PROCESS;
		return;
	}
	if (!d->engine_stuck)
		return; /* replaced meanwhile: gf_dm_build_free frees this one */
	d->engine = j->engine;
	d->suppress = j->suppress; /* the stuck worker keeps the old one (kept_suppress) */
	j->engine = NULL;
	j->suppress = NULL;
	gf_dm_suppress_reload(d, NULL); /* the new bank keeps the live controls */
	d->engine_stuck = 0;
	gf_notice("engine: continuing on the CPU backend (%s)", gf_engine_describe(d->engine));
}

void gf_dm_stream_stop(struct daemon *d)
{
	if (!d->live)
		return;
	struct gf_live *l = d->live;
	d->live = NULL; /* the close's: nothing here touches it again */
	d->healthy = 0;
	int abandoned = 0;
	int closed = gf_dm_audio_close(d, l, &abandoned); /* bounded: the loop answers meanwhile */
	if (closed && abandoned)
		engine_abandon(d);
	gf_dm_gain_release(d, closed && !abandoned); /* a stuck worker keeps running it */
}

/* ---- device loss ------------------------------------------------------- */

/* Enter (or stay in) an outage: no stream, next attempt after the backoff.
 * A stream that fails again before audio flowed continues the same outage,
 * so the backoff keeps growing. */
static void outage_enter(struct daemon *d, int known)
{
	int64_t now = gf_now_ms();
	if (!d->lost_at_ms) {
		d->lost_at_ms = now;
		d->outages++;
		d->retries = 0;
		d->retry_ms = RETRY_MIN_MS;
	} else {
		d->retry_ms = gf_respawn_next_backoff(d->retry_ms);
	}
	d->lost_known = known;
	d->ready_pending = 1; /* READY=1 again once audio flows */
	d->state = D_LOST;
	d->state_since_ms = now;
	d->next_retry_ms = now + d->retry_ms;
}

/* The engine of a stream whose PortAudio call was left behind: kept reachable, never freed. */
static struct gf_engine *audio_kept_engine;
static struct gf_suppress_bank *audio_kept_suppress;

/*
 * A PortAudio call did not return in time (daemon_audio.c): the audio server
 * is stopped or hung. Its stream may still run the engine, and PortAudio
 * cannot be called again in this process, so the daemon restarts in place
 * (same PID, as after losing the server) and retries from a fresh image;
 * before it was ever ready, the start fails (exit status 5) instead. When
 * stopping anyway, it only exits.
 *
 * An open left behind is a failed attempt: it starts the outage, or, in one
 * under way (a retry, a reload's restart), doubles the backoff as any failed
 * attempt does, so that a server answering late is not tried every 0.5 s
 * through every restart in place. A close left behind enters an outage only
 * when none is under way: a loss that stopped the stream has counted already.
 */
void gf_dm_audio_abandoned(struct daemon *d, int opening, int64_t waited_ms)
{
	const char *what = opening ? "opening the audio stream" : "closing the audio stream";
	d->audio_stuck = 1;
	if (!d->engine_stuck) {
		audio_kept_engine = d->engine;
		audio_kept_suppress = d->suppress;
	}
	d->engine_stuck = 1;
	gf_err("audio: %s did not return within %.1f s (the audio server does not answer): left "
	       "behind",
	       what, waited_ms / 1000.0);
	if (d->stop)
		return;
	d->stop = 1;
	if (!d->ready_sent) {
		gf_err("audio did not start: %s did not return", what);
		d->exit_code = GF_EXIT_PROCESS;
		return;
	}
	snprintf(d->lost_reason, sizeof(d->lost_reason),
		 "the audio server does not answer (%s did not return)", what);
	if (opening || !d->lost_at_ms)
		outage_enter(d, 1);
	d->server_lost = 1;
	d->lost_known = 1;
	d->respawn = 1;
	gf_err("audio server not answering: restarting gpufir in place");
	gf_dm_status_update(d, 1);
}

/* @p known: the device or server went away (keep pinging the watchdog while
 * retrying), as opposed to a stall of unknown cause. */
void gf_dm_device_lost(struct daemon *d, const char *why, int known)
{
	snprintf(d->lost_reason, sizeof(d->lost_reason), "%s", why);
	outage_enter(d, known); /* first: the stream's close may take a while, pinging meanwhile if known */
	gf_dm_stream_stop(d);
	if (d->audio_stuck) { /* its close was left behind: gf_dm_audio_abandoned restarts in place */
		gf_dm_status_update(d, 1);
		return;
	}
	if (gf_live_restart_required()) {
		/* PortAudio's JACK host API cannot reconnect inside this process:
		 * restart it in place (same PID) once the loop has wound down. */
		d->server_lost = 1;
		d->lost_known = 1;
		gf_err("audio server lost: %s; PortAudio cannot reconnect inside this process: "
		       "restarting gpufir in place",
		       why);
		d->respawn = 1;
		d->stop = 1;
	} else {
		gf_err("audio device lost: %s; retrying in %.1f s", why, d->retry_ms / 1000.0);
	}
	gf_dm_status_update(d, 1);
}

static void device_retry(struct daemon *d)
{
	struct gf_errbuf eb = {{0}};
	/* Not while a stuck worker holds the engine: its replacement is being built. */
	if (gf_now_ms() < d->next_retry_ms || d->engine_stuck)
		return;
	d->retries++;
	int err = gf_dm_stream_start(d, &eb);
	if (!err) {
		gf_notice("audio stream reopened (attempt %u)", d->retries);
		return;
	}
	if (d->audio_stuck || d->stop)
		return; /* left behind (restarting in place), or stopping meanwhile */
	snprintf(d->lost_reason, sizeof(d->lost_reason), "%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	d->retry_ms = gf_respawn_next_backoff(d->retry_ms);
	d->next_retry_ms = gf_now_ms() + d->retry_ms;
	gf_warn("audio device attempt %u failed: %s; next in %.1f s", d->retries, d->lost_reason,
		d->retry_ms / 1000.0);
	gf_dm_status_update(d, 1);
}

/* The first block of a (re)started stream: the outage, if any, is over. */
static void audio_flows(struct daemon *d, int64_t now)
{
	d->state = D_RUNNING;
	d->state_since_ms = now;
	if (d->lost_at_ms)
		gf_notice("audio resumed after %u attempt%s, %.1f s without audio%s", d->retries,
			  d->retries == 1 ? "" : "s", (now - d->lost_at_ms) / 1000.0,
			  d->server_lost ? " (audio server lost; gpufir restarted in place)" : "");
	d->retries = 0;
	d->lost_at_ms = 0;
	d->server_lost = 0;
	gf_dm_status_update(d, 1);
}

/* The audio server links no source to the capture (PipeWire: the last
 * microphone unplugged): no block comes, and none is due. The node stays up
 * for the apps that record it (silence), the stall clock waits, and a start
 * counts as done: the source exists for apps to pick. */
#define IDLE_SAY_MS 1000

static void capture_idle(struct daemon *d, int64_t now)
{
	if (!d->idle_since_ms)
		d->idle_since_ms = now;
	/* Every start passes through a moment unlinked: only a lasting one is said. */
	if (!d->idle_said && now - d->idle_since_ms >= IDLE_SAY_MS) {
		gf_notice("no source is linked to the capture: the stream idles until one is");
		d->idle_said = 1;
	}
	d->last_advance_ms = now;
	d->cap_at_advance = d->ls.capture_frames;
	if (d->state == D_STARTING)
		audio_flows(d, now);
}

/* Blocks stopped while the device kept delivering: the worker (engine) is
 * stuck, a stall of unknown cause. Two blocks of capture rule out a device
 * that stopped just after a block. */
static int worker_stuck(const struct daemon *d)
{
	return d->ls.capture_frames - d->cap_at_advance >= 2u * d->cfg->block_frames;
}

/* The worker cannot log: the suppressor's switches from the GPU to the CPU and its
 * returns are said here, once each. The return itself is tried here too, on the
 * control thread (a try is bounded: a few hundred ms at worst, while the GPU hangs). */
static void suppress_watch(struct daemon *d)
{
	if (d->suppress_seen != d->suppress) {
		d->suppress_seen = d->suppress;
		d->suppress_failures_seen = d->suppress_returns_seen = 0;
	}
	uint64_t f = gf_suppress_bank_gpu_failures(d->suppress);
	if (f != d->suppress_failures_seen) {
		d->suppress_failures_seen = f;
		gf_warn("suppressor: a GPU hop failed or hung: its channels run on the CPU now (one "
			"block muted, then about %u frames of the suppressor's latency); the GPU is tried "
			"again in the background",
			gf_suppress_bank_latency(d->suppress));
	}
	gf_suppress_bank_try_return(d->suppress);
	uint64_t r = gf_suppress_bank_gpu_returns(d->suppress);
	if (r != d->suppress_returns_seen) {
		d->suppress_returns_seen = r;
		gf_notice("suppressor: its channels are back on the GPU (%" PRIu64 " returns; the noise "
			  "estimate starts again)",
			  r);
	}
}

/* Poll the stream, note progress, move between states. @return 1 if the audio
 * path is healthy (blocks advancing, no device error). */
int gf_dm_health_check(struct daemon *d)
{
	char why[320];
	if (!d->live) {
		device_retry(d);
		return 0;
	}
	int perr = gf_live_poll(d->live);
	gf_live_get_stats_held(d->live, &d->ls, STATS_WINDOW_NS);
	int64_t now = gf_now_ms();
	gf_dm_log_window_fold(d);
	if (d->suppress)
		suppress_watch(d);
	if (d->ls.blocks != d->last_blocks) {
		d->last_blocks = d->ls.blocks;
		d->last_advance_ms = now;
		d->cap_at_advance = d->ls.capture_frames;
	}
	if (!perr && gf_live_idle(d->live)) {
		capture_idle(d, now);
		return 1;
	}
	if (d->idle_said)
		gf_notice("a source is linked to the capture again after %.1f s idle",
			  (now - d->idle_since_ms) / 1000.0);
	d->idle_since_ms = 0;
	d->idle_said = 0;
	if (perr) {
		snprintf(why, sizeof(why), "%s", gf_strerror(perr));
	} else if (d->state == D_RUNNING && now - d->last_advance_ms > d->stall_ms) {
		snprintf(why, sizeof(why), "audio stalled: no block for %.1f s",
			 (now - d->last_advance_ms) / 1000.0);
	} else if (d->state == D_STARTING && d->ls.blocks == 0) {
		if (now - d->state_since_ms <= START_TIMEOUT_MS)
			return 0;
		snprintf(why, sizeof(why), "no audio within %d s of starting the stream",
			 START_TIMEOUT_MS / 1000);
	} else {
		if (d->state == D_STARTING)
			audio_flows(d, now);
		return 1;
	}
	if (!d->ready_sent) {
		/* Before READY=1 there is nothing to keep alive: fail the start instead. */
		gf_err("audio did not start: %s", why);
		d->stop = 1;
		d->exit_code = GF_EXIT_PROCESS;
		return 0;
	}
	gf_dm_device_lost(d, why, !worker_stuck(d));
	return 0;
}

/* This image was started by gf_dm_respawn_exec(): carry on with the outage where
 * the previous image left it, waiting its backoff before the next attempt. */
void gf_dm_outage_resume(struct daemon *d, const struct gf_respawn *r)
{
	int64_t now = gf_now_ms();
	int64_t lost = (int64_t)(r->lost_us / 1000u), t0 = (int64_t)(r->started_us / 1000u);
	d->lost_at_ms = lost > 0 && lost <= now ? lost : now;
	d->t0_ms = t0 > 0 && t0 <= now ? t0 : d->t0_ms;
	d->retries = r->attempt - 1;
	d->retry_ms = r->backoff_ms;
	d->respawns = r->respawns;
	d->outages = r->outages;
	d->ready_sent = r->ready;
	d->server_lost = 1;
	d->lost_known = 1;
	d->state = D_LOST;
	d->state_since_ms = now;
	d->next_retry_ms = now + d->retry_ms;
	snprintf(d->lost_reason, sizeof(d->lost_reason), "the audio server went away");
	gf_notice("restarted in place (pid %ld, restart %u) %.1f s after the audio server was lost: "
		  "attempt %u in %.1f s",
		  (long)getpid(), d->respawns, (now - d->lost_at_ms) / 1000.0, r->attempt,
		  d->retry_ms / 1000.0);
}

/* The loop has wound down (stream left to the old image, stats logged,
 * sockets closed): become a fresh image of ourselves, same PID. Returns only
 * if that failed; systemd's Restart= is then the fallback. */
int gf_dm_respawn_exec(struct daemon *d)
{
	struct gf_errbuf eb = {{0}};
	struct gf_respawn r = {
		.attempt = d->retries + 1,
		.backoff_ms = d->retry_ms,
		.respawns = d->respawns + 1,
		.outages = d->outages,
		.ready = d->ready_sent,
		.lost_us = (uint64_t)d->lost_at_ms * 1000u,
		.started_us = (uint64_t)d->t0_ms * 1000u,
	};
	if (d->wd_usec)
		gf_notify_watchdog(); /* the new image's start-up runs on this ping */
	gf_notice("restarting gpufir in place (pid %ld) to reconnect: attempt %u in %.1f s", (long)getpid(),
		  r.attempt, r.backoff_ms / 1000.0);
	int err = gf_respawn_exec(d->o->argv, &r, &eb);
	gf_err("%s; exiting for systemd to restart the service", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_notify_status("audio server lost; restart in place failed, exiting");
	return GF_EXIT_PROCESS;
}
