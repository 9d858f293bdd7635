/* The live daemon's control loop. One thread (the caller's) owns every control
 * object: config, engine, live stream, file watch, status socket. It sleeps in
 * poll() on a signalfd, the inotify descriptor and the status socket, waking at
 * least every LOOP_MS to check the audio path's health, ping the watchdog and
 * log stats. Audio itself runs on the live module's threads and never waits
 * for anything here. */
#include "daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "error.h"
#include "filter_set.h"
#include "live.h"
#include "log.h"
#include "notify.h"
#include "reload.h"
#include "respawn.h"
#include "status.h"
#include "watch.h"

#define LOOP_MS 200		       /* longest poll sleep: health/watchdog/stats granularity */
#define DEBOUNCE_MS 150		       /* one editor save = one reload */
#define STALL_MS 3000		       /* no block for this long while "running" = device lost */
#define START_TIMEOUT_MS 10000	       /* a started stream must deliver its first block by then */
#define RETRY_MIN_MS GF_RESPAWN_MIN_MS /* device-loss retry backoff: 0.5 s doubling to 10 s */
#define STATUS_EVERY_MS 2000	       /* STATUS= refresh (xruns, p99 change continuously) */
#define DEFAULT_STATS_S 60.0

enum dstate {
	D_STARTING, /* stream started, waiting for its first block */
	D_RUNNING,  /* audio flows */
	D_LOST,	    /* no stream: device lost, retrying with backoff */
};

/* Watchdog policy (docs/daemon.md): ping while audio flows, and while the
 * loop deliberately retries an outage of known cause; not while a running
 * stream makes no progress, nor after the engine stalled (cause unknown: a
 * fresh process is the remedy, which systemd's watchdog provides). */

struct daemon {
	const struct gf_daemon_opts *o;
	struct gf_config *cfg;
	struct gf_engine *engine;
	struct gf_live *live;
	struct gf_watch *watch;
	struct gf_status_server *status;
	int sigfd;
	int stop;      /* leave the loop */
	int exit_code; /* GF_EXIT_* to return once stopped */
	enum dstate state;
	int ready_sent;	   /* READY=1 sent (by this image or the one before an in-place restart) */
	int ready_pending; /* send READY=1 when audio flows: at start and after each outage */
	int64_t t0_ms;
	int64_t state_since_ms;
	/* health */
	struct gf_live_stats ls;
	uint64_t last_blocks;
	int64_t last_advance_ms;
	/* extremes since the last stats log line: its window, not the last poll's */
	struct {
		float peak;
		double callback_gap_us, wake_us;
		int32_t margin_frames;
	} logw;
	uint64_t cap_at_advance; /* capture position when blocks last advanced */
	/* device-loss retry */
	uint32_t retry_ms; /* last wait between attempts */
	uint32_t retries;  /* attempts made in this outage (across in-place restarts) */
	int64_t next_retry_ms;
	int64_t lost_at_ms; /* when the current outage began; 0: none */
	int lost_known;	    /* the outage has a known cause (device or server gone): keep pinging */
	int server_lost;    /* the audio server went away: reconnecting needs an in-place restart */
	int respawn;	    /* leave the loop to restart in place */
	uint32_t respawns;  /* in-place restarts since the service started */
	uint32_t outages;   /* audio losses since the service started */
	char lost_reason[600];
	/* watchdog, stats, STATUS= */
	uint64_t wd_usec;
	int64_t next_wd_ms;
	int64_t stats_every_ms;
	int64_t next_stats_ms;
	int64_t next_status_ms;
	char status_sent[512];
	/* reloads */
	uint64_t reloads;
	uint64_t reload_failures;
	int64_t last_reload_ms;
	char last_reload[700];
};

static int64_t now_ms(void)
{
	return (int64_t)(gf_notify_monotonic_usec() / 1000u);
}

static const char *state_name(const struct daemon *d)
{
	if (d->state != D_LOST)
		return d->state == D_RUNNING ? "running" : "starting";
	return d->server_lost ? "audio server lost, retrying" : "audio device lost, retrying";
}

static void apply_log_level(const struct gf_config *c)
{
	if (c->log_level >= GF_LOG_ERR && c->log_level <= GF_LOG_DEBUG)
		gf_log_set_level(c->log_level);
}

/* ---- signals ----------------------------------------------------------- */

/* Block the signals in this thread before any other thread exists, so every
 * thread (PortAudio, JACK, engine workers) inherits the mask and they arrive
 * only through the signalfd. */
static int signals_open(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, old) != 0)
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* ---- engine and stream ------------------------------------------------- */

/* Build an engine for @p c with its filter set. */
static int engine_for(const struct gf_config *c, struct gf_engine **out, struct gf_errbuf *eb)
{
	struct gf_filter_set *fs = NULL;
	struct gf_engine_params p;
	*out = NULL;
	int err = gf_config_build(c, c->sample_rate, gf_reload_channels(c), &fs, eb);
	if (err)
		return err;
	gf_reload_engine_params(c, fs->taps, &p);
	err = gf_engine_new(out, &p, fs, eb);
	gf_filter_set_free(fs);
	return err;
}

static void stream_log_started(struct daemon *d)
{
	struct gf_live_stats s;
	gf_live_get_stats(d->live, &s);
	uint32_t rate = s.sample_rate ? s.sample_rate : d->cfg->sample_rate;
	/* live.c logs the devices; this line keeps the latency in the daemon's own words. */
	gf_info("stream: %u Hz, %u ch, block %u frames, latency %u frames (%.2f ms)", rate,
		s.channels ? s.channels : gf_reload_channels(d->cfg), d->cfg->block_frames, s.latency_frames,
		rate ? 1000.0 * s.latency_frames / rate : 0.0);
	gf_info("engine: %s", gf_engine_describe(d->engine));
}

void gf_daemon_live_params(const struct gf_config *c, struct gf_live_params *p)
{
	*p = (struct gf_live_params){
		.sample_rate = c->sample_rate,
		.block_frames = c->block_frames,
		.latency_slack = c->latency_slack,
		.input = {c->input.device, c->input.host_api, c->input.channels},
		.output = {c->output.device, c->output.host_api, c->output.channels},
		.record_path = c->output.file,
	};
}

/* Open and start the stream on d->cfg/d->engine. On failure d->live stays NULL. */
static int stream_start(struct daemon *d, struct gf_errbuf *eb)
{
	struct gf_live_params lp;
	gf_daemon_live_params(d->cfg, &lp);
	int err = gf_live_new(&d->live, &lp, d->engine, eb);
	if (!err)
		err = gf_live_start(d->live, eb);
	if (err) {
		gf_live_free(d->live);
		d->live = NULL;
		return err;
	}
	d->state = D_STARTING;
	d->state_since_ms = now_ms();
	d->last_blocks = 0;
	d->cap_at_advance = 0;
	d->last_advance_ms = d->state_since_ms;
	stream_log_started(d);
	return 0;
}

static void stream_stop(struct daemon *d)
{
	if (!d->live)
		return;
	gf_live_stop(d->live);
	gf_live_free(d->live);
	d->live = NULL;
}

/* ---- status ------------------------------------------------------------ */

/* Audio gpufir lost: frames dropped or played as silence. A late block (engine
 * time over the period) is counted apart: the latency's slack absorbs it. */
static uint64_t own_xruns(const struct gf_live_stats *s)
{
	return s->input_overflows + s->output_underflows + s->output_overflows;
}

/* The one-line STATUS= text. */
static void status_line(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_live_stats *s = &d->ls;
	if (d->state == D_LOST) {
		snprintf(buf, len, "audio %s lost: retrying (attempt %u): %.400s",
			 d->server_lost ? "server" : "device", d->retries + 1, d->lost_reason);
		return;
	}
	snprintf(buf, len,
		 "%s%u Hz, %u ch, %u taps, %s/%s, xruns %" PRIu64 " (device %" PRIu64
		 "), late blocks %" PRIu64 ", block p99 %.0f us%s%.300s",
		 d->state == D_STARTING ? "starting: " : "", d->cfg->sample_rate, gf_reload_channels(d->cfg),
		 gf_engine_taps(d->engine), gf_engine_backend_name(d->engine), gf_engine_algo_name(d->engine),
		 own_xruns(s), s->device_xruns, s->late_blocks, s->block_us_p99,
		 d->last_reload[0] ? ", " : "", d->last_reload);
}

static void status_update(struct daemon *d, int force)
{
	char line[512];
	int64_t now = now_ms();
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

/* The status socket's answer: "key: value" lines (docs/daemon.md lists them). */
static void status_block(const struct daemon *d, char *buf, size_t len)
{
	const struct gf_live_stats *s = &d->ls;
	struct gf_engine_stats es = {0};
	gf_engine_get_stats(d->engine, &es);
	int64_t now = now_ms();
	uint32_t rate = d->cfg->sample_rate;
	char timing[400];
	status_timing(s, timing, sizeof(timing));
	snprintf(buf, len,
		 "gpufir %s\nstate: %s\npid: %ld\nuptime_s: %.1f\nconfig: %s\n"
		 "sample_rate: %u\nchannels: %u\nblock_frames: %u\nlatency_frames: %u\nlatency_ms: %.3f\n"
		 "backend: %s\nalgo: %s\ndevice: %s\ntaps: %u\nswaps: %" PRIu64 "\n"
		 "blocks: %" PRIu64 "\nframes: %" PRIu64 "\ninput_overflows: %" PRIu64
		 "\noutput_underflows: %" PRIu64 "\noutput_overflows: %" PRIu64 "\nlate_blocks: %" PRIu64
		 "\ndevice_xruns: %" PRIu64 "\nrecord_errors: %" PRIu64 "\nnonfinite_blocks: %" PRIu64
		 "\nengine_errors: %" PRIu64
		 "\nblock_us_median: %.1f\nblock_us_p99: %.1f\nblock_us_max: %.1f\n%s"
		 "peak_dbfs: %.1f\nclipped: %" PRIu64 "\nreloads: %" PRIu64 "\nreload_failures: %" PRIu64
		 "\nlast_reload: %s\nlast_reload_age_s: %.1f\noutages: %u\nrespawns: %u\n%s%s%s",
		 GPUFIR_VERSION, state_name(d), (long)getpid(), (now - d->t0_ms) / 1000.0,
		 d->cfg->path ? d->cfg->path : "(built-in default)", rate, gf_reload_channels(d->cfg),
		 d->cfg->block_frames, s->latency_frames, rate ? 1000.0 * s->latency_frames / rate : 0.0,
		 gf_engine_backend_name(d->engine), gf_engine_algo_name(d->engine),
		 gf_engine_describe(d->engine), gf_engine_taps(d->engine), es.swaps, s->blocks, es.frames,
		 s->input_overflows, s->output_underflows, s->output_overflows, s->late_blocks,
		 s->device_xruns, s->record_errors, es.nonfinite_blocks, es.errors, s->block_us_median,
		 s->block_us_p99, s->block_us_max, timing, dbfs(s->peak), s->clipped, d->reloads,
		 d->reload_failures, d->last_reload[0] ? d->last_reload : "none",
		 d->last_reload_ms ? (now - d->last_reload_ms) / 1000.0 : 0.0, d->outages, d->respawns,
		 d->state == D_LOST ? "lost_reason: " : "", d->state == D_LOST ? d->lost_reason : "",
		 d->state == D_LOST ? "\n" : "");
}

static void log_window_reset(struct daemon *d)
{
	d->logw.peak = 0.0f;
	d->logw.callback_gap_us = d->logw.wake_us = 0.0;
	d->logw.margin_frames = INT32_MAX;
}

static void log_window_fold(struct daemon *d)
{
	const struct gf_live_stats *s = &d->ls;
	d->logw.peak = fmaxf(d->logw.peak, s->peak);
	d->logw.callback_gap_us = fmax(d->logw.callback_gap_us, s->callback_gap_us_max);
	d->logw.wake_us = fmax(d->logw.wake_us, s->wake_us_max);
	if (s->margin_frames_min < d->logw.margin_frames)
		d->logw.margin_frames = s->margin_frames_min;
}

static void stats_log(struct daemon *d)
{
	const struct gf_live_stats *s = &d->ls;
	struct gf_engine_stats es = {0};
	gf_engine_get_stats(d->engine, &es);
	char margin[16];
	margin_text(d->logw.margin_frames, margin, sizeof(margin));
	gf_info("stats: %s, blocks %" PRIu64 ", xruns in %" PRIu64 " out %" PRIu64 " over %" PRIu64
		", late blocks %" PRIu64 ", device xruns %" PRIu64
		", block us median %.0f p99 %.0f max %.0f, margin min %s"
		" frames, wake max %.0f us, callback gap max %.0f us, peak %.1f dBFS, clipped %" PRIu64
		", nonfinite %" PRIu64 ", swaps %" PRIu64 ", reloads %" PRIu64 " (failed %" PRIu64 ")",
		state_name(d), s->blocks, s->input_overflows, s->output_underflows, s->output_overflows,
		s->late_blocks, s->device_xruns, s->block_us_median, s->block_us_p99, s->block_us_max, margin,
		d->logw.wake_us, d->logw.callback_gap_us, dbfs(d->logw.peak), s->clipped, es.nonfinite_blocks,
		es.swaps, d->reloads, d->reload_failures);
	log_window_reset(d);
}

static void status_serve(struct daemon *d)
{
	char buf[GF_STATUS_MAX];
	status_block(d, buf, sizeof(buf));
	gf_status_server_serve(d->status, buf);
}

/* The configured status socket, or the service's RuntimeDirectory (/run/gpufir). */
static void status_open(struct daemon *d)
{
	char path[512];
	const char *rt = getenv("RUNTIME_DIRECTORY");
	struct gf_errbuf eb = {{0}};
	if (d->cfg->status_socket)
		snprintf(path, sizeof(path), "%s", d->cfg->status_socket);
	else if (rt && *rt && !strchr(rt, ':')) /* several directories: ':'-separated */
		snprintf(path, sizeof(path), "%s/status", rt);
	else
		return;
	if (d->status && strcmp(gf_status_server_path(d->status), path) == 0)
		return;
	gf_status_server_free(d->status);
	d->status = NULL;
	if (gf_status_server_new(&d->status, path, &eb) == 0)
		gf_info("status socket: %s", path);
	else
		gf_warn("no status socket: %s", eb.msg);
}

/* ---- device loss ------------------------------------------------------- */

/* Enter (or stay in) an outage: no stream, next attempt after the backoff.
 * A stream that fails again before audio flowed continues the same outage,
 * so the backoff keeps growing. */
static void outage_enter(struct daemon *d, int known)
{
	int64_t now = now_ms();
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

/* @p known: the device or server went away (keep pinging the watchdog while
 * retrying), as opposed to a stall of unknown cause. */
static void device_lost(struct daemon *d, const char *why, int known)
{
	snprintf(d->lost_reason, sizeof(d->lost_reason), "%s", why);
	stream_stop(d);
	outage_enter(d, known);
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
	status_update(d, 1);
}

static void device_retry(struct daemon *d)
{
	struct gf_errbuf eb = {{0}};
	if (now_ms() < d->next_retry_ms)
		return;
	d->retries++;
	int err = stream_start(d, &eb);
	if (!err) {
		gf_notice("audio stream reopened (attempt %u)", d->retries);
		return;
	}
	snprintf(d->lost_reason, sizeof(d->lost_reason), "%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	d->retry_ms = gf_respawn_next_backoff(d->retry_ms);
	d->next_retry_ms = now_ms() + d->retry_ms;
	gf_warn("audio device attempt %u failed: %s; next in %.1f s", d->retries, d->lost_reason,
		d->retry_ms / 1000.0);
	status_update(d, 1);
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
	status_update(d, 1);
}

/* Blocks stopped while the device kept delivering: the worker (engine) is
 * stuck, a stall of unknown cause. Two blocks of capture rule out a device
 * that stopped just after a block. */
static int worker_stuck(const struct daemon *d)
{
	return d->ls.capture_frames - d->cap_at_advance >= 2u * d->cfg->block_frames;
}

/* Poll the stream, note progress, move between states. @return 1 if the audio
 * path is healthy (blocks advancing, no device error). */
static int health_check(struct daemon *d)
{
	char why[320];
	if (!d->live) {
		device_retry(d);
		return 0;
	}
	int perr = gf_live_poll(d->live);
	gf_live_get_stats(d->live, &d->ls);
	int64_t now = now_ms();
	log_window_fold(d);
	if (d->ls.blocks != d->last_blocks) {
		d->last_blocks = d->ls.blocks;
		d->last_advance_ms = now;
		d->cap_at_advance = d->ls.capture_frames;
	}
	if (perr) {
		snprintf(why, sizeof(why), "%s", gf_strerror(perr));
	} else if (d->state == D_RUNNING && now - d->last_advance_ms > STALL_MS) {
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
	device_lost(d, why, !worker_stuck(d));
	return 0;
}

/* ---- reload ------------------------------------------------------------ */

/* Replace engine and stream with ones built from @p next (owned). Audio stops
 * only once the new engine is built; if the new stream cannot start, the old
 * settings are restored. Fills @p r's outcome and text. */
static void restart_with(struct daemon *d, struct gf_config *next, const char *why,
			 struct gf_reload_result *r)
{
	struct gf_errbuf eb = {{0}};
	struct gf_engine *ne = NULL;
	int err = engine_for(next, &ne, &eb);
	if (err) {
		snprintf(r->text, sizeof(r->text), "reload failed: %s",
			 eb.msg[0] ? eb.msg : gf_strerror(err));
		r->outcome = GF_RELOAD_FAILED;
		r->err = err;
		gf_config_free(next);
		return;
	}
	gf_notice("restarting audio stream: %s", why);
	int was_running = d->live != NULL;
	stream_stop(d);
	struct gf_config *oc = d->cfg;
	struct gf_engine *oe = d->engine;
	d->cfg = next;
	d->engine = ne;
	err = stream_start(d, &eb);
	if (!err || !was_running) {
		/* Started, or nothing was running before: keep the new settings either way. */
		gf_engine_free(oe);
		gf_config_free(oc);
		snprintf(r->text, sizeof(r->text), "stream restarted: %.600s%s%s", why, err ? "; " : "",
			 err ? "audio not running yet" : "");
		if (err && d->state != D_LOST)
			device_lost(d, eb.msg[0] ? eb.msg : gf_strerror(err), 1);
		return;
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", eb.msg[0] ? eb.msg : gf_strerror(err));
	gf_engine_free(ne);
	gf_config_free(next);
	d->cfg = oc;
	d->engine = oe;
	r->outcome = GF_RELOAD_FAILED;
	r->err = err;
	snprintf(r->text, sizeof(r->text),
		 "reload failed: new stream settings did not start (%s); "
		 "kept the previous settings",
		 msg);
	eb.msg[0] = '\0';
	if (stream_start(d, &eb) != 0)
		device_lost(d, eb.msg[0] ? eb.msg : "previous settings did not restart", 1);
}

static void watch_config_files(struct daemon *d)
{
	struct gf_errbuf eb = {{0}};
	if (!d->watch)
		return;
	if (gf_watch_set_files(d->watch, d->cfg->files, d->cfg->n_files, &eb) != 0 || eb.msg[0])
		gf_warn("%s", eb.msg[0] ? eb.msg : "cannot watch the config files");
}

static void reload(struct daemon *d, const char *trigger)
{
	struct gf_reload_result r;
	struct gf_config *next = NULL;
	int64_t t0 = now_ms();
	gf_info("reloading configuration (%s)", trigger);
	if (d->ready_sent)
		gf_notify_reloading();
	uint32_t busy_wait = (uint32_t)(d->cfg->crossfade_ms + 1000.0);
	gf_reload(&d->o->src, d->cfg, d->live ? d->engine : NULL, busy_wait, &next, &r);
	if (r.outcome == GF_RELOAD_APPLIED) {
		gf_config_free(d->cfg);
		d->cfg = next;
	} else if (r.outcome == GF_RELOAD_RESTART) {
		char why[sizeof(r.text)];
		snprintf(why, sizeof(why), "%s", r.text + strlen("stream restart needed: "));
		restart_with(d, next, why, &r);
	}
	d->reloads++;
	d->last_reload_ms = now_ms();
	snprintf(d->last_reload, sizeof(d->last_reload), "%s", r.text);
	if (r.outcome == GF_RELOAD_FAILED) {
		d->reload_failures++;
		gf_err("%s (the running filter is unchanged)", r.text);
	} else {
		apply_log_level(d->cfg);
		watch_config_files(d);
		status_open(d);
		gf_notice("%s (%lld ms)", r.text, (long long)(now_ms() - t0));
	}
	if (d->ready_sent)
		gf_notify_ready(); /* after failures too, or systemd stays in "reloading" */
	status_update(d, 1);
}

/* ---- main loop --------------------------------------------------------- */

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;
	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(d, "SIGHUP");
		} else {
			gf_notice("%s received, stopping", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			d->stop = 1;
			d->exit_code = GF_EXIT_OK;
		}
	}
}

static void timers(struct daemon *d, int healthy)
{
	int64_t now = now_ms();
	if (healthy && d->state == D_RUNNING && d->ready_pending) {
		gf_notify_ready(); /* again after an outage: harmless under Type=notify */
		gf_notice("%s", d->ready_sent ? "ready again: audio flows" : "ready: audio flows");
		d->ready_sent = 1;
		d->ready_pending = 0;
	}
	/* Ping while audio flows, and while retrying an outage of known cause
	 * (STATUS= says so); see the policy above struct daemon. */
	int retrying = d->state != D_RUNNING && d->lost_at_ms && d->lost_known;
	if (d->wd_usec && (healthy || retrying) && now >= d->next_wd_ms) {
		gf_notify_watchdog();
		/* On a fixed grid, so that loop latency does not stretch the interval. */
		int64_t half = (int64_t)(d->wd_usec / 2000u);
		d->next_wd_ms = d->next_wd_ms + half > now ? d->next_wd_ms + half : now + half;
	}
	if (d->stats_every_ms > 0 && now >= d->next_stats_ms) {
		d->next_stats_ms = now + d->stats_every_ms;
		stats_log(d);
	}
	status_update(d, 0);
	gf_engine_reap(d->engine);
}

static int poll_timeout(const struct daemon *d)
{
	int t = LOOP_MS;
	int w = d->watch ? gf_watch_timeout_ms(d->watch) : -1;
	if (w >= 0 && w < t)
		t = w;
	if (d->wd_usec) {
		int64_t wd = d->next_wd_ms - now_ms();
		t = wd < 0 ? 0 : wd < t ? (int)wd : t;
	}
	return t;
}

static void loop(struct daemon *d)
{
	while (!d->stop) {
		struct pollfd p[3] = {
			{.fd = d->sigfd, .events = POLLIN},
			{.fd = d->watch ? gf_watch_fd(d->watch) : -1, .events = POLLIN},
			{.fd = d->status ? gf_status_server_fd(d->status) : -1, .events = POLLIN},
		};
		if (poll(p, 3, poll_timeout(d)) < 0 && errno != EINTR) {
			gf_err("poll: %s", strerror(errno));
			d->exit_code = GF_EXIT_FAILURE;
			break;
		}
		if (p[0].revents)
			handle_signals(d);
		if (d->stop)
			break;
		const char *changed = NULL;
		if (p[1].revents)
			gf_watch_read(d->watch);
		if (d->watch && gf_watch_take(d->watch, &changed)) {
			char trig[600];
			snprintf(trig, sizeof(trig), "%.500s changed", changed);
			reload(d, trig);
		}
		int healthy = health_check(d);
		if (d->stop)
			break;
		timers(d, healthy);
		if (d->status && p[2].revents)
			status_serve(d);
	}
}

/* ---- in-place restart -------------------------------------------------- */

/* This image was started by respawn_exec(): carry on with the outage where
 * the previous image left it, waiting its backoff before the next attempt. */
static void outage_resume(struct daemon *d, const struct gf_respawn *r)
{
	int64_t now = now_ms();
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
static int respawn_exec(struct daemon *d)
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

/* ---- start and stop ---------------------------------------------------- */

/* @p rs: state handed over by an in-place restart, or NULL on a fresh start. */
static int daemon_start(struct daemon *d, const struct gf_respawn *rs)
{
	struct gf_errbuf eb = {{0}};
	int err = gf_reload_load_config(&d->o->src, &d->cfg, &eb);
	if (!err) {
		apply_log_level(d->cfg);
		err = engine_for(d->cfg, &d->engine, &eb);
	}
	if (!err && !rs)
		err = stream_start(d, &eb);
	if (err) {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		return gf_exit_code(err);
	}
	if (rs)
		outage_resume(d, rs);
	if (gf_watch_new(&d->watch, DEBOUNCE_MS, &eb) != 0)
		gf_warn("config file changes will not reload: %s", eb.msg);
	watch_config_files(d);
	status_open(d);
	d->wd_usec = gf_notify_watchdog_usec();
	if (d->wd_usec)
		gf_info("systemd watchdog: %.1f s, pinging every %.1f s while audio flows or a lost device "
			"is being retried",
			d->wd_usec / 1e6, d->wd_usec / 2e6);
	double st = d->o->stats_interval_s == 0 ? DEFAULT_STATS_S : d->o->stats_interval_s;
	d->stats_every_ms = st > 0 ? (int64_t)(st * 1000.0) : 0;
	d->next_stats_ms = now_ms() + d->stats_every_ms;
	status_update(d, 1);
	return 0;
}

static void daemon_finish(struct daemon *d)
{
	if (d->engine) {
		if (d->live)
			gf_live_get_stats(d->live, &d->ls);
		stats_log(d);
	}
	stream_stop(d);
	gf_status_server_free(d->status);
	gf_watch_free(d->watch);
	gf_engine_free(d->engine);
	gf_config_free(d->cfg);
}

int gf_daemon_run(const struct gf_daemon_opts *o)
{
	struct daemon d;
	sigset_t old;
	struct gf_respawn rs;
	memset(&d, 0, sizeof(d));
	d.o = o;
	d.t0_ms = now_ms();
	d.ready_pending = 1;
	log_window_reset(&d);
	int respawned = gf_respawn_take(&rs); /* before any thread exists: edits the environment */
	d.sigfd = signals_open(&old);
	if (d.sigfd < 0) {
		gf_err("signalfd: %s", strerror(errno));
		return GF_EXIT_FAILURE;
	}
	int rc = daemon_start(&d, respawned ? &rs : NULL);
	if (rc == GF_EXIT_OK) {
		loop(&d);
		rc = d.exit_code;
		if (!d.respawn) {
			gf_notify_stopping();
			if (rc == GF_EXIT_OK)
				gf_notify_status("stopping");
		}
	}
	daemon_finish(&d);
	if (d.respawn) /* signals stay blocked: one arriving now waits for the new image */
		rc = respawn_exec(&d);
	close(d.sigfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int gf_daemon_print_status(const char *socket_path)
{
	char buf[GF_STATUS_MAX];
	struct gf_errbuf eb = {{0}};
	int err = gf_status_query(socket_path ? socket_path : GF_STATUS_DEFAULT_PATH, buf, sizeof(buf), 2000,
				  &eb);
	if (err) {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		return GF_EXIT_IO;
	}
	fputs(buf, stdout);
	return fflush(stdout) == 0 ? GF_EXIT_OK : GF_EXIT_IO;
}
